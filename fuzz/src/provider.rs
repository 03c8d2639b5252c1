//! A provider decoder run by the built-in stream's own driver (`provider::driver`) over a
//! scripted transport that serves the body in the given chunks: the SSE feed loop, the
//! decoder, the key hiding and the error-text cut are the package's, not a replay.
//!
//! Then the facts every response must keep, whatever the bytes: `start` first, exactly one
//! terminal event and it last; each content block opened once, its deltas and end after
//! that and of its kind; the final message a valid pi assistant message that
//! `JSON.stringify` writes as JSON; and the same result for any split of the body.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

use crate::typed::Message;
use pi_agent_wasm::event::AssistantMessageEvent;
use pi_agent_wasm::io::{
    AssistantStream, HttpRequest, HttpResponse, LlmContext, StreamOptions, Transport,
};
use pi_agent_wasm::json::Value;
use pi_agent_wasm::message::AgentMessage;
use pi_agent_wasm::provider::driver::{self, ProviderConfig, ProviderHooks, Services};
use pi_agent_wasm::value as json;

/// The four APIs, as the driver names them.
pub use pi_agent_wasm::provider::driver::Api;

/// The model of each API's responses (costs set, so cost is computed).
pub fn model(api: Api) -> Value {
    match api {
        Api::Completions => json!({"id": "gpt-4o-mini", "api": "openai-completions",
                "provider": "openai", "baseUrl": "https://api.openai.com/v1",
                "cost": {"input": 0.15, "output": 0.6, "cacheRead": 0.075, "cacheWrite": 0}}),
        Api::Responses => json!({"id": "gpt-5-mini", "api": "openai-responses",
                "provider": "openai",
                "cost": {"input": 0.25, "output": 2, "cacheRead": 0.025, "cacheWrite": 0}}),
        Api::Anthropic => json!({"id": "claude-sonnet-4-5", "api": "anthropic-messages",
                "provider": "anthropic",
                "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}),
        Api::Google => json!({"id": "gemini-2.5-flash", "api": "google-generative-ai",
                "provider": "google",
                "cost": {"input": 0.3, "output": 2.5, "cacheRead": 0.03, "cacheWrite": 0}}),
    }
}

/// One decoded response: its events and its final message.
pub struct Decoded {
    pub events: Vec<AssistantMessageEvent>,
    pub message: AgentMessage,
}

/// `futures::future::LocalBoxFuture`, which the host traits return.
type LocalBoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + 'a>>;

/// The fuzz key: long and odd enough that no input spells it by chance.
const KEY: &str = "sk-fuzz-7f3a9c2e5b8d1046";

/// A transport whose one response is a 200 event stream of the given chunks.
struct Scripted(RefCell<Option<Vec<Vec<u8>>>>);

struct Body(VecDeque<Vec<u8>>);

impl HttpResponse for Body {
    fn status(&self) -> u16 {
        200
    }
    fn status_text(&self) -> String {
        "OK".into()
    }
    fn header(&self, name: &str) -> Option<String> {
        name.eq_ignore_ascii_case("content-type")
            .then(|| "text/event-stream".into())
    }
    fn headers(&self) -> Vec<(String, String)> {
        vec![("content-type".into(), "text/event-stream".into())]
    }
    fn read(&mut self) -> LocalBoxFuture<'_, Result<Option<Vec<u8>>, String>> {
        let next = self.0.pop_front();
        Box::pin(async move { Ok(next) })
    }
}

impl Transport for Scripted {
    fn send<'a>(
        &'a self,
        _request: &'a HttpRequest,
    ) -> LocalBoxFuture<'a, Result<Box<dyn HttpResponse>, String>> {
        let chunks = self.0.borrow_mut().take().unwrap_or_default();
        Box::pin(async move { Ok(Box::new(Body(chunks.into())) as Box<dyn HttpResponse>) })
    }
    fn sleep(&self, _ms: f64) -> LocalBoxFuture<'static, ()> {
        Box::pin(async {})
    }
    fn timer(&self, _ms: f64) -> LocalBoxFuture<'static, ()> {
        Box::pin(futures_never())
    }
}

/// A future that never completes (no deadline is set here anyway).
fn futures_never() -> impl std::future::Future<Output = ()> {
    std::future::pending()
}

struct Hooks;
impl ProviderHooks for Hooks {}

struct Clock;
impl pi_agent_wasm::io::Clock for Clock {
    fn now(&self) -> f64 {
        1_700_000_000_000.0
    }
    fn monotonic(&self) -> f64 {
        0.0
    }
}

struct NotAborted;
impl pi_agent_wasm::io::AbortSignal for NotAborted {
    fn aborted(&self) -> bool {
        false
    }
}

