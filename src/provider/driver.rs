//! The built-in stream function, host-independent: for `openai-completions`,
//! `openai-responses`, `anthropic-messages` and `google-generative-ai` it assembles the
//! request (body, headers, URL), sends it over [`Transport`] with pi-ai's retry and backoff
//! policy, words HTTP and network errors as pi-ai does, and feeds the body through the SSE
//! decoder into the API's [`Decoder`], bounded by `maxEventBytes` and `timeoutMs`.
//!
//! Failures follow pi-ai's contract (L-20): HTTP errors, network errors, bad bytes, stalls
//! and aborts end the response as a message with `stopReason` `"error"`/`"aborted"` and an
//! `errorMessage` naming the cause. Only a throwing `onPayload`/`onResponse` hook rejects.
//! The API key goes into the API's key header only (`Authorization`, `x-api-key` or
//! `x-goog-api-key`) and is cut out of every error text.
//!
//! The walk of one body chunk: [`Transport`] hands over the bytes; the SSE decoder splits
//! them into events; each event's data goes to the API's decoder, which edits the partial
//! and appends `AssistantMessageEvent`s to the queue that [`ProviderStream::next`] drains.
//!
//! Depends on `io`, `stream`, `message` and the provider modules; never on a host.

use crate::json::Put;
use crate::text::Joined;
use std::collections::VecDeque;
use std::future::Future;
use std::rc::Rc;

use crate::json::Value;
use futures::future::{select, Either};

use super::anthropic::AnthropicDecoder;
use super::anthropic_request::{self, AnthropicOptions};
use super::google::GoogleDecoder;
use super::google_request::{self, GoogleOptions};
use super::openai_completions::ChatCompletionsDecoder;
use super::openai_completions_request::{build_params, RequestOptions};
use super::openai_responses::ResponsesDecoder;
use super::openai_responses_request::{self, ResponsesOptions};
use super::{cut_text, Decoder};
use crate::error::Thrown;
use crate::event::AssistantMessageEvent;
use crate::io::{
    AbortSignal, AssistantStream, Clock, HostFuture, HostResult, HttpRequest, HttpResponse,
    LlmContext, StreamOptions, Transport,
};
use crate::jsnum::{parse_float, to_js_string};
use crate::message::{str_field, AgentMessage};
use crate::stream::{SseDecoder, SseEvent, SseLimits, SseOverflow};

/// pi-ai keeps this much of an error body.
const MAX_ERROR_BODY: usize = 4000;

/// The default bound (`maxEventBytes`) on one SSE line and on the data of one event: far
/// above real traffic, where a Responses `response.completed` event carries the whole
/// output and a Gemini chunk may carry inline images of several MB.
pub const MAX_EVENT_BYTES: usize = 64 * 1024 * 1024;

/// The longest error text a response ends with: a decoder may quote a whole malformed
/// event, which may be up to `maxEventBytes` long.
const MAX_ERROR_TEXT: usize = 4400;

/// The most of a body that is no event stream (an HTTP error's, a 200 of JSON) that is read:
/// its text is quoted cut to a few thousand characters anyway.
pub const MAX_BODY_READ: usize = 1024 * 1024;

/// What `Response.text()` drops from the start of a body.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The text of a response's `errorMessage` when the run's signal is aborted.
pub const ABORTED: &str = "Request was aborted";

/// The caller's options the built-in stream reads (pi-ai's `StreamOptions` and ours).
#[derive(Clone, Debug)]
pub struct ProviderConfig {
    pub max_tokens: Option<f64>,
    pub temperature: Option<f64>,
    /// `toolChoice` as JSON.
    pub tool_choice: Option<Value>,
    /// `headers` as JSON; `Err` when reading them threw (the request then fails, naming it).
    pub headers: Result<Option<Value>, String>,
    pub session_id: Option<String>,
    pub cache_retention: Option<String>,
    /// `metadata.user_id` (Anthropic).
    pub user_id: Option<String>,
    pub thinking_budgets: Option<Value>,
    /// `maxRetries`: extra attempts after a network error or a retryable status.
    pub max_retries: u32,
    /// `maxRetryDelayMs`: a server asking to wait longer fails the request instead.
    pub max_retry_delay_ms: f64,
    /// `timeoutMs`: the longest wait for the response, and then for each piece of the body.
    pub timeout_ms: Option<f64>,
    /// `maxEventBytes`: the bound on one SSE line and on one event's data.
    pub max_event_bytes: usize,
}

impl Default for ProviderConfig {
    fn default() -> Self {
        ProviderConfig {
            max_tokens: None,
            temperature: None,
            tool_choice: None,
            headers: Ok(None),
            session_id: None,
            cache_retention: None,
            user_id: None,
            thinking_budgets: None,
            max_retries: 0,
            max_retry_delay_ms: 60_000.0,
            timeout_ms: None,
            max_event_bytes: MAX_EVENT_BYTES,
        }
    }
}

/// A key found in the host's environment, or a note on a variable seen but not used.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EnvKey {
    pub key: Option<String>,
    pub note: Option<String>,
}

