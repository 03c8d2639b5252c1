//! Providers: one file per API, each a pure decoder from the API's stream events to pi's
//! `AssistantMessageEvent`s (and, with the transport, a request builder). No IO here.

pub mod anthropic;
pub mod anthropic_request;
mod arguments;
pub mod driver;
pub mod google;
pub mod google_request;
pub mod openai_completions;
pub mod openai_completions_request;
pub mod openai_responses;
pub mod openai_responses_request;
pub mod transform;
pub mod usage;

pub use arguments::{parse_tool_call_arguments, repair_json, ToolArgs};

use crate::json::Put;
use crate::text::Joined;
use std::cell::RefCell;
use std::rc::Rc;

use crate::json::{Map, Value};

use crate::event::{AssistantMessageEvent, Partial};
use crate::message::{num, zero_usage, AgentMessage, StopReason};

/// The partial message every response starts from: no content, zero usage, `pending`.
pub fn new_partial(model: &Value, api: &str, now: f64) -> Partial {
    let field = |k: &str| model.get(k).cloned().unwrap_or_else(|| "".into());
    let mut o = Map::new();
    o.put("role", "assistant".into());
    o.put("content", Value::Array(Vec::new()));
    o.put("api", api.into());
    o.put("provider", field("provider"));
    o.put("model", field("id"));
    o.put("usage", zero_usage());
    o.put("stopReason", "pending".into());
    o.put("timestamp", num(now));
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

/// Sets a top-level field of the partial at position `index` when it is new (where JS
/// created the key earlier, holding `undefined`); an existing key keeps its place.
pub fn set_field_at(partial: &Partial, index: usize, key: &str, value: Value) {
    if let Value::Object(o) = &mut *partial.borrow_mut() {
        if o.contains_key(key) || index >= o.len() {
            o.insert(key.into(), value);
        } else {
            // Rebuilt rather than `shift_insert`, which costs 2 KB of wasm for this one use.
            let mut rebuilt = Map::new();
            let mut new = Some((key.to_string(), value));
            for (i, (k, v)) in std::mem::take(o).into_iter().enumerate() {
                if i == index {
                    if let Some((nk, nv)) = new.take() {
                        rebuilt.insert(nk, nv);
                    }
                }
                rebuilt.insert(k, v);
            }
            *o = rebuilt;
        }
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
pub fn edit_block<T>(partial: &Partial, index: usize, f: impl FnOnce(&mut Map) -> T) -> Option<T> {
    block_mut(&mut partial.borrow_mut(), index).map(f)
}

/// Content block `index` of a message. Not generic, so each use of [`edit_block`] shares it
/// (measured: 0.14 KB of the gzipped `.wasm`).
fn block_mut(message: &mut Value, index: usize) -> Option<&mut Map> {
    match message.get_mut("content").and_then(|c| c.get_mut(index)) {
        Some(Value::Object(b)) => Some(b),
        _ => None,
    }
}

/// Appends `delta` to the string field `key` of block `index`, in place.
pub fn grow_block(partial: &Partial, index: usize, key: &str, delta: &str) {
    edit_block(partial, index, |b| {
        if let Some(Value::String(s)) = b.get_mut(key) {
            crate::json::push_str(s, delta);
        }
    });
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
    let reason = StopReason::parse(reason).unwrap_or(StopReason::Stop);
    let message: AgentMessage = Rc::new(partial.borrow().clone());
    out.push(AssistantMessageEvent::Done {
        reason,
        message: message.clone(),
    });
    message
}

/// The host of a URL (`""` when it has none), lowercased as `URL.hostname` is.
fn url_host(url: &str) -> String {
    let rest = crate::text::split_once(url, "://").map_or("", |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit('@').next().unwrap_or("");
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.split(':').next().unwrap_or(""),
    };
    host.to_ascii_lowercase()
}

/// pi-ai `getAttributionHeaders`: the identity's attribution for OpenRouter
/// (`HTTP-Referer`, `X-OpenRouter-Title`, `X-OpenRouter-Categories`), NVIDIA NIM and
/// OpenCode; none for other targets or without an attribution. They go below the model's and
/// the call's headers, which override them. (pi-ai's `User-Agent` is not sent: browsers
/// refuse to set it.)
pub fn attribution_headers(model: &Value, identity: &Value) -> Vec<(String, String)> {
    let Some(a) = identity.get("attribution").filter(|a| a.is_object()) else {
        return Vec::new();
    };
    let text = |k: &str| a.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let provider = crate::message::str_field(model, "provider");
    let base = crate::message::str_field(model, "baseUrl");
    let name = text("name");
    if provider == "openrouter" || crate::text::contains(base, "openrouter.ai") {
        let mut h = vec![
            ("HTTP-Referer".to_string(), text("url")),
            ("X-OpenRouter-Title".to_string(), name),
        ];
        let categories: Vec<&str> = a
            .get("categories")
            .and_then(Value::as_array)
            .map(|c| c.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if !categories.is_empty() {
            h.push(("X-OpenRouter-Categories".into(), categories.joined(",")));
        }
        return h;
    }
    if provider == "nvidia" || url_host(base) == "integrate.api.nvidia.com" {
        // ASCII case only: Unicode case tables cost 17 KB of gzipped wasm.
        let mut chars = name.chars();
        let capital: String = chars
            .next()
            .map(|c| {
                std::iter::once(c.to_ascii_uppercase())
                    .chain(chars)
                    .collect()
            })
            .unwrap_or_default();
        return vec![("X-BILLING-INVOKE-ORIGIN".into(), capital)];
    }
    if matches!(provider, "opencode" | "opencode-go") || url_host(base) == "opencode.ai" {
        return vec![("x-opencode-client".into(), name)];
    }
    Vec::new()
}

/// The model's `compat.<key>` flag, or `default`.
pub fn compat_flag(model: &Value, key: &str, default: bool) -> bool {
    model
        .get("compat")
        .and_then(|c| c.get(key))
        .and_then(Value::as_bool)
        .unwrap_or(default)
}

/// The partial's string field `key` (`""` when absent).
pub fn field_str(partial: &Partial, key: &str) -> String {
    partial
        .borrow()
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// Whether the partial holds a tool call (a `stop` then means `toolUse`).
pub fn has_tool_call(partial: &Partial) -> bool {
    partial
        .borrow()
        .get("content")
        .and_then(Value::as_array)
        .is_some_and(|c| {
            c.iter()
                .any(|b| b.get("type").and_then(Value::as_str) == Some("toolCall"))
        })
}

/// Ends the response by its stop reason, as pi-ai's providers do after the stream: `done`;
/// failed with `pending` when nothing said how it ended; failed with the partial's
/// `errorMessage` (or `unknown`) for `error`/`aborted`.
pub fn end_by_stop_reason(
    partial: &Partial,
    pending: &str,
    unknown: &str,
    out: &mut Vec<AssistantMessageEvent>,
) -> AgentMessage {
    match field_str(partial, "stopReason").as_str() {
        "pending" | "" => fail_partial(partial, pending, false, out),
        "error" | "aborted" => {
            let message = field_str(partial, "errorMessage");
            let message = if message.is_empty() {
                unknown
            } else {
                &message
            };
            fail_partial(partial, message, false, out)
        }
        reason => done_partial(partial, reason, out),
    }
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
    /// Whether the stream has said the answer is whole (a finish reason), so that only
    /// usage may follow: a body that then breaks off or stalls ends the response normally.
    fn complete(&self) -> bool {
        false
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

/// `Decoder` for a decoder type whose inherent methods have the trait's names; `named`
/// for the APIs that read the SSE event name (`event`), `data` for the others (`chunk`).
macro_rules! decoder {
    ($t:ty, data $(, $($extra:tt)*)?) => {
        decoder!(@impl $t, |d: &mut $t, _name: &str, data: &str, out| d
            .chunk(data, out)
            .map(|()| false) $(, $($extra)*)?);
    };
    ($t:ty, named $(, $($extra:tt)*)?) => {
        decoder!(@impl $t, |d: &mut $t, name: &str, data: &str, out| d.event(name, data, out) $(, $($extra)*)?);
    };
    (@impl $t:ty, $decode:expr $(, $($extra:tt)*)?) => {
        impl Decoder for $t {
            $($($extra)*)?
            fn start(&self) -> AssistantMessageEvent {
                <$t>::start(self)
            }
            fn data(
                &mut self,
                data: &str,
                out: &mut Vec<AssistantMessageEvent>,
            ) -> Result<bool, String> {
                Decoder::event(self, "message", data, out)
            }
            fn event(
                &mut self,
                name: &str,
                data: &str,
                out: &mut Vec<AssistantMessageEvent>,
            ) -> Result<bool, String> {
                let decode: fn(&mut $t, &str, &str, &mut Vec<AssistantMessageEvent>) -> Result<bool, String> = $decode;
                decode(self, name, data, out)
            }
            fn finish(&mut self, out: &mut Vec<AssistantMessageEvent>) -> AgentMessage {
                <$t>::finish(self, out)
            }
            fn fail(
                &mut self,
                message: &str,
                aborted: bool,
                out: &mut Vec<AssistantMessageEvent>,
            ) -> AgentMessage {
                <$t>::fail(self, message, aborted, out)
            }
        }
    };
}

decoder!(
    google::GoogleDecoder,
    data,
    fn complete(&self) -> bool {
        self.finished
    }
);
decoder!(
    openai_responses::ResponsesDecoder,
    named,
    fn late_blocks(&mut self) -> Vec<usize> {
        std::mem::take(&mut self.late)
    }
);
decoder!(anthropic::AnthropicDecoder, named);

/// `text` cut to `max` characters with a note of how many were left out, as pi-ai cuts error
/// bodies: an error text quotes what the server sent, never megabytes of it.
pub fn cut_text(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!(
            "{}... [truncated {} chars]",
            text.get(..i).unwrap_or(""),
            text.chars().count() - max
        ),
        None => text.to_string(),
    }
}

/// A truthy value as [`js_string`] shows it; `None` for a falsy one.
pub fn truthy_string(v: Option<&Value>) -> Option<String> {
    v.filter(|v| crate::json::is_truthy(v))
        .map(|v| js_string(Some(v)))
}

/// A value as a JS template literal shows it (`undefined` when absent).
pub fn js_string(v: Option<&Value>) -> String {
    match v {
        None => "undefined".into(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) => "null".into(),
        Some(Value::Object(_)) => "[object Object]".into(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| match x {
                Value::Null => String::new(),
                x => js_string(Some(x)),
            })
            .collect::<Vec<_>>()
            .joined(","),
        Some(other) => crate::json::json_stringify(other),
    }
}
