//! The event sink: builds pi's event objects in the glue (`emitEvent`, one crossing per
//! event; the `message_update`s of a Rust stream through the mirror, one crossing per
//! network chunk) and awaits the caller's `emit` only when it returns a thenable.

use std::rc::Rc;

use js_sys::Function;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::js::{pending, settle};
use super::mirror::{
    initial_block, meta_differs, meta_of, pristine, record, take_batch, Field, UpdateCell,
    UpdateState,
};
use super::table::Table;
use crate::error::Thrown;
use crate::event::AgentEvent;
use crate::io::{Emitter, EventSink, HostFuture};

/// Delivers events to the caller's `emit(event)`, building pi's event objects.
pub struct JsSink {
    pub emit: Function,
    pub table: Rc<Table>,
    /// Glue `updater(emit)`'s function `(partial, batchJson)`: applies a network chunk's
    /// records to the JS copy of a Rust stream's partial, emitting each update's
    /// `message_update` event: one crossing per chunk.
    pub apply_update: Function,
    pub updates: UpdateCell,
    /// The glue's checkpoint function (`config.onCheckpoint`, an `Agent`'s), or undefined.
    pub checkpoint: JsValue,
}

/// Calls the sink `emit` with pi's event object for `event` (not a `message_update`, which
/// goes through the update path); returns what `emit` returned.
fn deliver(t: &Table, emit: &Function, event: &AgentEvent) -> Result<JsValue, Thrown> {
    use super::js::js_str;
    let u = JsValue::UNDEFINED;
    let glue = t.glue();
    let kind = event.index() as u32;
    let call = |a: &JsValue, b: &JsValue, c: &JsValue, d: &JsValue, e: &JsValue| {
        glue.emit_event(emit, kind, a, b, c, d, e)
            .map_err(super::js::thrown)
    };
    match event {
        AgentEvent::AgentStart | AgentEvent::TurnStart | AgentEvent::MessageUpdate { .. } => {
            call(&u, &u, &u, &u, &u)
        }
        AgentEvent::MessageStart { message } | AgentEvent::MessageEnd { message } => {
            let js = t.to_js(message);
            // The response's tool calls, as the run's events and hooks show them (loop.js
            // `callBlocks`): the blocks of the very message listeners get, as pi's.
            if matches!(event, AgentEvent::MessageEnd { .. }) {
                glue.call_blocks(&js);
            }
            call(&js, &u, &u, &u, &u)
        }
        // pi's `args` is the call's own `arguments`: converted here only when the response
        // kept no block for the call (loop.js `callArguments`).
        AgentEvent::ToolExecutionStart {
            tool_call_id,
            tool_name,
            args,
        }
        | AgentEvent::ToolExecutionUpdate {
            tool_call_id,
            tool_name,
            args,
            ..
        } => {
            let id = js_str(tool_call_id);
            let own = glue.call_arguments(&id);
            let args = if own.is_undefined() {
                t.to_js(args)
            } else {
                own
            };
            let partial = match event {
                AgentEvent::ToolExecutionUpdate { partial_result, .. } => t.to_js(partial_result),
                _ => u.clone(),
            };
            call(&id, &js_str(tool_name), &args, &partial, &u)
        }
        AgentEvent::ToolExecutionEnd {
            tool_call_id,
            tool_name,
            result,
            is_error,
            duration_ms,
        } => call(
            &js_str(tool_call_id),
            &js_str(tool_name),
            &t.to_js(result),
            &JsValue::from_bool(*is_error),
            &duration_ms.map(JsValue::from_f64).unwrap_or(u.clone()),
        ),
        AgentEvent::TurnEnd {
            message,
            tool_results,
        } => call(&t.to_js(message), &t.array(tool_results).into(), &u, &u, &u),
        AgentEvent::AgentEnd { messages } => call(&t.array(messages).into(), &u, &u, &u, &u),
    }
}