/// What the built-in stream asks of its host besides the network.
#[allow(unused_variables)]
pub trait ProviderHooks {
    /// `text` with `key` hidden. The JS binding's policy also catches escaped and encoded
    /// spellings of the key, and is shared with `streamProxy`.
    fn redact(&self, text: &str, key: &str) -> String {
        crate::text::replace(text, key, "[redacted]")
    }
    /// The key for `provider` in the host's environment (`OPENAI_API_KEY`, …).
    fn env_api_key(&self, provider: &str) -> EnvKey {
        EnvKey::default()
    }
    /// `onPayload(params, model)`: `Some(Ok(Some(v)))` replaces the body. A throw (`Err`) ends
    /// the response with its message.
    fn on_payload<'a>(
        &'a self,
        params: &'a Value,
        model: &'a Rc<Value>,
    ) -> Option<HostFuture<'a, Option<Value>>> {
        None
    }
    /// `onResponse({ status, headers }, model)`. A throw (`Err`) ends the response with its
    /// message.
    fn on_response<'a>(
        &'a self,
        status: u16,
        headers: &'a [(String, String)],
        model: &'a Rc<Value>,
    ) -> Option<HostFuture<'a, ()>> {
        None
    }
    /// `Date.parse(text)`: ms since the epoch, `None` for a text that is no date.
    fn parse_date(&self, text: &str) -> Option<f64> {
        None
    }
    /// A number in `[0, 1)` for the retry jitter.
    fn random(&self) -> f64 {
        0.0
    }
    /// The response ended with `result`; `late` lists the blocks its decoder changed after
    /// their last event (a host that mirrors the partial brings them up to date).
    fn finished(&self, result: &AgentMessage, late: &[usize]) {}
}

/// The host services one response uses.
#[derive(Clone)]
pub struct Services {
    pub transport: Rc<dyn Transport>,
    pub hooks: Rc<dyn ProviderHooks>,
    pub clock: Rc<dyn Clock>,
    pub signal: Rc<dyn AbortSignal>,
}

/// The APIs the built-in stream speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    Completions,
    Responses,
    Anthropic,
    Google,
}

impl Api {
    pub fn of(model: &Value) -> Option<Api> {
        match str_field(model, "api") {
            "openai-completions" => Some(Api::Completions),
            "openai-responses" => Some(Api::Responses),
            "anthropic-messages" => Some(Api::Anthropic),
            "google-generative-ai" => Some(Api::Google),
            _ => None,
        }
    }
}

/// The decoder for the model's API.
fn new_decoder(model: &Rc<Value>, now: f64) -> Box<dyn Decoder> {
    match Api::of(model) {
        Some(Api::Google) => Box::new(GoogleDecoder::new(model.clone(), now)),
        Some(Api::Responses) => Box::new(ResponsesDecoder::new(model.clone(), now)),
        Some(Api::Anthropic) => Box::new(AnthropicDecoder::new(model.clone(), now)),
        _ => Box::new(ChatCompletionsDecoder::new(model.clone(), now)),
    }
}

/// pi-ai's text for an HTTP error: `"<status>: <error object>"` for a JSON body with an
/// `error` object, else `"<status> <body>"`, or `"<status> status code (no body)"`.
pub fn http_error(status: u16, body: &str) -> String {
    let trimmed = body.trim();
    if let Ok(v) = crate::json::parse(trimmed) {
        if let Some(e) = v
            .get("error")
            .filter(|e| e.as_object().is_some_and(|o| !o.is_empty()))
        {
            return format!(
                "{status}: {}",
                cut_text(&crate::json::stringify(e), MAX_ERROR_BODY)
            );
        }
    }
    if trimmed.is_empty() {
        format!("{status} status code (no body)")
    } else {
        format!("{status} {}", cut_text(trimmed, MAX_ERROR_BODY))
    }
}

/// The HTTP error text of `api`, as its SDK under pi-ai words it.
pub fn api_http_error(api: Api, model: &Value, response: &StatusLine, body: &str) -> String {
    let status = response.status;
    if api == Api::Google {
        // @google/genai's: a JSON body (by its content type) is quoted as JSON (an empty one
        // fails JSON.parse), else an error object of the text, the status and its text.
        let json = response
            .content_type
            .as_deref()
            .is_some_and(|t| crate::text::contains(t, "application/json"));
        if json && crate::jsnum::is_js_blank(body) {
            return "Unexpected end of JSON input".into();
        }
        let v = match crate::json::parse(body) {
            Ok(v) if json => v,
            _ => crate::value!({ "error": {
                "message": body,
                "code": status,
                "status": &response.text,
            }}),
        };
        return cut_text(&crate::json::json_stringify(&v), MAX_ERROR_BODY);
    }
    if api == Api::Anthropic {
        // Anthropic's SDK: the body's `message`, else the whole JSON body, else its text.
        let trimmed = body.trim();
        return match crate::json::parse(trimmed) {
            _ if trimmed.is_empty() => format!("{status} status code (no body)"),
            Ok(v) => match v.get("message") {
                Some(Value::String(m)) if !m.is_empty() => format!("{status} {m}"),
                _ => format!(
                    "{status} {}",
                    cut_text(&crate::json::json_stringify(&v), MAX_ERROR_BODY)
                ),
            },
            Err(_) => format!("{status} {}", cut_text(trimmed, MAX_ERROR_BODY)),
        };
    }
    let text = http_error(status, body);
    if api != Api::Responses {
        return text;
    }
    let provider = match str_field(model, "provider") {
        "openai" => "OpenAI API error",
        other => other,
    };
    // A JSON error object is quoted whole; otherwise the SDK's status line is.
    match text.strip_prefix(&format!("{status}: ")) {
        Some(json) => format!("{provider} ({status}): {json}"),
        None => format!("{provider} ({status}): {text}"),
    }
}

