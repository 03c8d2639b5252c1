//! The built-in stream function: `openai-completions`, `openai-responses`,
//! `anthropic-messages` and `google-generative-ai` requests made from Rust over the host's
//! `fetch`, the body decoded in Rust (SSE, then the API's
//! [`Decoder`]). The response's events stay Rust values; the sink sends only each delta to
//! JS (host.rs).
//!
//! Failures follow pi-ai's contract (L-20): HTTP errors, network errors, bad bytes and
//! aborts end the response as a message with `stopReason` `"error"`/`"aborted"` and an
//! `errorMessage` naming the cause; only a throwing `onPayload`/`onResponse` hook rejects.
//! The API key goes into the API's key header only (`Authorization`, `x-api-key` or
//! `x-goog-api-key`) and is cut out of every error text.

use std::collections::VecDeque;
use std::rc::Rc;

use js_sys::Function;
use serde_json::Value;
use wasm_bindgen::prelude::*;

use super::fetch::{fetch_fn, post, BodyReader, Response};
use super::host::{seed, start_copy, sync_blocks, sync_meta, JsClock, JsSignal, UpdateCell};
use super::js::{call, from_json, get, set, settle, to_json};
use super::table::Table;
use crate::error::Thrown;
use crate::event::AssistantMessageEvent;
use crate::io::{
    AbortSignal, AssistantStream, Clock, HostFuture, LlmContext, StreamFn, StreamOptions,
};
use crate::jsnum::to_js_string;
use crate::message::{str_field, AgentMessage};
use crate::provider::anthropic::AnthropicDecoder;
use crate::provider::anthropic_request::{self, AnthropicOptions};
use crate::provider::cut_text;
use crate::provider::google::GoogleDecoder;
use crate::provider::google_request::{self, GoogleOptions};
use crate::provider::openai_completions::ChatCompletionsDecoder;
use crate::provider::openai_completions_request::{build_params, RequestOptions};
use crate::provider::openai_responses::ResponsesDecoder;
use crate::provider::openai_responses_request::{self, ResponsesOptions};
use crate::provider::Decoder;
use crate::stream::{SseDecoder, SseEvent, SseLimits, SseOverflow};

/// pi-ai keeps this much of an error body.
const MAX_ERROR_BODY: usize = 4000;

/// The default bound (`maxEventBytes`) on one SSE line and on the data of one event: far
/// above real traffic, where a Responses `response.completed` event carries the whole
/// output and a Gemini chunk may carry inline images of several MB.
const MAX_EVENT_BYTES: f64 = 64.0 * 1024.0 * 1024.0;

/// The most of a body that is no event stream (an HTTP error's, a 200 of JSON) that is read:
/// its text is quoted cut to a few thousand characters anyway.
const MAX_BODY_READ: usize = 1024 * 1024;

/// What `Response.text()` drops from the start of a body.
const BOM: &[u8] = b"\xEF\xBB\xBF";

pub struct BuiltinStreamFn {
    /// The caller's config: `maxTokens`, `temperature`, `toolChoice`, `headers`, `onPayload`,
    /// `onResponse`, `maxRetries`, `maxRetryDelayMs`, `timeoutMs`, `fetch`.
    pub config: JsValue,
    pub signal: JsSignal,
    /// Glue: `sleep(ms, signal)`, a Promise resolved after `ms` or at abort.
    pub sleep: Function,
    /// Glue `copyWith(object)`: a shallow copy.
    pub copy: Function,
    /// Glue `assignMeta(partial, metaJson)`: sets a JS partial's top-level fields.
    pub assign_meta: Function,
    /// Glue `deadline(ms)`: `{ promise, cancel }` of a timer.
    pub deadline: Function,
    /// Glue `envApiKey(provider, env)`: `{ apiKey }` or `{ note }` from the environment.
    pub env_api_key: Function,
    /// Glue `describeError(error)`: a thrown value's message with its cause (the same
    /// wording `streamProxy` uses).
    pub describe_error: Function,
    /// Glue `redact(text, key)`: the key hidden in error text.
    pub redact: Function,
    /// The sink's copy of the response being rendered, seeded at `start`.
    pub updates: UpdateCell,
    pub table: Rc<Table>,
}

