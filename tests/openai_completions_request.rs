//! The Chat Completions request body against pi-ai 1.6.0's (captured with `onPayload` for
//! the same model, transcript and options: tests/fixtures/reference/generate.mjs).
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
use pi_agent_wasm::message::ThinkingLevel;
use pi_agent_wasm::provider::openai_completions_request::{build_params, RequestOptions};

#[test]
fn request_bodies_match_pi_ai() {
    let cases = common::reference_cases("openai-completions-requests.json");
    assert!(cases.len() >= 9);
    let mut failures = Vec::new();
    for c in &cases {
        let o = &c["options"];
        let options = RequestOptions {
            max_tokens: o["maxTokens"].as_f64(),
            temperature: o["temperature"].as_f64(),
            reasoning: o["reasoning"].as_str().and_then(ThinkingLevel::parse),
            tool_choice: o.get("toolChoice").cloned(),
            sampling_params: o.get("samplingParams").cloned(),
        };
        let ours = build_params(
            &c["model"],
            c["messages"].as_array().unwrap(),
            &options,
            1.0,
        );
        if !same(&ours, &c["payload"]) {
            failures.push(format!(
                "{}:\n  ours {ours}\n  pi   {}",
                c["name"], c["payload"]
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
