//! HTTP for the providers over the host's `fetch`: the global one (browsers, Workers and
//! Node all have it; `window` is never used) or one injected in the options (tests,
//! proxies, Workers service bindings). The body is read as a stream of byte chunks, one
//! await per network chunk; the request's `AbortSignal` stops the read at once.

use js_sys::{Function, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::js::{call, call_method, from_entries, get, key, set, settle};
use crate::error::Thrown;
use crate::json::Value;

/// `options.fetch` if it is a function, else the global `fetch` as it is at this request:
/// read each time, so a polyfill or a mock installed after the first request is used.
pub fn fetch_fn(injected: &JsValue) -> Option<Function> {
    if let Some(f) = injected.dyn_ref::<Function>() {
        return Some(f.clone());
    }
    get(&js_sys::global(), "fetch").dyn_into::<Function>().ok()
}

/// A response: status, headers as a plain object, and the body.
pub struct Response {
    pub status: u16,
    pub ok: bool,
    pub response: JsValue,
}

/// `POST url` with JSON `body`, `headers` and `signal`.
pub async fn post(
    fetch: &Function,
    url: &str,
    headers: &[(String, String)],
    body: &str,
    signal: &JsValue,
) -> Result<Response, Thrown> {
    let init = Object::new();
    set(&init, "method", &key("POST"));
    let h = Object::new();
    for (k, v) in headers {
        let _ = Reflect::set(&h, &JsValue::from_str(k), &JsValue::from_str(v));
    }
    set(&init, "headers", &h);
    set(&init, "body", &JsValue::from_str(body));
    if !signal.is_undefined() && !signal.is_null() {
        set(&init, "signal", signal);
    }
    let response = settle(call(fetch, &[&JsValue::from_str(url), &init])?).await?;
    // A `fetch` of the caller's may give anything: what is no Response is named as such.
    let Some(status) = get(&response, "status").as_f64() else {
        return Err(Thrown::new(format!(
            "fetch gave {}, not a Response",
            super::js::describe(&response)
        )));
    };
    let status = status as u16;
    let ok = get(&response, "ok").as_bool().unwrap_or(false);
    Ok(Response {
        status,
        ok,
        response,
    })
}

impl Response {
    /// The response headers as `[name, value]` pairs, lower-case names.
    pub fn headers(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let headers = get(&self.response, "headers");
        // A `fetch` of the caller's may give any headers object: read through `catch`.
        if let Ok(Some(Value::Object(h))) = from_entries(&headers) {
            for (k, v) in h {
                if let Value::String(v) = v {
                    out.push((k, v));
                }
            }
        }
        out
    }

    pub fn header(&self, name: &str) -> Option<String> {
        let headers = get(&self.response, "headers");
        call_method(&headers, "get", &[&JsValue::from_str(name)])
            .ok()
            .and_then(|v| v.as_string())
    }

    /// A reader of the body's chunks; an abort of `signal` cancels the body (the glue's
    /// `bodyReader`), so a read waiting on a `fetch` that dropped the signal ends at once.
    pub fn reader(&self, glue: &super::glue::Glue, signal: &JsValue) -> Result<BodyReader, Thrown> {
        let body = get(&self.response, "body");
        if body.is_null() || body.is_undefined() {
            return Err(Thrown::new("The response has no body"));
        }
        Ok(BodyReader {
            reader: glue.body_reader(&body, signal).map_err(super::js::thrown)?,
            glue: glue.clone(),
            rest: CUT,
        })
    }
}

/// `ReadableStreamDefaultReader` of a response body.
pub struct BodyReader {
    reader: JsValue,
    glue: super::glue::Glue,
    /// What letting go of the reader does with the rest of the body (the glue's `release`):
    /// [`ENDED`], [`ANSWERED`] or [`CUT`].
    rest: u32,
}

/// The body was read to its end: nothing is left to cancel.
const ENDED: u32 = 0;
/// The answer is whole (the stream's end event came): the rest is read in the background.
const ANSWERED: u32 = 1;
/// The body is cut short: it is cancelled.
const CUT: u32 = 2;

impl BodyReader {
    /// The next chunk, `None` at the end. A reset or an abort is `Err`.
    ///
    /// The glue's `chunkOf` reads the step in one crossing: `null` at the end, else the
    /// chunk's bytes as a fresh Uint8Array of this realm (body-reader.js `bytesOf`: any
    /// `ArrayBuffer` view or `ArrayBuffer`, of any realm). Anything else comes back in an
    /// array of one, and is an error that names it, never silently skipped.
    pub async fn read(&mut self) -> Result<Option<Vec<u8>>, Thrown> {
        let glue = &self.glue;
        let step = settle(glue.read_body(&self.reader).map_err(super::js::thrown)?).await?;
        let chunk = glue.chunk_of(&step).map_err(|e| {
            Thrown::new(format!(
                "The response body gave a chunk that cannot be read ({})",
                crate::wasm::js::error_text(&e)
            ))
        })?;
        let Some(chunk) = chunk else {
            self.rest = ENDED;
            return Ok(None);
        };
        match chunk.dyn_into::<Uint8Array>() {
            Ok(bytes) => Ok(Some(bytes.to_vec())),
            Err(other) => Err(Thrown::new(format!(
                "The response body gave a chunk that is not bytes ({})",
                crate::wasm::js::describe(&other.unchecked_into::<js_sys::Array>().get(0))
            ))),
        }
    }

    /// The answer is whole: the rest of the body is not needed.
    pub fn answered(&mut self) {
        self.rest = self.rest.min(ANSWERED);
    }
}

impl Drop for BodyReader {
    /// The glue's `release` lets go of the reader (and its abort listener): a reader dropped
    /// before the body's end cancels the body, so the connection closes; or, when the answer
    /// was whole, the rest is read in the background (a cancel can cost more than that read,
    /// and loses the connection).
    fn drop(&mut self) {
        let _ = self.glue.release(&self.reader, self.rest);
    }
}
