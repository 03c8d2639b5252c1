//! The two event vocabularies JS sees: [`AssistantMessageEvent`] (one provider response,
//! spec §2.1) and [`AgentEvent`] (the loop, spec §6.0), with their pi JSON forms.
//!
//! The streaming partial is a live shared object ([`Partial`], L-19): producers append each
//! delta in place, and every event holds the same `Rc`, so an update costs O(delta) however
//! long the message already is. JSON forms ([`AgentEvent::to_json`]) exist for fixtures,
//! tests and hosts that want them; the JS binding renders events without them.
//! Depends on `message` only.

use crate::json::Put;
use std::cell::RefCell;
use std::rc::Rc;

use crate::json::Value;

use crate::message::{num, AgentMessage, Object, StopReason};

/// The provider's running snapshot of the assistant message, shared by all its events.
pub type Partial = Rc<RefCell<Value>>;

/// L-18: one event of an assistant response stream.
#[derive(Clone, Debug)]
pub enum AssistantMessageEvent {
    Start {
        partial: Partial,
    },
    TextStart {
        content_index: usize,
        partial: Partial,
    },
    TextDelta {
        content_index: usize,
        delta: String,
        partial: Partial,
    },
    TextEnd {
        content_index: usize,
        content: String,
        partial: Partial,
    },
    ThinkingStart {
        content_index: usize,
        partial: Partial,
    },
    ThinkingDelta {
        content_index: usize,
        delta: String,
        partial: Partial,
    },
    ThinkingEnd {
        content_index: usize,
        content: String,
        partial: Partial,
    },
    ToolcallStart {
        content_index: usize,
        partial: Partial,
        /// The argument text the provider opened the call with (a Responses
        /// `output_item.added` may carry some): a writer that parses the text itself starts
        /// from it. Not part of pi's JSON form.
        text: Option<String>,
    },
    ToolcallDelta {
        content_index: usize,
        delta: String,
        partial: Partial,
        /// When `delta` does not continue the call's JSON text: Gemini's argument object as
        /// the arguments now stand, or (a string) a provider's full text that replaced what
        /// had streamed, `delta` included, from which the partial parse starts over. Not part
        /// of pi's JSON form.
        replaced: Option<Value>,
    },
    ToolcallEnd {
        content_index: usize,
        tool_call: Value,
        partial: Partial,
    },
    Done {
        reason: StopReason,
        message: AgentMessage,
    },
    Error {
        reason: StopReason,
        error: AgentMessage,
    },
}

