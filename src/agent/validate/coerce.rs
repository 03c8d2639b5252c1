//! Argument coercion before validation (L-114), in pi-schema's three passes:
//! 1. a `null` in an optional property whose schema rejects null is dropped;
//! 2. TypeBox-style conversion by schema keyword (`const`, `enum`, unions, `allOf`, `type`,
//!    items, properties): `"42"` → 42, `null` → `"null"`, a single value → a one-item array,
//!    a union takes the first branch whose conversion passes;
//! 3. Ajv-style primitive coercion by `type` (type arrays included).
//!
//! A value that cannot be coerced is left as it is; the check then reports it. Conversion
//! re-enters a node with the same value only through `$ref` or by wrapping a value into an
//! array; a stack of those pairs stops a recursive schema from converting without end. Each
//! pass counts its levels with the checker's (`Schema::enter`), so no walk nests deeper than
//! `MAX_WALK`; past it, or once the schema failed, values are left as they are.

use std::cell::RefCell;

use crate::json::{Map, Value};

use super::check::Schema;
use crate::jsnum::{from_js_string, to_js_string};
use crate::message::num;

pub struct Coercer<'s, 'a> {
    schema: &'s Schema<'a>,
    entered: RefCell<Vec<(*const Value, Value)>>,
}

fn types_of(node: &Value) -> Vec<&str> {
    match node.get("type") {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn finite(v: &Value) -> Option<f64> {
    v.as_f64().filter(|f| f.is_finite())
}

fn try_string(v: &Value) -> Option<Value> {
    match v {
        Value::Bool(b) => Some(Value::String(b.to_string())),
        Value::Number(_) => finite(v).map(|f| Value::String(to_js_string(f))),
        Value::Null => Some(Value::String("null".into())),
        Value::String(_) => Some(v.clone()),
        _ => None,
    }
}

/// TypeBox's TryBigInt of a string for the number path: `12n`, `12.5` (truncated) or `12`.
fn big_of_string(s: &str) -> Option<f64> {
    let body = s.strip_prefix('-').unwrap_or(s);
    let sign = if s.starts_with('-') { -1.0 } else { 1.0 };
    let int_ok = |d: &str| {
        !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()) && (d == "0" || !d.starts_with('0'))
    };
    let int = if let Some(d) = body.strip_suffix('n') {
        d
    } else if let Some((i, f)) = crate::text::split_once(body, ".") {
        if f.is_empty() || !f.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        i
    } else {
        body
    };
    if !int_ok(int) {
        return None;
    }
    let x = crate::jsnum::from_js_string(int);
    (x <= 9_007_199_254_740_991.0).then_some(sign * x)
}

fn try_number(v: &Value) -> Option<f64> {
    match v {
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        Value::Number(_) => finite(v),
        Value::Null => Some(0.0),
        Value::String(s) => {
            let x = from_js_string(s);
            if x.is_finite() {
                return Some(x);
            }
            // JS lowercases with Unicode rules, but no non-ASCII character lowercases into
            // these ASCII words, so an ASCII comparison decides the same.
            if s.eq_ignore_ascii_case("false") {
                Some(0.0)
            } else if s.eq_ignore_ascii_case("true") {
                Some(1.0)
            } else {
                big_of_string(s)
            }
        }
        _ => None,
    }
}

fn try_boolean(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::Number(_) => match finite(v) {
            Some(0.0) => Some(false),
            Some(1.0) => Some(true),
            _ => None,
        },
        Value::Null => Some(false),
        Value::String(s) => {
            if s.eq_ignore_ascii_case("false") || s == "0" {
                Some(false)
            } else if s.eq_ignore_ascii_case("true") || s == "1" {
                Some(true)
            } else {
                None
            }
        }
        _ => None,
    }
}

fn try_null(v: &Value) -> Option<Value> {
    let yes = match v {
        Value::Bool(b) => !*b,
        Value::Number(_) => finite(v) == Some(0.0),
        Value::Null => true,
        Value::String(s) => {
            s.eq_ignore_ascii_case("undefined")
                || s.eq_ignore_ascii_case("null")
                || s.is_empty()
                || s == "0"
        }
        _ => false,
    };
    yes.then_some(Value::Null)
}

