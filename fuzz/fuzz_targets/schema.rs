//! The schema walker, coercer and validator (src/agent/validate/) on an arbitrary schema
//! and value, `$ref`s included. The input is one JSON document, `[schema, value]` (seeded
//! from the validation fixtures and the JSON-Schema-Test-Suite). It never fails, and:
//! - a failure is pi's "Validation failed for tool" text naming the tool;
//! - coerced arguments that passed pass again unchanged (coercion is settled);
//! - the tool declaration built from the schema is written by `JSON.stringify` as JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_agent_wasm::agent::validate::pattern::NativePatterns;
use pi_agent_wasm::agent::validate::{validate, validate_tool_call};
use pi_agent_wasm::json::Value;
use pi_agent_wasm::message::transcript::to_tool_declaration;
use pi_agent_wasm::value as json;
use pi_fuzz::{known, same, Deep};

fuzz_target!(|data: &[u8]| pi_fuzz::on_big_stack(|| {
    if known::skip_deep_text(data) {
        return;
    }
    let Some(Value::Array(mut pair)) = pi_fuzz::parse_json(data).map(Deep::into_inner) else {
        return;
    };
    if pair.is_empty() {
        return;
    }
    let value = if pair.len() > 1 {
        pair.swap_remove(1)
    } else {
        Value::Null
    };
    let schema = Deep::new(pair.swap_remove(0));
    drop(Deep::new(Value::Array(pair)));
    if known::skip_schema(&schema) {
        return;
    }
    let patterns = NativePatterns::default();
    let call = Deep::new(json!({"type": "toolCall", "id": "c1", "name": "t", "arguments": value}));
    match validate_tool_call(&schema, &call, &patterns).map(Deep::new) {
        Ok(args) => match validate(&schema, &args, &patterns).map(Deep::new) {
            Ok(again) => assert!(
                same(&again, &args),
                "coercion not settled: {:?}",
                pi_fuzz::first_difference(&again, &args)
            ),
            Err(f) => panic!("coerced arguments {} fail when checked again: {f:?}", *args),
        },
        Err(text) => assert!(
            text.starts_with("Validation failed for tool \"t\":\n"),
            "unexpected error text: {text}"
        ),
    }
    let decl =
        Deep::new(json!({"name": "t", "description": "d", "parameters": schema.into_inner()}));
    let decl = Deep::new(to_tool_declaration(&decl));
    pi_fuzz::assert_stringify_round_trips(&decl, "tool declaration");
}));
