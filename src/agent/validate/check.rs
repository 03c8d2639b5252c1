//! Checking a value against a JSON Schema and explaining each failure at the value it failed
//! on, with pi-schema's keyword messages (`missing`, `unknown field`, `expected …`).
//!
//! One walk does both: a value passes when the walk reports no error. Supported keywords:
//! `type` (with `integer`), `enum`, `const`, string length (code points) and `pattern`,
//! numeric bounds and `multipleOf`, `properties`, `required`, `additionalProperties`,
//! `patternProperties`, `propertyNames`, `minProperties`/`maxProperties`,
//! `dependentRequired`/`dependentSchemas`/`dependencies`, `items`/`prefixItems` (and draft-7
//! tuple `items` with `additionalItems`), `minItems`/`maxItems`, `uniqueItems`,
//! `contains`/`minContains`/`maxContains`, `allOf`/`anyOf`/`oneOf`/`not`, `if`/`then`/`else`,
//! local `$ref` (`#`, JSON pointers, `$anchor`), boolean schemas, and `format` for the
//! formats in format.rs. Not supported, and ignored as unknown keywords are:
//! `unevaluatedProperties`/`unevaluatedItems`, `$dynamicRef`, the formats format.rs does not
//! list, and `$ref`s to other documents (those reject the value at their place, as pi's
//! `unresolvedRefs: "reject"` does).
//!
//! Bounded where pi overflows its stack: a `$ref` cycle that never goes into the value (`{
//! "$ref": "#" }`, two `$ref`s naming each other) fails the validation with an error naming
//! the cycle, and the walks of the checker and the coercer together nest at most
//! [`MAX_WALK`] deep.

use crate::text::Joined;
use std::cell::{Cell, RefCell};

use crate::json::Value;

use super::format;
use super::pattern::Patterns;
use crate::jsnum::to_js_string;
use crate::json::json_stringify;

/// One failure: a JSON Pointer to the value and pi-schema's message.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    pub path: String,
    pub message: String,
}

/// The deepest nesting of schema walks (checking and coercing together): a schema nested
/// `json::MAX_DEPTH` deep is walked whole. A level of a deep value takes one walk, or up to
/// three through a recursive schema (a `$ref` to an `anyOf` whose branch holds `items`); a
/// deeper walk fails the validation with an error naming this limit. Measured in the `.wasm`
/// under Node, the V8 stack (which wasm frames share with JS) holds about 2,200 walks
/// (tests/js/bounds.test.mjs walks this many).
pub const MAX_WALK: usize = crate::json::MAX_DEPTH;

/// A schema document being checked against.
pub struct Schema<'a> {
    root: &'a Value,
    patterns: &'a dyn Patterns,
    /// Draft 7 and older: `$ref` overrides its siblings, tuple `items`, no `dependentRequired`.
    draft7: bool,
    /// A broken schema (an invalid `pattern`, a `$ref` cycle, a walk deeper than
    /// [`MAX_WALK`]): the whole validation fails with this text.
    pub(super) schema_error: RefCell<Option<String>>,
    /// The `$ref`s being walked, innermost last: (target node, value) by address, for cycles.
    refs: RefCell<Vec<(usize, usize)>>,
    /// Walks of the checker and the coercer in progress.
    depth: Cell<usize>,
    /// Whether a walk met a value that is no array at a node with `items` or `prefixItems`:
    /// the one place where coercion changes a value the check accepts (a type-less `items`
    /// schema wraps a single value into an array).
    pub(super) wraps: Cell<bool>,
}

/// One level of a schema walk, counted while it lives (see [`Schema::enter`]).
pub(super) struct Level<'s>(&'s Cell<usize>);

impl Drop for Level<'_> {
    fn drop(&mut self) {
        self.0.set(self.0.get().saturating_sub(1));
    }
}

pub fn pointer(path: &str, key: &str) -> String {
    format!(
        "{path}/{}",
        crate::text::replace(&crate::text::replace(key, "~", "~0"), "/", "~1")
    )
}

/// JS `typeof`-style names used in `expected X, got Y`.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) => {
            if n.as_f64().is_some_and(|f| f.fract() == 0.0) {
                "integer"
            } else {
                "number"
            }
        }
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        // (Arguments never hold a host's value: they are read whole.)
        Value::Host(_) => "object",
    }
}

fn matches_type(v: &Value, t: &str) -> bool {
    match t {
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.as_f64().is_some_and(|f| f.fract() == 0.0),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        _ => false,
    }
}

