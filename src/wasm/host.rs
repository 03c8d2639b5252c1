//! The small host services for the core in JS: the clock (`Date.now`, `performance.now`),
//! the `AbortSignal`, `RegExp` for schema patterns, and the event sink that builds pi's
//! event objects and awaits the caller's `emit` only when it returns a thenable.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use js_sys::Function;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::js::{get, pending, settle};
use super::table::Table;
use crate::agent::validate::Patterns;
use crate::error::Thrown;
use crate::event::AgentEvent;
use crate::io::{AbortSignal, Clock, Emitter, EventSink, HostFuture};

#[wasm_bindgen]
extern "C" {
    /// `performance.now()`; through `catch`, as a host may lack or replace `performance`.
    #[wasm_bindgen(catch, js_namespace = performance, js_name = now)]
    fn performance_now() -> Result<f64, JsValue>;

    type JsRegExp;
    #[wasm_bindgen(constructor, catch, js_class = "RegExp")]
    fn new(pattern: &str, flags: &str) -> Result<JsRegExp, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn test(this: &JsRegExp, text: &str) -> Result<bool, JsValue>;
}

pub struct JsClock;

impl Clock for JsClock {
    fn now(&self) -> f64 {
        js_sys::Date::now()
    }
    fn monotonic(&self) -> f64 {
        performance_now().unwrap_or_else(|_| js_sys::Date::now())
    }
}

/// The caller's `AbortSignal` (or `undefined`).
#[derive(Clone)]
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
        compiled.and_then(|re| re.test(text).map_err(|e| super::js::error_text(&e)))
    }
}

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

/// The JS copy of the response being rendered, shared with the built-in stream, which seeds
/// it at `start` (so `message_start`'s message shares its `content`, as pi's `{...partial}`).
pub type UpdateCell = Rc<RefCell<Option<UpdateState>>>;

/// Makes `js` the JS copy that later updates of `partial` edit.
pub fn seed(cell: &UpdateCell, partial: &crate::event::Partial, js: JsValue) {
    let p = partial.borrow();
    *cell.borrow_mut() = Some(UpdateState {
        source: partial.clone(),
        partial: js,
        meta: meta_of(&p),
        head: None,
        revision: crate::provider::top_level_revision(),
        append: None,
    });
}

/// Brings the top-level fields of the JS copy up to `message` (the final message), through
/// the glue's `assignMeta(partial, metaJson)`, the one place that knows how each API's
/// partial changes (Anthropic's usage in place, the others replaced).
pub fn sync_meta(cell: &UpdateCell, message: &serde_json::Value, assign_meta: &Function) {
    if let Some(state) = cell.borrow_mut().as_mut() {
        if meta_differs(&state.meta, message) {
            state.meta = meta_of(message);
            let json = crate::json::stringify(&serde_json::Value::Object(state.meta.clone()));
            let _ = assign_meta.call2(
                &JsValue::UNDEFINED,
                &state.partial,
                &JsValue::from_str(&json),
            );
        }
    }
}

/// Brings blocks `indices` of the JS copy up to `message`: blocks the decoder changed after
/// their last event (a signature completed by the final response). Assigned in place, so
/// references to the block see the change as they would in pi.
pub fn sync_blocks(cell: &UpdateCell, message: &serde_json::Value, indices: &[usize]) {
    let Some(state) = cell.borrow().as_ref().map(|s| s.partial.clone()) else {
        return;
    };
    let content = super::js::get(&state, "content");
    for &i in indices {
        let Some(block) = message.get("content").and_then(|c| c.get(i)) else {
            continue;
        };
        let Ok(target) = js_sys::Reflect::get_u32(&content, i as u32) else {
            continue;
        };
        if target.is_object() {
            let fields = super::js::from_json(block);
            let _ = js_sys::Object::assign(
                target.unchecked_ref(),
                fields.unchecked_ref::<js_sys::Object>(),
            );
        }
    }
}

/// The JS copy of a partial as its `start` event shows it (no blocks yet).
pub fn start_copy(partial: &crate::event::Partial) -> JsValue {
    super::js::from_json(&pristine(&partial.borrow()))
}

