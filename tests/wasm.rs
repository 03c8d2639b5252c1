//! wasm-bindgen tests of the binding layer. They run in Node by default and in headless
//! Chromium with `WASM_BINDGEN_USE_BROWSER=1` (scripts/test.sh runs both).
#![cfg(target_arch = "wasm32")]
// Test code may panic: a failed assertion is how wasm-bindgen-test reports.
#![allow(
    clippy::disallowed_methods, // core's substring search: only the .wasm avoids it (size)
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use js_sys::{Array, Reflect};
use pi_agent_wasm::wasm::SseDecoder;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::wasm_bindgen_test;

fn field(obj: &JsValue, key: &str) -> JsValue {
    Reflect::get(obj, &JsValue::from_str(key)).unwrap()
}

fn events(v: JsValue) -> Vec<(String, String, String)> {
    Array::from(&v)
        .iter()
        .map(|e| {
            (
                field(&e, "type").as_string().unwrap(),
                field(&e, "data").as_string().unwrap(),
                field(&e, "lastEventId").as_string().unwrap(),
            )
        })
        .collect()
}

const BODY: &[u8] =
    "event: delta\r\ndata: {\"t\":\"h\u{e9}llo \u{1F600}\"}\r\nid: 3\r\n\r\ndata: [DONE]\n\n"
        .as_bytes();

#[wasm_bindgen_test]
fn decodes_events_into_plain_js_objects() {
    let mut d = SseDecoder::new();
    let got = events(d.feed(BODY).unwrap());
    assert_eq!(
        got,
        vec![
            (
                "delta".into(),
                "{\"t\":\"h\u{e9}llo \u{1F600}\"}".into(),
                "3".into()
            ),
            ("message".into(), "[DONE]".into(), "3".into()),
        ]
    );
    assert_eq!(Array::from(&d.finish().unwrap()).length(), 0);
    assert!(!d.truncated());
}

#[wasm_bindgen_test]
fn every_split_through_the_binding_matches_one_chunk() {
    let mut whole = SseDecoder::new();
    let expected = events(whole.feed(BODY).unwrap());
    for cut in 0..=BODY.len() {
        let (a, b) = BODY.split_at(cut);
        let mut d = SseDecoder::new();
        let mut got = events(d.feed(a).unwrap());
        got.extend(events(d.feed(b).unwrap()));
        got.extend(events(d.finish().unwrap()));
        assert_eq!(got, expected, "split at {cut}");
    }
}

#[wasm_bindgen_test]
fn truncated_stream_and_retry_are_reported() {
    let mut d = SseDecoder::new();
    assert!(events(d.feed(b"retry: 2500\ndata: half").unwrap()).is_empty());
    assert!(events(d.finish().unwrap()).is_empty());
    assert!(d.truncated());
    assert_eq!(d.retry(), Some(2500.0));
}
