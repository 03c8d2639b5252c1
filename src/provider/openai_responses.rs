//! `openai-responses` (OpenAI Responses API) streams, as pi-ai 1.6.0 decodes them: every SSE
//! event is a typed JSON object. `response.output_item.added` opens a slot per output item
//! (`reasoning` → thinking, `message` → text, `function_call` → tool call) under its
//! `output_index`; the `*.delta` events grow it; `response.output_item.done` closes it with the
//! item's final form (the reasoning item becomes the thinking block's signature, the message
//! id the text block's `textSignature`); `response.completed`/`incomplete` give usage, the
//! response id and the stop reason; `response.failed` and `error` end it as failed.
//! <https://platform.openai.com/docs/api-reference/responses-streaming>
//!
//! Better than pi-ai: a text, refusal or reasoning delta without `output_index` (sent by some
//! compatible servers) goes to the slot its `item_id` names, else the open slot of its kind,
//! else a new block; pi-ai drops it. A delta for an index that has no open slot opens one
//! rather than being lost. A `message` item whose done form carries no text (no `content`)
//! keeps the text its deltas streamed, where pi-ai empties the block.
//!
//! Not read: grammar (`custom_tool_call`) tools, which this package never declares, and the
//! `input_transformations` diagnostics.

use crate::json::is_truthy;
use crate::json::Put;
use crate::text::Joined;
use std::rc::Rc;

use crate::json::{Map, Value};

use super::usage::calculate_cost;
use super::{js_string, truthy_string, ToolArgs};
use crate::event::{AssistantMessageEvent, Partial};
use crate::json::json_stringify;
use crate::message::{AgentMessage, StopReason, Usage};

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    Thinking,
    Text,
    ToolCall,
}

/// An output item being streamed.
struct Slot {
    output_index: Option<u64>,
    item_id: Option<String>,
    kind: Kind,
    block: usize,
    /// A tool call's arguments as they stream.
    args: ToolArgs,
    /// The arguments were started over: the next delta sends them whole.
    resync: bool,
}

pub struct ResponsesDecoder {
    model: Rc<Value>,
    partial: Partial,
    slots: Vec<Slot>,
    /// Blocks of tool calls whose `output_item.done` has not arrived.
    unfinished: Vec<usize>,
    /// Reasoning item id → thinking block, for signatures completed at the end.
    reasoning: Vec<(String, usize)>,
    terminal: bool,
    /// Blocks whose signature the final response completed after their end event.
    pub late: Vec<usize>,
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// `Array.prototype.join` of a field of each element (absent fields join as `""`).
fn join_field(items: Option<&Value>, pick: impl Fn(&Value) -> Option<&str>, sep: &str) -> String {
    items
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|i| pick(i).unwrap_or(""))
                .collect::<Vec<_>>()
                .joined(sep)
        })
        .unwrap_or_default()
}

/// pi-ai's `mapStopReason`: the stop reason, and an error message for some.
fn map_stop_reason(
    status: Option<&str>,
    incomplete: Option<&str>,
) -> Result<(StopReason, Option<String>), String> {
    Ok(match status {
        None | Some("completed" | "in_progress" | "queued") => (StopReason::Stop, None),
        Some("incomplete") => match incomplete {
            Some("max_output_tokens") => (StopReason::Length, None),
            Some(r) => (StopReason::Error, Some(format!("Response incomplete: {r}"))),
            None => (
                StopReason::Error,
                Some("Response incomplete without a provider reason".into()),
            ),
        },
        Some("failed" | "cancelled") => (StopReason::Error, None),
        Some(other) => return Err(format!("Unhandled stop reason: {other}")),
    })
}

/// pi-ai's service-tier price multiplier.
fn tier_multiplier(model: &Value, tier: Option<&str>) -> f64 {
    match tier {
        Some("flex") => 0.5,
        Some("priority" | "fast") if str_of(model, "id") == Some("gpt-5.5") => 2.5,
        Some("priority" | "fast") => 2.0,
        _ => 1.0,
    }
}

