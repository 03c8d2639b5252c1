//! The harness the fuzz targets share: how an input is cut into chunks, how JSON is read,
//! how the built-in stream's feed loop is replayed over a provider decoder, the invariants a
//! decoded response must keep, and the switches that leave known crash classes aside while
//! their fixes are under way (`known`).
//!
//! A target panics (and libFuzzer reports a crash) only on a broken invariant; every input
//! the product must reject is an ordinary `Err` here.
//!
//! Stacks: each target runs its whole body on a thread with a large stack
//! ([`on_big_stack`]), so that a 20,000-deep seed reaches the code under test rather than
//! crashing the harness's own work on it (reading the input, cloning, comparing, dropping).
//! The product's values hold host handles that are not `Send` (`json::Host`), so they never
//! leave the thread they were made on. Unbounded recursion in the code under test still
//! overflows that stack and is reported; the recursion the product bounds (`json::MAX_DEPTH`)
//! is measured against the real wasm stack by tests/js/bounds.test.mjs.

/// The typed messages the tests check fixtures with (pi's shapes, read and written back).
#[path = "../../tests/common/typed.rs"]
pub mod typed;

pub mod known;
pub mod provider;

use pi_agent_wasm::json::Value;

/// Cuts `data` into chunks, the way a network may deliver it. `seed` picks the pattern:
/// 0 one chunk, 1 every byte alone, otherwise pseudo-random sizes up to a bound that the
/// seed also sets, empty chunks included.
pub fn split(seed: u8, data: &[u8]) -> Vec<&[u8]> {
    match seed {
        0 => vec![data],
        1 => data.chunks(1).collect(),
        _ => {
            let max = usize::from(seed % 16 + 1) * usize::from(seed / 16 + 1);
            let mut state = u32::from(seed).wrapping_mul(2_654_435_761) | 1;
            let mut out = Vec::new();
            let mut rest = data;
            while !rest.is_empty() {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                let n = (state as usize % (max + 1)).min(rest.len());
                let (a, b) = rest.split_at(n);
                out.push(a);
                rest = b;
            }
            out
        }
    }
}

/// [`split`] for text: every cut moved forward to a character boundary.
pub fn split_str(seed: u8, text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut raw) = (0, 0);
    for chunk in split(seed, text.as_bytes()) {
        raw += chunk.len();
        let mut end = raw.max(start);
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[start..end]);
        start = end;
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// Runs harness work on a thread with a 1 GiB stack (reserved, touched only as used), and
/// waits for it.
pub fn on_big_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        let worker = std::thread::Builder::new()
            .stack_size(1 << 30)
            .spawn_scoped(s, f)
            .expect("harness thread");
        worker
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e))
    })
}

/// A value the harness owns.
pub struct Deep(Option<Value>);

impl Deep {
    pub fn new(v: Value) -> Self {
        Deep(Some(v))
    }

    /// Hands the value to the code under test, which then owns (and drops) it.
    pub fn into_inner(mut self) -> Value {
        self.0.take().unwrap_or(Value::Null)
    }
}

impl std::ops::Deref for Deep {
    type Target = Value;
    fn deref(&self) -> &Value {
        self.0.as_ref().unwrap_or(&Value::Null)
    }
}

/// A copy made by the harness.
pub fn deep_clone(v: &Value) -> Deep {
    Deep::new(v.clone())
}

/// Reads JSON text for a harness. serde_json's own 128-level limit is off, so deep values
/// reach the code under test; the harness refuses only what even its big stack should not
/// build ([`known::HARNESS_MAX_DEPTH`]).
pub fn parse_json(bytes: &[u8]) -> Option<Deep> {
    let depth = nesting_depth(bytes);
    if depth > known::HARNESS_MAX_DEPTH {
        return None;
    }
    let parse = || {
        // JS strings may hold lone surrogates, which serde_json refuses: they are read in the
        // product's private encoding (json::Reader) so that both sides compare alike.
        // A message wraps its deepest values in levels of its own, so the limit is the
        // harness's, not the product's.
        let text = std::str::from_utf8(bytes).ok()?;
        let extra = known::HARNESS_MAX_DEPTH.saturating_sub(pi_agent_wasm::json::MAX_DEPTH);
        let v: Value = pi_agent_wasm::json::parse_wrapped(text, extra).ok()?;
        Some(Deep::new(v))
    };
    parse()
}

