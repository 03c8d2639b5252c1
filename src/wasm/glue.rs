//! The typed contract with the glue of src/js/loop.js: each function the binding calls is a
//! method of [`Glue`] (the glue's `GLUE` object) or of the glue's [`Response`], bound here
//! once. A call is one crossing (no lookup by name, no `Reflect.apply`), and a throw is
//! `Err` with what was thrown. tests/contract.rs checks that `GLUE` holds each method named
//! here, and that the record kinds below and the event kinds (`event::AGENT_EVENT_TYPES`,
//! by `AgentEvent::index`) are the glue's.

use js_sys::{Array, Function};
use wasm_bindgen::prelude::*;

/// The kinds of the records that edit the JS copy of a built-in response, by the index the
/// glue's `RECORD_KINDS` gives each (its name in lower case): the nine update types, each
/// emitting its `message_update`, then edits without an event and the mark of the
/// response's end.
pub mod kind {
    pub const TEXT_START: usize = 0;
    pub const TEXT_DELTA: usize = 1;
    pub const TEXT_END: usize = 2;
    pub const THINKING_START: usize = 3;
    pub const THINKING_DELTA: usize = 4;
    pub const THINKING_END: usize = 5;
    pub const TOOLCALL_START: usize = 6;
    pub const TOOLCALL_DELTA: usize = 7;
    pub const TOOLCALL_END: usize = 8;
    /// Top-level fields of the partial.
    pub const SET_META: usize = 9;
    /// A block's fields that arrive late.
    pub const ASSIGN_BLOCK: usize = 10;
    pub const END_READ: usize = 11;
}

