//! The event sink: builds pi's event objects in the glue (`emitEvent`, one crossing per
//! event; a `message_update` of a Rust stream through the mirror, one crossing per delta)
//! and awaits the caller's `emit` only when it returns a thenable.

use std::rc::Rc;

use js_sys::Function;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::js::{pending, settle};
use super::mirror::{
    changes_json, initial_block, meta_differs, meta_of, pristine, UpdateCell, UpdateState,
};
use super::table::Table;
use crate::error::Thrown;
use crate::event::AgentEvent;
use crate::io::{Emitter, EventSink, HostFuture};

/// Delivers events to the caller's `emit(event)`, building pi's event objects.
pub struct JsSink {
    pub emit: Function,
    /// The glue object, whose `emitEvent` builds and delivers events.
    pub glue: Glue,
    pub table: Rc<Table>,
    /// Glue `updater(emit)`'s function `(partial, type, index, delta, blockJson, headJson,
    /// changesJson, metaJson)`: applies one streamed change to the JS copy of a Rust stream's
    /// partial, builds the `message_update` event (an end's `content` is read from the block
    /// it carries) and returns `emit(event)`: one crossing per delta.
    pub apply_update: Function,
    pub updates: UpdateCell,
}

#[wasm_bindgen]
extern "C" {
    /// The glue object of src/js/loop.js.
    pub type Glue;

    /// `glue.emitEvent(emit, kind, a, b, c, d, e)`: builds pi's event object of kind
    /// `AGENT_EVENT_TYPES[kind]` from its fields in pi's key order and returns
    /// `emit(event)`: one crossing per event. A throw (the sink's) is `Err`.
    #[wasm_bindgen(method, catch, js_name = emitEvent)]
    #[allow(clippy::too_many_arguments)]
    fn emit_event(
        this: &Glue,
        emit: &Function,
        kind: u32,
        a: &JsValue,
        b: &JsValue,
        c: &JsValue,
        d: &JsValue,
        e: &JsValue,
    ) -> Result<JsValue, JsValue>;
}

