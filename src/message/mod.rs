//! The pi-ai data model (spec §1) as the loop sees it.
//!
//! Messages travel through the loop as shared JSON objects ([`AgentMessage`] = `Rc<Value>`),
//! exactly as JS sees them: custom messages and unknown keys pass through untouched (L-01),
//! key order is kept (crate::json's map, and its writer orders keys as JS does, so serialized
//! output matches `JSON.stringify` of pi's objects), and cloning a message into an event or a second list
//! costs a reference count, not a copy. The loop reads the few fields it needs through the
//! accessors here and builds its own messages (tool results, tool declarations) with the
//! constructors here, in pi's key order.
//!
//! Typed forms (`types.rs`: messages, content blocks, [`Usage`], [`StopReason`],
//! [`ThinkingLevel`]) serve the providers and tests. Depends only on crate::json (and serde,
//! natively, for the tests' typed forms).

use crate::json::Put;
use crate::text::Joined;
use std::rc::Rc;

use crate::json::{Map, Value};

pub mod transcript;
mod types;
pub use types::*;

/// A message of any role (L-01): system, user, assistant, toolResult or an app-defined one.
pub type AgentMessage = Rc<Value>;

/// A JSON object, in insertion order.
pub type Object = Map;

// ---------------------------------------------------------------------------------------
// Accessors: the fields the loop reads, with JS truthiness where pi relies on it.

/// `message.role` when it is a string.
pub fn role(m: &Value) -> Option<&str> {
    m.get("role").and_then(Value::as_str)
}

pub fn is_role(m: &Value, r: &str) -> bool {
    role(m) == Some(r)
}

/// `message.stopReason` of an assistant message, as a string.
pub fn stop_reason(m: &Value) -> Option<&str> {
    m.get("stopReason").and_then(Value::as_str)
}

/// The `toolCall` blocks of an assistant message's `content`, in content order (L-49).
pub fn tool_calls(m: &Value) -> Vec<Value> {
    m.get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("toolCall"))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// [`tool_calls`] where pi's `message.content.filter((c) => c.type === "toolCall")` (L-49)
/// would not throw; else what it throws, in V8's words: content that is no array, or a
/// `null` block.
pub fn checked_tool_calls(m: &Value) -> Result<Vec<Value>, &'static str> {
    match m.get("content") {
        Some(Value::Array(blocks)) if blocks.iter().any(Value::is_null) => {
            Err("Cannot read properties of null (reading 'type')")
        }
        Some(Value::Array(_)) => Ok(tool_calls(m)),
        None => Err("Cannot read properties of undefined (reading 'filter')"),
        Some(Value::Null) => Err("Cannot read properties of null (reading 'filter')"),
        Some(_) => Err("message.content.filter is not a function"),
    }
}

/// A string field, or `""` (tool call `id`/`name` as template literals would print them
/// for a well-formed call).
pub fn str_field<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// JS truthiness of a JSON value (`undefined` is modelled as a missing key).
pub fn truthy(v: Option<&Value>) -> bool {
    v.is_some_and(crate::json::is_truthy)
}

/// `x ?? fallback` for JSON: `null` and missing both fall back.
pub fn present(v: Option<&Value>) -> Option<&Value> {
    v.filter(|v| !v.is_null())
}

/// Text of a `string | TextContent[]` content: the string itself, or the text blocks
/// joined with `separator` (pi-ai `contentText`).
pub fn content_text(content: Option<&Value>, separator: &str) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => {
            let texts: Vec<&str> = blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .map(|b| str_field(b, "text"))
                .collect();
            texts.joined(separator)
        }
        _ => String::new(),
    }
}

// ---------------------------------------------------------------------------------------
// Constructors, in pi's key order.

/// `{ type: "text", text }`.
pub fn text_block(text: &str) -> Value {
    let mut o = Object::new();
    o.put("type", "text".into());
    o.put("text", text.into());
    Value::Object(o)
}

/// L-116: `{ content: [{ type: "text", text }], details: {} }`.
pub fn error_tool_result(text: &str) -> Value {
    let mut o = Object::new();
    o.put("content", Value::Array(vec![text_block(text)]));
    o.put("details", Value::Object(Object::new()));
    Value::Object(o)
}

/// An all-zero [`Usage`] (L-157).
pub fn zero_usage() -> Value {
    Usage::default().to_value()
}
