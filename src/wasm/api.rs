//! The loop's wasm exports, called by the glue in src/js/loop.js with pi's arguments. Each
//! has the one shape of the binding: convert in, call the core, convert out, one error map.
//! No export takes `&mut self`, so JS may re-enter (a tool calling `runToolCall`, a
//! listener starting another run) without a "recursive use" error.

use std::rc::Rc;

use crate::json::Value;
use js_sys::{Function, Object};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::builtin::BuiltinStreamFn;
use super::error::{invalid, rejection, thrown_to_js, unreadable, JsResult};
use super::glue::{Glue, RunOptions};
use super::hooks::{context_from_js, js_messages, JsHooks};
use super::host::{JsClock, JsPatterns, JsSignal};
use super::js::{call, get, read, set, to_json};
use super::sink::JsSink;
use super::stream_fn::JsStreamFn;
use super::table::Table;
use crate::agent::checkpoint::{Position, Tracker};
use crate::agent::Host;
use crate::agent::{
    resume_agent_loop, run_agent_loop, run_agent_loop_continue, run_tool_call, ToolEnv,
};
use crate::io::{LoopConfig, StreamFn, ToolExecution};
use crate::message::ThinkingLevel;

/// The glue's per-sink function that applies a Rust stream's update and emits it (the
/// `message_update` event, or with `inner` its `assistantMessageEvent`).
fn updater(glue: &Glue, emit: &Function, inner: bool, signal: &JsValue) -> JsResult<Function> {
    glue.updater(emit, inner, signal)
        .map_err(|_| invalid("internal glue function updater failed"))
}

/// The loop's own reading of `AgentLoopConfig` (L-39). A throwing getter or Proxy trap
/// rejects with what it threw.
fn loop_config(config: &JsValue, table: &Table) -> JsResult<LoopConfig> {
    if !config.is_object() {
        return Err(invalid("config must be an object"));
    }
    let f = table
        .fields(config, "model,reasoning,apiKey,toolExecution")
        .map_err(thrown_to_js)?;
    let (model, reasoning, api_key, tool_execution) = (f.get(0), f.get(1), f.get(2), f.get(3));
    let model = table.to_rust(&model, "config.model").map_err(unreadable)?;
    let reasoning =
        match reasoning.as_string() {
            None => None,
            Some(r) => Some(ThinkingLevel::parse(&r).ok_or_else(|| {
                invalid(format!("config.reasoning \"{r}\" is not a thinking level"))
            })?),
        };
    Ok(LoopConfig {
        model,
        reasoning: reasoning.filter(|r| *r != ThinkingLevel::Off),
        api_key: api_key.as_string(),
        tool_execution: if tool_execution.as_string().as_deref() == Some("sequential") {
            ToolExecution::Sequential
        } else {
            ToolExecution::Parallel
        },
    })
}

