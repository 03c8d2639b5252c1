//! StreamingJsonParser on hand-written cases: complete documents, cut documents, edit records.
#![cfg(not(target_arch = "wasm32"))]
#![allow(
    clippy::disallowed_methods, // core's substring search: only the .wasm avoids it (size)
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use pi_agent_wasm::json::Value;
use pi_agent_wasm::stream::partial_json::*;
use pi_agent_wasm::value as json;

fn parse_in(pieces: &[&str]) -> (Option<Value>, Vec<Vec<Change>>) {
    let mut p = StreamingJsonParser::new();
    let changes = pieces.iter().map(|s| p.append(s)).collect();
    (p.value(), changes)
}

#[test]
fn complete_documents_parse_exactly() {
    let doc = r#"{"a": [1, 2.5, -3e2, true, false, null], "s": "x\ny\u00e9\"", "o": {"k": {}}}"#;
    let (v, _) = parse_in(&[doc]);
    // Numbers as JS holds them: -3e2 is the integer -300.
    assert_eq!(
        v.unwrap(),
        json!({"a": [1, 2.5, -300, true, false, null], "s": "x\nyé\"", "o": {"k": {}}})
    );
}

#[test]
fn partial_values_follow_the_rules() {
    assert_eq!(
        parse_in(&[r#"{"path": "src/ma"#]).0.unwrap(),
        json!({"path": "src/ma"})
    );
    assert_eq!(parse_in(&[r#"{"a": 1, "b"#]).0.unwrap(), json!({"a": 1}));
    assert_eq!(parse_in(&[r#"{"a": tr"#]).0.unwrap(), json!({"a": true}));
    assert_eq!(parse_in(&[r#"{"a": 12e"#]).0.unwrap(), json!({"a": 12}));
    assert_eq!(parse_in(&[r#"{"a": "x\"#]).0.unwrap(), json!({"a": "x"}));
    assert_eq!(
        parse_in(&[r#"[1, [2, {"z""#]).0.unwrap(),
        json!([1, [2, {}]])
    );
    assert_eq!(
        parse_in(&[r#"{"a" 1 "b": 2}"#]).0.unwrap(),
        json!({"a": 1, "b": 2})
    );
    assert_eq!(
        parse_in(&[r#"{"a": wat, "b": "\d"}"#]).0.unwrap(),
        json!({"b": "\\d"})
    );
    assert_eq!(
        parse_in(&[r#"{"a": 1} trailing"#]).0.unwrap(),
        json!({"a": 1})
    );
    assert_eq!(parse_in(&[""]).0, None);
}

#[test]
fn changes_are_edit_records() {
    let (_, changes) = parse_in(&[r#"{"cmd": "ls"#, " -la\", \"n\": 4", "2}"]);
    assert_eq!(
        changes[0],
        vec![
            Change::Set {
                path: vec![],
                value: json!({})
            },
            Change::Set {
                path: vec![PathSeg::Key("cmd".into())],
                value: json!("ls")
            },
        ]
    );
    assert_eq!(
        changes[1],
        vec![Change::Append {
            path: vec![PathSeg::Key("cmd".into())],
            text: " -la".into()
        }]
    );
    assert_eq!(
        changes[2],
        vec![Change::Set {
            path: vec![PathSeg::Key("n".into())],
            value: json!(42)
        }]
    );
}

#[test]
fn unicode_escapes_and_surrogate_pairs() {
    let (v, _) = parse_in(&[r#"{"e": "\ud83d"#, r#"\ude00 ok"}"#]);
    assert_eq!(v.unwrap(), json!({"e": "😀 ok"}));
    // A lone half stays as JS keeps it, in the form crate::json reads it (not U+FFFD), in
    // one piece or two, and joins its other half from the next piece.
    let lone = r#"{"e": "\ud83d x", "f": "\ude00"}"#;
    let (v, _) = parse_in(&[lone]);
    assert_eq!(v.unwrap(), pi_agent_wasm::json::parse(lone).unwrap());
    let (v, _) = parse_in(&[r#"{"e": "\ud83d"#, r#" x", "f": "\ude00"}"#]);
    assert_eq!(v.unwrap(), pi_agent_wasm::json::parse(lone).unwrap());
    let (v, changes) = parse_in(&[r#"{"e": "a\ud83d"#, r#"\ude00"}"#]);
    assert_eq!(v.unwrap(), json!({"e": "a😀"}));
    // Each piece's edit carries its own half, which JS concatenation joins.
    let halves: Vec<String> = changes
        .iter()
        .flatten()
        .filter_map(|c| match c {
            Change::Append { text, .. } => Some(text.clone()),
            Change::Set { value, .. } => value.as_str().map(String::from),
        })
        .collect();
    let mut joined = String::new();
    for h in &halves {
        pi_agent_wasm::json::push_str(&mut joined, h);
    }
    assert_eq!(joined, "a😀");
    assert_eq!(halves.len(), 2);
}

#[test]
fn every_split_gives_the_same_value() {
    let doc = r#"{"path": "a/b.txt", "edits": [{"old": "x\ty", "new": "\u00fcber"}, {"n": -1.5e3}], "ok": true}"#;
    let whole = parse_in(&[doc]).0;
    for cut in 0..=doc.len() {
        if !doc.is_char_boundary(cut) {
            continue;
        }
        let (a, b) = doc.split_at(cut);
        assert_eq!(parse_in(&[a, b]).0, whole, "split at {cut}");
    }
}