/// The deepest bracket nesting of JSON text, brackets inside strings not counted.
pub fn nesting_depth(bytes: &[u8]) -> usize {
    let (mut depth, mut max, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &b in bytes {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// The nesting depth of a value, without recursion.
pub fn value_depth(v: &Value) -> usize {
    let mut max = 0;
    let mut stack = vec![(v, 1usize)];
    while let Some((v, d)) = stack.pop() {
        max = max.max(d);
        match v {
            Value::Array(a) => stack.extend(a.iter().map(|x| (x, d + 1))),
            Value::Object(o) => stack.extend(o.values().map(|x| (x, d + 1))),
            _ => {}
        }
    }
    max
}

/// Equal as JS sees JSON: numbers by their double value, object keys in order.
pub fn same(a: &Value, b: &Value) -> bool {
    same_inline(a, b)
}

fn same_inline(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_inline(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((k1, v1), (k2, v2))| k1 == k2 && same_inline(v1, v2))
        }
        _ => a == b,
    }
}

/// `JSON.stringify` output must read back as the value it came from.
pub fn assert_stringify_round_trips(v: &Value, what: &str) {
    let text = pi_agent_wasm::json::json_stringify(v);
    let back = parse_json(text.as_bytes())
        .unwrap_or_else(|| panic!("{what}: JSON.stringify gave text that is not JSON: {text}"));
    let expected = Deep::new(finite_only(v));
    if let Some(at) = first_difference(&back, &expected) {
        panic!("{what}: JSON.stringify does not read back, at {at}: {text}");
    }
}

/// Where two values first differ by [`same`]: the path, then the two sides.
pub fn first_difference(a: &Value, b: &Value) -> Option<String> {
    difference(a, b).map(|(mut path, sides)| {
        path.reverse();
        format!("/{}: {sides}", path.join("/"))
    })
}

/// The path of the first difference, innermost segment first, and the two sides.
fn difference(a: &Value, b: &Value) -> Option<(Vec<String>, String)> {
    let inside = |seg: String, d: Option<(Vec<String>, String)>| {
        d.map(|(mut path, sides)| {
            path.push(seg);
            (path, sides)
        })
    };
    match (a, b) {
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| inside(i.to_string(), difference(p, q))),
        (Value::Object(x), Value::Object(y))
            if x.len() == y.len() && x.keys().zip(y.keys()).all(|(k1, k2)| k1 == k2) =>
        {
            x.iter()
                .zip(y.values())
                .find_map(|((k, p), q)| inside(k.clone(), difference(p, q)))
        }
        _ if same_inline(a, b) => None,
        _ => Some((Vec::new(), format!("{a} vs {b}"))),
    }
}

/// `v` as `JSON.stringify` writes it: non-finite numbers as `null`, and each object's keys in
/// JS's order (array indices first, ascending, then the others as they were inserted).
fn finite_only(v: &Value) -> Value {
    match v {
        Value::Number(n) if !n.as_f64().is_some_and(f64::is_finite) => Value::Null,
        Value::Array(a) => Value::Array(a.iter().map(finite_only).collect()),
        Value::Object(o) => {
            let mut indexed: Vec<(u32, &String, &Value)> = o
                .iter()
                .filter_map(|(k, v)| array_index(k).map(|i| (i, k, v)))
                .collect();
            indexed.sort_by_key(|(i, _, _)| *i);
            let others = o.iter().filter(|(k, _)| array_index(k).is_none());
            Value::Object(
                indexed
                    .into_iter()
                    .map(|(_, k, v)| (k, v))
                    .chain(others)
                    .map(|(k, v)| (k.clone(), finite_only(v)))
                    .collect(),
            )
        }
        other => other.clone(),
    }
}

/// `key` as a JS array index (a canonical integer below 2^32 − 1), which JS orders first.
fn array_index(key: &str) -> Option<u32> {
    if key.is_empty() || key.len() > 10 || (key.len() > 1 && key.starts_with('0')) {
        return None;
    }
    if !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    key.parse::<u64>()
        .ok()
        .and_then(|n| u32::try_from(n).ok())
        .filter(|&n| n != u32::MAX)
}
