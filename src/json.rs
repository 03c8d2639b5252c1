//! JSON text ↔ [`Value`] for data from JS and from the network, and back: the one home of
//! two rules that a general JSON library gets wrong for JS data.
//!
//! - **Depth.** A value is nested at most [`MAX_DEPTH`] levels. The text reader ([`Reader`],
//!   this module's own) counts the levels as it reads and refuses a deeper text with an error
//!   naming the limit. Every value in the core comes from here, from the streaming parser
//!   (which keeps the same bound) or from the core itself, so no reader, writer, walker,
//!   clone or `Drop` of a value recurses deeper than the stack holds.
//! - **Lone surrogates.** A JS string may hold half of a UTF-16 surrogate pair (an emoji cut
//!   in two). `JSON.stringify` writes it as a `\udXXX` escape; a Rust `String` cannot hold
//!   it. Here such a unit is kept as two characters: U+FDD0, a noncharacter (Unicode
//!   reserves them for a program's internal use), then the private-use character
//!   U+E000 + (unit − 0xD800). What gives strings back to JS ([`stringify`], [`utf16`])
//!   turns the pair back into the unit, and [`push_str`] joins halves that arrive in two
//!   pieces into their character, as JS string concatenation does. U+FDD0 itself is not
//!   escaped, so every text reads the same whether it came from JS or was already in this
//!   form; the one text that reads differently is U+FDD0 directly followed by a character
//!   in U+E000–U+E7FF, which reads as a lone surrogate.
//!
//! Lowest layer: depends on the standard library only (and [`crate::jsnum`] for numbers).

use std::fmt;

/// The deepest nesting of arrays and objects read from JSON text (and kept by the streaming
/// parser): 1,000 levels of a caller's data with room for the messages around them, far
/// above real data. Measured in the `.wasm` under Node, the V8 stack (which wasm frames
/// share with JS) holds about 2,500 levels of the costliest walk of a value (a clone), so
/// this is under half of it (tests/js/bounds.test.mjs runs each walk at this depth).
pub const MAX_DEPTH: usize = 1_100;

/// The marker that starts a lone surrogate (see the module docs).
const MARK: char = '\u{FDD0}';
/// The private-use character for surrogate unit 0xD800; the others follow it.
const LONE_BASE: u32 = 0xE000;

mod read;
mod value;
mod write;
pub use read::Reader;
pub use value::{Host, HostValue, Index, Map, Number, Value};
pub use write::{write, write_str, Style};

/// Why a text was not read.
#[derive(Debug)]
pub enum Error {
    /// Nested deeper than [`MAX_DEPTH`].
    TooDeep,
    /// Not JSON: what was wrong, and where (line and column).
    Syntax(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::TooDeep => write!(f, "JSON nested deeper than {MAX_DEPTH} levels (the limit)"),
            Error::Syntax(e) => f.write_str(e),
        }
    }
}

impl std::error::Error for Error {}

/// `JSON.parse(text)` as a [`Value`].
pub fn parse(text: &str) -> Result<Value, Error> {
    Reader::new(text, MAX_DEPTH).whole()
}

/// `JSON.parse(text)` for a text that wraps values of the caller's in `wrapper` levels of its
/// own (a tool read as `[mode, declaration]`): the limit applies to the caller's values.
pub fn parse_wrapped(text: &str, wrapper: usize) -> Result<Value, Error> {
    Reader::new(text, MAX_DEPTH + wrapper).whole()
}

/// Appends the two-character form of the lone surrogate `unit`.
pub fn push_lone(out: &mut String, unit: u16) {
    out.push(MARK);
    out.push(lone_char(unit));
}

fn lone_char(unit: u16) -> char {
    char::from_u32(LONE_BASE + u32::from(unit).saturating_sub(0xD800)).unwrap_or(MARK)
}