/// Calls the sink `emit` with pi's event object for `event` (not a `message_update`, which
/// goes through the update path); returns what `emit` returned.
fn deliver(t: &Table, glue: &Glue, emit: &Function, event: &AgentEvent) -> Result<JsValue, Thrown> {
    use super::js::js_str;
    let u = JsValue::UNDEFINED;
    let kind = crate::event::AGENT_EVENT_TYPES
        .iter()
        .position(|k| *k == event.kind())
        .unwrap_or(0) as u32;
    let call = |a: &JsValue, b: &JsValue, c: &JsValue, d: &JsValue, e: &JsValue| {
        glue.emit_event(emit, kind, a, b, c, d, e)
            .map_err(super::js::thrown)
    };
    match event {
        AgentEvent::AgentStart | AgentEvent::TurnStart | AgentEvent::MessageUpdate { .. } => {
            call(&u, &u, &u, &u, &u)
        }
        AgentEvent::MessageStart { message } | AgentEvent::MessageEnd { message } => {
            call(&t.to_js(message), &u, &u, &u, &u)
        }
        AgentEvent::ToolExecutionStart {
            tool_call_id,
            tool_name,
            args,
        } => call(
            &js_str(tool_call_id),
            &js_str(tool_name),
            &t.to_js(args),
            &u,
            &u,
        ),
        AgentEvent::ToolExecutionUpdate {
            tool_call_id,
            tool_name,
            args,
            partial_result,
        } => call(
            &js_str(tool_call_id),
            &js_str(tool_name),
            &t.to_js(args),
            &t.to_js(partial_result),
            &u,
        ),
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
    /// Emits a `message_update` for a Rust stream, O(delta): the JS copy of the partial is
    /// made once per response and then edited with what the event changed. Returns what
    /// `emit` returned; `None` for an event without a partial.
    pub fn update(
        &self,
        event: &crate::event::AssistantMessageEvent,
    ) -> Option<Result<JsValue, Thrown>> {
        use crate::event::AssistantMessageEvent as E;
        let partial = event.partial()?;
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
                append: None,
            });
        }
        let s = state.as_mut()?;
        // Top-level fields are compared only after some were set.
        let revision = crate::provider::top_level_revision();
        let mut meta_arg = JsValue::UNDEFINED;
        if s.revision != revision {
            s.revision = revision;
            if meta_differs(&s.meta, &p) {
                s.meta = meta_of(&p);
                meta_arg = JsValue::from_str(&crate::json::stringify(&serde_json::Value::Object(
                    s.meta.clone(),
                )));
            }
        }
        let (index, delta) = match event {
            E::TextStart { content_index, .. }
            | E::ThinkingStart { content_index, .. }
            | E::ToolcallStart { content_index, .. }
            | E::TextEnd { content_index, .. }
            | E::ThinkingEnd { content_index, .. }
            | E::ToolcallEnd { content_index, .. } => (*content_index, None),
            E::TextDelta {
                content_index,
                delta,
                ..
            }
            | E::ThinkingDelta {
                content_index,
                delta,
                ..
            }
            | E::ToolcallDelta {
                content_index,
                delta,
                ..
            } => (*content_index, Some(delta.as_str())),
            _ => return None,
        };
        #[cfg(feature = "test-trap")]
        super::test_trap::check(delta.unwrap_or_default());
        // Text and thinking deltas need only their delta: the block is not looked up.
        let block = match event {
            E::TextDelta { .. } | E::ThinkingDelta { .. } => None,
            _ => p.get("content").and_then(|c| c.get(index)),
        };
        // Starts and ends carry the whole block (empty at a start, sent once at an end).
        let block_arg = match event {
            E::TextStart { .. } | E::ThinkingStart { .. } | E::ToolcallStart { .. } => block
                .map_or(JsValue::UNDEFINED, |b| {
                    JsValue::from_str(&crate::json::stringify(&initial_block(b)))
                }),
            E::TextEnd { .. } | E::ThinkingEnd { .. } | E::ToolcallEnd { .. } => block
                .map_or(JsValue::UNDEFINED, |b| {
                    JsValue::from_str(&crate::json::stringify(b))
                }),
            _ => JsValue::UNDEFINED,
        };
        // A tool call's delta: its id and name when they changed (rarely), and the edits to
        // its arguments (none for whitespace).
        let (head_arg, changes_arg) = match event {
            E::ToolcallDelta { changes, .. } => {
                let id = block
                    .and_then(|b| b.get("id"))
                    .and_then(|v| v.as_str())
                    .unwrap_or("");
                let name = block
                    .and_then(|b| b.get("name"))
                    .and_then(|v| v.as_str())
                    .unwrap_or("");
                let same =
                    matches!(&s.head, Some((i, a, b)) if *i == index && a == id && b == name);
                let head = if same {
                    JsValue::UNDEFINED
                } else {
                    s.head = Some((index, id.to_string(), name.to_string()));
                    JsValue::from_str(&crate::json::stringify(
                        &serde_json::json!({ "id": id, "name": name }),
                    ))
                };
                let repeat = match changes.as_slice() {
                    [crate::stream::Change::Append { path, text }] => {
                        Some(text.as_str()) == delta
                            && matches!(&s.append, Some((i, p)) if *i == index && p == path)
                    }
                    _ => false,
                };
                let edits = if changes.is_empty() {
                    JsValue::UNDEFINED
                } else if repeat {
                    // Appends the delta at the glue's last append path.
                    JsValue::TRUE
                } else {
                    if let Some(crate::stream::Change::Append { path, .. }) = changes.last() {
                        s.append = Some((index, path.clone()));
                    }
                    JsValue::from_str(&changes_json(changes))
                };
                (head, edits)
            }
            _ => (JsValue::UNDEFINED, JsValue::UNDEFINED),
        };
        let delta_arg = delta.map_or(JsValue::UNDEFINED, super::js::js_str);
        // No borrow is held while the sink runs: it is the caller's code, and may re-enter.
        let js_partial = s.partial.clone();
        drop(state);
        drop(p);
        let rendered = self.apply_update.call8(
            &JsValue::UNDEFINED,
            &js_partial,
            &super::js::key(event.kind()),
            &JsValue::from_f64(index as f64),
            &delta_arg,
            &block_arg,
            &head_arg,
            &changes_arg,
            &meta_arg,
        );
        Some(rendered.map_err(super::js::thrown))
    }
}

impl EventSink for JsSink {
    fn emit(&self, event: AgentEvent) -> HostFuture<'_, ()> {
        let update = match &event {
            AgentEvent::MessageUpdate { event } => self.update(event),
            _ => None,
        };
        let returned = match update {
            Some(returned) => returned,
            None => deliver(&self.table, &self.glue, &self.emit, &event),
        };
        Box::pin(async move {
            settle(returned?).await?;
            Ok::<(), Thrown>(())
        })
    }

    fn emitter(&self) -> Emitter {
        let emit = self.emit.clone();
        let glue: Glue = JsValue::clone(&self.glue).unchecked_into();
        let table = Rc::downgrade(&self.table);
        Rc::new(move |event| match table.upgrade() {
            Some(table) => pending(deliver(&table, &glue, &emit, &event)?),
            // The run is over: nothing is listening.
            None => Ok(Box::pin(async { Ok(()) })),
        })
    }
}
