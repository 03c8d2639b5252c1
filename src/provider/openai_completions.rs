//! Decoding of OpenAI Chat Completions streams (`openai-completions`, also every compatible
//! server): the `data:` payloads of the SSE body become pi's `AssistantMessageEvent`s and the
//! final `AssistantMessage`, as pi-ai 1.6.0's provider builds them.
//! <https://platform.openai.com/docs/api-reference/chat-streaming/streaming>
//!
//! Pure: no IO, no clock (the request time comes in). The partial message is one live value
//! shared by every event (L-19) and grows in place, so a delta costs O(delta); tool-call
//! arguments are parsed incrementally and patched into the partial with edit records.
//!
//! Where pi-ai 1.6.0 gets a stream wrong, this gets it right (tested on their own):
//! - `content` sent as an array of parts (some compatible servers) is read as its text, not
//!   `"[object Object]"`;
//! - parallel tool calls that a server numbers with the same `index` but distinct `id`s keep
//!   their own arguments.
//!
//! OpenRouter's `reasoning_details` become the thinking block's signature, as in pi-ai. Not
//! read: grammar ("custom") tools.

use crate::json::Put;
use std::borrow::Cow;
use std::rc::Rc;

use crate::json::Value;

use super::usage::calculate_cost;
use super::{Decoder, ToolArgs};
use crate::event::{AssistantMessageEvent, Partial};
use crate::message::{AgentMessage, StopReason};

/// One streamed tool call: its block, the server's index and id for it, and its arguments.
struct ToolCallState {
    block: usize,
    /// Any number, as pi-ai keys its calls by `typeof index === "number"`.
    index: Option<f64>,
    id: String,
    args: ToolArgs,
}

pub struct ChatCompletionsDecoder {
    model: Rc<Value>,
    partial: Partial,
    text: Option<usize>,
    thinking: Option<usize>,
    /// OpenRouter's `reasoning_details` streamed so far, merged as pi-ai merges them; they
    /// become the thinking block's signature when it closes (replayed in the next request).
    details: Option<Vec<Detail>>,
    calls: Vec<ToolCallState>,
    has_finish_reason: bool,
    has_response_id: bool,
    /// Where `responseId` stands among the partial's keys (see `apply`).
    id_slot: Option<usize>,
    has_response_model: bool,
    model_id: String,
}

/// The fields of a chunk the decoder reads, borrowed from its text where possible.
#[derive(Default)]
struct Wire<'a> {
    id: Option<Cow<'a, str>>,
    model: Option<Cow<'a, str>>,
    /// `Some(Null)` for `"usage": null`: only an absent or null one lets the choice's count.
    usage: Option<Value>,
    /// The first choice (the others are skipped without being kept).
    choice: Option<WireChoice<'a>>,
    /// An error reported inside the stream (OpenRouter and other proxies do).
    error: Option<Value>,
}

#[derive(Default)]
struct WireChoice<'a> {
    delta: Option<WireDelta<'a>>,
    finish_reason: Option<Cow<'a, str>>,
    usage: Option<Value>,
}

#[derive(Default)]
struct WireDelta<'a> {
    content: Option<Cow<'a, str>>,
    reasoning_content: Option<Cow<'a, str>>,
    reasoning: Option<Cow<'a, str>>,
    reasoning_text: Option<Cow<'a, str>>,
    reasoning_details: Option<Value>,
    tool_calls: Option<Vec<WireCall<'a>>>,
}

#[derive(Default)]
struct WireCall<'a> {
    index: Option<f64>,
    id: Option<Cow<'a, str>>,
    function: Option<WireFunction<'a>>,
}

#[derive(Default)]
struct WireFunction<'a> {
    name: Option<Cow<'a, str>>,
    arguments: Option<Cow<'a, str>>,
}

/// The typed reading of a chunk of the usual shape, straight from its text (no tree):
/// strings borrowed, unknown fields skipped. It is strict (a field of another type, a `null`
/// where an object belongs in a list) and gives up on the first surprise; the chunk is then
/// read from the tree ([`Wire::lenient`]). The unit tests hold the two readings to the same
/// decoding of generated streams.
mod read {
    use std::borrow::Cow;

    use crate::json::Value;

    use super::{Wire, WireCall, WireChoice, WireDelta, WireFunction};
    use crate::json::{Reader, MAX_DEPTH};

    /// `None` for a surprise (or text that is not JSON), in every function here.
    type Read<T> = Option<T>;