/// Whether a failed attempt is tried again: the server's `x-should-retry` decides, else
/// 408, 409, 429 and 5xx are retried (the OpenAI and Anthropic SDKs' rule).
pub fn retryable(status: u16, should_retry: Option<&str>) -> bool {
    match should_retry {
        Some("true") => true,
        Some("false") => false,
        _ => matches!(status, 408 | 409 | 429) || status >= 500,
    }
}

/// The server's requested delay in ms, read as pi-ai reads it: `retry-after-ms`, else
/// `retry-after` in seconds or as an HTTP date (`parse_date`, the host's `Date.parse`,
/// against `now`); each number by JS `parseFloat`. `None` when neither gives a finite delay.
pub fn retry_after(
    response: &dyn HttpResponse,
    parse_date: &dyn Fn(&str) -> Option<f64>,
    now: f64,
) -> Option<f64> {
    let header = |name| response.header(name).filter(|v| !v.is_empty());
    if let Some(ms) = header("retry-after-ms").map(|v| parse_float(&v)) {
        if ms.is_finite() {
            return Some(ms);
        }
    }
    let v = header("retry-after")?;
    let seconds = parse_float(&v);
    let ms = if seconds.is_nan() {
        parse_date(&v).map_or(f64::NAN, |date| date - now)
    } else {
        seconds * 1000.0
    };
    ms.is_finite().then_some(ms)
}

/// The pause before retry `attempt`: the server's delay, else 0.5 s doubling up to 8 s,
/// less up to a quarter by `random` in `[0, 1)` (pi-ai's policy).
pub fn backoff(attempt: u32, server_ms: Option<f64>, random: f64) -> f64 {
    // A date in the past is no wait at all, as pi-ai's `setTimeout(…, Math.max(0, ms))`.
    server_ms
        .filter(|m| m.is_finite())
        .map(|m| m.max(0.0))
        .unwrap_or_else(|| {
            let base = (0.5 * f64::from(2u32.saturating_pow(attempt.min(4)))).min(8.0) * 1000.0;
            base * (1.0 - random * 0.25)
        })
}

/// String-valued entries of a JSON headers object, each replacing one of the same name.
fn header_pairs(h: &Value, out: &mut Vec<(String, String)>) {
    if let Value::Object(h) = h {
        for (k, val) in h {
            if let Value::String(val) = val {
                out.retain(|(old, _)| !old.eq_ignore_ascii_case(k));
                out.push((k.clone(), val.clone()));
            }
        }
    }
}

/// The `anthropic-beta` header the model's or the call's headers set (the call's last):
/// `Some(None)` when set to `null`, which turns the betas off.
fn configured_betas(model: &Value, config: &ProviderConfig) -> Option<Option<String>> {
    let mut found = None;
    let call = config.headers.as_ref().ok().and_then(Option::as_ref);
    for h in [model.get("headers"), call].into_iter().flatten() {
        if let Value::Object(h) = h {
            for (k, v) in h {
                if k.eq_ignore_ascii_case("anthropic-beta") {
                    found = Some(v.as_str().map(str::to_string));
                }
            }
        }
    }
    found
}

/// `fut`'s output, or `None` when `timeout` ms pass first (the timer is dropped, so
/// cleared, either way).
async fn within<T>(
    transport: &dyn Transport,
    timeout: Option<f64>,
    fut: impl Future<Output = T>,
) -> Option<T> {
    let Some(ms) = timeout else {
        return Some(fut.await);
    };
    let timer = transport.timer(ms);
    match select(Box::pin(fut), timer).await {
        Either::Left((v, _)) => Some(v),
        Either::Right(_) => None,
    }
}

/// The key to send, as pi-ai's compat `streamSimple` picks it: the given key unless it is
/// blank; else the environment's; else the given one as it is (a blank key is sent, an
/// empty one is none). With no key, the host's note on a variable it saw but does not use.
pub fn pick_api_key(
    hooks: &dyn ProviderHooks,
    model: &Value,
    given: Option<String>,
) -> (Option<String>, Option<String>) {
    if given
        .as_deref()
        .is_some_and(|k| !crate::jsnum::is_js_blank(k))
    {
        return (given, None);
    }
    let found = hooks.env_api_key(str_field(model, "provider"));
    match found.key {
        Some(key) => (Some(key), None),
        None => (given.filter(|k| !k.is_empty()), found.note),
    }
}

