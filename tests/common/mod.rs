//! Test host for the native loop tests: a deterministic clock, an abort flag, a recording
//! event sink, a scripted stream function, gated fake tools and recording hooks. Tools and
//! hooks are real implementations of the core's traits; only the model is scripted.
#![allow(dead_code, clippy::type_complexity)]
// Test code: a failed unwrap or index is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

pub mod event_stream;
pub mod typed;

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use futures::channel::oneshot;
use futures::executor::LocalPool;
use futures::task::LocalSpawnExt;
use futures::FutureExt;
use pi_agent_wasm::agent::validate::pattern::NativePatterns;
use pi_agent_wasm::agent::Host;
use pi_agent_wasm::error::{Result, Thrown};
use pi_agent_wasm::event::{AgentEvent, AssistantMessageEvent, Partial};
use pi_agent_wasm::io::*;
use pi_agent_wasm::json::Value;
use pi_agent_wasm::message::AgentMessage;
use pi_agent_wasm::value as json;

pub fn msg(v: Value) -> AgentMessage {
    Rc::new(v)
}

pub fn user(text: &str) -> AgentMessage {
    msg(json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}))
}

// ---------------------------------------------------------------------------------------
// Clock and signal

#[derive(Default)]
pub struct TestClock {
    pub ticks: Cell<f64>,
}

impl Clock for TestClock {
    fn now(&self) -> f64 {
        1_700_000_000_000.0 + self.ticks.get()
    }
    fn monotonic(&self) -> f64 {
        // Every read advances 5 ms: durations are positive and deterministic.
        self.ticks.set(self.ticks.get() + 5.0);
        self.ticks.get()
    }
}

#[derive(Default)]
pub struct TestSignal {
    pub aborted: Cell<bool>,
}

impl AbortSignal for TestSignal {
    fn aborted(&self) -> bool {
        self.aborted.get()
    }
}

// ---------------------------------------------------------------------------------------
// Event sink

/// The recording sink; clones share one record (its `emitter` outlives the run's borrow).
#[derive(Default, Clone)]
pub struct Sink(Rc<SinkState>);

impl std::ops::Deref for Sink {
    type Target = SinkState;
    fn deref(&self) -> &SinkState {
        &self.0
    }
}

#[derive(Default)]
pub struct SinkState {
    pub events: RefCell<Vec<AgentEvent>>,
    pub log: Rc<RefCell<Vec<String>>>,
    /// Called on each event before it is recorded (to abort, steer, …).
    pub on_event: RefCell<Option<Box<dyn Fn(&AgentEvent)>>>,
    /// Throw when an event of this type is emitted (the n-th one, 1-based).
    pub throw_at: RefCell<Option<(String, usize)>>,
    seen: RefCell<Vec<String>>,
}

impl EventSink for Sink {
    fn emit(&self, event: AgentEvent) -> HostFuture<'_, ()> {
        let kind = event.kind().to_string();
        self.seen.borrow_mut().push(kind.clone());
        let count = self.seen.borrow().iter().filter(|k| **k == kind).count();
        if let Some((k, n)) = self.throw_at.borrow().as_ref() {
            if *k == kind && *n == count {
                return async move { Err(Thrown::new(format!("listener threw at {kind}"))) }
                    .boxed_local();
            }
        }
        if let Some(f) = self.on_event.borrow().as_ref() {
            f(&event);
        }
        self.log
            .borrow_mut()
            .push(format!("event:{}", label(&event)));
        self.events.borrow_mut().push(event);
        async { Ok(()) }.boxed_local()
    }

    fn emitter(&self) -> pi_agent_wasm::io::Emitter {
        let sink = self.clone();
        Rc::new(move |event| {
            let pending = sink.emit(event);
            // This sink settles at once; what it settled with is kept for later.
            let settled = pending.now_or_never().unwrap_or(Ok(()));
            Ok(async move { settled }.boxed_local())
        })
    }
}

