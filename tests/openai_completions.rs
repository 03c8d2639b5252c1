//! The Chat Completions decoder on wire transcripts written from the API reference
//! (tests/fixtures/openai-completions/*.sse): each transcript decodes the same whether it
//! arrives in one chunk or split at any byte, and the events and final message equal what
//! pi-ai 1.6.0's provider makes of the same bytes (tests/fixtures/reference/
//! openai-completions.json), apart from the listed improvements.
#![cfg(not(target_arch = "wasm32"))]
#![allow(
    clippy::disallowed_methods, // core's substring search: only the .wasm avoids it (size)
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
mod common;

use std::rc::Rc;

use common::same;
use pi_agent_wasm::json::Value;
use pi_agent_wasm::provider::openai_completions::ChatCompletionsDecoder;
use pi_agent_wasm::stream::SseDecoder;
use pi_agent_wasm::value as json;

/// Streams pi-ai 1.6.0 reads wrongly; checked on their own below.
const IMPROVED: [&str; 2] = ["array_content.sse", "same_index_parallel.sse"];

fn decode(model: &Value, chunks: &[&[u8]]) -> (Vec<Value>, Value) {
    let mut sse = SseDecoder::new();
    let mut decoder = ChatCompletionsDecoder::new(Rc::new(model.clone()), 0.0);
    let mut events = vec![decoder.start()];
    let mut raw = Vec::new();
    let mut failed = None;
    'read: for c in chunks {
        sse.feed(c, &mut raw);
        for e in raw.drain(..) {
            if e.data == "[DONE]" {
                break 'read;
            }
            if let Err(message) = decoder.chunk(&e.data, &mut events) {
                failed = Some(message);
                break 'read;
            }
        }
    }
    let message = match failed {
        Some(m) => decoder.fail(&m, false, &mut events),
        None => decoder.finish(&mut events),
    };
    let summary = events
        .iter()
        .map(|e| {
            let j = e.to_json();
            let mut o = pi_agent_wasm::json::Map::new();
            o.insert("type".into(), j["type"].clone());
            for k in ["contentIndex", "delta"] {
                if let Some(v) = j.get(k) {
                    o.insert(k.into(), v.clone());
                }
            }
            Value::Object(o)
        })
        .collect();
    (summary, (*message).clone())
}

fn cases() -> Vec<Value> {
    common::reference_cases("openai-completions.json")
}

fn transcript(file: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/tests/fixtures/openai-completions/{file}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

/// argumentsError quotes V8's JSON.parse message in pi-ai; ours quotes serde_json's. The
/// part after the message (the received text) must match.
fn without_parser_message(mut m: Value) -> Value {
    if let Some(blocks) = m["content"].as_array_mut() {
        for b in blocks {
            if let Some(e) = b.get("argumentsError").and_then(Value::as_str) {
                let tail = e
                    .split_once("\n\nReceived arguments:\n")
                    .map(|(_, t)| t.to_string())
                    .unwrap();
                b["argumentsError"] =
                    json!(format!("<parser message>\n\nReceived arguments:\n{tail}"));
            }
        }
    }
    m
}

#[test]
fn transcripts_decode_as_pi_ai_decodes_them() {
    let mut failures = Vec::new();
    for c in cases() {
        let file = c["file"].as_str().unwrap();
        if IMPROVED.contains(&file) {
            continue;
        }
        let bytes = transcript(file);
        let (events, message) = decode(&c["model"], &[&bytes]);
        if !same(&Value::Array(events.clone()), &c["events"]) {
            failures.push(format!(
                "{file}: events\n  ours {events:?}\n  pi   {}",
                c["events"]
            ));
        }
        let (ours, pi) = (
            without_parser_message(message),
            without_parser_message(c["message"].clone()),
        );
        if !same(&ours, &pi) {
            failures.push(format!("{file}: message\n  ours {ours}\n  pi   {pi}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_split_decodes_like_one_chunk() {
    for c in cases() {
        let bytes = transcript(c["file"].as_str().unwrap());
        let whole = decode(&c["model"], &[&bytes]);
        for cut in 0..=bytes.len() {
            let (a, b) = bytes.split_at(cut);
            assert_eq!(
                decode(&c["model"], &[a, b]),
                whole,
                "{} split at {cut}",
                c["file"]
            );
        }
    }
}

#[test]
fn improvement_array_content_is_read_as_text() {
    let c = cases()
        .into_iter()
        .find(|c| c["file"] == "array_content.sse")
        .unwrap();
    assert_eq!(
        c["message"]["content"][0]["text"], "[object Object],[object Object]",
        "pi-ai's reading"
    );
    let (_, message) = decode(&c["model"], &[&transcript("array_content.sse")]);
    assert_eq!(message["content"][0]["text"], "part one, part two");
}

#[test]
fn improvement_parallel_calls_sharing_an_index_keep_their_own_arguments() {
    let c = cases()
        .into_iter()
        .find(|c| c["file"] == "same_index_parallel.sse")
        .unwrap();
    assert!(
        c["message"]["content"][0]["argumentsError"].is_string(),
        "pi-ai merges both calls"
    );
    let (_, message) = decode(&c["model"], &[&transcript("same_index_parallel.sse")]);
    let calls: Vec<(&str, &Value)> = message["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["id"].as_str().unwrap(), &b["arguments"]))
        .collect();
    assert_eq!(
        calls,
        [("call_p", &json!({"a": 1})), ("call_q", &json!({"a": 2}))]
    );
}

#[test]
fn malformed_json_in_an_event_ends_the_stream_with_a_clear_error() {
    let model = json!({"id": "m", "api": "openai-completions", "provider": "p", "cost": {}});
    let body = b"data: {\"choices\": [{\"delta\": {\"content\": \"hi\"}}]}\n\ndata: {not json\n\n";
    let (events, message) = decode(&model, &[body]);
    assert_eq!(events.last().unwrap()["type"], "error");
    assert_eq!(message["stopReason"], "error");
    assert!(message["errorMessage"]
        .as_str()
        .unwrap()
        .starts_with("Malformed JSON in stream event:"));
    // What streamed before the bad event is kept.
    assert_eq!(message["content"][0]["text"], "hi");
}
