//! The entry points (spec §4) and the two-level loop (§5): turns, steering and follow-up
//! poll points, `prepareNextTurn`, `prepareRequest`, `finishTurn`, hard exits.
//!
//! The caller's context is taken by value, so a run never appends to the caller's list:
//! `runAgentLoopContinue` in pi does (L-35, L-172); here it does not. Depends on `io`,
//! `message` (with its `transcript`), `turn`, `tools`.

use std::rc::Rc;

use crate::json::Value;

use super::checkpoint::{bad_checkpoint, Opening, Position, Stage};
use super::declarations;
use super::tools::{execute_tool_calls, Prior};
use super::turn::{resolve_stream_fn, stream_assistant_response};
use super::Host;
use crate::error::{Error, Result};
use crate::event::AgentEvent;
use crate::io::{Context, LoopConfig, RequestContext, StreamFn, TurnContext, TurnDecision};
use crate::message::transcript::declare_tool_changes;
use crate::message::{is_role, stop_reason, tool_calls, AgentMessage, ThinkingLevel};

/// L-34 `runAgentLoop`: appends `prompts` (with a tool declaration when needed) and runs.
/// Resolves with every new message, the same list `agent_end` carries.
pub async fn run_agent_loop(
    host: &Host<'_>,
    prompts: Vec<AgentMessage>,
    context: Context,
    config: LoopConfig,
) -> Result<Vec<AgentMessage>> {
    let initial = declare_tool_changes(
        &context.messages,
        &declarations(&context.tools),
        &prompts,
        host.clock.now(),
    );
    start_and_run(host, context, config, initial).await
}

/// Both entries' common part: `agent_start`, `turn_start`, the events of the messages the run
/// starts with, then the stream function (resolved only now, L-34 step 4) and the loop.
async fn start_and_run(
    host: &Host<'_>,
    mut context: Context,
    config: LoopConfig,
    initial: Vec<AgentMessage>,
) -> Result<Vec<AgentMessage>> {
    host.tracker.set(Position {
        stage: request(true, initial.clone(), false, true),
        new: 0,
        model: config.model.clone(),
        reasoning: config.reasoning,
    });
    host.emit(AgentEvent::AgentStart).await?;
    host.emit(AgentEvent::TurnStart).await?;
    let mut new_messages = Vec::new();
    announce(host, &mut context, &mut new_messages, initial, false).await?;
    let stream_fn = resolve_stream_fn(host)?;
    let step = Step::Request(Opening {
        turn_start: false,
        inject: Vec::new(),
        declare: false,
        announced: false,
        poll: true,
    });
    Box::pin(run_loop(
        host,
        stream_fn,
        context,
        &mut new_messages,
        config,
        step,
    ))
    .await?;
    Ok(new_messages)
}

/// Finishes a run from a checkpoint (`agent::checkpoint`): `context.messages` is the run's
/// transcript and `position` where the run stood in it. Emits what the run had still to
/// emit (no `agent_start`: the run had started) and resolves with every message of the run,
/// those before the checkpoint included. A position that does not fit the transcript is an
/// `invalid_input` error naming what is wrong.
pub async fn resume_agent_loop(
    host: &Host<'_>,
    context: Context,
    mut config: LoopConfig,
    position: Position,
) -> Result<Vec<AgentMessage>> {
    let messages = &context.messages;
    let total = messages.len();
    let Some(before) = total.checked_sub(position.new) else {
        return Err(bad_checkpoint(
            "it counts more messages of the run than the transcript holds",
        ));
    };
    let mut new_messages: Vec<AgentMessage> = messages.iter().skip(before).cloned().collect();
    config.model = position.model.clone();
    config.reasoning = position.reasoning;
    let step = match &position.stage {
        Stage::Done => return Ok(new_messages),
        Stage::Request(o) => Step::Request(Opening {
            announced: o.announced && !o.inject.is_empty(),
            ..o.clone()
        }),
        Stage::Tools {
            results,
            ended,
            started,
            executing,
            announced,
        } => {
            let (message, done) = turn_tail(messages, *results, position.new)?;
            check_calls(
                &message,
                &done,
                &[
                    ended.iter().map(|e| &e.id).collect(),
                    started.iter().collect(),
                    executing.iter().collect(),
                ],
            )?;
            Step::Tools {
                message,
                prior: Prior {
                    done,
                    ended: ended.clone(),
                    started: started.clone(),
                    executing: executing.clone(),
                    announced: *announced,
                },
            }
        }
        Stage::Next {
            results,
            has_more,
            explicit,
            end,
        } => {
            let (message, tool_results) = turn_tail(messages, *results, position.new)?;
            check_calls(&message, &tool_results, &[])?;
            if *end {
                host.tracker.set(position.clone());
                host.emit(AgentEvent::AgentEnd {
                    messages: new_messages.clone(),
                })
                .await?;
                return Ok(new_messages);
            }
            Step::Next {
                turn: CompletedTurn {
                    message,
                    tool_results,
                },
                has_more: *has_more,
                explicit: *explicit,
            }
        }
    };
    let stream_fn = resolve_stream_fn(host)?;
    host.tracker.set(position);
    // As in start_and_run: an async helper for these lines measured +0.8 KB gzip of wasm.
    Box::pin(run_loop(
        host,
        stream_fn,
        context,
        &mut new_messages,
        config,
        step,
    ))
    .await?;
    Ok(new_messages)
}

