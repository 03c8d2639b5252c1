//! What the core needs from its host, as small traits: the clock, the abort signal, the
//! event sink, the stream function, tools and hooks. The JS binding implements them over JS
//! values; native tests implement them with scripted fakes.
//!
//! Single-threaded by design: futures are `LocalBoxFuture`s (no `Send`), run on the JS
//! microtask queue in wasm and under `futures::executor` natively. Every callback returns a
//! `Result` whose error is the host's thrown value ([`Thrown`]), because host code may throw
//! anything. Must not depend on wasm-bindgen, js-sys, threads or the system clock.

use crate::json::Put;
use std::rc::Rc;

use crate::json::Value;
use futures::future::LocalBoxFuture;

use crate::error::Thrown;
use crate::event::{AgentEvent, AssistantMessageEvent};
use crate::message::{AgentMessage, ThinkingLevel};

pub type HostResult<T> = Result<T, Thrown>;
pub type HostFuture<'a, T> = LocalBoxFuture<'a, HostResult<T>>;

/// Time comes from the host: `SystemTime::now()` panics on wasm32 (CONVENTIONS).
pub trait Clock {
    /// `Date.now()`: milliseconds since the epoch, for timestamps (L-13).
    fn now(&self) -> f64;
    /// `performance.now()`: a monotonic millisecond clock, for durations (L-103).
    fn monotonic(&self) -> f64;
}

/// Tests `text` against an ECMAScript pattern (`RegExp(p, "u")`, a tool schema's `pattern`):
/// the host's engine, so the `.wasm` carries none. `Err` names a pattern that does not
/// compile.
pub trait Patterns {
    fn test(&self, pattern: &str, text: &str) -> Result<bool, String>;
}

/// The run's `AbortSignal`, as far as the loop reads it (§10).
pub trait AbortSignal {
    fn aborted(&self) -> bool;
}

/// The event sink. The loop awaits every emit: an async sink is a barrier for the loop's
/// progress (L-140). A sink that throws rejects the run (L-82).
pub trait EventSink {
    fn emit(&self, event: AgentEvent) -> HostFuture<'_, ()>;
    /// Delivers a `message_update`. A sink may hold it until a call with `flush` (or a
    /// [`flush`](Self::flush)): the loop flushes whenever its stream is about to wait for
    /// the host (a network read) and before any other event, so a network chunk's updates
    /// reach the sink in one call, each awaited as [`emit`](Self::emit) is.
    fn update(&self, event: AssistantMessageEvent, _flush: bool) -> HostFuture<'_, ()> {
        self.emit(AgentEvent::MessageUpdate {
            event: Rc::new(event),
        })
    }
    /// Delivers the updates [`update`](Self::update) held.
    fn flush(&self) -> HostFuture<'_, ()> {
        Box::pin(async { Ok(()) })
    }
    /// A checkpoint the host may persist before the loop goes on: called right before a
    /// tool's `execute`, so a host that saves the position here knows the call may have had
    /// effects (`agent::checkpoint`). A throw rejects the run, as an emit's does.
    fn checkpoint(&self) -> HostFuture<'_, ()> {
        Box::pin(async { Ok(()) })
    }
    /// This sink as an [`Emitter`] that outlives the borrow: a running tool may call
    /// `onUpdate` at any time, synchronously inside `execute` included, and pi delivers each
    /// `tool_execution_update` at once (L-105).
    fn emitter(&self) -> Emitter;
}

/// Delivers an event at once: `Err` when the sink threw synchronously (the tool whose
/// `onUpdate` made the call sees that throw, L-106); otherwise what is left of the emit,
/// awaited later.
pub type Emitter = Rc<dyn Fn(AgentEvent) -> HostResult<HostFuture<'static, ()>>>;

/// Where a tool's partial results go: called synchronously for each `onUpdate`, as
/// [`Emitter`] (`runToolCall` passes the caller's `onUpdate` here, the loop its sink).
pub type UpdateSink = Rc<dyn Fn(Rc<Value>) -> HostResult<HostFuture<'static, ()>>>;

/// `context` as handed to the stream function: only `messages` (L-24, L-76), what
/// `convertToLlm` returned. A host may keep that list its own, unread (`host`, with
/// `messages` empty): the core passes it through (pi reads none of it), its own stream
/// function gives it on as it is, and a stream function that builds a request reads it then.
#[derive(Clone, Default)]
pub struct LlmContext {
    pub messages: Vec<AgentMessage>,
    pub host: Option<Rc<dyn std::any::Any>>,
}

impl From<Vec<AgentMessage>> for LlmContext {
    fn from(messages: Vec<AgentMessage>) -> Self {
        LlmContext {
            messages,
            host: None,
        }
    }
}