/// `type` plus the role or tool call id, for compact order assertions.
pub fn label(e: &AgentEvent) -> String {
    let role = |m: &AgentMessage| {
        m.get("role")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string()
    };
    match e {
        AgentEvent::MessageStart { message } => format!("message_start({})", role(message)),
        AgentEvent::MessageEnd { message } => format!("message_end({})", role(message)),
        AgentEvent::MessageUpdate { event } => format!("message_update({})", event.kind()),
        AgentEvent::ToolExecutionStart { tool_call_id, .. } => {
            format!("tool_execution_start({tool_call_id})")
        }
        AgentEvent::ToolExecutionUpdate { tool_call_id, .. } => {
            format!("tool_execution_update({tool_call_id})")
        }
        AgentEvent::ToolExecutionEnd { tool_call_id, .. } => {
            format!("tool_execution_end({tool_call_id})")
        }
        other => other.kind().to_string(),
    }
}

impl Sink {
    pub fn labels(&self) -> Vec<String> {
        self.events.borrow().iter().map(label).collect()
    }
    pub fn json(&self) -> Vec<Value> {
        self.events
            .borrow()
            .iter()
            .map(AgentEvent::to_json)
            .collect()
    }
}

// ---------------------------------------------------------------------------------------
// Scripted stream function

pub fn assistant(content: Value, stop_reason: &str) -> Value {
    json!({
        "role": "assistant",
        "content": content,
        "api": "test-api",
        "provider": "test-provider",
        "model": "test-model",
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        "stopReason": stop_reason,
        "timestamp": 1_700_000_000_000_u64
    })
}

pub fn tool_call(id: &str, name: &str, args: Value) -> Value {
    json!({"type": "toolCall", "id": id, "name": name, "arguments": args})
}

/// One scripted response: the events to deliver, then what `result()` gives.
#[derive(Clone)]
pub struct Script {
    pub events: Vec<AssistantMessageEvent>,
    pub result: Option<AgentMessage>,
    /// The stream function itself throws (L-82).
    pub throw: Option<String>,
}