/// The turn at the transcript's end: its response and the `results` tool results after it,
/// all of them messages of the run (the last `new`).
fn turn_tail(
    messages: &[AgentMessage],
    results: usize,
    new: usize,
) -> Result<(AgentMessage, Vec<AgentMessage>)> {
    if results >= new {
        return Err(bad_checkpoint(
            "the turn it is in is not among the run's messages",
        ));
    }
    let start = messages.len() - results - 1;
    let mut tail = messages.iter().skip(start).cloned();
    let message = tail
        .next()
        .filter(|m| is_role(m, "assistant"))
        .ok_or_else(|| bad_checkpoint("the turn's response is not an assistant message"))?;
    let tool_results: Vec<AgentMessage> = tail.collect();
    if !tool_results.iter().all(|m| is_role(m, "toolResult")) {
        return Err(bad_checkpoint(
            "the messages after the turn's response are not all tool results",
        ));
    }
    Ok((message, tool_results))
}

/// The turn's results answer its first calls in order, and each id a position names is one
/// of its calls, once per list: else the position is from another transcript (and a call
/// could run twice).
fn check_calls(
    message: &AgentMessage,
    results: &[AgentMessage],
    lists: &[Vec<&String>],
) -> Result<()> {
    let calls = tool_calls(message);
    let ids: Vec<&str> = calls
        .iter()
        .map(|c| crate::message::str_field(c, "id"))
        .collect();
    if results.len() > ids.len() {
        return Err(bad_checkpoint("the turn has more tool results than calls"));
    }
    for (r, id) in results.iter().zip(&ids) {
        if crate::message::str_field(r, "toolCallId") != *id {
            return Err(bad_checkpoint(&format!(
                "the tool results do not answer the turn's calls in order (expected {id})"
            )));
        }
    }
    for list in lists {
        for (i, id) in list.iter().enumerate() {
            if !ids.contains(&id.as_str()) {
                return Err(bad_checkpoint(&format!(
                    "{id} is not a tool call of the turn"
                )));
            }
            if list.iter().take(i).any(|other| other == id) {
                return Err(bad_checkpoint(&format!("{id} is listed twice")));
            }
        }
    }
    Ok(())
}

fn request(turn_start: bool, inject: Vec<AgentMessage>, declare: bool, poll: bool) -> Stage {
    Stage::Request(Opening {
        turn_start,
        inject,
        declare,
        announced: false,
        poll,
    })
}