/// Runs a future that never waits (the scripted transport is always ready) to its end.
fn run_ready<T>(fut: impl std::future::Future<Output = T>) -> T {
    let mut fut = std::pin::pin!(fut);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match fut.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(v) => v,
        std::task::Poll::Pending => panic!("the scripted transport never waits"),
    }
}

/// The built-in stream's driver (`provider::driver`) over `chunks`, as the package runs it:
/// the request, the SSE feed loop, the decoder, the key hidden, the error text cut.
pub fn decode(api: Api, chunks: &[&[u8]]) -> Decoded {
    let services = Services {
        transport: Rc::new(Scripted(RefCell::new(Some(
            chunks.iter().map(|c| c.to_vec()).collect(),
        )))),
        hooks: Rc::new(Hooks),
        clock: Rc::new(Clock),
        signal: Rc::new(NotAborted),
    };
    let mut model = model(api);
    if let Value::Object(o) = &mut model {
        o.get_or_insert_with("baseUrl", || "http://127.0.0.1/v1".into());
    }
    let model = Rc::new(model);
    let context = LlmContext::from(vec![Rc::new(
        json!({"role": "user", "content": "hi", "timestamp": 1}),
    )]);
    let options = StreamOptions {
        api_key: Some(KEY.into()),
        reasoning: None,
        identity: json!({}),
    };
    run_ready(async {
        let mut stream = driver::open(
            &services,
            &ProviderConfig::default(),
            &model,
            context,
            options,
        )
        .await
        .unwrap_or_else(|e| panic!("open rejected: {}", e.message));
        let mut events = Vec::new();
        while let Some(e) = stream
            .next()
            .await
            .unwrap_or_else(|e| panic!("{}", e.message))
        {
            events.push(e);
        }
        let message = stream
            .result()
            .await
            .ok()
            .flatten()
            .unwrap_or_else(|| panic!("no final message"));
        Decoded { events, message }
    })
}

/// What a split-independent comparison looks at: each event's kind, index and text.
pub fn trace(d: &Decoded) -> Vec<(String, Option<usize>, String)> {
    use AssistantMessageEvent::*;
    d.events
        .iter()
        .map(|e| {
            let (index, text) = match e {
                TextStart { content_index, .. }
                | ThinkingStart { content_index, .. }
                | ToolcallStart { content_index, .. } => (Some(*content_index), String::new()),
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
                } => (Some(*content_index), delta.clone()),
                TextEnd {
                    content_index,
                    content,
                    ..
                }
                | ThinkingEnd {
                    content_index,
                    content,
                    ..
                } => (Some(*content_index), content.clone()),
                ToolcallEnd {
                    content_index,
                    tool_call,
                    ..
                } => (
                    Some(*content_index),
                    pi_agent_wasm::json::json_stringify(tool_call),
                ),
                Start { .. } | Done { .. } | Error { .. } => (None, String::new()),
            };
            (e.kind().to_string(), index, text)
        })
        .collect()
}

