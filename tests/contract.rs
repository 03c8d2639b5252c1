//! The Rust↔JS contract holds on both sides: every method the typed `extern` blocks of
//! src/wasm/glue.rs bind is a function of the glue (src/js/loop.js: `GLUE`, its `Response`
//! class, the options `startRun` gives `runLoop`), and the kinds the core passes by index
//! (events, and the records of a built-in response) name the same things in both languages.
#![allow(
    clippy::disallowed_methods, // core's substring search: only the .wasm avoids it (size)
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::collections::BTreeSet;

fn source(path: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The JS names the methods of extern type `ty` bind in glue.rs: `js_name = x` where given,
/// else the Rust name.
fn bound(glue: &str, ty: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let pieces: Vec<&str> = glue.split("pub fn ").collect();
    for pair in pieces.windows(2) {
        let (before, item) = (pair[0], pair[1]);
        let (name, args) = item.split_once('(').unwrap();
        if !args.trim_start().starts_with(&format!("this: &{ty}")) {
            continue;
        }
        // The attribute just before the item.
        let attr = before.rsplit("#[wasm_bindgen(").next().unwrap_or("");
        let js = attr
            .split("js_name = ")
            .nth(1)
            .map(|r| r.split([')', ',']).next().unwrap().trim().to_string())
            .unwrap_or_else(|| name.to_string());
        out.insert(js);
    }
    out
}

/// The names between the braces after `head` in `text`, for a one-line object literal or
/// a list of string literals between brackets.
fn listed(text: &str, head: &str, open: char, close: char) -> Vec<String> {
    let at = text
        .find(head)
        .unwrap_or_else(|| panic!("no {head:?} in the glue"));
    let rest = &text[at + head.len()..];
    let body = &rest[rest.find(open).unwrap() + 1..rest.find(close).unwrap()];
    body.split(',')
        .map(|s| {
            s.trim()
                .split(':')
                .next()
                .unwrap()
                .trim_matches(['\'', '"', ' ', '\n'])
                .to_string()
        })
        .filter(|s| !s.is_empty())
        .collect()
}

#[test]
fn every_bound_glue_method_is_a_glue_function() {
    let glue = source("src/wasm/glue.rs");
    let js = source("src/js/loop.js");
    let have: BTreeSet<String> = listed(&js, "const GLUE = ", '{', '}').into_iter().collect();
    let bound_glue = bound(&glue, "Glue");
    assert!(bound_glue.len() >= 20, "{bound_glue:?}");
    let missing: Vec<_> = bound_glue.difference(&have).collect();
    assert!(
        missing.is_empty(),
        "glue.rs binds {missing:?}, which GLUE lacks"
    );
    // Nothing in GLUE that no Rust code calls.
    let unused: Vec<_> = have.difference(&bound_glue).collect();
    assert!(
        unused.is_empty(),
        "GLUE holds {unused:?}, which glue.rs does not bind"
    );

    // The stream function's response: methods of the class `Response`.
    let class = &js[js.find("class Response {").unwrap()..];
    let class = &class[..class.find("\n}\n").unwrap()];
    for method in bound(&glue, "Response") {
        assert!(
            class.contains(&format!("\n  async {method}("))
                || class.contains(&format!("\n  {method}(")),
            "Response lacks {method}"
        );
    }

    // The options of runLoop: the keys `startRun` sets.
    let options: BTreeSet<String> = listed(&js, "wasm.runLoop(glue, ", '{', '}')
        .into_iter()
        .collect();
    let getters = bound(&glue, "RunOptions");
    assert_eq!(
        getters, options,
        "RunOptions' getters against startRun's keys"
    );
}

#[test]
fn event_kinds_are_the_glues() {
    let js = source("src/js/loop.js");
    let types = listed(&js, "const EVENT_TYPES = ", '[', ']');
    assert_eq!(types, pi_agent_wasm::event::AGENT_EVENT_TYPES.to_vec());
}

#[test]
fn record_kinds_are_the_glues() {
    let glue = source("src/wasm/glue.rs");
    let js = source("src/js/loop.js");
    let kinds = listed(&js, "const RECORD_KINDS = ", '[', ']');
    let module = &glue[glue.find("pub mod kind {").unwrap()..];
    let module = &module[..module.find("\n}\n").unwrap()];
    let mut seen = 0;
    for line in module.lines() {
        let Some(rest) = line.trim().strip_prefix("pub const ") else {
            continue;
        };
        let (name, value) = rest.split_once(": usize = ").unwrap();
        let index: usize = value.trim_end_matches(';').parse().unwrap();
        assert_eq!(
            kinds.get(index).map(String::as_str),
            Some(name.to_lowercase().as_str()),
            "RECORD_KINDS[{index}] against kind::{name}"
        );
        seen += 1;
    }
    assert_eq!(seen, kinds.len(), "every record kind has its constant");
}