/// The request for `api` without its transport: body, headers and URL. `Err` is a failure
/// that ends the response before anything is sent.
fn build_request(
    api: Api,
    model: &Rc<Value>,
    messages: &[Value],
    options: &StreamOptions,
    config: &ProviderConfig,
    key: &str,
    now: f64,
) -> Result<(Value, Vec<String>), String> {
    let request = RequestOptions {
        max_tokens: config.max_tokens,
        temperature: config.temperature,
        reasoning: options.reasoning,
        tool_choice: config.tool_choice.clone(),
        sampling_params: None,
    };
    match api {
        Api::Google => {
            let request = GoogleOptions {
                max_tokens: request.max_tokens,
                temperature: request.temperature,
                reasoning: options.reasoning,
                tool_choice: config
                    .tool_choice
                    .as_ref()
                    .and_then(Value::as_str)
                    .map(str::to_string),
            };
            google_request::build_body(model, messages, &request, now).map(|b| (b, Vec::new()))
        }
        Api::Responses => {
            let request = ResponsesOptions {
                base: request,
                session_id: config.session_id.clone(),
                cache_retention: config.cache_retention.clone(),
                api_key: Some(key.to_string()),
            };
            openai_responses_request::build_body(model, messages, &request, now)
                .map(|b| (b, Vec::new()))
        }
        Api::Anthropic => {
            let request = AnthropicOptions {
                max_tokens: request.max_tokens,
                temperature: request.temperature,
                reasoning: options.reasoning,
                tool_choice: request.tool_choice,
                cache_retention: config.cache_retention.clone(),
                thinking_budgets: config.thinking_budgets.clone(),
                user_id: config.user_id.clone(),
                configured_betas: configured_betas(model, config),
            };
            let built = anthropic_request::build_request(model, messages, &request, now);
            Ok((built.body, built.betas))
        }
        Api::Completions => Ok((build_params(model, messages, &request, now), Vec::new())),
    }
}

/// The headers of a request: content type, the API's key header, attribution, the model's
/// headers, session affinity (Responses), the call's headers, then Anthropic's betas.
fn request_headers(
    api: Api,
    model: &Value,
    options: &StreamOptions,
    config: &ProviderConfig,
    key: &str,
    betas: &[String],
) -> Result<Vec<(String, String)>, String> {
    let mut headers = vec![("Content-Type".to_string(), "application/json".to_string())];
    match api {
        Api::Google => headers.push(("x-goog-api-key".into(), key.to_string())),
        Api::Anthropic => {
            headers.push(("x-api-key".into(), key.to_string()));
            headers.push(("anthropic-version".into(), "2023-06-01".into()));
            headers.push(("accept".into(), "application/json".into()));
            headers.push((
                "anthropic-dangerous-direct-browser-access".into(),
                "true".into(),
            ));
        }
        _ => {
            headers.push(("Accept".into(), "application/json".into()));
            headers.push(("Authorization".into(), format!("Bearer {key}")));
        }
    }
    headers.extend(super::attribution_headers(model, &options.identity));
    if let Some(model_headers) = model.get("headers").filter(|h| h.is_object()) {
        header_pairs(model_headers, &mut headers);
    }
    // Session affinity (Responses): the session routes to the same cache.
    if let (Api::Responses, Some(id)) = (api, &config.session_id) {
        if config.cache_retention.as_deref() != Some("none") {
            let openrouter = str_field(model, "provider") == "openrouter"
                || crate::text::contains(str_field(model, "baseUrl"), "openrouter.ai");
            let format = model
                .get("compat")
                .and_then(|c| c.get("sessionAffinityFormat"))
                .and_then(Value::as_str)
                .unwrap_or(if openrouter { "openrouter" } else { "openai" });
            if format == "openrouter" {
                headers.push(("x-session-id".into(), id.clone()));
            } else {
                if format == "openai" {
                    headers.push(("session-id".into(), id.clone()));
                }
                headers.push(("x-client-request-id".into(), id.clone()));
            }
        }
    }
    match &config.headers {
        Ok(Some(h)) => header_pairs(h, &mut headers),
        Ok(None) => {}
        Err(e) => return Err(e.clone()),
    }
    if !betas.is_empty() {
        headers.push(("anthropic-beta".into(), betas.joined(",")));
    }
    Ok(headers)
}

fn url(api: Api, model: &Value) -> String {
    match api {
        Api::Google => google_request::url(model),
        Api::Responses => openai_responses_request::url(model),
        Api::Anthropic => anthropic_request::url(model),
        Api::Completions => {
            let base = str_field(model, "baseUrl").trim_end_matches('/');
            format!("{base}/chat/completions")
        }
    }
}