impl Script {
    /// A streamed response, block by block, each event with its own snapshot of the partial
    /// (as tests/fixtures/reference/generate.mjs builds it for the reference): `start`, text
    /// and thinking as start/delta/end, tool calls as start/end, then `done` (or `error` for
    /// error/aborted stop reasons).
    pub fn streamed(final_message: Value) -> Script {
        let mut partial = final_message.clone();
        partial["content"] = json!([]);
        partial["stopReason"] = json!("pending");
        let snap = |p: &Value| -> Partial { Rc::new(RefCell::new(p.clone())) };
        let mut events = vec![AssistantMessageEvent::Start {
            partial: snap(&partial),
        }];
        let blocks = final_message["content"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for (i, b) in blocks.iter().enumerate() {
            match b["type"].as_str() {
                Some(kind @ ("text" | "thinking")) => {
                    let text = b[kind].as_str().unwrap().to_string();
                    let mut empty = b.clone();
                    empty[kind] = json!("");
                    partial["content"].as_array_mut().unwrap().push(empty);
                    let start = snap(&partial);
                    partial["content"][i][kind] = json!(text.clone());
                    let (delta, end) = (snap(&partial), snap(&partial));
                    if kind == "text" {
                        events.push(AssistantMessageEvent::TextStart {
                            content_index: i,
                            partial: start,
                        });
                        events.push(AssistantMessageEvent::TextDelta {
                            content_index: i,
                            delta: text.clone(),
                            partial: delta,
                        });
                        events.push(AssistantMessageEvent::TextEnd {
                            content_index: i,
                            content: text,
                            partial: end,
                        });
                    } else {
                        events.push(AssistantMessageEvent::ThinkingStart {
                            content_index: i,
                            partial: start,
                        });
                        events.push(AssistantMessageEvent::ThinkingDelta {
                            content_index: i,
                            delta: text.clone(),
                            partial: delta,
                        });
                        events.push(AssistantMessageEvent::ThinkingEnd {
                            content_index: i,
                            content: text,
                            partial: end,
                        });
                    }
                }
                Some("toolCall") => {
                    partial["content"].as_array_mut().unwrap().push(b.clone());
                    events.push(AssistantMessageEvent::ToolcallStart {
                        content_index: i,
                        partial: snap(&partial),
                        text: None,
                    });
                    events.push(AssistantMessageEvent::ToolcallEnd {
                        content_index: i,
                        tool_call: b.clone(),
                        partial: snap(&partial),
                    });
                }
                _ => {}
            }
        }
        let m = msg(final_message.clone());
        let reason = final_message["stopReason"].as_str().unwrap_or("stop");
        let stop: pi_agent_wasm::message::StopReason =
            pi_agent_wasm::message::StopReason::parse(reason).unwrap();
        if reason == "error" || reason == "aborted" {
            events.push(AssistantMessageEvent::Error {
                reason: stop,
                error: m.clone(),
            });
        } else {
            events.push(AssistantMessageEvent::Done {
                reason: stop,
                message: m.clone(),
            });
        }
        Script {
            events,
            result: Some(m),
            throw: None,
        }
    }

    /// Only the terminal event (no `start`, L-86).
    pub fn terminal_only(final_message: Value) -> Script {
        let mut s = Script::streamed(final_message);
        s.events.retain(|e| e.is_terminal());
        s
    }

    pub fn text(text: &str) -> Script {
        Script::streamed(assistant(json!([{"type": "text", "text": text}]), "stop"))
    }

    pub fn tools(calls: Vec<Value>) -> Script {
        Script::streamed(assistant(Value::Array(calls), "toolUse"))
    }
}

/// What one stream-function call received.
#[derive(Clone, Debug)]
pub struct Request {
    pub model: Value,
    pub messages: Vec<Value>,
    pub api_key: Option<String>,
    pub reasoning: Option<String>,
    pub identity: Value,
}

#[derive(Default)]
pub struct Model {
    pub scripts: RefCell<VecDeque<Script>>,
    pub requests: RefCell<Vec<Request>>,
    pub log: Rc<RefCell<Vec<String>>>,
    /// Called at each request (to abort, steer, …).
    pub on_request: RefCell<Option<Box<dyn Fn(usize)>>>,
}

impl Model {
    pub fn push(&self, s: Script) {
        self.scripts.borrow_mut().push_back(s);
    }
}

struct Scripted {
    events: VecDeque<AssistantMessageEvent>,
    result: Option<AgentMessage>,
}

impl AssistantStream for Scripted {
    fn next(&mut self) -> HostFuture<'_, Option<AssistantMessageEvent>> {
        let e = self.events.pop_front();
        async move { Ok(e) }.boxed_local()
    }
    fn result(&mut self) -> HostFuture<'_, Option<AgentMessage>> {
        let r = self.result.clone();
        async move { Ok(r) }.boxed_local()
    }
}

impl StreamFn for Model {
    fn stream<'a>(
        &'a self,
        model: &'a Rc<Value>,
        context: LlmContext,
        options: StreamOptions,
    ) -> HostFuture<'a, Box<dyn AssistantStream + 'a>> {
        let n = self.requests.borrow().len();
        self.requests.borrow_mut().push(Request {
            model: (**model).clone(),
            messages: context.messages.iter().map(|m| (**m).clone()).collect(),
            api_key: options.api_key.clone(),
            reasoning: options.reasoning.map(|r| r.as_str().to_string()),
            identity: options.identity.clone(),
        });
        self.log.borrow_mut().push("streamFn".into());
        if let Some(f) = self.on_request.borrow().as_ref() {
            f(n);
        }
        let script = self
            .scripts
            .borrow_mut()
            .pop_front()
            .unwrap_or_else(|| Script::text("(no more scripts)"));
        async move {
            if let Some(t) = script.throw {
                return Err(Thrown::new(t));
            }
            Ok(Box::new(Scripted {
                events: script.events.into(),
                result: script.result,
            }) as Box<dyn AssistantStream>)
        }
        .boxed_local()
    }
}

// ---------------------------------------------------------------------------------------
// Tools