/// JSON Schema equality: numbers by value (`1` equals `1.0`), objects regardless of order.
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, p)| y.get(k).is_some_and(|q| json_equal(p, q)))
        }
        _ => a == b,
    }
}

/// UTF-16-aware code point count (a lone surrogate is one), as pi-schema counts string
/// length.
fn code_points(s: &str) -> usize {
    crate::json::code_points(s)
}

/// `values` as JSON, at most 20 of them (pi-schema `listValues`).
fn list_values(values: &[Value]) -> String {
    const LISTED: usize = 20;
    if values.len() <= LISTED {
        return crate::json::stringify(&Value::Array(values.to_vec()));
    }
    let listed =
        crate::json::stringify(&Value::Array(values.iter().take(LISTED).cloned().collect()));
    let head = listed.strip_suffix(']').unwrap_or(&listed);
    format!("{head}, ... and {} more]", values.len() - LISTED)
}

/// `multipleOf` with decimal exactness: `0.3` is a multiple of `0.1`.
fn is_multiple(v: f64, d: f64) -> bool {
    if d == 0.0 {
        return false;
    }
    let q = v / d;
    if q.fract() == 0.0 && q.is_finite() {
        return true;
    }
    if !q.is_finite() {
        return v % d == 0.0;
    }
    // Compare as decimals: v = vc·10^ve, d = dc·10^de, each coefficient at most 17 digits.
    let (vc, ve) = decimal(v);
    let (dc, de) = decimal(d);
    // Non-zero by its type: no check for a zero divisor (and its panic text) in the .wasm.
    let Some(dc) = std::num::NonZeroU64::new(dc) else {
        return false;
    };
    if ve >= de {
        // vc·10^(ve−de) ≡ 0 (mod dc), by residues: each is below dc < 10^17, so ten times
        // one fits in a u64 (no 128-bit arithmetic in the .wasm).
        let mut r = vc % dc;
        for _ in 0..ve - de {
            r = r * 10 % dc;
        }
        r == 0
    } else {
        // A divisor dc·10^(de−ve) too large for a u64 exceeds vc, which is then no multiple
        // unless it is 0.
        let m = u32::try_from(de - ve)
            .ok()
            .and_then(|k| 10u64.checked_pow(k))
            .and_then(std::num::NonZeroU64::new)
            .and_then(|p| dc.checked_mul(p));
        m.map_or(vc == 0, |m| vc % m == 0)
    }
}

/// `x` as `c·10^e`, with `c` its shortest decimal digits (JS's `String(x)`) without trailing
/// zeros: at most 17 digits.
fn decimal(x: f64) -> (u64, i64) {
    let s = to_js_string(x.abs());
    let (mantissa, exp) = match crate::text::split_once(&s, "e") {
        Some((m, e)) => (m.to_string(), e.parse::<i64>().unwrap_or(0)),
        None => (s.clone(), 0),
    };
    let fraction = crate::text::split_once(&mantissa, ".").map_or(0, |(_, f)| f.len() as i64);
    let mut digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let mut exp = exp - fraction;
    // Up to 21 digits print without an exponent (1e20 is "100000000000000000000").
    while digits.len() > 1 && digits.ends_with('0') {
        digits.pop();
        exp += 1;
    }
    (digits.parse::<u64>().unwrap_or(0), exp)
}

impl<'a> Schema<'a> {
    pub fn new(root: &'a Value, patterns: &'a dyn Patterns) -> Self {
        let draft7 = root
            .get("$schema")
            .and_then(Value::as_str)
            .is_some_and(|s| {
                ["draft-07", "draft-06", "draft-04"]
                    .iter()
                    .any(|d| crate::text::contains(s, d))
            });
        Schema {
            root,
            patterns,
            draft7,
            schema_error: RefCell::new(None),
            refs: RefCell::new(Vec::new()),
            depth: Cell::new(0),
            wraps: Cell::new(false),
        }
    }

    /// Whether the validation already failed as a whole (nothing more is walked).
    pub fn failed(&self) -> bool {
        self.schema_error.borrow().is_some()
    }

    /// Fails the validation as a whole with `message` (the first failure is kept).
    fn fail(&self, message: String) {
        self.schema_error.borrow_mut().get_or_insert(message);
    }

