//! The data model of spec §1: every message the reference produced in the recorded
//! scenarios (tests/fixtures/reference/loop.json) reads into the typed forms and writes back
//! byte for byte, key order included.
#![cfg(not(target_arch = "wasm32"))]
#![allow(
    clippy::disallowed_methods, // core's substring search: only the .wasm avoids it (size)
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use common::typed::{ContentBlock, Message};
use pi_agent_wasm::event::AGENT_EVENT_TYPES;
use pi_agent_wasm::json::Value;
use pi_agent_wasm::message::{StopReason, ThinkingLevel, Usage};
use pi_agent_wasm::value as json;

mod common;

fn collect_messages(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Object(o) => {
            if o.get("role").is_some_and(Value::is_string) {
                out.push(v.clone());
            }
            for x in o.values() {
                collect_messages(x, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect_messages(x, out)),
        _ => {}
    }
}

#[test]
fn l_01_to_l_08_reference_messages_round_trip_exactly() {
    let text = common::reference_text("loop.json");
    // Loop-made timestamps were normalised to "NOW" in the fixture; put a number back.
    let text = text
        .replace("\"NOW\"", "1700000000123")
        .replace("\"DURATION\"", "7");
    let fixture: Value = serde_json::from_str(&text).unwrap();
    let mut messages = Vec::new();
    for sc in fixture.as_array().unwrap() {
        collect_messages(&sc["expected"], &mut messages);
    }
    assert!(messages.len() > 300, "{}", messages.len());
    let mut roles = std::collections::BTreeSet::new();
    for m in &messages {
        let typed = Message::from_value(m.clone()).unwrap();
        roles.insert(m["role"].as_str().unwrap().to_string());
        let back = typed.to_value();
        assert_eq!(
            serde_json::to_string(&back).unwrap(),
            serde_json::to_string(m).unwrap()
        );
    }
    assert!(roles.is_superset(
        &["assistant", "system", "toolResult", "user"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    ));
}

#[test]
fn l_04_l_06_every_optional_field_and_unknown_keys_survive() {
    let m = json!({
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "t", "thinkingSignature": "s", "redacted": true},
            {"type": "text", "text": "x", "textSignature": "ts"},
            {"type": "toolCall", "id": "1", "name": "n", "arguments": {"a": [1, 2.5]}, "thoughtSignature": "th", "namespace": "ns", "argumentsError": "bad"}
        ],
        "api": "openai-responses", "provider": "openai", "model": "gpt",
        "usage": {"input": 1, "output": 2, "cacheRead": 3, "cacheWrite": 4, "cacheWrite1h": 1, "reasoning": 1, "totalTokens": 10,
                  "cost": {"input": 0.5, "output": 0.25, "cacheRead": 0, "cacheWrite": 0, "total": 0.75, "totalFromProvider": true}},
        "stopReason": "toolUse", "timestamp": 1700000000000u64,
        "responseModel": "gpt-x", "responseId": "resp_1", "providerThinkingLevel": "high",
        "diagnostics": [{"kind": "x"}], "errorMessage": "e", "rawStopReason": "tool_calls", "endTurn": false,
        "durationMs": 12, "thinkingLevel": "xhigh", "vendorExtra": {"k": 1}
    });
    let typed = Message::from_value(m.clone()).unwrap();
    assert_eq!(
        serde_json::to_string(&typed.to_value()).unwrap(),
        serde_json::to_string(&m).unwrap()
    );
    let user = json!({"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image", "data": "AAA=", "mimeType": "image/png"}], "timestamp": 5});
    assert_eq!(Message::from_value(user.clone()).unwrap().to_value(), user);
    let custom = json!({"role": "bookmark", "anything": [1]});
    assert_eq!(
        Message::from_value(custom.clone()).unwrap(),
        Message::Custom(custom)
    );
}

#[test]
fn malformed_known_roles_are_clear_errors() {
    let e = Message::from_value(json!({"role": "assistant", "content": "not blocks"})).unwrap_err();
    assert!(e.starts_with("invalid assistant message:"), "{e}");
    let e = Message::from_value(json!({"role": "toolResult", "toolCallId": 1})).unwrap_err();
    assert!(e.starts_with("invalid toolResult message:"), "{e}");
}

#[test]
fn l_05_l_10_enumerations_use_pis_strings() {
    for (r, s) in [
        (StopReason::ToolUse, "toolUse"),
        (StopReason::Length, "length"),
        (StopReason::Deferred, "deferred"),
    ] {
        assert_eq!(r.as_str(), s);
        assert_eq!(StopReason::parse(s), Some(r));
    }
    for l in ["off", "minimal", "low", "medium", "high", "xhigh", "max"] {
        let t = ThinkingLevel::parse(l).unwrap();
        assert_eq!(t.as_str(), l);
    }
    assert!(ThinkingLevel::parse("huge").is_none());
    let text = json!({"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 3,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0.5, "total": 0.5}, "z": [1]});
    let u = Usage::from_value(&text).unwrap();
    assert_eq!(u.total_tokens, 3.0);
    assert_eq!(u.extra.get("z"), Some(&json!([1])));
    // Written back: the same keys in the same order, integral counts without a fraction.
    assert_eq!(
        pi_agent_wasm::json::json_stringify(&u.to_value()),
        pi_agent_wasm::json::json_stringify(&text)
    );
    let mut with_optional = text.clone();
    with_optional["reasoning"] = json!(null);
    assert_eq!(Usage::from_value(&with_optional).unwrap().reasoning, None);
    with_optional["reasoning"] = json!("7");
    assert!(
        Usage::from_value(&with_optional).is_none(),
        "a count that is no number"
    );
    let mut no_cost = text.clone();
    no_cost.as_object_mut().unwrap().shift_remove("cost");
    assert!(Usage::from_value(&no_cost).is_none(), "cost is required");
    let b: ContentBlock =
        serde_json::from_value(serde_json::json!({"type": "text", "text": "x"})).unwrap();
    assert_eq!(
        b,
        ContentBlock::Text {
            text: "x".into(),
            text_signature: None
        }
    );
}

#[test]
fn event_type_strings_are_pis() {
    assert_eq!(
        AGENT_EVENT_TYPES,
        [
            "agent_start",
            "turn_start",
            "message_start",
            "message_update",
            "message_end",
            "tool_execution_start",
            "tool_execution_update",
            "tool_execution_end",
            "turn_end",
            "agent_end"
        ]
    );
}

#[test]
fn l_18_every_reference_event_round_trips_through_the_typed_events() {
    use pi_agent_wasm::event::AgentEvent;
    let text = common::reference_text("loop.json");
    let text = text
        .replace("\"NOW\"", "1700000000123")
        .replace("\"DURATION\"", "7");
    let fixture: Value = serde_json::from_str(&text).unwrap();
    let mut n = 0;
    for sc in fixture.as_array().unwrap() {
        for e in sc["expected"]["events"].as_array().unwrap() {
            let typed = AgentEvent::from_json(e).unwrap();
            assert_eq!(
                serde_json::to_string(&typed.to_json()).unwrap(),
                serde_json::to_string(e).unwrap()
            );
            n += 1;
        }
    }
    assert!(n > 250, "{n}");
    assert!(AgentEvent::from_json(&json!({"type": "nope"}))
        .unwrap_err()
        .contains("unknown agent event type"));
    assert!(AgentEvent::from_json(&json!({"type": "message_start"}))
        .unwrap_err()
        .contains("without message"));
}
