//! The built-in stream's driver (`provider::driver`) over a scripted transport: every fault
//! a real server makes (429 with `retry-after`, 5xx, a network error, a reset mid-body, a
//! stall, a 200 that is no event stream, an endless line), for each of the four APIs and,
//! for the body faults, at every byte of the wire transcript. Each run must end with one
//! terminal event and a final message whose `errorMessage` names the cause (L-20), and the
//! API key must appear in no error text.
#![cfg(not(target_arch = "wasm32"))]
#![allow(
    clippy::disallowed_methods, // core's substring search: only the .wasm avoids it (size)
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
mod common;

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use common::{TestClock, TestSignal};
use futures::executor::block_on;
use futures::future::LocalBoxFuture;
use pi_agent_wasm::event::AssistantMessageEvent;
use pi_agent_wasm::io::{
    AssistantStream, HttpRequest, HttpResponse, LlmContext, StreamOptions, Transport,
};
use pi_agent_wasm::json::Value;
use pi_agent_wasm::provider::driver::{self, EnvKey, ProviderConfig, ProviderHooks, Services};
use pi_agent_wasm::value as json;

const KEY: &str = "sk-driver-secret-0123456789";

/// How a scripted body ends after its chunks.
#[derive(Clone, Debug)]
enum End {
    Done,
    Reset(&'static str),
    /// No more bytes, ever: only a deadline or an abort ends the wait.
    Stall,
}

#[derive(Clone, Debug)]
enum Attempt {
    /// fetch rejects with this description.
    Network(&'static str),
    /// fetch never settles.
    Hang,
    Reply {
        status: u16,
        headers: Vec<(&'static str, String)>,
        chunks: Vec<Vec<u8>>,
        end: End,
    },
}

fn sse(chunks: Vec<Vec<u8>>, end: End) -> Attempt {
    Attempt::Reply {
        status: 200,
        headers: vec![("content-type", "text/event-stream".into())],
        chunks,
        end,
    }
}

fn reply(status: u16, headers: Vec<(&'static str, String)>, body: &str) -> Attempt {
    Attempt::Reply {
        status,
        headers,
        chunks: vec![body.as_bytes().to_vec()],
        end: End::Done,
    }
}

#[derive(Default)]
struct Fake {
    attempts: RefCell<VecDeque<Attempt>>,
    sent: RefCell<Vec<HttpRequest>>,
    sleeps: RefCell<Vec<f64>>,
    /// Aborts the run at the first pause (a user who gives up while the client waits).
    abort_in_pause: Option<Rc<TestSignal>>,
    /// The statuses of bodies dropped before their end (cancelled, so the connection closes).
    cancelled: Rc<RefCell<Vec<u16>>>,
}

struct FakeResponse {
    status: u16,
    headers: Vec<(&'static str, String)>,
    chunks: VecDeque<Vec<u8>>,
    end: End,
    finished: bool,
    cancelled: Rc<RefCell<Vec<u16>>>,
}

impl Drop for FakeResponse {
    fn drop(&mut self) {
        if !self.finished {
            self.cancelled.borrow_mut().push(self.status);
        }
    }
}

impl HttpResponse for FakeResponse {
    fn status(&self) -> u16 {
        self.status
    }
    fn status_text(&self) -> String {
        "Scripted".into()
    }
    fn header(&self, name: &str) -> Option<String> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    }
    fn headers(&self) -> Vec<(String, String)> {
        self.headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }
    fn read(&mut self) -> LocalBoxFuture<'_, Result<Option<Vec<u8>>, String>> {
        if let Some(c) = self.chunks.pop_front() {
            return Box::pin(async move { Ok(Some(c)) });
        }
        match self.end {
            End::Done => {
                self.finished = true;
                Box::pin(async { Ok(None) })
            }
            End::Reset(why) => {
                self.finished = true;
                Box::pin(async move { Err(why.to_string()) })
            }
            End::Stall => Box::pin(futures::future::pending()),
        }
    }
}

impl Transport for Fake {
    fn send<'a>(
        &'a self,
        request: &'a HttpRequest,
    ) -> LocalBoxFuture<'a, Result<Box<dyn HttpResponse>, String>> {
        self.sent.borrow_mut().push(request.clone());
        let next = self.attempts.borrow_mut().pop_front();
        let cancelled = self.cancelled.clone();
        match next {
            Some(Attempt::Network(why)) => Box::pin(async move { Err(why.to_string()) }),
            Some(Attempt::Hang) => Box::pin(futures::future::pending()),
            Some(Attempt::Reply {
                status,
                headers,
                chunks,
                end,
            }) => Box::pin(async move {
                Ok(Box::new(FakeResponse {
                    status,
                    headers,
                    chunks: chunks.into(),
                    end,
                    finished: false,
                    cancelled,
                }) as Box<dyn HttpResponse>)
            }),
            None => panic!("the client sent more requests than scripted"),
        }
    }
    fn sleep(&self, ms: f64) -> LocalBoxFuture<'static, ()> {
        self.sleeps.borrow_mut().push(ms);
        if let Some(signal) = &self.abort_in_pause {
            signal.aborted.set(true);
        }
        Box::pin(async {})
    }
    /// Every deadline is already due: a read that is ready wins the race (it is polled
    /// first), one that is pending loses it, as a stall would after `timeoutMs`.
    fn timer(&self, _ms: f64) -> LocalBoxFuture<'static, ()> {
        Box::pin(async {})
    }
}

