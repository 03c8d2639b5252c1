//! A JS stream function (the user's, or pi-ai's `streamSimple`) as the core's `StreamFn`.
//! The glue (src/js/loop.js) reads the JS response: it emits each `message_update` itself
//! and hands wasm only the `start` partial and the final message.

use crate::json::Put;
use std::rc::Rc;

use crate::json::Value;
use js_sys::{Function, Object};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::glue::Response;
use super::hooks::llm_messages_js;
use super::js::{set, settle, thrown};
use super::table::Table;
use crate::error::Thrown;
use crate::event::{AssistantMessageEvent, Partial};
use crate::io::{AssistantStream, HostFuture, LlmContext, StreamFn, StreamOptions};
use crate::message::{AgentMessage, StopReason};

pub struct JsStreamFn {
    pub func: Function,
    pub config: JsValue,
    pub emit: Function,
    pub signal: JsValue,
    pub table: Rc<Table>,
}

struct JsResponse {
    reader: Response,
    table: Rc<Table>,
    /// The JS objects behind the last `start` partial and the result, so the events that
    /// carry them are built in JS by a shallow copy instead of a round trip through JSON.
    partial_js: Option<JsValue>,
    final_js: Option<JsValue>,
}

impl StreamFn for JsStreamFn {
    fn stream<'a>(
        &'a self,
        model: &'a Rc<Value>,
        context: LlmContext,
        options: StreamOptions,
    ) -> HostFuture<'a, Box<dyn AssistantStream + 'a>> {
        Box::pin(async move {
            let model_js = self.table.to_js(model);
            let ctx = Object::new();
            set(&ctx, "messages", &llm_messages_js(&self.table, &context));
            let reasoning = options
                .reasoning
                .map_or(JsValue::UNDEFINED, |r| JsValue::from_str(r.as_str()));
            let api_key = options
                .api_key
                .as_deref()
                .map_or(JsValue::UNDEFINED, JsValue::from_str);
            let glue = self.table.glue();
            let opts = glue
                .stream_options(&self.config, &model_js, &reasoning, &api_key, &self.signal)
                .map_err(thrown)?;
            let opened = glue
                .open_response(&self.func, &model_js, ctx.as_ref(), &opts, &self.emit)
                .map_err(thrown)?;
            let reader = settle(opened).await?.unchecked_into();
            Ok(Box::new(JsResponse {
                reader,
                table: self.table.clone(),
                partial_js: None,
                final_js: None,
            }) as Box<dyn AssistantStream + 'a>)
        })
    }
}

impl AssistantStream for JsResponse {
    fn next(&mut self) -> HostFuture<'_, Option<AssistantMessageEvent>> {
        Box::pin(async move {
            let step = settle(self.reader.next().map_err(thrown)?).await?;
            if let Some(code) = step.as_f64() {
                // 0: the stream finished; 2: a terminal event (the final message comes from
                // result(), L-84, so its content does not matter here).
                if code == 0.0 {
                    return Ok(None);
                }
                let unread: AgentMessage = Rc::new(Value::Null);
                return Ok(Some(AssistantMessageEvent::Done {
                    reason: StopReason::Stop,
                    message: unread,
                }));
            }
            // The partial is not read by the core: keep the JS object, convert nothing.
            self.partial_js = Some(step);
            let partial: Partial = Rc::new(std::cell::RefCell::new(Value::Null));
            Ok(Some(AssistantMessageEvent::Start { partial }))
        })
    }

    fn result(&mut self) -> HostFuture<'_, Option<AgentMessage>> {
        Box::pin(async move {
            let r = settle(self.reader.result().map_err(thrown)?).await?;
            if r.is_undefined() {
                return Ok(None);
            }
            let what = "the stream's result";
            // Its members that are no JSON primitive (`content`, `usage`) stay the stream's
            // objects (one owner per value), read as JSON only in a checkpointed run; the
            // provider's live partial often is the final message, so `content` is read now.
            let keep = !self.table.json_results() && r.is_object() && !super::js::is_array(&r);
            let read = |v: &JsValue| {
                if !keep {
                    return self.table.snapshot(v, what).ok();
                }
                let m = self.table.split(v, what).ok()?;
                let content = m.get_raw("content").and_then(Value::host_error);
                content.is_none().then_some(m)
            };
            // Content blocks JSON cannot hold (a BigInt, a cycle, a throwing getter) are read
            // from the glue's marked copy: a tool call among them gets an error result, as
            // pi's validation gives one, instead of failing the run. Listeners still get the
            // stream's own objects.
            let m = match read(&r) {
                Some(m) => m,
                None => match self.table.glue().json_arguments(&r).map_err(thrown)? {
                    marked if marked.is_object() => read(&marked),
                    _ => None,
                }
                .ok_or_else(|| match self.table.snapshot(&r, what) {
                    // An `invalid_input` error naming it, with what reading it threw.
                    Err(e) => super::error::rejected_unreadable(e),
                    Ok(_) => Thrown::new(what),
                })?,
            };
            // Only a message object is copied with its `thinkingLevel` (a result that is
            // none is replaced by an error message the core makes).
            if m.is_object() {
                self.final_js = Some(r);
            }
            Ok(Some(m))
        })
    }

    /// The glue's `next` gave `{ ...partial }` already (a getter that throws there rejects
    /// the run, as pi's spread does).
    fn start_snapshot(&mut self, _partial: &Partial) -> AgentMessage {
        match &self.partial_js {
            Some(js) => self.table.opaque(js.clone()),
            None => Rc::new(Value::Null),
        }
    }

    fn with_thinking_level(&mut self, mut message: AgentMessage, level: &str) -> AgentMessage {
        if let Value::Object(o) = Rc::make_mut(&mut message) {
            o.put("thinkingLevel", level.into());
        }
        if let Some(js) = self.final_js.take() {
            let key = super::js::key("thinkingLevel");
            let level = JsValue::from_str(level);
            if let Ok(copy) = self.table.glue().copy_with(&js, &key, &level) {
                self.table.register_pair(message.clone(), copy);
            }
        }
        message
    }
}
