//! The built-in stream function's JS adapters: the host's `fetch` as [`Transport`], the
//! caller's `onPayload`/`onResponse`, the environment's keys and the key redaction as
//! [`ProviderHooks`], and the caller's options as a [`ProviderConfig`]. The policy (request
//! assembly, retries, error wording, the SSE feed loop) lives in `provider::driver`.
//!
//! The response's events stay Rust values; the sink sends only each delta to JS
//! (sink.rs). The JS copy of the partial that the updates edit (mirror.rs) is seeded here at `start`
//! and brought up to the final message when the response ends.

use crate::json::Put;
use std::rc::Rc;

use crate::json::Value;
use futures::future::LocalBoxFuture;
use js_sys::Function;
use wasm_bindgen::prelude::*;

use super::fetch::{fetch_fn, post, BodyReader, Response};
use super::glue::Glue;
use super::host::{JsClock, JsSignal};
use super::js::{call, from_json, get, set, settle, to_json};
use super::mirror::{
    copy, end_read, seed, start_copy, sync_blocks, sync_meta, was_cut, UpdateCell,
};
use super::table::Table;
use crate::error::Thrown;
use crate::event::{AssistantMessageEvent, Partial};
use crate::io::{
    AssistantStream, HostFuture, HttpRequest, HttpResponse, LlmContext, StreamFn, StreamOptions,
    Transport,
};
use crate::message::AgentMessage;
use crate::provider::driver::{
    self, EnvKey, ProviderConfig, ProviderHooks, ProviderStream, Services, MAX_EVENT_BYTES,
};

pub struct BuiltinStreamFn {
    /// The caller's config: `maxTokens`, `temperature`, `toolChoice`, `headers`, `onPayload`,
    /// `onResponse`, `maxRetries`, `maxRetryDelayMs`, `timeoutMs`, `fetch`.
    pub config: JsValue,
    pub signal: JsSignal,
    /// The sink's copy of the response being rendered, seeded at `start`.
    pub updates: UpdateCell,
    pub table: Rc<Table>,
    /// A loop's: each request's identity is made from `config.identity` then, as pi's loop
    /// makes it; `streamSimple`'s takes `options.identity` as given, as pi-ai does.
    pub request_identity: bool,
}

fn number(config: &JsValue, name: &'static str) -> Option<f64> {
    get(config, name).as_f64().filter(|n| n.is_finite())
}

/// The caller's options as the driver reads them, read at each request (pi passes the
/// stream function a fresh `{ ...config }` each time).
fn provider_config(config: &JsValue) -> ProviderConfig {
    let json = |name: &'static str| to_json(&get(config, name), name);
    ProviderConfig {
        max_tokens: number(config, "maxTokens"),
        temperature: number(config, "temperature"),
        tool_choice: json("toolChoice").ok().flatten(),
        headers: json("headers").map_err(String::from),
        session_id: get(config, "sessionId").as_string(),
        cache_retention: get(config, "cacheRetention").as_string(),
        user_id: get(&get(config, "metadata"), "user_id").as_string(),
        thinking_budgets: json("thinkingBudgets").ok().flatten(),
        max_retries: number(config, "maxRetries").unwrap_or(0.0).max(0.0) as u32,
        max_retry_delay_ms: number(config, "maxRetryDelayMs").unwrap_or(60_000.0),
        timeout_ms: number(config, "timeoutMs"),
        max_event_bytes: number(config, "maxEventBytes")
            .filter(|n| *n >= 1.0)
            .map_or(MAX_EVENT_BYTES, |n| n as usize),
    }
}

/// The host's `fetch` (the injected one, else the global one at this request) and timers.
struct JsTransport {
    fetch: Option<Function>,
    signal: JsSignal,
    /// Its `sleep`, `deadline` and `describeError`.
    glue: Glue,
}

impl Transport for JsTransport {
    fn available(&self) -> Result<(), String> {
        match self.fetch {
            Some(_) => Ok(()),
            None => Err("No fetch function in this environment".into()),
        }
    }