pub enum Behavior {
    /// Resolve with this result object.
    Return(Value),
    /// Throw (reject) with this message.
    Throw(String),
    /// Wait for the gate, then resolve with the value it is opened with.
    Gated,
    /// Call onUpdate with each value, then resolve with the result.
    Updates(Vec<Value>, Value),
    /// Resolve with `{content:[{text: JSON of args}]}`, echoing the validated arguments.
    Echo,
}

pub struct FakeTool {
    pub name: String,
    pub parameters: Value,
    pub mode: ExecutionMode,
    pub behavior: Behavior,
    pub gates: RefCell<VecDeque<oneshot::Receiver<Value>>>,
    pub senders: RefCell<Vec<oneshot::Sender<Value>>>,
    pub calls: RefCell<Vec<(String, Value)>>,
    pub log: Rc<RefCell<Vec<String>>>,
    pub prepare: Option<Box<dyn Fn(&Value) -> Option<std::result::Result<Value, Thrown>>>>,
    pub late_update: RefCell<Option<UpdateFn>>,
    pub replay_safe: bool,
}

impl FakeTool {
    pub fn new(name: &str, behavior: Behavior) -> FakeTool {
        FakeTool {
            name: name.into(),
            parameters: json!({"type": "object", "properties": {}}),
            mode: ExecutionMode::Unset,
            behavior,
            gates: RefCell::new(VecDeque::new()),
            senders: RefCell::new(Vec::new()),
            calls: RefCell::new(Vec::new()),
            log: Rc::new(RefCell::new(Vec::new())),
            prepare: None,
            late_update: RefCell::new(None),
            replay_safe: false,
        }
    }
    pub fn with_params(mut self, p: Value) -> Self {
        self.parameters = p;
        self
    }
    pub fn with_mode(mut self, m: ExecutionMode) -> Self {
        self.mode = m;
        self
    }
    pub fn with_log(mut self, log: Rc<RefCell<Vec<String>>>) -> Self {
        self.log = log;
        self
    }
    /// Prepares `n` gates; `open(i, v)` resolves the i-th execution with `v`.
    pub fn gated(self, n: usize) -> Self {
        for _ in 0..n {
            let (tx, rx) = oneshot::channel();
            self.gates.borrow_mut().push_back(rx);
            self.senders.borrow_mut().push(tx);
        }
        self
    }
    pub fn open(&self, v: Value) {
        let tx = self.senders.borrow_mut().remove(0);
        let _ = tx.send(v);
    }
    pub fn rc(self) -> Rc<dyn Tool> {
        Rc::new(self)
    }
}

pub fn text_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "details": {}})
}

