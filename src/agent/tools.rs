//! Tool execution (spec §9): lookup → `prepareArguments` → validation → `beforeToolCall`
//! → `execute` (with `onUpdate`) → `afterToolCall`, sequential or parallel, and the
//! tool-result messages. Also `runToolCall` (L-38), which runs the same steps without events.
//!
//! Every tool call reached gets exactly one result: failures of the tool or its hooks are
//! error results (L-101, L-104, L-110). Only a throwing event sink or update sink rejects
//! (L-82, L-106). Depends on `io`, `message`, `validate`.

use crate::json::Put;
use std::cell::RefCell;
use std::rc::Rc;

use crate::json::Value;
use futures::future::LocalBoxFuture;
use futures::stream::{FuturesUnordered, StreamExt};
use futures::FutureExt;

use super::checkpoint::{interrupted_call_text, Ended};
use super::validate::{validate_tool_call, Patterns};
use super::Host;
use crate::error::Result;
use crate::event::AgentEvent;
use crate::io::{
    AbortSignal, AfterToolCallContext, Clock, Context, ExecutionMode, Hooks, HostFuture,
    HostResult, Interrupted, Tool, ToolCallContext, ToolExecution, UpdateFn, UpdateSink,
};
use crate::message::{error_tool_result, num, present, str_field, AgentMessage, Object};

/// What tool code runs against: the parts of a [`Host`] that `runToolCall` also has.
pub struct ToolEnv<'a> {
    pub clock: &'a dyn Clock,
    pub patterns: &'a dyn Patterns,
    pub signal: Option<&'a dyn AbortSignal>,
    pub hooks: &'a dyn Hooks,
}

impl ToolEnv<'_> {
    fn aborted(&self) -> bool {
        self.signal.is_some_and(|s| s.aborted())
    }
}

impl<'a> Host<'a> {
    pub fn tool_env(&self) -> ToolEnv<'a> {
        ToolEnv {
            clock: self.clock,
            patterns: self.patterns,
            signal: self.signal,
            hooks: self.hooks,
        }
    }
}

/// A tool call after finalization (`AgentToolCallOutcome`, L-38).
#[derive(Clone, Debug)]
pub struct ToolCallOutcome {
    pub tool_call: Rc<Value>,
    pub result: Rc<Value>,
    pub is_error: bool,
    /// Only when `execute` ran (L-102, L-117).
    pub duration_ms: Option<f64>,
}

enum Preparation {
    Immediate { result: Value },
    Prepared { tool: Rc<dyn Tool>, args: Rc<Value> },
}

pub const ABORTED: &str = "Operation aborted";

/// Error text of a call refused because its message hit the token limit (L-94), verbatim.
pub fn truncated_call_text(name: &str) -> String {
    format!(
        "Tool call \"{name}\" was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments."
    )
}

/// §9.2 preflight. Never fails: every problem is an immediate error result.
async fn prepare(
    env: &ToolEnv<'_>,
    context: &Context,
    tools: &[Rc<dyn Tool>],
    assistant: &AgentMessage,
    call: &Rc<Value>,
) -> Preparation {
    // L-95: abort first, no lookup, no hooks.
    if env.aborted() {
        return Preparation::Immediate {
            result: error_tool_result(ABORTED),
        };
    }
    // L-96: first match.
    let name = str_field(call, "name");
    let Some(tool) = tools.iter().find(|t| t.name() == name).cloned() else {
        return Preparation::Immediate {
            result: error_tool_result(&format!("Tool {name} not found")),
        };
    };
    // L-97, L-98.
    // One shared object: what `beforeToolCall` may mutate is what `execute` gets (L-100).
    let args = match prepare_and_validate(tool.as_ref(), call, env.patterns) {
        Ok(args) => Rc::new(args),
        Err(message) => {
            return Preparation::Immediate {
                result: error_tool_result(&message),
            }
        }
    };
    // L-99.
    let ctx = ToolCallContext {
        assistant_message: assistant,
        tool_call: call,
        args: &args,
        context,
    };
    if let Some(hook) = env.hooks.before_tool_call(ctx) {
        match hook.await {
            // L-101. A hook that throws gives its error even when the signal aborted meanwhile:
            // pi's abort check sits after the await the throw skips.
            Err(thrown) => {
                return Preparation::Immediate {
                    result: error_tool_result(&thrown.message),
                }
            }
            Ok(_) if env.aborted() => {
                return Preparation::Immediate {
                    result: error_tool_result(ABORTED),
                }
            }
            Ok(Some(d)) if d.block => {
                let reason = d.reason.filter(|r| !r.is_empty());
                let mut result =
                    error_tool_result(reason.as_deref().unwrap_or("Tool execution was blocked"));
                if d.terminate {
                    if let Value::Object(o) = &mut result {
                        o.put("terminate", true.into());
                    }
                }
                return Preparation::Immediate { result };
            }
            Ok(_) => {}
        }
    }
    Preparation::Prepared { tool, args }
}