/// Delivers `message_start` (unless `announced`: already delivered for the first) and
/// `message_end` of each message, appending it after its end: the messages a turn starts
/// with. The tracker's `inject` is `list` at the call.
async fn announce(
    host: &Host<'_>,
    context: &mut Context,
    new_messages: &mut Vec<AgentMessage>,
    list: Vec<AgentMessage>,
    mut announced: bool,
) -> Result<()> {
    for m in list {
        if !announced {
            host.emit(AgentEvent::MessageStart { message: m.clone() })
                .await?;
        }
        announced = false;
        host.emit(AgentEvent::MessageEnd { message: m.clone() })
            .await?;
        context.messages.push(m.clone());
        // A hook may have kept the live context: it shows the message now, as pi's push.
        host.hooks.sync_context(context)?;
        new_messages.push(m);
    }
    Ok(())
}

/// L-33/L-35 preconditions, shared by the streaming and awaiting variants.
pub fn check_continue(context: &Context) -> Result<()> {
    match context.messages.last() {
        None => Err(Error::NoMessages),
        Some(m) if is_role(m, "assistant") => Err(Error::ContinueFromAssistant),
        Some(_) => Ok(()),
    }
}

/// L-35 `runAgentLoopContinue`: continues from the context as it is (no prompt events, no
/// upfront declaration pass). Resolves with the messages appended during the run.
pub async fn run_agent_loop_continue(
    host: &Host<'_>,
    context: Context,
    config: LoopConfig,
) -> Result<Vec<AgentMessage>> {
    check_continue(&context)?;
    start_and_run(host, context, config, Vec::new()).await
}

async fn poll_steering(host: &Host<'_>) -> Result<Vec<AgentMessage>> {
    Ok(match host.hooks.get_steering_messages() {
        Some(f) => f.await?,
        None => Vec::new(),
    })
}

async fn poll_follow_ups(host: &Host<'_>) -> Result<Vec<AgentMessage>> {
    Ok(match host.hooks.get_follow_up_messages() {
        Some(f) => f.await?,
        None => Vec::new(),
    })
}

/// L-47: `undefined` keeps, `"off"` clears, anything else sets.
fn apply_thinking_level(config: &mut LoopConfig, level: Option<ThinkingLevel>) {
    match level {
        None => {}
        Some(ThinkingLevel::Off) => config.reasoning = None,
        Some(l) => config.reasoning = Some(l),
    }
}

/// What the declaration pass (§7) reads, by identity: the transcript's system messages and
/// the executable tools. When a pass found nothing to declare and neither has changed, the
/// next pass over messages without a system message would find nothing either.
#[derive(Default)]
struct DeclarationMemo {
    unchanged_for: Option<(Vec<usize>, Vec<usize>)>,
    /// The transcript as last read, and its system messages: a transcript that extends it
    /// (as it does turn after turn) is read only from where it grew.
    read: Vec<AgentMessage>,
    systems: Vec<usize>,
}

impl DeclarationMemo {
    fn key(&mut self, context: &Context) -> (Vec<usize>, Vec<usize>) {
        let messages = &context.messages;
        let same = self
            .read
            .iter()
            .zip(messages)
            .take_while(|(a, b)| Rc::ptr_eq(a, b))
            .count();
        if same < self.read.len() {
            self.read.clear();
            self.systems.clear();
        }
        let new = messages.get(self.read.len()..).unwrap_or_default();
        self.systems.extend(
            new.iter()
                .filter(|m| is_role(m, "system"))
                .map(|m| Rc::as_ptr(m) as usize),
        );
        self.read.extend_from_slice(new);
        let tools = context
            .tools
            .iter()
            .map(|t| Rc::as_ptr(t) as *const () as usize)
            .collect();
        (self.systems.clone(), tools)
    }

    /// `declare_tool_changes`, skipped when it provably returns `pending` unchanged.
    fn declare(
        &mut self,
        context: &Context,
        pending: Vec<AgentMessage>,
        now: f64,
    ) -> Vec<AgentMessage> {
        let has_system = pending.iter().any(|m| is_role(m, "system"));
        let key = self.key(context);
        if !has_system && self.unchanged_for.as_ref() == Some(&key) {
            return pending;
        }
        let out = declare_tool_changes(
            &context.messages,
            &declarations(&context.tools),
            &pending,
            now,
        );
        let unchanged =
            out.len() == pending.len() && out.iter().zip(&pending).all(|(a, b)| Rc::ptr_eq(a, b));
        self.unchanged_for = (unchanged && !has_system).then_some(key);
        out
    }
}