impl Tool for FakeTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn execution_mode(&self) -> ExecutionMode {
        self.mode
    }
    fn parameters(&self) -> &Value {
        &self.parameters
    }
    fn declaration(&self) -> Value {
        json!({"name": self.name.clone(), "description": format!("the {} tool", self.name), "parameters": &self.parameters})
    }
    fn prepare_arguments(&self, call: &Rc<Value>) -> Option<std::result::Result<Value, Thrown>> {
        let raw = call.get("arguments").unwrap_or(&Value::Null);
        self.prepare.as_ref().and_then(|f| f(raw))
    }
    fn replay_safe(&self) -> bool {
        self.replay_safe
    }
    fn execute(&self, id: &str, args: Rc<Value>, on_update: UpdateFn) -> HostFuture<'_, Rc<Value>> {
        let args = (*args).clone();
        self.calls.borrow_mut().push((id.to_string(), args.clone()));
        self.log.borrow_mut().push(format!("execute:{id}"));
        *self.late_update.borrow_mut() = Some(on_update.clone());
        match &self.behavior {
            Behavior::Return(v) => {
                let v = Rc::new(v.clone());
                async move { Ok(v) }.boxed_local()
            }
            Behavior::Throw(m) => {
                let m = m.clone();
                async move { Err(Thrown::new(m)) }.boxed_local()
            }
            Behavior::Echo => {
                let text = args.to_string();
                async move { Ok(Rc::new(text_result(&text))) }.boxed_local()
            }
            Behavior::Updates(updates, result) => {
                for u in updates {
                    let _ = on_update(Rc::new(u.clone()));
                }
                let r = Rc::new(result.clone());
                async move { Ok(r) }.boxed_local()
            }
            Behavior::Gated => {
                let gate = self.gates.borrow_mut().pop_front();
                let log = self.log.clone();
                let id = id.to_string();
                async move {
                    let v = match gate {
                        Some(g) => g.await.unwrap_or(Value::Null),
                        None => Value::Null,
                    };
                    log.borrow_mut().push(format!("settled:{id}"));
                    if v.get("throw").is_some() {
                        return Err(Thrown::new(v["throw"].as_str().unwrap_or("thrown")));
                    }
                    Ok(Rc::new(v))
                }
                .boxed_local()
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Hooks

#[derive(Default)]
pub struct TestHooks {
    pub log: Rc<RefCell<Vec<String>>>,
    pub steering: RefCell<VecDeque<Vec<AgentMessage>>>,
    pub steering_configured: bool,
    pub follow_ups: RefCell<VecDeque<Vec<AgentMessage>>>,
    pub follow_ups_configured: bool,
    pub finish: RefCell<VecDeque<Option<TurnDecision>>>,
    pub finish_configured: bool,
    pub finish_throws: Option<String>,
    pub convert_throws: Option<String>,
    pub transform: Option<Box<dyn Fn(&[AgentMessage]) -> Vec<AgentMessage>>>,
    pub api_key: Option<Option<String>>,
    pub next_turn: Option<Box<dyn Fn(&TurnContext) -> Option<NextTurn>>>,
    pub request: Option<Box<dyn Fn(&RequestContext) -> Option<RequestUpdate>>>,
    pub before: Option<
        Box<dyn Fn(&ToolCallContext) -> std::result::Result<Option<BeforeToolCallResult>, Thrown>>,
    >,
    pub after: Option<
        Box<
            dyn Fn(
                &AfterToolCallContext,
            ) -> std::result::Result<Option<AfterToolCallResult>, Thrown>,
        >,
    >,
    /// Recorded: the transcript (roles) each hook saw.
    pub seen: RefCell<Vec<(String, Vec<String>)>>,
}

fn roles(ms: &[AgentMessage]) -> Vec<String> {
    ms.iter()
        .map(|m| m["role"].as_str().unwrap_or("?").to_string())
        .collect()
}

fn ready<'a, T: 'a>(v: std::result::Result<T, Thrown>) -> HostFuture<'a, T> {
    async move { v }.boxed_local()
}

impl Hooks for TestHooks {
    fn convert_to_llm<'a>(&'a self, messages: &'a [AgentMessage]) -> HostFuture<'a, LlmContext> {
        self.log.borrow_mut().push("convertToLlm".into());
        if let Some(t) = &self.convert_throws {
            return ready(Err(Thrown::new(t.clone())));
        }
        let llm: Vec<AgentMessage> = messages
            .iter()
            .filter(|m| {
                matches!(
                    m["role"].as_str(),
                    Some("system" | "user" | "assistant" | "toolResult")
                )
            })
            .cloned()
            .collect();
        ready(Ok(llm.into()))
    }
    fn transform_context<'a>(
        &'a self,
        context: &'a Context,
    ) -> Option<HostFuture<'a, Vec<AgentMessage>>> {
        let f = self.transform.as_ref()?;
        self.log.borrow_mut().push("transformContext".into());
        Some(ready(Ok(f(&context.messages))))
    }
    fn get_api_key<'a>(&'a self, provider: &'a str) -> Option<HostFuture<'a, Option<String>>> {
        let k = self.api_key.clone()?;
        self.log.borrow_mut().push(format!("getApiKey:{provider}"));
        Some(ready(Ok(k)))
    }
    fn prepare_next_turn<'a>(
        &'a self,
        turn: TurnContext<'a>,
    ) -> Option<HostFuture<'a, Option<NextTurn>>> {
        let f = self.next_turn.as_ref()?;
        self.log.borrow_mut().push("prepareNextTurn".into());
        Some(ready(Ok(f(&turn))))
    }
    fn prepare_request<'a>(
        &'a self,
        request: RequestContext<'a>,
    ) -> Option<HostFuture<'a, Option<RequestUpdate>>> {
        let f = self.request.as_ref()?;
        self.log.borrow_mut().push("prepareRequest".into());
        self.seen
            .borrow_mut()
            .push(("prepareRequest".into(), roles(&request.context.messages)));
        Some(ready(Ok(f(&request))))
    }
    fn finish_turn<'a>(
        &'a self,
        turn: TurnContext<'a>,
    ) -> Option<HostFuture<'a, Option<TurnDecision>>> {
        if !self.finish_configured {
            return None;
        }
        self.log.borrow_mut().push("finishTurn".into());
        self.seen
            .borrow_mut()
            .push(("finishTurn".into(), roles(&turn.context.messages)));
        if let Some(t) = &self.finish_throws {
            return Some(ready(Err(Thrown::new(t.clone()))));
        }
        let d = self.finish.borrow_mut().pop_front().flatten();
        Some(ready(Ok(d)))
    }
    fn before_tool_call<'a>(
        &'a self,
        call: ToolCallContext<'a>,
    ) -> Option<HostFuture<'a, Option<BeforeToolCallResult>>> {
        let f = self.before.as_ref()?;
        self.log.borrow_mut().push(format!(
            "beforeToolCall:{}",
            call.tool_call["id"].as_str().unwrap_or("")
        ));
        self.seen
            .borrow_mut()
            .push(("beforeToolCall".into(), roles(&call.context.messages)));
        Some(ready(f(&call)))
    }
    fn after_tool_call<'a>(
        &'a self,
        call: AfterToolCallContext<'a>,
    ) -> Option<HostFuture<'a, Option<AfterToolCallResult>>> {
        let f = self.after.as_ref()?;
        self.log.borrow_mut().push(format!(
            "afterToolCall:{}",
            call.tool_call["id"].as_str().unwrap_or("")
        ));
        Some(ready(f(&call)))
    }
    fn get_steering_messages(&self) -> Option<HostFuture<'_, Vec<AgentMessage>>> {
        if !self.steering_configured {
            return None;
        }
        self.log.borrow_mut().push("getSteeringMessages".into());
        let next = self.steering.borrow_mut().pop_front().unwrap_or_default();
        Some(ready(Ok(next)))
    }
    fn get_follow_up_messages(&self) -> Option<HostFuture<'_, Vec<AgentMessage>>> {
        if !self.follow_ups_configured {
            return None;
        }
        self.log.borrow_mut().push("getFollowUpMessages".into());
        let next = self.follow_ups.borrow_mut().pop_front().unwrap_or_default();
        Some(ready(Ok(next)))
    }
}

