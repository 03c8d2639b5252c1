//! Known crash classes, left aside on request while their fixes are under way (issue 12,
//! "Bounds where input is parsed or walked"), so that a run still covers everything else.
//!
//! `PI_FUZZ_SKIP` lists the classes to skip, comma-separated; unset or empty skips nothing,
//! which is the goal once the fixes have landed:
//! - `ref-cycle`: a schema whose `$ref`s can lead back to the same node without descending
//!   into the value (`{"$ref":"#"}`, two definitions that refer to each other through
//!   `allOf`…): the walker recurses without end.
//! - `deep`: JSON nested deeper than `PI_FUZZ_MAX_DEPTH` (default 2,000; 20,000 overflows
//!   natively today): recursive clone, drop, serde and walks in the product overflow the
//!   stack (the streaming parser closing a container, `Message::from_value`, the decoders'
//!   tool arguments).
//!
//! A skipped input returns early from the target; it is not a pass or a failure.

use std::collections::HashSet;
use std::sync::OnceLock;

use pi_agent_wasm::agent::validate::pattern::NoPatterns;
use pi_agent_wasm::agent::validate::Schema;
use pi_agent_wasm::json::Value;

/// The deepest JSON the harness builds itself: its own recursive helpers and serde_json's
/// parser must not overflow the fuzzer's stack before the code under test runs.
pub const HARNESS_MAX_DEPTH: usize = 25_000;

struct Skips {
    ref_cycle: bool,
    deep: Option<usize>,
}

fn skips() -> &'static Skips {
    static SKIPS: OnceLock<Skips> = OnceLock::new();
    SKIPS.get_or_init(|| {
        let list = std::env::var("PI_FUZZ_SKIP").unwrap_or_default();
        let has = |name: &str| list.split(',').any(|s| s.trim() == name);
        let max = std::env::var("PI_FUZZ_MAX_DEPTH")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(2000);
        Skips {
            ref_cycle: has("ref-cycle"),
            deep: has("deep").then_some(max),
        }
    })
}

/// Whether JSON text nested this deep is to be skipped.
pub fn skip_deep_text(bytes: &[u8]) -> bool {
    skips()
        .deep
        .is_some_and(|max| crate::nesting_depth(bytes) > max)
}

/// Whether a response body may carry JSON nested this deep, in its chunks or in the
/// argument text they stream: every bracket counts, in strings too.
pub fn skip_deep_body(bytes: &[u8]) -> bool {
    skips().deep.is_some_and(|max| {
        let (mut depth, mut top) = (0usize, 0usize);
        for &b in bytes {
            match b {
                b'[' | b'{' => {
                    depth += 1;
                    top = top.max(depth);
                }
                b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        top > max
    })
}

/// Whether this schema is to be skipped for a possible `$ref` cycle.
pub fn skip_schema(schema: &Value) -> bool {
    skips().ref_cycle && has_ref_cycle(schema)
}

/// Keywords whose subschemas apply to the same value as their parent: a cycle through them
/// (and `$ref`) never reaches the end of the value.
const SAME_VALUE: [&str; 8] = [
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
];

/// Whether following `$ref`s and same-value keywords from some node of `root` can come back
/// to it. Over-approximates (every `$ref` counts, whatever the draft), never recurses.
pub fn has_ref_cycle(root: &Value) -> bool {
    // Every schema node, by address, with the nodes it applies to the same value.
    let mut nodes: Vec<&Value> = Vec::new();
    let mut stack = vec![root];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(o) => {
                nodes.push(v);
                stack.extend(o.values());
            }
            Value::Array(a) => stack.extend(a.iter()),
            _ => {}
        }
    }
    let edges = |v: &Value| -> Vec<*const Value> {
        let mut out = Vec::new();
        let Value::Object(o) = v else { return out };
        if let Some(r) = o.get("$ref").and_then(Value::as_str) {
            if let Some(t) = resolve(root, r) {
                out.push(t as *const Value);
            }
        }
        for key in SAME_VALUE {
            match o.get(key) {
                Some(Value::Array(a)) => out.extend(a.iter().map(|x| x as *const Value)),
                Some(Value::Object(m)) if key == "dependentSchemas" => {
                    out.extend(m.values().map(|x| x as *const Value))
                }
                Some(x @ Value::Object(_)) => out.push(x as *const Value),
                _ => {}
            }
        }
        out
    };
    // Depth-first search with colours, iteratively.
    let by_addr: std::collections::HashMap<*const Value, &Value> =
        nodes.iter().map(|v| (*v as *const Value, *v)).collect();
    let mut done: HashSet<*const Value> = HashSet::new();
    for &start in &nodes {
        let start = start as *const Value;
        if done.contains(&start) {
            continue;
        }
        let mut on_path: HashSet<*const Value> = HashSet::new();
        let mut work: Vec<(*const Value, Vec<*const Value>)> = Vec::new();
        on_path.insert(start);
        work.push((start, by_addr.get(&start).map_or(Vec::new(), |v| edges(v))));
        while let Some((node, next)) = work.last_mut() {
            match next.pop() {
                Some(n) if on_path.contains(&n) => return true,
                Some(n) if done.contains(&n) => {}
                Some(n) => {
                    on_path.insert(n);
                    let e = by_addr.get(&n).map_or(Vec::new(), |v| edges(v));
                    work.push((n, e));
                }
                None => {
                    let node = *node;
                    on_path.remove(&node);
                    done.insert(node);
                    work.pop();
                }
            }
        }
    }
    false
}

/// A local reference resolved as the validator resolves it.
fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    Schema::new(root, &NoPatterns).resolve(reference)
}