#[derive(Default)]
struct Hooks {
    env: Option<String>,
    finished: Cell<usize>,
}

impl ProviderHooks for Hooks {
    fn env_api_key(&self, _provider: &str) -> EnvKey {
        EnvKey {
            key: self.env.clone(),
            note: None,
        }
    }
    /// Two dates around the test clock's epoch (1,700,000,000,000 ms).
    fn parse_date(&self, text: &str) -> Option<f64> {
        match text {
            "Tue, 14 Nov 2023 22:13:24 GMT" => Some(1_700_000_004_000.0),
            "Tue, 14 Nov 2023 22:13:10 GMT" => Some(1_699_999_990_000.0),
            _ => None,
        }
    }
    fn finished(&self, _result: &pi_agent_wasm::message::AgentMessage, _late: &[usize]) {
        self.finished.set(self.finished.get() + 1);
    }
}

fn model(api: &str) -> Rc<Value> {
    Rc::new(json!({
        "id": "m", "name": "m", "api": api, "provider": "scripted",
        "baseUrl": "http://127.0.0.1:1/v1", "reasoning": false, "input": ["text"],
        "cost": { "input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0 },
        "contextWindow": 1000, "maxTokens": 100
    }))
}

const APIS: [(&str, &str); 4] = [
    ("openai-completions", "openai-completions"),
    ("openai-responses", "openai-responses"),
    ("anthropic-messages", "anthropic"),
    ("google-generative-ai", "google"),
];

fn fixture(dir: &str, name: &str) -> Vec<u8> {
    std::fs::read(format!("tests/fixtures/{dir}/{name}")).unwrap()
}

struct Outcome {
    events: Vec<String>,
    message: Value,
    sent: Vec<HttpRequest>,
    sleeps: Vec<f64>,
    cancelled: Vec<u16>,
    finished: usize,
}

impl Outcome {
    fn error(&self) -> &str {
        self.message["errorMessage"].as_str().unwrap_or("")
    }
    fn stop(&self) -> &str {
        self.message["stopReason"].as_str().unwrap_or("")
    }
}

fn run_with(
    api: &str,
    config: ProviderConfig,
    fake: Fake,
    key: Option<&str>,
    env: Option<&str>,
) -> Outcome {
    let signal = fake
        .abort_in_pause
        .clone()
        .unwrap_or_else(|| Rc::new(TestSignal::default()));
    let fake = Rc::new(fake);
    let hooks = Rc::new(Hooks {
        env: env.map(str::to_string),
        ..Hooks::default()
    });
    let services = Services {
        transport: fake.clone(),
        hooks: hooks.clone(),
        clock: Rc::new(TestClock::default()),
        signal,
    };
    let model = model(api);
    let context = LlmContext::from(vec![common::user("hi")]);
    let options = StreamOptions {
        api_key: key.map(str::to_string),
        reasoning: None,
        identity: json!({}),
    };
    let (events, message) = block_on(async {
        let mut stream = driver::open(&services, &config, &model, context, options)
            .await
            .expect("only a hook or an unknown API rejects");
        let mut events = Vec::new();
        let mut terminal = 0;
        while let Some(e) = stream.next().await.unwrap() {
            if matches!(
                e,
                AssistantMessageEvent::Done { .. } | AssistantMessageEvent::Error { .. }
            ) {
                terminal += 1;
            }
            events.push(e.kind().to_string());
        }
        assert_eq!(terminal, 1, "one terminal event: {events:?}");
        let m = stream.result().await.unwrap().expect("a final message");
        (events, (*m).clone())
    });
    let text = serde_json::to_string(&message).unwrap();
    assert!(!text.contains(KEY), "the key leaked: {text}");
    let sent = fake.sent.borrow().clone();
    let sleeps = fake.sleeps.borrow().clone();
    let cancelled = fake.cancelled.borrow().clone();
    Outcome {
        events,
        message,
        sent,
        sleeps,
        cancelled,
        finished: hooks.finished.get(),
    }
}

fn run(api: &str, config: ProviderConfig, attempts: Vec<Attempt>) -> Outcome {
    let fake = Fake {
        attempts: RefCell::new(attempts.into()),
        ..Fake::default()
    };
    run_with(api, config, fake, Some(KEY), None)
}

/// The message without what varies between splits of the same bytes (none should), nor
/// between responses: the counter of a generated Gemini call id (`name_time_counter`, one
/// counter for all responses, as pi-ai's) is masked.
fn comparable(m: &Value) -> Value {
    let mut m = m.clone();
    m.as_object_mut().unwrap().shift_remove("durationMs");
    for block in m["content"].as_array_mut().into_iter().flatten() {
        let id = block["id"].as_str().unwrap_or_default().to_string();
        if let Some((head, n)) = id.rsplit_once('_') {
            if head.contains('_') && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
                block["id"] = Value::String(format!("{head}_N"));
            }
        }
    }
    m
}