impl JsSink {
    /// Records a `message_update` of a Rust stream for the next [`deliver_batch`]
    /// (Self::deliver_batch), O(delta): the JS copy of the partial is made once per response
    /// and then edited with what the event changed.
    pub fn record(&self, event: &crate::event::AssistantMessageEvent) {
        use crate::event::AssistantMessageEvent as E;
        let Some(partial) = event.partial() else {
            return;
        };
        let p = partial.borrow();
        let mut state = self.updates.borrow_mut();
        if !matches!(&*state, Some(s) if Rc::ptr_eq(&s.source, partial)) {
            // A response seen for the first time: its copy starts as the partial of `start`
            // (no blocks yet), and this event is applied to it like any other. The live
            // partial itself may be ahead of this event (a chunk's events are queued after
            // the chunk was decoded), so it is never copied whole.
            *state = Some(UpdateState {
                source: partial.clone(),
                partial: super::js::from_json(&pristine(&p)),
                meta: meta_of(&p),
                head: None,
                revision: crate::provider::top_level_revision(),
                batch: Vec::new(),
                cut: false,
            });
        }
        let Some(s) = state.as_mut() else {
            return;
        };
        // Top-level fields are compared only after some were set.
        let revision = crate::provider::top_level_revision();
        let mut meta = None;
        if s.revision != revision {
            s.revision = revision;
            if meta_differs(&s.meta, &p) {
                s.meta = meta_of(&p);
                meta = Some(crate::json::json_for_js(&crate::json::Value::Object(
                    s.meta.clone(),
                )));
            }
        }
        use super::glue::kind::*;
        let (kind, index, delta) = match event {
            E::TextStart { content_index, .. } => (TEXT_START, *content_index, None),
            E::TextDelta {
                content_index,
                delta,
                ..
            } => (TEXT_DELTA, *content_index, Some(delta.as_str())),
            E::TextEnd { content_index, .. } => (TEXT_END, *content_index, None),
            E::ThinkingStart { content_index, .. } => (THINKING_START, *content_index, None),
            E::ThinkingDelta {
                content_index,
                delta,
                ..
            } => (THINKING_DELTA, *content_index, Some(delta.as_str())),
            E::ThinkingEnd { content_index, .. } => (THINKING_END, *content_index, None),
            // (A start's "delta" is the argument text the call opened with.)
            E::ToolcallStart {
                content_index,
                text,
                ..
            } => (TOOLCALL_START, *content_index, text.as_deref()),
            E::ToolcallDelta {
                content_index,
                delta,
                ..
            } => (TOOLCALL_DELTA, *content_index, Some(delta.as_str())),
            E::ToolcallEnd { content_index, .. } => (TOOLCALL_END, *content_index, None),
            _ => return,
        };
        #[cfg(feature = "test-trap")]
        super::test_trap::check(delta.unwrap_or_default());
        // Text and thinking deltas need only their delta: the block is not looked up.
        let block = match kind {
            TEXT_DELTA | THINKING_DELTA => None,
            _ => p.get("content").and_then(|c| c.get(index)),
        };
        // Starts and ends carry the whole block (empty at a start, sent once at an end).
        let block_json = match kind {
            TEXT_START | THINKING_START | TOOLCALL_START => {
                block.map(|b| crate::json::json_for_js(&initial_block(b)))
            }
            TEXT_END | THINKING_END | TOOLCALL_END => block.map(crate::json::json_for_js),
            _ => None,
        };
        // A tool call's delta: its id and name when they changed (rarely), and its arguments
        // whole when the delta is no continuation of their JSON text (the glue parses it).
        let mut head = None;
        let mut replaced = None;
        if let E::ToolcallDelta {
            replaced: whole, ..
        } = event
        {
            let id = block
                .and_then(|b| b.get("id"))
                .and_then(|v| v.as_str())
                .unwrap_or("");
            let name = block
                .and_then(|b| b.get("name"))
                .and_then(|v| v.as_str())
                .unwrap_or("");
            let same = matches!(&s.head, Some((i, a, b)) if *i == index && a == id && b == name);
            if !same {
                s.head = Some((index, id.to_string(), name.to_string()));
                let mut text = b"{\"id\":".to_vec();
                crate::json::write_str(&mut text, id);
                text.extend_from_slice(b",\"name\":");
                crate::json::write_str(&mut text, name);
                text.push(b'}');
                head = String::from_utf8(text).ok();
            }
            replaced = whole.as_ref().map(crate::json::json_for_js);
        }
        let fields = [
            delta.map(Field::Str),
            block_json.as_deref().map(Field::Json),
            head.as_deref().map(Field::Json),
            replaced.as_deref().map(Field::Json),
            meta.as_deref().map(Field::Json),
        ];
        record(&mut s.batch, kind, index, fields);
    }

    /// Hands the recorded updates to the glue in one call, which applies each to the JS
    /// copy and emits its event, awaiting what `emit` returns before the next. Returns
    /// `undefined` when nothing had to be awaited, else a Promise of the rest.
    pub fn deliver_batch(&self) -> Result<JsValue, Thrown> {
        let (partial, batch) = {
            let mut state = self.updates.borrow_mut();
            let Some(s) = state.as_mut() else {
                return Ok(JsValue::UNDEFINED);
            };
            let Some(batch) = take_batch(&mut s.batch) else {
                return Ok(JsValue::UNDEFINED);
            };
            (s.partial.clone(), batch)
        };
        // No borrow is held while the sink runs: it is the caller's code, and may re-enter.
        self.apply_update
            .call2(&JsValue::UNDEFINED, &partial, &JsValue::from_str(&batch))
            .map_err(super::js::thrown)
    }
}

impl EventSink for JsSink {
    fn emit(&self, event: AgentEvent) -> HostFuture<'_, ()> {
        // (The loop sends updates through `update`, and flushes them before other events.)
        let returned = deliver(&self.table, &self.emit, &event);
        Box::pin(async move {
            settle(returned?).await?;
            Ok::<(), Thrown>(())
        })
    }

    fn update(
        &self,
        event: crate::event::AssistantMessageEvent,
        flush: bool,
    ) -> HostFuture<'_, ()> {
        self.record(&event);
        if flush {
            return self.flush();
        }
        Box::pin(async { Ok(()) })
    }

    fn flush(&self) -> HostFuture<'_, ()> {
        let returned = self.deliver_batch();
        Box::pin(async move {
            // `true`: the glue stopped at an abort (the rest of the batch is dropped).
            if settle(returned?).await?.is_truthy() {
                if let Some(s) = self.updates.borrow_mut().as_mut() {
                    s.cut = true;
                }
            }
            Ok(())
        })
    }

    fn checkpoint(&self) -> HostFuture<'_, ()> {
        let Some(f) = self.checkpoint.dyn_ref::<Function>() else {
            return Box::pin(async { Ok(()) });
        };
        let returned = super::js::call(f, &[]);
        Box::pin(async move {
            settle(returned?).await?;
            Ok(())
        })
    }

    fn emitter(&self) -> Emitter {
        let emit = self.emit.clone();
        let table = Rc::downgrade(&self.table);
        Rc::new(move |event| match table.upgrade() {
            Some(table) => pending(deliver(&table, &emit, &event)?),
            // The run is over: nothing is listening.
            None => Ok(Box::pin(async { Ok(()) })),
        })
    }
}
