//! `validate` gives arguments the check accepts back as they are, without the three coercion
//! passes (src/agent/validate/mod.rs). That holds only if the passes change no such value, but
//! for the one case the shortcut leaves to them (a single value at a type-less `items`
//! schema). Held here against every schema of the corpora (pi's reference cases and the JSON
//! Schema Test Suite), at the root and at a property, with their own values and values of
//! every kind: `validate` and the passes-then-check agree on each pair.
#![cfg(not(target_arch = "wasm32"))]
#![allow(
    clippy::disallowed_methods, // core's substring search: only the .wasm avoids it (size)
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::Path;

use pi_agent_wasm::agent::validate::pattern::NativePatterns;
use pi_agent_wasm::agent::validate::{coerce, validate, Schema};
use pi_agent_wasm::json::{self, Value};

fn read(path: &Path) -> Value {
    json::parse(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Values of every kind, among them the ones coercion converts (`"42"`, `null`, `""`, a
/// single value where an array is wanted).
fn kinds() -> Vec<Value> {
    [
        "null",
        "true",
        "false",
        "0",
        "-0",
        "1",
        "1.5",
        "-7",
        "1e300",
        "\"\"",
        "\"42\"",
        "\"1.5\"",
        "\"true\"",
        "\"false\"",
        "\"null\"",
        "\"x\"",
        "[]",
        "[1]",
        "[\"a\", 2]",
        "[null]",
        "{}",
        "{\"a\": null}",
        "{\"a\": \"1\", \"b\": 2}",
        "{\"foo\": [1, 2]}",
        "{\"bar\": \"1\"}",
    ]
    .iter()
    .map(|t| json::parse(t).unwrap())
    .collect()
}

/// `Ok(value)` of the passes and then the check, or `Err` when the check fails.
fn full(schema: &Value, value: &Value, patterns: &NativePatterns) -> Result<Value, ()> {
    let coerced = coerce(schema, value, patterns);
    let check = Schema::new(schema, patterns);
    let failures = check.errors(&coerced);
    if failures.is_empty() && !check.failed() {
        Ok(coerced)
    } else {
        Err(())
    }
}

#[test]
fn the_shortcut_agrees_with_the_coercion_passes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut pairs: Vec<(Value, Vec<Value>)> = Vec::new();
    for case in read(&root.join("reference/validation.json"))
        .as_array()
        .unwrap()
    {
        pairs.push((case["schema"].clone(), vec![case["args"].clone()]));
    }
    let suite = root.join("json-schema-test-suite/draft2020-12");
    for entry in std::fs::read_dir(&suite).unwrap() {
        for group in read(&entry.unwrap().path()).as_array().unwrap() {
            let values = group["tests"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["data"].clone())
                .collect();
            pairs.push((group["schema"].clone(), values));
        }
    }
    let patterns = NativePatterns::default();
    let (mut checked, mut shortcut, mut mismatches) = (0, 0, Vec::new());
    for (schema, own) in &pairs {
        // Each schema also at a property, as tool schemas hold them.
        let wrapped = json::parse(&format!(
            "{{\"type\": \"object\", \"properties\": {{\"p\": {}}}}}",
            json::json_stringify(schema)
        ))
        .unwrap();
        for value in own.iter().cloned().chain(kinds()) {
            for (s, v) in [
                (schema.clone(), value.clone()),
                (
                    wrapped.clone(),
                    Value::Object([("p".to_string(), value.clone())].into_iter().collect()),
                ),
            ] {
                checked += 1;
                let ours = validate(&s, &v, &patterns).map_err(|_| ());
                if ours
                    .as_ref()
                    .is_ok_and(|o| json::json_stringify(o) == json::json_stringify(&v))
                {
                    shortcut += 1;
                }
                let theirs = full(&s, &v, &patterns);
                let same = match (&ours, &theirs) {
                    (Ok(a), Ok(b)) => json::json_stringify(a) == json::json_stringify(b),
                    (Err(()), Err(())) => true,
                    _ => false,
                };
                if !same {
                    mismatches.push(format!(
                        "schema {} value {}: validate {:?}, passes then check {:?}",
                        json::json_stringify(&s),
                        json::json_stringify(&v),
                        ours.map(|o| json::json_stringify(&o)),
                        theirs.map(|o| json::json_stringify(&o))
                    ));
                }
            }
        }
    }
    assert!(
        checked > 10_000 && shortcut > 1_000,
        "checked {checked}, {shortcut} given back as they were"
    );
    assert!(
        mismatches.is_empty(),
        "{} of {checked} differ:\n{}",
        mismatches.len(),
        mismatches[..mismatches.len().min(20)].join("\n")
    );
}