/// The per-request values the loop adds to the options it forwards (L-80). Everything else
/// in pi's options object is the caller's config, which the host forwards untouched.
#[derive(Clone, Debug)]
pub struct StreamOptions {
    /// L-77: `getApiKey` result, or the static `apiKey`.
    pub api_key: Option<String>,
    /// The current `config.reasoning` (absent means off).
    pub reasoning: Option<ThinkingLevel>,
    /// L-78: the merged client identity.
    pub identity: Value,
}

/// A response stream (L-16). Contract (L-20): failures arrive as a final message with
/// `stopReason` `"error"`/`"aborted"`, not as `Err`. An `Err` is a thrown value, which
/// rejects the run as in pi (L-82).
pub trait AssistantStream {
    /// The next event, or `None` when the stream is finished.
    fn next(&mut self) -> HostFuture<'_, Option<AssistantMessageEvent>>;
    /// The stream's result (L-84). `None` means the stream was ended without a result, where
    /// pi would wait forever (L-15); the loop turns that into an error message instead.
    fn result(&mut self) -> HostFuture<'_, Option<AgentMessage>>;
    /// Whether [`next`](Self::next) would return without waiting for the host (the rest of
    /// a network chunk already read). The loop delivers held updates when it is not.
    fn ready(&self) -> bool {
        false
    }

    /// The message of `message_start` for a `start` event: a copy of the partial (pi's
    /// `{...partial}`). A host whose partial lives elsewhere (a JS object) copies it there.
    fn start_snapshot(&mut self, partial: &crate::event::Partial) -> AgentMessage {
        Rc::new(partial.borrow().clone())
    }

    /// The final message with `thinkingLevel` set (L-87), as a copy when the producer still
    /// holds the message, so its object is never changed under it (L-173).
    fn with_thinking_level(&mut self, mut message: AgentMessage, level: &str) -> AgentMessage {
        if let Value::Object(o) = Rc::make_mut(&mut message) {
            o.put("thinkingLevel", level.into());
        }
        message
    }
}

/// `(model, context, options) => AssistantMessageEventStream | Promise<…>` (L-20, L-79).
pub trait StreamFn {
    fn stream<'a>(
        &'a self,
        model: &'a Rc<Value>,
        context: LlmContext,
        options: StreamOptions,
    ) -> HostFuture<'a, Box<dyn AssistantStream + 'a>>;
}

/// An HTTP `POST` the built-in providers make (`provider::driver`).
#[derive(Clone, Debug, PartialEq)]
pub struct HttpRequest {
    pub url: String,
    /// In sending order; names as written (the host's `Headers` folds case).
    pub headers: Vec<(String, String)>,
    pub body: String,
}

/// A response whose body is read in chunks. Dropping it before the end cancels the body,
/// so the connection closes.
pub trait HttpResponse {
    fn status(&self) -> u16;
    /// fetch's `ok`: a 2xx status.
    fn ok(&self) -> bool {
        (200..300).contains(&self.status())
    }
    /// The reason phrase (`statusText`), `""` when the host has none.
    fn status_text(&self) -> String;
    /// A header by name, case-insensitively.
    fn header(&self, name: &str) -> Option<String>;
    /// Every header as `(lower-case name, value)`.
    fn headers(&self) -> Vec<(String, String)>;
    /// The body's next chunk; `None` at its end. A reset, an abort or a body the host cannot
    /// read is `Err` with the reason.
    fn read(&mut self) -> LocalBoxFuture<'_, Result<Option<Vec<u8>>, String>>;
    /// The answer is whole (the stream's end event came): what is left of the body is not
    /// needed. A host may read it to its end rather than cancel it when the response is
    /// dropped (a cancel can cost more than the read, and loses the connection).
    fn answered(&mut self) {}
}

/// What the built-in providers need from the network and the timers (the JS binding's is
/// the host's `fetch`; native tests script one).
pub trait Transport {
    /// `Err` with the reason when this host cannot send at all (no `fetch`).
    fn available(&self) -> Result<(), String> {
        Ok(())
    }
    /// Sends `request`, honouring the run's abort signal. `Err` is a network failure, with
    /// what the user can act on (refused, unknown host, TLS), or `""` when nothing is known.
    fn send<'a>(
        &'a self,
        request: &'a HttpRequest,
    ) -> LocalBoxFuture<'a, Result<Box<dyn HttpResponse>, String>>;
    /// Resolves after `ms`, or at once when the run is aborted (a retry's pause).
    fn sleep(&self, ms: f64) -> LocalBoxFuture<'static, ()>;
    /// Resolves after `ms`; dropping it clears the timer (a deadline raced against a read).
    fn timer(&self, ms: f64) -> LocalBoxFuture<'static, ()>;
}

/// `executionMode` of a tool (L-90).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ExecutionMode {
    #[default]
    Unset,
    Sequential,
    Parallel,
}