thread_local! {
    /// The positions of the runs in progress, by the id the glue gave each run.
    static RUNS: std::cell::RefCell<Vec<(u32, Rc<Tracker>)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Keeps a run's tracker readable by `runPosition` while the run lasts.
struct Registered(u32);

impl Registered {
    fn new(id: u32, tracker: Rc<Tracker>) -> Registered {
        RUNS.with(|r| r.borrow_mut().push((id, tracker)));
        Registered(id)
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        RUNS.with(|r| r.borrow_mut().retain(|(id, _)| *id != self.0));
    }
}

/// The position of run `id` now (`agent::checkpoint`), as JSON text (`Position::to_text`);
/// `undefined` when no such run is in progress or it has not started.
#[wasm_bindgen(js_name = runPosition)]
pub fn run_position(id: u32) -> Option<String> {
    // A copy: the host may be asked for a value's JSON while it is written.
    let position = RUNS.with(|r| {
        r.borrow()
            .iter()
            .find(|(i, _)| *i == id)
            .and_then(|(_, t)| t.position())
    });
    position.map(|p| p.to_text())
}

/// `runAgentLoop` / `runAgentLoopContinue` (L-34, L-35), and the resumption of a run from a
/// checkpoint's `position`, with the glue's [`RunOptions`]: `id` names the run for
/// `runPosition`; `checkpoint` (a function, or undefined) is awaited before each tool's
/// `execute`.
#[wasm_bindgen(js_name = runLoop)]
pub fn run_loop_js(glue: Glue, run: RunOptions) -> js_sys::Promise {
    promise(Box::pin(run_loop(glue, run)))
}

/// The Promise of an export's work: every async export goes through this one future type,
/// so wasm-bindgen's Promise machinery is in the `.wasm` once.
fn promise(work: futures::future::LocalBoxFuture<'static, JsResult<JsValue>>) -> js_sys::Promise {
    wasm_bindgen_futures::future_to_promise(work)
}

async fn run_loop(glue: Glue, run: RunOptions) -> JsResult<JsValue> {
    let (prompts, context, config, emit, signal, stream_fn, checkpoint) = (
        run.prompts(),
        run.context(),
        run.config(),
        run.emit(),
        run.signal(),
        run.stream_fn(),
        run.checkpoint(),
    );
    let mode = run.mode().as_string().unwrap_or_default();
    let position = if mode == "resume" {
        let value = to_json(&run.position(), "checkpoint.position")
            .map_err(unreadable)?
            .unwrap_or(Value::Null);
        Some(Position::from_json(&value).map_err(rejection)?)
    } else {
        None
    };
    let run_id = run.id();
    let tracker = Rc::new(Tracker::new());
    let _registered = Registered::new(run_id, tracker.clone());
    let table = Table::new(glue.clone());
    table.set_json_results(checkpoint.is_function());
    let emit: Function = emit
        .dyn_into()
        .map_err(|_| invalid("emit must be a function"))?;
    let ctx = context_from_js(&table, &signal, "context", &context, true).map_err(thrown_to_js)?;
    let cfg = loop_config(&config, &table)?;
    let read_llm = stream_fn.as_string().as_deref() == Some("builtin");
    let hooks = JsHooks {
        config: config.clone(),
        signal: signal.clone(),
        table: table.clone(),
        fixed_context: None,
        read_llm,
    };
    let updates = super::mirror::UpdateCell::default();
    let builtin = if read_llm {
        Some(BuiltinStreamFn {
            config: config.clone(),
            signal: JsSignal(signal.clone()),
            updates: updates.clone(),
            table: table.clone(),
            request_identity: true,
        })
    } else {
        None
    };
    let js_stream = match stream_fn.dyn_into::<Function>() {
        Ok(func) => Some(JsStreamFn {
            func,
            config: config.clone(),
            emit: emit.clone(),
            signal: signal.clone(),
            table: table.clone(),
        }),
        Err(_) => None,
    };
    let sink = JsSink {
        apply_update: updater(&glue, &emit, false, &signal)?,
        emit,
        table: table.clone(),
        updates,
        checkpoint,
    };
    let js_signal = JsSignal(signal);
    let host = Host {
        clock: &JsClock(glue),
        patterns: &JsPatterns::default(),
        signal: Some(&js_signal),
        sink: &sink,
        hooks: &hooks,
        stream_fn: match (&js_stream, &builtin) {
            (Some(s), _) => Some(s as &dyn StreamFn),
            (None, Some(b)) => Some(b as &dyn StreamFn),
            _ => None,
        },
        tracker: &tracker,
    };
    // Boxed: one call each instead of three state machines inlined into this one.
    let run: futures::future::LocalBoxFuture<'_, crate::error::Result<_>> = match position {
        Some(position) => Box::pin(resume_agent_loop(&host, ctx, cfg, position)),
        None if mode == "continue" => Box::pin(run_agent_loop_continue(&host, ctx, cfg)),
        None => {
            let prompts = js_messages(&table, "prompts", &prompts).map_err(thrown_to_js)?;
            Box::pin(run_agent_loop(&host, prompts, ctx, cfg))
        }
    };
    let out = super::settle::InRun { id: run_id, run }.await;
    out.map(|messages| table.array(&messages).into())
        .map_err(rejection)
}