    fn send<'a>(
        &'a self,
        request: &'a HttpRequest,
    ) -> LocalBoxFuture<'a, Result<Box<dyn HttpResponse>, String>> {
        Box::pin(async move {
            let Some(fetch) = &self.fetch else {
                return Err(String::new());
            };
            match post(
                fetch,
                &request.url,
                &request.headers,
                &request.body,
                &self.signal.0,
            )
            .await
            {
                Ok(response) => Ok(Box::new(JsResponse {
                    response,
                    reader: None,
                    signal: self.signal.0.clone(),
                    glue: self.glue.clone(),
                }) as Box<dyn HttpResponse>),
                Err(e) => Err(describe(&self.glue, e)),
            }
        })
    }

    fn sleep(&self, ms: f64) -> LocalBoxFuture<'static, ()> {
        let timer = self.glue.sleep(ms, &self.signal.0);
        Box::pin(async move {
            if let Ok(p) = timer {
                let _ = settle(p).await;
            }
        })
    }

    fn timer(&self, ms: f64) -> LocalBoxFuture<'static, ()> {
        let Ok(timer) = self.glue.deadline(ms) else {
            // No timer: no deadline.
            return Box::pin(futures::future::pending());
        };
        let cancel = Cancel(get(&timer, "cancel"));
        let expired = settle(get(&timer, "promise"));
        Box::pin(async move {
            let _cancel = cancel;
            let _ = expired.await;
        })
    }
}

/// A thrown value's message with its cause (fetch's "fetch failed" or a body's "terminated"
/// say nothing by themselves), by the glue's `describeError`, as `streamProxy` words it.
fn describe(glue: &Glue, e: Thrown) -> String {
    e.payload
        .as_ref()
        .and_then(|p| p.downcast_ref::<JsValue>())
        .and_then(|v| glue.describe_error(v).ok())
        .and_then(|t| t.as_string())
        .unwrap_or(e.message)
}

/// Calls the glue timer's `cancel` when dropped, so no timer outlives its wait.
struct Cancel(JsValue);

impl Drop for Cancel {
    fn drop(&mut self) {
        if let Some(cancel) = self.0.dyn_ref::<Function>() {
            let _ = call(cancel, &[]);
        }
    }
}

/// A fetch `Response`; its body reader is made at the first read.
struct JsResponse {
    response: Response,
    reader: Option<BodyReader>,
    /// The run's signal: its abort cancels the body, whatever the `fetch` did with it.
    signal: JsValue,
    /// Its `describeError`.
    glue: Glue,
}

impl HttpResponse for JsResponse {
    fn status(&self) -> u16 {
        self.response.status
    }
    fn ok(&self) -> bool {
        self.response.ok
    }
    fn status_text(&self) -> String {
        get(&self.response.response, "statusText")
            .as_string()
            .unwrap_or_default()
    }
    fn header(&self, name: &str) -> Option<String> {
        self.response.header(name)
    }
    fn headers(&self) -> Vec<(String, String)> {
        self.response.headers()
    }
    fn read(&mut self) -> LocalBoxFuture<'_, Result<Option<Vec<u8>>, String>> {
        Box::pin(async move {
            if self.reader.is_none() {
                let reader = self.response.reader(&self.glue, &self.signal);
                self.reader = Some(reader.map_err(|e| e.message)?);
            }
            match self.reader.as_mut() {
                // A reset or a broken stream (a thrown value) is named with its cause; the
                // reader's own errors (a chunk that is no bytes) name themselves.
                Some(reader) => reader.read().await.map_err(|e| match e.payload {
                    Some(_) => format!("Reading the response failed: {}", describe(&self.glue, e)),
                    None => e.message,
                }),
                None => Ok(None),
            }
        })
    }
    fn answered(&mut self) {
        if let Some(reader) = self.reader.as_mut() {
            reader.answered();
        }
    }
}

impl Drop for JsResponse {
    /// A body never read is cancelled too (a retried response's), so the connection closes;
    /// a reader cancels its body when it is dropped.
    fn drop(&mut self) {
        if self.reader.is_none() {
            drop(self.response.reader(&self.glue, &JsValue::UNDEFINED));
        }
    }
}