/// Called by a running tool for each partial result (L-105). `Err` is what the update sink
/// threw synchronously, for the tool to see thrown by its `onUpdate` call.
pub type UpdateFn = Rc<dyn Fn(Rc<Value>) -> HostResult<()>>;

/// A tool's result as the loop reads it ([`Tool::read_result`]).
pub struct ReadResult {
    /// The result with its fields as pi reads them; shared into events as the very object.
    pub result: Rc<Value>,
    /// Its own properties alone, when they differ: what pi's `{ ...result }` copies
    /// (`afterToolCall`'s merge, L-108).
    pub own: Option<Rc<Value>>,
}

/// An executable tool (L-11).
pub trait Tool {
    fn name(&self) -> &str;
    fn execution_mode(&self) -> ExecutionMode {
        ExecutionMode::Unset
    }
    /// The JSON Schema of the arguments.
    fn parameters(&self) -> &Value;
    /// L-26: `{ name, description, parameters (JSON-normalised), constrainedSampling? }`.
    fn declaration(&self) -> Value;
    /// L-97: the arguments to validate for tool call `call`, as pi prepares them: what
    /// `prepareArguments(call.arguments)` returns, or, for a tool without it, the call's
    /// arguments as the host holds them now when they changed since the response ended (a
    /// listener's change in place counts, as in pi). `None` keeps `call.arguments`;
    /// `Some(Err)` when `prepareArguments` threw.
    fn prepare_arguments(&self, _call: &Rc<Value>) -> Option<HostResult<Value>> {
        None
    }
    /// L-103: `execute(toolCallId, params, signal, onUpdate)`. `Ok` is the result object as
    /// returned (used as is, and shared into events); `Err` is a throw or rejection.
    fn execute(
        &self,
        tool_call_id: &str,
        args: Rc<Value>,
        on_update: UpdateFn,
    ) -> HostFuture<'_, Rc<Value>>;
    /// `result` (what `execute` resolved with) with its fields as pi reads them
    /// (`result.content`, `result.isError`, …), where they differ from its own properties,
    /// which are what the result holds: a class's getters, a prototype's fields, a Proxy's
    /// `get` trap. `Err` is a getter or trap that threw, as if `execute` had.
    fn read_result(&self, result: Rc<Value>) -> HostResult<ReadResult> {
        Ok(ReadResult { result, own: None })
    }
    /// The host's own object for this tool (the JS binding's tool object), for hooks that
    /// receive the context's tools.
    fn host_value(&self) -> Option<&dyn std::any::Any> {
        None
    }
    /// pi's `replay: "safe"`: running the tool again for a call cut off while it ran is safe
    /// (a run resumed from a checkpoint, `agent::checkpoint`). When not, that call gets an
    /// error result instead.
    fn replay_safe(&self) -> bool {
        false
    }
}

/// The transcript and executable tools of a run (`AgentContext`).
#[derive(Clone, Default)]
pub struct Context {
    pub messages: Vec<AgentMessage>,
    pub tools: Vec<Rc<dyn Tool>>,
    /// The host's own context object (the JS binding keeps the caller's other keys here,
    /// so hooks see them as pi's hooks do).
    pub host: Option<Rc<dyn std::any::Any>>,
}

impl Context {
    pub fn find_tool(&self, name: &str) -> Option<Rc<dyn Tool>> {
        self.tools.iter().find(|t| t.name() == name).cloned()
    }
}

/// L-58: what `finishTurn` and `prepareNextTurn` receive.
pub struct TurnContext<'a> {
    pub message: &'a AgentMessage,
    pub tool_results: &'a [AgentMessage],
    pub context: &'a Context,
    pub new_messages: &'a [AgentMessage],
}

/// L-43: what `prepareNextTurn` may return.
#[derive(Default)]
pub struct NextTurn {
    pub context: Option<Context>,
    pub messages: Option<Vec<AgentMessage>>,
    pub model: Option<Rc<Value>>,
    /// `None`: keep; `Some(Off)`: clear `reasoning`; `Some(level)`: set it (L-47).
    pub thinking_level: Option<ThinkingLevel>,
}

/// L-45: what `prepareRequest` receives.
pub struct RequestContext<'a> {
    pub context: &'a Context,
    pub model: &'a Rc<Value>,
    pub thinking_level: ThinkingLevel,
}

/// L-45: what `prepareRequest` may return.
#[derive(Default)]
pub struct RequestUpdate {
    pub context: Option<Context>,
    pub model: Option<Rc<Value>>,
    pub thinking_level: Option<ThinkingLevel>,
}

/// L-51: `finishTurn`'s decision. Any other shape is "no decision".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TurnDecision {
    Continue,
    End,
}

/// L-99: what `beforeToolCall` receives.
pub struct ToolCallContext<'a> {
    pub assistant_message: &'a AgentMessage,
    pub tool_call: &'a Rc<Value>,
    /// The same object `execute` will receive (L-100).
    pub args: &'a Rc<Value>,
    pub context: &'a Context,
}