impl AssistantMessageEvent {
    /// The event's `type` string.
    pub fn kind(&self) -> &'static str {
        use AssistantMessageEvent::*;
        match self {
            Start { .. } => "start",
            TextStart { .. } => "text_start",
            TextDelta { .. } => "text_delta",
            TextEnd { .. } => "text_end",
            ThinkingStart { .. } => "thinking_start",
            ThinkingDelta { .. } => "thinking_delta",
            ThinkingEnd { .. } => "thinking_end",
            ToolcallStart { .. } => "toolcall_start",
            ToolcallDelta { .. } => "toolcall_delta",
            ToolcallEnd { .. } => "toolcall_end",
            Done { .. } => "done",
            Error { .. } => "error",
        }
    }

    /// The live partial of a non-terminal event.
    pub fn partial(&self) -> Option<&Partial> {
        use AssistantMessageEvent::*;
        match self {
            Start { partial }
            | TextStart { partial, .. }
            | TextDelta { partial, .. }
            | TextEnd { partial, .. }
            | ThinkingStart { partial, .. }
            | ThinkingDelta { partial, .. }
            | ThinkingEnd { partial, .. }
            | ToolcallStart { partial, .. }
            | ToolcallDelta { partial, .. }
            | ToolcallEnd { partial, .. } => Some(partial),
            Done { .. } | Error { .. } => None,
        }
    }

    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            AssistantMessageEvent::Done { .. } | AssistantMessageEvent::Error { .. }
        )
    }

    /// Reads pi's JSON form; `Err` names what is missing.
    pub fn from_json(v: &Value) -> Result<Self, String> {
        use AssistantMessageEvent::*;
        let kind = v
            .get("type")
            .and_then(Value::as_str)
            .ok_or("event without a string type")?;
        let partial = || -> Result<Partial, String> {
            let p = v
                .get("partial")
                .filter(|p| p.is_object())
                .ok_or_else(|| format!("{kind} without partial"))?;
            Ok(Rc::new(RefCell::new(p.clone())))
        };
        let index = || -> Result<usize, String> {
            v.get("contentIndex")
                .and_then(Value::as_u64)
                .and_then(|i| usize::try_from(i).ok())
                .ok_or_else(|| format!("{kind} without contentIndex"))
        };
        let text = |key: &str| -> Result<String, String> {
            v.get(key)
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| format!("{kind} without {key}"))
        };
        let reason = || -> Result<StopReason, String> {
            let reason = v.get("reason").unwrap_or(&Value::Null);
            reason.as_str().and_then(StopReason::parse).ok_or_else(|| {
                format!(
                    "{kind}: unknown reason {}",
                    crate::json::json_stringify(reason)
                )
            })
        };
        let message = |key: &str| -> Result<AgentMessage, String> {
            v.get(key)
                .filter(|m| m.is_object())
                .map(|m| Rc::new(m.clone()))
                .ok_or_else(|| format!("{kind} without {key}"))
        };
        Ok(match kind {
            "start" => Start {
                partial: partial()?,
            },
            "text_start" => TextStart {
                content_index: index()?,
                partial: partial()?,
            },
            "text_delta" => TextDelta {
                content_index: index()?,
                delta: text("delta")?,
                partial: partial()?,
            },
            "text_end" => TextEnd {
                content_index: index()?,
                content: text("content")?,
                partial: partial()?,
            },
            "thinking_start" => ThinkingStart {
                content_index: index()?,
                partial: partial()?,
            },
            "thinking_delta" => ThinkingDelta {
                content_index: index()?,
                delta: text("delta")?,
                partial: partial()?,
            },
            "thinking_end" => ThinkingEnd {
                content_index: index()?,
                content: text("content")?,
                partial: partial()?,
            },
            "toolcall_start" => ToolcallStart {
                content_index: index()?,
                partial: partial()?,
                text: None,
            },
            "toolcall_delta" => ToolcallDelta {
                content_index: index()?,
                delta: text("delta")?,
                partial: partial()?,
                replaced: None,
            },
            "toolcall_end" => ToolcallEnd {
                content_index: index()?,
                tool_call: v
                    .get("toolCall")
                    .cloned()
                    .ok_or("toolcall_end without toolCall")?,
                partial: partial()?,
            },
            "done" => Done {
                reason: reason()?,
                message: message("message")?,
            },
            "error" => Error {
                reason: reason()?,
                error: message("error")?,
            },
            other => return Err(format!("unknown assistant message event type \"{other}\"")),
        })
    }

    /// pi's JSON form, with the partial as it is now (O(message): for tests and fixtures).
    pub fn to_json(&self) -> Value {
        use AssistantMessageEvent::*;
        let mut o = Object::new();
        o.put("type", self.kind().into());
        match self {
            Start { .. } => {}
            TextStart { content_index, .. }
            | ThinkingStart { content_index, .. }
            | ToolcallStart { content_index, .. } => {
                o.put("contentIndex", num(*content_index as f64));
            }
            TextDelta {
                content_index,
                delta,
                ..
            }
            | ThinkingDelta {
                content_index,
                delta,
                ..
            }
            | ToolcallDelta {
                content_index,
                delta,
                ..
            } => {
                o.put("contentIndex", num(*content_index as f64));
                o.put("delta", delta.as_str().into());
            }
            TextEnd {
                content_index,
                content,
                ..
            }
            | ThinkingEnd {
                content_index,
                content,
                ..
            } => {
                o.put("contentIndex", num(*content_index as f64));
                o.put("content", content.as_str().into());
            }
            ToolcallEnd {
                content_index,
                tool_call,
                ..
            } => {
                o.put("contentIndex", num(*content_index as f64));
                o.put("toolCall", tool_call.clone());
            }
            Done { reason, message } => {
                o.put("reason", reason.as_str().into());
                o.put("message", (**message).clone());
            }
            Error { reason, error } => {
                o.put("reason", reason.as_str().into());
                o.put("error", (**error).clone());
            }
        }
        if let Some(p) = self.partial() {
            o.put("partial", p.borrow().clone());
        }
        Value::Object(o)
    }
}

/// §6.0: the events of a run, in the shapes of pi's `AgentEvent` union.
#[derive(Clone, Debug)]
pub enum AgentEvent {
    AgentStart,
    TurnStart,
    MessageStart {
        message: AgentMessage,
    },
    /// Only for assistant messages (L-88). `message` is `{...partial}` in pi: here the
    /// event's own live partial.
    MessageUpdate {
        event: Rc<AssistantMessageEvent>,
    },
    MessageEnd {
        message: AgentMessage,
    },
    ToolExecutionStart {
        tool_call_id: String,
        tool_name: String,
        args: Rc<Value>,
    },
    ToolExecutionUpdate {
        tool_call_id: String,
        tool_name: String,
        args: Rc<Value>,
        partial_result: Rc<Value>,
    },
    ToolExecutionEnd {
        tool_call_id: String,
        tool_name: String,
        result: Rc<Value>,
        is_error: bool,
        duration_ms: Option<f64>,
    },
    TurnEnd {
        message: AgentMessage,
        tool_results: Vec<AgentMessage>,
    },
    AgentEnd {
        messages: Vec<AgentMessage>,
    },
}

/// Every `AgentEvent` type string, in catalogue order (checked against the TypeScript union).
pub const AGENT_EVENT_TYPES: [&str; 10] = [
    "agent_start",
    "turn_start",
    "message_start",
    "message_update",
    "message_end",
    "tool_execution_start",
    "tool_execution_update",
    "tool_execution_end",
    "turn_end",
    "agent_end",
];

