//! The incremental tool-argument parser against pi-ai 1.6.0's `StreamingJsonParser`, on
//! recorded cases (tests/fixtures/reference/generate.mjs): the same edit records for every
//! piece, and the same value at the end, for well-formed, malformed and truncated documents
//! split into random pieces.
#![cfg(not(target_arch = "wasm32"))]
#![allow(
    clippy::disallowed_methods, // core's substring search: only the .wasm avoids it (size)
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
mod common;

use common::same;
use pi_agent_wasm::json::Value;
use pi_agent_wasm::stream::{Change, PathSeg, StreamingJsonParser};
use pi_agent_wasm::value as json;

fn change_json(c: &Change) -> Value {
    let path = |p: &[PathSeg]| -> Value {
        p.iter()
            .map(|s| match s {
                PathSeg::Key(k) => json!(k),
                PathSeg::Index(i) => json!(*i),
            })
            .collect()
    };
    match c {
        Change::Set { path: p, value } => json!({"kind": "set", "path": path(p), "value": value}),
        Change::Append { path: p, text } => {
            json!({"kind": "append", "path": path(p), "text": text})
        }
    }
}

#[test]
fn edits_and_values_match_pi_ai_on_every_recorded_case() {
    let cases = common::reference_cases("streaming-json.json");
    assert!(cases.len() > 400);
    let mut failures = Vec::new();
    for (n, c) in cases.iter().enumerate() {
        let mut parser = StreamingJsonParser::new();
        for (i, piece) in c["pieces"].as_array().unwrap().iter().enumerate() {
            let ours: Vec<Value> = parser
                .append(piece.as_str().unwrap())
                .iter()
                .map(change_json)
                .collect();
            let pi = c["changes"][i].as_array().unwrap();
            if !(ours.len() == pi.len() && ours.iter().zip(pi).all(|(a, b)| same(a, b))) {
                failures.push(format!(
                    "case {n} {:?} piece {i} {piece}: ours {ours:?} pi {pi:?}",
                    c["doc"]
                ));
                break;
            }
        }
        let value = parser.value();
        let expected = c["hasValue"].as_bool().unwrap().then(|| c["value"].clone());
        let equal = match (&value, &expected) {
            (Some(a), Some(b)) => same(a, b),
            (None, None) => true,
            _ => false,
        };
        if !equal {
            failures.push(format!(
                "case {n} {:?}: value ours {value:?} pi {expected:?}",
                c["doc"]
            ));
        }
        if failures.len() > 5 {
            break;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_megabyte_of_arguments_in_8_byte_pieces_is_read_once() {
    // Linear by construction: every piece is scanned once and strings grow in place. This
    // checks the result, not the time (timings belong in bench/).
    let body = "x".repeat(1 << 20);
    let doc = format!(r#"{{"path": "a.txt", "content": "{body}"}}"#);
    let mut parser = StreamingJsonParser::new();
    let mut appended = 0;
    for piece in doc.as_bytes().chunks(8) {
        for c in parser.append(std::str::from_utf8(piece).unwrap()) {
            if let Change::Append { text, .. } = c {
                appended += text.len();
            }
        }
    }
    assert!(appended >= (1 << 20) - 8);
    assert_eq!(
        parser.value().unwrap()["content"].as_str().unwrap().len(),
        1 << 20
    );
}