/// L-97/L-98: `prepareArguments` on the raw arguments, then validation of the prepared call.
fn prepare_and_validate(
    tool: &dyn Tool,
    call: &Rc<Value>,
    patterns: &dyn Patterns,
) -> std::result::Result<Value, String> {
    let prepared;
    let call = match tool.prepare_arguments(call) {
        None => &**call,
        Some(Err(thrown)) => return Err(thrown.message),
        Some(Ok(args)) => {
            let mut copy = call.as_object().cloned().unwrap_or_default();
            copy.put("arguments", args);
            prepared = Value::Object(copy);
            &prepared
        }
    };
    validate_tool_call(tool.parameters(), call, patterns)
}

struct Executed {
    /// The object `execute` resolved with, shared as is (L-117: events carry it unchanged),
    /// its fields as pi reads them ([`Tool::read_result`]).
    result: Rc<Value>,
    /// Its own properties alone, when they differ from `result`.
    own: Option<Rc<Value>>,
    is_error: bool,
    duration_ms: f64,
}

/// L-103..L-106: runs `execute`. Each `onUpdate` while it runs goes to `updates` at once,
/// inside the tool's call (a synchronous throw there is thrown to the tool); updates after
/// it settles are ignored. The emits still pending are awaited once it settled, and one
/// that rejects rejects the call (L-106, kept as in 1.6.0: L-168).
async fn execute(
    env: &ToolEnv<'_>,
    tool: &dyn Tool,
    tool_call_id: &str,
    args: Rc<Value>,
    updates: UpdateSink,
) -> HostResult<Executed> {
    let pending: Rc<RefCell<Option<Vec<HostFuture<'static, ()>>>>> =
        Rc::new(RefCell::new(Some(Vec::new())));
    let collected = pending.clone();
    let on_update: UpdateFn = Rc::new(move |partial: Rc<Value>| {
        // Not accepting once `execute` settled (the list is taken then).
        if collected.borrow().is_none() {
            return Ok(());
        }
        // No borrow is held while the sink runs: it may call back into this tool.
        let emitted = updates(partial)?;
        if let Some(list) = collected.borrow_mut().as_mut() {
            list.push(emitted);
        }
        Ok(())
    });
    let started = env.clock.monotonic();
    let outcome = tool.execute(tool_call_id, args, on_update).await;
    let duration_ms = (env.clock.monotonic() - started).round().max(0.0);
    let emits = pending.borrow_mut().take().unwrap_or_default();
    all(emits).await?;
    // pi reads `result.isError` here, after the updates settled: a getter that throws is
    // the call's error, as a throw from `execute` is.
    Ok(match outcome.and_then(|result| tool.read_result(result)) {
        Ok(read) => Executed {
            is_error: read.result.get("isError") == Some(&Value::Bool(true)),
            result: read.result,
            own: read.own,
            duration_ms,
        },
        // L-104.
        Err(thrown) => Executed {
            result: Rc::new(error_tool_result(&thrown.message)),
            own: None,
            is_error: true,
            duration_ms,
        },
    })
}

/// Gives way once: the task is woken at once and polled again on the executor's next turn,
/// after the work already queued (one turn of JS's microtask queue in the binding).
pub async fn yield_now() {
    let mut yielded = false;
    futures::future::poll_fn(|cx| {
        if yielded {
            return std::task::Poll::Ready(());
        }
        yielded = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    })
    .await;
}