    /// A string or `null` (as none).
    fn text<'a>(r: &mut Reader<'a>) -> Read<Option<Cow<'a, str>>> {
        if r.null().ok()? {
            return Some(None);
        }
        r.string().ok().map(Some)
    }

    /// A value kept whole; `null` as absent.
    fn value(r: &mut Reader<'_>) -> Read<Option<Value>> {
        Some(Some(r.value().ok()?).filter(|v| !v.is_null()))
    }

    /// An object's members, each key given to `member` with the reader at its value. A key
    /// given twice: the last value counts, as in JSON.parse (and the tree).
    fn members<'a>(
        r: &mut Reader<'a>,
        mut member: impl FnMut(&mut Reader<'a>, &str) -> Read<()>,
    ) -> Read<()> {
        if !r.open(b'{').ok()? {
            return None;
        }
        let mut first = true;
        while r.more(b'}', &mut first).ok()? {
            let key = r.key().ok()?;
            member(r, &key)?;
        }
        Some(())
    }

    /// An object, or `null` as none.
    fn object<'a, T: Default>(
        r: &mut Reader<'a>,
        read: impl FnOnce(&mut Reader<'a>, &mut T) -> Read<()>,
    ) -> Read<Option<T>> {
        if r.null().ok()? {
            return Some(None);
        }
        let mut t = T::default();
        read(r, &mut t)?;
        Some(Some(t))
    }

    fn skip(r: &mut Reader<'_>) -> Read<()> {
        r.skip().ok()
    }

    /// The chunk `data`, read typed; `None` when it is not of the usual shape (or not JSON).
    pub(super) fn chunk_of(data: &str) -> Option<Wire<'_>> {
        let mut r = Reader::new(data, MAX_DEPTH);
        let mut w = Wire::default();
        members(&mut r, |r, key| {
            match key {
                "id" => w.id = text(r)?,
                "model" => w.model = text(r)?,
                // `null` kept: it tells the choice's count not to be used.
                "usage" => w.usage = Some(r.value().ok()?),
                "choices" => w.choice = choices(r)?,
                "error" => w.error = value(r)?,
                _ => skip(r)?,
            }
            Some(())
        })?;
        r.end().ok()?;
        Some(w)
    }

    /// `choices`: the first one (an object), the rest skipped; `null` as none.
    fn choices<'a>(r: &mut Reader<'a>) -> Read<Option<WireChoice<'a>>> {
        if r.null().ok()? {
            return Some(None);
        }
        if !r.open(b'[').ok()? {
            return None;
        }
        let mut first = true;
        let mut out = None;
        while r.more(b']', &mut first).ok()? {
            if out.is_none() {
                out = Some(object(r, choice)??);
            } else {
                skip(r)?;
            }
        }
        Some(out)
    }

    fn choice<'a>(r: &mut Reader<'a>, c: &mut WireChoice<'a>) -> Read<()> {
        members(r, |r, key| {
            match key {
                "delta" => c.delta = object(r, delta)?,
                "finish_reason" => c.finish_reason = text(r)?,
                "usage" => c.usage = value(r)?,
                _ => skip(r)?,
            }
            Some(())
        })
    }

    fn delta<'a>(r: &mut Reader<'a>, d: &mut WireDelta<'a>) -> Read<()> {
        members(r, |r, key| {
            match key {
                "content" => d.content = text(r)?,
                "reasoning_content" => d.reasoning_content = text(r)?,
                "reasoning" => d.reasoning = text(r)?,
                "reasoning_text" => d.reasoning_text = text(r)?,
                "reasoning_details" => d.reasoning_details = value(r)?,
                "tool_calls" => d.tool_calls = calls(r)?,
                _ => skip(r)?,
            }
            Some(())
        })
    }

    /// `tool_calls`: a list of objects, or `null` as none.
    fn calls<'a>(r: &mut Reader<'a>) -> Read<Option<Vec<WireCall<'a>>>> {
        if r.null().ok()? {
            return Some(None);
        }
        if !r.open(b'[').ok()? {
            return None;
        }
        let mut first = true;
        let mut out = Vec::new();
        while r.more(b']', &mut first).ok()? {
            let mut c = WireCall::default();
            call(r, &mut c)?;
            out.push(c);
        }
        Some(Some(out))
    }

    fn call<'a>(r: &mut Reader<'a>, c: &mut WireCall<'a>) -> Read<()> {
        members(r, |r, key| {
            match key {
                "index" => {
                    c.index = if r.null().ok()? {
                        None
                    } else if matches!(r.peek(), Some(b'-' | b'0'..=b'9')) {
                        Some(r.number().ok()?.as_f64()?)
                    } else {
                        return None;
                    }
                }
                "id" => c.id = text(r)?,
                "function" => c.function = object(r, function)?,
                _ => skip(r)?,
            }
            Some(())
        })
    }

    fn function<'a>(r: &mut Reader<'a>, f: &mut WireFunction<'a>) -> Read<()> {
        members(r, |r, key| {
            match key {
                "name" => f.name = text(r)?,
                "arguments" => f.arguments = text(r)?,
                _ => skip(r)?,
            }
            Some(())
        })
    }
}

