//! The JS copy of a Rust stream's partial message, which each `message_update` shows: made
//! once per response (seeded at `start`) and then edited with what each event changed, so a
//! delta costs O(delta). The edits of one network chunk are records in one JSON batch,
//! which the glue applies (emitting each update's event) in one crossing. The built-in
//! stream brings the copy up to the final message at the end, with records that emit
//! nothing.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;

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
        batch: Vec::new(),
        cut: false,
    });
}

use super::glue::kind::{ASSIGN_BLOCK, END_READ, SET_META};

/// Marks the end of the response as read. An abort from the sink before the glue reaches
/// this record still cuts there (as pi's check after its read loop sees it); after it, the
/// closing updates the end produced come and the response stands.
pub fn end_read(cell: &UpdateCell) {
    if let Some(state) = cell.borrow_mut().as_mut() {
        record(
            &mut state.batch,
            END_READ,
            0,
            [None, None, None, None, None],
        );
    }
}

/// Whether the glue stopped delivering this response's updates at an abort (the sink's
/// answer to a batch was `true`): the response ends as its JS copy shows it.
pub fn was_cut(cell: &UpdateCell) -> Option<JsValue> {
    match cell.borrow().as_ref() {
        Some(s) if s.cut => Some(s.partial.clone()),
        _ => None,
    }
}

/// The JS copy of the response being rendered.
pub fn copy(cell: &UpdateCell) -> Option<JsValue> {
    cell.borrow().as_ref().map(|s| s.partial.clone())
}

/// Brings the top-level fields of the JS copy up to `message` (the final message): a record
/// for the glue's `assignMeta`, the one place that knows how each API's partial changes
/// (Anthropic's usage in place, the others replaced).
pub fn sync_meta(cell: &UpdateCell, message: &crate::json::Value) {
    if let Some(state) = cell.borrow_mut().as_mut() {
        if meta_differs(&state.meta, message) {
            state.meta = meta_of(message);
            let json = crate::json::json_for_js(&crate::json::Value::Object(state.meta.clone()));
            let fields = [None, None, None, None, Some(Field::Json(&json))];
            record(&mut state.batch, SET_META, 0, fields);
        }
    }
}

/// Brings blocks `indices` of the JS copy up to `message`: blocks the decoder changed after
/// their last event (a signature completed by the final response). Assigned in place, so
/// references to the block see the change as they would in pi.
pub fn sync_blocks(cell: &UpdateCell, message: &crate::json::Value, indices: &[usize]) {
    let mut state = cell.borrow_mut();
    let Some(state) = state.as_mut() else {
        return;
    };
    for &i in indices {
        let Some(block) = message.get("content").and_then(|c| c.get(i)) else {
            continue;
        };
        let json = crate::json::json_for_js(block);
        let fields = [None, Some(Field::Json(&json)), None, None, None];
        record(&mut state.batch, ASSIGN_BLOCK, i, fields);
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
    /// The records not delivered yet, comma-separated JSON arrays.
    pub(super) batch: Vec<u8>,
    /// The glue dropped the rest of a batch at an abort ([`was_cut`]).
    pub(super) cut: bool,
}

/// A field of a record: a string (JSON-escaped here) or JSON text.
pub(super) enum Field<'a> {
    Str(&'a str),
    Json(&'a str),
}

/// Appends the record `[kind, index, delta, block, head, replaced, meta]` to `batch`, with
/// `null` for an absent field and the absent ones at the end left off.
pub(super) fn record(batch: &mut Vec<u8>, kind: usize, index: usize, fields: [Option<Field>; 5]) {
    if !batch.is_empty() {
        batch.push(b',');
    }
    batch.push(b'[');
    push_digits(batch, kind);
    batch.push(b',');
    push_digits(batch, index);
    let used = fields
        .iter()
        .rposition(Option::is_some)
        .map_or(0, |i| i + 1);
    for field in fields.iter().take(used) {
        batch.push(b',');
        match field {
            None => batch.extend_from_slice(b"null"),
            Some(Field::Str(s)) => crate::json::write_str(batch, s),
            Some(Field::Json(j)) => batch.extend_from_slice(j.as_bytes()),
        }
    }
    batch.push(b']');
}

/// Appends the decimal digits of `n`.
fn push_digits(out: &mut Vec<u8>, n: usize) {
    if n >= 10 {
        push_digits(out, n / 10);
    }
    out.push(b'0' + (n % 10) as u8);
}

/// The records of `batch` as one JSON array (lone surrogates written as `JSON.stringify`
/// writes them), leaving `batch` empty; `None` when there are none.
pub(super) fn take_batch(batch: &mut Vec<u8>) -> Option<String> {
    if batch.is_empty() {
        return None;
    }
    let mut text = Vec::with_capacity(batch.len() + 2);
    text.push(b'[');
    text.append(batch);
    text.push(b']');
    String::from_utf8(text).ok().map(crate::json::escape_lone)
}

pub(super) type Meta = crate::json::Map;

/// The partial's fields other than `content` (usage, ids, stop reason): a few hundred bytes,
/// whatever the length of the content.
pub(super) fn meta_of(partial: &crate::json::Value) -> Meta {
    match partial {
        crate::json::Value::Object(o) => o
            .iter()
            .filter(|(k, _)| k.as_str() != "content")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        _ => Meta::new(),
    }
}

/// Value equality that compares objects entry by entry in order: `Map`'s own equality looks
/// every key up (hashing), and this runs for every delta. A reordering counts as different.
pub(super) fn same(a: &crate::json::Value, b: &crate::json::Value) -> bool {
    use crate::json::Value;
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
pub(super) fn meta_differs(meta: &Meta, partial: &crate::json::Value) -> bool {
    let crate::json::Value::Object(o) = partial else {
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
pub(super) fn pristine(partial: &crate::json::Value) -> crate::json::Value {
    let mut copy = crate::json::Map::new();
    if let crate::json::Value::Object(o) = partial {
        for (k, v) in o {
            let v = if k == "content" {
                crate::json::Value::Array(Vec::new())
            } else {
                v.clone()
            };
            copy.insert(k.clone(), v);
        }
    }
    crate::json::Value::Object(copy)
}

/// A block as its `*_start` event made it: the growing field empty (the live block may
/// already hold the deltas that follow).
pub(super) fn initial_block(block: &crate::json::Value) -> crate::json::Value {
    let mut b = block.clone();
    if let crate::json::Value::Object(o) = &mut b {
        for (key, empty) in [
            ("text", crate::json::Value::from("")),
            ("thinking", crate::json::Value::from("")),
            ("arguments", crate::json::Value::Object(Default::default())),
        ] {
            if o.contains_key(key) {
                o.insert(key.into(), empty);
            }
        }
    }
    b
}
