//! Differential test of the in-house validator against the `jsonschema` crate (a
//! dev-dependency oracle) on seeded random schemas and instances, for the supported
//! keywords. Validation only, without coercion: the oracle knows no coercion.
#![cfg(not(target_arch = "wasm32"))]
#![allow(
    clippy::disallowed_methods, // core's substring search: only the .wasm avoids it (size)
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use pi_agent_wasm::agent::validate::pattern::NativePatterns;
use pi_agent_wasm::agent::validate::Schema;
use pi_agent_wasm::json::{Map, Value};
use pi_agent_wasm::value as json;

/// xorshift64*: deterministic, no crate needed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

const KEYS: [&str; 5] = ["a", "b", "c", "x1", "d"];
const TYPES: [&str; 7] = [
    "string", "number", "integer", "boolean", "null", "array", "object",
];

fn value(r: &mut Rng, depth: usize) -> Value {
    let choice = if depth == 0 { r.below(5) } else { r.below(7) };
    match choice {
        0 => Value::Null,
        1 => json!(r.chance(50)),
        2 => {
            let ints = [-3, 0, 1, 2, 3, 4, 6, 9, 10];
            json!(*r.pick(&ints))
        }
        3 => {
            let floats = [0.5, 1.5, 2.0, -0.5, 2.5, 7.25];
            json!(*r.pick(&floats))
        }
        4 => {
            let strings = ["", "a", "ab", "abc", "xyz", "b", "aaaa", "é"];
            json!(*r.pick(&strings))
        }
        5 => Value::Array((0..r.below(4)).map(|_| value(r, depth - 1)).collect()),
        _ => {
            let mut o = Map::new();
            for _ in 0..r.below(4) {
                o.insert((*r.pick(&KEYS)).into(), value(r, depth - 1));
            }
            Value::Object(o)
        }
    }
}

fn schema(r: &mut Rng, depth: usize) -> Value {
    let kinds = if depth == 0 { 5 } else { 11 };
    match r.below(kinds) {
        0 => {
            if r.chance(25) {
                let i = r.below(TYPES.len());
                let j = (i + 1 + r.below(TYPES.len() - 1)) % TYPES.len();
                json!({"type": [TYPES[i], TYPES[j]]})
            } else {
                json!({"type": *r.pick(&TYPES)})
            }
        }
        1 => json!({"enum": (0..1 + r.below(3)).map(|_| value(r, 1)).collect::<Vec<_>>()}),
        2 => json!({"const": value(r, 1)}),
        3 => {
            let mut s = json!({"type": "string"});
            if r.chance(50) {
                s["minLength"] = json!(r.below(3));
            }
            if r.chance(50) {
                s["maxLength"] = json!(r.below(4));
            }
            if r.chance(40) {
                s["pattern"] = json!(*r.pick(&["^a", "b$", "^[a-c]+$", "z", "^.$"]));
            }
            s
        }
        4 => {
            let mut s = json!({"type": *r.pick(&["number", "integer"])});
            for k in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] {
                if r.chance(30) {
                    s[k] = json!(*r.pick(&[0, 1, 2, 3, -1]));
                }
            }
            if r.chance(30) {
                s["multipleOf"] = json!(*r.pick(&[2.0, 3.0, 0.5, 1.5]));
            }
            s
        }
        5 => {
            let mut props = Map::new();
            for k in KEYS.iter().take(1 + r.below(3)) {
                props.insert((*k).into(), schema(r, depth - 1));
            }
            let mut s = json!({"type": "object", "properties": props});
            if r.chance(50) {
                s["required"] = json!(KEYS.iter().take(r.below(3)).copied().collect::<Vec<_>>());
            }
            match r.below(3) {
                0 => s["additionalProperties"] = json!(false),
                1 => s["additionalProperties"] = schema(r, depth - 1),
                _ => {}
            }
            if r.chance(20) {
                s["patternProperties"] = json!({"^x": schema(r, depth - 1)});
            }
            if r.chance(15) {
                s["propertyNames"] = json!({"maxLength": 1});
            }
            if r.chance(15) {
                s["minProperties"] = json!(r.below(3));
            }
            if r.chance(15) {
                s["maxProperties"] = json!(r.below(3));
            }
            if r.chance(15) {
                s["dependentRequired"] = json!({"a": ["b"]});
            }
            s
        }
        6 => {
            let mut s = json!({"type": "array"});
            if r.chance(60) {
                s["items"] = schema(r, depth - 1);
            }
            if r.chance(25) {
                s["prefixItems"] = json!([schema(r, depth - 1)]);
            }
            if r.chance(30) {
                s["minItems"] = json!(r.below(3));
            }
            if r.chance(30) {
                s["maxItems"] = json!(r.below(3));
            }
            if r.chance(25) {
                s["uniqueItems"] = json!(true);
            }
            if r.chance(25) {
                s["contains"] = schema(r, depth - 1);
                if r.chance(50) {
                    s["minContains"] = json!(r.below(3));
                }
                if r.chance(30) {
                    s["maxContains"] = json!(1 + r.below(2));
                }
            }
            s
        }
        7 => {
            json!({(*r.pick(&["allOf", "anyOf", "oneOf"])): (0..1 + r.below(3)).map(|_| schema(r, depth - 1)).collect::<Vec<_>>()})
        }
        8 => json!({"not": schema(r, depth - 1)}),
        9 => {
            json!({"if": schema(r, depth - 1), "then": schema(r, depth - 1), "else": schema(r, depth - 1)})
        }
        _ => json!(r.chance(70)),
    }
}

#[test]
fn generated_schemas_agree_with_the_jsonschema_crate() {
    let mut r = Rng(0x5EED_1234_ABCD_0001);
    let patterns = NativePatterns::default();
    let mut compared = 0;
    let mut disagreements = Vec::new();
    for _ in 0..3000 {
        let s = schema(&mut r, 3);
        let oracle = jsonschema::draft202012::new(&serde_json::to_value(&s).unwrap()).unwrap();
        let ours = Schema::new(&s, &patterns);
        for _ in 0..8 {
            let v = value(&mut r, 3);
            compared += 1;
            let expected = oracle.is_valid(&serde_json::to_value(&v).unwrap());
            let got = ours.errors(&v).is_empty();
            if expected != got && disagreements.len() < 10 {
                disagreements.push(format!(
                    "schema {s}\nvalue {v}\njsonschema {expected}, ours {got}"
                ));
            }
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n\n"));
    assert_eq!(compared, 24_000);
}