/// The caller's hooks and the glue's policies, for one request.
struct JsHooks {
    config: JsValue,
    model: JsValue,
    /// Its `redact` and `envApiKey`.
    glue: Glue,
    updates: UpdateCell,
}

impl ProviderHooks for JsHooks {
    /// The glue's `redact`: one policy for this stream and `streamProxy` (the key as sent,
    /// trimmed as fetch sends it, escaped and encoded). Should it fail, every plain
    /// occurrence is replaced.
    fn redact(&self, text: &str, key: &str) -> String {
        self.glue
            .redact(text, key)
            .ok()
            .and_then(|v| v.as_string())
            .unwrap_or_else(|| crate::text::replace(text, key, "[redacted]"))
    }

    fn env_api_key(&self, provider: &str) -> EnvKey {
        let found = self
            .glue
            .env_api_key(provider, &get(&self.config, "env"))
            .unwrap_or(JsValue::UNDEFINED);
        EnvKey {
            key: get(&found, "apiKey").as_string(),
            note: get(&found, "note").as_string(),
        }
    }

    fn on_payload<'a>(
        &'a self,
        params: &'a Value,
        _model: &'a Rc<Value>,
    ) -> Option<HostFuture<'a, Option<Value>>> {
        let hook = get(&self.config, "onPayload").dyn_into::<Function>().ok()?;
        Some(Box::pin(async move {
            let next = settle(call(&hook, &[&from_json(params), &self.model])?).await?;
            if next.is_undefined() {
                return Ok(None);
            }
            let v = to_json(&next, "onPayload's result").map_err(Thrown::new)?;
            Ok(Some(v.unwrap_or(Value::Null)))
        }))
    }

    fn on_response<'a>(
        &'a self,
        status: u16,
        headers: &'a [(String, String)],
        _model: &'a Rc<Value>,
    ) -> Option<HostFuture<'a, ()>> {
        let hook = get(&self.config, "onResponse")
            .dyn_into::<Function>()
            .ok()?;
        Some(Box::pin(async move {
            let info = js_sys::Object::new();
            set(&info, "status", &JsValue::from_f64(f64::from(status)));
            let h = js_sys::Object::new();
            for (k, v) in headers {
                let _ = js_sys::Reflect::set(&h, &JsValue::from_str(k), &JsValue::from_str(v));
            }
            set(&info, "headers", &h);
            settle(call(&hook, &[&info, &self.model])?).await?;
            Ok(())
        }))
    }

    fn parse_date(&self, text: &str) -> Option<f64> {
        Some(js_sys::Date::parse(text)).filter(|ms| ms.is_finite())
    }

    fn random(&self) -> f64 {
        js_sys::Math::random()
    }

    /// pi-ai's final message is its partial: the JS copy ends in the same state.
    fn finished(&self, result: &AgentMessage, late: &[usize]) {
        end_read(&self.updates);
        if !late.is_empty() {
            sync_blocks(&self.updates, result, late);
        }
        sync_meta(&self.updates, result);
    }
}

/// Whether a tool call of `m` may not have ended: its arguments are the `{}` the core keeps
/// while a call streams (`provider::arguments`). (A call that ended with `{}`, or with a
/// parse error, reads the same from the JS copy, which its end record brought up to date.)
fn has_open_call(m: &Value) -> bool {
    m.get("content")
        .and_then(Value::as_array)
        .is_some_and(|blocks| {
            blocks.iter().any(|b| {
                b.get("type").and_then(Value::as_str) == Some("toolCall")
                    && b.get("arguments")
                        .and_then(Value::as_object)
                        .is_some_and(|a| a.is_empty())
            })
        })
}

/// The driver's response, with `message_start`'s message made from the JS copy.
struct BuiltinResponse {
    inner: ProviderStream,
    updates: UpdateCell,
    table: Rc<Table>,
}