/// `Promise.all` over a tool's pending update emits: the first that fails, else done.
/// Like pi's, a non-empty list takes one more turn than an empty one, even when every
/// emit already settled: so a tool that sent updates ends after one that sent none and
/// settled at the same time, in pi's order (L-92).
async fn all(mut emits: Vec<HostFuture<'static, ()>>) -> HostResult<()> {
    if !emits.is_empty() {
        yield_now().await;
    }
    futures::future::poll_fn(|cx| {
        let mut failed = None;
        emits.retain_mut(|f| match f.poll_unpin(cx) {
            std::task::Poll::Pending => true,
            std::task::Poll::Ready(r) => {
                if let Err(e) = r {
                    failed.get_or_insert(e);
                }
                false
            }
        });
        match failed {
            Some(e) => std::task::Poll::Ready(Err(e)),
            None if emits.is_empty() => std::task::Poll::Ready(Ok(())),
            None => std::task::Poll::Pending,
        }
    })
    .await
}

/// §9.4: `afterToolCall` and its field-by-field merge.
async fn finalize(
    env: &ToolEnv<'_>,
    context: &Context,
    assistant: &AgentMessage,
    call: &Rc<Value>,
    args: &Rc<Value>,
    executed: Executed,
) -> ToolCallOutcome {
    let Executed {
        mut result,
        own,
        mut is_error,
        duration_ms,
    } = executed;
    let ctx = AfterToolCallContext {
        assistant_message: assistant,
        tool_call: call,
        args,
        result: &result,
        is_error,
        context,
    };
    let after = match env.hooks.after_tool_call(ctx) {
        Some(hook) => Some(hook.await),
        None => None,
    };
    if let Some(after) = after {
        match after {
            // L-110.
            Err(thrown) => {
                result = Rc::new(error_tool_result(&thrown.message));
                is_error = true;
            }
            // L-111.
            Ok(None) => {}
            // L-108, L-109.
            Ok(Some(a)) => {
                let structured = match (&a.structured_content, &a.content) {
                    (Some(s), _) => Some(s.clone()),
                    (None, Some(_)) => None,
                    (None, None) => present(result.get_raw("structuredContent")).cloned(),
                };
                // `{ ...result, content: a.content ?? result.content, … }`: the spread copies
                // the own properties; each named field is then set, in this order.
                let mut o = own
                    .as_ref()
                    .unwrap_or(&result)
                    .as_object()
                    .cloned()
                    .unwrap_or_default();
                for (key, over) in [
                    ("content", a.content),
                    ("details", a.details),
                    ("usage", a.usage),
                    ("terminate", a.terminate),
                ] {
                    let value =
                        over.or_else(|| own.as_ref().and_then(|_| result.get_raw(key).cloned()));
                    merge_field(&mut o, key, value);
                }
                match structured {
                    Some(s) => {
                        o.put("structuredContent", s);
                    }
                    None => {
                        o.shift_remove("structuredContent");
                    }
                }
                if let Some(e) = a.is_error {
                    is_error = e;
                }
                result = Rc::new(Value::Object(o));
            }
        }
    }
    ToolCallOutcome {
        tool_call: call.clone(),
        result,
        is_error,
        duration_ms: Some(duration_ms),
    }
}

/// `result = { ...result, key: override ?? result.key }`: an override replaces the value in
/// its place (or appends the key); without one the executed value stays.
fn merge_field(o: &mut Object, key: &str, over: Option<Value>) {
    if let Some(v) = over {
        o.insert(key.into(), v);
    }
}

fn immediate(call: &Rc<Value>, result: Value) -> ToolCallOutcome {
    ToolCallOutcome {
        tool_call: call.clone(),
        result: Rc::new(result),
        is_error: true,
        duration_ms: None,
    }
}

/// L-38 `runToolCall`: the full pipeline without events or messages. `on_update` receives
/// each partial result; a rejecting `on_update` rejects the call (L-106, as in 1.6.0).
pub async fn run_tool_call(
    env: &ToolEnv<'_>,
    tools: &[Rc<dyn Tool>],
    tool_call: Rc<Value>,
    assistant: &AgentMessage,
    context: &Context,
    on_update: UpdateSink,
) -> HostResult<ToolCallOutcome> {
    match prepare(env, context, tools, assistant, &tool_call).await {
        Preparation::Immediate { result } => Ok(immediate(&tool_call, result)),
        Preparation::Prepared { tool, args } => {
            let id = str_field(&tool_call, "id").to_string();
            let executed = execute(env, tool.as_ref(), &id, args.clone(), on_update).await?;
            Ok(finalize(env, context, assistant, &tool_call, &args, executed).await)
        }
    }
}