/// Opens one response of the built-in stream: an `Err` only for a throwing hook or a model
/// whose API is not built in; every other failure is a response that ends in an error
/// message.
pub async fn open(
    services: &Services,
    config: &ProviderConfig,
    model: &Rc<Value>,
    context: LlmContext,
    options: StreamOptions,
) -> HostResult<ProviderStream> {
    let Some(api) = Api::of(model) else {
        let name = str_field(model, "api");
        return Err(Thrown::new(format!(
            "No built-in provider for api: {name} (pass a streamFn for it)"
        )));
    };
    let now = services.clock.now();
    let started = services.clock.monotonic();
    let response = |api_key: Option<String>, timeout| {
        ProviderStream::new(
            services.clone(),
            config,
            model,
            now,
            started,
            api_key,
            timeout,
        )
    };
    let (api_key, note) = pick_api_key(&*services.hooks, model, options.api_key.clone());
    let Some(key) = api_key.clone() else {
        let provider = str_field(model, "provider");
        let message = match note {
            Some(note) => format!("No API key for provider: {provider} ({note})"),
            None => format!("No API key for provider: {provider}"),
        };
        return Ok(response(None, None).failed(&message));
    };
    if let Err(message) = services.transport.available() {
        return Ok(response(api_key, None).failed(&message));
    }
    let messages: Vec<Value> = context.messages.iter().map(|m| (**m).clone()).collect();
    // A value the host kept (a tool result's `content`) is read as JSON here, once: one that
    // cannot be (a BigInt, a cycle) fails the request, as pi's JSON.stringify of the body.
    // Only `content` is sent of what the host keeps (a tool result's `details` is not).
    // A message of the model's roles whose `content` is neither text nor a list of blocks
    // (a Map, a number) fails the request naming it, where pi-ai's builders throw a TypeError.
    let unreadable = messages.iter().enumerate().find_map(|(i, m)| {
        if let Some(why) = m.get_raw("content").and_then(Value::host_error) {
            return Some(why.to_string());
        }
        let role = crate::message::role(m).unwrap_or_default();
        let listed = matches!(m.get("content"), Some(Value::String(_) | Value::Array(_)));
        (!listed && matches!(role, "user" | "assistant" | "toolResult"))
            .then(|| format!("message {i} ({role}) has no content string or array"))
    });
    if let Some(why) = unreadable {
        return Ok(response(api_key, None).failed(&why));
    }
    let (mut params, betas) =
        match build_request(api, model, &messages, &options, config, &key, now) {
            Ok(built) => built,
            Err(message) => return Ok(response(api_key, None).failed(&message)),
        };
    // onPayload may replace the body (L-80 forwards it from the config).
    // A hook that throws ends the response with its message, as pi-ai's catch does.
    let replaced = match services.hooks.on_payload(&params, model) {
        Some(hook) => match hook.await {
            Ok(v) => v,
            Err(e) => return Ok(response(api_key, None).failed(&e.message)),
        },
        None => None,
    };
    if let Some(next) = replaced {
        params = next;
    }
    let body = crate::json::json_stringify(&params);
    let headers = match request_headers(api, model, &options, config, &key, &betas) {
        Ok(h) => h,
        Err(e) => return Ok(response(api_key, None).failed(&e)),
    };
    let request = HttpRequest {
        url: url(api, model),
        headers,
        body,
    };
    let timeout = config.timeout_ms.filter(|ms| *ms > 0.0);
    let sent = match send(
        services,
        config,
        api,
        model,
        &request,
        timeout,
        key.as_str(),
    )
    .await
    {
        Ok(sent) => sent,
        Err(message) => return Ok(response(api_key.clone(), None).failed(&message)),
    };
    if let Some(hook) = services
        .hooks
        .on_response(sent.status(), &sent.headers(), model)
    {
        if let Err(e) = hook.await {
            return Ok(response(api_key, None).failed(&e.message));
        }
    }
    // A 200 that is not an event stream (a proxy's JSON or HTML page) is named as such. As
    // pi-ai's clients read any 200 as one, a body that starts as one (a gateway's wrong
    // content type) is read as one: its first printable byte decides.
    let kind = sent.header("content-type").unwrap_or_default();
    let mut sent = sent;
    let mut head = Vec::new();
    if crate::text::contains(&kind, "application/json") || crate::text::contains(&kind, "text/html")
    {
        let read = body_failure(services, &mut *sent, true, Some(&key), timeout, &|text| {
            format!(
                "Expected an event stream, got {kind}: {}",
                cut_text(text.trim(), 300)
            )
        })
        .await;
        match read {
            Ok(message) => return Ok(response(api_key.clone(), None).failed(&message)),
            Err(stream) => head = stream,
        }
    }
    let mut r = response(api_key, timeout);
    // (Past a bound, the next read ends the response.)
    let mut events = Vec::new();
    r.sse.feed(&head, &mut events);
    r.pending.extend(events);
    let start = r.decoder.start();
    if let AssistantMessageEvent::Start { partial } = &start {
        r.partial = Some(partial.clone());
    }
    r.queue.push_back(start);
    r.body = Some(sent);
    Ok(r)
}

/// What [`send`] takes for no response within `timeoutMs` (a NUL no error text of a host's
/// starts with).
const TIMED_OUT: &str = "\0timeout";