/// L-99: `{ block?, reason?, terminate? }`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BeforeToolCallResult {
    pub block: bool,
    pub reason: Option<String>,
    pub terminate: bool,
}

/// What `onInterruptedToolCall` decided for a call cut off while its tool ran (a run resumed
/// from a checkpoint): run it again, or this result.
#[derive(Clone, Debug, PartialEq)]
pub enum Interrupted {
    Rerun,
    Result(Value),
    /// Anything else (described): the call gets an error result that says so.
    Invalid(String),
}

/// L-107: what `afterToolCall` receives.
pub struct AfterToolCallContext<'a> {
    pub assistant_message: &'a AgentMessage,
    pub tool_call: &'a Rc<Value>,
    pub args: &'a Rc<Value>,
    pub result: &'a Rc<Value>,
    pub is_error: bool,
    pub context: &'a Context,
}

/// L-108/L-109: the override fields; `None` = `null`/`undefined` (falls back with `??`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AfterToolCallResult {
    pub content: Option<Value>,
    pub details: Option<Value>,
    pub usage: Option<Value>,
    pub terminate: Option<Value>,
    pub is_error: Option<bool>,
    pub structured_content: Option<Value>,
}

/// The optional hooks of `AgentLoopConfig` (L-39). A hook that is not configured returns
/// `None` instead of a future, which is how pi's `hook?.(…)` reads. `convertToLlm` is
/// required.
#[allow(unused_variables)]
pub trait Hooks {
    /// L-75 (no signal).
    fn convert_to_llm<'a>(&'a self, messages: &'a [AgentMessage]) -> HostFuture<'a, LlmContext>;
    /// L-74.
    fn transform_context<'a>(
        &'a self,
        context: &'a Context,
    ) -> Option<HostFuture<'a, Vec<AgentMessage>>> {
        None
    }
    /// L-77 (no signal). `Ok(None)` for a falsy result.
    fn get_api_key<'a>(&'a self, provider: &'a str) -> Option<HostFuture<'a, Option<String>>> {
        None
    }
    /// L-43 (no signal at loop level).
    fn prepare_next_turn<'a>(
        &'a self,
        turn: TurnContext<'a>,
    ) -> Option<HostFuture<'a, Option<NextTurn>>> {
        None
    }
    /// L-45.
    fn prepare_request<'a>(
        &'a self,
        request: RequestContext<'a>,
    ) -> Option<HostFuture<'a, Option<RequestUpdate>>> {
        None
    }
    /// L-50 / L-48.
    fn finish_turn<'a>(
        &'a self,
        turn: TurnContext<'a>,
    ) -> Option<HostFuture<'a, Option<TurnDecision>>> {
        None
    }
    /// L-99.
    fn before_tool_call<'a>(
        &'a self,
        call: ToolCallContext<'a>,
    ) -> Option<HostFuture<'a, Option<BeforeToolCallResult>>> {
        None
    }
    /// L-107.
    fn after_tool_call<'a>(
        &'a self,
        call: AfterToolCallContext<'a>,
    ) -> Option<HostFuture<'a, Option<AfterToolCallResult>>> {
        None
    }
    /// Not in pi: for a call cut off while its tool ran, before a resumed run decides by the
    /// tool's `replay`. `Ok(None)` leaves it to that rule.
    fn interrupted_tool_call<'a>(
        &'a self,
        call: ToolCallContext<'a>,
    ) -> Option<HostFuture<'a, Option<Interrupted>>> {
        None
    }
    /// Brings `context` and the host's own context object (pi's live `currentContext`, which
    /// hooks get and may keep) to the same messages and tools: what code holding the object
    /// changed in it in place comes first, then what the loop appended since the last call.
    /// The loop calls it after each hook that was given the context and after each message
    /// it appends; nothing to do for a host without one.
    fn sync_context(&self, context: &mut Context) -> Result<(), Thrown> {
        Ok(())
    }
    /// L-40/L-43/L-51 poll points.
    fn get_steering_messages(&self) -> Option<HostFuture<'_, Vec<AgentMessage>>> {
        None
    }
    /// L-52.
    fn get_follow_up_messages(&self) -> Option<HostFuture<'_, Vec<AgentMessage>>> {
        None
    }
}

/// `toolExecution` (L-90).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ToolExecution {
    Sequential,
    #[default]
    Parallel,
}

/// The loop's own reading of `AgentLoopConfig` (L-39); hooks live in [`Hooks`].
#[derive(Clone, Debug)]
pub struct LoopConfig {
    pub model: Rc<Value>,
    pub reasoning: Option<ThinkingLevel>,
    pub api_key: Option<String>,
    pub tool_execution: ToolExecution,
}
