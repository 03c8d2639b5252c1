//! Transcript preparation shared by the providers (pi-ai `transformMessages` and
//! `collapseSystemMessages`): what a request may replay of a transcript written by any
//! model.
//! - Thinking from another model (provider, api and model differ) is dropped; from the same
//!   model, empty unsigned thinking is dropped.
//! - Errored and aborted assistant messages are skipped: incomplete turns are not replayed.
//! - A tool call left without a result gets a synthetic error result ("No result provided")
//!   before the next assistant or user message; a system message between a call and its
//!   results is held back until after them.
//! - Images go to models without image input as a short note in their place.
//! - Tool-call ids from other models may be rewritten by the API's rule (and their results
//!   follow).
//!
//! Pure; works on the transcript's JSON messages.

use crate::json::Put;
use crate::text::Joined;

use crate::json::{Map, Value};

use crate::message::transcript::get_current_system_message;
use crate::message::{is_role, str_field, text_block};

const NON_VISION_USER_IMAGE: &str = "(image omitted: model does not support images)";
const NON_VISION_TOOL_IMAGE: &str = "(tool image omitted: model does not support images)";

/// Images replaced by the text `note`, a run of consecutive images by one note.
pub fn replace_images(content: &[Value], note: &str) -> Vec<Value> {
    let mut out = Vec::with_capacity(content.len());
    let mut previous_was_note = false;
    for block in content {
        if str_field(block, "type") == "image" {
            if !previous_was_note {
                out.push(text_block(note));
            }
            previous_was_note = true;
            continue;
        }
        previous_was_note = block.get("text").and_then(Value::as_str) == Some(note);
        out.push(block.clone());
    }
    out
}

fn with(message: &Value, key: &str, value: Value) -> Value {
    let mut o = message.as_object().cloned().unwrap_or_default();
    o.insert(key.into(), value);
    Value::Object(o)
}