/// Sends `request` until a 2xx response, retrying per [`retryable`] up to `maxRetries`
/// times. `Err` is the `errorMessage` of a request that failed for good.
async fn send(
    services: &Services,
    config: &ProviderConfig,
    api: Api,
    model: &Value,
    request: &HttpRequest,
    timeout: Option<f64>,
    key: &str,
) -> Result<Box<dyn HttpResponse>, String> {
    let mut attempt = 0u32;
    let aborted = || services.signal.aborted();
    loop {
        // No response within `timeoutMs` is retried as a network error is, as pi-ai's clients
        // retry both; its text is made if it fails for good.
        let sent = within(
            &*services.transport,
            timeout,
            services.transport.send(request),
        )
        .await
        .unwrap_or_else(|| Err(TIMED_OUT.into()));
        let mut response = match sent {
            Ok(r) => r,
            Err(text) => {
                if attempt < config.max_retries && !aborted() {
                    pause(services, attempt, None).await;
                    if aborted() {
                        return Err(ABORTED.into());
                    }
                    attempt += 1;
                    continue;
                }
                // fetch's own message ("fetch failed") says nothing; its cause (refused,
                // unknown host, TLS) is what the user can act on.
                return Err(if text == TIMED_OUT {
                    format!(
                        "Request timed out: no response for {} ms",
                        to_js_string(timeout.unwrap_or_default())
                    )
                } else if text.is_empty() {
                    "Connection error.".to_string()
                } else {
                    format!("Connection error: {text}")
                });
            }
        };
        if response.ok() {
            return Ok(response);
        }
        let should = response.header("x-should-retry");
        if attempt < config.max_retries
            && retryable(response.status(), should.as_deref())
            && !aborted()
        {
            let hooks = &*services.hooks;
            let after = retry_after(&*response, &|v| hooks.parse_date(v), services.clock.now());
            let max_delay = config.max_retry_delay_ms;
            if let Some(ms) = after.filter(|ms| max_delay > 0.0 && *ms > max_delay) {
                let status = StatusLine::of(&*response);
                let message =
                    body_failure(services, &mut *response, false, Some(key), timeout, &|t| {
                        format!(
                            "Server requested {}s retry delay (max: {}s). {}",
                            to_js_string((ms / 1000.0).ceil()),
                            to_js_string((max_delay / 1000.0).ceil()),
                            api_http_error(api, model, &status, t)
                        )
                    })
                    .await
                    .unwrap_or_default();
                return Err(message);
            }
            // The unread body would hold the connection: dropping it cancels it.
            drop(response);
            pause(services, attempt, after).await;
            if aborted() {
                return Err(ABORTED.into());
            }
            attempt += 1;
            continue;
        }
        let status = StatusLine::of(&*response);
        let message = body_failure(services, &mut *response, false, Some(key), timeout, &|t| {
            api_http_error(api, model, &status, t)
        })
        .await
        .unwrap_or_default();
        return Err(message);
    }
}

/// What an HTTP error's text is made from besides its body.
pub struct StatusLine {
    pub status: u16,
    /// `statusText`.
    pub text: String,
    pub content_type: Option<String>,
}

impl StatusLine {
    fn of(r: &dyn HttpResponse) -> Self {
        StatusLine {
            status: r.status(),
            text: r.status_text(),
            content_type: r.header("content-type"),
        }
    }
}

/// Waits before retry `attempt` (ends early on abort).
async fn pause(services: &Services, attempt: u32, server_ms: Option<f64>) {
    let ms = backoff(attempt, server_ms, services.hooks.random());
    services.transport.sleep(ms).await;
}

/// The failure text of a response that is no event stream: `describe` of its body, the
/// key hidden before any of it is cut (a cut through the key would leave a part that no
/// longer matches). The body is read as the stream is, each piece within `timeout`, up to
/// [`MAX_BODY_READ`] bytes; a reset or an abort ends it where it stopped. With `sniff`, a body
/// whose first printable byte cannot start JSON or HTML (`{`, `[`, `<`) is no failure: `Err`
/// with the bytes read, the start of an event stream.
async fn body_failure(
    services: &Services,
    response: &mut dyn HttpResponse,
    mut sniff: bool,
    key: Option<&str>,
    timeout: Option<f64>,
    describe: &dyn Fn(&str) -> String,
) -> Result<String, Vec<u8>> {
    let mut bytes: Vec<u8> = Vec::new();
    let mut over = false;
    // How far the bytes were looked at for the first printable one (spaces, and the BOM's
    // bytes as any that are no printable ASCII, are passed over): each byte once, however
    // the body is cut.
    let mut seen = 0;
    loop {
        if sniff {
            let first = bytes
                .get(seen..)
                .unwrap_or_default()
                .iter()
                .find(|b| b.is_ascii_graphic());
            if let Some(b) = first {
                if !matches!(b, b'{' | b'[' | b'<') {
                    return Err(bytes);
                }
                sniff = false;
            }
            seen = bytes.len();
        }
        let Some(read) = within(&*services.transport, timeout, response.read()).await else {
            return Ok(format!(
                "Request timed out: no data for {} ms (reading the body of a {} response)",
                to_js_string(timeout.unwrap_or_default()),
                response.status()
            ));
        };
        let Ok(Some(chunk)) = read else { break };
        let room = MAX_BODY_READ.saturating_sub(bytes.len());
        over = chunk.len() > room;
        bytes.extend_from_slice(chunk.get(..room).unwrap_or(&chunk));
        if over {
            break; // the caller drops the response, which cancels the rest
        }
    }
    // Decoded as `Response.text()` decodes.
    let body = String::from_utf8_lossy(bytes.strip_prefix(BOM).unwrap_or(&bytes));
    let body = match key.filter(|k| !k.is_empty()) {
        Some(key) => services.hooks.redact(&body, key),
        None => body.into_owned(),
    };
    let text = describe(&body);
    Ok(if over {
        format!("{text} [the body is longer than {MAX_BODY_READ} bytes; the rest was not read]")
    } else {
        text
    })
}