/// L-120: the tool-result message, keys in pi's order.
pub fn tool_result_message(outcome: &ToolCallOutcome, now: f64) -> AgentMessage {
    let mut o = Object::new();
    o.put("role", "toolResult".into());
    o.insert(
        "toolCallId".into(),
        str_field(&outcome.tool_call, "id").into(),
    );
    o.insert(
        "toolName".into(),
        str_field(&outcome.tool_call, "name").into(),
    );
    // Raw: a host's `content` (the tool's own array) passes into the message unread.
    let content = present(outcome.result.get_raw("content")).cloned();
    o.insert(
        "content".into(),
        content.unwrap_or_else(|| Value::Array(Vec::new())),
    );
    for key in ["details", "usage"] {
        if let Some(v) = outcome.result.get_raw(key) {
            o.insert(key.into(), v.clone());
        }
    }
    o.put("isError", outcome.is_error.into());
    if let Some(d) = outcome.duration_ms {
        o.put("durationMs", num(d));
    }
    o.put("timestamp", num(now));
    Rc::new(Value::Object(o))
}

/// The tool-result messages of a batch and whether it terminates the run (L-121).
pub struct Batch {
    pub messages: Vec<AgentMessage>,
    pub terminate: bool,
}

fn terminates(outcomes: &[ToolCallOutcome]) -> bool {
    !outcomes.is_empty()
        && outcomes
            .iter()
            .all(|o| o.result.get("terminate") == Some(&Value::Bool(true)))
}

fn start_event(call: &Value) -> AgentEvent {
    AgentEvent::ToolExecutionStart {
        tool_call_id: str_field(call, "id").into(),
        tool_name: str_field(call, "name").into(),
        args: Rc::new(call.get("arguments").cloned().unwrap_or(Value::Null)),
    }
}

async fn emit_end(host: &Host<'_>, o: &ToolCallOutcome) -> HostResult<()> {
    host.emit(AgentEvent::ToolExecutionEnd {
        tool_call_id: str_field(&o.tool_call, "id").into(),
        tool_name: str_field(&o.tool_call, "name").into(),
        result: o.result.clone(),
        is_error: o.is_error,
        duration_ms: o.duration_ms,
    })
    .await
}

/// `message_start` (unless `announced` before a checkpoint) and `message_end`.
async fn emit_message(host: &Host<'_>, message: &AgentMessage, announced: bool) -> HostResult<()> {
    if !announced {
        host.emit(AgentEvent::MessageStart {
            message: message.clone(),
        })
        .await?;
    }
    host.emit(AgentEvent::MessageEnd {
        message: message.clone(),
    })
    .await
}

/// The emit of `tool_execution_update` for one call (L-105): its events share one `args`.
fn update_emitter(host: &Host<'_>, call: &Value) -> UpdateSink {
    let emit = host.sink.emitter();
    let id: String = str_field(call, "id").into();
    let name: String = str_field(call, "name").into();
    let args = Rc::new(call.get("arguments").cloned().unwrap_or(Value::Null));
    Rc::new(move |partial| {
        emit(AgentEvent::ToolExecutionUpdate {
            tool_call_id: id.clone(),
            tool_name: name.clone(),
            args: args.clone(),
            partial_result: partial,
        })
    })
}

/// What a resumed turn's calls did before the run was interrupted (`agent::checkpoint`):
/// the first `done.len()` calls have their result messages; the calls in `ended` have their
/// results; those in `started` had started, those also in `executing` were cut off while
/// their tool ran; with `announced` the next result message's `message_start` was delivered.
/// A new turn has none.
#[derive(Default)]
pub struct Prior {
    pub done: Vec<AgentMessage>,
    pub ended: Vec<Ended>,
    pub started: Vec<String>,
    pub executing: Vec<String>,
    pub announced: bool,
}

/// Where one call of a batch stands.
enum Was {
    /// Its result message was delivered.
    Done(AgentMessage, ToolCallOutcome),
    /// Its `tool_execution_end` was delivered.
    Ended(ToolCallOutcome),
    /// It started, and its tool had not been called.
    Started,
    /// Its tool was running.
    Interrupted,
    Fresh,
}

impl Prior {
    fn outcome(&self, call: &Rc<Value>) -> Option<ToolCallOutcome> {
        let id = str_field(call, "id");
        self.ended
            .iter()
            .find(|e| e.id == id)
            .map(|e| ToolCallOutcome {
                tool_call: call.clone(),
                result: e.result.clone(),
                is_error: e.is_error,
                duration_ms: e.duration_ms,
            })
    }