#[test]
fn l20_each_api_decodes_the_same_at_every_split() {
    for (api, dir) in APIS {
        let body = fixture(dir, "tool_single.sse");
        let whole = run(
            api,
            ProviderConfig::default(),
            vec![sse(vec![body.clone()], End::Done)],
        );
        assert_eq!(whole.stop(), "toolUse", "{api}: {}", whole.message);
        assert_eq!(whole.finished, 1);
        let bytes: Vec<Vec<u8>> = body.iter().map(|b| vec![*b]).collect();
        let out = run(api, ProviderConfig::default(), vec![sse(bytes, End::Done)]);
        assert_eq!(out.events, whole.events, "{api} one byte per chunk");
        assert_eq!(
            comparable(&out.message),
            comparable(&whole.message),
            "{api} one byte per chunk"
        );
        for cut in 1..body.len() {
            let split = vec![body[..cut].to_vec(), body[cut..].to_vec()];
            let out = run(api, ProviderConfig::default(), vec![sse(split, End::Done)]);
            assert_eq!(out.events, whole.events, "{api} split at {cut}");
            assert_eq!(
                comparable(&out.message),
                comparable(&whole.message),
                "{api} split at {cut}"
            );
        }
    }
}

#[test]
fn l20_a_reset_at_every_byte_ends_in_an_error_naming_it() {
    for (api, dir) in APIS {
        let body = fixture(dir, "text.sse");
        let whole = run(
            api,
            ProviderConfig::default(),
            vec![sse(vec![body.clone()], End::Done)],
        );
        for cut in 0..body.len() {
            let out = run(
                api,
                ProviderConfig::default(),
                vec![sse(
                    vec![body[..cut].to_vec()],
                    End::Reset("socket hang up"),
                )],
            );
            // Once the finish reason was read, the answer is whole: a reset after it ends the
            // response normally (only a usage chunk may be lost).
            if out.error().is_empty() {
                assert_eq!(out.stop(), whole.stop(), "{api} cut at {cut}");
                assert_eq!(
                    out.message["content"], whole.message["content"],
                    "{api} cut at {cut}"
                );
                assert_eq!(out.events.last().map(String::as_str), Some("done"));
                continue;
            }
            assert_eq!(out.stop(), "error", "{api} cut at {cut}: {}", out.message);
            assert_eq!(out.error(), "socket hang up", "{api} cut at {cut}");
            assert_eq!(out.events.last().map(String::as_str), Some("error"));
        }
    }
}