/// One response of the built-in stream, read as its events are asked for.
pub struct ProviderStream {
    services: Services,
    decoder: Box<dyn Decoder>,
    sse: SseDecoder,
    /// The body while it is read; `None` once the response has ended.
    body: Option<Box<dyn HttpResponse>>,
    /// SSE events read but not decoded yet.
    pending: VecDeque<SseEvent>,
    /// The body ended; `pending` is what is left of it.
    ended: bool,
    /// The monotonic clock at the request, for the message's `durationMs` (pi-ai's stream
    /// sets it when the response ends).
    started: f64,
    queue: VecDeque<AssistantMessageEvent>,
    scratch: Vec<AssistantMessageEvent>,
    result: Option<AgentMessage>,
    api_key: Option<String>,
    /// `timeoutMs`: the longest wait for the next piece of the body.
    timeout: Option<f64>,
    /// The live partial (from `start`), whose metadata is kept free of the key.
    partial: Option<crate::event::Partial>,
}

impl ProviderStream {
    /// The response's final message once it ended ([`AssistantStream::result`] without the
    /// await).
    pub fn final_message(&self) -> Option<AgentMessage> {
        self.result.clone()
    }

    fn new(
        services: Services,
        config: &ProviderConfig,
        model: &Rc<Value>,
        now: f64,
        started: f64,
        api_key: Option<String>,
        timeout: Option<f64>,
    ) -> Self {
        let max = config.max_event_bytes.max(1);
        ProviderStream {
            services,
            decoder: new_decoder(model, now),
            sse: SseDecoder::with_limits(SseLimits {
                max_line: max,
                max_data: max,
            }),
            body: None,
            pending: VecDeque::new(),
            ended: false,
            started,
            queue: VecDeque::new(),
            scratch: Vec::new(),
            result: None,
            api_key,
            timeout,
            partial: None,
        }
    }

    /// This response, ended with `message` before any byte was read.
    fn failed(mut self, message: &str) -> Self {
        self.fail(message);
        self
    }

    fn finish_with(&mut self, result: AgentMessage, events: Vec<AssistantMessageEvent>) {
        let duration = self.services.clock.monotonic() - self.started;
        let mut result = result;
        if let Value::Object(o) = Rc::make_mut(&mut result) {
            o.put("durationMs", crate::message::num(duration));
            self.scrub(o, None);
        }
        if let Some(partial) = self.partial.clone() {
            if let Value::Object(o) = &mut *partial.borrow_mut() {
                self.scrub(o, None);
            }
        }
        // The terminal events carry the message; they get the same duration.
        let events = events.into_iter().map(|e| match e {
            AssistantMessageEvent::Done { reason, .. } => AssistantMessageEvent::Done {
                reason,
                message: result.clone(),
            },
            AssistantMessageEvent::Error { reason, .. } => AssistantMessageEvent::Error {
                reason,
                error: result.clone(),
            },
            other => other,
        });
        self.queue.extend(events);
        let late = self.decoder.late_blocks();
        self.services.hooks.finished(&result, &late);
        self.result = Some(result);
        self.body = None;
        self.pending.clear();
    }

    /// Hides the key in the provider's metadata of a message (ids, reasons, error texts,
    /// signatures): its string fields other than `content`, and with `blocks` (all when
    /// `None`) each block's strings other than its text, thinking and arguments. A server
    /// that echoes the key there (as a finish reason, a response id) must not show it. The
    /// key's escaped spellings need no check: these strings were read from JSON, which
    /// unescaped them.
    fn scrub(&self, o: &mut crate::message::Object, blocks: Option<&[usize]>) {
        let Some(key) = self.api_key.as_deref().filter(|k| !k.is_empty()) else {
            return;
        };
        let hooks = &*self.services.hooks;
        let hide = |v: &mut Value| {
            if let Value::String(s) = v {
                if crate::text::contains(s, key) {
                    *s = hooks.redact(s, key);
                }
            }
        };
        for (k, v) in o.iter_mut() {
            match (k.as_str(), v) {
                ("content", Value::Array(list)) => {
                    for (i, b) in list.iter_mut().enumerate() {
                        if blocks.is_some_and(|only| !only.contains(&i)) {
                            continue;
                        }
                        if let Value::Object(b) = b {
                            for (bk, bv) in b.iter_mut() {
                                if !matches!(bk.as_str(), "text" | "thinking" | "arguments") {
                                    hide(bv);
                                }
                            }
                        }
                    }
                }
                (_, v) => hide(v),
            }
        }
    }

