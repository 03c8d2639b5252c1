//! The OpenAI Responses decoder on the wire transcripts of tests/fixtures/openai-responses
//! (the JS differential test checks them against pi-ai 1.6.0 through a real server): each
//! decodes the same in one chunk or split at any byte, and the stream facts hold natively.
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
use pi_agent_wasm::provider::openai_responses::ResponsesDecoder;
use pi_agent_wasm::provider::openai_responses_request::short_hash;
use pi_agent_wasm::value as json;

fn model() -> Value {
    json!({"id": "gpt-5-mini", "api": "openai-responses", "provider": "openai",
           "cost": {"input": 0.25, "output": 2, "cacheRead": 0.025, "cacheWrite": 0}})
}

fn decode(chunks: &[&[u8]]) -> (Vec<Value>, Value) {
    decode_sse(&mut ResponsesDecoder::new(Rc::new(model()), 0.0), chunks)
}

fn file(name: &str) -> Vec<u8> {
    fixture_bytes("openai-responses", name)
}

const FILES: [&str; 16] = [
    "text.sse",
    "reasoning.sse",
    "tool_single.sse",
    "tool_parallel.sse",
    "tool_no_args.sse",
    "tool_escaped.sse",
    "max_tokens.sse",
    "content_filter.sse",
    "refusal.sse",
    "failed.sse",
    "error_event.sse",
    "error_unnamed.sse",
    "no_terminal.sse",
    "args_replaced.sse",
    "backfill.sse",
    "no_output_index.sse",
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
    assert_eq!(m["content"][0]["text"], "Hello wörld — 🎉 done.");
    assert_eq!(m["content"][0]["textSignature"], r#"{"v":1,"id":"msg_a1"}"#);
    assert_eq!(
        (m["stopReason"].as_str(), m["responseId"].as_str()),
        (Some("stop"), Some("resp_01"))
    );
    // Cached tokens come out of the input.
    assert_eq!(
        (
            m["usage"]["input"].as_f64(),
            m["usage"]["cacheRead"].as_f64()
        ),
        (Some(20.0), Some(100.0))
    );

    // The reasoning item becomes the signature; the summary part ends with a blank line.
    let (events, m) = decode(&[&file("reasoning.sse")]);
    assert_eq!(m["content"][0]["thinking"], "**Plan**\nThink about it.");
    let sig: Value =
        serde_json::from_str(m["content"][0]["thinkingSignature"].as_str().unwrap()).unwrap();
    assert_eq!(sig["encrypted_content"], "gAAAAB-enc-1");
    assert!(events.iter().any(|e| e["delta"] == "\n\n"));
    assert_eq!(
        m["content"][1]["textSignature"],
        r#"{"v":1,"id":"msg_b1","phase":"final_answer"}"#
    );
    assert_eq!(m["usage"]["reasoning"], 24.0);

    let (_, m) = decode(&[&file("tool_parallel.sse")]);
    assert_eq!(m["stopReason"], "toolUse");
    assert_eq!(m["content"][0]["id"], "call_1|fc_p1");
    assert_eq!(m["content"][0]["arguments"], json!({"path": "a.txt"}));
    assert_eq!(m["content"][1]["arguments"], json!({"path": "b.txt"}));

    let (_, m) = decode(&[&file("tool_escaped.sse")]);
    assert_eq!(
        m["content"][0]["arguments"],
        json!({"path": "dir\\file \"q\".txt", "note": "é😀 ✓"})
    );

    // Arguments replaced at `done` start over; flex pricing halves the cost.
    let (_, m) = decode(&[&file("args_replaced.sse")]);
    assert_eq!(m["content"][0]["arguments"], json!({"path": "other.txt"}));
    assert!((m["usage"]["cost"]["input"].as_f64().unwrap() - 0.000125).abs() < 1e-12);

    // A signature completed only by the final response is filled in.
    let (_, m) = decode(&[&file("backfill.sse")]);
    assert!(m["content"][0]["thinkingSignature"]
        .as_str()
        .unwrap()
        .contains("enc-late"));

    let (_, m) = decode(&[&file("max_tokens.sse")]);
    assert_eq!(
        (m["stopReason"].as_str(), m["rawStopReason"].as_str()),
        (Some("length"), Some("incomplete.max_output_tokens"))
    );
    for (name, message) in [
        ("content_filter.sse", "Response incomplete: content_filter"),
        ("failed.sse", "server_error: The model crashed"),
        ("error_event.sse", "Too many requests"),
        ("error_unnamed.sse", "Error Code invalid_prompt: Bad prompt"),
        (
            "no_terminal.sse",
            "OpenAI Responses stream ended before a terminal response event",
        ),
    ] {
        let (_, m) = decode(&[&file(name)]);
        assert_eq!(
            (m["stopReason"].as_str(), m["errorMessage"].as_str()),
            (Some("error"), Some(message)),
            "{name}"
        );
    }
}

#[test]
fn improvement_deltas_without_output_index_are_kept() {
    let (events, m) = decode(&[&file("no_output_index.sse")]);
    let deltas: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "text_delta")
        .map(|e| &e["delta"])
        .collect();
    assert_eq!(deltas, [&json!("No "), &json!("index "), &json!("here.")]);
    assert_eq!(m["content"].as_array().unwrap().len(), 1);
    assert_eq!(m["content"][0]["text"], "No index here.");
}

#[test]
fn short_hash_matches_pi_ai() {
    // Values computed with pi-ai 1.6.0's shortHash.
    for (input, expected) in [
        ("", "k4n83c7h0j2b"),
        ("fc_abc", "1qaoofs1vxahbg"),
        ("😀|x", "1piv61d1bk3yv1"),
    ] {
        assert_eq!(short_hash(input), expected, "{input}");
    }
}