#[test]
fn a_stall_at_every_byte_ends_at_the_deadline() {
    let config = ProviderConfig {
        timeout_ms: Some(300.0),
        ..ProviderConfig::default()
    };
    for (api, dir) in APIS {
        let body = fixture(dir, "text.sse");
        for cut in 0..body.len() {
            let out = run(
                api,
                config.clone(),
                vec![sse(vec![body[..cut].to_vec()], End::Stall)],
            );
            if out.error().is_empty() {
                // The terminal event came before the stall.
                assert_ne!(out.stop(), "error");
                continue;
            }
            assert_eq!(out.stop(), "error", "{api} stalled at {cut}");
            assert_eq!(
                out.error(),
                "Request timed out: no data for 300 ms",
                "{api} at {cut}"
            );
            assert_eq!(out.cancelled, [200], "the stalled body is cancelled");
        }
    }
}

#[test]
fn an_error_body_that_stalls_ends_at_the_deadline() {
    let config = ProviderConfig {
        timeout_ms: Some(300.0),
        ..ProviderConfig::default()
    };
    let stalled = Attempt::Reply {
        status: 500,
        headers: vec![],
        chunks: vec![b"{\"error\":".to_vec()],
        end: End::Stall,
    };
    let out = run("openai-responses", config, vec![stalled]);
    assert_eq!(
        out.error(),
        "Request timed out: no data for 300 ms (reading the body of a 500 response)"
    );
}

#[test]
fn a_response_that_never_comes_ends_at_the_deadline() {
    let config = ProviderConfig {
        timeout_ms: Some(250.0),
        ..ProviderConfig::default()
    };
    for (api, _) in APIS {
        let out = run(api, config.clone(), vec![Attempt::Hang]);
        assert_eq!(out.error(), "Request timed out: no response for 250 ms");
        assert_eq!(out.events, ["error"]);
    }
}

#[test]
fn status_429_with_retry_after_waits_as_asked_then_streams() {
    for (api, dir) in APIS {
        let config = ProviderConfig {
            max_retries: 2,
            ..ProviderConfig::default()
        };
        let out = run(
            api,
            config,
            vec![
                reply(429, vec![("retry-after", "2".into())], "slow down"),
                reply(503, vec![("retry-after-ms", "150".into())], ""),
                sse(vec![fixture(dir, "text.sse")], End::Done),
            ],
        );
        assert_eq!(out.stop(), "stop", "{api}: {}", out.message);
        assert_eq!(out.sleeps, [2000.0, 150.0], "{api}");
        assert_eq!(out.sent.len(), 3);
        assert_eq!(
            out.cancelled[..2],
            [429, 503],
            "{api}: each retried body is cancelled unread"
        );
    }
}

