//! `anthropic-messages` (Anthropic Messages API) streams, as pi-ai 1.6.0 decodes them: named
//! SSE events. `message_start` gives the id, the model and the input usage;
//! `content_block_start`/`_delta`/`_stop` open, grow and close text, thinking (with its
//! signature), redacted thinking and `tool_use` blocks by the API's block index;
//! `message_delta` gives the stop reason and the final usage; `message_stop` ends it. An
//! `error` event ends the response as failed with its data.
//! <https://docs.anthropic.com/en/api/messages-streaming>
//!
//! Better than pi-ai: an event sent without an `event:` line is read by its JSON `type`
//! (pi-ai skips it), and a `tool_use` block whose `input` arrives whole in its start event
//! keeps it when no `input_json_delta` follows (pi-ai replaces it with `{}`).
//!
//! Not read: mid-output model fallbacks (`fallback` blocks end the response as failed once
//! content exists, as in pi-ai, but fallback pricing is not applied) and the
//! `input_transformations` diagnostics.

use crate::json::Put;
use std::rc::Rc;

use crate::json::{Map, Value};

use super::usage::calculate_cost;
use super::{repair_json, ToolArgs};
use crate::event::{AssistantMessageEvent, Partial};
use crate::message::{AgentMessage, StopReason, Usage};

/// An open content block: the API's index, the block, and a tool call's arguments.
struct Open {
    index: u64,
    block: usize,
    kind: &'static str,
    args: Option<ToolArgs>,
}

pub struct AnthropicDecoder {
    model: Rc<Value>,
    partial: Partial,
    open: Vec<Open>,
    usage: Usage,
    started: bool,
    stopped: bool,
}

const MESSAGE_EVENTS: [&str; 6] = [
    "message_start",
    "message_delta",
    "message_stop",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
];

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// pi-ai's `mapStopReason`: the stop reason, an error message for some; `Err` for one it
/// does not know.
fn map_stop_reason(
    reason: &str,
    details: Option<&Value>,
) -> Result<(StopReason, Option<String>), String> {
    Ok(match reason {
        "end_turn" | "pause_turn" | "stop_sequence" => (StopReason::Stop, None),
        "max_tokens" => (StopReason::Length, None),
        "tool_use" => (StopReason::ToolUse, None),
        "refusal" => {
            let explanation = details
                .and_then(|d| d.get("explanation"))
                .and_then(Value::as_str)
                .filter(|e| !e.is_empty());
            (
                StopReason::Error,
                Some(
                    explanation
                        .unwrap_or("The model refused to complete the request")
                        .to_string(),
                ),
            )
        }
        "sensitive" => (
            StopReason::Error,
            Some("Provider stopped with: sensitive".into()),
        ),
        other => return Err(format!("Unhandled stop reason: {other}")),
    })
}

impl AnthropicDecoder {
    /// A decoder for one response; `now` is the request time (the message's `timestamp`).
    pub fn new(model: Rc<Value>, now: f64) -> Self {
        let api = str_of(&model, "api").unwrap_or("").to_string();
        let partial = super::new_partial(&model, &api, now);
        AnthropicDecoder {
            model,
            partial,
            open: Vec::new(),
            usage: Usage::default(),
            started: false,
            stopped: false,
        }
    }

    pub fn start(&self) -> AssistantMessageEvent {
        AssistantMessageEvent::Start {
            partial: self.partial.clone(),
        }
    }

    fn set(&self, key: &str, value: Value) {
        super::set_field(&self.partial, key, value);
    }

    /// Totals the usage, prices it and puts it on the partial.
    fn put_usage(&mut self) {
        let u = &mut self.usage;
        u.total_tokens = u.input + u.output + u.cache_read + u.cache_write;
        calculate_cost(&self.model, u);
        let mut value = self.usage.to_value();
        // pi-ai's usage starts without these two and sets them later: they come last.
        if let Value::Object(o) = &mut value {
            for key in ["cacheWrite1h", "reasoning"] {
                if let Some(v) = o.shift_remove(key) {
                    o.insert(key.into(), v);
                }
            }
        }
        self.set("usage", value);
    }

