//! Providers: one file per API, each a pure decoder from the API's stream events to pi's
//! `AssistantMessageEvent`s (and, with the transport, a request builder). No IO here.

pub mod anthropic;
pub mod anthropic_request;
pub mod google;
pub mod google_request;
pub mod openai_completions;
pub mod openai_completions_request;
pub mod openai_responses;
pub mod openai_responses_request;
pub mod transform;
pub mod usage;

use std::cell::RefCell;
use std::rc::Rc;

use serde_json::{Map, Value};

use crate::event::{AssistantMessageEvent, Partial};
use crate::message::{num, zero_usage, AgentMessage, StopReason};
use crate::stream::partial_json::{apply_change, StreamingJsonParser};
use crate::stream::Change;

/// The partial message every response starts from: no content, zero usage, `pending`.
pub fn new_partial(model: &Value, api: &str, now: f64) -> Partial {
    let field = |k: &str| model.get(k).cloned().unwrap_or_else(|| "".into());
    let mut o = Map::new();
    o.insert("role".into(), "assistant".into());
    o.insert("content".into(), Value::Array(Vec::new()));
    o.insert("api".into(), api.into());
    o.insert("provider".into(), field("provider"));
    o.insert("model".into(), field("id"));
    o.insert("usage".into(), zero_usage());
    o.insert("stopReason".into(), "pending".into());
    o.insert("timestamp".into(), num(now));
    Rc::new(RefCell::new(Value::Object(o)))
}