impl ResponsesDecoder {
    /// A decoder for one response; `now` is the request time (the message's `timestamp`).
    pub fn new(model: Rc<Value>, now: f64) -> Self {
        let api = str_of(&model, "api").unwrap_or("").to_string();
        let partial = super::new_partial(&model, &api, now);
        ResponsesDecoder {
            model,
            partial,
            slots: Vec::new(),
            unfinished: Vec::new(),
            reasoning: Vec::new(),
            terminal: false,
            late: Vec::new(),
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

    fn edit<T>(&self, index: usize, f: impl FnOnce(&mut Map) -> T) -> Option<T> {
        super::edit_block(&self.partial, index, f)
    }

    fn grow(&self, index: usize, key: &str, delta: &str) {
        super::grow_block(&self.partial, index, key, delta);
    }

    /// Opens a slot for `item` at `output_index`; `None` for an item kind with no block.
    fn open(
        &mut self,
        output_index: Option<u64>,
        item: &Value,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Option<usize> {
        let item_id = str_of(item, "id").map(str::to_string);
        let (kind, block) = match str_of(item, "type") {
            Some("reasoning") => (
                Kind::Thinking,
                crate::value!({"type": "thinking", "thinking": ""}),
            ),
            Some("message") => {
                if str_of(item, "phase") == Some("final_answer") {
                    self.set("stopReason", "stop".into());
                }
                (Kind::Text, crate::value!({"type": "text", "text": ""}))
            }
            Some("function_call") => {
                let id = format!(
                    "{}|{}",
                    js_string(item.get("call_id")),
                    js_string(item.get("id"))
                );
                let mut b = Map::new();
                b.put("type", "toolCall".into());
                b.put("id", id.into());
                // Untrusted: a call's name is always a string.
                b.put("name", str_of(item, "name").unwrap_or("").into());
                b.put("arguments", Value::Object(Map::new()));
                // Untrusted: a namespace that is no string is left out (pi-ai copies any value,
                // which no pi message can hold).
                if let Some(ns) = item.get("namespace").filter(|n| n.is_string()) {
                    b.put("namespace", ns.clone());
                }
                (Kind::ToolCall, Value::Object(b))
            }
            _ => return None,
        };
        let index = super::push_block(&self.partial, block);
        let mut slot = Slot {
            output_index,
            item_id,
            kind,
            block: index,
            args: ToolArgs::default(),
            resync: false,
        };
        match kind {
            Kind::Thinking => out.push(AssistantMessageEvent::ThinkingStart {
                content_index: index,
                partial: self.partial.clone(),
            }),
            Kind::Text => out.push(AssistantMessageEvent::TextStart {
                content_index: index,
                partial: self.partial.clone(),
            }),
            Kind::ToolCall => {
                // Arguments the item already carries start the call's text.
                let text = str_of(item, "arguments").filter(|a| !a.is_empty());
                if let Some(args) = text {
                    slot.args.append(args);
                }
                self.unfinished.push(index);
                out.push(AssistantMessageEvent::ToolcallStart {
                    content_index: index,
                    partial: self.partial.clone(),
                    text: text.map(str::to_string),
                });
            }
        }
        self.slots.push(slot);
        Some(self.slots.len() - 1)
    }

    /// The open slot of `kind` for an event. With `output_index`, the slot at that index;
    /// without (pi-ai drops these), the slot `item_id` names, else the latest open one.
    fn find(&self, event: &Value, kind: Kind) -> Option<usize> {
        match event.get("output_index").and_then(Value::as_u64) {
            Some(i) => self
                .slots
                .iter()
                .position(|s| s.output_index == Some(i))
                .filter(|&p| self.slots.get(p).is_some_and(|s| s.kind == kind)),
            None => {
                let id = str_of(event, "item_id");
                id.and_then(|id| {
                    self.slots
                        .iter()
                        .position(|s| s.kind == kind && s.item_id.as_deref() == Some(id))
                })
                .or_else(|| self.slots.iter().rposition(|s| s.kind == kind))
            }
        }
    }

    /// The slot for a text or thinking delta, opened when none is (the delta is not lost).
    fn slot_for_delta(
        &mut self,
        event: &Value,
        kind: Kind,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Option<usize> {
        if let Some(s) = self.find(event, kind) {
            return Some(s);
        }
        let index = event.get("output_index").and_then(Value::as_u64);
        if index.is_some_and(|i| self.slots.iter().any(|s| s.output_index == Some(i))) {
            // The index holds an item of another kind: the event contradicts the stream.
            return None;
        }
        let mut item = Map::new();
        let t = if kind == Kind::Thinking {
            "reasoning"
        } else {
            "message"
        };
        item.put("type", t.into());
        if let Some(id) = event.get("item_id") {
            item.put("id", id.clone());
        }
        self.open(index, &Value::Object(item), out)
    }

    fn text_delta(&mut self, event: &Value, kind: Kind, out: &mut Vec<AssistantMessageEvent>) {
        let delta = match (kind, str_of(event, "type")) {
            (Kind::Thinking, Some("response.reasoning_summary_part.done")) => "\n\n",
            _ => str_of(event, "delta").unwrap_or(""),
        };
        let Some(s) = self.slot_for_delta(event, kind, out) else {
            return;
        };
        let Some(block) = self.slots.get(s).map(|s| s.block) else {
            return;
        };
        if kind == Kind::Thinking {
            self.grow(block, "thinking", delta);
            out.push(AssistantMessageEvent::ThinkingDelta {
                content_index: block,
                delta: delta.to_string(),
                partial: self.partial.clone(),
            });
        } else {
            self.grow(block, "text", delta);
            out.push(AssistantMessageEvent::TextDelta {
                content_index: block,
                delta: delta.to_string(),
                partial: self.partial.clone(),
            });
        }
    }

    /// Appends `delta` to a call's argument text and sends it.
    fn args_delta(&mut self, s: usize, delta: &str, out: &mut Vec<AssistantMessageEvent>) {
        let Some(slot) = self.slots.get_mut(s) else {
            return;
        };
        let block = slot.block;
        slot.args.append(delta);
        // The text started over (`replace_args`): the partial parse, in JS, starts over too.
        let replaced =
            std::mem::take(&mut slot.resync).then(|| Value::String(slot.args.text.clone()));
        out.push(AssistantMessageEvent::ToolcallDelta {
            content_index: block,
            delta: delta.to_string(),
            partial: self.partial.clone(),
            replaced,
        });
    }

    /// The provider's complete argument text: the missing rest is sent as a delta when it
    /// continues the text so far; otherwise the arguments start over from it, unsent.
    fn replace_args(&mut self, s: usize, text: &str, out: &mut Vec<AssistantMessageEvent>) {
        let Some(slot) = self.slots.get_mut(s) else {
            return;
        };
        if let Some(rest) = text.strip_prefix(slot.args.text.as_str()) {
            if !rest.is_empty() {
                let rest = rest.to_string();
                self.args_delta(s, &rest, out);
            }
            return;
        }
        slot.resync = true;
        slot.args.restart(&self.partial, slot.block, text);
    }

    /// Decodes one SSE event: `name` is its `event:` field, `data` its payload. `Ok(true)`
    /// at `[DONE]`; `Err` names what ends the response as failed.
    pub fn event(
        &mut self,
        name: &str,
        data: &str,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<bool, String> {
        if data == "[DONE]" {
            return Ok(true);
        }
        let event: Value =
            crate::json::parse(data).map_err(|e| format!("Malformed JSON in stream event: {e}"))?;
        // The OpenAI SDK turns an `error` event, or any event with an `error`, into an error.
        let error = match event.get("error") {
            Some(e) if is_truthy(e) => Some(e),
            _ if name == "error" => Some(&event),
            _ => None,
        };
        if let Some(e) = error {
            return Err(match e.get("message") {
                Some(Value::String(m)) if !m.is_empty() => m.clone(),
                Some(m) if is_truthy(m) => json_stringify(m),
                _ => json_stringify(e),
            });
        }
        let index = event.get("output_index").and_then(Value::as_u64);
        match str_of(&event, "type").unwrap_or("") {
            "response.created" => {
                if let Some(id) = event.get("response").and_then(|r| r.get("id")) {
                    self.set("responseId", id.clone());
                }
            }
            "response.output_item.added" => {
                if let Some(item) = event.get("item") {
                    self.open(index, item, out);
                }
            }
            "response.reasoning_summary_text.delta"
            | "response.reasoning_summary_part.done"
            | "response.reasoning_text.delta" => self.text_delta(&event, Kind::Thinking, out),
            "response.output_text.delta" | "response.refusal.delta" => {
                self.text_delta(&event, Kind::Text, out)
            }
            "response.function_call_arguments.delta" => {
                if let Some(s) = self.find(&event, Kind::ToolCall) {
                    let delta = str_of(&event, "delta").unwrap_or("").to_string();
                    self.args_delta(s, &delta, out);
                }
            }
            "response.function_call_arguments.done" => {
                if let Some(s) = self.find(&event, Kind::ToolCall) {
                    let text = str_of(&event, "arguments").unwrap_or("").to_string();
                    self.replace_args(s, &text, out);
                }
            }
            "response.output_item.done" => {
                if let Some(item) = event.get("item") {
                    self.item_done(index, item, out);
                }
            }
            // The terminal events: nothing is read after them, so a server that keeps the
            // connection open does not hold the answer.
            "response.completed" | "response.incomplete" => {
                let response = event.get("response").cloned().unwrap_or(Value::Null);
                self.finalize(&response)?;
                return Ok(true);
            }
            "error" => {
                return Err(format!(
                    "Error Code {}: {}",
                    js_string(event.get("code")),
                    js_string(event.get("message"))
                ));
            }
            "response.failed" => {
                self.terminal = true;
                let response = event.get("response");
                if let Some(status) = response.and_then(|r| r.get("status")) {
                    self.set("rawStopReason", status.clone());
                }
                let error = response
                    .and_then(|r| r.get("error"))
                    .filter(|e| is_truthy(e));
                let reason = response
                    .and_then(|r| r.get("incomplete_details"))
                    .and_then(|d| d.get("reason"))
                    .filter(|r| is_truthy(r));
                return Err(match (error, reason) {
                    (Some(e), _) => format!(
                        "{}: {}",
                        truthy_string(e.get("code")).unwrap_or_else(|| "unknown".into()),
                        truthy_string(e.get("message")).unwrap_or_else(|| "no message".into())
                    ),
                    (None, Some(r)) => format!("incomplete: {}", js_string(Some(r))),
                    (None, None) => "Unknown error (no error details in response)".into(),
                });
            }
            _ => {}
        }
        Ok(false)
    }

    fn item_done(
        &mut self,
        index: Option<u64>,
        item: &Value,
        out: &mut Vec<AssistantMessageEvent>,
    ) {
        let t = str_of(item, "type");
        if t == Some("message") && str_of(item, "phase") == Some("final_answer") {
            self.set("stopReason", "stop".into());
        }
        let existing = match index {
            Some(i) => self.slots.iter().position(|s| s.output_index == Some(i)),
            None => {
                let id = str_of(item, "id");
                id.and_then(|id| {
                    self.slots
                        .iter()
                        .position(|s| s.item_id.as_deref() == Some(id))
                })
            }
        };
        let Some(s) = existing.or_else(|| self.open(index, item, out)) else {
            return;
        };
        let Some(slot) = self.slots.get(s) else {
            return;
        };
        let (kind, block) = (slot.kind, slot.block);
        match (t, kind) {
            (Some("reasoning"), Kind::Thinking) => {
                let summary = join_field(item.get("summary"), |s| str_of(s, "text"), "\n\n");
                let content = join_field(item.get("content"), |c| str_of(c, "text"), "\n\n");
                let signature = json_stringify(item);
                let thinking = self
                    .edit(block, |b| {
                        let text = if !summary.is_empty() {
                            summary
                        } else if !content.is_empty() {
                            content
                        } else {
                            let current = b.get("thinking").and_then(Value::as_str);
                            current.unwrap_or("").to_string()
                        };
                        b.put("thinking", text.as_str().into());
                        b.put("thinkingSignature", signature.into());
                        text
                    })
                    .unwrap_or_default();
                if let Some(id) = str_of(item, "id") {
                    self.reasoning.push((id.to_string(), block));
                }
                out.push(AssistantMessageEvent::ThinkingEnd {
                    content_index: block,
                    content: thinking,
                    partial: self.partial.clone(),
                });
            }
            (Some("message"), Kind::Text) => {
                let text = join_field(
                    item.get("content"),
                    |c| {
                        if str_of(c, "type") == Some("output_text") {
                            str_of(c, "text")
                        } else {
                            str_of(c, "refusal")
                        }
                    },
                    "",
                );
                let mut sig = Map::new();
                sig.put("v", 1.into());
                if let Some(id) = item.get("id") {
                    sig.put("id", id.clone());
                }
                if let Some(phase) = item.get("phase").filter(|p| !p.is_null()) {
                    sig.put("phase", phase.clone());
                }
                let signature = json_stringify(&Value::Object(sig));
                // Better than pi-ai: a done item that carries no text (compatible servers
                // send it without `content`) keeps the text its deltas streamed.
                let text = self
                    .edit(block, |b| {
                        let text = if text.is_empty() {
                            let current = b.get("text").and_then(Value::as_str);
                            current.unwrap_or("").to_string()
                        } else {
                            text
                        };
                        b.put("text", text.as_str().into());
                        b.put("textSignature", signature.into());
                        text
                    })
                    .unwrap_or_default();
                out.push(AssistantMessageEvent::TextEnd {
                    content_index: block,
                    content: text,
                    partial: self.partial.clone(),
                });
            }
            (Some("function_call"), Kind::ToolCall) => {
                if let Some(args) = str_of(item, "arguments").filter(|a| !a.is_empty()) {
                    let mut ignored = Vec::new();
                    self.replace_args(s, args, &mut ignored);
                }
                let mut tool_call = match self.slots.get(s) {
                    Some(slot) => slot.args.finish(&self.partial, block),
                    None => Value::Null,
                };
                if let Some(ns) = item.get("namespace").filter(|n| n.is_string()) {
                    self.edit(block, |b| b.put("namespace", ns.clone()));
                    if let Value::Object(o) = &mut tool_call {
                        o.put("namespace", ns.clone());
                    }
                }
                self.unfinished.retain(|&b| b != block);
                out.push(AssistantMessageEvent::ToolcallEnd {
                    content_index: block,
                    tool_call,
                    partial: self.partial.clone(),
                });
            }
            _ => return,
        }
        self.slots.remove(s);
    }

    /// `response.completed`/`response.incomplete`: signatures, id, usage, stop reason.
    fn finalize(&mut self, response: &Value) -> Result<(), String> {
        self.terminal = true;
        // Some servers send a reasoning item's encrypted content only in the final output.
        for item in response
            .get("output")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(encrypted) = item.get("encrypted_content").filter(|e| is_truthy(e)) else {
                continue;
            };
            if str_of(item, "type") != Some("reasoning") {
                continue;
            }
            let Some(&(_, block)) = self
                .reasoning
                .iter()
                .find(|(id, _)| Some(id.as_str()) == str_of(item, "id"))
            else {
                continue;
            };
            self.late.push(block);
            self.edit(block, |b| {
                let stored = b
                    .get("thinkingSignature")
                    .and_then(Value::as_str)
                    .and_then(|s| crate::json::parse(s).ok());
                if let Some(Value::Object(mut stored)) = stored {
                    if stored.get("encrypted_content").is_some_and(is_truthy) {
                        return;
                    }
                    stored.put("encrypted_content", encrypted.clone());
                    let text = json_stringify(&Value::Object(stored));
                    b.put("thinkingSignature", text.into());
                }
            });
        }
        if let Some(id) = response.get("id").filter(|i| is_truthy(i)) {
            self.set("responseId", id.clone());
        }
        let n = |v: Option<&Value>| v.and_then(Value::as_f64).unwrap_or(0.0);
        let mut usage = match response.get("usage").filter(|u| is_truthy(u)) {
            Some(u) => {
                let cached = n(u
                    .get("input_tokens_details")
                    .and_then(|d| d.get("cached_tokens")));
                let written = n(u
                    .get("input_tokens_details")
                    .and_then(|d| d.get("cache_write_tokens")));
                Usage {
                    input: (n(u.get("input_tokens")) - cached - written).max(0.0),
                    output: n(u.get("output_tokens")),
                    cache_read: cached,
                    cache_write: written,
                    reasoning: Some(n(u
                        .get("output_tokens_details")
                        .and_then(|d| d.get("reasoning_tokens")))),
                    total_tokens: n(u.get("total_tokens")),
                    ..Usage::default()
                }
            }
            None => self
                .partial
                .borrow()
                .get("usage")
                .and_then(Usage::from_value)
                .unwrap_or_default(),
        };
        calculate_cost(&self.model, &mut usage);
        let multiplier = tier_multiplier(&self.model, str_of(response, "service_tier"));
        if multiplier != 1.0 {
            let c = &mut usage.cost;
            c.input *= multiplier;
            c.output *= multiplier;
            c.cache_read *= multiplier;
            c.cache_write *= multiplier;
            c.total = c.input + c.output + c.cache_read + c.cache_write;
        }
        self.set("usage", usage.to_value());
        let status = str_of(response, "status");
        let reason = response
            .get("incomplete_details")
            .and_then(|d| d.get("reason"))
            .and_then(Value::as_str);
        match (status, reason) {
            (Some(s), Some(r)) => self.set("rawStopReason", format!("{s}.{r}").into()),
            (Some(s), None) => self.set("rawStopReason", s.into()),
            (None, _) => {}
        }
        let (mut stop, error) = map_stop_reason(status, reason)?;
        if stop == StopReason::Stop && super::has_tool_call(&self.partial) {
            stop = StopReason::ToolUse;
        }
        self.set("stopReason", stop.as_str().into());
        match error {
            Some(e) => self.set("errorMessage", e.into()),
            None => {
                if let Value::Object(o) = &mut *self.partial.borrow_mut() {
                    o.shift_remove("errorMessage");
                }
            }
        }
        Ok(())
    }

    /// The body ended: `done`, or the error the stream amounts to.
    pub fn finish(&mut self, out: &mut Vec<AssistantMessageEvent>) -> AgentMessage {
        if !self.terminal {
            return self.fail(
                "OpenAI Responses stream ended before a terminal response event",
                false,
                out,
            );
        }
        if super::field_str(&self.partial, "stopReason") == "toolUse" {
            if let Some(&block) = self.unfinished.first() {
                let (name, id) = self
                    .edit(block, |b| {
                        let b = Value::Object(b.clone());
                        (js_string(b.get("name")), js_string(b.get("id")))
                    })
                    .unwrap_or_default();
                let message = format!(
                    "OpenAI Responses stream completed with an unfinished tool call: {name} ({id})"
                );
                return self.fail(&message, false, out);
            }
        }
        super::end_by_stop_reason(
            &self.partial,
            "OpenAI Responses stream ended without a stop reason",
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
