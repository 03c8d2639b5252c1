//! HTTP for the providers over the host's `fetch`: the global one (browsers, Workers and
//! Node all have it; `window` is never used) or one injected in the options (tests,
//! proxies, Workers service bindings). The body is read as a stream of byte chunks, one
//! await per network chunk; the request's `AbortSignal` stops the read at once.

use js_sys::{Function, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::js::{call, call_method, from_entries, get, ignore_rejection, key, set, settle};
use crate::error::Thrown;

#[wasm_bindgen]
extern "C" {
    /// A Uint8Array this module makes.
    #[wasm_bindgen(js_name = Uint8Array)]
    type FreshBytes;

    /// `new Uint8Array(buffer, byteOffset, byteLength)`, which throws for a detached buffer
    /// or a range outside it.
    #[wasm_bindgen(catch, constructor, js_class = "Uint8Array")]
    fn byte_view(
        buffer: &JsValue,
        offset: &JsValue,
        length: &JsValue,
    ) -> Result<FreshBytes, JsValue>;
}

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
    let status = get(&response, "status").as_f64().unwrap_or(0.0) as u16;
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
        if let Ok(Some(crate::json::Value::Object(h))) = from_entries(&headers) {
            for (k, v) in h {
                if let crate::json::Value::String(v) = v {
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

    /// A reader of the body's chunks.
    pub fn reader(&self) -> Result<BodyReader, Thrown> {
        let body = get(&self.response, "body");
        if body.is_null() || body.is_undefined() {
            return Err(Thrown::new("The response has no body"));
        }
        Ok(BodyReader {
            reader: call_method(&body, "getReader", &[])?,
        })
    }
}

/// `ReadableStreamDefaultReader` of a response body.
pub struct BodyReader {
    reader: JsValue,
}

impl BodyReader {
    /// The next chunk, `None` at the end. A reset or an abort is `Err`.
    pub async fn read(&mut self, glue: &super::glue::Glue) -> Result<Option<Vec<u8>>, Thrown> {
        let step = settle(glue.read_body(&self.reader).map_err(super::js::thrown)?).await?;
        if get(&step, "done").as_bool().unwrap_or(true) {
            return Ok(None);
        }
        chunk_bytes(&get(&step, "value")).map(Some)
    }
}

/// A body chunk's bytes. Not only this realm's `Uint8Array`: a test environment such as
/// jsdom, or a `fetch` from another realm (an iframe, a polyfill), hands over typed arrays
/// that `instanceof` does not recognise, and dropping them would lose the response. Any
/// `ArrayBuffer` view (of any realm) or `ArrayBuffer` is read as its bytes; anything else is
/// an error that names it, never silently skipped.
fn chunk_bytes(value: &JsValue) -> Result<Vec<u8>, Thrown> {
    // Each view is a fresh Uint8Array of this realm, read without running caller code (a
    // caller's `fetch` may hand over an array with its own `length` getter, or a detached
    // buffer): the constructor checks the range against the real buffer.
    let copy = if js_sys::ArrayBuffer::is_view(value) {
        FreshBytes::byte_view(
            &get(value, "buffer"),
            &get(value, "byteOffset"),
            &get(value, "byteLength"),
        )
    } else if value.is_instance_of::<js_sys::ArrayBuffer>() {
        FreshBytes::byte_view(value, &JsValue::from_f64(0.0), &JsValue::UNDEFINED)
    } else {
        return Err(Thrown::new(format!(
            "The response body gave a chunk that is not bytes ({})",
            crate::wasm::js::describe(value)
        )));
    };
    copy.map(|bytes| bytes.unchecked_into::<Uint8Array>().to_vec())
        .map_err(|e| {
            Thrown::new(format!(
                "The response body gave a chunk that cannot be read ({})",
                crate::wasm::js::error_text(&e)
            ))
        })
}

impl Drop for BodyReader {
    /// Dropping the reader before the end cancels the body, so the connection closes.
    fn drop(&mut self) {
        if let Ok(p) = call_method(&self.reader, "cancel", &[]) {
            // A rejected cancel (already closed) must not become an unhandled rejection.
            ignore_rejection(&p);
        }
    }
}
