//! The pi-ai data model (spec §1) as the loop sees it.
//!
//! Messages travel through the loop as shared JSON objects ([`AgentMessage`] = `Rc<Value>`),
//! exactly as JS sees them: custom messages and unknown keys pass through untouched (L-01),
//! key order is kept (serde_json `preserve_order`, so serialized output matches
//! `JSON.stringify` of pi's objects), and cloning a message into an event or a second list
//! costs a reference count, not a copy. The loop reads the few fields it needs through the
//! accessors here and builds its own messages (tool results, tool declarations) with the
//! constructors here, in pi's key order.
//!
//! Typed forms ([`Usage`], [`StopReason`], [`ThinkingLevel`], …) serve the providers and
//! tests. Depends only on serde and serde_json.

use std::rc::Rc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A message of any role (L-01): system, user, assistant, toolResult or an app-defined one.
pub type AgentMessage = Rc<Value>;

/// A JSON object, in insertion order.
pub type Object = Map<String, Value>;

/// L-05. Only `error`, `aborted` and `length` matter to the loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    Pending,
    Stop,
    Length,
    ToolUse,
    Error,
    Aborted,
    Deferred,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Pending => "pending",
            StopReason::Stop => "stop",
            StopReason::Length => "length",
            StopReason::ToolUse => "toolUse",
            StopReason::Error => "error",
            StopReason::Aborted => "aborted",
            StopReason::Deferred => "deferred",
        }
    }
}

/// L-10. The agent-side level; `Off` is never sent as the stream option `reasoning`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ThinkingLevel {
    Off,
    Minimal,
    Low,
    Medium,
    High,
    Xhigh,
    Max,
}

impl ThinkingLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            ThinkingLevel::Off => "off",
            ThinkingLevel::Minimal => "minimal",
            ThinkingLevel::Low => "low",
            ThinkingLevel::Medium => "medium",
            ThinkingLevel::High => "high",
            ThinkingLevel::Xhigh => "xhigh",
            ThinkingLevel::Max => "max",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "off" => ThinkingLevel::Off,
            "minimal" => ThinkingLevel::Minimal,
            "low" => ThinkingLevel::Low,
            "medium" => ThinkingLevel::Medium,
            "high" => ThinkingLevel::High,
            "xhigh" => ThinkingLevel::Xhigh,
            "max" => ThinkingLevel::Max,
            _ => return None,
        })
    }
}

/// L-08 cost block.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cost {
    #[serde(serialize_with = "js_number")]
    pub input: f64,
    #[serde(serialize_with = "js_number")]
    pub output: f64,
    #[serde(serialize_with = "js_number")]
    pub cache_read: f64,
    #[serde(serialize_with = "js_number")]
    pub cache_write: f64,
    #[serde(serialize_with = "js_number")]
    pub total: f64,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "js_number_opt"
    )]
    pub total_from_provider: Option<f64>,
}

/// L-08 token usage. `reasoning` is a subset of `output`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    #[serde(serialize_with = "js_number")]
    pub input: f64,
    #[serde(serialize_with = "js_number")]
    pub output: f64,
    #[serde(serialize_with = "js_number")]
    pub cache_read: f64,
    #[serde(serialize_with = "js_number")]
    pub cache_write: f64,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "js_number_opt"
    )]
    pub cache_write_1h: Option<f64>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "js_number_opt"
    )]
    pub reasoning: Option<f64>,
    #[serde(serialize_with = "js_number")]
    pub total_tokens: f64,
    pub cost: Cost,
}

/// Serializes an `f64` the way `JSON.stringify` prints a JS number: integral values without
/// a fraction (`3`, not `3.0`), so our JSON equals pi's byte for byte.
pub fn js_number<S: serde::Serializer>(n: &f64, s: S) -> Result<S::Ok, S::Error> {
    const SAFE: f64 = 9_007_199_254_740_991.0;
    if n.is_finite() && n.fract() == 0.0 && n.abs() <= SAFE {
        // In range and integral, so the conversion is exact.
        s.serialize_i64(*n as i64)
    } else if n.is_finite() {
        s.serialize_f64(*n)
    } else {
        s.serialize_none() // JSON.stringify(NaN) === "null"
    }
}

fn js_number_opt<S: serde::Serializer>(n: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match n {
        Some(n) => js_number(n, s),
        None => s.serialize_none(),
    }
}

/// A JS number as a JSON value, integral values as integers (see [`js_number`]).
pub fn num(n: f64) -> Value {
    serde_json::to_value(JsNum(n)).unwrap_or(Value::Null)
}

struct JsNum(f64);
impl Serialize for JsNum {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        js_number(&self.0, s)
    }
}

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

/// A string field, or `""` (tool call `id`/`name` as template literals would print them
/// for a well-formed call).
pub fn str_field<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// JS truthiness of a JSON value (`undefined` is modelled as a missing key).
pub fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(_) | Value::Object(_)) => true,
    }
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
            texts.join(separator)
        }
        _ => String::new(),
    }
}

// ---------------------------------------------------------------------------------------
// Constructors, in pi's key order.

/// `{ type: "text", text }`.
pub fn text_block(text: &str) -> Value {
    let mut o = Object::new();
    o.insert("type".into(), "text".into());
    o.insert("text".into(), text.into());
    Value::Object(o)
}

/// L-116: `{ content: [{ type: "text", text }], details: {} }`.
pub fn error_tool_result(text: &str) -> Value {
    let mut o = Object::new();
    o.insert("content".into(), Value::Array(vec![text_block(text)]));
    o.insert("details".into(), Value::Object(Object::new()));
    Value::Object(o)
}

/// An all-zero [`Usage`] (L-157).
pub fn zero_usage() -> Value {
    serde_json::to_value(Usage::default()).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_print_like_json_stringify() {
        assert_eq!(num(3.0).to_string(), "3");
        assert_eq!(num(0.25).to_string(), "0.25");
        assert_eq!(num(f64::NAN).to_string(), "null");
        let u = Usage {
            input: 10.0,
            total_tokens: 12.0,
            ..Usage::default()
        };
        assert_eq!(
            serde_json::to_string(&u).unwrap(),
            r#"{"input":10,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":12,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}"#
        );
    }

    #[test]
    fn truthiness_matches_js() {
        assert!(!truthy(None));
        assert!(!truthy(Some(&json!(""))));
        assert!(!truthy(Some(&json!(0))));
        assert!(truthy(Some(&json!("x"))));
        assert!(truthy(Some(&json!([]))));
        assert!(truthy(Some(&json!({}))));
    }

    #[test]
    fn content_text_joins_text_blocks_only() {
        let c = json!([{"type":"text","text":"a"},{"type":"image","data":"x","mimeType":"image/png"},{"type":"text","text":"b"}]);
        assert_eq!(content_text(Some(&c), "\n"), "a\nb");
        assert_eq!(content_text(Some(&json!("s")), "\n"), "s");
    }

    #[test]
    fn tool_calls_in_content_order() {
        let m = json!({"role":"assistant","content":[
            {"type":"toolCall","id":"1","name":"a","arguments":{}},
            {"type":"text","text":"x"},
            {"type":"toolCall","id":"2","name":"b","arguments":{}}]});
        let ids: Vec<String> = tool_calls(&m)
            .iter()
            .map(|c| str_field(c, "id").to_string())
            .collect();
        assert_eq!(ids, ["1", "2"]);
    }
}