/// `runToolCall(toolCall, options)` (L-38).
#[wasm_bindgen(js_name = runToolCall)]
pub fn run_tool_call_js(glue: Glue, tool_call: JsValue, options: JsValue) -> js_sys::Promise {
    promise(Box::pin(tool_call_js(glue, tool_call, options)))
}

async fn tool_call_js(glue: Glue, tool_call: JsValue, options: JsValue) -> JsResult<JsValue> {
    let table = Table::new(glue);
    let f = table
        .fields(&options, "signal,tools,assistantMessage,context,onUpdate")
        .map_err(thrown_to_js)?;
    let (signal, tools, assistant, context, on_update_js) =
        (f.get(0), f.get(1), f.get(2), f.get(3), f.get(4));
    let call_rc = table.to_rust(&tool_call, "toolCall").map_err(unreadable)?;
    // pi's `tools = context.tools ?? []` when `options.tools` is undefined.
    let tools = if tools.is_undefined() {
        if context.is_undefined() || context.is_null() {
            let message = if context.is_null() {
                "Cannot read properties of null (reading 'tools')"
            } else {
                "Cannot read properties of undefined (reading 'tools')"
            };
            return Err(js_sys::TypeError::new(message).into());
        }
        read(&context, "tools").map_err(thrown_to_js)?
    } else {
        tools
    };
    let tools_ctx = {
        let o = Object::new();
        set(&o, "messages", &js_sys::Array::new());
        set(&o, "tools", &tools);
        context_from_js(&table, &signal, "runToolCall options", &o.into(), true)
            .map_err(thrown_to_js)?
    };
    let assistant = table
        .to_rust(&assistant, "assistantMessage")
        .map_err(unreadable)?;
    let hooks = JsHooks {
        config: options.clone(),
        signal: signal.clone(),
        table: table.clone(),
        fixed_context: Some(context),
        read_llm: false,
    };
    let js_signal = JsSignal(signal);
    let patterns = JsPatterns::default();
    let env = ToolEnv {
        clock: &JsClock(table.glue().clone()),
        patterns: &patterns,
        signal: Some(&js_signal),
        hooks: &hooks,
    };
    // pi calls `options.onUpdate ?? (() => {})` inside the tool's `onUpdate`: what it
    // throws synchronously (a value that is no function included) is thrown to the tool.
    let update_table = Rc::downgrade(&table);
    let on_update: crate::io::UpdateSink = Rc::new(move |partial: Rc<Value>| {
        if on_update_js.is_undefined() || on_update_js.is_null() {
            return Ok(Box::pin(async { Ok(()) }));
        }
        let Some(table) = update_table.upgrade() else {
            return Ok(Box::pin(async { Ok(()) }));
        };
        let f = on_update_js.dyn_ref::<Function>().ok_or_else(|| {
            super::js::thrown(js_sys::TypeError::new("onUpdate is not a function").into())
        })?;
        super::js::pending(call(f, &[&table.to_js(&partial)])?)
    });
    let context = crate::io::Context::default();
    let outcome = run_tool_call(
        &env,
        &tools_ctx.tools,
        call_rc,
        &assistant,
        &context,
        on_update,
    )
    .await
    .map_err(thrown_to_js)?;
    let o = Object::new();
    set(&o, "toolCall", &table.to_js(&outcome.tool_call));
    set(&o, "result", &table.to_js(&outcome.result));
    set(&o, "isError", &JsValue::from_bool(outcome.is_error));
    if let Some(d) = outcome.duration_ms {
        set(&o, "durationMs", &JsValue::from_f64(d));
    }
    Ok(o.into())
}