/// A literal (`const`, an enum member) taken from a value of another type that converts to
/// exactly it.
fn convert_literal(literal: &Value, v: &Value) -> Value {
    if literal == v {
        return v.clone();
    }
    let converted = match literal {
        Value::String(_) => try_string(v),
        Value::Number(_) => try_number(v).map(num),
        Value::Bool(_) => try_boolean(v).map(Value::Bool),
        _ => None,
    };
    match converted {
        Some(c)
            if c.as_f64()
                .zip(literal.as_f64())
                .map_or(&c == literal, |(a, b)| a == b) =>
        {
            c
        }
        _ => v.clone(),
    }
}

fn matches_type(v: &Value, t: &str) -> bool {
    match t {
        "number" => finite(v).is_some(),
        "integer" => v.as_f64().is_some_and(|f| f.fract() == 0.0),
        "boolean" => v.is_boolean(),
        "string" => v.is_string(),
        "null" => v.is_null(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        _ => false,
    }
}

fn coerce_primitive(v: &Value, t: &str) -> Option<Value> {
    match t {
        "number" | "integer" => {
            if v.is_null() {
                return Some(num(0.0));
            }
            if let Value::String(s) = v {
                if !s.trim().is_empty() {
                    let x = from_js_string(s);
                    let ok = if t == "number" {
                        x.is_finite()
                    } else {
                        x.is_finite() && x.fract() == 0.0
                    };
                    if ok {
                        return Some(num(x));
                    }
                }
            }
            if let Value::Bool(b) = v {
                return Some(num(if *b { 1.0 } else { 0.0 }));
            }
            None
        }
        "boolean" => Some(match v {
            Value::Null => Value::Bool(false),
            Value::String(s) if s == "true" => Value::Bool(true),
            Value::String(s) if s == "false" => Value::Bool(false),
            Value::Number(_) if v.as_f64() == Some(1.0) => Value::Bool(true),
            Value::Number(_) if v.as_f64() == Some(0.0) => Value::Bool(false),
            _ => return None,
        }),
        "string" => Some(match v {
            Value::Null => Value::String(String::new()),
            Value::Number(_) => Value::String(to_js_string(v.as_f64().unwrap_or(f64::NAN))),
            Value::Bool(b) => Value::String(b.to_string()),
            _ => return None,
        }),
        "null" => Some(match v {
            Value::String(s) if s.is_empty() => Value::Null,
            Value::Bool(false) => Value::Null,
            Value::Number(_) if v.as_f64() == Some(0.0) => Value::Null,
            _ => return None,
        }),
        _ => None,
    }
}

/// The schema of an array item at `i`: a tuple's, `items` after `prefixItems`, or `items`.
fn item_schema_at(node: &Value, i: usize) -> Option<&Value> {
    if let Some(Value::Array(tuple)) = node.get("items") {
        return tuple.get(i);
    }
    if let Some(p) = node
        .get("prefixItems")
        .and_then(Value::as_array)
        .and_then(|p| p.get(i))
    {
        return Some(p);
    }
    node.get("items")
}

impl<'s, 'a> Coercer<'s, 'a> {
    pub fn new(schema: &'s Schema<'a>) -> Self {
        Coercer {
            schema,
            entered: RefCell::new(Vec::new()),
        }
    }

    /// All three passes over `value`, from the schema's root.
    pub fn coerce(&self, value: Value) -> Value {
        let root = self.schema.root();
        let v = self.drop_optional_nulls(value, root);
        let v = self.convert(root, v);
        self.coerce_types(v, root)
    }

    fn passes(&self, node: &Value, v: &Value) -> bool {
        self.schema.ok(node, v)
    }

    fn key_matches(&self, pattern: &str, key: &str) -> bool {
        self.schema.test(pattern, key)
    }

    // ---- pass 1 -------------------------------------------------------------------------

    fn drop_optional_nulls(&self, value: Value, node: &Value) -> Value {
        if !node.is_object() {
            return value;
        }
        let Some(_level) = self.schema.enter() else {
            return value;
        };
        match value {
            Value::Array(items) => Value::Array(
                items
                    .into_iter()
                    .enumerate()
                    .map(|(i, item)| match item_schema_at(node, i) {
                        Some(s) => self.drop_optional_nulls(item, s),
                        None => item,
                    })
                    .collect(),
            ),
            Value::Object(o) => {
                let properties = node.get("properties").and_then(Value::as_object);
                let patterns = node.get("patternProperties").and_then(Value::as_object);
                let additional = node.get("additionalProperties").filter(|a| a.is_object());
                if patterns.is_none() && additional.is_none() && properties.is_none() {
                    return Value::Object(o);
                }
                let required: Vec<&str> = node
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let mut out = Map::new();
                for (key, v) in o {
                    let property = properties.and_then(|p| p.get(&key));
                    let mut v = v;
                    if let Some(prop) = property {
                        let is_ref = prop.get("$ref").is_some_and(Value::is_string);
                        if v.is_null()
                            && !required.contains(&key.as_str())
                            && !is_ref
                            && !self.passes(prop, &Value::Null)
                        {
                            continue; // dropped, as if omitted
                        }
                        v = self.drop_optional_nulls(v, prop);
                    }
                    let mut matched = property.is_some();
                    for (p, s) in patterns.into_iter().flatten() {
                        if self.key_matches(p, &key) {
                            matched = true;
                            v = self.drop_optional_nulls(v, s);
                        }
                    }
                    if let (false, Some(a)) = (matched, additional) {
                        v = self.drop_optional_nulls(v, a);
                    }
                    out.insert(key, v);
                }
                Value::Object(out)
            }
            other => other,
        }
    }

    // ---- pass 2 -------------------------------------------------------------------------

    fn convert(&self, node: &Value, v: Value) -> Value {
        if !node.is_object() {
            return v;
        }
        let Some(_level) = self.schema.enter() else {
            return v;
        };
        if let Some(r) = node.get("$ref").and_then(Value::as_str) {
            return match self.schema.resolve(r) {
                Some(target) if target.is_object() => self.reenter(target, v),
                _ => v,
            };
        }
        self.convert_node(node, v)
    }

    /// Converts at a re-entry point, unless that (node, value) pair is already converting.
    fn reenter(&self, node: &Value, v: Value) -> Value {
        let key = node as *const Value;
        if self
            .entered
            .borrow()
            .iter()
            .any(|(n, x)| *n == key && *x == v)
        {
            return v;
        }
        self.entered.borrow_mut().push((key, v.clone()));
        let out = self.convert(node, v);
        self.entered.borrow_mut().pop();
        out
    }

    fn convert_node(&self, node: &Value, v: Value) -> Value {
        if let Some(c) = node.get("const") {
            return convert_literal(c, &v);
        }
        if let Some(Value::Array(values)) = node.get("enum") {
            if values.iter().any(|m| m == &v) {
                return v;
            }
            for member in values {
                let candidate = convert_literal(member, &v);
                if candidate != v && self.passes(node, &candidate) {
                    return candidate;
                }
            }
            return v;
        }
        if let Some(Value::Array(branches)) = node.get("anyOf").or_else(|| node.get("oneOf")) {
            return self.convert_union(node, branches, v);
        }
        if let Some(Value::Array(all)) = node.get("allOf") {
            let mut next = v;
            for member in all {
                next = self.convert(member, next);
            }
            return self.convert_members(node, next);
        }
        match node.get("type").and_then(Value::as_str) {
            Some("string") => try_string(&v).unwrap_or(v),
            Some("number") => try_number(&v).map(num).unwrap_or(v),
            Some("integer") => try_number(&v).map(|x| num(x.trunc())).unwrap_or(v),
            Some("boolean") => try_boolean(&v).map(Value::Bool).unwrap_or(v),
            Some("null") => try_null(&v).unwrap_or(v),
            Some("array") => self.convert_array(node, v),
            Some("object") => self.convert_object(node, v),
            None if node.get("type").is_none() => {
                if node.get("properties").is_some() || node.get("patternProperties").is_some() {
                    self.convert_object(node, v)
                } else if node.get("items").is_some() || node.get("prefixItems").is_some() {
                    self.convert_array(node, v)
                } else {
                    v
                }
            }
            _ => v,
        }
    }

    fn convert_union(&self, node: &Value, branches: &[Value], v: Value) -> Value {
        if branches.iter().any(|b| self.passes(b, &v)) {
            return self.convert_members(node, v);
        }
        for b in branches {
            let candidate = self.convert_members(node, self.convert(b, v.clone()));
            if self.passes(node, &candidate) {
                return candidate;
            }
        }
        self.convert_members(node, v)
    }

    fn convert_members(&self, node: &Value, v: Value) -> Value {
        let declares = node.get("properties").is_some()
            || node.get("patternProperties").is_some()
            || node.get("additionalProperties").is_some();
        if declares {
            self.convert_object(node, v)
        } else {
            v
        }
    }

    fn convert_array(&self, node: &Value, v: Value) -> Value {
        let prefix = match (node.get("items"), node.get("prefixItems")) {
            (Some(Value::Array(t)), _) => Some((t.as_slice(), None)),
            (items, Some(Value::Array(p))) => Some((p.as_slice(), items)),
            _ => None,
        };
        if let Some((prefix, rest)) = prefix {
            // A tuple converts its items and never wraps a single value.
            let Value::Array(items) = v else { return v };
            return Value::Array(
                items
                    .into_iter()
                    .enumerate()
                    .map(|(i, item)| match prefix.get(i).or(rest) {
                        Some(s) => self.convert(s, item),
                        None => item,
                    })
                    .collect(),
            );
        }
        match v {
            Value::Array(items) => match node.get("items") {
                None => Value::Array(items),
                Some(s) => Value::Array(
                    items
                        .into_iter()
                        .map(|item| self.convert(s, item))
                        .collect(),
                ),
            },
            // A single value becomes a one-item array, converted by the item schema.
            single => match node.get("items").filter(|s| s.is_object()) {
                Some(item) => Value::Array(vec![self.reenter(item, single)]),
                None => Value::Array(vec![single]),
            },
        }
    }

    fn convert_object(&self, node: &Value, v: Value) -> Value {
        let Value::Object(o) = v else { return v };
        let properties = node.get("properties").and_then(Value::as_object);
        let patterns = node.get("patternProperties").and_then(Value::as_object);
        let additional = node.get("additionalProperties").filter(|a| a.is_object());
        let mut out = Map::new();
        for (key, value) in o {
            let mut next = value;
            let property = properties.and_then(|p| p.get(&key));
            let mut matched = property.is_some();
            if let Some(p) = property {
                next = self.convert(p, next);
            }
            for (p, s) in patterns.into_iter().flatten() {
                if self.key_matches(p, &key) {
                    matched = true;
                    next = self.convert(s, next);
                }
            }
            if let (false, Some(a)) = (matched, additional) {
                next = self.convert(a, next);
            }
            out.insert(key, next);
        }
        Value::Object(out)
    }

    // ---- pass 3 -------------------------------------------------------------------------

    fn coerce_types(&self, v: Value, node: &Value) -> Value {
        if !node.is_object() {
            return v;
        }
        let Some(_level) = self.schema.enter() else {
            return v;
        };
        let mut next = v;
        if let Some(Value::Array(all)) = node.get("allOf") {
            for member in all {
                next = self.coerce_types(next, member);
            }
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = node.get(key) {
                next = self.coerce_union(next, branches);
            }
        }
        let types = types_of(node);
        let union_member = types.len() > 1 && types.iter().any(|t| matches_type(&next, t));
        if !types.is_empty() && !union_member {
            // The first type `next` converts to (always a value of another kind).
            if let Some(candidate) = types.iter().find_map(|t| coerce_primitive(&next, t)) {
                next = candidate;
            }
        }
        if types.contains(&"object") {
            if let Value::Object(o) = next {
                next = self.coerce_properties(o, node);
            }
        }
        if types.contains(&"array") {
            if let Value::Array(items) = next {
                next = Value::Array(
                    items
                        .into_iter()
                        .enumerate()
                        .map(
                            |(i, item)| match item_schema_at(node, i).filter(|s| s.is_object()) {
                                Some(s) => self.coerce_types(item, s),
                                None => item,
                            },
                        )
                        .collect(),
                );
            }
        }
        next
    }

    fn coerce_union(&self, v: Value, branches: &[Value]) -> Value {
        if branches.iter().any(|b| self.passes(b, &v)) {
            return v;
        }
        for b in branches {
            let coerced = self.coerce_types(v.clone(), b);
            if self.passes(b, &coerced) {
                return coerced;
            }
        }
        v
    }

    fn coerce_properties(&self, o: Map, node: &Value) -> Value {
        let properties = node.get("properties").and_then(Value::as_object);
        let patterns = node.get("patternProperties").and_then(Value::as_object);
        let additional = node.get("additionalProperties").filter(|a| a.is_object());
        let mut out = Map::new();
        for (key, value) in o {
            let property = properties.and_then(|p| p.get(&key));
            let mut next = match property {
                Some(p) => self.coerce_types(value, p),
                None => value,
            };
            let mut matched = property.is_some();
            for (p, s) in patterns.into_iter().flatten() {
                if self.key_matches(p, &key) {
                    matched = true;
                    next = self.coerce_types(next, s);
                }
            }
            if let (false, Some(a)) = (matched, additional) {
                next = self.coerce_types(next, a);
            }
            out.insert(key, next);
        }
        Value::Object(out)
    }
}
