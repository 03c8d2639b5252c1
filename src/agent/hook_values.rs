//! What the loop makes of values returned by host code (hooks, queue callbacks, tools),
//! which may be of any type. The binding converts a JS value to JSON and reads it here (a
//! result object first has the fields the loop reads copied as `obj[name]` reads them, so a
//! class's getters, a prototype's fields and a Proxy's `get` trap count as in pi), so
//! the policy is one piece of pure, natively tested code. Per hook, following what pi's code
//! does with such a value, and failing clearly where pi would pass junk on:
//!
//! | returned value | pi 1.6.0 | here |
//! |---|---|---|
//! | `convertToLlm`/`transformContext`: not an array | sent on to the provider | the run fails: "…: expected an array of messages" |
//! | an element without a string `role` | sent on | the run fails, naming the index |
//! | `getSteeringMessages`/`getFollowUpMessages`: falsy | `|| []` | `[]` |
//! | the same: a truthy non-array | its `.length` decides, elements injected | the run fails |
//! | `getApiKey`: falsy | falls back to `apiKey` | the same |
//! | `getApiKey`: a non-string | sent as the key | treated as nothing (falls back) |
//! | `prepareNextTurn`/`prepareRequest`: falsy or not an object | nothing | nothing |
//! | their `messages` not an array, `thinkingLevel` unknown | used as is | the run fails |
//! | `finishTurn`: anything but `{action: "end" \| "continue"}` | no decision | no decision |
//! | `beforeToolCall`: `block` | truthiness | truthiness |
//! | `beforeToolCall`: a non-string or empty `reason` | a non-string becomes the text | "Tool execution was blocked" |
//! | `afterToolCall`: falsy or not an object | unchanged result | unchanged result |
//! | `afterToolCall`: `content` not an array | used as is | ignored |
//! | `afterToolCall`: `isError` not a boolean | stored as is | its truthiness |
//! | a tool's `execute` resolving to a non-object | a TypeError becomes the error text | an error result naming the type |

use std::rc::Rc;

use crate::json::Value;

use crate::error::{Error, Result};
use crate::io::{AfterToolCallResult, BeforeToolCallResult, TurnDecision};
use crate::message::{present, truthy, AgentMessage, ThinkingLevel};

/// A JS-style type name for messages.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
        // (A value the host keeps is an object, or one JSON cannot hold.)
        Value::Host(_) => "an object",
    }
}

/// The error for a hook that returned something other than an array of messages.
pub fn not_an_array(hook: &str, got: &str) -> Error {
    Error::InvalidInput(format!("{hook}: expected an array of messages, got {got}"))
}

/// The error for an element that is not a message.
pub fn not_a_message(hook: &str, index: usize) -> Error {
    Error::InvalidInput(format!(
        "{hook}: item {index} is not a message (it has no string role)"
    ))
}

/// An array of messages (objects with a string `role`).
pub fn messages(hook: &str, v: Value) -> Result<Vec<AgentMessage>> {
    let Value::Array(items) = v else {
        return Err(not_an_array(hook, type_name(&v)));
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, m)| {
            if m.get("role").is_some_and(Value::is_string) {
                Ok(Rc::new(m))
            } else {
                Err(not_a_message(hook, i))
            }
        })
        .collect()
}

/// `(await f()) || []`, then [`messages`].
pub fn queued_messages(hook: &str, v: Value) -> Result<Vec<AgentMessage>> {
    if !truthy(Some(&v)) {
        return Ok(Vec::new());
    }
    messages(hook, v)
}

/// A usable API key: a non-empty string.
pub fn api_key(v: &Value) -> Option<String> {
    v.as_str().filter(|s| !s.is_empty()).map(str::to_string)
}

/// `thinkingLevel` of `prepareNextTurn`/`prepareRequest`: absent keeps the level.
pub fn thinking_level(hook: &str, v: Option<&Value>) -> Result<Option<ThinkingLevel>> {
    match present(v) {
        None => Ok(None),
        Some(Value::String(s)) => ThinkingLevel::parse(s).map(Some).ok_or_else(|| {
            Error::InvalidInput(format!("{hook} returned an unknown thinkingLevel \"{s}\""))
        }),
        Some(other) => Err(Error::InvalidInput(format!(
            "{hook} returned thinkingLevel as {}, not a string",
            type_name(other)
        ))),
    }
}

/// `decision?.action`.
pub fn turn_decision(v: &Value) -> Option<TurnDecision> {
    match v.get("action").and_then(Value::as_str) {
        Some("end") => Some(TurnDecision::End),
        Some("continue") => Some(TurnDecision::Continue),
        _ => None,
    }
}

/// `beforeToolCall`'s result.
pub fn before_tool_call(v: &Value) -> Option<BeforeToolCallResult> {
    if !v.is_object() {
        return None;
    }
    Some(BeforeToolCallResult {
        block: truthy(v.get("block")),
        reason: v.get("reason").and_then(Value::as_str).map(str::to_string),
        terminate: v.get("terminate") == Some(&Value::Bool(true)),
    })
}

/// `afterToolCall`'s result.
pub fn after_tool_call(v: &Value) -> Option<AfterToolCallResult> {
    if !v.is_object() {
        return None;
    }
    // Raw: a value the host kept (the hook's own `content` array) is taken as it is.
    let field = |k: &str| present(v.get_raw(k)).cloned();
    Some(AfterToolCallResult {
        // An array, or a kept value that cannot be read as JSON (passed on, as pi does).
        content: field("content").filter(|c| c.is_array() || c.host_error().is_some()),
        details: field("details"),
        usage: field("usage"),
        terminate: field("terminate"),
        // `a.isError ?? isError`: a non-boolean keeps its truthiness (pi stores the value
        // itself, which providers then read as true or false).
        is_error: present(v.get("isError")).map(|e| truthy(Some(e))),
        structured_content: field("structuredContent"),
    })
}

/// The error text for a tool that resolved with something other than an object.
pub fn not_a_result(tool_name: &str, got: &str) -> String {
    format!("Tool {tool_name} returned {got} instead of a result object")
}

/// A tool's resolved value: the result object, or the error text for anything else.
pub fn tool_result(tool_name: &str, v: Value) -> std::result::Result<Value, String> {
    if v.is_object() {
        return Ok(v);
    }
    let got = if v.is_null() {
        "undefined or null"
    } else {
        type_name(&v)
    };
    Err(not_a_result(tool_name, got))
}