/// The text with every occurrence of the key replaced.
/// `text` with the API key hidden, by the glue's `redact`: one policy for this stream and
/// `streamProxy` (the key as sent, trimmed as fetch sends it, and JSON-escaped; a short key
/// only where it stands alone). Should the glue fail, every plain occurrence is replaced.
fn redact(glue: &Function, text: &str, key: Option<&str>) -> String {
    let Some(key) = key.filter(|k| !k.is_empty()) else {
        return text.to_string();
    };
    call(glue, &[&JsValue::from_str(text), &JsValue::from_str(key)])
        .ok()
        .and_then(|v| v.as_string())
        .unwrap_or_else(|| text.replace(key, "[redacted]"))
}

/// pi-ai's text for an HTTP error: `"<status>: <error object>"` for a JSON body with an
/// `error` object, else `"<status> <body>"`, or `"<status> status code (no body)"`.
fn http_error(status: u16, body: &str) -> String {
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

/// The APIs the built-in stream speaks.
#[derive(Clone, Copy, PartialEq)]
enum Api {
    Completions,
    Responses,
    Anthropic,
    Google,
}

impl Api {
    fn of(model: &Value) -> Option<Api> {
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

/// The HTTP error text: pi-ai's Responses provider prefixes it with the provider.
fn api_http_error(api: Api, model: &Value, response: &Response, body: &str) -> String {
    let status = response.status;
    if api == Api::Google {
        // @google/genai's: a JSON body (by its content type) as JSON, else an error object
        // of the text, the status and its text.
        let json = response
            .header("content-type")
            .is_some_and(|t| t.contains("application/json"));
        let v = match crate::json::parse(body) {
            Ok(v) if json => v,
            _ => serde_json::json!({ "error": {
                "message": body,
                "code": status,
                "status": get(&response.response, "statusText").as_string().unwrap_or_default(),
            }}),
        };
        return cut_text(&crate::jsnum::json_stringify(&v), MAX_ERROR_BODY);
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
                    cut_text(&crate::jsnum::json_stringify(&v), MAX_ERROR_BODY)
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

/// `fut`'s output, or `None` when `timeout` ms pass first (`deadline` is the glue's
/// cancellable timer, cleared either way so no timer outlives the wait).
async fn within<T>(
    deadline: &Function,
    timeout: Option<f64>,
    fut: impl std::future::Future<Output = T>,
) -> Option<T> {
    let Some(ms) = timeout else {
        return Some(fut.await);
    };
    let Ok(timer) = call(deadline, &[&JsValue::from_f64(ms)]) else {
        return Some(fut.await);
    };
    let expired = settle(get(&timer, "promise"));
    let out = match futures::future::select(Box::pin(fut), Box::pin(expired)).await {
        futures::future::Either::Left((v, _)) => Some(v),
        futures::future::Either::Right(_) => None,
    };
    if let Some(cancel) = get(&timer, "cancel").dyn_ref::<Function>() {
        let _ = call(cancel, &[]);
    }
    out
}

/// The `anthropic-beta` header the model's or the call's headers set (the call's last):
/// `Some(None)` when set to `null`, which turns the betas off.
fn configured_betas(model: &Value, config: &JsValue) -> Option<Option<String>> {
    let mut found = None;
    if let Some(Value::Object(h)) = model.get("headers") {
        for (k, v) in h {
            if k.eq_ignore_ascii_case("anthropic-beta") {
                found = Some(v.as_str().map(str::to_string));
            }
        }
    }
    // Headers that cannot be read fail the request where they are added (header_pairs).
    if let Ok(Some(Value::Object(h))) = to_json(&get(config, "headers"), "headers") {
        for (k, v) in h {
            if k.eq_ignore_ascii_case("anthropic-beta") {
                found = Some(v.as_str().map(str::to_string));
            }
        }
    }
    found
}

fn retryable(status: u16, should_retry: Option<&str>) -> bool {
    match should_retry {
        Some("true") => true,
        Some("false") => false,
        _ => matches!(status, 408 | 409 | 429) || status >= 500,
    }
}

fn number(config: &JsValue, name: &'static str) -> Option<f64> {
    get(config, name).as_f64().filter(|n| n.is_finite())
}

/// String-valued entries of a headers object (read as JSON: a throwing getter or Proxy
/// trap is `Err`).
fn header_pairs(v: &JsValue, out: &mut Vec<(String, String)>) -> Result<(), String> {
    if let Some(h) = to_json(v, "headers")? {
        header_pairs_json(&h, out);
    }
    Ok(())
}

/// String-valued entries of a JSON headers object, each replacing one of the same name.
fn header_pairs_json(h: &Value, out: &mut Vec<(String, String)>) {
    if let Value::Object(h) = h {
        for (k, val) in h {
            if let Value::String(val) = val {
                out.retain(|(old, _)| !old.eq_ignore_ascii_case(k));
                out.push((k.clone(), val.clone()));
            }
        }
    }
}

enum State {
    /// Reading the body.
    Reading(BodyReader),
    /// The terminal event is queued; `result()` gives the message.
    Finished,
}

struct RustResponse {
    decoder: Box<dyn Decoder>,
    sse: SseDecoder,
    state: State,
    /// SSE events read but not decoded yet.
    pending: VecDeque<SseEvent>,
    /// The body ended; `pending` is what is left of it.
    ended: bool,
    /// `performance.now()` at the request, for the message's `durationMs` (pi-ai's stream
    /// sets it when the response ends).
    started: f64,
    queue: VecDeque<AssistantMessageEvent>,
    scratch: Vec<AssistantMessageEvent>,
    result: Option<AgentMessage>,
    signal: JsSignal,
    api_key: Option<String>,
    redact: Function,
    copy: Function,
    assign_meta: Function,
    updates: UpdateCell,
    table: Rc<Table>,
    deadline: Function,
    /// `timeoutMs`: the longest wait for the next piece of the body.
    timeout: Option<f64>,
}

impl RustResponse {
    fn finish_with(&mut self, result: AgentMessage, events: Vec<AssistantMessageEvent>) {
        let duration = JsClock.monotonic() - self.started;
        let mut result = result;
        if let Value::Object(o) = Rc::make_mut(&mut result) {
            o.insert("durationMs".into(), crate::message::num(duration));
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
        // pi-ai's final message is its partial: the JS copy ends in the same state.
        let late = self.decoder.late_blocks();
        if !late.is_empty() {
            sync_blocks(&self.updates, &result, &late);
        }
        sync_meta(&self.updates, &result, &self.assign_meta);
        self.result = Some(result);
        self.state = State::Finished;
    }

    fn fail(&mut self, message: &str) {
        let mut out = Vec::new();
        let is_abort = self.signal.aborted();
        let text = if is_abort {
            "Request was aborted".to_string()
        } else {
            redact(&self.redact, message, self.api_key.as_deref())
        };
        let m = self.decoder.fail(&text, is_abort, &mut out);
        self.finish_with(m, out);
    }

    /// Decodes one SSE event (one provider chunk, as pi-ai handles one per step, so the
    /// partial is never more than one chunk ahead of the events being delivered).
    fn decode(&mut self, event: &SseEvent) {
        let data = event.data.trim();
        if data.is_empty() {
            return;
        }
        // One buffer for every chunk's events.
        let mut out = std::mem::take(&mut self.scratch);
        let decoded = self.decoder.event(&event.event, data, &mut out);
        self.queue.extend(out.drain(..));
        self.scratch = out;
        match decoded {
            Ok(false) => {}
            Ok(true) => {
                self.pending.clear();
                self.end();
            }
            Err(message) => {
                self.pending.clear();
                self.fail(&message);
            }
        }
    }

    fn end(&mut self) {
        if self.signal.aborted() {
            return self.fail("Request was aborted");
        }
        let mut out = Vec::new();
        let m = self.decoder.finish(&mut out);
        self.finish_with(m, out);
    }
}

impl AssistantStream for RustResponse {
    fn next(&mut self) -> HostFuture<'_, Option<AssistantMessageEvent>> {
        Box::pin(async move {
            loop {
                if let Some(e) = self.queue.pop_front() {
                    return Ok(Some(e));
                }
                if let Some(event) = self.pending.pop_front() {
                    self.decode(&event);
                    continue;
                }
                if self.ended && matches!(self.state, State::Reading(_)) {
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
                    continue;
                }
                let State::Reading(reader) = &mut self.state else {
                    return Ok(None);
                };
                let Some(read) = within(&self.deadline, self.timeout, reader.read()).await else {
                    let ms = self.timeout.unwrap_or_default();
                    self.fail(&format!(
                        "Request timed out: no data for {} ms",
                        to_js_string(ms)
                    ));
                    continue;
                };
                match read {
                    Ok(Some(bytes)) => {
                        let mut events = Vec::new();
                        self.sse.feed(&bytes, &mut events);
                        self.pending.extend(events);
                        // Past a bound the decoder reads no more: the events before it
                        // are decoded, then the response fails.
                        self.ended = self.sse.overflow().is_some();
                    }
                    Ok(None) => {
                        let mut events = Vec::new();
                        self.sse.finish(&mut events);
                        self.pending.extend(events);
                        // Ended without `[DONE]`: what was decoded decides (L-20).
                        self.ended = true;
                    }
                    Err(e) => self.fail(&e.message),
                }
            }
        })
    }

    fn result(&mut self) -> HostFuture<'_, Option<AgentMessage>> {
        Box::pin(async move { Ok(self.result.clone()) })
    }

    /// `message_start`'s message is a shallow copy of the JS partial the updates edit, so
    /// its `content` is that partial's live array, as with pi's `{...partial}`.
    fn start_snapshot(&mut self, partial: &crate::event::Partial) -> AgentMessage {
        let js = start_copy(partial);
        seed(&self.updates, partial, js.clone());
        match call(&self.copy, &[&js]) {
            Ok(copy) => {
                let m: AgentMessage = Rc::new(partial.borrow().clone());
                self.table.register_pair(m.clone(), copy);
                m
            }
            Err(_) => Rc::new(partial.borrow().clone()),
        }
    }
}

impl BuiltinStreamFn {
    /// A response over `decoder`, not reading yet.
    fn response(
        &self,
        decoder: Box<dyn Decoder>,
        api_key: Option<String>,
        started: f64,
        timeout: Option<f64>,
    ) -> RustResponse {
        let max = number(&self.config, "maxEventBytes")
            .filter(|n| *n >= 1.0)
            .unwrap_or(MAX_EVENT_BYTES) as usize;
        RustResponse {
            decoder,
            sse: SseDecoder::with_limits(SseLimits {
                max_line: max,
                max_data: max,
            }),
            state: State::Finished,
            pending: VecDeque::new(),
            ended: false,
            started,
            queue: VecDeque::new(),
            scratch: Vec::new(),
            result: None,
            signal: self.signal.clone(),
            api_key,
            redact: self.redact.clone(),
            copy: self.copy.clone(),
            assign_meta: self.assign_meta.clone(),
            updates: self.updates.clone(),
            table: self.table.clone(),
            deadline: self.deadline.clone(),
            timeout,
        }
    }

    fn fail_early(
        &self,
        model: &Rc<Value>,
        message: &str,
        api_key: Option<String>,
    ) -> Box<dyn AssistantStream + '_> {
        let mut r = self.response(
            new_decoder(model, js_sys::Date::now()),
            api_key,
            JsClock.monotonic(),
            None,
        );
        r.fail(message);
        Box::new(r)
    }
}

impl StreamFn for BuiltinStreamFn {
    fn stream<'a>(
        &'a self,
        model: &'a Rc<Value>,
        context: LlmContext,
        options: StreamOptions,
    ) -> HostFuture<'a, Box<dyn AssistantStream + 'a>> {
        Box::pin(async move {
            // pi passes the stream function `{ ...config }`: a getter that throws there
            // rejects the run, here too.
            call(&self.copy, &[&self.config])?;
            let Some(api) = Api::of(model) else {
                let name = str_field(model, "api");
                return Err(Thrown::new(format!(
                    "No built-in provider for api: {name} (pass a streamFn for it)"
                )));
            };
            let now = js_sys::Date::now();
            let started = JsClock.monotonic();
            let (api_key, note) = self.api_key(model, options.api_key.clone());
            let Some(key) = api_key.clone() else {
                let provider = str_field(model, "provider");
                let message = match note {
                    Some(note) => format!("No API key for provider: {provider} ({note})"),
                    None => format!("No API key for provider: {provider}"),
                };
                return Ok(self.fail_early(model, &message, None));
            };
            let Some(fetch) = fetch_fn(&get(&self.config, "fetch")) else {
                return Ok(self.fail_early(
                    model,
                    "No fetch function in this environment",
                    api_key,
                ));
            };
            let messages: Vec<Value> = context.messages.iter().map(|m| (**m).clone()).collect();
            let request = RequestOptions {
                max_tokens: number(&self.config, "maxTokens"),
                temperature: number(&self.config, "temperature"),
                reasoning: options.reasoning,
                tool_choice: to_json(&get(&self.config, "toolChoice"), "toolChoice")
                    .ok()
                    .flatten(),
                sampling_params: None,
            };
            let session_id = get(&self.config, "sessionId").as_string();
            let mut betas: Vec<String> = Vec::new();
            let cache_retention = get(&self.config, "cacheRetention").as_string();
            let built = match api {
                Api::Google => {
                    let request = GoogleOptions {
                        max_tokens: request.max_tokens,
                        temperature: request.temperature,
                        reasoning: options.reasoning,
                        tool_choice: get(&self.config, "toolChoice").as_string(),
                    };
                    google_request::build_body(model, &messages, &request, now)
                }
                Api::Responses => {
                    let request = ResponsesOptions {
                        base: request,
                        session_id: session_id.clone(),
                        cache_retention: cache_retention.clone(),
                        api_key: Some(key.clone()),
                    };
                    openai_responses_request::build_body(model, &messages, &request, now)
                }
                Api::Anthropic => {
                    let metadata = get(&self.config, "metadata");
                    let request = AnthropicOptions {
                        max_tokens: request.max_tokens,
                        temperature: request.temperature,
                        reasoning: options.reasoning,
                        tool_choice: request.tool_choice,
                        cache_retention: cache_retention.clone(),
                        thinking_budgets: to_json(
                            &get(&self.config, "thinkingBudgets"),
                            "thinkingBudgets",
                        )
                        .ok()
                        .flatten(),
                        user_id: get(&metadata, "user_id").as_string(),
                        configured_betas: configured_betas(model, &self.config),
                    };
                    let built = anthropic_request::build_request(model, &messages, &request, now);
                    betas = built.betas;
                    Ok(built.body)
                }
                Api::Completions => Ok(build_params(model, &messages, &request, now)),
            };
            let mut params = match built {
                Ok(p) => p,
                Err(message) => return Ok(self.fail_early(model, &message, api_key)),
            };
            let model_js = self.table.to_js(model);

            // onPayload may replace the body (L-80 forwards it from the config).
            if let Some(hook) = get(&self.config, "onPayload").dyn_ref::<Function>() {
                let next = settle(call(hook, &[&from_json(&params), &model_js])?).await?;
                if !next.is_undefined() {
                    params = to_json(&next, "onPayload's result")
                        .map_err(Thrown::new)?
                        .unwrap_or(Value::Null);
                }
            }
            let body = crate::jsnum::json_stringify(&params);

            let mut headers = vec![("Content-Type".to_string(), "application/json".to_string())];
            match api {
                Api::Google => headers.push(("x-goog-api-key".into(), key.clone())),
                Api::Anthropic => {
                    headers.push(("x-api-key".into(), key.clone()));
                    headers.push(("anthropic-version".into(), "2023-06-01".into()));
                    headers.push(("accept".into(), "application/json".into()));
                    headers.push((
                        "anthropic-dangerous-direct-browser-access".into(),
                        "true".into(),
                    ));
                }
                _ => headers.push(("Authorization".into(), format!("Bearer {key}"))),
            }
            headers.extend(crate::provider::attribution_headers(
                model,
                &options.identity,
            ));
            if let Some(model_headers) = model.get("headers").filter(|h| h.is_object()) {
                header_pairs_json(model_headers, &mut headers);
            }
            // Session affinity (Responses): the session routes to the same cache.
            if let (Api::Responses, Some(id)) = (api, &session_id) {
                if cache_retention.as_deref() != Some("none") {
                    let openrouter = str_field(model, "provider") == "openrouter"
                        || str_field(model, "baseUrl").contains("openrouter.ai");
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
            if let Err(e) = header_pairs(&get(&self.config, "headers"), &mut headers) {
                return Ok(self.fail_early(model, &e, api_key));
            }
            if !betas.is_empty() {
                headers.push(("anthropic-beta".into(), betas.join(",")));
            }

            let url = match api {
                Api::Google => google_request::url(model),
                Api::Responses => openai_responses_request::url(model),
                Api::Anthropic => anthropic_request::url(model),
                Api::Completions => {
                    let base = str_field(model, "baseUrl").trim_end_matches('/');
                    format!("{base}/chat/completions")
                }
            };
            // Opt-in: how long to wait for the response, and then for each piece of the body.
            let timeout = number(&self.config, "timeoutMs").filter(|ms| *ms > 0.0);
            let max_retries = number(&self.config, "maxRetries").unwrap_or(0.0).max(0.0) as u32;
            let mut attempt = 0u32;
            let response = loop {
                let request = post(&fetch, &url, &headers, &body, &self.signal.0);
                let Some(sent) = within(&self.deadline, timeout, request).await else {
                    let ms = timeout.unwrap_or_default();
                    let message =
                        format!("Request timed out: no response for {} ms", to_js_string(ms));
                    return Ok(self.fail_early(model, &message, api_key));
                };
                let response = match sent {
                    Ok(r) => r,
                    Err(e) => {
                        if attempt < max_retries && !self.signal.aborted() {
                            self.pause(attempt, None).await;
                            if self.signal.aborted() {
                                return Ok(self.fail_early(model, "Request was aborted", api_key));
                            }
                            attempt += 1;
                            continue;
                        }
                        // fetch's own message ("fetch failed") says nothing; its cause
                        // (refused, unknown host, TLS) is what the user can act on.
                        let text = e
                            .payload
                            .as_ref()
                            .and_then(|p| p.downcast_ref::<JsValue>())
                            .and_then(|v| call(&self.describe_error, &[v]).ok())
                            .and_then(|t| t.as_string())
                            .unwrap_or_else(|| e.message.clone());
                        let message = if text.is_empty() {
                            "Connection error.".to_string()
                        } else {
                            format!("Connection error: {text}")
                        };
                        return Ok(self.fail_early(model, &message, api_key));
                    }
                };
                if response.ok {
                    break response;
                }
                let should = response.header("x-should-retry");
                if attempt < max_retries
                    && retryable(response.status, should.as_deref())
                    && !self.signal.aborted()
                {
                    let after = response
                        .header("retry-after-ms")
                        .and_then(|v| v.parse::<f64>().ok())
                        .or_else(|| {
                            response
                                .header("retry-after")
                                .and_then(|v| v.parse::<f64>().ok())
                                .map(|s| s * 1000.0)
                        });
                    let max_delay = number(&self.config, "maxRetryDelayMs").unwrap_or(60_000.0);
                    if let Some(ms) = after.filter(|ms| max_delay > 0.0 && *ms > max_delay) {
                        let message = self
                            .body_failure(&response, api_key.as_deref(), timeout, &|text| {
                                format!(
                                    "Server requested {}s retry delay (max: {}s). {}",
                                    to_js_string((ms / 1000.0).ceil()),
                                    to_js_string((max_delay / 1000.0).ceil()),
                                    api_http_error(api, model, &response, text)
                                )
                            })
                            .await;
                        return Ok(self.fail_early(model, &message, api_key));
                    }
                    // The unread body would hold the connection.
                    drop(response.reader());
                    self.pause(attempt, after).await;
                    if self.signal.aborted() {
                        return Ok(self.fail_early(model, "Request was aborted", api_key));
                    }
                    attempt += 1;
                    continue;
                }
                let message = self
                    .body_failure(&response, api_key.as_deref(), timeout, &|text| {
                        api_http_error(api, model, &response, text)
                    })
                    .await;
                return Ok(self.fail_early(model, &message, api_key));
            };

            if let Some(hook) = get(&self.config, "onResponse").dyn_ref::<Function>() {
                let info = js_sys::Object::new();
                set(
                    &info,
                    "status",
                    &JsValue::from_f64(f64::from(response.status)),
                );
                let h = js_sys::Object::new();
                for (k, v) in response.headers() {
                    let _ =
                        js_sys::Reflect::set(&h, &JsValue::from_str(&k), &JsValue::from_str(&v));
                }
                set(&info, "headers", &h);
                settle(call(hook, &[&info, &model_js])?).await?;
            }

            // A 200 that is not an event stream (a proxy's JSON or HTML page) is named as such.
            let kind = response.header("content-type").unwrap_or_default();
            if kind.contains("application/json") || kind.contains("text/html") {
                let message = self
                    .body_failure(&response, api_key.as_deref(), timeout, &|text| {
                        format!(
                            "Expected an event stream, got {kind}: {}",
                            cut_text(text.trim(), 300)
                        )
                    })
                    .await;
                return Ok(self.fail_early(model, &message, api_key));
            }

            let decoder = new_decoder(model, now);
            let start = decoder.start();
            let mut r = self.response(decoder, api_key, started, timeout);
            r.queue.push_back(start);
            match response.reader() {
                Ok(reader) => r.state = State::Reading(reader),
                Err(e) => r.fail(&e.message),
            }
            Ok(Box::new(r) as Box<dyn AssistantStream + 'a>)
        })
    }
}

impl BuiltinStreamFn {
    /// The failure text of a response that is no event stream: `describe` of its body, the
    /// key hidden before any of it is cut (a cut through the key would leave a part that no
    /// longer matches). The body is read as the stream is, each piece within `timeout`, up
    /// to [`MAX_BODY_READ`] bytes; a reset or an abort ends it where it stopped.
    async fn body_failure(
        &self,
        response: &Response,
        key: Option<&str>,
        timeout: Option<f64>,
        describe: &dyn Fn(&str) -> String,
    ) -> String {
        let mut bytes = Vec::new();
        let mut over = false;
        if let Ok(mut reader) = response.reader() {
            loop {
                let Some(read) = within(&self.deadline, timeout, reader.read()).await else {
                    return format!(
                        "Request timed out: no data for {} ms (reading the body of a {} response)",
                        to_js_string(timeout.unwrap_or_default()),
                        response.status
                    );
                };
                let Ok(Some(chunk)) = read else { break };
                let room = MAX_BODY_READ - bytes.len();
                over = chunk.len() > room;
                bytes.extend_from_slice(chunk.get(..room).unwrap_or(&chunk));
                if over {
                    break; // dropping the reader cancels the rest
                }
            }
        }
        // Decoded as `Response.text()` decodes.
        let body = String::from_utf8_lossy(bytes.strip_prefix(BOM).unwrap_or(&bytes));
        let text = describe(&redact(&self.redact, &body, key));
        if over {
            format!("{text} [the body is longer than {MAX_BODY_READ} bytes; the rest was not read]")
        } else {
            text
        }
    }

    /// The key to send, as pi-ai's compat `streamSimple` picks it: the given key unless it
    /// is blank; else the environment's (the glue's `envApiKey`, the host's business); else
    /// the given one as it is (a blank key is sent, an empty one is none). With no key, the
    /// glue's note on a variable it saw but does not use.
    fn api_key(&self, model: &Value, given: Option<String>) -> (Option<String>, Option<String>) {
        if given
            .as_deref()
            .is_some_and(|k| !crate::jsnum::is_js_blank(k))
        {
            return (given, None);
        }
        let provider = JsValue::from_str(str_field(model, "provider"));
        let found = call(&self.env_api_key, &[&provider, &get(&self.config, "env")])
            .unwrap_or(JsValue::UNDEFINED);
        match get(&found, "apiKey").as_string() {
            Some(key) => (Some(key), None),
            None => (
                given.filter(|k| !k.is_empty()),
                get(&found, "note").as_string(),
            ),
        }
    }

    /// Waits before retry `attempt` (ends early on abort): the server's delay, else 0.5 s
    /// doubling up to 8 s, less up to a quarter at random (pi-ai's policy).
    async fn pause(&self, attempt: u32, server_ms: Option<f64>) {
        let ms = server_ms
            .filter(|m| m.is_finite() && *m >= 0.0)
            .unwrap_or_else(|| {
                let base = (0.5 * f64::from(2u32.saturating_pow(attempt.min(4)))).min(8.0) * 1000.0;
                base * (1.0 - js_sys::Math::random() * 0.25)
            });
        if let Ok(p) = call(&self.sleep, &[&JsValue::from_f64(ms), &self.signal.0]) {
            let _ = settle(p).await;
        }
    }
}
