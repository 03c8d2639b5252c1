//! The Gemini decoder on the wire transcripts of tests/fixtures/google (the JS differential
//! test checks them against pi-ai 1.6.0 through a real server): each decodes the same in one
//! chunk or split at any byte, and the stream facts pi-ai produces hold natively.
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

use pi_agent_wasm::json::Value;
use pi_agent_wasm::provider::google::GoogleDecoder;
use pi_agent_wasm::value as json;

fn model() -> Value {
    json!({"id": "gemini-2.5-flash", "api": "google-generative-ai", "provider": "google",
           "cost": {"input": 0.3, "output": 2.5, "cacheRead": 0.03, "cacheWrite": 0}})
}

fn transcript(name: &str) -> Vec<u8> {
    common::fixture_bytes("google", name)
}

/// Events (type, index, delta) and the final message.
fn decode(chunks: &[&[u8]]) -> (Vec<Value>, Value) {
    common::decode_sse(&mut GoogleDecoder::new(Rc::new(model()), 0.0), chunks)
}

/// [`decode`] with the counter of generated call ids (one for all responses, as pi-ai's)
/// masked, for comparing two decodes of the same bytes.
fn decode_masked(chunks: &[&[u8]]) -> (Vec<Value>, Value) {
    let (events, mut m) = decode(chunks);
    for block in m["content"].as_array_mut().into_iter().flatten() {
        if let Some(id) = block["id"].as_str() {
            if let Some((head, _)) = id.rsplit_once('_').filter(|(h, _)| h.ends_with("_0")) {
                block["id"] = Value::String(format!("{head}_N"));
            }
        }
    }
    (events, m)
}

const FILES: [&str; 13] = [
    "text.sse",
    "thinking.sse",
    "tool_single.sse",
    "tool_parallel.sse",
    "tool_with_id.sse",
    "max_tokens.sse",
    "safety.sse",
    "no_finish.sse",
    "usage_cached.sse",
    "unknown_reason.sse",
    "partial_args.sse",
    "tool_noargs.sse",
    "tool_escaped.sse",
];

#[test]
fn every_split_decodes_like_one_chunk() {
    for file in FILES {
        let bytes = transcript(file);
        let whole = decode_masked(&[&bytes]);
        for cut in 0..=bytes.len() {
            let (a, b) = bytes.split_at(cut);
            assert_eq!(decode_masked(&[a, b]), whole, "{file} split at {cut}");
        }
    }
}

