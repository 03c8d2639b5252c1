//! Typed forms of pi-ai's data model (spec §1), serialized exactly as pi's JSON: camelCase
//! keys in the order pi-ai's providers build them, optional fields omitted when absent, and
//! numbers printed as JS prints them. Unknown keys are kept (`extra`), so a message read and
//! written back loses nothing. The loop and the providers work on the JSON form and use the
//! enums and `Usage` here; the typed messages that check fixtures live with the tests
//! (tests/common/typed.rs).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

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
    /// True when `total` is the provider's billed cost; false or absent for a catalog estimate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_from_provider: Option<bool>,
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
    #[serde(flatten)]
    pub extra: Map<String, Value>,
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

/// [`js_number`] for an optional field (`null` when absent).
pub fn js_number_opt<S: serde::Serializer>(n: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
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
