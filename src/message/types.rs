//! Typed forms of pi-ai's data model (spec §1), serialized exactly as pi's JSON: camelCase
//! keys in the order pi-ai's providers build them, optional fields omitted when absent, and
//! numbers printed as JS prints them. Unknown keys are kept (`extra`), so a message read and
//! written back loses nothing. The loop and the providers work on the JSON form and use the
//! enums and `Usage` here; the typed messages that check fixtures live with the tests
//! (tests/common/typed.rs).
//!
//! Written to and read from JSON by hand (`to_value`, `from_value`), not by serde's derive:
//! the derived readers pull serde's typed-error machinery (and the float printer its messages
//! use) into the `.wasm`. The serde impls below go through those functions; nothing in the
//! core calls them, so they cost the `.wasm` nothing (the tests' typed fixtures use them).

use crate::json::Put;
use crate::json::{Map, Value};

/// L-05. Only `error`, `aborted` and `length` matter to the loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "pending" => StopReason::Pending,
            "stop" => StopReason::Stop,
            "length" => StopReason::Length,
            "toolUse" => StopReason::ToolUse,
            "error" => StopReason::Error,
            "aborted" => StopReason::Aborted,
            "deferred" => StopReason::Deferred,
            _ => return None,
        })
    }
}

/// L-10. The agent-side level; `Off` is never sent as the stream option `reasoning`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cost {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    pub total: f64,
    /// True when `total` is the provider's billed cost; false or absent for a catalog estimate.
    pub total_from_provider: Option<bool>,
}

/// L-08 token usage. `reasoning` is a subset of `output`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Usage {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    pub cache_write_1h: Option<f64>,
    pub reasoning: Option<f64>,
    pub total_tokens: f64,
    pub cost: Cost,
    /// Other keys, kept in their order after the known ones.
    pub extra: Map,
}

/// A JS number as a JSON value: `NaN`/`Infinity` as `null` (as `JSON.stringify` writes
/// them), `-0` kept (crate::json writes integral values as JS prints them).
pub fn num(n: f64) -> Value {
    Value::from(n)
}

/// A required number of `o`.
fn number(o: &Map, key: &str) -> Option<f64> {
    o.get(key)?.as_f64()
}

/// An optional number of `o`: absent or `null` is `None`, anything else but a number fails.
fn optional_number(o: &Map, key: &str) -> Option<Option<f64>> {
    match o.get(key) {
        None | Some(Value::Null) => Some(None),
        Some(v) => v.as_f64().map(Some),
    }
}

/// The four counts (or prices) `Usage` and `Cost` both begin with, in pi's order.
const COUNT_KEYS: [&str; 4] = ["input", "output", "cacheRead", "cacheWrite"];

fn put_counts(o: &mut Map, counts: [f64; 4]) {
    for (key, n) in COUNT_KEYS.into_iter().zip(counts) {
        o.put(key, num(n));
    }
}

fn counts(o: &Map) -> Option<[f64; 4]> {
    let [a, b, c, d] = COUNT_KEYS;
    Some([number(o, a)?, number(o, b)?, number(o, c)?, number(o, d)?])
}

impl Cost {
    pub fn to_value(&self) -> Value {
        let mut o = Map::new();
        put_counts(
            &mut o,
            [self.input, self.output, self.cache_read, self.cache_write],
        );
        o.put("total", num(self.total));
        if let Some(b) = self.total_from_provider {
            o.put("totalFromProvider", Value::Bool(b));
        }
        Value::Object(o)
    }

    /// The cost block of a usage value; `None` when a field is missing or of the wrong type.
    pub fn from_value(v: &Value) -> Option<Cost> {
        let o = v.as_object()?;
        let [input, output, cache_read, cache_write] = counts(o)?;
        Some(Cost {
            input,
            output,
            cache_read,
            cache_write,
            total: number(o, "total")?,
            total_from_provider: match o.get("totalFromProvider") {
                None | Some(Value::Null) => None,
                Some(b) => Some(b.as_bool()?),
            },
        })
    }
}

/// The keys [`Usage`] has fields for; the others go to `extra`.
const USAGE_KEYS: [&str; 8] = [
    "input",
    "output",
    "cacheRead",
    "cacheWrite",
    "cacheWrite1h",
    "reasoning",
    "totalTokens",
    "cost",
];

impl Usage {
    /// pi's usage object: the counts, the two optional ones when set, the cost, then `extra`.
    pub fn to_value(&self) -> Value {
        let mut o = Map::new();
        put_counts(
            &mut o,
            [self.input, self.output, self.cache_read, self.cache_write],
        );
        if let Some(n) = self.cache_write_1h {
            o.put("cacheWrite1h", num(n));
        }
        if let Some(n) = self.reasoning {
            o.put("reasoning", num(n));
        }
        o.put("totalTokens", num(self.total_tokens));
        o.put("cost", self.cost.to_value());
        for (k, v) in &self.extra {
            o.insert(k.clone(), v.clone());
        }
        Value::Object(o)
    }

    /// A usage value read back; `None` when a field is missing or of the wrong type.
    pub fn from_value(v: &Value) -> Option<Usage> {
        let o = v.as_object()?;
        let [input, output, cache_read, cache_write] = counts(o)?;
        Some(Usage {
            input,
            output,
            cache_read,
            cache_write,
            cache_write_1h: optional_number(o, "cacheWrite1h")?,
            reasoning: optional_number(o, "reasoning")?,
            total_tokens: number(o, "totalTokens")?,
            cost: Cost::from_value(o.get("cost")?)?,
            extra: o
                .iter()
                .filter(|(k, _)| !USAGE_KEYS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        })
    }
}

/// (Native only, as serde is: for the tests' typed forms.)
/// Serializes an `f64` the way `JSON.stringify` prints a JS number (see [`num`]).
#[cfg(not(target_arch = "wasm32"))]
pub fn js_number<S: serde::Serializer>(n: &f64, s: S) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&num(*n), s)
}

/// [`js_number`] for an optional field (`null` when absent).
#[cfg(not(target_arch = "wasm32"))]
pub fn js_number_opt<S: serde::Serializer>(n: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match n {
        Some(n) => js_number(n, s),
        None => s.serialize_none(),
    }
}

/// A string-valued enum's serde impls, through its `as_str` and `parse`.
macro_rules! serde_by_name {
    ($t:ty, $what:literal) => {
        #[cfg(not(target_arch = "wasm32"))]
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
        #[cfg(not(target_arch = "wasm32"))]
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let name = <String as serde::Deserialize>::deserialize(d)?;
                <$t>::parse(&name).ok_or_else(|| {
                    serde::de::Error::custom(format!(concat!("unknown ", $what, " {:?}"), name))
                })
            }
        }
    };
}
serde_by_name!(StopReason, "stop reason");
serde_by_name!(ThinkingLevel, "thinking level");

/// A struct's serde impls, through its `to_value` and `from_value`.
macro_rules! serde_by_value {
    ($t:ty, $what:literal) => {
        #[cfg(not(target_arch = "wasm32"))]
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                serde::Serialize::serialize(&self.to_value(), s)
            }
        }
        #[cfg(not(target_arch = "wasm32"))]
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let v = <Value as serde::Deserialize>::deserialize(d)?;
                <$t>::from_value(&v)
                    .ok_or_else(|| serde::de::Error::custom(concat!("not a valid ", $what)))
            }
        }
    };
}
serde_by_value!(Cost, "cost");
serde_by_value!(Usage, "usage");
