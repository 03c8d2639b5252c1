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
    /// Each [`Host`](super::Host) value as `null`, unread (for the binding, which then puts
    /// the host's own value in its place). Otherwise a host value is written as its JSON
    /// reading: a member that has none is left out (as `JSON.stringify` leaves out
    /// `undefined`), an item that has none is `null`.
    pub unread_hosts: bool,
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
        // Unread: the binding puts the host's own value in this place.
        Value::Host(_) if style.unread_hosts => out.extend_from_slice(b"null"),
        Value::Host(h) => match h.value() {
            Some(v) => write_at(out, v, style, level),
            None => out.extend_from_slice(b"null"),
        },
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
            // JS's property order: the array-index keys first, in ascending order, then the
            // others in insertion order (`JSON.stringify({b: 1, 1: 2})` is `{"1":2,"b":1}`).
            let written = |(_, v): &(&String, &Value)| {
                style.unread_hosts || !matches!(v, Value::Host(h) if h.value().is_none())
            };
            let mut indexed: Vec<(u32, (&String, &Value))> = map
                .iter()
                .filter(written)
                .filter_map(|(k, v)| array_index(k).map(|i| (i, (k, v))))
                .collect();
            heapsort(&mut indexed);
            let others = map
                .iter()
                .filter(written)
                .filter(|(k, _)| array_index(k).is_none());
            let members = indexed.into_iter().map(|(_, kv)| kv).chain(others);
            let mut written_any = false;
            for (i, (k, v)) in members.enumerate() {
                written_any = true;
                separate(out, style, level + 1, i == 0);
                write_str(out, k);
                out.push(b':');
                if style.pretty {
                    out.push(b' ');
                }
                write_at(out, v, style, level + 1);
            }
            close(out, style, level, !written_any, b'}');
        }
    }
}

/// `key` as an array index (a canonical integer below 2^32 − 1), which JS orders first.
fn array_index(key: &str) -> Option<u32> {
    let b = key.as_bytes();
    if b.is_empty() || b.len() > 10 || (b.len() > 1 && b.first() == Some(&b'0')) {
        return None;
    }
    let mut n: u64 = 0;
    for &d in b {
        if !d.is_ascii_digit() {
            return None;
        }
        n = n * 10 + u64::from(d - b'0');
    }
    u32::try_from(n).ok().filter(|&n| n != u32::MAX)
}

/// Sorts `v` by its numbers, in place and in O(n log n) without recursion: a heapsort, as
/// core's sort would add 3 KB to the `.wasm` for this one use (its keys are distinct).
fn heapsort<T>(v: &mut [(u32, T)]) {
    let key = |v: &[(u32, T)], i: usize| v.get(i).map_or(0, |(k, _)| *k);
    let sift = |v: &mut [(u32, T)], mut root: usize, end: usize| loop {
        let mut child = 2 * root + 1;
        if child >= end {
            break;
        }
        if child + 1 < end && key(v, child) < key(v, child + 1) {
            child += 1;
        }
        if key(v, root) >= key(v, child) {
            break;
        }
        v.swap(root, child);
        root = child;
    };
    let n = v.len();
    for root in (0..n / 2).rev() {
        sift(v, root, n);
    }
    for end in (1..n).rev() {
        v.swap(0, end);
        sift(v, 0, end);
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

#[cfg(test)]
mod tests {

    /// Objects are written in JS's property order: `JSON.stringify` of what `JSON.parse` made
    /// of the same text (expected values printed by Node).
    #[test]
    fn keys_in_js_order() -> Result<(), crate::json::Error> {
        let cases = [
            (
                r#"{"b":1,"1":2,"a":3,"0":4}"#,
                r#"{"0":4,"1":2,"b":1,"a":3}"#,
            ),
            (
                r#"{"10":1,"9":2,"01":3,"-1":4,"4294967294":5,"4294967295":6,"1.5":7}"#,
                r#"{"9":2,"10":1,"4294967294":5,"01":3,"-1":4,"4294967295":6,"1.5":7}"#,
            ),
            (
                r#"{"z":{"2":0,"y":1,"1":2}}"#,
                r#"{"z":{"1":2,"2":0,"y":1}}"#,
            ),
        ];
        for (text, want) in cases {
            assert_eq!(
                crate::json::stringify(&crate::json::parse(text)?),
                want,
                "{text}"
            );
        }
        // Many index keys in descending order: sorted (the heapsort), the others after.
        let mut text = String::from("{\"k\":0");
        for i in (0..5000).rev() {
            text.push_str(&format!(",\"{i}\":{i}"));
        }
        text.push('}');
        let out = crate::json::stringify(&crate::json::parse(&text)?);
        let mut want = String::from("{");
        for i in 0..5000 {
            want.push_str(&format!("\"{i}\":{i},"));
        }
        want.push_str("\"k\":0}");
        assert_eq!(out, want);
        Ok(())
    }
}
