//! The entry points (spec §4) and the two-level loop (§5): turns, steering and follow-up
//! poll points, `prepareNextTurn`, `prepareRequest`, `finishTurn`, hard exits.
//!
//! The caller's context is taken by value, so a run never appends to the caller's list:
//! `runAgentLoopContinue` in pi does (L-35, L-172); here it does not. Depends on `io`,
//! `message` (with its `transcript`), `turn`, `tools`.

use std::rc::Rc;

use serde_json::Value;

use super::declarations;
use super::tools::{execute_tool_calls, fail_truncated};
use super::turn::{resolve_stream_fn, stream_assistant_response};
use crate::error::{Error, Result};
use crate::event::AgentEvent;
use crate::io::{Context, Host, LoopConfig, RequestContext, StreamFn, TurnContext, TurnDecision};
use crate::message::transcript::declare_tool_changes;
use crate::message::{is_role, stop_reason, tool_calls, AgentMessage, ThinkingLevel};

/// L-34 `runAgentLoop`: appends `prompts` (with a tool declaration when needed) and runs.
/// Resolves with every new message, the same list `agent_end` carries.
pub async fn run_agent_loop(
    host: &Host<'_>,
    prompts: Vec<AgentMessage>,
    mut context: Context,
    config: LoopConfig,
) -> Result<Vec<AgentMessage>> {
    let initial = declare_tool_changes(
        &context.messages,
        &declarations(&context.tools),
        &prompts,
        host.clock.now(),
    );
    context.messages.extend(initial.iter().cloned());
    start_and_run(host, context, config, initial).await
}

/// Both entries' common part: `agent_start`, `turn_start`, the events of the messages the run
/// starts with, then the stream function (resolved only now, L-34 step 4) and the loop.
async fn start_and_run(
    host: &Host<'_>,
    context: Context,
    config: LoopConfig,
    initial: Vec<AgentMessage>,
) -> Result<Vec<AgentMessage>> {
    host.emit(AgentEvent::AgentStart).await?;
    host.emit(AgentEvent::TurnStart).await?;
    for m in &initial {
        host.emit(AgentEvent::MessageStart { message: m.clone() })
            .await?;
        host.emit(AgentEvent::MessageEnd { message: m.clone() })
            .await?;
    }
    let mut new_messages = initial;
    let stream_fn = resolve_stream_fn(host)?;
    Box::pin(run_loop(
        host,
        stream_fn,
        context,
        &mut new_messages,
        config,
    ))
    .await?;
    Ok(new_messages)
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
}

impl DeclarationMemo {
    fn key(context: &Context) -> (Vec<usize>, Vec<usize>) {
        let systems = context
            .messages
            .iter()
            .filter(|m| is_role(m, "system"))
            .map(|m| Rc::as_ptr(m) as usize)
            .collect();
        let tools = context
            .tools
            .iter()
            .map(|t| Rc::as_ptr(t) as *const () as usize)
            .collect();
        (systems, tools)
    }

    /// `declare_tool_changes`, skipped when it provably returns `pending` unchanged.
    fn declare(
        &mut self,
        context: &Context,
        pending: Vec<AgentMessage>,
        now: f64,
    ) -> Vec<AgentMessage> {
        let has_system = pending.iter().any(|m| is_role(m, "system"));
        let key = Self::key(context);
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

/// §5 `runLoop`.
async fn run_loop(
    host: &Host<'_>,
    stream_fn: &dyn StreamFn,
    mut context: Context,
    new_messages: &mut Vec<AgentMessage>,
    mut config: LoopConfig,
) -> Result<()> {
    let mut last_turn: Option<CompletedTurn> = None;
    let mut declarations = DeclarationMemo::default();
    let mut explicit_continuation = false;
    // L-40.
    let mut pending = poll_steering(host).await?;
    loop {
        // L-41.
        let mut has_more_tool_calls = true;
        // L-42.
        while has_more_tool_calls || !pending.is_empty() {
            let mut prepared: Vec<AgentMessage> = Vec::new();
            // L-43: the preamble of every turn after the first.
            if let Some(turn) = &last_turn {
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
                host.emit(AgentEvent::TurnStart).await?;
            }
            // L-44: prepared first, then queued, with any tool declaration.
            prepared.append(&mut pending);
            let injected = declarations.declare(&context, prepared, host.clock.now());
            for m in injected {
                host.emit(AgentEvent::MessageStart { message: m.clone() })
                    .await?;
                host.emit(AgentEvent::MessageEnd { message: m.clone() })
                    .await?;
                context.messages.push(m.clone());
                new_messages.push(m);
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
            if let Some(u) = update {
                if let Some(c) = u.context {
                    context = c;
                }
                if let Some(m) = u.model {
                    config.model = m;
                }
                apply_thinking_level(&mut config, u.thinking_level);
            }
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
            // L-49.
            let calls: Vec<Rc<Value>> = tool_calls(&message).into_iter().map(Rc::new).collect();
            let mut tool_results = Vec::new();
            has_more_tool_calls = false;
            if !calls.is_empty() {
                let batch = if stop_reason(&message) == Some("length") {
                    fail_truncated(host, &calls).await?
                } else {
                    execute_tool_calls(host, &context, &message, &calls, config.tool_execution)
                        .await?
                };
                has_more_tool_calls = !batch.terminate;
                tool_results = batch.messages;
                context.messages.extend(tool_results.iter().cloned());
                new_messages.extend(tool_results.iter().cloned());
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
            host.emit(AgentEvent::TurnEnd {
                message: message.clone(),
                tool_results: tool_results.clone(),
            })
            .await?;
            last_turn = Some(CompletedTurn {
                message,
                tool_results,
            });
            // L-51.
            if decision == Some(TurnDecision::End) {
                host.emit(AgentEvent::AgentEnd {
                    messages: new_messages.clone(),
                })
                .await?;
                return Ok(());
            }
            explicit_continuation = decision == Some(TurnDecision::Continue);
            pending = poll_steering(host).await?;
            if has_more_tool_calls || !pending.is_empty() {
                explicit_continuation = false;
            }
        }
        // L-52.
        let follow_ups = poll_follow_ups(host).await?;
        if !follow_ups.is_empty() {
            explicit_continuation = false;
            pending = follow_ups;
            continue;
        }
        // L-53.
        if explicit_continuation {
            explicit_continuation = false;
            continue;
        }
        // L-54.
        break;
    }
    host.emit(AgentEvent::AgentEnd {
        messages: new_messages.clone(),
    })
    .await?;
    Ok(())
}