/// The surrogate unit of a private-use character that follows the marker.
fn unit_of(c: char) -> Option<u16> {
    let n = u32::from(c).checked_sub(LONE_BASE)?;
    (n < 0x800).then(|| 0xD800 + n as u16)
}

/// The lone surrogate at the start of `s`: its unit and the rest.
fn leading_lone(s: &str) -> Option<(u16, &str)> {
    let mut chars = s.chars();
    if chars.next()? != MARK {
        return None;
    }
    let unit = unit_of(chars.next()?)?;
    Some((unit, chars.as_str()))
}

/// The lone surrogate at the end of `s`: its unit and the text before it.
fn trailing_lone(s: &str) -> Option<(u16, &str)> {
    let mut chars = s.chars();
    let unit = unit_of(chars.next_back()?)?;
    if chars.next_back()? != MARK {
        return None;
    }
    Some((unit, chars.as_str()))
}

/// `dst += s` as JS concatenates strings: a high surrogate at the end of `dst` and a low
/// one at the start of `s` become one character.
pub fn push_str(dst: &mut String, s: &str) {
    if let (Some((high @ 0xD800..=0xDBFF, before)), Some((low @ 0xDC00..=0xDFFF, rest))) =
        (trailing_lone(dst), leading_lone(s))
    {
        if let Some(c) = pair(high, low) {
            dst.truncate(before.len());
            dst.push(c);
            dst.push_str(rest);
            return;
        }
    }
    dst.push_str(s);
}

/// The character of a high and a low surrogate.
fn pair(high: u16, low: u16) -> Option<char> {
    let code = 0x10000 + ((u32::from(high) & 0x3FF) << 10) + (u32::from(low) & 0x3FF);
    char::from_u32(code)
}

/// pi-ai's `sanitizeSurrogates`: `s` without its lone surrogates, as pi-ai's request builders
/// send text.
pub fn sanitize(s: &str) -> String {
    map_lone(s, false)
}

/// `s` with each lone surrogate written as its `\uXXXX` escape (`escape`) or left out.
fn map_lone(s: &str, escape: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in js_chars(s) {
        match c {
            Ok(c) => out.push(c),
            Err(unit) if escape => {
                out.push_str("\\u");
                for shift in [12, 8, 4, 0] {
                    out.push(char::from_digit(u32::from(unit >> shift) & 15, 16).unwrap_or('0'));
                }
            }
            Err(_) => {}
        }
    }
    out
}

/// Whether `s` holds a lone surrogate (a quick test: the marker's presence).
pub fn has_lone(s: &str) -> bool {
    crate::text::contains(s, "\u{FDD0}")
}

/// The characters of `s` as JS iterates them (a lone surrogate is one).
fn js_chars(s: &str) -> impl Iterator<Item = Result<char, u16>> + '_ {
    let mut chars = s.chars().peekable();
    std::iter::from_fn(move || {
        let c = chars.next()?;
        if c == MARK {
            if let Some(unit) = chars.peek().and_then(|n| unit_of(*n)) {
                chars.next();
                return Some(Err(unit));
            }
        }
        Some(Ok(c))
    })
}

/// The number of code points of the JS string `s` (a lone surrogate counts one), as
/// JSON Schema's `minLength`/`maxLength` count them.
pub fn code_points(s: &str) -> usize {
    if !has_lone(s) {
        return s.chars().count();
    }
    js_chars(s).count()
}

/// The UTF-16 units of the JS string `s`.
pub fn utf16(s: &str) -> Vec<u16> {
    let mut out = Vec::with_capacity(s.len());
    for c in js_chars(s) {
        match c {
            Ok(c) => out.extend_from_slice(c.encode_utf16(&mut [0; 2])),
            Err(unit) => out.push(unit),
        }
    }
    out
}

/// JSON text written by [`write`] made as `JSON.stringify` writes it: each lone surrogate
/// as its `\udXXX` escape (the marker appears only inside strings).
pub fn escape_lone(text: String) -> String {
    if !has_lone(&text) {
        return text;
    }
    map_lone(&text, true)
}

