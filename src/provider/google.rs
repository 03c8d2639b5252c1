//! `google-generative-ai` (Gemini `streamGenerateContent?alt=sse`) responses, as pi-ai 1.6.0
//! decodes them: each SSE event is a `GenerateContentResponse`; the parts of its first
//! candidate become text and thinking blocks (`thought: true`), a block ending when the part
//! kind changes, and every `functionCall` part one complete tool call (start, one delta with
//! the arguments as JSON, end). `usageMetadata` gives usage and cost, `finishReason` the stop
//! reason. <https://ai.google.dev/api/generate-content#v1beta.GenerateContentResponse>
//!
//! Better than pi-ai: a function call streamed in fragments (`partialArgs` with `jsonPath`
//! and `willContinue`, Vertex AI's `streamFunctionCallArguments`) forms one tool call with the
//! arguments put together, where pi-ai makes one empty call per fragment.

use crate::json::Put;
use std::rc::Rc;

use crate::json::{Map, Value};

use super::usage::calculate_cost;
use crate::event::{AssistantMessageEvent, Partial};
use crate::json::json_stringify;
use crate::message::{AgentMessage, StopReason, Usage};

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Text,
    Thinking,
}

/// A function call whose arguments are still arriving in `partialArgs` fragments.
struct Streaming {
    block: usize,
}

thread_local! {
    /// Ids generated for calls sent without one (see [`GoogleDecoder`]'s use).
    static CALLS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

pub struct GoogleDecoder {
    model: Rc<Value>,
    partial: Partial,
    current: Option<(Kind, usize)>,
    streaming: Option<Streaming>,
    /// For ids of calls the server sent without one (pi-ai: `name_time_counter`).
    now: f64,
    /// A finish reason arrived: only usage may follow.
    pub(crate) finished: bool,
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// pi-ai's `mapStopReason`; `Err` for a reason it does not know.
fn map_stop_reason(reason: &str) -> Result<StopReason, String> {
    Ok(match reason {
        "STOP" => StopReason::Stop,
        "MAX_TOKENS" | "CONTINUATION" => StopReason::Length,
        "BLOCKLIST"
        | "PROHIBITED_CONTENT"
        | "SPII"
        | "SAFETY"
        | "IMAGE_SAFETY"
        | "IMAGE_PROHIBITED_CONTENT"
        | "IMAGE_RECITATION"
        | "IMAGE_OTHER"
        | "RECITATION"
        | "FINISH_REASON_UNSPECIFIED"
        | "OTHER"
        | "LANGUAGE"
        | "MALFORMED_FUNCTION_CALL"
        | "UNEXPECTED_TOOL_CALL"
        | "TOO_MANY_TOOL_CALLS"
        | "NO_IMAGE" => StopReason::Error,
        other => return Err(format!("Unhandled stop reason: {other}")),
    })
}

/// Puts `value` at `path` (`$.a.b[0].c`) in `root`, creating objects and arrays on the way;
/// a string fragment for a path that holds a string is appended.
fn put_at_path(root: &mut Value, path: &str, value: Value, append: bool) -> Result<(), String> {
    let mut segments: Vec<Result<String, usize>> = Vec::new();
    let rest = path.strip_prefix('$').unwrap_or(path);
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '.' => {
                let mut name = String::new();
                while let Some(&n) = chars.peek() {
                    if n == '.' || n == '[' {
                        break;
                    }
                    name.push(n);
                    chars.next();
                }
                segments.push(Ok(name));
            }
            '[' => {
                let mut inner = String::new();
                for n in chars.by_ref() {
                    if n == ']' {
                        break;
                    }
                    inner.push(n);
                }
                let inner = inner.trim();
                match inner.parse::<usize>() {
                    Ok(i) => segments.push(Err(i)),
                    Err(_) => segments.push(Ok(inner.trim_matches(['\'', '"']).to_string())),
                }
            }
            _ => {}
        }
    }
    let mut node = root;
    for (i, seg) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        let next_is_index = matches!(segments.get(i + 1), Some(Err(_)));
        let fresh = || {
            if next_is_index {
                Value::Array(Vec::new())
            } else {
                Value::Object(Map::new())
            }
        };
        node = match seg {
            Ok(key) => {
                if !node.is_object() {
                    *node = Value::Object(Map::new());
                }
                let Value::Object(o) = node else {
                    return Ok(());
                };
                let Some(slot) =
                    o.get_or_insert_with(key, || if last { Value::Null } else { fresh() })
                else {
                    return Ok(());
                };
                if last {
                    set_or_append(slot, value, append);
                    return Ok(());
                }
                slot
            }
            Err(index) => {
                if !node.is_array() {
                    *node = Value::Array(Vec::new());
                }
                let Value::Array(a) = node else {
                    return Ok(());
                };
                // Elements arrive in order: an index may name an element or the next one.
                // One further on would leave a gap, and an index like 10^19 would ask for
                // more memory than there is (filling the gap ran the instance out of memory).
                if *index > a.len() {
                    return Err(format!(
                        "Gemini sent function call arguments at {path}, past the end of an array of {}",
                        a.len()
                    ));
                }
                if *index == a.len() {
                    a.push(Value::Null);
                }
                let Some(slot) = a.get_mut(*index) else {
                    return Ok(());
                };
                if last {
                    set_or_append(slot, value, append);
                    return Ok(());
                }
                if slot.is_null() {
                    *slot = fresh();
                }
                slot
            }
        };
    }
    *node = value;
    Ok(())
}