    /// Starts one more level of walking, or `None` (and the validation fails) past
    /// [`MAX_WALK`], or once it failed.
    pub(super) fn enter(&self) -> Option<Level<'_>> {
        if self.failed() {
            return None;
        }
        let depth = self.depth.get();
        if depth >= MAX_WALK {
            self.fail(format!(
                "the schema and the value nest deeper than {MAX_WALK} levels (the limit)"
            ));
            return None;
        }
        self.depth.set(depth + 1);
        Some(Level(&self.depth))
    }

    pub fn root(&self) -> &'a Value {
        self.root
    }

    /// Whether `v` passes `node`.
    pub fn ok(&self, node: &Value, v: &Value) -> bool {
        let mut scratch = Vec::new();
        self.walk(node, v, "", &mut scratch);
        scratch.is_empty()
    }

    /// Every failure of `v` against the whole schema.
    pub fn errors(&self, v: &Value) -> Vec<Failure> {
        let mut out = Vec::new();
        self.walk(self.root, v, "", &mut out);
        out
    }

    /// `pattern` tested with JS `RegExp(pattern, "u")` semantics; a broken pattern fails the
    /// test and is reported as the schema's error.
    pub fn test(&self, pattern: &str, text: &str) -> bool {
        match self.patterns.test(pattern, text) {
            Ok(m) => m,
            Err(e) => {
                self.schema_error.borrow_mut().get_or_insert(e);
                false
            }
        }
    }

    /// Resolves a local `$ref`: `#`, `#/json/pointer`, or `#anchor`.
    pub fn resolve(&self, reference: &str) -> Option<&'a Value> {
        let fragment = reference.strip_prefix('#')?;
        if fragment.is_empty() {
            return Some(self.root);
        }
        if let Some(ptr) = fragment.strip_prefix('/') {
            let mut node = self.root;
            for raw in ptr.split('/') {
                let part = crate::text::replace(
                    &crate::text::replace(&percent_decode(raw), "~1", "/"),
                    "~0",
                    "~",
                );
                node = match node {
                    Value::Object(o) => o.get(&part)?,
                    Value::Array(a) => a.get(part.parse::<usize>().ok()?)?,
                    _ => return None,
                };
            }
            return Some(node);
        }
        find_anchor(self.root, fragment)
    }

    /// Checks `v` against `node`, within [`MAX_WALK`].
    fn walk(&self, node: &Value, v: &Value, path: &str, out: &mut Vec<Failure>) {
        let Some(_level) = self.enter() else {
            push(out, path, "not checked: the schema failed");
            return;
        };
        let n = match node {
            Value::Bool(true) => return,
            Value::Bool(false) => {
                push(out, path, "no value is allowed here");
                return;
            }
            Value::Object(n) => n,
            _ => return,
        };
        if !v.is_array() && (n.contains_key("items") || n.contains_key("prefixItems")) {
            self.wraps.set(true);
        }
        if self.draft7 {
            if let Some(r) = n.get("$ref").and_then(Value::as_str) {
                self.walk_ref(r, v, path, out);
                return;
            }
        }
        if let Some(t) = n.get("type") {
            let types: Vec<&str> = match t {
                Value::String(s) => vec![s.as_str()],
                Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            // A non-string entry (or an empty list) never matches.
            if !types.iter().any(|t| matches_type(v, t)) {
                let names: Vec<String> = match t {
                    Value::Array(a) => a
                        .iter()
                        .map(|x| x.as_str().map_or_else(|| json_stringify(x), String::from))
                        .collect(),
                    other => vec![other
                        .as_str()
                        .map_or_else(|| json_stringify(other), String::from)],
                };
                push(
                    out,
                    path,
                    &format!("expected {}, got {}", names.joined(" or "), type_name(v)),
                );
                return;
            }
        }
        if let Some(Value::Array(values)) = n.get("enum") {
            if !values.iter().any(|x| json_equal(x, v)) {
                push(
                    out,
                    path,
                    &format!("expected one of {}", list_values(values)),
                );
            }
        }
        if let Some(c) = n.get("const") {
            if !json_equal(c, v) {
                push(
                    out,
                    path,
                    &format!("expected {}", crate::json::stringify(c)),
                );
            }
        }
        match v {
            Value::String(s) => self.walk_string(n, s, path, out),
            Value::Number(x) => walk_number(n, x.as_f64().unwrap_or(f64::NAN), path, out),
            Value::Object(o) => self.walk_object(n, v, o, path, out),
            Value::Array(a) => self.walk_array(n, a, path, out),
            _ => {}
        }
        if let Some(Value::Array(all)) = n.get("allOf") {
            for s in all {
                self.walk(s, v, path, out);
            }
        }
        if let Some(Value::Array(any)) = n.get("anyOf") {
            self.walk_union(any, v, path, out, false);
        }
        if let Some(Value::Array(one)) = n.get("oneOf") {
            self.walk_union(one, v, path, out, true);
        }
        if let Some(not) = n.get("not") {
            if self.ok(not, v) {
                push(out, path, "must not match the schema in not");
            }
        }
        if let Some(cond) = n.get("if") {
            let branch = if self.ok(cond, v) {
                n.get("then")
            } else {
                n.get("else")
            };
            if let Some(b) = branch {
                self.walk(b, v, path, out);
            }
        }
        if let Some(r) = n.get("$ref").and_then(Value::as_str) {
            self.walk_ref(r, v, path, out);
        }
    }

    /// Follows a `$ref`, unless it leads back to a walk of the same value through `$ref`s
    /// alone: a cycle that would never end (a schema without `$ref` is a tree, so every
    /// endless walk passes one).
    fn walk_ref(&self, reference: &str, v: &Value, path: &str, out: &mut Vec<Failure>) {
        let Some(target) = self.resolve(reference) else {
            push(out, path, &format!("unresolved reference {reference}"));
            return;
        };
        let here = (target as *const Value as usize, v as *const Value as usize);
        // The `$ref`s followed at this value are the innermost ones: the value only changes
        // by going into it.
        let cycle = self
            .refs
            .borrow()
            .iter()
            .rev()
            .take_while(|at| at.1 == here.1)
            .any(|at| *at == here);
        if cycle {
            self.fail(format!(
                "the schema's $ref {reference} closes a cycle that never goes into the value"
            ));
            push(out, path, "not checked: the schema failed");
            return;
        }
        self.refs.borrow_mut().push(here);
        self.walk(target, v, path, out);
        self.refs.borrow_mut().pop();
    }

    fn walk_string(&self, n: &crate::json::Map, s: &str, path: &str, out: &mut Vec<Failure>) {
        let len = code_points(s) as f64;
        if let Some(min) = n.get("minLength").and_then(Value::as_f64) {
            if len < min {
                push(
                    out,
                    path,
                    &format!("expected at least {} characters", to_js_string(min)),
                );
            }
        }
        if let Some(max) = n.get("maxLength").and_then(Value::as_f64) {
            if len > max {
                push(
                    out,
                    path,
                    &format!("expected at most {} characters", to_js_string(max)),
                );
            }
        }
        if let Some(p) = n.get("pattern").and_then(Value::as_str) {
            if !self.test(p, s) {
                push(out, path, &format!("expected to match {p}"));
            }
        }
        if let Some(f) = n.get("format").and_then(Value::as_str) {
            if format::check(f, s, self.patterns) == Some(false) {
                push(out, path, &format!("expected format {f}"));
            }
        }
    }

    fn walk_object(
        &self,
        n: &crate::json::Map,
        v: &Value,
        o: &crate::json::Map,
        path: &str,
        out: &mut Vec<Failure>,
    ) {
        let empty = crate::json::Map::new();
        let properties = n
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        if let Some(Value::Array(required)) = n.get("required") {
            for k in required.iter().filter_map(Value::as_str) {
                if !o.contains_key(k) {
                    push(out, &pointer(path, k), "missing");
                }
            }
        }
        for (k, s) in properties {
            if let Some(x) = o.get(k) {
                self.walk(s, x, &pointer(path, k), out);
            }
        }
        let patterns = n.get("patternProperties").and_then(Value::as_object);
        for (k, x) in o {
            let mut matched = properties.contains_key(k);
            for (p, s) in patterns.into_iter().flatten() {
                if self.test(p, k) {
                    matched = true;
                    self.walk(s, x, &pointer(path, k), out);
                }
            }
            if !matched {
                match n.get("additionalProperties") {
                    Some(Value::Bool(false)) => push(out, &pointer(path, k), "unknown field"),
                    Some(extra) => self.walk(extra, x, &pointer(path, k), out),
                    None => {}
                }
            }
            if let Some(names) = n.get("propertyNames") {
                if !self.ok(names, &Value::String(k.clone())) {
                    push(out, &pointer(path, k), "invalid property name");
                }
            }
        }
        let count = o.len() as f64;
        if let Some(min) = n.get("minProperties").and_then(Value::as_f64) {
            if count < min {
                push(
                    out,
                    path,
                    &format!("expected at least {} properties", to_js_string(min)),
                );
            }
        }
        if let Some(max) = n.get("maxProperties").and_then(Value::as_f64) {
            if count > max {
                push(
                    out,
                    path,
                    &format!("expected at most {} properties", to_js_string(max)),
                );
            }
        }
        let mut dependencies: Vec<(&String, &Value)> = Vec::new();
        if !self.draft7 {
            if let Some(Value::Object(d)) = n.get("dependentRequired") {
                dependencies.extend(d.iter());
            }
        }
        if let Some(Value::Object(d)) = n.get("dependencies") {
            dependencies.extend(d.iter());
        }
        for (k, d) in dependencies {
            if !o.contains_key(k) {
                continue;
            }
            match d {
                Value::Array(names) => {
                    for r in names.iter().filter_map(Value::as_str) {
                        if !o.contains_key(r) {
                            push(
                                out,
                                &pointer(path, r),
                                &format!("required when {k} is present"),
                            );
                        }
                    }
                }
                schema => self.walk(schema, v, path, out),
            }
        }
        if !self.draft7 {
            if let Some(Value::Object(d)) = n.get("dependentSchemas") {
                for (k, s) in d {
                    if o.contains_key(k) {
                        self.walk(s, v, path, out);
                    }
                }
            }
        }
    }

    fn walk_array(&self, n: &crate::json::Map, a: &[Value], path: &str, out: &mut Vec<Failure>) {
        let (prefix, rest): (&[Value], Option<&Value>) = match n.get("items") {
            Some(Value::Array(tuple)) => (tuple.as_slice(), n.get("additionalItems")),
            items => {
                let prefix = if self.draft7 {
                    &[][..]
                } else {
                    n.get("prefixItems")
                        .and_then(Value::as_array)
                        .map_or(&[][..], Vec::as_slice)
                };
                (prefix, items)
            }
        };
        for (i, x) in a.iter().enumerate() {
            if let Some(s) = prefix.get(i).or(rest) {
                self.walk(s, x, &format!("{path}/{i}"), out);
            }
        }
        let len = a.len() as f64;
        if let Some(min) = n.get("minItems").and_then(Value::as_f64) {
            if len < min {
                push(
                    out,
                    path,
                    &format!("expected at least {} items", to_js_string(min)),
                );
            }
        }
        if let Some(max) = n.get("maxItems").and_then(Value::as_f64) {
            if len > max {
                push(
                    out,
                    path,
                    &format!("expected at most {} items", to_js_string(max)),
                );
            }
        }
        if n.get("uniqueItems") == Some(&Value::Bool(true)) {
            let unique = a
                .iter()
                .enumerate()
                .all(|(i, x)| a.iter().take(i).all(|y| !json_equal(x, y)));
            if !unique {
                push(out, path, "expected unique items");
            }
        }
        if let Some(contains) = n.get("contains") {
            let min = if self.draft7 {
                None
            } else {
                n.get("minContains").and_then(Value::as_f64)
            }
            .unwrap_or(1.0);
            let max = if self.draft7 {
                None
            } else {
                n.get("maxContains").and_then(Value::as_f64)
            };
            let found = a.iter().filter(|x| self.ok(contains, x)).count() as f64;
            if found < min || max.is_some_and(|m| found > m) {
                let plural = |k: f64| if k == 1.0 { "item" } else { "items" };
                let message = match max {
                    None => format!(
                        "expected at least {} matching {}",
                        to_js_string(min),
                        plural(min)
                    ),
                    Some(m) if min == 0.0 => format!(
                        "expected at most {} matching {}",
                        to_js_string(m),
                        plural(m)
                    ),
                    Some(m) => format!(
                        "expected between {} and {} matching items",
                        to_js_string(min),
                        to_js_string(m)
                    ),
                };
                push(out, path, &message);
            }
        }
    }

    /// `anyOf`/`oneOf`: a tagged union blames the branch its tag selects; otherwise the
    /// branch declaring most of the object's keys, then the one whose first error is deepest.
    fn walk_union(
        &self,
        branches: &[Value],
        v: &Value,
        path: &str,
        out: &mut Vec<Failure>,
        exactly_one: bool,
    ) {
        let matches = branches.iter().filter(|s| self.ok(s, v)).count();
        if matches == 1 || (!exactly_one && matches > 0) {
            return;
        }
        if matches > 1 {
            push(out, path, "matches more than one alternative");
            return;
        }
        let resolved: Vec<&Value> = branches
            .iter()
            .map(|s| {
                s.get("$ref")
                    .and_then(Value::as_str)
                    .and_then(|r| self.resolve(r))
                    .unwrap_or(s)
            })
            .collect();
        if let (Some((key, values)), Value::Object(o)) = (tag_of(&resolved), v) {
            match values
                .iter()
                .position(|x| o.get(&key).is_some_and(|y| json_equal(x, y)))
            {
                None => push(
                    out,
                    &pointer(path, &key),
                    &format!("expected one of {}", list_values(&values)),
                ),
                Some(i) => {
                    if let Some(b) = branches.get(i) {
                        self.walk(b, v, path, out);
                    }
                }
            }
            return;
        }
        let mut best: Option<(Vec<Failure>, usize)> = None;
        for (s, r) in branches.iter().zip(&resolved) {
            let mut errors = Vec::new();
            self.walk(s, v, path, &mut errors);
            let Some(first) = errors.first() else {
                continue;
            };
            let declared = match (v, r.get("properties").and_then(Value::as_object)) {
                (Value::Object(o), Some(props)) => {
                    o.keys().filter(|k| props.contains_key(k)).count()
                }
                _ => 0,
            };
            let better = match &best {
                None => true,
                Some((b, d)) => {
                    declared > *d
                        || (declared == *d
                            && b.first().is_some_and(|bf| first.path.len() > bf.path.len()))
                }
            };
            if better {
                best = Some((errors, declared));
            }
        }
        match best {
            Some((errors, _)) => out.extend(errors),
            None => push(out, path, "matches no alternative"),
        }
    }
}