    fn of(&self, i: usize, call: &Rc<Value>) -> Was {
        if let Some(m) = self.done.get(i) {
            // The result object is only read for `terminate` here; a message has none.
            let outcome = self
                .outcome(call)
                .unwrap_or_else(|| immediate(call, (**m).clone()));
            return Was::Done(m.clone(), outcome);
        }
        if let Some(o) = self.outcome(call) {
            return Was::Ended(o);
        }
        let id = str_field(call, "id");
        if self.executing.iter().any(|s| s == id) {
            Was::Interrupted
        } else if self.started.iter().any(|s| s == id) {
            Was::Started
        } else {
            Was::Fresh
        }
    }
}

/// For a call cut off while its tool ran: `None` to run it again, else its outcome. The
/// host's `onInterruptedToolCall` decides first (its throw is the call's error result); by
/// default a tool with `replay: "safe"` runs again and any other gets the interrupted error.
async fn interrupted(
    env: &ToolEnv<'_>,
    context: &Context,
    assistant: &AgentMessage,
    call: &Rc<Value>,
) -> Option<ToolCallOutcome> {
    let name = str_field(call, "name");
    // As L-95: once the run is aborted, no hook is called.
    if env.aborted() {
        return Some(immediate(call, error_tool_result(ABORTED)));
    }
    let args = Rc::new(call.get("arguments").cloned().unwrap_or(Value::Null));
    let ctx = ToolCallContext {
        assistant_message: assistant,
        tool_call: call,
        args: &args,
        context,
    };
    if let Some(hook) = env.hooks.interrupted_tool_call(ctx) {
        match hook.await {
            Ok(Some(Interrupted::Rerun)) => return None,
            Ok(Some(Interrupted::Invalid(what))) => {
                let text = format!("onInterruptedToolCall returned {what}: expected \"rerun\", a tool result object or undefined");
                return Some(immediate(call, error_tool_result(&text)));
            }
            Ok(Some(Interrupted::Result(result))) => {
                let is_error = result.get("isError") == Some(&Value::Bool(true));
                return Some(ToolCallOutcome {
                    tool_call: call.clone(),
                    result: Rc::new(result),
                    is_error,
                    duration_ms: None,
                });
            }
            Ok(None) => {}
            Err(thrown) => return Some(immediate(call, error_tool_result(&thrown.message))),
        }
    }
    let rerun = context.find_tool(name).is_some_and(|t| t.replay_safe());
    (!rerun).then(|| immediate(call, error_tool_result(&interrupted_call_text(name))))
}

