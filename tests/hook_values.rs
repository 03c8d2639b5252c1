//! The junk-value policy for hook results (src/agent/hook_values.rs), case by case.
#![cfg(not(target_arch = "wasm32"))]
#![allow(
    clippy::disallowed_methods, // core's substring search: only the .wasm avoids it (size)
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use pi_agent_wasm::agent::hook_values::*;
use pi_agent_wasm::io::{BeforeToolCallResult, TurnDecision};
use pi_agent_wasm::message::ThinkingLevel;
use pi_agent_wasm::value as json;

#[test]
fn messages_must_be_arrays_of_role_objects() {
    assert_eq!(
        messages("convertToLlm", json!([{"role": "user"}]))
            .unwrap()
            .len(),
        1
    );
    let e = messages("convertToLlm", json!("nope")).unwrap_err();
    assert_eq!(
        e.message(),
        "convertToLlm: expected an array of messages, got a string"
    );
    assert_eq!(e.code(), "invalid_input");
    let e = messages("transformContext", json!([{"role": "user"}, 5])).unwrap_err();
    assert_eq!(
        e.message(),
        "transformContext: item 1 is not a message (it has no string role)"
    );
}

#[test]
fn queues_treat_falsy_as_empty_and_junk_as_error() {
    for v in [json!(null), json!(false), json!(0), json!("")] {
        assert!(queued_messages("getSteeringMessages", v)
            .unwrap()
            .is_empty());
    }
    assert!(queued_messages("getFollowUpMessages", json!("abc")).is_err());
}

#[test]
fn api_key_needs_a_non_empty_string() {
    assert_eq!(api_key(&json!("k")), Some("k".into()));
    assert_eq!(api_key(&json!("")), None);
    assert_eq!(api_key(&json!({"key": 1})), None);
}

#[test]
fn thinking_levels_are_checked() {
    assert_eq!(thinking_level("prepareRequest", None).unwrap(), None);
    assert_eq!(
        thinking_level("prepareRequest", Some(&json!(null))).unwrap(),
        None
    );
    assert_eq!(
        thinking_level("prepareRequest", Some(&json!("off"))).unwrap(),
        Some(ThinkingLevel::Off)
    );
    assert!(thinking_level("prepareRequest", Some(&json!("ultra"))).is_err());
    assert!(thinking_level("prepareNextTurn", Some(&json!(3))).is_err());
}

#[test]
fn decisions_and_tool_hooks_follow_pi() {
    assert_eq!(
        turn_decision(&json!({"action": "end"})),
        Some(TurnDecision::End)
    );
    assert_eq!(turn_decision(&json!({"action": "stop"})), None);
    assert_eq!(turn_decision(&json!("end")), None);
    let b = before_tool_call(&json!({"block": 1, "reason": {"x": 1}, "terminate": "yes"})).unwrap();
    assert_eq!(
        b,
        BeforeToolCallResult {
            block: true,
            reason: None,
            terminate: false
        }
    );
    assert_eq!(before_tool_call(&json!(true)), None);
    let a = after_tool_call(
        &json!({"content": "text", "isError": "yes", "details": null, "usage": {"input": 1}}),
    )
    .unwrap();
    assert_eq!(a.content, None);
    // "yes" is truthy: the hook marks an error, as pi's stored "yes" reads.
    assert_eq!(a.is_error, Some(true));
    assert_eq!(a.details, None);
    assert_eq!(a.usage, Some(json!({"input": 1})));
    assert_eq!(after_tool_call(&json!(42)), None);
}

#[test]
fn tool_results_must_be_objects() {
    assert!(tool_result("t", json!({})).is_ok());
    assert_eq!(
        tool_result("t", json!(null)).unwrap_err(),
        "Tool t returned undefined or null instead of a result object"
    );
    assert_eq!(
        tool_result("t", json!("x")).unwrap_err(),
        "Tool t returned a string instead of a result object"
    );
}
