//! Transcript preparation shared by the providers, against pi-ai 1.6.0's
//! `transformMessages` on recorded transcripts (tests/fixtures/reference/generate.mjs).
#![cfg(not(target_arch = "wasm32"))]
#![allow(
    clippy::disallowed_methods, // core's substring search: only the .wasm avoids it (size)
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
mod common;

use common::same;
use pi_agent_wasm::json::Value;
use pi_agent_wasm::provider::transform::{collapse_system_messages, transform_messages};
use pi_agent_wasm::value as json;

#[test]
fn transform_messages_matches_pi_ai() {
    let cases = common::reference_cases("transform-messages.json");
    assert!(cases.len() >= 7);
    for c in cases {
        let rename = |id: &str, _: &Value| {
            if id.starts_with("toolu_") {
                format!("n_{id}")
            } else {
                id.to_string()
            }
        };
        let out = transform_messages(
            c["messages"].as_array().unwrap(),
            &c["model"],
            &rename,
            1.7e12,
        );
        let out: Vec<Value> = out
            .into_iter()
            .map(|mut m| {
                if m["timestamp"].as_f64().is_some_and(|t| t > 1e12) {
                    m["timestamp"] = json!("NOW");
                }
                m
            })
            .collect();
        assert!(
            same(&Value::Array(out.clone()), &c["expected"]),
            "{}:\n ours {}\n pi   {}",
            c["name"],
            Value::Array(out),
            c["expected"]
        );
    }
}

#[test]
fn collapse_keeps_one_leading_system_message() {
    let ms = vec![
        json!({"role": "system", "content": "base", "timestamp": 0}),
        json!({"role": "user", "content": "q", "timestamp": 1}),
        json!({"role": "system", "content": "more", "timestamp": 2}),
    ];
    let out = collapse_system_messages(&ms);
    assert_eq!(out.len(), 2);
    assert_eq!(out[0]["content"], "base\n\nmore");
    assert_eq!(out[1]["role"], "user");
}