#[wasm_bindgen]
extern "C" {
    /// The glue object of src/js/loop.js (`GLUE`).
    #[derive(Clone)]
    pub type Glue;

    /// pi's `mergeClientIdentity(DEFAULT_AGENT_IDENTITY, config.identity)`, made for one
    /// request (L-78); a throwing getter throws.
    #[wasm_bindgen(method, catch, js_name = requestIdentity)]
    pub fn request_identity(this: &Glue, config: &JsValue) -> Result<JsValue, JsValue>;

    /// Builds pi's event object of kind `EVENT_TYPES[kind]` from its fields in pi's key
    /// order and returns `emit(event)`: one crossing per event.
    #[wasm_bindgen(method, catch, js_name = emitEvent)]
    #[allow(clippy::too_many_arguments)]
    pub fn emit_event(
        this: &Glue,
        emit: &Function,
        kind: u32,
        a: &JsValue,
        b: &JsValue,
        c: &JsValue,
        d: &JsValue,
        e: &JsValue,
    ) -> Result<JsValue, JsValue>;

    /// Calls the stream function and gives a Promise of its [`Response`] (L-79).
    #[wasm_bindgen(method, catch, js_name = openResponse)]
    pub fn open_response(
        this: &Glue,
        stream_fn: &Function,
        model: &JsValue,
        context: &JsValue,
        options: &JsValue,
        emit: &Function,
    ) -> Result<JsValue, JsValue>;

    /// The options object the stream function gets (L-80), its `identity` merged from
    /// `config.identity` as pi's (L-78).
    #[wasm_bindgen(method, catch, js_name = streamOptions)]
    pub fn stream_options(
        this: &Glue,
        config: &JsValue,
        model: &JsValue,
        reasoning: &JsValue,
        api_key: &JsValue,
        signal: &JsValue,
    ) -> Result<JsValue, JsValue>;

    /// `{ ...object, [key]: value }`.
    #[wasm_bindgen(method, catch, js_name = copyWith)]
    pub fn copy_with(
        this: &Glue,
        object: &JsValue,
        key: &JsValue,
        value: &JsValue,
    ) -> Result<JsValue, JsValue>;

    /// A copy of a stream's final message whose tool calls with arguments that are not JSON
    /// carry `argumentsError`, or `undefined` when there are none.
    #[wasm_bindgen(method, catch, js_name = jsonArguments)]
    pub fn json_arguments(this: &Glue, message: &JsValue) -> Result<JsValue, JsValue>;

    /// At a `message_end`, keeps an assistant message's tool call blocks, by id, for the
    /// run's tool execution events and tool hooks (pi gives them these very objects).
    #[wasm_bindgen(method, js_name = callBlocks)]
    pub fn call_blocks(this: &Glue, message: &JsValue);

    /// The `arguments` of the kept block of tool call `id` (pi's `args` in its execution
    /// events), or `undefined` when there is none.
    #[wasm_bindgen(method, js_name = callArguments)]
    pub fn call_arguments(this: &Glue, id: &JsValue) -> JsValue;

    /// `f.call(tool, toolCall.arguments)`, as pi calls `prepareArguments`: with the
    /// response's own block for that id when there is one.
    #[wasm_bindgen(method, catch, js_name = prepareArguments)]
    pub fn prepare_arguments(
        this: &Glue,
        f: &js_sys::Function,
        tool: &JsValue,
        call: &JsValue,
    ) -> Result<JsValue, JsValue>;

    /// A tool hook's context object, in pi's key order: `{ assistantMessage, toolCall, args,
    /// context }`, or with `result` and `isError` (not `undefined`: `afterToolCall`) before
    /// `context`; `toolCall` the response's own block with that id when there is one.
    #[wasm_bindgen(method, js_name = toolHookContext)]
    pub fn tool_hook_context(
        this: &Glue,
        assistant_message: &JsValue,
        tool_call: &JsValue,
        args: &JsValue,
        context: &JsValue,
        result: &JsValue,
        is_error: &JsValue,
    ) -> JsValue;

    /// The items of a caller's array as a fresh array, or `undefined` for no array.
    #[wasm_bindgen(method, catch)]
    pub fn items(this: &Glue, value: &JsValue, what: &JsValue) -> Result<JsValue, JsValue>;

    /// A tool as the core reads it, as JSON text: `[executionMode, declaration, safe]`.
    #[wasm_bindgen(method, catch, js_name = readTool)]
    pub fn read_tool(this: &Glue, tool: &JsValue) -> Result<JsValue, JsValue>;

    /// `tool.execute(id, args, signal, onUpdate)`, or its wait for a person (approval) or a
    /// client first: the run's own glue parks such a call (src/js/pending.js).
    #[wasm_bindgen(method, catch, js_name = executeTool)]
    pub fn execute_tool(
        this: &Glue,
        tool: &JsValue,
        id: &JsValue,
        args: &JsValue,
        signal: &JsValue,
        on_update: &JsValue,
    ) -> Result<JsValue, JsValue>;

    /// `config[name]` as pi calls it: `None` when absent, else the function (the glue throws
    /// for any other value).
    #[wasm_bindgen(method, catch)]
    pub fn hook(this: &Glue, config: &JsValue, name: &JsValue)
        -> Result<Option<Function>, JsValue>;

    /// `[obj[a], obj[b], …]` for `names` "a,b,…".
    #[wasm_bindgen(method, catch)]
    pub fn fields(this: &Glue, obj: &JsValue, names: &JsValue) -> Result<Array, JsValue>;

    /// pi's tool result message from its members (in pi's key order after `role`), each one
    /// that is `undefined` left out: a message the core made (`agent::tools`), built without
    /// JSON text, its `content` and `details` the tool's own objects.
    #[wasm_bindgen(method, catch, js_name = toolResult)]
    #[allow(clippy::too_many_arguments)]
    pub fn tool_result(
        this: &Glue,
        tool_call_id: &JsValue,
        tool_name: &JsValue,
        content: &JsValue,
        details: &JsValue,
        usage: &JsValue,
        is_error: &JsValue,
        duration_ms: &JsValue,
        timestamp: &JsValue,
    ) -> Result<JsValue, JsValue>;

    /// [`Glue::view`], or `undefined` when the JSON copy of `obj` already holds each field
    /// as read.
    #[wasm_bindgen(method, catch, js_name = view)]
    pub fn view_if_different(
        this: &Glue,
        obj: &JsValue,
        names: &JsValue,
        if_different: bool,
    ) -> Result<JsValue, JsValue>;

    /// A result object split for the core: `[json, place, value, place, value, …]`.
    #[wasm_bindgen(method, catch)]
    pub fn split(this: &Glue, value: &JsValue) -> Result<Array, JsValue>;

    /// Cuts `own` to `keep` items, appends `objects` at `places`, returns a copy.
    #[wasm_bindgen(method, catch)]
    pub fn extend(
        this: &Glue,
        own: &Array,
        keep: u32,
        objects: &Array,
        places: &[u32],
    ) -> Result<Array, JsValue>;

    /// How many first items of `items` are the very items of `own`.
    #[wasm_bindgen(method, catch)]
    pub fn shared(this: &Glue, items: &Array, own: &Array) -> Result<u32, JsValue>;

    /// The live context the hooks get (`{ context, messages, items, tools, toolItems }`):
    /// with `copy`, pi's `{ ...context }` at a run's start; else `context` itself.
    #[wasm_bindgen(method, catch, js_name = liveContext)]
    pub fn live_context(this: &Glue, context: &JsValue, copy: bool) -> Result<JsValue, JsValue>;

    /// Cuts the live `messages` to `keep` items, appends `objects` at `places`; gives the
    /// context object.
    #[wasm_bindgen(method, catch, js_name = livePush)]
    pub fn live_push(
        this: &Glue,
        live: &JsValue,
        keep: u32,
        objects: &Array,
        places: &[u32],
    ) -> Result<JsValue, JsValue>;

    /// What hooks changed in the live context since the last sync: `undefined`, or
    /// `[k, items, tools]`.
    #[wasm_bindgen(method, catch, js_name = livePull)]
    pub fn live_pull(this: &Glue, live: &JsValue) -> Result<JsValue, JsValue>;

    /// Whether `value` is the live `messages`, unchanged since the last sync.
    #[wasm_bindgen(method, catch, js_name = liveSame)]
    pub fn live_same(this: &Glue, live: &JsValue, value: &JsValue) -> Result<bool, JsValue>;

    /// The function that applies a network chunk's records and emits their updates.
    #[wasm_bindgen(method, catch)]
    pub fn updater(
        this: &Glue,
        emit: &Function,
        inner: bool,
        signal: &JsValue,
    ) -> Result<Function, JsValue>;

    /// `await v` for settle.rs: for a thenable (or any value, with `plain`), calls
    /// `settled(slot, generation, value, rejected)` when `await` would resume, and gives
    /// `true`; `false` for any other value. A throwing `then` getter throws. `run` is the
    /// run it belongs to (`settle::InRun`), 0 for none.
    #[wasm_bindgen(method, catch, js_name = awaitInto)]
    pub fn await_into(
        this: &Glue,
        v: &JsValue,
        settled: &JsValue,
        slot: u32,
        generation: u32,
        plain: bool,
        run: u32,
    ) -> Result<bool, JsValue>;

    /// The next step of a response body's reader that is no empty chunk (the glue's
    /// `readPastEmpty`), or its end once the reader was let go of: reads made in JS, where an
    /// engine calls its own streams fastest.
    #[wasm_bindgen(method, catch, js_name = readBody)]
    pub fn read_body(this: &Glue, reader: &JsValue) -> Result<JsValue, JsValue>;

    /// A reader of `body` (a ReadableStream's, or one over an async iterable such as
    /// node-fetch's body), cancelled when `signal` (an AbortSignal, or undefined) aborts.
    #[wasm_bindgen(method, catch, js_name = bodyReader)]
    pub fn body_reader(this: &Glue, body: &JsValue, signal: &JsValue) -> Result<JsValue, JsValue>;

    /// A body read's step as fetch.rs reads it: `None` at the end, else the chunk's bytes as
    /// a fresh Uint8Array, or `[chunk]` when it is no bytes. Throws when a view's
    /// range cannot be read.
    #[wasm_bindgen(method, catch, js_name = chunkOf)]
    pub fn chunk_of(this: &Glue, step: &JsValue) -> Result<Option<JsValue>, JsValue>;

    /// Lets go of a body reader (fetch.rs): `how` 0 when it was read to its end, 1 when the
    /// answer was whole (read the rest in the background), 2 to cancel the body.
    #[wasm_bindgen(method, catch)]
    pub fn release(this: &Glue, reader: &JsValue, how: u32) -> Result<(), JsValue>;

    /// The clock: `Date.now()` for `0`, `performance.now()` for `1` (a recorded run's glue
    /// records what it reads, a replayed run's gives back what was recorded).
    #[wasm_bindgen(method)]
    pub fn clock(this: &Glue, kind: u32) -> f64;

    /// A Promise that resolves after `ms`, or earlier when `signal` aborts.
    #[wasm_bindgen(method, catch)]
    pub fn sleep(this: &Glue, ms: f64, signal: &JsValue) -> Result<JsValue, JsValue>;

    /// `{ promise, cancel }`: a timer to race against a read, then clear.
    #[wasm_bindgen(method, catch)]
    pub fn deadline(this: &Glue, ms: f64) -> Result<JsValue, JsValue>;

    /// `{ apiKey, note }` from the environment for `provider`.
    #[wasm_bindgen(method, catch, js_name = envApiKey)]
    pub fn env_api_key(this: &Glue, provider: &str, env: &JsValue) -> Result<JsValue, JsValue>;

    /// A thrown value's message with its cause.
    #[wasm_bindgen(method, catch, js_name = describeError)]
    pub fn describe_error(this: &Glue, error: &JsValue) -> Result<JsValue, JsValue>;

    /// `text` with every form of `key` redacted.
    #[wasm_bindgen(method, catch)]
    pub fn redact(this: &Glue, text: &str, key: &str) -> Result<JsValue, JsValue>;

    /// What `runLoop` is given: one object, made by the glue's `startRun`.
    pub type RunOptions;

    /// `"prompt"`, `"continue"` or `"resume"` (from `position`).
    #[wasm_bindgen(method, getter)]
    pub fn mode(this: &RunOptions) -> JsValue;
    /// The prompts of a `"prompt"` run.
    #[wasm_bindgen(method, getter)]
    pub fn prompts(this: &RunOptions) -> JsValue;
    #[wasm_bindgen(method, getter)]
    pub fn context(this: &RunOptions) -> JsValue;
    #[wasm_bindgen(method, getter)]
    pub fn config(this: &RunOptions) -> JsValue;
    /// The event sink.
    #[wasm_bindgen(method, getter)]
    pub fn emit(this: &RunOptions) -> JsValue;
    #[wasm_bindgen(method, getter)]
    pub fn signal(this: &RunOptions) -> JsValue;
    /// A stream function, or `"builtin"`.
    #[wasm_bindgen(method, getter, js_name = streamFn)]
    pub fn stream_fn(this: &RunOptions) -> JsValue;
    /// The checkpoint's position a `"resume"` run starts from.
    #[wasm_bindgen(method, getter)]
    pub fn position(this: &RunOptions) -> JsValue;
    /// The id `runPosition` knows the run by.
    #[wasm_bindgen(method, getter)]
    pub fn id(this: &RunOptions) -> u32;
    /// A function awaited before each tool's `execute`, or `undefined`.
    #[wasm_bindgen(method, getter)]
    pub fn checkpoint(this: &RunOptions) -> JsValue;

    /// One response stream of a JS stream function, read by the glue (its `Response`).
    pub type Response;

    /// A Promise of `0` (finished), `2` (a terminal event) or the `start` partial's copy.
    #[wasm_bindgen(method, catch)]
    pub fn next(this: &Response) -> Result<JsValue, JsValue>;

    /// A Promise of the stream's result, `undefined` when there is none.
    #[wasm_bindgen(method, catch)]
    pub fn result(this: &Response) -> Result<JsValue, JsValue>;
}

// Two more uses of the glue's functions above, bound once (an import each would cost its own
// shim in the .wasm).
impl Glue {
    /// `{ ...object }` (pi's spread: getters run now).
    pub fn copy(&self, object: &JsValue) -> Result<JsValue, JsValue> {
        self.copy_with(object, &JsValue::UNDEFINED, &JsValue::UNDEFINED)
    }

    /// A plain copy of a result object as pi's reads see it.
    pub fn view(&self, obj: &JsValue, names: &JsValue) -> Result<JsValue, JsValue> {
        self.view_if_different(obj, names, false)
    }
}
