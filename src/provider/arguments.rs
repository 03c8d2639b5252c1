//! A streamed tool call's arguments: the raw text while it streams, then pi-ai's
//! `parseToolCallArguments` (with `repairJson`) for the final value. Shared by every API's
//! decoder.
//!
//! The partial arguments a `message_update` shows while the text streams are parsed once, in
//! JS, by the glue that applies each delta to the JS copy of the partial
//! (`src/js/streaming-json.js`): the core's partial keeps `{}` until the call ends, and no
//! rule of the core reads a call's arguments before then.

use crate::json::Put;
use crate::json::{Map, Value};

use super::edit_block;
use crate::event::Partial;

/// A streamed tool call's raw argument text.
#[derive(Default)]
pub struct ToolArgs {
    pub text: String,
}

impl ToolArgs {
    /// Appends `delta` to the text.
    pub fn append(&mut self, delta: &str) {
        crate::json::push_str(&mut self.text, delta);
    }

    /// Starts over from `text` (the provider's full arguments replacing what streamed).
    pub fn restart(&mut self, partial: &Partial, index: usize, text: &str) {
        self.text = text.to_string();
        edit_block(partial, index, |b| {
            b.put("arguments", Value::Object(Map::new()));
        });
    }

    /// The final arguments (and an error for malformed text) written into block `index`;
    /// returns the finished block.
    pub fn finish(&self, partial: &Partial, index: usize) -> Value {
        let (arguments, error) = parse_tool_call_arguments(&self.text);
        edit_block(partial, index, |b| {
            b.put("arguments", arguments);
            if let Some(e) = error {
                b.put("argumentsError", e.into());
            }
            Value::Object(b.clone())
        })
        .unwrap_or(Value::Null)
    }

    /// The arguments of a call whose block never ended (no stop event came): pi-ai's block
    /// keeps the partial value its last delta parsed, which is the text's value when the text
    /// is whole JSON (that case is kept here; a cut text keeps `{}`). No error either way.
    pub fn settle(&self, partial: &Partial, index: usize) {
        if let (v @ Value::Object(_), None) = parse_tool_call_arguments(&self.text) {
            edit_block(partial, index, |b| b.put("arguments", v));
        }
    }
}

/// pi-ai's `parseToolCallArguments`: the final arguments of a finished call: `{}` for empty
/// text, the object for valid (or repairable) JSON, else `{}` and an error that quotes the text.
pub fn parse_tool_call_arguments(text: &str) -> (Value, Option<String>) {
    if text.trim().is_empty() {
        return (Value::Object(Map::new()), None);
    }
    let parsed = crate::json::parse(text).or_else(|e| {
        let repaired = repair_json(text);
        if repaired == text {
            Err(e)
        } else {
            crate::json::parse(&repaired)
        }
    });
    match parsed {
        Ok(v @ Value::Object(_)) => (v, None),
        Ok(_) => (
            Value::Object(Map::new()),
            Some(format!(
                "Tool arguments must be a JSON object\n\nReceived arguments:\n{text}"
            )),
        ),
        Err(e) => (
            Value::Object(Map::new()),
            Some(format!("{e}\n\nReceived arguments:\n{text}")),
        ),
    }
}

/// pi-ai's `repairJson`: inside strings, escapes raw control characters and doubles a
/// backslash that starts no valid escape.
pub fn repair_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let mut in_string = false;
    let mut chars = json.chars().peekable();
    while let Some(c) = chars.next() {
        if !in_string {
            out.push(c);
            in_string = c == '"';
            continue;
        }
        match c {
            '"' => {
                out.push(c);
                in_string = false;
            }
            '\\' => match chars.peek().copied() {
                None => out.push_str("\\\\"),
                Some('u') => {
                    let ahead: String = chars.clone().skip(1).take(4).collect();
                    if ahead.len() == 4 && ahead.chars().all(|h| h.is_ascii_hexdigit()) {
                        out.push_str("\\u");
                        out.push_str(&ahead);
                        for _ in 0..5 {
                            chars.next();
                        }
                    } else {
                        out.push_str("\\\\");
                    }
                }
                Some(n @ ('"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't')) => {
                    out.push('\\');
                    out.push(n);
                    chars.next();
                }
                Some(_) => out.push_str("\\\\"),
            },
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}