thread_local! {
    /// Counts changes to partials' top-level fields, all made by `set_field`.
    static REVISION: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Changes when any partial's top-level fields (usage, ids, stop reason) may have changed: a
/// renderer compares them only then, not on every delta.
pub fn top_level_revision() -> u64 {
    REVISION.with(std::cell::Cell::get)
}

/// Sets a top-level field of the partial.
pub fn set_field(partial: &Partial, key: &str, value: Value) {
    if let Value::Object(o) = &mut *partial.borrow_mut() {
        o.insert(key.into(), value);
    }
    REVISION.with(|r| r.set(r.get().wrapping_add(1)));
}

/// Pushes a content block; returns its index.
pub fn push_block(partial: &Partial, block: Value) -> usize {
    let mut p = partial.borrow_mut();
    match p.get_mut("content").and_then(Value::as_array_mut) {
        Some(blocks) => {
            blocks.push(block);
            blocks.len() - 1
        }
        None => 0,
    }
}

/// Runs `f` on content block `index` of the partial (`None` when there is no such block).
pub fn edit_block<T>(
    partial: &Partial,
    index: usize,
    f: impl FnOnce(&mut Map<String, Value>) -> T,
) -> Option<T> {
    let mut p = partial.borrow_mut();
    match p.get_mut("content").and_then(|c| c.get_mut(index)) {
        Some(Value::Object(b)) => Some(f(b)),
        _ => None,
    }
}

/// Appends `delta` to the string field `key` of block `index`, in place.
pub fn grow_block(partial: &Partial, index: usize, key: &str, delta: &str) {
    edit_block(partial, index, |b| {
        if let Some(Value::String(s)) = b.get_mut(key) {
            s.push_str(delta);
        }
    });
}

/// A streamed tool call's raw argument text and its incremental parser; the partial's
/// `arguments` follow the text through the parser's edit records, O(delta) per delta.
#[derive(Default)]
pub struct ToolArgs {
    pub text: String,
    parser: StreamingJsonParser,
}

impl ToolArgs {
    /// Appends `delta`, applies its edits to the arguments of block `index`; returns them.
    pub fn append(&mut self, partial: &Partial, index: usize, delta: &str) -> Vec<Change> {
        self.text.push_str(delta);
        let changes = self.parser.append(delta);
        edit_block(partial, index, |b| {
            if let Some(target) = b.get_mut("arguments") {
                for c in &changes {
                    apply_change(target, c);
                }
                // The partial's arguments stay an object; other values show as none yet.
                if !target.is_object() {
                    *target = Value::Object(Map::new());
                }
            }
        });
        changes
    }

    /// Starts over from `text` (the provider's full arguments replacing what streamed).
    pub fn restart(&mut self, partial: &Partial, index: usize, text: &str) {
        *self = ToolArgs::default();
        edit_block(partial, index, |b| {
            b.insert("arguments".into(), Value::Object(Map::new()));
        });
        self.append(partial, index, text);
    }

    /// The final arguments (and an error for malformed text) written into block `index`;
    /// returns the finished block.
    pub fn finish(&self, partial: &Partial, index: usize) -> Value {
        let (arguments, error) = openai_completions::parse_tool_call_arguments(&self.text);
        edit_block(partial, index, |b| {
            b.insert("arguments".into(), arguments);
            if let Some(e) = error {
                b.insert("argumentsError".into(), e.into());
            }
            Value::Object(b.clone())
        })
        .unwrap_or(Value::Null)
    }
}

/// Ends the response as failed: `stopReason` `"aborted"` or `"error"` with `message`.
pub fn fail_partial(
    partial: &Partial,
    message: &str,
    aborted: bool,
    out: &mut Vec<AssistantMessageEvent>,
) -> AgentMessage {
    let reason = if aborted {
        StopReason::Aborted
    } else {
        StopReason::Error
    };
    set_field(partial, "stopReason", reason.as_str().into());
    set_field(partial, "errorMessage", message.into());
    let error: AgentMessage = Rc::new(partial.borrow().clone());
    out.push(AssistantMessageEvent::Error {
        reason,
        error: error.clone(),
    });
    error
}

/// Ends the response with `done` for its stop reason `reason`.
pub fn done_partial(
    partial: &Partial,
    reason: &str,
    out: &mut Vec<AssistantMessageEvent>,
) -> AgentMessage {
    let reason =
        serde_json::from_value(Value::String(reason.to_string())).unwrap_or(StopReason::Stop);
    let message: AgentMessage = Rc::new(partial.borrow().clone());
    out.push(AssistantMessageEvent::Done {
        reason,
        message: message.clone(),
    });
    message
}

/// A response decoder: SSE `data` payloads in, pi's events out.
pub trait Decoder {
    /// The `start` event (pushed once the response arrived).
    fn start(&self) -> AssistantMessageEvent;
    /// One `data:` payload. `Ok(true)` when the payload says the stream is over (`[DONE]`);
    /// `Err` names what was wrong, and the response ends as failed.
    fn data(&mut self, data: &str, out: &mut Vec<AssistantMessageEvent>) -> Result<bool, String>;
    /// One SSE event with its `event:` name (`"message"` when it had none); the APIs whose
    /// events are named read it.
    fn event(
        &mut self,
        _name: &str,
        data: &str,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<bool, String> {
        self.data(data, out)
    }
    /// Blocks changed after their last event; a writer that keeps its own copy of the
    /// partial refreshes them at the end. Taken once.
    fn late_blocks(&mut self) -> Vec<usize> {
        Vec::new()
    }
    /// The body ended: the blocks close, then `done` or the error it amounts to.
    fn finish(&mut self, out: &mut Vec<AssistantMessageEvent>) -> AgentMessage;
    /// Ends the response as failed (`aborted` or `error`) with `message`.
    fn fail(
        &mut self,
        message: &str,
        aborted: bool,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> AgentMessage;
}

impl Decoder for openai_completions::ChatCompletionsDecoder {
    fn start(&self) -> AssistantMessageEvent {
        openai_completions::ChatCompletionsDecoder::start(self)
    }
    fn data(&mut self, data: &str, out: &mut Vec<AssistantMessageEvent>) -> Result<bool, String> {
        if data == "[DONE]" {
            return Ok(true);
        }
        self.chunk(data, out).map(|()| false)
    }
    fn finish(&mut self, out: &mut Vec<AssistantMessageEvent>) -> AgentMessage {
        openai_completions::ChatCompletionsDecoder::finish(self, out)
    }
    fn fail(
        &mut self,
        message: &str,
        aborted: bool,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> AgentMessage {
        openai_completions::ChatCompletionsDecoder::fail(self, message, aborted, out)
    }
}

impl Decoder for google::GoogleDecoder {
    fn start(&self) -> AssistantMessageEvent {
        google::GoogleDecoder::start(self)
    }
    fn data(&mut self, data: &str, out: &mut Vec<AssistantMessageEvent>) -> Result<bool, String> {
        self.chunk(data, out).map(|()| false)
    }
    fn finish(&mut self, out: &mut Vec<AssistantMessageEvent>) -> AgentMessage {
        google::GoogleDecoder::finish(self, out)
    }
    fn fail(
        &mut self,
        message: &str,
        aborted: bool,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> AgentMessage {
        google::GoogleDecoder::fail(self, message, aborted, out)
    }
}

impl Decoder for openai_responses::ResponsesDecoder {
    fn start(&self) -> AssistantMessageEvent {
        openai_responses::ResponsesDecoder::start(self)
    }
    fn data(&mut self, data: &str, out: &mut Vec<AssistantMessageEvent>) -> Result<bool, String> {
        openai_responses::ResponsesDecoder::event(self, "message", data, out)
    }
    fn event(
        &mut self,
        name: &str,
        data: &str,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<bool, String> {
        openai_responses::ResponsesDecoder::event(self, name, data, out)
    }
    fn late_blocks(&mut self) -> Vec<usize> {
        std::mem::take(&mut self.late)
    }
    fn finish(&mut self, out: &mut Vec<AssistantMessageEvent>) -> AgentMessage {
        openai_responses::ResponsesDecoder::finish(self, out)
    }
    fn fail(
        &mut self,
        message: &str,
        aborted: bool,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> AgentMessage {
        openai_responses::ResponsesDecoder::fail(self, message, aborted, out)
    }
}

impl Decoder for anthropic::AnthropicDecoder {
    fn start(&self) -> AssistantMessageEvent {
        anthropic::AnthropicDecoder::start(self)
    }
    fn data(&mut self, data: &str, out: &mut Vec<AssistantMessageEvent>) -> Result<bool, String> {
        anthropic::AnthropicDecoder::event(self, "message", data, out)
    }
    fn event(
        &mut self,
        name: &str,
        data: &str,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<bool, String> {
        anthropic::AnthropicDecoder::event(self, name, data, out)
    }
    fn finish(&mut self, out: &mut Vec<AssistantMessageEvent>) -> AgentMessage {
        anthropic::AnthropicDecoder::finish(self, out)
    }
    fn fail(
        &mut self,
        message: &str,
        aborted: bool,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> AgentMessage {
        anthropic::AnthropicDecoder::fail(self, message, aborted, out)
    }
}
