//! `validateToolArguments` (spec §9.5, L-112…L-115): coercion, then JSON Schema validation,
//! with pi's error wrapper. In-house, because every validator crate measured adds 100–700 KB
//! of gzipped wasm (shared/design/json-schema.md); this one is a few KB.

mod check;
mod coerce;
mod format;
pub mod pattern;

use crate::json::Value;
use crate::text::Joined;

pub use check::{Failure, Schema, MAX_WALK};
use coerce::Coercer;
pub use pattern::Patterns;

use crate::message::{str_field, truthy};

/// A JSON Pointer as the dotted path the model sees (L-115): `/edits/0/oldText` →
/// `edits.0.oldText`, `~1` → `/`, `~0` → `~`, `""` → `root`.
pub fn format_path(pointer: &str) -> String {
    if pointer.is_empty() {
        return "root".into();
    }
    pointer
        .get(1..)
        .unwrap_or("")
        .split('/')
        .map(|s| crate::text::replace(&crate::text::replace(s, "~1", "/"), "~0", "~"))
        .collect::<Vec<_>>()
        .joined(".")
}

/// `JSON.stringify(value, null, 2)` (lone surrogates escaped, as JS writes them).
fn pretty(v: &Value) -> String {
    crate::json::json_stringify_pretty(v)
}

/// Coerces and validates `arguments` against `parameters`; `Ok` is the coerced copy.
pub fn validate(
    parameters: &Value,
    arguments: &Value,
    patterns: &dyn Patterns,
) -> Result<Value, Vec<Failure>> {
    // Each coercion pass converts only what does not fit its schema, so arguments the check
    // accepts as they are come through all three unchanged (but for a single value that a
    // type-less `items` schema would wrap): they are given back without the passes, the case
    // of most tool calls. tests/validate_identity.rs holds this against the corpora.
    let schema = Schema::new(parameters, patterns);
    if schema.errors(arguments).is_empty() && !schema.failed() && !schema.wraps.get() {
        return Ok(arguments.clone());
    }
    let coerced = Coercer::new(&schema).coerce(arguments.clone());
    let failures = schema.errors(&coerced);
    if let Some(e) = schema.schema_error.borrow_mut().take() {
        return Err(vec![Failure {
            path: String::new(),
            message: e,
        }]);
    }
    if failures.is_empty() {
        Ok(coerced)
    } else {
        Err(failures)
    }
}

/// The three coercion passes alone, from the schema's root: what [`validate`] checks when the
/// arguments do not pass as they are (for the tests of that shortcut).
pub fn coerce(parameters: &Value, arguments: &Value, patterns: &dyn Patterns) -> Value {
    let schema = Schema::new(parameters, patterns);
    Coercer::new(&schema).coerce(arguments.clone())
}

/// L-112…L-115 for a (prepared) tool call: `Ok(args)` or the error text of the result.
pub fn validate_tool_call(
    parameters: &Value,
    call: &Value,
    patterns: &dyn Patterns,
) -> Result<Value, String> {
    let name = str_field(call, "name");
    // L-112.
    if let Some(e) = call.get("argumentsError").filter(|e| truthy(Some(e))) {
        let text = e
            .as_str()
            .map_or_else(|| crate::json::json_stringify(e), String::from);
        return Err(format!("Invalid arguments for tool \"{name}\": {text}"));
    }
    let arguments = call.get("arguments").cloned().unwrap_or(Value::Null);
    match validate(parameters, &arguments, patterns) {
        Ok(args) => Ok(args),
        Err(failures) => {
            let lines: Vec<String> = failures
                .iter()
                .map(|f| format!("  - {}: {}", format_path(&f.path), f.message))
                .collect();
            Err(format!(
                "Validation failed for tool \"{name}\":\n{}\n\nReceived arguments:\n{}",
                lines.joined("\n"),
                pretty(&arguments)
            ))
        }
    }
}