#[test]
fn backoff_doubles_from_half_a_second_when_the_server_names_no_delay() {
    let config = ProviderConfig {
        max_retries: 3,
        ..ProviderConfig::default()
    };
    let out = run(
        "openai-completions",
        config,
        vec![
            Attempt::Network("connect ECONNREFUSED 127.0.0.1:1"),
            reply(500, vec![], "oops"),
            reply(502, vec![], "bad gateway"),
            reply(500, vec![], r#"{"error":{"message":"still down"}}"#),
        ],
    );
    // `random()` is 0 here: no jitter.
    assert_eq!(out.sleeps, [500.0, 1000.0, 2000.0]);
    assert_eq!(out.error(), r#"500: {"message":"still down"}"#);
    assert_eq!(out.sent.len(), 4);
    assert_eq!(driver::backoff(9, None, 0.0), 8000.0, "capped at 8 s");
    assert_eq!(
        driver::backoff(0, None, 0.999),
        500.0 * (1.0 - 0.999 * 0.25)
    );
}

#[test]
fn a_delay_beyond_max_retry_delay_fails_with_the_servers_text() {
    let config = ProviderConfig {
        max_retries: 1,
        max_retry_delay_ms: 60_000.0,
        ..ProviderConfig::default()
    };
    let out = run(
        "openai-completions",
        config,
        vec![reply(
            429,
            vec![("retry-after", "120".into())],
            r#"{"error":{"message":"quota"}}"#,
        )],
    );
    assert_eq!(
        out.error(),
        r#"Server requested 120s retry delay (max: 60s). 429: {"message":"quota"}"#
    );
    assert!(out.sleeps.is_empty());
}

#[test]
fn x_should_retry_overrides_the_status() {
    let config = ProviderConfig {
        max_retries: 1,
        ..ProviderConfig::default()
    };
    let out = run(
        "openai-completions",
        config.clone(),
        vec![reply(503, vec![("x-should-retry", "false".into())], "no")],
    );
    assert_eq!(out.sent.len(), 1);
    assert_eq!(out.error(), "503 no");
    let out = run(
        "openai-completions",
        config,
        vec![
            reply(400, vec![("x-should-retry", "true".into())], "again"),
            sse(vec![fixture("openai-completions", "text.sse")], End::Done),
        ],
    );
    assert_eq!(out.sent.len(), 2);
    assert_eq!(out.stop(), "stop");
}

#[test]
fn each_api_words_http_errors_as_its_sdk() {
    let body = r#"{"error":{"message":"bad key","type":"auth"},"message":"bad key"}"#;
    let json = vec![("content-type", "application/json".to_string())];
    let cases = [
        (
            "openai-completions",
            r#"401: {"message":"bad key","type":"auth"}"#,
        ),
        (
            "openai-responses",
            r#"scripted (401): {"message":"bad key","type":"auth"}"#,
        ),
        ("anthropic-messages", "401 bad key"),
        (
            "google-generative-ai",
            r#"{"error":{"message":"bad key","type":"auth"},"message":"bad key"}"#,
        ),
    ];
    for (api, want) in cases {
        let out = run(
            api,
            ProviderConfig::default(),
            vec![reply(401, json.clone(), body)],
        );
        assert_eq!(out.error(), want, "{api}");
        assert_eq!(out.stop(), "error");
    }
    // A body that is no JSON, and none at all.
    let out = run(
        "openai-completions",
        ProviderConfig::default(),
        vec![reply(502, vec![], "<html>")],
    );
    assert_eq!(out.error(), "502 <html>");
    let out = run(
        "anthropic-messages",
        ProviderConfig::default(),
        vec![reply(500, vec![], "")],
    );
    assert_eq!(out.error(), "500 status code (no body)");
    let out = run(
        "google-generative-ai",
        ProviderConfig::default(),
        vec![reply(500, vec![], "down")],
    );
    assert_eq!(
        out.error(),
        r#"{"error":{"message":"down","code":500,"status":"Scripted"}}"#
    );
    let json = vec![("content-type", "application/json".to_string())];
    let out = run(
        "google-generative-ai",
        ProviderConfig::default(),
        vec![reply(401, json, "")],
    );
    assert_eq!(
        out.error(),
        "Unexpected end of JSON input",
        "@google/genai's JSON.parse of nothing"
    );
}

#[test]
fn a_network_error_is_named_by_its_cause() {
    let out = run(
        "openai-completions",
        ProviderConfig::default(),
        vec![Attempt::Network("getaddrinfo ENOTFOUND x")],
    );
    assert_eq!(out.error(), "Connection error: getaddrinfo ENOTFOUND x");
    let out = run(
        "openai-completions",
        ProviderConfig::default(),
        vec![Attempt::Network("")],
    );
    assert_eq!(out.error(), "Connection error.");
}

#[test]
fn a_200_that_is_no_event_stream_is_named() {
    for kind in ["application/json; charset=utf-8", "text/html"] {
        let out = run(
            "openai-completions",
            ProviderConfig::default(),
            vec![reply(
                200,
                vec![("content-type", kind.into())],
                "  {\"choices\": []}  ",
            )],
        );
        assert_eq!(
            out.error(),
            format!("Expected an event stream, got {kind}: {{\"choices\": []}}")
        );
    }
}

/// pi-ai's clients read any 200 as an event stream, whatever its content type; a gateway
/// that labels the stream `application/json` or `text/html` must not break a run here either.
/// The body decides: one that starts as an event stream is read as one, in pieces split at
/// any byte (leading spaces and a BOM included), with the same message as when labelled right.
#[test]
fn an_event_stream_labelled_json_or_html_is_read_as_one() {
    for (api, dir) in APIS {
        let body = fixture(dir, "text.sse");
        let right = run(
            api,
            ProviderConfig::default(),
            vec![sse(vec![body.clone()], End::Done)],
        );
        assert!(right.error().is_empty(), "{api}: {}", right.error());
        for kind in ["application/json", "text/html; charset=utf-8"] {
            for prefix in [&b""[..], b"\xEF\xBB\xBF", b" \n"] {
                let whole = [prefix, &body].concat();
                for cut in 0..whole.len() {
                    let (a, b) = whole.split_at(cut);
                    let out = run(
                        api,
                        ProviderConfig::default(),
                        vec![Attempt::Reply {
                            status: 200,
                            headers: vec![("content-type", kind.into())],
                            chunks: vec![a.to_vec(), b.to_vec()],
                            end: End::Done,
                        }],
                    );
                    assert!(
                        out.error().is_empty(),
                        "{api} {kind} cut {cut}: {}",
                        out.error()
                    );
                    assert_eq!(
                        comparable(&out.message),
                        comparable(&right.message),
                        "{api} {kind} cut {cut}"
                    );
                }
            }
        }
    }
}

#[test]
fn the_key_is_hidden_in_every_error_text() {
    let echo = format!("invalid key {KEY}, try again");
    for (api, _) in APIS {
        let out = run(
            api,
            ProviderConfig::default(),
            vec![reply(401, vec![], &echo)],
        );
        assert!(out.error().contains("[redacted]"), "{api}: {}", out.error());
        let out = run(
            api,
            ProviderConfig::default(),
            vec![sse(
                vec![b"data: {".to_vec()],
                End::Reset(Box::leak(echo.clone().into_boxed_str())),
            )],
        );
        assert!(out.error().contains("[redacted]"), "{api}: {}", out.error());
    }
}

#[test]
fn the_key_goes_in_the_apis_header_only() {
    let cases = [
        (
            "openai-completions",
            "Authorization",
            format!("Bearer {KEY}"),
        ),
        ("openai-responses", "Authorization", format!("Bearer {KEY}")),
        ("anthropic-messages", "x-api-key", KEY.to_string()),
        ("google-generative-ai", "x-goog-api-key", KEY.to_string()),
    ];
    for (api, header, value) in cases {
        let dir = APIS.iter().find(|(a, _)| *a == api).unwrap().1;
        let out = run(
            api,
            ProviderConfig::default(),
            vec![sse(vec![fixture(dir, "text.sse")], End::Done)],
        );
        let sent = &out.sent[0];
        let with_key: Vec<_> = sent
            .headers
            .iter()
            .filter(|(_, v)| v.contains(KEY))
            .collect();
        assert_eq!(with_key, [&(header.to_string(), value)], "{api}");
        assert!(!sent.body.contains(KEY) && !sent.url.contains(KEY), "{api}");
        // The OpenAI SDK asks for JSON, as the Anthropic one does.
        let accept = sent
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("accept"));
        if api != "google-generative-ai" {
            assert_eq!(
                accept.map(|(_, v)| v.as_str()),
                Some("application/json"),
                "{api}"
            );
        }
    }
}

#[test]
fn abort_during_a_retry_pause_ends_as_aborted() {
    let signal = Rc::new(TestSignal::default());
    let fake = Fake {
        attempts: RefCell::new(vec![reply(429, vec![], "busy")].into()),
        abort_in_pause: Some(signal),
        ..Fake::default()
    };
    let config = ProviderConfig {
        max_retries: 3,
        ..ProviderConfig::default()
    };
    let out = run_with("anthropic-messages", config, fake, Some(KEY), None);
    assert_eq!(out.stop(), "aborted");
    assert_eq!(out.error(), "Request was aborted");
    assert_eq!(out.sent.len(), 1, "no request after the abort");
}

#[test]
fn no_key_ends_before_anything_is_sent_and_the_environment_is_asked() {
    let fake = Fake::default();
    let out = run_with(
        "openai-completions",
        ProviderConfig::default(),
        fake,
        None,
        None,
    );
    assert_eq!(out.error(), "No API key for provider: scripted");
    assert!(out.sent.is_empty());
    // A blank given key falls back to the environment's.
    let fake = Fake {
        attempts: RefCell::new(
            vec![sse(
                vec![fixture("openai-completions", "text.sse")],
                End::Done,
            )]
            .into(),
        ),
        ..Fake::default()
    };
    let out = run_with(
        "openai-completions",
        ProviderConfig::default(),
        fake,
        Some("  "),
        Some(KEY),
    );
    assert_eq!(out.stop(), "stop");
    assert!(out.sent[0]
        .headers
        .contains(&("Authorization".into(), format!("Bearer {KEY}"))));
}

#[test]
fn an_endless_line_stops_at_max_event_bytes() {
    let config = ProviderConfig {
        max_event_bytes: 64,
        ..ProviderConfig::default()
    };
    let line = vec![b'x'; 100];
    for (api, _) in APIS {
        let out = run(
            api,
            config.clone(),
            vec![sse(vec![b"data: ".to_vec(), line.clone()], End::Stall)],
        );
        assert_eq!(
            out.error(),
            "Stopped reading the event stream: a line is longer than 64 bytes (maxEventBytes)",
            "{api}"
        );
        assert_eq!(out.cancelled, [200]);
    }
}

#[test]
fn the_callers_headers_apply_last_and_unreadable_ones_fail_the_request() {
    let config = ProviderConfig {
        headers: Ok(Some(
            json!({ "authorization": "Bearer other", "x-extra": "1", "x-num": 2 }),
        )),
        ..ProviderConfig::default()
    };
    let out = run(
        "openai-completions",
        config,
        vec![sse(
            vec![fixture("openai-completions", "text.sse")],
            End::Done,
        )],
    );
    let h = &out.sent[0].headers;
    assert!(h.contains(&("authorization".into(), "Bearer other".into())));
    assert!(!h.iter().any(|(k, _)| k == "Authorization"));
    assert!(h.contains(&("x-extra".into(), "1".into())));
    assert!(
        !h.iter().any(|(k, _)| k == "x-num"),
        "only string values are sent"
    );
    let config = ProviderConfig {
        headers: Err("headers cannot be converted to JSON: boom".into()),
        ..ProviderConfig::default()
    };
    let out = run("openai-completions", config, vec![]);
    assert_eq!(out.error(), "headers cannot be converted to JSON: boom");
    assert!(out.sent.is_empty());
}

#[test]
fn a_model_of_another_api_rejects() {
    let services = Services {
        transport: Rc::new(Fake::default()),
        hooks: Rc::new(Hooks::default()),
        clock: Rc::new(TestClock::default()),
        signal: Rc::new(TestSignal::default()),
    };
    let out = block_on(driver::open(
        &services,
        &ProviderConfig::default(),
        &model("bedrock-converse"),
        LlmContext::default(),
        StreamOptions {
            api_key: Some(KEY.into()),
            reasoning: None,
            identity: json!({}),
        },
    ));
    let Err(e) = out else {
        panic!("an unknown API must reject")
    };
    assert_eq!(
        e.message,
        "No built-in provider for api: bedrock-converse (pass a streamFn for it)"
    );
}

#[test]
fn a_quoted_event_is_cut_after_the_key_is_hidden_wherever_the_cut_falls() {
    // An Anthropic event that is no JSON is quoted in the error; the key sits at every
    // position around the 4,400-character cut.
    for pad in (4250..4420).step_by(3) {
        let data = format!("{{{}{KEY}", "x".repeat(pad));
        let body = format!("event: message_start\ndata: {data}\n\n");
        let out = run(
            "anthropic-messages",
            ProviderConfig::default(),
            vec![sse(vec![body.into_bytes()], End::Done)],
        );
        let text = out.error();
        assert!(
            text.starts_with("Could not parse Anthropic SSE event message_start"),
            "{pad}"
        );
        assert!(
            !text.contains("sk-driver"),
            "pad {pad}: {}",
            &text[text.len() - 80..]
        );
        assert!(text.chars().count() < 4450, "{pad}");
    }
}

#[test]
fn a_key_echoed_as_metadata_is_hidden_in_the_message_and_its_events() {
    // A finish reason, a response id and a model name that echo the key.
    let chunk = |extra: &str| {
        format!("data: {{\"id\": \"id-{KEY}\", \"model\": \"m-{KEY}\", \"choices\": [{{\"index\": 0, \"delta\": {{\"content\": \"hi\"}}{extra}}}]}}\n\n")
    };
    let body = format!(
        "{}{}data: [DONE]\n\n",
        chunk(""),
        chunk(&format!(", \"finish_reason\": \"{KEY}\""))
    );
    let out = run(
        "openai-completions",
        ProviderConfig::default(),
        vec![sse(vec![body.into_bytes()], End::Done)],
    );
    // run() asserts the final message holds no key; the fields say where it was.
    assert_eq!(out.message["rawStopReason"], "[redacted]");
    assert_eq!(out.message["responseId"], "id-[redacted]");
    assert_eq!(out.error(), "Provider finish_reason: [redacted]");
    // A Responses reason and item id.
    let body = [
        r#"event: response.output_item.added
data: {"type":"response.output_item.added","output_index":0,"item":{"id":"msg_KEY","type":"message","role":"assistant","content":[]}}"#,
        r#"event: response.output_text.delta
data: {"type":"response.output_text.delta","item_id":"msg_KEY","output_index":0,"content_index":0,"delta":"hi"}"#,
        r#"event: response.output_item.done
data: {"type":"response.output_item.done","output_index":0,"item":{"id":"msg_KEY","type":"message","role":"assistant","content":[{"type":"output_text","text":"hi"}]}}"#,
        r#"event: response.incomplete
data: {"type":"response.incomplete","response":{"id":"r_KEY","status":"incomplete","incomplete_details":{"reason":"key KEY over quota"}}}"#,
    ]
    .join("\n\n")
    .replace("KEY", KEY)
        + "\n\n";
    let out = run(
        "openai-responses",
        ProviderConfig::default(),
        vec![sse(vec![body.into_bytes()], End::Done)],
    );
    assert_eq!(
        out.error(),
        "Response incomplete: key [redacted] over quota"
    );
    assert_eq!(out.message["content"][0]["text"], "hi");
}

#[test]
fn after_the_final_event_an_open_or_broken_connection_does_not_hold_the_answer() {
    let config = ProviderConfig {
        timeout_ms: Some(300.0),
        ..ProviderConfig::default()
    };
    for (api, dir) in APIS {
        let body = fixture(dir, "text.sse");
        let whole = run(
            api,
            config.clone(),
            vec![sse(vec![body.clone()], End::Done)],
        );
        // Anthropic's message_stop and Responses' terminal event end the read; Chat
        // Completions' [DONE] too. Gemini has no terminal event: a stall after its finish
        // reason ends at the deadline, as a whole answer.
        for end in [End::Stall, End::Reset("terminated")] {
            let out = run(
                api,
                config.clone(),
                vec![sse(vec![body.clone()], end.clone())],
            );
            assert_eq!(out.stop(), whole.stop(), "{api} {end:?}: {}", out.message);
            assert_eq!(
                out.message["content"], whole.message["content"],
                "{api} {end:?}"
            );
            assert_eq!(out.error(), "", "{api} {end:?}");
        }
    }
}

#[test]
fn retry_after_is_read_as_pi_ai_reads_it_dates_and_parse_float_included() {
    let config = ProviderConfig {
        max_retries: 5,
        ..ProviderConfig::default()
    };
    let h = |name: &'static str, v: &str| vec![(name, v.to_string())];
    let out = run(
        "anthropic-messages",
        config,
        vec![
            // An HTTP date 4 s after the clock's now.
            reply(
                429,
                h("retry-after", "Tue, 14 Nov 2023 22:13:24 GMT"),
                "busy",
            ),
            // A date in the past: no wait.
            reply(
                429,
                h("retry-after", "Tue, 14 Nov 2023 22:13:10 GMT"),
                "busy",
            ),
            // parseFloat reads a leading number.
            reply(429, h("retry-after-ms", "150abc"), "busy"),
            reply(429, h("retry-after", "2.5 seconds"), "busy"),
            // Neither a number nor a date: the backoff (attempt 4: 8 s, no jitter here).
            reply(429, h("retry-after", "soon"), "busy"),
            sse(vec![fixture("anthropic", "text.sse")], End::Done),
        ],
    );
    assert_eq!(out.stop(), "stop", "{}", out.message);
    let s = &out.sleeps;
    assert_eq!(s.len(), 5);
    assert!((3_900.0..=4_000.0).contains(&s[0]), "{s:?}");
    assert_eq!(s[1..], [0.0, 150.0, 2_500.0, 8_000.0]);
}