/// §9.1: runs a batch in the mode L-90 selects, after what `prior` says already happened.
/// With `truncated` (L-94: the message hit the token limit) every call fails without
/// running, one after the other.
#[allow(clippy::too_many_arguments)]
pub async fn execute_tool_calls<'a>(
    host: &'a Host<'a>,
    context: &'a Context,
    assistant: &'a AgentMessage,
    calls: &'a [Rc<Value>],
    mode: ToolExecution,
    truncated: bool,
    prior: Prior,
) -> Result<Batch> {
    let env = host.tool_env();
    let sequential = truncated
        || mode == ToolExecution::Sequential
        || calls.iter().any(|c| {
            context
                .find_tool(str_field(c, "name"))
                .is_some_and(|t| t.execution_mode() == ExecutionMode::Sequential)
        });
    if sequential {
        // L-91.
        let mut outcomes = Vec::new();
        let mut messages = Vec::new();
        for (i, call) in calls.iter().enumerate() {
            let outcome = match prior.of(i, call) {
                Was::Done(m, outcome) => {
                    messages.push(m);
                    outcomes.push(outcome);
                    continue;
                }
                Was::Ended(outcome) => outcome,
                was => {
                    let fresh = matches!(was, Was::Fresh);
                    if fresh {
                        host.emit(start_event(call)).await?;
                    }
                    let stopped = match was {
                        Was::Interrupted if !truncated => {
                            interrupted(&env, context, assistant, call).await
                        }
                        _ => None,
                    };
                    let outcome = match stopped {
                        Some(outcome) => outcome,
                        None if truncated => immediate(
                            call,
                            error_tool_result(&truncated_call_text(str_field(call, "name"))),
                        ),
                        None => match prepare(&env, context, &context.tools, assistant, call).await
                        {
                            Preparation::Immediate { result } => immediate(call, result),
                            Preparation::Prepared { tool, args } => {
                                let emit = update_emitter(host, call);
                                let id = str_field(call, "id");
                                host.tracker.executing(id);
                                host.sink.checkpoint().await?;
                                let executed =
                                    execute(&env, tool.as_ref(), id, args.clone(), emit).await?;
                                finalize(&env, context, assistant, call, &args, executed).await
                            }
                        },
                    };
                    emit_end(host, &outcome).await?;
                    outcome
                }
            };
            let m = tool_result_message(&outcome, host.clock.now());
            let announced = prior.announced && i == prior.done.len();
            emit_message(host, &m, announced).await?;
            messages.push(m);
            outcomes.push(outcome);
        }
        return Ok(Batch {
            terminate: !truncated && terminates(&outcomes),
            messages,
        });
    }
    // L-92 phase 1: preflight strictly in call order; no execute starts before all are done.
    let mut slots: Vec<LocalBoxFuture<'a, HostResult<ToolCallOutcome>>> = Vec::new();
    let mut done = Vec::new();
    for (i, call) in calls.iter().enumerate() {
        let was = match prior.of(i, call) {
            Was::Done(m, outcome) => {
                done.push(m);
                slots.push(futures::future::ready(Ok(outcome)).boxed_local());
                continue;
            }
            Was::Ended(outcome) => {
                slots.push(futures::future::ready(Ok(outcome)).boxed_local());
                continue;
            }
            was => was,
        };
        if matches!(was, Was::Fresh) {
            host.emit(start_event(call)).await?;
        } else if let Some(outcome) = match was {
            Was::Interrupted => interrupted(&env, context, assistant, call).await,
            _ => None,
        } {
            emit_end(host, &outcome).await?;
            slots.push(futures::future::ready(Ok(outcome)).boxed_local());
            continue;
        }
        match prepare(&env, context, &context.tools, assistant, call).await {
            Preparation::Immediate { result } => {
                let outcome = immediate(call, result);
                emit_end(host, &outcome).await?;
                slots.push(futures::future::ready(Ok(outcome)).boxed_local());
            }
            Preparation::Prepared { tool, args } => {
                let env = host.tool_env();
                slots.push(
                    async move {
                        // L-126: aborted before this call started.
                        if env.aborted() {
                            let outcome = immediate(call, error_tool_result(ABORTED));
                            emit_end(host, &outcome).await?;
                            return Ok(outcome);
                        }
                        let emit = update_emitter(host, call);
                        host.tracker.executing(str_field(call, "id"));
                        host.sink.checkpoint().await?;
                        let executed = execute(
                            &env,
                            tool.as_ref(),
                            str_field(call, "id"),
                            args.clone(),
                            emit,
                        )
                        .await?;
                        let outcome =
                            finalize(&env, context, assistant, call, &args, executed).await;
                        emit_end(host, &outcome).await?;
                        Ok(outcome)
                    }
                    .boxed_local(),
                );
            }
        }
    }
    // Phase 2: all together; each emits its own end on completion. They are polled in the
    // order they were woken, as JS runs the microtasks that resume pi's calls: a call that
    // settles sooner (a synchronous throw) goes on sooner. The first rejection (a throwing
    // sink) rejects the batch, as `Promise.all` does.
    let mut running: FuturesUnordered<_> = slots
        .into_iter()
        .enumerate()
        .map(|(i, slot)| slot.map(move |r| (i, r)))
        .collect();
    let mut settled: Vec<Option<ToolCallOutcome>> = calls.iter().map(|_| None).collect();
    while let Some((i, r)) = running.next().await {
        if let Some(place) = settled.get_mut(i) {
            *place = Some(r?);
        }
    }
    let outcomes: Vec<ToolCallOutcome> = settled.into_iter().flatten().collect();
    // Phase 3: messages in call order, after those already delivered.
    let mut messages = done;
    let mut announced = prior.announced;
    for outcome in outcomes.iter().skip(messages.len()) {
        let m = tool_result_message(outcome, host.clock.now());
        emit_message(host, &m, announced).await?;
        announced = false;
        messages.push(m);
    }
    Ok(Batch {
        terminate: terminates(&outcomes),
        messages,
    })
}
