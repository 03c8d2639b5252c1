//! Numbers and usage print as JSON.stringify prints them.
#![cfg(not(target_arch = "wasm32"))]
#![allow(
    clippy::disallowed_methods, // core's substring search: only the .wasm avoids it (size)
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use pi_agent_wasm::message::*;
use pi_agent_wasm::value as json;

#[test]
fn numbers_print_like_json_stringify() {
    assert_eq!(num(3.0).to_string(), "3");
    assert_eq!(num(0.25).to_string(), "0.25");
    assert_eq!(num(f64::NAN).to_string(), "null");
    let u = Usage {
        input: 10.0,
        total_tokens: 12.0,
        ..Usage::default()
    };
    assert_eq!(
        serde_json::to_string(&u).unwrap(),
        r#"{"input":10,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":12,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}"#
    );
}

#[test]
fn truthiness_matches_js() {
    assert!(!truthy(None));
    assert!(!truthy(Some(&json!(""))));
    assert!(!truthy(Some(&json!(0))));
    assert!(truthy(Some(&json!("x"))));
    assert!(truthy(Some(&json!([]))));
    assert!(truthy(Some(&json!({}))));
}

#[test]
fn content_text_joins_text_blocks_only() {
    let c = json!([{"type":"text","text":"a"},{"type":"image","data":"x","mimeType":"image/png"},{"type":"text","text":"b"}]);
    assert_eq!(content_text(Some(&c), "\n"), "a\nb");
    assert_eq!(content_text(Some(&json!("s")), "\n"), "s");
}

#[test]
fn tool_calls_in_content_order() {
    let m = json!({"role":"assistant","content":[
        {"type":"toolCall","id":"1","name":"a","arguments":{}},
        {"type":"text","text":"x"},
        {"type":"toolCall","id":"2","name":"b","arguments":{}}]});
    let ids: Vec<String> = tool_calls(&m)
        .iter()
        .map(|c| str_field(c, "id").to_string())
        .collect();
    assert_eq!(ids, ["1", "2"]);
}