// ---------------------------------------------------------------------------------------
// Running

pub struct World {
    pub clock: TestClock,
    pub signal: Rc<TestSignal>,
    pub sink: Sink,
    pub hooks: TestHooks,
    pub model: Model,
    pub patterns: NativePatterns,
    pub no_stream_fn: bool,
    pub log: Rc<RefCell<Vec<String>>>,
    pub tracker: pi_agent_wasm::agent::checkpoint::Tracker,
}

impl Default for World {
    fn default() -> Self {
        let log = Rc::new(RefCell::new(Vec::new()));
        World {
            clock: TestClock::default(),
            signal: Rc::new(TestSignal::default()),
            sink: Sink(Rc::new(SinkState {
                log: log.clone(),
                ..SinkState::default()
            })),
            hooks: TestHooks {
                log: log.clone(),
                ..TestHooks::default()
            },
            model: Model {
                log: log.clone(),
                ..Model::default()
            },
            patterns: NativePatterns::default(),
            no_stream_fn: false,
            log,
            tracker: Default::default(),
        }
    }
}

pub fn config() -> LoopConfig {
    LoopConfig {
        model: Rc::new(json!({"id": "test-model", "api": "test-api", "provider": "test-provider"})),
        reasoning: None,
        api_key: None,
        tool_execution: ToolExecution::Parallel,
    }
}

pub fn context(messages: Vec<AgentMessage>, tools: Vec<Rc<dyn Tool>>) -> Context {
    Context {
        messages,
        tools,
        host: None,
    }
}