impl AssistantStream for BuiltinResponse {
    fn next(&mut self) -> HostFuture<'_, Option<AssistantMessageEvent>> {
        self.inner.next()
    }

    /// The driver's result; when the glue stopped delivering updates at an abort, the
    /// response ends as the sink saw it: aborted, with the content the delivered updates
    /// built (pi's provider stops reading there too), not what was decoded after.
    fn result(&mut self) -> HostFuture<'_, Option<AgentMessage>> {
        let mut result = self.inner.final_message();
        let cut = was_cut(&self.updates);
        // A tool call that never ended (a response completed or failed mid-call) keeps the
        // arguments its streamed text shows, as pi-ai's: that partial parse lives in JS alone
        // (`provider::arguments`), so the content is the JS copy's, as for a cut response.
        let shown = match &cut {
            Some(js) => Some(js.clone()),
            None if result.as_deref().is_some_and(has_open_call) => copy(&self.updates),
            None => None,
        };
        if let Some(js) = shown {
            // (Content a sink made unreadable (a BigInt, a cycle) leaves the decoded one.)
            let content = self.table.to_rust(&get(&js, "content"), "content");
            if let Some(Value::Object(o)) = result.as_mut().map(Rc::make_mut) {
                if let Ok(content) = content {
                    o.put("content", (*content).clone());
                }
                if cut.is_some() {
                    o.put("stopReason", "aborted".into());
                    o.put("errorMessage", driver::ABORTED.into());
                }
            }
        }
        Box::pin(futures::future::ready(Ok(result)))
    }

    fn ready(&self) -> bool {
        self.inner.ready()
    }

    /// `message_start`'s message is a shallow copy of the JS partial the updates edit, so
    /// its `content` is that partial's live array, as with pi's `{...partial}`.
    fn start_snapshot(&mut self, partial: &Partial) -> AgentMessage {
        let js = start_copy(partial);
        seed(&self.updates, partial, js.clone());
        match self.table.glue().copy(&js) {
            Ok(copy) => {
                let m: AgentMessage = Rc::new(partial.borrow().clone());
                self.table.register_pair(m.clone(), copy);
                m
            }
            Err(_) => Rc::new(partial.borrow().clone()),
        }
    }
}

impl StreamFn for BuiltinStreamFn {
    fn stream<'a>(
        &'a self,
        model: &'a Rc<Value>,
        context: LlmContext,
        options: StreamOptions,
    ) -> HostFuture<'a, Box<dyn AssistantStream + 'a>> {
        #[cfg(not(feature = "providers"))]
        #[allow(clippy::needless_return)]
        {
            let _ = (model, context, options);
            return Box::pin(futures::future::ready(Err(crate::error::Thrown::new(
                "This build has no built-in providers (pass a streamFn)".to_string(),
            ))));
        }
        #[cfg(feature = "providers")]
        Box::pin(async move {
            // pi passes the stream function `{ ...config }`: a getter that throws there
            // rejects the run, here too.
            let glue = self.table.glue();
            glue.copy(&self.config).map_err(super::js::thrown)?;
            let mut options = options;
            if self.request_identity {
                let identity = glue
                    .request_identity(&self.config)
                    .map_err(super::js::thrown)?;
                options.identity = to_json(&identity, "config.identity")
                    .ok()
                    .flatten()
                    .unwrap_or_default();
            }
            let services = Services {
                transport: Rc::new(JsTransport {
                    fetch: fetch_fn(&get(&self.config, "fetch")),
                    signal: self.signal.clone(),
                    glue: glue.clone(),
                }),
                hooks: Rc::new(JsHooks {
                    config: self.config.clone(),
                    model: self.table.to_js(model),
                    glue: glue.clone(),
                    updates: self.updates.clone(),
                }),
                clock: Rc::new(JsClock(glue.clone())),
                signal: Rc::new(self.signal.clone()),
            };
            let config = provider_config(&self.config);
            let inner = driver::open(&services, &config, model, context, options).await?;
            Ok(Box::new(BuiltinResponse {
                inner,
                updates: self.updates.clone(),
                table: self.table.clone(),
            }) as Box<dyn AssistantStream + 'a>)
        })
    }
}