/// The turn just completed (L-58): its assistant message and tool results.
struct CompletedTurn {
    message: AgentMessage,
    tool_results: Vec<AgentMessage>,
}

/// Where the loop goes next: the checkpoint's [`Stage`] with the messages it refers to.
enum Step {
    Request(Opening),
    Tools {
        message: AgentMessage,
        prior: Prior,
    },
    Next {
        turn: CompletedTurn,
        has_more: bool,
        explicit: bool,
    },
}

/// Sets the tracker's list of messages to announce, which the declaration pass or a poll
/// has just made.
fn track_inject(host: &Host<'_>, list: &[AgentMessage], poll: bool) {
    host.tracker
        .stage(request(false, list.to_vec(), false, poll));
}

/// §5 `runLoop`, from `step`: a turn's request (L-44..L-46), its tool calls and end (L-48..
/// L-50), then the poll points between turns (L-51..L-54) and the next turn's preamble (L-43).
async fn run_loop(
    host: &Host<'_>,
    stream_fn: &dyn StreamFn,
    mut context: Context,
    new_messages: &mut Vec<AgentMessage>,
    mut config: LoopConfig,
    mut step: Step,
) -> Result<()> {
    let mut declarations = DeclarationMemo::default();
    loop {
        step = match step {
            Step::Request(Opening {
                turn_start,
                inject,
                declare,
                announced,
                poll,
            }) => {
                if turn_start {
                    host.emit(AgentEvent::TurnStart).await?;
                }
                // L-44: prepared first, then queued, with any tool declaration.
                let inject = if declare {
                    let list = declarations.declare(&context, inject, host.clock.now());
                    track_inject(host, &list, poll);
                    list
                } else {
                    inject
                };
                announce(host, &mut context, new_messages, inject, announced).await?;
                if poll {
                    // L-40: the run's first poll, after the messages it starts with.
                    let pending = poll_steering(host).await?;
                    let list = declarations.declare(&context, pending, host.clock.now());
                    track_inject(host, &list, false);
                    announce(host, &mut context, new_messages, list, false).await?;
                }
                // L-45.
                let request = RequestContext {
                    context: &context,
                    model: &config.model,
                    thinking_level: config.reasoning.unwrap_or(ThinkingLevel::Off),
                };
                let update = match host.hooks.prepare_request(request) {
                    Some(f) => f.await?,
                    None => None,
                };
                host.hooks.sync_context(&mut context)?;
                if let Some(u) = update {
                    if let Some(c) = u.context {
                        context = c;
                    }
                    if let Some(m) = u.model {
                        config.model = m;
                    }
                    apply_thinking_level(&mut config, u.thinking_level);
                }
                track_config(host, &config);
                // L-46.
                // Boxed: inlining every sub-future into this state machine costs kilobytes of wasm.
                let message = Box::pin(stream_assistant_response(
                    host,
                    stream_fn,
                    &mut context,
                    &config,
                ))
                .await?;
                new_messages.push(message.clone());
                Step::Tools {
                    message,
                    prior: Prior::default(),
                }
            }
            Step::Tools { message, prior } => {
                // L-48: hard exit.
                if matches!(stop_reason(&message), Some("error" | "aborted")) {
                    let ctx = TurnContext {
                        message: &message,
                        tool_results: &[],
                        context: &context,
                        new_messages,
                    };
                    if let Some(f) = host.hooks.finish_turn(ctx) {
                        f.await?; // its decision is ignored
                    }
                    host.tracker.stage(Stage::Next {
                        results: 0,
                        has_more: false,
                        explicit: false,
                        end: true,
                    });
                    host.emit(AgentEvent::TurnEnd {
                        message,
                        tool_results: Vec::new(),
                    })
                    .await?;
                    host.emit(AgentEvent::AgentEnd {
                        messages: new_messages.clone(),
                    })
                    .await?;
                    return Ok(());
                }
                // L-49. Content pi's `filter` throws on fails the run there, as in pi.
                let calls: Vec<Rc<Value>> = crate::message::checked_tool_calls(&message)
                    .map_err(|e| Error::InvalidInput(e.to_string()))?
                    .into_iter()
                    .map(Rc::new)
                    .collect();
                let mut tool_results = Vec::new();
                let mut has_more_tool_calls = false;
                if !calls.is_empty() {
                    let before = prior.done.len();
                    let truncated = stop_reason(&message) == Some("length");
                    let batch = execute_tool_calls(
                        host,
                        &context,
                        &message,
                        &calls,
                        config.tool_execution,
                        truncated,
                        prior,
                    )
                    .await?;
                    has_more_tool_calls = !batch.terminate;
                    tool_results = batch.messages;
                    // Those delivered before a checkpoint are in the transcript already.
                    let added = tool_results.iter().skip(before);
                    context.messages.extend(added.clone().cloned());
                    // After what the tool hooks changed in the context, as in pi.
                    host.hooks.sync_context(&mut context)?;
                    new_messages.extend(added.cloned());
                }
                // L-50.
                let ctx = TurnContext {
                    message: &message,
                    tool_results: &tool_results,
                    context: &context,
                    new_messages,
                };
                let decision = match host.hooks.finish_turn(ctx) {
                    Some(f) => f.await?,
                    None => None,
                };
                host.hooks.sync_context(&mut context)?;
                let end = decision == Some(TurnDecision::End);
                let explicit = decision == Some(TurnDecision::Continue);
                host.tracker.stage(Stage::Next {
                    results: tool_results.len(),
                    has_more: has_more_tool_calls,
                    explicit,
                    end,
                });
                host.emit(AgentEvent::TurnEnd {
                    message: message.clone(),
                    tool_results: tool_results.clone(),
                })
                .await?;
                // L-51.
                if end {
                    host.emit(AgentEvent::AgentEnd {
                        messages: new_messages.clone(),
                    })
                    .await?;
                    return Ok(());
                }
                Step::Next {
                    turn: CompletedTurn {
                        message,
                        tool_results,
                    },
                    has_more: has_more_tool_calls,
                    explicit,
                }
            }
            Step::Next {
                turn,
                has_more,
                explicit,
            } => {
                // L-51: the steering poll after every turn; L-52 the follow-up poll when
                // nothing else keeps the run going; L-53 an explicit continuation; L-54 the end.
                let mut pending = poll_steering(host).await?;
                if !has_more && pending.is_empty() {
                    pending = poll_follow_ups(host).await?;
                    if pending.is_empty() && !explicit {
                        host.emit(AgentEvent::AgentEnd {
                            messages: new_messages.clone(),
                        })
                        .await?;
                        return Ok(());
                    }
                }
                // L-43: the preamble of every turn after the first.
                let mut prepared: Vec<AgentMessage> = Vec::new();
                let ctx = TurnContext {
                    message: &turn.message,
                    tool_results: &turn.tool_results,
                    context: &context,
                    new_messages,
                };
                let snapshot = match host.hooks.prepare_next_turn(ctx) {
                    Some(f) => f.await?,
                    None => None,
                };
                host.hooks.sync_context(&mut context)?;
                if let Some(s) = snapshot {
                    if let Some(c) = s.context {
                        context = c;
                    }
                    prepared = s.messages.unwrap_or_default();
                    if let Some(m) = s.model {
                        config.model = m;
                    }
                    apply_thinking_level(&mut config, s.thinking_level);
                }
                if pending.is_empty() {
                    pending = poll_steering(host).await?;
                }
                prepared.append(&mut pending);
                host.tracker
                    .stage(request(true, prepared.clone(), true, false));
                track_config(host, &config);
                Step::Request(Opening {
                    turn_start: true,
                    inject: prepared,
                    declare: true,
                    announced: false,
                    poll: false,
                })
            }
        };
    }
}

/// The model and thinking level the next request uses, for the checkpoint.
fn track_config(host: &Host<'_>, config: &LoopConfig) {
    host.tracker.edit(|p| {
        p.model = config.model.clone();
        p.reasoning = config.reasoning;
    });
}