impl World {
    pub fn host(&self) -> Host<'_> {
        Host {
            clock: &self.clock,
            patterns: &self.patterns,
            signal: Some(&*self.signal),
            sink: &self.sink,
            hooks: &self.hooks,
            stream_fn: if self.no_stream_fn {
                None
            } else {
                Some(&self.model)
            },
            tracker: &self.tracker,
        }
    }

    pub fn run(
        &self,
        prompts: Vec<AgentMessage>,
        ctx: Context,
        cfg: LoopConfig,
    ) -> Result<Vec<AgentMessage>> {
        let host = self.host();
        futures::executor::block_on(pi_agent_wasm::agent::run_agent_loop(
            &host, prompts, ctx, cfg,
        ))
    }

    pub fn run_continue(&self, ctx: Context, cfg: LoopConfig) -> Result<Vec<AgentMessage>> {
        let host = self.host();
        futures::executor::block_on(pi_agent_wasm::agent::run_agent_loop_continue(
            &host, ctx, cfg,
        ))
    }

    pub fn log(&self) -> Vec<String> {
        self.log.borrow().clone()
    }
}

/// Runs a loop on a `LocalPool`, so the test can open tool gates between steps.
pub struct Stepped {
    pub pool: LocalPool,
    pub result: Rc<RefCell<Option<Result<Vec<AgentMessage>>>>>,
}

impl Stepped {
    pub fn start(
        world: Rc<World>,
        prompts: Vec<AgentMessage>,
        ctx: Context,
        cfg: LoopConfig,
    ) -> Stepped {
        let pool = LocalPool::new();
        let result = Rc::new(RefCell::new(None));
        let out = result.clone();
        pool.spawner()
            .spawn_local(async move {
                let host = world.host();
                let r = pi_agent_wasm::agent::run_agent_loop(&host, prompts, ctx, cfg).await;
                *out.borrow_mut() = Some(r);
            })
            .unwrap();
        let mut s = Stepped { pool, result };
        s.step();
        s
    }
    pub fn step(&mut self) {
        self.pool.run_until_stalled();
    }
    pub fn done(&self) -> bool {
        self.result.borrow().is_some()
    }
}

/// JSON equality as JS sees it: numbers by value (`2` equals `2.0`), object keys in order.
pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((k1, v1), (k2, v2))| k1 == k2 && same(v1, v2))
        }
        _ => a == b,
    }
}

/// The text of a reference fixture, `tests/fixtures/reference/<name>`.
pub fn reference_text(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/reference/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The cases of a reference fixture (a JSON array).
pub fn reference_cases(name: &str) -> Vec<Value> {
    serde_json::from_str(&reference_text(name)).unwrap()
}

/// Decodes an SSE transcript delivered in `chunks` with a provider decoder: the events as
/// (type, contentIndex, delta) and the final message.
pub fn decode_sse(
    decoder: &mut dyn pi_agent_wasm::provider::Decoder,
    chunks: &[&[u8]],
) -> (Vec<Value>, Value) {
    let mut sse = pi_agent_wasm::stream::SseDecoder::new();
    let mut events = vec![decoder.start()];
    let mut raw = Vec::new();
    let mut failed = None;
    'read: for c in chunks {
        sse.feed(c, &mut raw);
        for e in raw.drain(..) {
            match decoder.event(&e.event, &e.data, &mut events) {
                Ok(true) => break 'read,
                Ok(false) => {}
                Err(m) => {
                    failed = Some(m);
                    break 'read;
                }
            }
        }
    }
    let message = match failed {
        Some(m) => decoder.fail(&m, false, &mut events),
        None => decoder.finish(&mut events),
    };
    let summary = events
        .iter()
        .map(|e| {
            let j = e.to_json();
            json!({"type": &j["type"], "contentIndex": j.get("contentIndex").cloned(), "delta": j.get("delta").cloned()})
        })
        .collect();
    (summary, (*message).clone())
}

/// A wire transcript of `tests/fixtures/<dir>/<name>`.
pub fn fixture_bytes(dir: &str, name: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/tests/fixtures/{dir}/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}
