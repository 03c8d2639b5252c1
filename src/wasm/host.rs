//! The small host services for the core in JS: the clock (`Date.now`, `performance.now`),
//! the `AbortSignal`, `RegExp` for schema patterns, and the event sink that builds pi's
//! event objects and awaits the caller's `emit` only when it returns a thenable.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use js_sys::Function;
use wasm_bindgen::prelude::*;

use super::js::{call, get, settle};
use super::table::Table;
use crate::agent::validate::Patterns;
use crate::error::Thrown;
use crate::event::AgentEvent;
use crate::io::{AbortSignal, Clock, EventSink, HostFuture};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;

    type JsRegExp;
    #[wasm_bindgen(constructor, catch, js_class = "RegExp")]
    fn new(pattern: &str, flags: &str) -> Result<JsRegExp, JsValue>;
    #[wasm_bindgen(method)]
    fn test(this: &JsRegExp, text: &str) -> bool;
}

pub struct JsClock;

impl Clock for JsClock {
    fn now(&self) -> f64 {
        js_sys::Date::now()
    }
    fn monotonic(&self) -> f64 {
        performance_now()
    }
}

/// The caller's `AbortSignal` (or `undefined`).
pub struct JsSignal(pub JsValue);

impl AbortSignal for JsSignal {
    fn aborted(&self) -> bool {
        get(&self.0, "aborted").as_bool().unwrap_or(false)
    }
}

/// `new RegExp(pattern, "u")`, compiled once per pattern.
#[derive(Default)]
pub struct JsPatterns {
    cache: RefCell<HashMap<String, Result<Rc<JsRegExp>, String>>>,
}

impl Patterns for JsPatterns {
    fn test(&self, pattern: &str, text: &str) -> Result<bool, String> {
        let compiled = {
            let mut cache = self.cache.borrow_mut();
            cache
                .entry(pattern.to_string())
                .or_insert_with(|| {
                    JsRegExp::new(pattern, "u")
                        .map(Rc::new)
                        .map_err(|e| super::js::error_text(&e))
                })
                .clone()
        };
        compiled.map(|re| re.test(text))
    }
}

/// Delivers events to the caller's `emit(event)`, building pi's event objects.
pub struct JsSink {
    pub emit: Function,
    pub table: Rc<Table>,
}

fn obj(kind: &'static str) -> JsValue {
    let o = js_sys::Object::new();
    super::js::set(&o, "type", &super::js::key(kind));
    o.into()
}

impl JsSink {
    fn build(&self, event: &AgentEvent) -> JsValue {
        use super::js::set;
        let t = &self.table;
        let o = obj(event.kind());
        match event {
            AgentEvent::AgentStart | AgentEvent::TurnStart => {}
            AgentEvent::MessageStart { message } | AgentEvent::MessageEnd { message } => {
                set(&o, "message", &t.to_js(message));
            }
            AgentEvent::MessageUpdate { event } => {
                // Only Rust-made streams reach this path; JS streams' updates are emitted by
                // the glue without crossing into wasm.
                let json = event.to_json();
                set(&o, "assistantMessageEvent", &super::js::from_json(&json));
                set(
                    &o,
                    "message",
                    &super::js::get(&super::js::from_json(&json), "partial"),
                );
            }
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
            } => {
                set(&o, "toolCallId", &JsValue::from_str(tool_call_id));
                set(&o, "toolName", &JsValue::from_str(tool_name));
                set(&o, "args", &t.to_js(args));
            }
            AgentEvent::ToolExecutionUpdate {
                tool_call_id,
                tool_name,
                args,
                partial_result,
            } => {
                set(&o, "toolCallId", &JsValue::from_str(tool_call_id));
                set(&o, "toolName", &JsValue::from_str(tool_name));
                set(&o, "args", &t.to_js(args));
                set(&o, "partialResult", &t.to_js(partial_result));
            }
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                tool_name,
                result,
                is_error,
                duration_ms,
            } => {
                set(&o, "toolCallId", &JsValue::from_str(tool_call_id));
                set(&o, "toolName", &JsValue::from_str(tool_name));
                set(&o, "result", &t.to_js(result));
                set(&o, "isError", &JsValue::from_bool(*is_error));
                if let Some(d) = duration_ms {
                    set(&o, "durationMs", &JsValue::from_f64(*d));
                }
            }
            AgentEvent::TurnEnd {
                message,
                tool_results,
            } => {
                set(&o, "message", &t.to_js(message));
                set(&o, "toolResults", &t.array(tool_results));
            }
            AgentEvent::AgentEnd { messages } => {
                set(&o, "messages", &t.array(messages));
            }
        }
        o
    }
}

impl EventSink for JsSink {
    fn emit(&self, event: AgentEvent) -> HostFuture<'_, ()> {
        let js = self.build(&event);
        let returned = call(&self.emit, &[&js]);
        Box::pin(async move {
            settle(returned?).await?;
            Ok::<(), Thrown>(())
        })
    }
}