fn set_or_append(slot: &mut Value, value: Value, append: bool) {
    match (slot, value) {
        (Value::String(s), Value::String(more)) if append => crate::json::push_str(s, &more),
        (slot, value) => *slot = value,
    }
}

impl GoogleDecoder {
    pub fn new(model: Rc<Value>, now: f64) -> Self {
        let partial = super::new_partial(&model, "google-generative-ai", now);
        GoogleDecoder {
            model,
            partial,
            current: None,
            streaming: None,
            now,
            finished: false,
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

    fn get(&self, key: &str) -> Value {
        self.partial
            .borrow()
            .get(key)
            .cloned()
            .unwrap_or(Value::Null)
    }

    fn push_block(&self, block: Value) -> usize {
        super::push_block(&self.partial, block)
    }

    fn with_block<T>(&self, index: usize, f: impl FnOnce(&mut Map) -> T) -> Option<T> {
        let mut p = self.partial.borrow_mut();
        match p.get_mut("content").and_then(|c| c.get_mut(index)) {
            Some(Value::Object(b)) => Some(f(b)),
            _ => None,
        }
    }

    /// Ends the open text or thinking block, if any.
    fn close_current(&mut self, out: &mut Vec<AssistantMessageEvent>) {
        let Some((kind, index)) = self.current.take() else {
            return;
        };
        let field = if kind == Kind::Text {
            "text"
        } else {
            "thinking"
        };
        let content = self
            .with_block(index, |b| {
                b.get(field)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            })
            .unwrap_or_default();
        let partial = self.partial.clone();
        out.push(match kind {
            Kind::Text => AssistantMessageEvent::TextEnd {
                content_index: index,
                content,
                partial,
            },
            Kind::Thinking => AssistantMessageEvent::ThinkingEnd {
                content_index: index,
                content,
                partial,
            },
        });
    }

    fn has_tool_call(&self, id: &str) -> bool {
        self.partial
            .borrow()
            .get("content")
            .and_then(Value::as_array)
            .is_some_and(|blocks| {
                blocks
                    .iter()
                    .any(|b| str_of(b, "type") == Some("toolCall") && str_of(b, "id") == Some(id))
            })
    }

    fn text_part(&mut self, part: &Value, text: &str, out: &mut Vec<AssistantMessageEvent>) {
        let kind = if part.get("thought") == Some(&Value::Bool(true)) {
            Kind::Thinking
        } else {
            Kind::Text
        };
        let index = match self.current {
            Some((k, i)) if k == kind => i,
            _ => {
                self.close_current(out);
                let block = match kind {
                    Kind::Thinking => crate::value!({"type": "thinking", "thinking": ""}),
                    Kind::Text => crate::value!({"type": "text", "text": ""}),
                };
                let index = self.push_block(block);
                self.current = Some((kind, index));
                let partial = self.partial.clone();
                out.push(match kind {
                    Kind::Text => AssistantMessageEvent::TextStart {
                        content_index: index,
                        partial,
                    },
                    Kind::Thinking => AssistantMessageEvent::ThinkingStart {
                        content_index: index,
                        partial,
                    },
                });
                index
            }
        };
        let signature = str_of(part, "thoughtSignature").filter(|s| !s.is_empty());
        let (field, sig_field) = match kind {
            Kind::Text => ("text", "textSignature"),
            Kind::Thinking => ("thinking", "thinkingSignature"),
        };
        self.with_block(index, |b| {
            if let Some(Value::String(s)) = b.get_mut(field) {
                crate::json::push_str(s, text);
            }
            if let Some(sig) = signature {
                b.insert(sig_field.into(), sig.into());
            }
        });
        let partial = self.partial.clone();
        out.push(match kind {
            Kind::Text => AssistantMessageEvent::TextDelta {
                content_index: index,
                delta: text.to_string(),
                partial,
            },
            Kind::Thinking => AssistantMessageEvent::ThinkingDelta {
                content_index: index,
                delta: text.to_string(),
                partial,
            },
        });
    }

    fn function_call(
        &mut self,
        part: &Value,
        call: &Value,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<(), String> {
        self.close_current(out);
        let fragments = call.get("partialArgs").and_then(Value::as_array);
        let continues = call.get("willContinue") == Some(&Value::Bool(true));
        // A fragment of the call being streamed.
        if let Some(s) = &self.streaming {
            let block = s.block;
            let mut delta = Map::new();
            for f in fragments.into_iter().flatten() {
                self.apply_fragment(block, f, &mut delta)?;
            }
            if let Some(args) = call.get("args").filter(|a| a.is_object()) {
                self.with_block(block, |b| {
                    b.put("arguments", args.clone());
                });
            }
            out.push(self.call_delta(block, json_stringify(&Value::Object(delta))));
            if !continues {
                self.streaming = None;
                self.end_call(block, out);
            }
            return Ok(());
        }
        let name = str_of(call, "name").unwrap_or("");
        let provided = str_of(call, "id").filter(|id| !id.is_empty());
        let id = match provided {
            Some(id) if !self.has_tool_call(id) => id.to_string(),
            // pi-ai's `name_time_counter`, its counter one for the whole instance (as pi-ai's
            // module's), so ids stay distinct across responses made in the same millisecond.
            _ => format!(
                "{name}_{}_{}",
                crate::jsnum::to_js_string(self.now),
                CALLS.with(|n| {
                    n.set(n.get() + 1);
                    n.get()
                })
            ),
        };
        let mut block = Map::new();
        block.put("type", "toolCall".into());
        block.put("id", id.into());
        block.put("name", name.into());
        let args = call
            .get("args")
            .filter(|a| !a.is_null())
            .cloned()
            .unwrap_or_else(|| Value::Object(Map::new()));
        block.put("arguments", args);
        if let Some(sig) = str_of(part, "thoughtSignature").filter(|s| !s.is_empty()) {
            block.put("thoughtSignature", sig.into());
        }
        let index = self.push_block(Value::Object(block));
        out.push(AssistantMessageEvent::ToolcallStart {
            content_index: index,
            partial: self.partial.clone(),
            text: None,
        });
        if fragments.is_some() || continues {
            let mut delta = Map::new();
            for f in fragments.into_iter().flatten() {
                self.apply_fragment(index, f, &mut delta)?;
            }
            out.push(self.call_delta(index, json_stringify(&Value::Object(delta))));
            if continues {
                self.streaming = Some(Streaming { block: index });
            } else {
                self.end_call(index, out);
            }
            return Ok(());
        }
        let args = self
            .with_block(index, |b| {
                b.get("arguments").cloned().unwrap_or(Value::Null)
            })
            .unwrap_or(Value::Null);
        out.push(self.call_delta(index, json_stringify(&args)));
        self.end_call(index, out);
        Ok(())
    }

    /// One `PartialArg`: its value at its `jsonPath` in the call's arguments. `Err` for a
    /// path that cannot be placed.
    fn apply_fragment(
        &self,
        block: usize,
        fragment: &Value,
        delta: &mut Map,
    ) -> Result<(), String> {
        let Some(path) = str_of(fragment, "jsonPath") else {
            return Ok(());
        };
        let (value, append) = if let Some(s) = fragment.get("stringValue").and_then(Value::as_str) {
            (Value::String(s.to_string()), true)
        } else if let Some(n) = fragment.get("numberValue").filter(|n| n.is_number()) {
            (n.clone(), false)
        } else if let Some(b) = fragment.get("boolValue").filter(|b| b.is_boolean()) {
            (b.clone(), false)
        } else if fragment.get("nullValue").is_some() {
            (Value::Null, false)
        } else {
            return Ok(());
        };
        delta.insert(path.to_string(), value.clone());
        self.with_block(block, |b| {
            let args = b.get_or_insert_with("arguments", || Value::Object(Map::new()))?;
            Some(put_at_path(args, path, value, append))
        })
        .flatten()
        .unwrap_or(Ok(()))
    }

    /// A delta for the call at `index`: `text` as its JSON text, and the call's arguments as
    /// they now stand as the edit (Gemini sends arguments whole, or a few fragments).
    fn call_delta(&self, index: usize, text: String) -> AssistantMessageEvent {
        let args = self
            .with_block(index, |b| {
                b.get("arguments").cloned().unwrap_or(Value::Null)
            })
            .unwrap_or(Value::Null);
        AssistantMessageEvent::ToolcallDelta {
            content_index: index,
            delta: text,
            partial: self.partial.clone(),
            replaced: Some(args),
        }
    }

    fn end_call(&self, index: usize, out: &mut Vec<AssistantMessageEvent>) {
        let tool_call = self
            .with_block(index, |b| Value::Object(b.clone()))
            .unwrap_or(Value::Null);
        out.push(AssistantMessageEvent::ToolcallEnd {
            content_index: index,
            tool_call,
            partial: self.partial.clone(),
        });
    }

    /// Decodes one `data:` payload. `Err` names what was wrong; the response then ends.
    pub fn chunk(
        &mut self,
        data: &str,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<(), String> {
        let chunk: Value =
            crate::json::parse(data).map_err(|e| format!("Malformed JSON in stream event: {e}"))?;
        // @google/genai's check of each chunk: an error object with an HTTP code (400 to 599)
        // ends the stream; one without is read on as a chunk.
        if let Some(err) = chunk.get("error").filter(|e| e.is_object()) {
            if err
                .get("code")
                .and_then(Value::as_f64)
                .is_some_and(|c| (400.0..600.0).contains(&c))
            {
                return Err(format!(
                    "got status: {}. {}",
                    super::js_string(err.get("status")),
                    crate::json::json_stringify(&chunk)
                ));
            }
        }
        let has_id = matches!(self.get("responseId"), Value::String(s) if !s.is_empty());
        if !has_id {
            if let Some(id) = chunk.get("responseId").filter(|v| !v.is_null()) {
                self.set("responseId", id.clone());
            }
        }
        let candidate = chunk
            .get("candidates")
            .and_then(Value::as_array)
            .and_then(|c| c.first());
        if let Some(parts) = candidate
            .and_then(|c| c.get("content"))
            .and_then(|c| c.get("parts"))
            .and_then(Value::as_array)
        {
            for part in parts {
                if let Some(text) = part.get("text").and_then(Value::as_str) {
                    self.text_part(part, text, out);
                }
                if let Some(call) = part.get("functionCall").filter(|c| c.is_object()) {
                    self.function_call(part, call, out)?;
                }
            }
        }
        if let Some(reason) = candidate.and_then(|c| str_of(c, "finishReason")) {
            self.finished = true;
            self.set("rawStopReason", reason.into());
            let mut stop = map_stop_reason(reason)?;
            if stop == StopReason::Stop && super::has_tool_call(&self.partial) {
                stop = StopReason::ToolUse;
            }
            self.set("stopReason", stop.as_str().into());
        }
        if let Some(meta) = chunk.get("usageMetadata").filter(|m| m.is_object()) {
            let n = |k: &str| meta.get(k).and_then(Value::as_f64).unwrap_or(0.0);
            let cached = n("cachedContentTokenCount");
            let thoughts = n("thoughtsTokenCount");
            let mut usage = Usage {
                input: n("promptTokenCount") - cached,
                output: n("candidatesTokenCount") + thoughts,
                cache_read: cached,
                cache_write: 0.0,
                reasoning: Some(thoughts),
                total_tokens: n("totalTokenCount"),
                ..Usage::default()
            };
            calculate_cost(&self.model, &mut usage);
            self.set("usage", usage.to_value());
        }
        Ok(())
    }

    /// The body ended: closes the open block, then `done` or the error it amounts to.
    pub fn finish(&mut self, out: &mut Vec<AssistantMessageEvent>) -> AgentMessage {
        self.close_current(out);
        if let Some(s) = self.streaming.take() {
            // A fragmented call the stream never finished keeps what arrived.
            self.end_call(s.block, out);
        }
        let stop = self.get("stopReason");
        match stop.as_str() {
            Some("pending") | None => {
                self.fail("Google stream ended without a finish reason", false, out)
            }
            Some("error") | Some("aborted") => {
                let message = match self.get("rawStopReason") {
                    Value::String(r) if !r.is_empty() => format!("Provider stopped with: {r}"),
                    _ => "An unknown error occurred".to_string(),
                };
                self.fail(&message, false, out)
            }
            Some(reason) => super::done_partial(&self.partial, reason, out),
        }
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