impl AgentEvent {
    pub fn kind(&self) -> &'static str {
        AGENT_EVENT_TYPES.get(self.index()).copied().unwrap_or("")
    }

    /// The event's place in [`AGENT_EVENT_TYPES`].
    pub fn index(&self) -> usize {
        use AgentEvent::*;
        match self {
            AgentStart => 0,
            TurnStart => 1,
            MessageStart { .. } => 2,
            MessageUpdate { .. } => 3,
            MessageEnd { .. } => 4,
            ToolExecutionStart { .. } => 5,
            ToolExecutionUpdate { .. } => 6,
            ToolExecutionEnd { .. } => 7,
            TurnEnd { .. } => 8,
            AgentEnd { .. } => 9,
        }
    }

    /// Reads pi's JSON form of an event; `Err` names what is missing. A `message_update`'s
    /// `message` is its event's partial, as in every event the loop emits.
    pub fn from_json(v: &Value) -> Result<Self, String> {
        use AgentEvent::*;
        let kind = v
            .get("type")
            .and_then(Value::as_str)
            .ok_or("event without a string type")?;
        let get = |key: &str| v.get(key).ok_or_else(|| format!("{kind} without {key}"));
        let message = || -> Result<AgentMessage, String> { Ok(Rc::new(get("message")?.clone())) };
        let list = |key: &str| -> Result<Vec<AgentMessage>, String> {
            let items = get(key)?
                .as_array()
                .ok_or_else(|| format!("{kind}: {key} is not an array"))?;
            Ok(items.iter().cloned().map(Rc::new).collect())
        };
        let id = || -> Result<String, String> {
            Ok(get("toolCallId")?.as_str().unwrap_or_default().to_string())
        };
        let name = || -> Result<String, String> {
            Ok(get("toolName")?.as_str().unwrap_or_default().to_string())
        };
        Ok(match kind {
            "agent_start" => AgentStart,
            "turn_start" => TurnStart,
            "message_start" => MessageStart {
                message: message()?,
            },
            "message_end" => MessageEnd {
                message: message()?,
            },
            "message_update" => MessageUpdate {
                event: Rc::new(AssistantMessageEvent::from_json(get(
                    "assistantMessageEvent",
                )?)?),
            },
            "tool_execution_start" => ToolExecutionStart {
                tool_call_id: id()?,
                tool_name: name()?,
                args: Rc::new(get("args")?.clone()),
            },
            "tool_execution_update" => ToolExecutionUpdate {
                tool_call_id: id()?,
                tool_name: name()?,
                args: Rc::new(get("args")?.clone()),
                partial_result: Rc::new(get("partialResult")?.clone()),
            },
            "tool_execution_end" => ToolExecutionEnd {
                tool_call_id: id()?,
                tool_name: name()?,
                result: Rc::new(get("result")?.clone()),
                is_error: get("isError")?.as_bool().unwrap_or(false),
                duration_ms: v.get("durationMs").and_then(Value::as_f64),
            },
            "turn_end" => TurnEnd {
                message: message()?,
                tool_results: list("toolResults")?,
            },
            "agent_end" => AgentEnd {
                messages: list("messages")?,
            },
            other => return Err(format!("unknown agent event type \"{other}\"")),
        })
    }

    /// pi's JSON form of the event (key order as pi builds them).
    pub fn to_json(&self) -> Value {
        use AgentEvent::*;
        let mut o = Object::new();
        o.put("type", self.kind().into());
        let list = |ms: &[AgentMessage]| Value::Array(ms.iter().map(|m| (**m).clone()).collect());
        match self {
            AgentStart | TurnStart => {}
            MessageStart { message } | MessageEnd { message } => {
                o.put("message", (**message).clone());
            }
            MessageUpdate { event } => {
                o.put("assistantMessageEvent", event.to_json());
                let message = event
                    .partial()
                    .map(|p| p.borrow().clone())
                    .unwrap_or(Value::Null);
                o.put("message", message);
            }
            ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
            } => {
                o.put("toolCallId", tool_call_id.as_str().into());
                o.put("toolName", tool_name.as_str().into());
                o.put("args", (**args).clone());
            }
            ToolExecutionUpdate {
                tool_call_id,
                tool_name,
                args,
                partial_result,
            } => {
                o.put("toolCallId", tool_call_id.as_str().into());
                o.put("toolName", tool_name.as_str().into());
                o.put("args", (**args).clone());
                o.put("partialResult", (**partial_result).clone());
            }
            ToolExecutionEnd {
                tool_call_id,
                tool_name,
                result,
                is_error,
                duration_ms,
            } => {
                o.put("toolCallId", tool_call_id.as_str().into());
                o.put("toolName", tool_name.as_str().into());
                o.put("result", (**result).clone());
                o.put("isError", (*is_error).into());
                if let Some(d) = duration_ms {
                    o.put("durationMs", num(*d));
                }
            }
            TurnEnd {
                message,
                tool_results,
            } => {
                o.put("message", (**message).clone());
                o.put("toolResults", list(tool_results));
            }
            AgentEnd { messages } => {
                o.put("messages", list(messages));
            }
        }
        Value::Object(o)
    }
}
