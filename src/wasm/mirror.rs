//! The JS copy of a Rust stream's partial message, which each `message_update` shows: made
//! once per response (seeded at `start`) and then edited with what each event changed, so a
//! delta costs O(delta). The built-in stream brings it up to the final message at the end.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::Function;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

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
    pub(super) source: crate::event::Partial,
    pub(super) partial: JsValue,
    /// The partial's fields other than `content`, as last sent.
    pub(super) meta: Meta,
    /// The tool call block and its id and name, as last sent.
    pub(super) head: Option<(usize, String, String)>,
    /// `provider::top_level_revision()` when `meta` was last compared.
    pub(super) revision: u64,
    /// The block and argument path the glue last appended at: a delta that appends its own
    /// text there again is sent as just the delta.
    pub(super) append: Option<(usize, Vec<crate::stream::PathSeg>)>,
}

pub(super) type Meta = serde_json::Map<String, serde_json::Value>;

/// The partial's fields other than `content` (usage, ids, stop reason): a few hundred bytes,
/// whatever the length of the content.
pub(super) fn meta_of(partial: &serde_json::Value) -> Meta {
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
pub(super) fn same(a: &serde_json::Value, b: &serde_json::Value) -> bool {
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
pub(super) fn meta_differs(meta: &Meta, partial: &serde_json::Value) -> bool {
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
pub(super) fn pristine(partial: &serde_json::Value) -> serde_json::Value {
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
pub(super) fn initial_block(block: &serde_json::Value) -> serde_json::Value {
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
pub(super) fn changes_json(changes: &[crate::stream::Change]) -> String {
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