    /// [`scrub`](Self::scrub) of the live partial after a decode step: its top-level fields
    /// when they changed, and the blocks whose start or end the step queued (those events
    /// show the whole block).
    fn hide_key(&self, top_changed: bool, events: &[AssistantMessageEvent]) {
        use AssistantMessageEvent as E;
        let (Some(partial), Some(_)) = (&self.partial, &self.api_key) else {
            return;
        };
        let blocks: Vec<usize> = events
            .iter()
            .filter_map(|e| match e {
                E::TextStart { content_index, .. }
                | E::ThinkingStart { content_index, .. }
                | E::ToolcallStart { content_index, .. }
                | E::TextEnd { content_index, .. }
                | E::ThinkingEnd { content_index, .. }
                | E::ToolcallEnd { content_index, .. } => Some(*content_index),
                _ => None,
            })
            .collect();
        if !top_changed && blocks.is_empty() {
            return;
        }
        if let Value::Object(o) = &mut *partial.borrow_mut() {
            self.scrub(o, Some(&blocks));
        }
    }

    fn fail(&mut self, message: &str) {
        let mut out = Vec::new();
        let is_abort = self.services.signal.aborted();
        let text = if is_abort {
            ABORTED.to_string()
        } else {
            // The key is hidden before the text is cut: a cut through it would leave a part
            // that no longer matches.
            let text = match self.api_key.as_deref().filter(|k| !k.is_empty()) {
                Some(key) => self.services.hooks.redact(message, key),
                None => message.to_string(),
            };
            cut_text(&text, MAX_ERROR_TEXT)
        };
        let m = self.decoder.fail(&text, is_abort, &mut out);
        self.finish_with(m, out);
    }

    /// Decodes one SSE event (one provider chunk, as pi-ai handles one per step, so the
    /// partial is never more than one chunk ahead of the events being delivered).
    fn decode(&mut self, event: &SseEvent) {
        // JSON's whitespace only, as JSON.parse skips it: any other (U+00A0, U+2028, a form
        // feed) makes the data malformed, as in pi.
        let data = event.data.trim_matches([' ', '\t', '\n', '\r']);
        if data.is_empty() {
            return;
        }
        // One buffer for every chunk's events.
        let mut out = std::mem::take(&mut self.scratch);
        let revision = super::top_level_revision();
        let decoded = self.decoder.event(&event.event, data, &mut out);
        self.hide_key(revision != super::top_level_revision(), &out);
        self.queue.extend(out.drain(..));
        self.scratch = out;
        match decoded {
            Ok(false) => {}
            Ok(true) => {
                if let Some(body) = self.body.as_mut() {
                    body.answered();
                }
                self.end()
            }
            Err(message) => self.fail(&message),
        }
    }

    fn end(&mut self) {
        if self.services.signal.aborted() {
            return self.fail(ABORTED);
        }
        let mut out = Vec::new();
        let m = self.decoder.finish(&mut out);
        self.finish_with(m, out);
    }

    /// The body ended (or overflowed): what was decoded decides (L-20).
    fn body_ended(&mut self) {
        match self.sse.overflow() {
            Some(over) => {
                let (what, max) = match over {
                    SseOverflow::Line(max) => ("a line", max),
                    SseOverflow::Event(max) => ("an event's data", max),
                };
                self.fail(&format!(
                    "Stopped reading the event stream: {what} is longer than {max} bytes (maxEventBytes)"
                ))
            }
            None => self.end(),
        }
    }

    /// Reads the next piece of the body into `pending`.
    async fn read(&mut self) {
        let transport = self.services.transport.clone();
        let timeout = self.timeout;
        let Some(body) = self.body.as_mut() else {
            return;
        };
        let Some(read) = within(&*transport, timeout, body.read()).await else {
            if self.decoder.complete() {
                // The answer is whole; only usage was still to come.
                return self.end();
            }
            let ms = to_js_string(timeout.unwrap_or_default());
            return self.fail(&format!("Request timed out: no data for {ms} ms"));
        };
        let mut events = Vec::new();
        match read {
            Ok(Some(bytes)) => {
                self.sse.feed(&bytes, &mut events);
                // Past a bound the decoder reads no more: the events before it are
                // decoded, then the response fails.
                self.ended = self.sse.overflow().is_some();
            }
            Ok(None) => {
                self.sse.finish(&mut events);
                // Ended without `[DONE]`: what was decoded decides (L-20).
                self.ended = true;
            }
            // A connection lost after the finish reason loses no part of the answer.
            Err(_) if self.decoder.complete() => return self.end(),
            Err(e) => return self.fail(&e),
        }
        self.pending.extend(events);
    }
}

impl AssistantStream for ProviderStream {
    fn next(&mut self) -> HostFuture<'_, Option<AssistantMessageEvent>> {
        Box::pin(async move {
            loop {
                if let Some(e) = self.queue.pop_front() {
                    return Ok(Some(e));
                }
                if self.body.is_none() {
                    return Ok(None);
                }
                if let Some(event) = self.pending.pop_front() {
                    self.decode(&event);
                } else if self.ended {
                    self.body_ended();
                } else {
                    self.read().await;
                }
            }
        })
    }

    fn result(&mut self) -> HostFuture<'_, Option<AgentMessage>> {
        Box::pin(async move { Ok(self.final_message()) })
    }

    /// Only a read of the body waits.
    fn ready(&self) -> bool {
        !self.queue.is_empty() || self.body.is_none() || !self.pending.is_empty() || self.ended
    }
}