impl<'a> Wire<'a> {
    /// The view of a chunk of any shape, read as pi-ai's JS reads it: fields of the wrong
    /// type count as absent. `None` for a chunk that is not an object.
    fn lenient(chunk: &'a Value) -> Option<Wire<'a>> {
        if !chunk.is_object() {
            return None;
        }
        let text = |v: &'a Value, k: &str| str_of(v, k).map(Cow::Borrowed);
        let choice = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
            .map(|c| WireChoice {
                finish_reason: text(c, "finish_reason"),
                usage: c.get("usage").cloned(),
                delta: c.get("delta").map(|d| WireDelta {
                    content: d.get("content").and_then(content_text).map(Cow::Owned),
                    reasoning_content: text(d, "reasoning_content"),
                    reasoning: text(d, "reasoning"),
                    reasoning_text: text(d, "reasoning_text"),
                    reasoning_details: d.get("reasoning_details").cloned(),
                    tool_calls: d.get("tool_calls").and_then(Value::as_array).map(|calls| {
                        calls
                            .iter()
                            .map(|call| WireCall {
                                index: call.get("index").and_then(Value::as_f64),
                                id: text(call, "id"),
                                function: call.get("function").map(|f| WireFunction {
                                    name: text(f, "name"),
                                    // pi-ai appends any truthy value as its text: an
                                    // object's is "[object Object]", no JSON.
                                    arguments: match f.get("arguments") {
                                        Some(Value::String(s)) => Some(Cow::Borrowed(s.as_str())),
                                        a => super::truthy_string(a).map(Cow::Owned),
                                    },
                                }),
                            })
                            .collect()
                    }),
                }),
            });
        Some(Wire {
            id: text(chunk, "id"),
            model: text(chunk, "model"),
            usage: chunk.get("usage").cloned(),
            choice,
            error: chunk.get("error").cloned(),
        })
    }
}

/// The message of an error a chunk reports, worded as pi-ai's client words it: the error's
/// `message` (a string as is, else as JSON), else the whole error as JSON; then the
/// provider's `metadata.raw` on a line of its own, when it adds anything. `None` when the
/// chunk reports none (`error` absent or falsy, as JS tests it).
fn stream_error(error: Option<&Value>) -> Option<String> {
    let error = error.filter(|e| crate::json::is_truthy(e))?;
    let mut text = match error.get("message").filter(|m| crate::json::is_truthy(m)) {
        Some(Value::String(m)) => m.clone(),
        Some(m) => crate::json::json_stringify(m),
        None => crate::json::json_stringify(error),
    };
    let raw = match error.get("metadata").and_then(|m| m.get("raw")) {
        Some(Value::String(r)) if !r.is_empty() => Some(r.clone()),
        Some(Value::Number(n)) => n.as_f64().map(crate::jsnum::to_js_string),
        Some(Value::Bool(true)) => Some("true".into()),
        Some(Value::Object(_)) => Some("[object Object]".into()),
        _ => None,
    };
    if let Some(raw) = raw.filter(|r| !crate::text::contains(&text, r)) {
        text.push('\n');
        text.push_str(&raw);
    }
    Some(text)
}

/// pi-ai's `mapStopReason`.
fn map_stop_reason(reason: &str) -> (StopReason, Option<String>) {
    match reason {
        "stop" | "end" => (StopReason::Stop, None),
        "length" => (StopReason::Length, None),
        "function_call" | "tool_calls" => (StopReason::ToolUse, None),
        other => (
            StopReason::Error,
            Some(format!("Provider finish_reason: {other}")),
        ),
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// The text of a `content` delta: a string, or (an improvement over pi-ai) the text parts of
/// an array of parts.
fn content_text(content: &Value) -> Option<String> {
    match content {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Array(parts) => {
            let text: String = parts
                .iter()
                .filter_map(|p| {
                    p.as_str()
                        .map(str::to_string)
                        .or_else(|| str_of(p, "text").map(str::to_string))
                })
                .collect();
            (!text.is_empty()).then_some(text)
        }
        _ => None,
    }
}

impl ChatCompletionsDecoder {
    /// A decoder for one response; `now` is the request time (the message's `timestamp`).
    pub fn new(model: Rc<Value>, now: f64) -> Self {
        let model_id = str_of(&model, "id").unwrap_or("").to_string();
        let api = model
            .get("api")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let partial = super::new_partial(&model, &api, now);
        ChatCompletionsDecoder {
            model,
            partial,
            text: None,
            thinking: None,
            details: None,
            calls: Vec::new(),
            has_finish_reason: false,
            has_response_id: false,
            id_slot: None,
            has_response_model: false,
            model_id,
        }
    }

    /// The `start` event (pushed once the response arrived).
    pub fn start(&self) -> AssistantMessageEvent {
        AssistantMessageEvent::Start {
            partial: self.partial.clone(),
        }
    }

    fn set(&self, key: &str, value: Value) {
        super::set_field(&self.partial, key, value);
    }

    /// Pushes a new content block; returns its index.
    fn push_block(&self, block: Value) -> usize {
        super::push_block(&self.partial, block)
    }

    /// Appends `delta` to the string field `key` of block `index`, in place.
    fn grow(&self, index: usize, key: &str, delta: &str) {
        super::grow_block(&self.partial, index, key, delta);
    }

    /// Decodes one `data:` payload; events go to `out`. `Err` names malformed JSON.
    ///
    /// A chunk of the usual shape is read straight into borrowed typed fields, without
    /// building a JSON tree; any other (odd types, arrays of content parts)
    /// is read from the tree with JS-like leniency. Both give the same `Wire` view, and one
    /// path applies it.
    pub fn chunk(
        &mut self,
        data: &str,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<(), String> {
        let malformed = |e| format!("Malformed JSON in stream event: {e}");
        if let Some(wire) = read::chunk_of(data) {
            return self.apply(wire, out);
        }
        let chunk: Value = crate::json::parse(data).map_err(malformed)?;
        match Wire::lenient(&chunk) {
            Some(wire) => self.apply(wire, out),
            None => Ok(()),
        }
    }

    /// `Err` when the chunk reports an error: the response ends with its message and what
    /// came before, and nothing else of that chunk is applied (pi-ai's client throws on it).
    fn apply(
        &mut self,
        chunk: Wire<'_>,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<(), String> {
        if let Some(message) = stream_error(chunk.error.as_ref()) {
            return Err(message);
        }
        // pi-ai's `output.responseId ||= chunk.id` on every chunk: the first one creates the
        // key where it stands (undefined, so not shown, when that chunk has no id).
        let slot = *self
            .id_slot
            .get_or_insert_with(|| self.partial.borrow().as_object().map_or(0, |o| o.len()));
        if !self.has_response_id {
            if let Some(id) = chunk.id {
                super::set_field_at(&self.partial, slot, "responseId", id.as_ref().into());
                self.has_response_id = !id.is_empty();
            }
        }
        if let Some(m) = chunk.model.filter(|m| !m.is_empty()) {
            if !self.has_response_model && m.as_ref() != self.model_id {
                self.set("responseModel", m.as_ref().into());
                self.has_response_model = true;
            }
        }
        let usage_missing = chunk.usage.as_ref().is_none_or(Value::is_null);
        if let Some(u) = chunk.usage.filter(Value::is_object) {
            self.set("usage", self.usage(&u));
        }
        let Some(choice) = chunk.choice else {
            return Ok(());
        };
        if usage_missing {
            // Some providers (Moonshot) put usage on the choice.
            if let Some(u) = choice.usage.filter(Value::is_object) {
                self.set("usage", self.usage(&u));
            }
        }
        if let Some(reason) = choice.finish_reason {
            let (stop, error) = map_stop_reason(&reason);
            self.set("rawStopReason", reason.as_ref().into());
            self.set("stopReason", stop.as_str().into());
            if let Some(e) = error {
                self.set("errorMessage", e.into());
            }
            self.has_finish_reason = true;
        }
        let Some(delta) = choice.delta else {
            return Ok(());
        };
        // Reasoning before content: some proxies send both in one delta.
        let reasoning = [
            ("reasoning_content", delta.reasoning_content),
            ("reasoning", delta.reasoning),
            ("reasoning_text", delta.reasoning_text),
        ];
        if let Some((field, text)) = reasoning
            .into_iter()
            .find_map(|(f, t)| t.filter(|t| !t.is_empty()).map(|t| (f, t)))
        {
            let provider = self.model.get("provider").and_then(Value::as_str);
            let signature = if provider == Some("opencode-go") && field == "reasoning" {
                "reasoning_content"
            } else {
                field
            };
            let index = self.thinking_block(signature, out);
            self.grow(index, "thinking", &text);
            out.push(AssistantMessageEvent::ThinkingDelta {
                content_index: index,
                delta: text.into_owned(),
                partial: self.partial.clone(),
            });
        }
        if let Some(Value::Array(details)) = delta.reasoning_details {
            for detail in details.into_iter().filter(is_reasoning_detail) {
                self.thinking_block("", out);
                append_detail(self.details.get_or_insert_with(Vec::new), detail);
            }
        }
        if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
            let index = match self.text {
                Some(i) => i,
                None => {
                    let i = self.push_block(crate::value!({"type": "text", "text": ""}));
                    self.text = Some(i);
                    out.push(AssistantMessageEvent::TextStart {
                        content_index: i,
                        partial: self.partial.clone(),
                    });
                    i
                }
            };
            self.grow(index, "text", &text);
            out.push(AssistantMessageEvent::TextDelta {
                content_index: index,
                delta: text.into_owned(),
                partial: self.partial.clone(),
            });
        }
        for call in delta.tool_calls.into_iter().flatten() {
            self.tool_call_delta(call, out);
        }
        Ok(())
    }

    /// The thinking block's index, opened now (with `signature`) when there is none yet.
    fn thinking_block(&mut self, signature: &str, out: &mut Vec<AssistantMessageEvent>) -> usize {
        if let Some(i) = self.thinking {
            return i;
        }
        let i = self.push_block(
            crate::value!({"type": "thinking", "thinking": "", "thinkingSignature": signature}),
        );
        self.thinking = Some(i);
        out.push(AssistantMessageEvent::ThinkingStart {
            content_index: i,
            partial: self.partial.clone(),
        });
        i
    }

    fn tool_call_delta(&mut self, call: WireCall<'_>, out: &mut Vec<AssistantMessageEvent>) {
        let index = call.index;
        let id = call.id.as_deref().unwrap_or("");
        let function = call.function.unwrap_or_default();
        let name = function.name.as_deref().unwrap_or("");
        // By index, unless the server reuses an index for a call with another id; then by id.
        let found = self
            .calls
            .iter()
            .position(|c| {
                index.is_some()
                    && c.index == index
                    && (id.is_empty() || c.id.is_empty() || c.id == id)
            })
            .or_else(|| {
                (!id.is_empty())
                    .then(|| self.calls.iter().position(|c| c.id == id))
                    .flatten()
            });
        let state = match found {
            Some(i) => i,
            None => {
                let block = self.push_block(
                    crate::value!({"type": "toolCall", "id": id, "name": name, "arguments": {}}),
                );
                self.calls.push(ToolCallState {
                    block,
                    index,
                    id: id.to_string(),
                    args: ToolArgs::default(),
                });
                out.push(AssistantMessageEvent::ToolcallStart {
                    content_index: block,
                    partial: self.partial.clone(),
                    text: None,
                });
                self.calls.len() - 1
            }
        };
        let Some(s) = self.calls.get_mut(state) else {
            return;
        };
        let block = s.block;
        if s.index.is_none() {
            s.index = index;
        }
        if s.id.is_empty() && !id.is_empty() {
            s.id = id.to_string();
        }
        let args = function.arguments.as_deref().unwrap_or("");
        if !args.is_empty() {
            s.args.append(args);
        }
        // A first id or name may arrive after the call opened.
        if !id.is_empty() || !name.is_empty() {
            super::edit_block(&self.partial, block, |b| {
                if !id.is_empty() && b.get("id").and_then(Value::as_str) == Some("") {
                    b.put("id", id.into());
                }
                if !name.is_empty() && b.get("name").and_then(Value::as_str) == Some("") {
                    b.put("name", name.into());
                }
            });
        }
        out.push(AssistantMessageEvent::ToolcallDelta {
            content_index: block,
            delta: args.to_string(),
            partial: self.partial.clone(),
            replaced: None,
        });
    }

    fn usage(&self, raw: &Value) -> Value {
        fn present(v: Option<&Value>) -> Option<&Value> {
            v.filter(|v| !v.is_null())
        }
        let n = |v: Option<&Value>| v.and_then(Value::as_f64).unwrap_or(0.0);
        let details = raw.get("prompt_tokens_details");
        let prompt = n(raw.get("prompt_tokens"));
        let cache_read = present(details.and_then(|d| d.get("cached_tokens")))
            .or_else(|| present(raw.get("prompt_cache_hit_tokens")))
            .or_else(|| present(raw.get("cached_tokens")));
        let cache_read = n(cache_read);
        let cache_write = n(details.and_then(|d| d.get("cache_write_tokens")));
        let input = (prompt - cache_read - cache_write).max(0.0);
        let output = n(raw.get("completion_tokens"));
        let reasoning = raw
            .get("completion_tokens_details")
            .and_then(|d| d.get("reasoning_tokens"))
            .and_then(Value::as_f64)
            .filter(|r| *r != 0.0)
            .or_else(|| raw.get("reasoning_tokens").and_then(Value::as_f64))
            .unwrap_or(0.0);
        let mut usage = crate::message::Usage {
            input,
            output,
            cache_read,
            cache_write,
            reasoning: Some(reasoning),
            total_tokens: input + output + cache_read + cache_write,
            ..crate::message::Usage::default()
        };
        calculate_cost(&self.model, &mut usage);
        usage.to_value()
    }

    /// Ends the response after the body ended: closes every block in order (`*_end`, final
    /// tool arguments), then `done`, or the error the stream amounts to. Returns the final
    /// message; the terminal event is in `out`.
    pub fn finish(&mut self, out: &mut Vec<AssistantMessageEvent>) -> AgentMessage {
        let count = self
            .partial
            .borrow()
            .get("content")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        for i in 0..count {
            let block = self
                .partial
                .borrow()
                .get("content")
                .and_then(|c| c.get(i))
                .cloned()
                .unwrap_or(Value::Null);
            match str_of(&block, "type") {
                Some("text") => out.push(AssistantMessageEvent::TextEnd {
                    content_index: i,
                    content: str_of(&block, "text").unwrap_or("").to_string(),
                    partial: self.partial.clone(),
                }),
                Some("thinking") => {
                    if let Some(details) = &self.details {
                        let list = details.iter().map(detail_json).collect();
                        let signature = crate::json::json_stringify(&Value::Array(list));
                        super::edit_block(&self.partial, i, |b| {
                            b.put("thinkingSignature", signature.into());
                        });
                    }
                    out.push(AssistantMessageEvent::ThinkingEnd {
                        content_index: i,
                        content: str_of(&block, "thinking").unwrap_or("").to_string(),
                        partial: self.partial.clone(),
                    })
                }
                Some("toolCall") => {
                    let none = ToolArgs::default();
                    let args = self
                        .calls
                        .iter()
                        .find(|c| c.block == i)
                        .map_or(&none, |c| &c.args);
                    let tool_call = args.finish(&self.partial, i);
                    if tool_call.is_null() {
                        continue;
                    }
                    out.push(AssistantMessageEvent::ToolcallEnd {
                        content_index: i,
                        tool_call,
                        partial: self.partial.clone(),
                    });
                }
                _ => {}
            }
        }
        super::end_by_stop_reason(
            &self.partial,
            "Stream ended without finish_reason",
            "Provider returned an error stop reason",
            out,
        )
    }

    /// Ends the response as failed: `stopReason` `"aborted"` or `"error"` with `message`.
    pub fn fail(
        &mut self,
        message: &str,
        aborted: bool,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> AgentMessage {
        super::fail_partial(&self.partial, message, aborted, out)
    }
}

/// pi-ai's `isOpenAIReasoningDetail`: an object whose `id` (absent, null or a string),
/// `format` (absent or a string) and `index` (absent or a number) are well-typed, of a known
/// type with its payload a string.
pub fn is_reasoning_detail(d: &Value) -> bool {
    let Value::Object(o) = d else {
        return false;
    };
    let common = matches!(o.get("id"), None | Some(Value::Null | Value::String(_)))
        && matches!(o.get("format"), None | Some(Value::String(_)))
        && matches!(o.get("index"), None | Some(Value::Number(_)));
    let string = |k: &str| matches!(o.get(k), Some(Value::String(_)));
    common
        && match o.get("type").and_then(Value::as_str) {
            Some("reasoning.summary") => string("summary"),
            Some("reasoning.encrypted") => string("data"),
            Some("reasoning.text") => {
                string("text")
                    && matches!(
                        o.get("signature"),
                        None | Some(Value::Null | Value::String(_))
                    )
            }
            _ => false,
        }
}

/// A reasoning detail as the JS object pi-ai merges into: keys in insertion order, `None`
/// for a key set to `undefined`, which keeps its place and which JSON.stringify leaves out.
type Detail = Vec<(String, Option<Value>)>;

fn detail_json(d: &Detail) -> Value {
    Value::Object(
        d.iter()
            .filter_map(|(k, v)| v.clone().map(|v| (k.clone(), v)))
            .collect(),
    )
}

/// pi-ai's `appendOpenAIReasoningDetail`: consecutive text (or summary) pieces merge into one
/// entry, filling the fields the first piece lacked; anything else is an entry of its own.
fn append_detail(details: &mut Vec<Detail>, detail: Value) {
    let Value::Object(piece) = detail else {
        return;
    };
    let field = match piece.get("type").and_then(Value::as_str) {
        Some("reasoning.text") => "text",
        Some("reasoning.summary") => "summary",
        _ => "",
    };
    let get = |d: &Detail, k: &str| {
        d.iter()
            .find(|(key, _)| key == k)
            .and_then(|(_, v)| v.clone())
    };
    let mergeable = !field.is_empty()
        && details
            .last()
            .is_some_and(|last| get(last, "type").as_ref() == piece.get("type"));
    let Some(last) = details.last_mut().filter(|_| mergeable) else {
        details.push(piece.into_iter().map(|(k, v)| (k, Some(v))).collect());
        return;
    };
    let more = piece.get(field).and_then(Value::as_str).unwrap_or("");
    if let Some((_, Some(Value::String(s)))) = last.iter_mut().find(|(k, _)| k == field) {
        s.push_str(more);
    }
    // `a ||= b` (signature, format) and `a ??= b` (id, index): JS assigns the key even when
    // the piece lacks it (`undefined`).
    let mut fill = |key: &str, keep: fn(&Value) -> bool| {
        let have = last.iter().position(|(k, _)| k == key);
        if have
            .and_then(|i| last.get(i))
            .and_then(|(_, v)| v.as_ref())
            .is_some_and(keep)
        {
            return;
        }
        let v = piece.get(key).cloned();
        match have.and_then(|i| last.get_mut(i)) {
            Some(slot) => slot.1 = v,
            None => last.push((key.to_string(), v)),
        }
    };
    if field == "text" {
        fill("signature", crate::json::is_truthy);
    }
    fill("id", |v| !v.is_null());
    fill("format", crate::json::is_truthy);
    fill("index", |v| !v.is_null());
}

/// `[DONE]` ends the stream (the API's terminator); every other payload is a chunk.
impl Decoder for ChatCompletionsDecoder {
    fn start(&self) -> AssistantMessageEvent {
        ChatCompletionsDecoder::start(self)
    }
    fn data(&mut self, data: &str, out: &mut Vec<AssistantMessageEvent>) -> Result<bool, String> {
        if data == "[DONE]" {
            return Ok(true);
        }
        self.chunk(data, out).map(|()| false)
    }
    fn complete(&self) -> bool {
        self.has_finish_reason
    }
    fn finish(&mut self, out: &mut Vec<AssistantMessageEvent>) -> AgentMessage {
        ChatCompletionsDecoder::finish(self, out)
    }
    fn fail(
        &mut self,
        message: &str,
        aborted: bool,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> AgentMessage {
        ChatCompletionsDecoder::fail(self, message, aborted, out)
    }
}

#[cfg(test)]
mod tests {
    use super::{read, ChatCompletionsDecoder, Wire};
    use crate::event::AssistantMessageEvent;
    use std::rc::Rc;

    /// A small deterministic generator (xorshift).
    struct Gen(u64);
    impl Gen {
        /// A number below `n`.
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n.max(1) as u64) as usize
        }
        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            let i = self.below(items.len());
            items.get(i).copied().unwrap_or_default()
        }
        /// An object of some of `members` (each `None` to leave out), in a random order,
        /// sometimes with a key twice or an extra one.
        fn object(members: Vec<(&str, String)>, g: &mut Gen) -> String {
            let mut out: Vec<String> = Vec::new();
            for (k, v) in &members {
                if g.pick(&["in", "in", "in", "out"]) == "in" {
                    out.push(format!("\"{k}\":{v}"));
                }
            }
            match g.pick(&["", "", "", "", "dup", "extra", "swap"]) {
                "dup" => out.extend(out.first().cloned()),
                "extra" => out.push("\"x\":[1,{\"y\":2.5,\"z\":null}]".into()),
                "swap" if out.len() > 1 => out.swap(0, 1),
                _ => {}
            }
            format!("{{{}}}", out.join(","))
        }
    }

    fn chunk(g: &mut Gen) -> String {
        let text = [
            r#""h\u00e9\n\"""#,
            r#""""#,
            "null",
            "5",
            r#"[{"type":"text","text":"p"}]"#,
            r#""\ud83d\ude00 x""#,
        ];
        let call = |g: &mut Gen| {
            let function = Gen::object(
                vec![
                    ("name", g.pick(&[r#""f""#, "null", "3", r#""""#]).into()),
                    (
                        "arguments",
                        g.pick(&[r#""{\"a\":""#, r#""1}""#, "null", "{}", r#""""#])
                            .into(),
                    ),
                ],
                g,
            );
            Gen::object(
                vec![
                    (
                        "index",
                        g.pick(&["0", "1", "null", "1.5", "-1", r#""0""#]).into(),
                    ),
                    (
                        "id",
                        g.pick(&[r#""call_1""#, r#""call_2""#, "null", "7"]).into(),
                    ),
                    ("type", r#""function""#.into()),
                    (
                        "function",
                        g.pick(&["FN", "FN", "null", r#""x""#])
                            .replace("FN", &function),
                    ),
                ],
                g,
            )
        };
        let calls = {
            let (a, b) = (call(g), call(g));
            g.pick(&["null", "[A]", "[A,B]", "[null]", "{}", "[]"])
                .replace('A', &a)
                .replace('B', &b)
        };
        let delta = Gen::object(
            vec![
                ("role", r#""assistant""#.into()),
                ("content", g.pick(&text).into()),
                ("reasoning_content", g.pick(&text).into()),
                ("reasoning", g.pick(&text).into()),
                ("reasoning_text", g.pick(&text).into()),
                (
                    "reasoning_details",
                    g.pick(&[
                        "null",
                        r#"[{"type":"reasoning.text","text":"r"}]"#,
                        r#"[{"type":"reasoning.encrypted","data":"e","id":"i"}]"#,
                    ])
                    .into(),
                ),
                ("tool_calls", calls),
            ],
            g,
        );
        let usage = r#"{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5,"prompt_tokens_details":{"cached_tokens":1}}"#;
        let choice = Gen::object(
            vec![
                ("index", "0".into()),
                (
                    "delta",
                    g.pick(&["D", "D", "D", "null", r#""s""#])
                        .replace('D', &delta),
                ),
                (
                    "finish_reason",
                    g.pick(&[
                        "null",
                        "null",
                        r#""stop""#,
                        r#""tool_calls""#,
                        r#""length""#,
                        "5",
                        r#""odd""#,
                    ])
                    .into(),
                ),
                ("usage", g.pick(&["null", usage]).into()),
            ],
            g,
        );
        let choices = g
            .pick(&["[C]", "[C]", "[C]", "[C,C]", "null", "[]", "[null]", "{}"])
            .replace('C', &choice);
        Gen::object(
            vec![
                ("id", g.pick(&[r#""c1""#, r#""""#, "null", "9"]).into()),
                ("object", r#""chat.completion.chunk""#.into()),
                (
                    "model",
                    g.pick(&[r#""m""#, r#""other""#, r#""""#, "null"]).into(),
                ),
                ("choices", choices),
                ("usage", g.pick(&["null", usage, "0"]).into()),
                (
                    "error",
                    g.pick(&[
                        "null",
                        "null",
                        "null",
                        "null",
                        r#"{"message":"bad"}"#,
                        r#""e""#,
                    ])
                    .into(),
                ),
            ],
            g,
        )
    }

    /// Everything a decoder made of a stream, as text.
    fn run(chunks: &[String], typed: bool, read_typed: &mut usize) -> String {
        let model = crate::value!({"id": "m", "api": "openai-completions", "provider": "openai",
            "cost": {"input": 1, "output": 2, "cacheRead": 0.5, "cacheWrite": 0}});
        let mut d = ChatCompletionsDecoder::new(Rc::new(model), 0.0);
        let mut events: Vec<AssistantMessageEvent> = vec![d.start()];
        let mut failed = None;
        for c in chunks {
            let result = match read::chunk_of(c).filter(|_| typed) {
                Some(wire) => {
                    *read_typed += 1;
                    d.apply(wire, &mut events)
                }
                None => match crate::json::parse(c) {
                    Ok(v) => Wire::lenient(&v).map_or(Ok(()), |w| d.apply(w, &mut events)),
                    Err(e) => Err(e.to_string()),
                },
            };
            if let Err(e) = result {
                failed = Some(e);
                break;
            }
        }
        let message = match failed {
            Some(m) => d.fail(&m, false, &mut events),
            None => d.finish(&mut events),
        };
        let events: Vec<String> = events
            .iter()
            .map(|e| crate::json::json_stringify(&e.to_json()))
            .collect();
        format!(
            "{}\n{}",
            events.join("\n"),
            crate::json::json_stringify(&message)
        )
    }

    /// The typed reading and the lenient tree reading make the same events and message of
    /// every generated stream: the typed path is only a faster way to the same view.
    #[test]
    fn typed_and_lenient_readings_decode_alike() {
        let mut g = Gen(0x9e37_79b9_7f4a_7c15);
        let (mut typed, mut total) = (0, 0);
        for _ in 0..3000 {
            let n = 1 + g.below(5);
            let chunks: Vec<String> = (0..n).map(|_| chunk(&mut g)).collect();
            total += n;
            let mut ignored = 0;
            let a = run(&chunks, true, &mut typed);
            let b = run(&chunks, false, &mut ignored);
            assert_eq!(a, b, "chunks:\n{}", chunks.join("\n"));
        }
        // Both paths were taken often.
        assert!(typed * 5 > total, "typed {typed} of {total}");
        assert!(typed * 10 < total * 9, "typed {typed} of {total}");
    }

    /// The usual chunks are read typed (the fast path); every surprise gives up, so the
    /// lenient tree reading decides those.
    #[test]
    fn typed_reading_takes_the_usual_shape_and_gives_up_on_surprises() -> Result<(), &'static str> {
        let usual = r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m",
            "choices":[{"index":0,"delta":{"role":"assistant","content":"h\u00e9","tool_calls":[
            {"index":0,"id":"t","type":"function","function":{"name":"f","arguments":"{\"a\""}}]},
            "finish_reason":null,"logprobs":null},{"index":1}],"usage":null}"#;
        let wire = read::chunk_of(usual).ok_or("the usual chunk is read typed")?;
        assert_eq!(wire.id.as_deref(), Some("c1"));
        assert_eq!(
            wire.usage,
            Some(crate::json::Value::Null),
            "a null usage is kept"
        );
        let choice = wire.choice.ok_or("the first choice")?;
        assert!(choice.finish_reason.is_none());
        let delta = choice.delta.ok_or("its delta")?;
        assert_eq!(delta.content.as_deref(), Some("hé"));
        let calls = delta.tool_calls.ok_or("its tool calls")?;
        assert_eq!(calls.len(), 1);
        let call = calls.first().ok_or("one tool call")?;
        assert_eq!(call.index, Some(0.0));
        let f = call.function.as_ref().ok_or("its function")?;
        assert_eq!(f.arguments.as_deref(), Some("{\"a\""));
        assert!(read::chunk_of(r#"{"choices":null,"error":null}"#).is_some());
        // Fields skipped whole (logprobs): read typed; a number out of range in them is not.
        let logprobs = r#"{"choices":[{"delta":{"content":"a"},"logprobs":{"content":[
            {"token":"a","logprob":-0.0123456789012,"bytes":[97],"top_logprobs":[]}]}}]}"#;
        assert!(read::chunk_of(logprobs).is_some());
        assert!(read::chunk_of(&logprobs.replace("-0.0123456789012", "1e400")).is_none());
        // Any number is an index, as pi-ai's `typeof index === "number"` has it.
        for (text, index) in [("1.5", 1.5), ("-1", -1.0), ("1e0", 1.0)] {
            let chunk =
                format!(r#"{{"choices":[{{"delta":{{"tool_calls":[{{"index":{text}}}]}}}}]}}"#);
            let wire = read::chunk_of(&chunk).ok_or("an odd index")?;
            let calls = wire.choice.and_then(|c| c.delta?.tool_calls);
            let call = calls.as_deref().and_then(<[_]>::first).ok_or("its call")?;
            assert_eq!(call.index, Some(index));
        }
        let empty = read::chunk_of(r#"{"choices":[]}"#).ok_or("an empty choice list")?;
        assert!(empty.choice.is_none());

        for odd in [
            r#"{"id":1}"#,
            r#"{"choices":[null]}"#,
            r#"{"choices":{}}"#,
            r#"{"choices":[{"delta":{"content":[{"type":"text","text":"x"}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":"1"}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[null]}}]}"#,
            r#"["id","model"]"#,
            r#"{"id":"a"} x"#,
            "7.5",
        ] {
            assert!(read::chunk_of(odd).is_none(), "{odd}");
        }
        Ok(())
    }
}