/// pi-ai `transformMessages` for `model`; `normalize_id(id, source)` rewrites a tool-call id
/// of `source`, an assistant message of another model (identity when it returns the id
/// unchanged); `now` stamps synthetic results.
pub fn transform_messages(
    messages: &[Value],
    model: &Value,
    normalize_id: &dyn Fn(&str, &Value) -> String,
    now: f64,
) -> Vec<Value> {
    let vision = model
        .get("input")
        .and_then(Value::as_array)
        .is_some_and(|i| i.iter().any(|x| x == "image"));
    let (provider, api, id) = (
        str_field(model, "provider"),
        str_field(model, "api"),
        str_field(model, "id"),
    );
    // Ids renamed for the target: old id -> new id (a string value).
    let mut id_map = Map::new();
    let transformed: Vec<Value> = messages
        .iter()
        .map(|m| {
            // Untyped callers may leave content out.
            let m = if m.get("content").is_none_or(Value::is_null) {
                with(m, "content", crate::value!([]))
            } else {
                m.clone()
            };
            let content = m.get("content").and_then(Value::as_array).cloned();
            match (m.get("role").and_then(Value::as_str), content) {
                (Some("user"), Some(c)) if !vision => with(
                    &m,
                    "content",
                    Value::Array(replace_images(&c, NON_VISION_USER_IMAGE)),
                ),
                (Some("toolResult"), Some(c)) => {
                    let m = if vision {
                        m
                    } else {
                        with(
                            &m,
                            "content",
                            Value::Array(replace_images(&c, NON_VISION_TOOL_IMAGE)),
                        )
                    };
                    match id_map.get(str_field(&m, "toolCallId")) {
                        Some(new_id) => with(&m, "toolCallId", new_id.clone()),
                        None => m,
                    }
                }
                (Some("assistant"), Some(c)) => {
                    let same_model = str_field(&m, "provider") == provider
                        && str_field(&m, "api") == api
                        && str_field(&m, "model") == id;
                    let mut blocks = Vec::with_capacity(c.len());
                    for b in c {
                        match str_field(&b, "type") {
                            "thinking" => {
                                let signed = b.get("redacted") == Some(&Value::Bool(true))
                                    || b.get("thinkingSignature")
                                        .and_then(Value::as_str)
                                        .is_some_and(|s| !s.is_empty());
                                let empty = str_field(&b, "thinking").trim().is_empty();
                                if same_model && (signed || !empty) {
                                    blocks.push(b);
                                }
                            }
                            "text" if !same_model => blocks.push(text_block(str_field(&b, "text"))),
                            "toolCall" if !same_model => {
                                let mut call = b.as_object().cloned().unwrap_or_default();
                                call.shift_remove("thoughtSignature");
                                let old = str_field(&b, "id").to_string();
                                let new_id = normalize_id(&old, &m);
                                if new_id != old {
                                    call.put("id", new_id.as_str().into());
                                    id_map.insert(old, Value::String(new_id));
                                }
                                blocks.push(Value::Object(call));
                            }
                            _ => blocks.push(b),
                        }
                    }
                    with(&m, "content", Value::Array(blocks))
                }
                _ => m,
            }
        })
        .collect();

    // Second pass: skip failed turns; close tool calls left without results.
    let mut out = Vec::with_capacity(transformed.len());
    let mut pending: Vec<Value> = Vec::new();
    // The ids of the tool results seen (keys; the values are unused).
    let mut answered = Map::new();
    let mut held: Vec<Value> = Vec::new();
    let close = |out: &mut Vec<Value>,
                 pending: &mut Vec<Value>,
                 answered: &mut Map,
                 held: &mut Vec<Value>| {
        for call in pending.drain(..) {
            let call_id = str_field(&call, "id");
            if !answered.contains_key(call_id) {
                let mut r = Map::new();
                r.put("role", "toolResult".into());
                r.put("toolCallId", call_id.into());
                r.put("toolName", str_field(&call, "name").into());
                r.insert(
                    "content".into(),
                    crate::value!([text_block("No result provided")]),
                );
                r.put("isError", true.into());
                r.put("timestamp", crate::message::num(now));
                out.push(Value::Object(r));
            }
        }
        answered.clear();
        out.append(held);
    };
    for m in transformed {
        match m.get("role").and_then(Value::as_str) {
            Some("assistant") => {
                close(&mut out, &mut pending, &mut answered, &mut held);
                if matches!(
                    m.get("stopReason").and_then(Value::as_str),
                    Some("error" | "aborted")
                ) {
                    continue;
                }
                let calls: Vec<Value> = m
                    .get("content")
                    .and_then(Value::as_array)
                    .map(|c| {
                        c.iter()
                            .filter(|b| str_field(b, "type") == "toolCall")
                            .cloned()
                            .collect()
                    })
                    .unwrap_or_default();
                if !calls.is_empty() {
                    pending = calls;
                    answered.clear();
                }
                out.push(m);
            }
            Some("toolResult") => {
                answered.insert(str_field(&m, "toolCallId").to_string(), Value::Null);
                out.push(m);
            }
            Some("system") if !pending.is_empty() => held.push(m),
            Some("user") => {
                close(&mut out, &mut pending, &mut answered, &mut held);
                out.push(m);
            }
            _ => out.push(m),
        }
    }
    close(&mut out, &mut pending, &mut answered, &mut held);
    out
}

/// pi-ai `collapseSystemMessages`: for APIs without mid-conversation system messages, the
/// replayed system message leads and every other system message is dropped.
pub fn collapse_system_messages(messages: &[Value]) -> Vec<Value> {
    let head = get_current_system_message(messages.iter());
    head.into_iter()
        .chain(messages.iter().filter(|m| !is_role(m, "system")).cloned())
        .collect()
}

/// pi-ai `renderSystemMessageUpdate`: a later system message as the APIs that take system
/// messages mid-conversation receive it, its text and then its section changes by name.
pub fn render_system_update(m: &Value) -> String {
    let mut parts = Vec::new();
    let text = crate::message::content_text(m.get("content"), "");
    if !text.is_empty() {
        parts.push(text);
    }
    if let Some(Value::Object(sections)) = m.get("sections") {
        for (name, value) in sections {
            parts.push(match value.as_str() {
                None => format!("Removed system prompt section \"{name}\"."),
                Some(v) => format!("Updated system prompt section \"{name}\":\n\n{v}"),
            });
        }
    }
    parts.joined("\n\n")
}