/// `JSON.stringify(value)`: the same as [`json_stringify`].
pub fn stringify(value: &Value) -> String {
    json_stringify(value)
}

/// `JSON.stringify` of a JSON value: numbers written as JS writes them (`-150`, `1e+21`) and
/// lone surrogates as `\udXXX` escapes (this module), so request bodies and argument strings
/// match pi's byte for byte.
pub fn json_stringify(value: &Value) -> String {
    text_of(
        value,
        Style {
            negative_zero: false,
            pretty: false,
            unread_hosts: false,
        },
    )
}

/// The JSON text from which `JSON.parse` makes `value` in JS: [`json_stringify`]'s, but with
/// `-0` written as such (JSON.stringify writes `0`), so that a `-0` the network sent reaches
/// JS as pi's `JSON.parse` gave it.
pub fn json_for_js(value: &Value) -> String {
    text_of(
        value,
        Style {
            negative_zero: true,
            pretty: false,
            unread_hosts: false,
        },
    )
}

/// [`json_for_js`] with each host value ([`Host`]) written as `null`, unread:
/// the binding puts the host's own value in its place.
pub fn json_skeleton_for_js(value: &Value) -> String {
    text_of(
        value,
        Style {
            negative_zero: true,
            pretty: false,
            unread_hosts: true,
        },
    )
}

/// `JSON.stringify(value, null, 2)`: [`json_stringify`] indented by two spaces.
pub fn json_stringify_pretty(value: &Value) -> String {
    text_of(
        value,
        Style {
            negative_zero: false,
            pretty: true,
            unread_hosts: false,
        },
    )
}

fn text_of(value: &Value, style: Style) -> String {
    let mut out = Vec::new();
    write(&mut out, value, style);
    text_from(out)
}

/// The text [`write`] (and [`write_str`]) put out, lone surrogates escaped as `JSON.stringify`
/// writes them.
pub fn text_from(out: Vec<u8>) -> String {
    // `write` puts out whole `str`s and ASCII only, so the bytes are UTF-8: taken as they are,
    // with no check-and-copy of a lossy conversion.
    escape_lone(String::from_utf8(out).unwrap_or_default())
}

/// Whether a JSON value is truthy in JS: not `null`, `false`, `0` or `""` (JSON has no NaN
/// or undefined).
pub fn is_truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        // An object (or a value JSON cannot hold) that the host keeps.
        Value::Array(_) | Value::Object(_) | Value::Host(_) => true,
    }
}

/// A JSON value written as JSON, like `serde_json::json!` and with its syntax (`null`,
/// `[…]`, `{"key": …}`, a key may be a variable), built without its cost: `json!` turns each
/// value into a [`Value`] through serde (`to_value(&e)`, a `Serialize` walk per type and a
/// clone of a `Value` by serialising it), inline at every use. Here a value is converted by
/// [`IntoValue`] and an object is made by one function per member count ([`object_of`], which
/// takes the pairs by value: no drop of the emptied pairs at each use, 0.6 KB of gzip), which
/// keeps the request builders a third smaller in the `.wasm`.
#[macro_export]
macro_rules! value {
    (null) => { $crate::json::Value::Null };
    ([]) => { $crate::json::Value::Array(::std::vec::Vec::new()) };
    ([ $($tt:tt)+ ]) => { $crate::json::Value::Array($crate::value_items!(() () $($tt)+)) };
    ({}) => { $crate::json::Value::Object($crate::json::Map::new()) };
    ({ $($tt:tt)+ }) => { $crate::json::object_of($crate::value_pairs!(() $($tt)+)) };
    ($e:expr) => { $crate::json::IntoValue::into_value($e) };
}