    /// Decodes one SSE event: `name` is its `event:` field (`"message"` when it had none).
    pub fn event(
        &mut self,
        name: &str,
        data: &str,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<bool, String> {
        if name == "error" {
            return Err(data.to_string());
        }
        let named = MESSAGE_EVENTS.contains(&name);
        if !named && name != "message" {
            return Ok(false);
        }
        let event: Value = crate::json::parse(data)
            .or_else(|e| {
                let repaired = repair_json(data);
                if repaired == data {
                    Err(e)
                } else {
                    crate::json::parse(&repaired)
                }
            })
            // The data is quoted whole, as pi-ai quotes it; the driver hides the key in the
            // text and then cuts it (an event may be up to maxEventBytes long).
            .map_err(|e| format!("Could not parse Anthropic SSE event {name}: {e}; data={data}"))?;
        let kind = if named {
            str_of(&event, "type").unwrap_or("")
        } else {
            // No `event:` line: the JSON's own type names it.
            match str_of(&event, "type") {
                Some("error") => {
                    return Err(data.to_string());
                }
                Some(t) if MESSAGE_EVENTS.contains(&t) => t,
                _ => return Ok(false),
            }
        };
        match kind {
            "message_start" => self.message_start(&event),
            "content_block_start" => self.block_start(&event, out)?,
            "content_block_delta" => self.block_delta(&event, out),
            "content_block_stop" => self.block_stop(&event, out),
            "message_delta" => self.message_delta(&event)?,
            // The last event of a message: nothing is read after it, so a server that keeps
            // the connection open does not hold the answer.
            "message_stop" => {
                self.stopped = true;
                return Ok(true);
            }
            _ => {}
        }
        Ok(false)
    }

    fn message_start(&mut self, event: &Value) {
        self.started = true;
        let message = event.get("message").unwrap_or(&Value::Null);
        if let Some(id) = message.get("id") {
            self.set("responseId", id.clone());
        }
        if let Some(m) = message.get("model") {
            if m.as_str() != str_of(&self.model, "id") {
                self.set("responseModel", m.clone());
            }
        }
        let usage = message.get("usage").unwrap_or(&Value::Null);
        let n = |v: Option<&Value>| v.and_then(Value::as_f64).unwrap_or(0.0);
        self.usage.input = n(usage.get("input_tokens"));
        self.usage.output = n(usage.get("output_tokens"));
        self.usage.cache_read = n(usage.get("cache_read_input_tokens"));
        self.usage.cache_write = n(usage.get("cache_creation_input_tokens"));
        self.usage.cache_write_1h = Some(n(usage
            .get("cache_creation")
            .and_then(|c| c.get("ephemeral_1h_input_tokens"))));
        self.put_usage();
    }

    fn block_start(
        &mut self,
        event: &Value,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<(), String> {
        let Some(content) = event.get("content_block") else {
            return Ok(());
        };
        let index = event.get("index").and_then(Value::as_u64).unwrap_or(0);
        // Untrusted: a text, thinking or signature that is no string starts empty (pi-ai
        // copies any value, and a number there ends as a block no pi message can hold).
        let text = |k: &str| str_of(content, k).unwrap_or("");
        let (kind, block) = match str_of(content, "type") {
            Some("fallback") => {
                let empty = self
                    .partial
                    .borrow()
                    .get("content")
                    .and_then(Value::as_array)
                    .is_none_or(Vec::is_empty);
                if !empty {
                    return Err(
                        "Anthropic performed an unsupported mid-output model fallback".into(),
                    );
                }
                return Ok(());
            }
            Some("text") => (
                "text",
                crate::value!({"type": "text", "text": text("text")}),
            ),
            Some("thinking") => (
                "thinking",
                crate::value!({"type": "thinking", "thinking": text("thinking"), "thinkingSignature": text("signature")}),
            ),
            Some("redacted_thinking") => {
                let mut b = Map::new();
                b.put("type", "thinking".into());
                b.put("thinking", "[Reasoning redacted]".into());
                if let Some(d) = str_of(content, "data") {
                    b.put("thinkingSignature", d.into());
                }
                b.put("redacted", true.into());
                ("thinking", Value::Object(b))
            }
            Some("tool_use") => {
                let mut b = Map::new();
                b.put("type", "toolCall".into());
                // Untrusted: a call always has string id and name and object arguments.
                for key in ["id", "name"] {
                    b.insert(key.into(), str_of(content, key).unwrap_or("").into());
                }
                let input = content
                    .get("input")
                    .filter(|i| i.is_object())
                    .cloned()
                    .unwrap_or_else(|| Value::Object(Map::new()));
                b.put("arguments", input);
                ("toolCall", Value::Object(b))
            }
            _ => return Ok(()),
        };
        let at = super::push_block(&self.partial, block);
        self.open.retain(|o| o.index != index);
        self.open.push(Open {
            index,
            block: at,
            kind,
            args: (kind == "toolCall").then(ToolArgs::default),
        });
        let partial = self.partial.clone();
        out.push(match kind {
            "text" => AssistantMessageEvent::TextStart {
                content_index: at,
                partial,
            },
            "thinking" => AssistantMessageEvent::ThinkingStart {
                content_index: at,
                partial,
            },
            _ => AssistantMessageEvent::ToolcallStart {
                content_index: at,
                partial,
                text: None,
            },
        });
        Ok(())
    }

    fn block_delta(&mut self, event: &Value, out: &mut Vec<AssistantMessageEvent>) {
        let index = event.get("index").and_then(Value::as_u64).unwrap_or(0);
        let Some(open) = self.open.iter_mut().find(|o| o.index == index) else {
            return;
        };
        let delta = event.get("delta").unwrap_or(&Value::Null);
        let at = open.block;
        match (str_of(delta, "type"), open.kind) {
            (Some("text_delta"), "text") => {
                let text = str_of(delta, "text").unwrap_or("");
                super::grow_block(&self.partial, at, "text", text);
                out.push(AssistantMessageEvent::TextDelta {
                    content_index: at,
                    delta: text.to_string(),
                    partial: self.partial.clone(),
                });
            }
            (Some("thinking_delta"), "thinking") => {
                let text = str_of(delta, "thinking").unwrap_or("");
                super::grow_block(&self.partial, at, "thinking", text);
                out.push(AssistantMessageEvent::ThinkingDelta {
                    content_index: at,
                    delta: text.to_string(),
                    partial: self.partial.clone(),
                });
            }
            (Some("input_json_delta"), "toolCall") => {
                let Some(args) = open.args.as_mut() else {
                    return;
                };
                // pi-ai appends the value as its text ("[object Object]" for an object); one that
                // is absent or null throws there, failing the response: here it adds nothing.
                let text = match delta.get("partial_json") {
                    None | Some(Value::Null) => String::new(),
                    v => super::js_string(v),
                };
                let json = text.as_str();
                if args.text.is_empty() && !json.is_empty() {
                    // The streamed text replaces any input the start event carried.
                    super::edit_block(&self.partial, at, |b| {
                        b.put("arguments", Value::Object(Map::new()))
                    });
                }
                args.append(json);
                out.push(AssistantMessageEvent::ToolcallDelta {
                    content_index: at,
                    delta: json.to_string(),
                    partial: self.partial.clone(),
                    replaced: None,
                });
            }
            (Some("signature_delta"), "thinking") => {
                let sig = str_of(delta, "signature").unwrap_or("").to_string();
                super::edit_block(&self.partial, at, |b| {
                    match b.get_mut("thinkingSignature") {
                        Some(Value::String(s)) => s.push_str(&sig),
                        _ => {
                            b.put("thinkingSignature", sig.into());
                        }
                    }
                });
            }
            _ => {}
        }
    }

    fn block_stop(&mut self, event: &Value, out: &mut Vec<AssistantMessageEvent>) {
        let index = event.get("index").and_then(Value::as_u64).unwrap_or(0);
        let Some(pos) = self.open.iter().position(|o| o.index == index) else {
            return;
        };
        let open = self.open.remove(pos);
        let at = open.block;
        let field = |k: &str| {
            super::edit_block(&self.partial, at, |b| {
                b.get(k).and_then(Value::as_str).unwrap_or("").to_string()
            })
            .unwrap_or_default()
        };
        match open.kind {
            "text" => out.push(AssistantMessageEvent::TextEnd {
                content_index: at,
                content: field("text"),
                partial: self.partial.clone(),
            }),
            "thinking" => out.push(AssistantMessageEvent::ThinkingEnd {
                content_index: at,
                content: field("thinking"),
                partial: self.partial.clone(),
            }),
            _ => {
                let Some(args) = open.args else {
                    return;
                };
                let tool_call = if args.text.is_empty() {
                    // No streamed text: the start event's input stands (pi-ai drops it).
                    super::edit_block(&self.partial, at, |b| Value::Object(b.clone()))
                        .unwrap_or(Value::Null)
                } else {
                    args.finish(&self.partial, at)
                };
                out.push(AssistantMessageEvent::ToolcallEnd {
                    content_index: at,
                    tool_call,
                    partial: self.partial.clone(),
                });
            }
        }
    }

    fn message_delta(&mut self, event: &Value) -> Result<(), String> {
        let delta = event.get("delta").unwrap_or(&Value::Null);
        if let Some(reason) = str_of(delta, "stop_reason").filter(|r| !r.is_empty()) {
            self.set("rawStopReason", reason.into());
            let (stop, error) = map_stop_reason(reason, delta.get("stop_details"))?;
            self.set("stopReason", stop.as_str().into());
            if let Some(e) = error {
                self.set("errorMessage", e.into());
            }
        }
        if let Some(u) = event.get("usage").filter(|u| u.is_object()) {
            let n = |v: Option<&Value>| v.and_then(Value::as_f64);
            let usage = &mut self.usage;
            if let Some(v) = n(u.get("input_tokens")) {
                usage.input = v;
            }
            if let Some(v) = n(u.get("output_tokens")) {
                usage.output = v;
            }
            if let Some(v) = n(u.get("cache_read_input_tokens")) {
                usage.cache_read = v;
            }
            if let Some(v) = n(u.get("cache_creation_input_tokens")) {
                usage.cache_write = v;
            }
            if let Some(v) = n(u
                .get("cache_creation")
                .and_then(|c| c.get("ephemeral_1h_input_tokens")))
            {
                usage.cache_write_1h = Some(v);
            }
            if let Some(v) = n(u
                .get("output_tokens_details")
                .and_then(|d| d.get("thinking_tokens")))
            {
                usage.reasoning = Some(v);
            }
        }
        self.put_usage();
        Ok(())
    }

    /// The body ended: `done`, or the error the stream amounts to.
    pub fn finish(&mut self, out: &mut Vec<AssistantMessageEvent>) -> AgentMessage {
        if self.started && !self.stopped {
            return self.fail("Anthropic stream ended before message_stop", false, out);
        }
        for o in &self.open {
            if let Some(args) = &o.args {
                args.settle(&self.partial, o.block);
            }
        }
        super::end_by_stop_reason(
            &self.partial,
            "Anthropic stream ended without a stop reason",
            "An unknown error occurred",
            out,
        )
    }

    pub fn fail(
        &mut self,
        message: &str,
        aborted: bool,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> AgentMessage {
        super::fail_partial(&self.partial, message, aborted, out)
    }
}