/// Panics when a fact of the module docs does not hold.
pub fn check(api: Api, d: &Decoded) {
    use AssistantMessageEvent::*;
    let kinds: Vec<&str> = d.events.iter().map(AssistantMessageEvent::kind).collect();
    assert_eq!(kinds.first(), Some(&"start"), "first event: {kinds:?}");
    let terminals = d.events.iter().filter(|e| e.is_terminal()).count();
    assert_eq!(terminals, 1, "terminal events: {kinds:?}");
    assert!(
        d.events
            .last()
            .is_some_and(AssistantMessageEvent::is_terminal),
        "last event is not terminal: {kinds:?}"
    );

    let message = &*d.message;
    let content = message
        .get("content")
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("final message without a content array: {message}"));
    // Per block: 0 not opened, 1 open, 2 ended; and the block type its events name.
    let mut blocks: HashMap<usize, (u8, &str)> = HashMap::new();
    for e in &d.events {
        let (index, kind, phase) = match e {
            TextStart { content_index, .. } => (*content_index, "text", 0),
            TextDelta { content_index, .. } => (*content_index, "text", 1),
            TextEnd { content_index, .. } => (*content_index, "text", 2),
            ThinkingStart { content_index, .. } => (*content_index, "thinking", 0),
            ThinkingDelta { content_index, .. } => (*content_index, "thinking", 1),
            ThinkingEnd { content_index, .. } => (*content_index, "thinking", 2),
            ToolcallStart { content_index, .. } => (*content_index, "toolCall", 0),
            ToolcallDelta { content_index, .. } => (*content_index, "toolCall", 1),
            ToolcallEnd { content_index, .. } => (*content_index, "toolCall", 2),
            Start { .. } | Done { .. } | Error { .. } => continue,
        };
        let state = blocks.entry(index).or_insert((0, kind));
        assert_eq!(state.1, kind, "block {index} changes kind: {kinds:?}");
        match (state.0, phase) {
            (0, 0) => state.0 = 1,
            (1, 1) => {}
            (1, 2) => state.0 = 2,
            (s, p) => panic!("block {index}: event phase {p} in state {s}: {kinds:?}"),
        }
        let block = content
            .get(index)
            .unwrap_or_else(|| panic!("event for block {index} of {}", content.len()));
        assert_eq!(
            block.get("type").and_then(Value::as_str),
            Some(kind),
            "block {index} type: {block}"
        );
    }
    for block in content {
        // Arguments the decoder parses from text are an object (`{}` and an
        // `argumentsError` when the text is none); Gemini's arrive as JSON, and pi-ai passes
        // them on whatever their type (`part.functionCall.args ?? {}`), as the decoder does.
        if block.get("type").and_then(Value::as_str) == Some("toolCall")
            && !matches!(api, Api::Google)
        {
            assert!(
                block.get("arguments").is_some_and(Value::is_object),
                "tool call arguments not an object: {block}"
            );
        }
    }

    let reason = message.get("stopReason").and_then(Value::as_str);
    match d.events.last() {
        Some(Done { reason: r, .. }) => {
            assert!(
                !matches!(r.as_str(), "error" | "aborted" | "pending"),
                "done with {r:?}"
            );
            assert_eq!(reason, Some(r.as_str()), "done reason vs message");
        }
        Some(Error { reason: r, .. }) => {
            assert!(
                matches!(r.as_str(), "error" | "aborted"),
                "error with {r:?}"
            );
            assert_eq!(reason, Some(r.as_str()), "error reason vs message");
            assert!(
                message.get("errorMessage").is_some_and(Value::is_string),
                "error without errorMessage: {message}"
            );
        }
        _ => unreachable!("checked above"),
    }

    // pi-ai copies some server values into the message whatever their JSON type, and so do
    // the decoders: `responseId`/`responseModel` (`output.responseId ||= chunk.responseId`),
    // Anthropic's thinking `signature`, Gemini's `args`. Only those may be off the typed
    // model.
    let mut typed = message.clone();
    if let Value::Object(o) = &mut typed {
        for key in ["responseId", "responseModel"] {
            if o.get(key).is_some_and(|v| !v.is_string()) {
                o.shift_remove(key);
            }
        }
        if let Some(Value::Array(blocks)) = o.get_mut("content") {
            for b in blocks.iter_mut().filter_map(Value::as_object_mut) {
                if b.get("thinkingSignature").is_some_and(|v| !v.is_string()) {
                    b.shift_remove("thinkingSignature");
                }
                if matches!(api, Api::Google) && b.get("arguments").is_some_and(|v| !v.is_object())
                {
                    b.insert("arguments".into(), Value::Object(Default::default()));
                }
            }
        }
    }
    match Message::from_value(typed) {
        Ok(Message::Assistant(_)) => {}
        Ok(_) => panic!("final message is not an assistant message: {message}"),
        Err(e) => panic!("final message is not a valid pi message ({e}): {message}"),
    }
    crate::assert_stringify_round_trips(message, "final message");
}

/// The target body for one API: `data[0]` picks the split, the rest is the response body.
pub fn fuzz(api: Api, data: &[u8]) {
    let Some((&seed, body)) = data.split_first() else {
        return;
    };
    if crate::known::skip_deep_body(body) {
        return;
    }
    let whole = decode(api, &[body]);
    check(api, &whole);
    if seed != 0 {
        let parts = decode(api, &crate::split(seed, body));
        let masked = |t: Vec<(String, Option<usize>, String)>| {
            t.into_iter()
                .map(|(k, i, text)| (k, i, mask_ids(&text)))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            masked(trace(&parts)),
            masked(trace(&whole)),
            "events depend on the split"
        );
        assert_eq!(
            mask_ids(&pi_agent_wasm::json::json_stringify(&parts.message)),
            mask_ids(&pi_agent_wasm::json::json_stringify(&whole.message)),
            "final message depends on the split"
        );
    }
}

/// `text` with the counter of each generated Gemini call id (`name_<now>_<n>`, `now` the
/// [`Clock`]'s) masked: as pi-ai's, the counter is one for all responses, so two decodes of
/// the same bytes give their calls different ids.
fn mask_ids(text: &str) -> String {
    const NOW: &str = "_1700000000000_";
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(NOW) {
        let (head, tail) = rest.split_at(at + NOW.len());
        out.push_str(head);
        out.push('N');
        rest = tail.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}