/// [`value!`]'s array items, split at their top-level commas.
#[doc(hidden)]
#[macro_export]
macro_rules! value_items {
    (($($done:expr,)*) ($($cur:tt)+) , $($rest:tt)*) => {
        $crate::value_items!(($($done,)* $crate::value!($($cur)+),) () $($rest)*)
    };
    (($($done:expr,)*) ($($cur:tt)*) $next:tt $($rest:tt)*) => {
        $crate::value_items!(($($done,)*) ($($cur)* $next) $($rest)*)
    };
    (($($done:expr,)*) ($($cur:tt)+)) => { ::std::vec![$($done,)* $crate::value!($($cur)+)] };
    (($($done:expr,)*) ()) => { ::std::vec![$($done,)*] };
}

/// [`value!`]'s object members as `(key, value)` pairs.
#[doc(hidden)]
#[macro_export]
macro_rules! value_pairs {
    (($($done:expr,)*) $k:tt : $($rest:tt)+) => { $crate::value_member!(($($done,)*) $k () $($rest)+) };
    (($($done:expr,)*)) => { [$($done,)*] };
}

/// One member's value tokens, up to the next top-level comma.
#[doc(hidden)]
#[macro_export]
macro_rules! value_member {
    (($($done:expr,)*) $k:tt ($($cur:tt)+) , $($rest:tt)*) => {
        $crate::value_pairs!(($($done,)* (::core::convert::AsRef::<str>::as_ref(&$k), $crate::value!($($cur)+)),) $($rest)*)
    };
    (($($done:expr,)*) $k:tt ($($cur:tt)*) $next:tt $($rest:tt)*) => {
        $crate::value_member!(($($done,)*) $k ($($cur)* $next) $($rest)*)
    };
    (($($done:expr,)*) $k:tt ($($cur:tt)+)) => {
        $crate::value_pairs!(($($done,)* (::core::convert::AsRef::<str>::as_ref(&$k), $crate::value!($($cur)+)),))
    };
}

/// An object of `pairs`, in their order.
pub fn object_of<const N: usize>(mut pairs: [(&str, Value); N]) -> Value {
    object_from(&mut pairs)
}

/// [`object_of`]'s work, once for every `N`: the values are taken out of `pairs`.
fn object_from(pairs: &mut [(&str, Value)]) -> Value {
    let mut map = Map::with_capacity(pairs.len());
    for (k, v) in pairs {
        map.insert((*k).to_owned(), std::mem::take(v));
    }
    Value::Object(map)
}

/// What [`value!`] accepts as a value: what `json!` gave the same JSON for.
pub trait IntoValue {
    fn into_value(self) -> Value;
}

impl IntoValue for Value {
    fn into_value(self) -> Value {
        self
    }
}
impl IntoValue for &Value {
    fn into_value(self) -> Value {
        self.clone()
    }
}
impl IntoValue for &str {
    fn into_value(self) -> Value {
        Value::String(self.to_owned())
    }
}
impl IntoValue for String {
    fn into_value(self) -> Value {
        Value::String(self)
    }
}
impl IntoValue for &String {
    fn into_value(self) -> Value {
        Value::String(self.clone())
    }
}
/// Numbers and booleans convert as `Value::from` does (a float that is not finite is
/// `null`).
macro_rules! into_value_by_from {
    ($($t:ty),*) => {$(
        impl IntoValue for $t {
            fn into_value(self) -> Value {
                Value::from(self)
            }
        }
    )*};
}
into_value_by_from!(bool, f64, i64, i32, u16, u64, usize, u32, u8);
impl<T: Into<Value>> IntoValue for Vec<T> {
    fn into_value(self) -> Value {
        Value::from(self)
    }
}
impl IntoValue for Map {
    fn into_value(self) -> Value {
        Value::Object(self)
    }
}
impl<T: IntoValue> IntoValue for Option<T> {
    fn into_value(self) -> Value {
        self.map_or(Value::Null, IntoValue::into_value)
    }
}

