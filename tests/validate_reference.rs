//! Tool-argument validation (L-112…L-115) against fixtures produced by the reference
//! pi-ai/pi-schema 1.6.0 (tests/fixtures/reference/generate.mjs): the coerced value or the
//! exact error text, case by case.
#![cfg(not(target_arch = "wasm32"))]
#![allow(
    clippy::disallowed_methods, // core's substring search: only the .wasm avoids it (size)
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use common::same;
mod common;

use pi_agent_wasm::agent::validate::pattern::NativePatterns;
use pi_agent_wasm::agent::validate::validate_tool_call;
use pi_agent_wasm::value as json;

#[test]
fn l_113_l_114_l_115_matches_the_reference_case_by_case() {
    let cases = common::reference_cases("validation.json");
    assert!(cases.len() >= 50, "fixture has {} cases", cases.len());
    let patterns = NativePatterns::default();
    let mut failures = Vec::new();
    for c in &cases {
        let call = json!({"name": "tool", "arguments": &c["args"]});
        let got = validate_tool_call(&c["schema"], &call, &patterns);
        let ok = match (&got, c.get("ok"), c.get("error")) {
            (Ok(v), Some(want), None) => same(v, want),
            (Err(e), None, Some(want)) => e == want.as_str().unwrap(),
            _ => false,
        };
        if !ok {
            failures.push(format!(
                "{}:\n  ours: {:?}\n  pi:   {}",
                c["name"],
                got,
                c.get("ok").or(c.get("error")).unwrap()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn l_112_arguments_error_wins_before_validation() {
    let call = json!({"name": "edit", "arguments": {}, "argumentsError": "Unexpected token"});
    let e = validate_tool_call(
        &json!({"type": "object"}),
        &call,
        &NativePatterns::default(),
    )
    .unwrap_err();
    assert_eq!(e, "Invalid arguments for tool \"edit\": Unexpected token");
}

#[test]
fn invalid_pattern_is_a_clear_schema_error_not_a_panic() {
    let call = json!({"name": "t", "arguments": {"a": "x"}});
    let schema =
        json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "(unclosed"}}});
    let e = validate_tool_call(&schema, &call, &NativePatterns::default()).unwrap_err();
    assert!(e.contains("Invalid regular expression"), "{e}");
}
