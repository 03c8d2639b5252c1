//! Typed forms of pi-ai's messages and content blocks (spec §1), for the tests and the
//! `messages` fuzz target only: they check that every message the reference produced reads
//! into pi's shapes and writes back byte for byte. The product works on the JSON form.
#![allow(dead_code)]

use pi_agent_wasm::json::{Map, Value};
use pi_agent_wasm::message::{js_number, js_number_opt, StopReason, ThinkingLevel, Usage};
use serde::{Deserialize, Serialize};

/// The crate's JSON value as serde_json's (through serde's data model, no text between).
pub fn to_serde(v: &Value) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
}

/// A serializable value as the crate's JSON value.
pub fn to_ours<T: Serialize>(v: &T) -> Result<Value, serde_json::Error> {
    serde_json::from_value(serde_json::to_value(v)?)
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// L-06: a content block, told apart by `type`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ContentBlock {
    #[serde(rename_all = "camelCase")]
    Text {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text_signature: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    Thinking {
        thinking: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thinking_signature: Option<String>,
        #[serde(default, skip_serializing_if = "is_false")]
        redacted: bool,
    },
    #[serde(rename_all = "camelCase")]
    Image { data: String, mime_type: String },
    #[serde(rename_all = "camelCase")]
    ToolCall {
        id: String,
        name: String,
        arguments: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thought_signature: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        namespace: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arguments_error: Option<String>,
    },
}

/// `string | (TextContent | ImageContent)[]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Content {
    Text(String),
    Blocks(Vec<ContentBlock>),
}

/// L-02.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserMessage {
    pub content: Content,
    #[serde(serialize_with = "js_number")]
    pub timestamp: f64,
    #[serde(flatten)]
    pub extra: Map,
}

/// L-03. System messages are built in two key orders (`createInitialSystemMessage`: role,
/// content, toolsAdded, timestamp; the loop's declarations: role, content, timestamp,
/// toolsAdded, toolsRemoved), so the typed form keeps the object as it is and reads its
/// fields through accessors. Reading checks the required fields.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(transparent)]
pub struct SystemMessage(pub Map);

impl<'de> Deserialize<'de> for SystemMessage {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let o = Map::deserialize(d)?;
        match o.get("content") {
            Some(Value::String(_)) => {}
            Some(Value::Array(blocks)) => {
                for b in blocks {
                    serde_json::from_value::<ContentBlock>(to_serde(b))
                        .map_err(D::Error::custom)?;
                }
            }
            _ => {
                return Err(D::Error::custom(
                    "content must be a string or an array of text blocks",
                ))
            }
        }
        if !o.get("timestamp").is_some_and(Value::is_number) {
            return Err(D::Error::custom("timestamp must be a number"));
        }
        Ok(SystemMessage(o))
    }
}

impl SystemMessage {
    pub fn content(&self) -> Option<&Value> {
        self.0.get("content")
    }
    pub fn sections(&self) -> Option<&Map> {
        self.0.get("sections").and_then(Value::as_object)
    }
    pub fn tools_added(&self) -> &[Value] {
        self.0
            .get("toolsAdded")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }
    pub fn tools_removed(&self) -> &[Value] {
        self.0
            .get("toolsRemoved")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }
    pub fn timestamp(&self) -> f64 {
        self.0
            .get("timestamp")
            .and_then(Value::as_f64)
            .unwrap_or(0.0)
    }
}

/// L-04, keys in the order pi-ai's providers build the message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessage {
    pub content: Vec<ContentBlock>,
    pub api: String,
    pub provider: String,
    pub model: String,
    pub usage: Usage,
    pub stop_reason: StopReason,
    #[serde(serialize_with = "js_number")]
    pub timestamp: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_thinking_level: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deferred: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_stop_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_turn: Option<bool>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "js_number_opt"
    )]
    pub duration_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_level: Option<ThinkingLevel>,
    #[serde(flatten)]
    pub extra: Map,
}

/// L-07, keys in the order the loop builds it (L-120).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultMessage {
    pub tool_call_id: String,
    pub tool_name: String,
    pub content: Vec<ContentBlock>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nested_calls: Option<Value>,
    pub is_error: bool,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "js_number_opt"
    )]
    pub duration_ms: Option<f64>,
    #[serde(serialize_with = "js_number")]
    pub timestamp: f64,
    #[serde(flatten)]
    pub extra: Map,
}

/// L-01: an LLM message by `role`, or an app-defined message kept as it is.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    System(SystemMessage),
    User(Box<UserMessage>),
    Assistant(Box<AssistantMessage>),
    ToolResult(Box<ToolResultMessage>),
    Custom(Value),
}

impl Message {
    /// Reads a message; a known role with a malformed body is an error naming the role.
    pub fn from_value(v: Value) -> Result<Message, String> {
        let role = v.get("role").and_then(Value::as_str).map(str::to_string);
        let body = |v: Value| {
            let mut v = v;
            if let Value::Object(o) = &mut v {
                o.shift_remove("role");
            }
            to_serde(&v)
        };
        let err = |r: &str, e: serde_json::Error| format!("invalid {r} message: {e}");
        Ok(match role.as_deref() {
            Some("system") => {
                Message::System(serde_json::from_value(body(v)).map_err(|e| err("system", e))?)
            }
            Some("user") => {
                Message::User(serde_json::from_value(body(v)).map_err(|e| err("user", e))?)
            }
            Some("assistant") => Message::Assistant(
                serde_json::from_value(body(v)).map_err(|e| err("assistant", e))?,
            ),
            Some("toolResult") => Message::ToolResult(
                serde_json::from_value(body(v)).map_err(|e| err("toolResult", e))?,
            ),
            _ => Message::Custom(v),
        })
    }

    /// pi's JSON form, `role` first.
    pub fn to_value(&self) -> Value {
        let (role, body) = match self {
            Message::System(m) => ("system", to_ours(m)),
            Message::User(m) => ("user", to_ours(m)),
            Message::Assistant(m) => ("assistant", to_ours(m)),
            Message::ToolResult(m) => ("toolResult", to_ours(m)),
            Message::Custom(v) => return v.clone(),
        };
        let mut o = Map::new();
        o.insert("role".into(), role.into());
        if let Ok(Value::Object(fields)) = body {
            o.extend(fields);
        }
        Value::Object(o)
    }
}
