//! `SseDecoder` for JS: the core decoder over `Uint8Array` chunks.
//! Its TypeScript declaration is hand-written in `src/js/index.d.ts`.

use wasm_bindgen::prelude::*;

use super::error::JsResult;
use super::js::set;
use crate::stream::{SseDecoder, SseEvent};

/// Incremental Server-Sent Events decoder (WHATWG event-stream interpretation).
#[wasm_bindgen(js_name = SseDecoder)]
pub struct JsSseDecoder {
    inner: SseDecoder,
    out: Vec<SseEvent>,
    truncated: bool,
}

#[wasm_bindgen(js_class = SseDecoder)]
impl JsSseDecoder {
    #[wasm_bindgen(constructor)]
    pub fn new() -> JsSseDecoder {
        JsSseDecoder {
            inner: SseDecoder::new(),
            out: Vec::new(),
            truncated: false,
        }
    }

    /// Feeds a chunk of the body; returns the events it completed, in order.
    pub fn feed(&mut self, chunk: &[u8]) -> JsResult<JsValue> {
        self.inner.feed(chunk, &mut self.out);
        #[cfg(feature = "test-trap")]
        super::test_trap::check_bytes(chunk);
        self.drain()
    }

    /// Ends the stream; returns the events completed by a final unterminated line.
    /// An event still missing its blank line is discarded, as the standard says;
    /// `truncated` then reports it.
    pub fn finish(&mut self) -> JsResult<JsValue> {
        self.truncated = self.inner.finish(&mut self.out);
        self.drain()
    }

    /// After `finish()`: whether the stream ended inside an event (data without its blank line).
    #[wasm_bindgen(getter)]
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// The last valid `retry:` value in milliseconds, if any.
    #[wasm_bindgen(getter)]
    pub fn retry(&self) -> Option<f64> {
        // Milliseconds beyond 2^53 are meaningless as a reconnection time.
        self.inner.retry().map(|ms| ms as f64)
    }

    fn drain(&mut self) -> JsResult<JsValue> {
        let list = js_sys::Array::new();
        for e in self.out.drain(..) {
            let o = js_sys::Object::new();
            set(&o, "type", &JsValue::from_str(&e.event));
            set(&o, "data", &JsValue::from_str(&e.data));
            set(&o, "lastEventId", &JsValue::from_str(&e.last_event_id));
            list.push(&o);
        }
        Ok(list.into())
    }
}

impl Default for JsSseDecoder {
    fn default() -> Self {
        Self::new()
    }
}