/// The discriminating property of a union: a key whose `const` is a distinct primitive in
/// every branch.
fn tag_of(branches: &[&Value]) -> Option<(String, Vec<Value>)> {
    let first = branches.first()?.get("properties")?.as_object()?;
    for key in first.keys() {
        let values: Option<Vec<Value>> = branches
            .iter()
            .map(|s| {
                s.get("properties")
                    .and_then(|p| p.get(key))
                    .and_then(|t| t.get("const"))
                    .filter(|c| !c.is_object() && !c.is_array())
                    .cloned()
            })
            .collect();
        if let Some(values) = values {
            let distinct = values
                .iter()
                .enumerate()
                .all(|(i, x)| values.iter().take(i).all(|y| x != y));
            if distinct {
                return Some((key.clone(), values));
            }
        }
    }
    None
}

fn walk_number(n: &crate::json::Map, v: f64, path: &str, out: &mut Vec<Failure>) {
    let bound = |k: &str| n.get(k).and_then(Value::as_f64);
    if let Some(m) = bound("minimum") {
        if v < m {
            push(out, path, &format!("expected >= {}", to_js_string(m)));
        }
    }
    if let Some(m) = bound("maximum") {
        if v > m {
            push(out, path, &format!("expected <= {}", to_js_string(m)));
        }
    }
    if let Some(m) = bound("exclusiveMinimum") {
        if v <= m {
            push(out, path, &format!("expected > {}", to_js_string(m)));
        }
    }
    if let Some(m) = bound("exclusiveMaximum") {
        if v >= m {
            push(out, path, &format!("expected < {}", to_js_string(m)));
        }
    }
    if let Some(d) = bound("multipleOf") {
        if !is_multiple(v, d) {
            push(
                out,
                path,
                &format!("expected a multiple of {}", to_js_string(d)),
            );
        }
    }
}

fn push(out: &mut Vec<Failure>, path: &str, message: &str) {
    out.push(Failure {
        path: path.to_string(),
        message: message.to_string(),
    });
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (b, hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(decoded)) => {
                out.push(decoded);
                i += 3;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn find_anchor<'a>(node: &'a Value, anchor: &str) -> Option<&'a Value> {
    match node {
        Value::Object(o) => {
            if o.get("$anchor").and_then(Value::as_str) == Some(anchor) {
                return Some(node);
            }
            o.values().find_map(|v| find_anchor(v, anchor))
        }
        Value::Array(a) => a.iter().find_map(|v| find_anchor(v, anchor)),
        _ => None,
    }
}
