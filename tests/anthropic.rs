//! The Anthropic Messages decoder on the wire transcripts of tests/fixtures/anthropic (the JS
//! differential test checks them against pi-ai 1.6.0 through a real server): each decodes the
//! same in one chunk or split at any byte, and the stream facts hold natively.
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

use common::{decode_sse, fixture_bytes};
use pi_agent_wasm::json::Value;
use pi_agent_wasm::provider::anthropic::AnthropicDecoder;
use pi_agent_wasm::value as json;

fn model() -> Value {
    json!({"id": "claude-sonnet-4-5", "api": "anthropic-messages", "provider": "anthropic",
           "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}})
}

fn decode(chunks: &[&[u8]]) -> (Vec<Value>, Value) {
    decode_sse(&mut AnthropicDecoder::new(Rc::new(model()), 0.0), chunks)
}

fn file(name: &str) -> Vec<u8> {
    fixture_bytes("anthropic", name)
}

const FILES: [&str; 15] = [
    "text.sse",
    "thinking.sse",
    "redacted.sse",
    "tool_single.sse",
    "tool_parallel.sse",
    "tool_no_args.sse",
    "tool_escaped.sse",
    "max_tokens.sse",
    "refusal.sse",
    "unknown_reason.sse",
    "error_event.sse",
    "no_stop.sse",
    "usage_cache_1h.sse",
    "bad_json.sse",
    "unnamed_events.sse",
];

#[test]
fn every_split_decodes_like_one_chunk() {
    for name in FILES {
        let bytes = file(name);
        let whole = decode(&[&bytes]);
        for cut in 0..=bytes.len() {
            let (a, b) = bytes.split_at(cut);
            assert_eq!(decode(&[a, b]), whole, "{name} split at {cut}");
        }
    }
}

#[test]
fn stream_facts() {
    let (_, m) = decode(&[&file("text.sse")]);
    assert_eq!(
        m["content"],
        json!([{"type": "text", "text": "Hello! Ünïcode 🎉 ok."}])
    );
    assert_eq!(
        (m["stopReason"].as_str(), m["responseId"].as_str()),
        (Some("stop"), Some("msg_01"))
    );
    assert_eq!(m["usage"]["totalTokens"], 25.0 + 12.0 + 10.0 + 5.0);

    let (events, m) = decode(&[&file("thinking.sse")]);
    assert_eq!(
        m["content"][0],
        json!({"type": "thinking", "thinking": "Let me think.", "thinkingSignature": "EqQBCgIYAhIM1gAAAA=="})
    );
    assert_eq!(m["usage"]["reasoning"], 18.0);
    assert_eq!(
        events
            .iter()
            .filter(|e| e["type"] == "thinking_delta")
            .count(),
        2
    );

    let (_, m) = decode(&[&file("redacted.sse")]);
    assert_eq!(m["content"][0]["redacted"], true);
    assert_eq!(m["content"][0]["thinkingSignature"], "EmwKAhgBEgy3va3pzix");

    let (_, m) = decode(&[&file("tool_parallel.sse")]);
    assert_eq!(m["stopReason"], "toolUse");
    assert_eq!(m["content"][0]["arguments"], json!({"path": "a.txt"}));
    assert_eq!(m["content"][1]["arguments"], json!({"path": "b.txt"}));
    let (_, m) = decode(&[&file("tool_escaped.sse")]);
    assert_eq!(
        m["content"][0]["arguments"],
        json!({"path": "dir\\file \"q\".txt", "note": "é😀 ✓"})
    );

    // 1-hour cache writes are priced at twice the input rate.
    let (_, m) = decode(&[&file("usage_cache_1h.sse")]);
    assert_eq!(m["usage"]["cacheWrite1h"], 1000.0);
    let write = m["usage"]["cost"]["cacheWrite"].as_f64().unwrap();
    assert!((write - (3.75 * 500.0 + 6.0 * 1000.0) / 1e6).abs() < 1e-12);

    let (_, m) = decode(&[&file("max_tokens.sse")]);
    assert_eq!(m["stopReason"], "length");
    for (name, message) in [
        ("refusal.sse", "Policy violation"),
        (
            "unknown_reason.sse",
            "Unhandled stop reason: brand_new_reason",
        ),
        ("no_stop.sse", "Anthropic stream ended before message_stop"),
        (
            "error_event.sse",
            r#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#,
        ),
    ] {
        let (_, m) = decode(&[&file(name)]);
        assert_eq!(
            (m["stopReason"].as_str(), m["errorMessage"].as_str()),
            (Some("error"), Some(message)),
            "{name}"
        );
    }
    let (_, m) = decode(&[&file("bad_json.sse")]);
    assert!(m["errorMessage"]
        .as_str()
        .unwrap()
        .starts_with("Could not parse Anthropic SSE event content_block_delta"));
}

#[test]
fn an_unparsable_event_is_quoted_whole_as_pi_ai_quotes_it() {
    // The driver cuts the final error text (tests/provider_driver.rs), after hiding the key.
    let big = format!(
        "event: message_start\ndata: {{\"type\": \"message_start\", \"x\": \"{}\n\n",
        "a".repeat(100_000)
    );
    let (_, m) = decode(&[big.as_bytes()]);
    let text = m["errorMessage"].as_str().unwrap();
    assert!(text.starts_with("Could not parse Anthropic SSE event message_start"));
    assert!(
        text.ends_with(&"a".repeat(1000)),
        "{}",
        &text[text.len() - 60..]
    );
}

#[test]
fn improvement_events_without_names_are_read() {
    let (_, m) = decode(&[&file("unnamed_events.sse")]);
    assert_eq!(m["content"], json!([{"type": "text", "text": "No names."}]));
    assert_eq!(m["stopReason"], "stop");
}