/// `map.insert(key.to_owned(), value)`, outlined: one call at each of the ~200 places that
/// set a literal key.
pub trait Put {
    fn put(&mut self, key: &str, value: Value);
}

impl Put for Map {
    #[inline(never)]
    fn put(&mut self, key: &str, value: Value) {
        self.insert(key.to_owned(), value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every double read from JSON text is the nearest one, as JSON.parse reads it (natively
    /// through `str::parse`; the `.wasm`, where the JS engine's `parseFloat` reads the ones
    /// off the exact fast path, is held to it by tests/js/numbers-exact.test.mjs).
    #[test]
    fn numbers_are_read_exactly() -> Result<(), Box<dyn std::error::Error>> {
        let exact = |text: &str| -> Result<(), Box<dyn std::error::Error>> {
            let want: f64 = text.parse()?;
            let got = parse(text)?.as_f64().ok_or("a number")?;
            assert_eq!(got.to_bits(), want.to_bits(), "{text}");
            Ok(())
        };
        for text in [
            "123456789012345678901",
            "7.038531e-26",
            "1.00000000000000011102230246251565404236316680908203125",
            "2.2250738585072011e-308",
            "2.4703282292062328e-324",
            "1.7976931348623158e308",
            "0.1",
            "1e-7",
        ] {
            exact(text)?;
        }
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let f = f64::from_bits(x);
            if f.is_finite() {
                exact(&format!("{f:e}"))?;
            }
        }
        Ok(())
    }

    /// `value!` gives what `serde_json::json!` gives, key order included (compared as text:
    /// serde_json's own value type is another type).
    #[test]
    #[cfg(not(target_arch = "wasm32"))]
    fn value_macro_matches_json_macro() -> Result<(), serde_json::Error> {
        let key = String::from("dynamic");
        let text = String::from("t");
        let v = Value::from(vec![1, 2]);
        let sv = serde_json::json!([1, 2]);
        let none: Option<&str> = None;
        let pair = |a: i32, b: i32| a + b;
        let ours = crate::value!({
            "null": null, "s": "x", "owned": text.clone(), "borrowed": &text,
            "n": 1.5, "i": 0, "neg": -3, "nan": f64::NAN, "b": true,
            "call": pair(1, 2), "cloned": &v, "moved": v.clone(), "none": none, "some": Some("y"),
            key: {"nested": [1, {"deep": []}, [], {}], "empty": {}},
            "list": [text.clone(), null, [pair(3, 4)],],
        });
        let theirs = serde_json::json!({
            "null": null, "s": "x", "owned": text.clone(), "borrowed": &text,
            "n": 1.5, "i": 0, "neg": -3, "nan": f64::NAN, "b": true,
            "call": pair(1, 2), "cloned": &sv, "moved": sv.clone(), "none": none, "some": Some("y"),
            key: {"nested": [1, {"deep": []}, [], {}], "empty": {}},
            "list": [text.clone(), null, [pair(3, 4)],],
        });
        assert_eq!(stringify(&ours), serde_json::to_string(&theirs)?);
        assert_eq!(
            stringify(&crate::value!({"z": 1, "a": 2, "m": 3})),
            r#"{"z":1,"a":2,"m":3}"#
        );
        assert_eq!(crate::value!([]), Value::Array(Vec::new()));
        assert_eq!(crate::value!(null), Value::Null);
        Ok(())
    }

    #[test]
    fn depth_is_measured_outside_strings() -> Result<(), Box<dyn std::error::Error>> {
        // (At the limit itself in tests/bounds.rs: a debug build's frames need a big stack.)
        assert!(parse("[[[1]]]").is_ok());
        let text = format!("[\"{}\"]", "[".repeat(MAX_DEPTH + 5));
        assert!(parse(&text).is_ok());
        let escaped = format!("[\"\\\"{}\"]", "{".repeat(MAX_DEPTH + 5));
        assert!(parse(&escaped).is_ok());
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        let e = parse(&deep).err().ok_or("it parsed")?.to_string();
        assert_eq!(
            e,
            format!("JSON nested deeper than {MAX_DEPTH} levels (the limit)")
        );
        Ok(())
    }

    #[test]
    fn a_lone_escape_next_to_the_raw_other_half_is_the_pair(
    ) -> Result<(), Box<dyn std::error::Error>> {
        // The raw halves come from an outer JSON text that decoded `\ud83d` or `\ude00`
        // on their own (found by the openai_* fuzz targets).
        let mut raw_low = String::from("\"a\\ud83d");
        push_lone(&mut raw_low, 0xDE00);
        raw_low.push_str("b\"");
        assert_eq!(parse(&raw_low)?, Value::String("a\u{1F600}b".into()));
        let mut raw_high = String::from("\"a");
        push_lone(&mut raw_high, 0xD83D);
        raw_high.push_str("\\ude00b\"");
        assert_eq!(parse(&raw_high)?, Value::String("a\u{1F600}b".into()));
        // Apart, they stay lone.
        let mut apart = String::from("\"\\ud83dx");
        push_lone(&mut apart, 0xDE00);
        apart.push('"');
        let mut expected = String::new();
        push_lone(&mut expected, 0xD83D);
        expected.push('x');
        push_lone(&mut expected, 0xDE00);
        assert_eq!(parse(&apart)?, Value::String(expected));
        Ok(())
    }

    #[test]
    fn lone_surrogates_round_trip() -> Result<(), Box<dyn std::error::Error>> {
        for text in [
            r#""\ud83d""#,
            r#""a\ude00b""#,
            r#"["\ud83d\ud83d\ude00", {"\udfff": "\udbff"}]"#,
            r#""\uD83D x""#,
        ] {
            let v = parse(text)?;
            let back = stringify(&v);
            let again = parse(&back)?;
            assert_eq!(v, again, "{text} -> {back}");
        }
        assert_eq!(stringify(&parse(r#""\uD83D""#)?), r#""\ud83d""#);
        // A pair, escaped or not, is the character.
        assert_eq!(parse(r#""\ud83d\ude00""#)?, Value::from("😀"));
        assert_eq!(
            stringify(&parse(r#"["\ud83d\ud83d\ude00"]"#)?),
            "[\"\\ud83d😀\"]"
        );
        Ok(())
    }

    #[test]
    fn halves_join_when_concatenated() -> Result<(), Box<dyn std::error::Error>> {
        let high = parse(r#""x\ud83d""#)?;
        let low = parse(r#""\ude00y""#)?;
        let mut s = high.as_str().ok_or("not a string")?.to_string();
        push_str(&mut s, low.as_str().ok_or("not a string")?);
        assert_eq!(s, "x😀y");
        let mut t = low.as_str().ok_or("not a string")?.to_string();
        push_str(&mut t, high.as_str().ok_or("not a string")?);
        assert_eq!(code_points(&t), 4);
        assert_eq!(
            utf16(&t),
            [0xDE00, u16::from(b'y'), u16::from(b'x'), 0xD83D]
        );
        Ok(())
    }

    #[test]
    fn sanitize_drops_lone_halves_only() -> Result<(), Box<dyn std::error::Error>> {
        let s = parse(r#""a\ud83db\ude00c😀\udbff""#)?;
        assert_eq!(sanitize(s.as_str().ok_or("not a string")?), "abc😀");
        assert_eq!(sanitize("plain 😀"), "plain 😀");
        Ok(())
    }

    #[test]
    fn counts_as_js_counts() -> Result<(), Box<dyn std::error::Error>> {
        let s = parse(r#""😀\ud83d\u00e9""#)?;
        let s = s.as_str().ok_or("not a string")?;
        assert_eq!(code_points(s), 3);
        assert_eq!(utf16(s).len(), 4);
        Ok(())
    }
}
