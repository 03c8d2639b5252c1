//! [`Value`] to JSON text as `JSON.stringify` writes it: numbers as JS prints them (through
//! [`crate::jsnum::to_js_string`]), strings with `JSON.stringify`'s escapes. Lone surrogates
//! stay in [`super`]'s two-character form here; the callers escape the whole text once.
//! Recursive: every value is nested at most [`super::MAX_DEPTH`] levels (see [`super`]).

use super::Value;

/// How a value is written.
#[derive(Clone, Copy)]
pub struct Style {
    /// `-0` as `-0` (the text JSON.parse turns back into `-0`), where `JSON.stringify`
    /// writes `0`.
    pub negative_zero: bool,
    /// `JSON.stringify(value, null, 2)`: members and items on their own lines.
    pub pretty: bool,
}

/// Appends `value` in `style`.
pub fn write(out: &mut Vec<u8>, value: &Value, style: Style) {
    write_at(out, value, style, 0);
}

fn write_at(out: &mut Vec<u8>, value: &Value, style: Style, level: usize) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => {
            let f = n.get();
            if style.negative_zero && f == 0.0 && f.is_sign_negative() {
                out.extend_from_slice(b"-0");
            } else {
                out.extend_from_slice(crate::jsnum::to_js_string(f).as_bytes());
            }
        }
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                separate(out, style, level + 1, i == 0);
                write_at(out, item, style, level + 1);
            }
            close(out, style, level, items.is_empty(), b']');
        }
        Value::Object(map) => {
            out.push(b'{');
            for (i, (k, v)) in map.iter().enumerate() {
                separate(out, style, level + 1, i == 0);
                write_str(out, k);
                out.push(b':');
                if style.pretty {
                    out.push(b' ');
                }
                write_at(out, v, style, level + 1);
            }
            close(out, style, level, map.is_empty(), b'}');
        }
    }
}

/// Before an item or member: a comma after the first, and in `pretty` a new line indented.
fn separate(out: &mut Vec<u8>, style: Style, level: usize, first: bool) {
    if !first {
        out.push(b',');
    }
    if style.pretty {
        new_line(out, level);
    }
}

fn close(out: &mut Vec<u8>, style: Style, level: usize, empty: bool, bracket: u8) {
    if style.pretty && !empty {
        new_line(out, level);
    }
    out.push(bracket);
}

fn new_line(out: &mut Vec<u8>, level: usize) {
    out.push(b'\n');
    out.resize(out.len() + 2 * level, b' ');
}

/// Appends `s` as a JSON string: `"` and `\` escaped, control characters as `\b`, `\t`, `\n`,
/// `\f`, `\r` or `\u00XX` (lowercase, as JS writes them).
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0C => b"\\f",
            0..=0x1F => b"",
            _ => continue,
        };
        out.extend_from_slice(bytes.get(start..i).unwrap_or_default());
        start = i + 1;
        if escape.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(if b >= 0x10 { b'1' } else { b'0' });
            out.push(HEX.get(usize::from(b & 15)).copied().unwrap_or(b'0'));
        } else {
            out.extend_from_slice(escape);
        }
    }
    out.extend_from_slice(bytes.get(start..).unwrap_or_default());
    out.push(b'"');
}