/// The JS copy of the partial of the Rust stream being rendered.
pub struct UpdateState {
    /// The core's partial this copy follows (held, so its address is not reused by the
    /// next response's partial).
    source: crate::event::Partial,
    partial: JsValue,
    /// The partial's fields other than `content`, as last sent.
    meta: Meta,
    /// The tool call block and its id and name, as last sent.
    head: Option<(usize, String, String)>,
    /// `provider::top_level_revision()` when `meta` was last compared.
    revision: u64,
    /// The block and argument path the glue last appended at: a delta that appends its own
    /// text there again is sent as just the delta.
    append: Option<(usize, Vec<crate::stream::PathSeg>)>,
}

type Meta = serde_json::Map<String, serde_json::Value>;

/// The partial's fields other than `content` (usage, ids, stop reason): a few hundred bytes,
/// whatever the length of the content.
fn meta_of(partial: &serde_json::Value) -> Meta {
    match partial {
        serde_json::Value::Object(o) => o
            .iter()
            .filter(|(k, _)| k.as_str() != "content")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        _ => Meta::new(),
    }
}

/// Value equality that compares objects entry by entry in order: `Map`'s own equality looks
/// every key up (hashing), and this runs for every delta. A reordering counts as different.
fn same(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|((ka, va), (kb, vb))| ka == kb && same(va, vb))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| same(p, q))
        }
        _ => a == b,
    }
}

/// Whether the partial's fields other than `content` differ from `meta`: a comparison, no
/// allocation (this runs for every delta).
fn meta_differs(meta: &Meta, partial: &serde_json::Value) -> bool {
    let serde_json::Value::Object(o) = partial else {
        return !meta.is_empty();
    };
    // Both keep insertion order, so entries are compared pairwise without hashing; a
    // reordering counts as a change (it only costs a resend).
    let mut stored = meta.iter();
    for (k, v) in o.iter().filter(|(k, _)| k.as_str() != "content") {
        match stored.next() {
            Some((sk, sv)) if sk == k && same(sv, v) => {}
            _ => return true,
        }
    }
    stored.next().is_some()
}

/// The partial as a `start` event shows it: no content blocks yet.
fn pristine(partial: &serde_json::Value) -> serde_json::Value {
    let mut copy = serde_json::Map::new();
    if let serde_json::Value::Object(o) = partial {
        for (k, v) in o {
            let v = if k == "content" {
                serde_json::Value::Array(Vec::new())
            } else {
                v.clone()
            };
            copy.insert(k.clone(), v);
        }
    }
    serde_json::Value::Object(copy)
}

/// A block as its `*_start` event made it: the growing field empty (the live block may
/// already hold the deltas that follow).
fn initial_block(block: &serde_json::Value) -> serde_json::Value {
    let mut b = block.clone();
    if let serde_json::Value::Object(o) = &mut b {
        for (key, empty) in [
            ("text", serde_json::Value::from("")),
            ("thinking", serde_json::Value::from("")),
            ("arguments", serde_json::Value::Object(Default::default())),
        ] {
            if o.contains_key(key) {
                o.insert(key.into(), empty);
            }
        }
    }
    b
}

/// Edit records as JSON: `[path, 0, value]` sets, `[path, 1, text]` appends.
fn changes_json(changes: &[crate::stream::Change]) -> String {
    use crate::stream::{Change, PathSeg};
    use serde_json::Value;
    let path = |p: &[PathSeg]| -> Value {
        Value::Array(
            p.iter()
                .map(|s| match s {
                    PathSeg::Key(k) => Value::String(k.clone()),
                    PathSeg::Index(i) => Value::from(*i as u64),
                })
                .collect(),
        )
    };
    let list: Vec<Value> = changes
        .iter()
        .map(|c| match c {
            Change::Set { path: p, value } => Value::Array(vec![path(p), 0.into(), value.clone()]),
            Change::Append { path: p, text } => {
                Value::Array(vec![path(p), 1.into(), text.as_str().into()])
            }
        })
        .collect();
    crate::json::stringify(&Value::Array(list))
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