/// `streamSimple(model, context, options)` called directly (outside a loop): runs the
/// built-in stream and pushes pi-ai's events to `push`; resolves when the response ended.
#[wasm_bindgen(js_name = streamOnce)]
pub fn stream_once_js(
    glue: Glue,
    model: JsValue,
    context: JsValue,
    options: JsValue,
    push: JsValue,
) -> js_sys::Promise {
    promise(Box::pin(stream_once(glue, model, context, options, push)))
}

async fn stream_once(
    glue: Glue,
    model: JsValue,
    context: JsValue,
    options: JsValue,
    push: JsValue,
) -> JsResult<JsValue> {
    use crate::event::AssistantMessageEvent as E;
    let table = Table::new(glue.clone());
    let push: Function = push
        .dyn_into()
        .map_err(|_| invalid("push must be a function"))?;
    let model = table.to_rust(&model, "model").map_err(unreadable)?;
    if !model.is_object() {
        return Err(invalid("model must be an object"));
    }
    let messages = js_messages(
        &table,
        "context.messages",
        &read(&context, "messages").map_err(thrown_to_js)?,
    )
    .map_err(thrown_to_js)?;
    // Read once, as pi-ai spreads them (getters run now): the copy is what the stream reads.
    let options = if options.is_object() {
        glue.copy(&options)?
    } else {
        Object::new().into()
    };
    // Not seeded at `start` here: the start event below seeds the sink's own cell.
    let builtin = BuiltinStreamFn {
        config: options.clone(),
        signal: JsSignal(get(&options, "signal")),
        updates: Default::default(),
        table: table.clone(),
        request_identity: false,
    };
    let sink = JsSink {
        apply_update: updater(&glue, &push, true, &JsValue::UNDEFINED)?,
        emit: push.clone(),
        table: table.clone(),
        updates: Default::default(),
        checkpoint: JsValue::UNDEFINED,
    };
    let stream_options = crate::io::StreamOptions {
        api_key: get(&options, "apiKey").as_string(),
        reasoning: get(&options, "reasoning")
            .as_string()
            .and_then(|r| ThinkingLevel::parse(&r)),
        identity: to_json(&get(&options, "identity"), "options.identity")
            .ok()
            .flatten()
            .unwrap_or(Value::Null),
    };
    let mut stream = builtin
        .stream(&model, messages.into(), stream_options)
        .await
        .map_err(thrown_to_js)?;
    while let Some(event) = stream.next().await.map_err(thrown_to_js)? {
        let out = Object::new();
        match &event {
            E::Start { partial } => {
                let partial_js = super::js::from_json(&partial.borrow());
                super::mirror::seed(&sink.updates, partial, partial_js.clone());
                set(&out, "type", &JsValue::from_str("start"));
                set(&out, "partial", &partial_js);
            }
            E::Done { reason, .. } | E::Error { reason, .. } => {
                let done = matches!(event, E::Done { .. });
                let message = match stream.result().await.map_err(thrown_to_js)? {
                    Some(m) => table.to_js(&m),
                    None => JsValue::UNDEFINED,
                };
                set(&out, "type", &JsValue::from_str(event.kind()));
                set(&out, "reason", &JsValue::from_str(reason.as_str()));
                set(&out, if done { "message" } else { "error" }, &message);
            }
            _ => {
                // The sink's updater pushes each `assistantMessageEvent` itself, a network
                // chunk's at once.
                sink.record(&event);
                if !stream.ready() {
                    sink.deliver_batch().map_err(thrown_to_js)?;
                }
                continue;
            }
        }
        sink.deliver_batch().map_err(thrown_to_js)?;
        call(&push, &[&out]).map_err(thrown_to_js)?;
    }
    sink.deliver_batch().map_err(thrown_to_js)?;
    Ok(JsValue::UNDEFINED)
}
