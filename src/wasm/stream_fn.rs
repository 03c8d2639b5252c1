//! A JS stream function (the user's, or pi-ai's `streamSimple`) as the core's `StreamFn`.
//! The glue (src/js/loop.js) reads the JS response: it emits each `message_update` itself
//! and hands wasm only the `start` partial and the final message.

use std::rc::Rc;

use js_sys::{Function, Object};
use serde_json::Value;
use wasm_bindgen::prelude::*;

use super::js::{call, call_method, from_json, set, settle};
use super::table::Table;
use crate::event::{AssistantMessageEvent, Partial};
use crate::io::{AssistantStream, HostFuture, LlmContext, StreamFn, StreamOptions};
use crate::message::{AgentMessage, StopReason};

pub struct JsStreamFn {
    pub func: Function,
    pub open: Function,
    pub options: Function,
    pub config: JsValue,
    pub emit: Function,
    pub signal: JsValue,
    pub table: Rc<Table>,
}

struct JsResponse {
    reader: JsValue,
    table: Rc<Table>,
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
            set(&ctx, "messages", &self.table.array(&context.messages));
            let reasoning = options
                .reasoning
                .map_or(JsValue::UNDEFINED, |r| JsValue::from_str(r.as_str()));
            let api_key = options
                .api_key
                .as_deref()
                .map_or(JsValue::UNDEFINED, JsValue::from_str);
            let opts = call(
                &self.options,
                &[
                    &self.config,
                    &model_js,
                    &reasoning,
                    &api_key,
                    &from_json(&options.identity),
                    &self.signal,
                ],
            )?;
            let opened = call(
                &self.open,
                &[
                    self.func.as_ref(),
                    &model_js,
                    ctx.as_ref(),
                    &opts,
                    self.emit.as_ref(),
                ],
            )?;
            let reader = settle(opened).await?;
            Ok(Box::new(JsResponse {
                reader,
                table: self.table.clone(),
            }) as Box<dyn AssistantStream + 'a>)
        })
    }
}

impl AssistantStream for JsResponse {
    fn next(&mut self) -> HostFuture<'_, Option<AssistantMessageEvent>> {
        Box::pin(async move {
            let step = settle(call_method(&self.reader, "next", &[])?).await?;
            if let Some(code) = step.as_f64() {
                // 0: the stream finished; 2: a terminal event (the final message comes from
                // result(), L-84, so its content does not matter here).
                if code == 0.0 {
                    return Ok(None);
                }
                let placeholder: AgentMessage = Rc::new(Value::Null);
                return Ok(Some(AssistantMessageEvent::Done {
                    reason: StopReason::Stop,
                    message: placeholder,
                }));
            }
            let partial = self
                .table
                .snapshot(&step, "a start event's partial")
                .map_err(crate::error::Thrown::new)?;
            let partial: Partial = Rc::new(std::cell::RefCell::new((*partial).clone()));
            Ok(Some(AssistantMessageEvent::Start { partial }))
        })
    }

    fn result(&mut self) -> HostFuture<'_, Option<AgentMessage>> {
        Box::pin(async move {
            let r = settle(call_method(&self.reader, "result", &[])?).await?;
            if r.is_undefined() {
                return Ok(None);
            }
            let m = self
                .table
                .snapshot(&r, "the stream's result")
                .map_err(crate::error::Thrown::new)?;
            Ok(Some(m))
        })
    }
}