#[test]
fn stream_facts() {
    let (_, m) = decode(&[&transcript("text.sse")]);
    assert_eq!(
        m["content"],
        json!([{"type": "text", "text": "Hello, wörld 😀!"}])
    );
    assert_eq!(
        (m["stopReason"].as_str(), m["responseId"].as_str()),
        (Some("stop"), Some("resp-1"))
    );
    assert_eq!(m["usage"]["totalTokens"], 150.0);

    // Thinking keeps the last signature it saw; text keeps its own.
    let (_, m) = decode(&[&transcript("thinking.sse")]);
    assert_eq!(
        m["content"][0],
        json!({"type": "thinking", "thinking": "Let me think more.", "thinkingSignature": "c2lnMQ=="})
    );
    assert_eq!(
        m["content"][1],
        json!({"type": "text", "text": "Answer: 4", "textSignature": "c2lnMg=="})
    );
    assert_eq!(m["usage"]["reasoning"], 12.0);
    assert_eq!(m["usage"]["output"], 42.0);

    // A call makes the stop reason toolUse; a repeated id gets a generated one.
    let (_, m) = decode(&[&transcript("tool_single.sse")]);
    assert_eq!(m["stopReason"], "toolUse");
    assert_eq!(m["content"][1]["thoughtSignature"], "c2lnMw==");
    let (_, m) = decode(&[&transcript("tool_with_id.sse")]);
    assert_eq!(m["content"][0]["id"], "fc-1");
    let generated = m["content"][1]["id"].as_str().unwrap().to_string();
    assert!(generated.starts_with("read_0_"), "{generated}");
    // As pi-ai's, the counter is one for all responses: the same stream again, in the same
    // millisecond, gets another id.
    let (_, again) = decode(&[&transcript("tool_with_id.sse")]);
    assert_ne!(again["content"][1]["id"].as_str().unwrap(), generated);

    // Cached tokens are taken out of the input and priced as cache reads.
    let (_, m) = decode(&[&transcript("usage_cached.sse")]);
    assert_eq!(
        (
            m["usage"]["input"].as_f64(),
            m["usage"]["cacheRead"].as_f64(),
            m["usage"]["output"].as_f64()
        ),
        (Some(200.0), Some(800.0), Some(12.0))
    );

    for (file, message) in [
        ("safety.sse", "Provider stopped with: SAFETY"),
        (
            "no_finish.sse",
            "Google stream ended without a finish reason",
        ),
        ("unknown_reason.sse", "Unhandled stop reason: SOMETHING_NEW"),
    ] {
        let (_, m) = decode(&[&transcript(file)]);
        assert_eq!(
            (m["stopReason"].as_str(), m["errorMessage"].as_str()),
            (Some("error"), Some(message)),
            "{file}"
        );
    }
    // A call without args has empty arguments; escaped and non-ASCII arguments arrive intact.
    let (_, m) = decode(&[&transcript("tool_noargs.sse")]);
    assert_eq!(
        (
            m["content"][0]["arguments"].clone(),
            m["stopReason"].clone()
        ),
        (json!({}), json!("toolUse"))
    );
    let (_, m) = decode(&[&transcript("tool_escaped.sse")]);
    assert_eq!(
        m["content"][0]["arguments"],
        json!({"path": "dir\\file \"q\".txt", "note": "é😀 ✓\n\ttab"})
    );
    let (_, m) = decode(&[&transcript("max_tokens.sse")]);
    assert_eq!(m["stopReason"], "length");
}

#[test]
fn improvement_partial_args_fragments_form_one_call() {
    let (events, m) = decode(&[&transcript("partial_args.sse")]);
    let calls: Vec<&Value> = m["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "toolCall")
        .collect();
    assert_eq!(calls.len(), 1);
    assert_eq!(
        calls[0]["arguments"],
        json!({"path": "notes.txt", "text": "line one, line two", "opts": {"append": true}, "tags": ["a"], "count": 2})
    );
    let starts = events
        .iter()
        .filter(|e| e["type"] == "toolcall_start")
        .count();
    let ends = events
        .iter()
        .filter(|e| e["type"] == "toolcall_end")
        .count();
    assert_eq!((starts, ends), (1, 1));
    assert_eq!(m["stopReason"], "toolUse");
}

/// Found by the `google` fuzz target (fuzz/regressions/google/): a fragment's `jsonPath`
/// with an array index far past the end made the decoder fill the gap with nulls, asking
/// for more memory than there is (in wasm, a trap that poisons the instance). Such a path
/// now fails the response with an error that names it; an index that names the next
/// element still appends.
#[test]
fn a_fragment_index_past_the_end_of_its_array_fails_the_response() {
    let chunk = |path: &str, more: bool| {
        let mut c = json!({"candidates": [{"content": {"parts": [{"functionCall": {"name": "t",
            "partialArgs": [{"jsonPath": path, "stringValue": "x"}], "willContinue": more}}]}}]});
        if !more {
            c["candidates"][0]["finishReason"] = json!("STOP");
        }
        format!("data: {c}\n\n")
    };
    let body = chunk("$.tags[0]", true) + &chunk("$.tags[13245962204024173000]", false);
    let (_, m) = decode(&[body.as_bytes()]);
    assert_eq!(m["stopReason"], "error");
    assert_eq!(
        m["errorMessage"],
        "Gemini sent function call arguments at $.tags[13245962204024173000], past the end of an array of 1"
    );
    let body = chunk("$.tags[0]", true) + &chunk("$.tags[1]", false);
    let (_, m) = decode(&[body.as_bytes()]);
    assert_eq!(m["content"][0]["arguments"], json!({"tags": ["x", "x"]}));
    assert_eq!(m["stopReason"], "toolUse");
}
