//! A JSON text reader (RFC 8259, as `JSON.parse` reads it) into [`Value`], and a pull API
//! over the same text for readers that take only some fields of a known shape.
//!
//! Written here rather than taken from serde_json's deserializer for size, measured in the
//! `.wasm`: serde_json reads a double exactly only with its `float_roundtrip` feature, whose
//! tables and big-number code are 8.8 KB of gzip, where the JS engine's `parseFloat` is
//! exact already; with its deserializer and serde's visitor machinery, serde_json's reading
//! cost 16.5 KB of gzip more than this module. What serde_json checked here is checked the
//! same way: the unit tests and the `json` fuzz target hold this reader to serde_json's (a
//! native dev-dependency) on generated, broken and arbitrary texts.
//!
//! Also the home of the two rules of [`super`]: the depth bound is kept as the text is read
//! (an error naming the limit, never a deep recursion), and an escape of a lone surrogate
//! becomes its two-character form.

use std::borrow::Cow;

use super::{Map, Number, Value};

use super::{push_lone, push_str, Error};

/// The bytes below 64 that end a run of plain characters in a string (control characters
/// and `"`), as bits of their values; the other one is `\\`.
const STOPS_STRING: u64 = 0xFFFF_FFFF | 1 << b'"';

/// A number's parts, as [`Reader::scan_number`] read them.
struct Scanned {
    /// Where its text starts (its sign).
    start: usize,
    negative: bool,
    /// Its significant digits, all of them when `exact`.
    significand: u64,
    exact: bool,
    /// No fraction and no exponent.
    integral: bool,
    /// The power of ten that scales `significand`.
    power: i32,
}

/// A reader positioned in `text`.
pub struct Reader<'a> {
    text: &'a str,
    pos: usize,
    depth: usize,
    max_depth: usize,
}

impl<'a> Reader<'a> {
    /// A reader of `text` whose arrays and objects may nest `max_depth` levels.
    pub fn new(text: &'a str, max_depth: usize) -> Self {
        Reader {
            text,
            pos: 0,
            depth: 0,
            max_depth,
        }
    }

    /// The error `what` at the reader's position, with its line and column.
    #[inline(never)]
    fn fail(&self, what: &str) -> Error {
        let before = self.text.get(..self.pos).unwrap_or(self.text);
        let line = 1 + before.bytes().filter(|b| *b == b'\n').count();
        let column = before.len() - before.rfind('\n').map_or(0, |n| n + 1) + 1;
        Error::Syntax(format!("{what} at line {line} column {column}"))
    }

    #[inline(always)]
    fn byte(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    /// The next byte that is not whitespace (not consumed).
    #[inline(always)]
    pub fn peek(&mut self) -> Option<u8> {
        match self.byte() {
            Some(b' ' | b'\n' | b'\r' | b'\t') => self.past_whitespace(),
            b => b,
        }
    }

    fn past_whitespace(&mut self) -> Option<u8> {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.byte() {
            self.pos += 1;
        }
        self.byte()
    }

    /// Whitespace only up to the end of the text.
    pub fn end(&mut self) -> Result<(), Error> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.fail("trailing characters")),
        }
    }

    /// The whole text as one value.
    pub fn whole(mut self) -> Result<Value, Error> {
        let v = self.value()?;
        self.end()?;
        Ok(v)
    }

    /// `literal` (`null`, `true`, `false`) at the reader's position.
    fn literal(&mut self, literal: &str) -> Result<(), Error> {
        let end = self.pos + literal.len();
        if self.text.get(self.pos..end) == Some(literal) {
            self.pos = end;
            return Ok(());
        }
        Err(self.fail(if end > self.text.len() {
            "EOF while parsing a value"
        } else {
            "expected ident"
        }))
    }

    /// `null` when it is next (consumed); `false` for anything else.
    pub fn null(&mut self) -> Result<bool, Error> {
        if self.peek() != Some(b'n') {
            return Ok(false);
        }
        self.literal("null")?;
        Ok(true)
    }

    /// The next value. Read without recursion: the arrays and objects still open are a list
    /// here, so the depth costs no stack.
    pub fn value(&mut self) -> Result<Value, Error> {
        self.read(true)
    }

    /// Past the next value, checked as [`value`](Self::value) checks it but keeping nothing of
    /// it: no string is copied, no number converted, no array or object built.
    pub fn skip(&mut self) -> Result<(), Error> {
        self.read(false).map(drop)
    }

    /// The next value when `keep`, else `null` for it. (One copy for both: not inlined.)
    #[inline(never)]
    fn read(&mut self, keep: bool) -> Result<Value, Error> {
        /// An array or object being read, with the key of the member being read.
        enum Open {
            List(Vec<Value>),
            Object(Map, String),
        }
        let mut open: Vec<Open> = Vec::new();
        loop {
            let mut v = match self.peek() {
                Some(b'n') => {
                    self.literal("null")?;
                    Value::Null
                }
                Some(b't') => {
                    self.literal("true")?;
                    Value::Bool(true)
                }
                Some(b'f') => {
                    self.literal("false")?;
                    Value::Bool(false)
                }
                Some(b'"') => {
                    let s = self.string()?;
                    if keep {
                        Value::String(s.into_owned())
                    } else {
                        Value::Null
                    }
                }
                Some(b'-' | b'0'..=b'9') => {
                    let n = self.scan_number()?;
                    // Skipped, a number is converted only where it may be out of range: below
                    // 10^20 × 10^288 it is not.
                    if keep || n.power > 288 {
                        Value::Number(self.number_of(n)?)
                    } else {
                        Value::Null
                    }
                }
                Some(b'[') => {
                    self.open(b'[')?;
                    if self.more(b']', &mut true)? {
                        open.push(Open::List(Vec::new()));
                        continue;
                    }
                    Value::Array(Vec::new())
                }
                Some(b'{') => {
                    self.open(b'{')?;
                    if self.more(b'}', &mut true)? {
                        let key = self.owned_key(keep)?;
                        open.push(Open::Object(Map::new(), key));
                        continue;
                    }
                    Value::Object(Map::new())
                }
                Some(_) => return Err(self.fail("expected value")),
                None => return Err(self.fail("EOF while parsing a value")),
            };
            // `v` is read: it goes into the innermost open value, which may end with it.
            loop {
                match open.pop() {
                    None => return Ok(v),
                    Some(Open::List(mut items)) => {
                        if keep {
                            items.push(v);
                        }
                        if self.more(b']', &mut false)? {
                            open.push(Open::List(items));
                            break;
                        }
                        v = Value::Array(items);
                    }
                    Some(Open::Object(mut map, key)) => {
                        // A key given twice: the last value, in the first one's place (as
                        // JSON.parse has it).
                        if keep {
                            map.insert(key, v);
                        }
                        if self.more(b'}', &mut false)? {
                            let key = self.owned_key(keep)?;
                            open.push(Open::Object(map, key));
                            break;
                        }
                        v = Value::Object(map);
                    }
                }
            }
        }
    }

    /// Consumes `bracket` (`[` or `{`), one level deeper; `false` when something else is next.
    pub fn open(&mut self, bracket: u8) -> Result<bool, Error> {
        if self.peek() != Some(bracket) {
            return Ok(false);
        }
        self.depth += 1;
        if self.depth > self.max_depth {
            return Err(Error::TooDeep);
        }
        self.pos += 1;
        Ok(true)
    }

    /// After [`open`](Self::open): whether another item or member follows (its comma read),
    /// or the `close` bracket ends the array or object (consumed). `first` is the loop's own.
    pub fn more(&mut self, close: u8, first: &mut bool) -> Result<bool, Error> {
        let at_first = std::mem::replace(first, false);
        match self.peek() {
            Some(b',') if !at_first => {
                self.pos += 1;
                if self.peek() == Some(close) {
                    return Err(self.fail("trailing comma"));
                }
                return Ok(true);
            }
            Some(c) if c == close => {}
            Some(_) if at_first => return Ok(true),
            Some(_) => {
                return Err(self.fail(if close == b']' {
                    "expected `,` or `]`"
                } else {
                    "expected `,` or `}`"
                }))
            }
            None => {
                return Err(self.fail(if close == b']' {
                    "EOF while parsing a list"
                } else {
                    "EOF while parsing an object"
                }))
            }
        }
        self.pos += 1;
        self.depth = self.depth.saturating_sub(1);
        Ok(false)
    }

    /// A member's key and the colon after it.
    pub fn key(&mut self) -> Result<Cow<'a, str>, Error> {
        match self.peek() {
            Some(b'"') => {}
            None => return Err(self.fail("EOF while parsing an object")),
            Some(_) => return Err(self.fail("key must be a string")),
        }
        let key = self.string()?;
        match self.peek() {
            Some(b':') => {
                self.pos += 1;
                Ok(key)
            }
            None => Err(self.fail("EOF while parsing an object")),
            Some(_) => Err(self.fail("expected `:`")),
        }
    }

    /// [`key`](Self::key), owned when `keep` (else empty).
    fn owned_key(&mut self, keep: bool) -> Result<String, Error> {
        let key = self.key()?;
        Ok(if keep {
            key.into_owned()
        } else {
            String::new()
        })
    }

    /// The string that starts at the reader's position (its `"`): borrowed from the text
    /// when it has no escape.
    pub fn string(&mut self) -> Result<Cow<'a, str>, Error> {
        if self.peek() != Some(b'"') {
            return Err(self.fail("expected `\"`"));
        }
        self.pos += 1;
        let mut owned: Option<String> = None;
        let mut from = self.pos;
        loop {
            // On to the next quote, backslash or control character.
            let rest = self.text.as_bytes().get(self.pos..).unwrap_or_default();
            self.pos += rest
                .iter()
                .position(|&c| (c < 64 && STOPS_STRING >> c & 1 != 0) || c == b'\\')
                .unwrap_or(rest.len());
            let Some(c) = self.byte() else {
                return Err(self.fail("EOF while parsing a string"));
            };
            if c < 0x20 {
                return Err(
                    self.fail("control character (\\u0000-\\u001F) found while parsing a string")
                );
            }
            // Both are ASCII, so `from..pos` lies on character boundaries.
            let run = self.text.get(from..self.pos).unwrap_or("");
            self.pos += 1;
            if c == b'"' {
                return Ok(match owned {
                    None => Cow::Borrowed(run),
                    Some(mut s) => {
                        push_str(&mut s, run);
                        Cow::Owned(s)
                    }
                });
            }
            let s = owned.get_or_insert_with(String::new);
            push_str(s, run);
            self.escape(s)?;
            from = self.pos;
        }
    }

    /// The escape after a backslash, appended to `s`.
    fn escape(&mut self, s: &mut String) -> Result<(), Error> {
        let Some(c) = self.byte() else {
            return Err(self.fail("EOF while parsing a string"));
        };
        self.pos += 1;
        let plain = match c {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => return self.unicode_escape(s),
            _ => return Err(self.fail("invalid escape")),
        };
        s.push(plain);
        Ok(())
    }

    /// The four hex digits of a `\u` escape.
    fn hex4(&mut self) -> Result<u16, Error> {
        let digits = self.text.get(self.pos..self.pos + 4);
        match digits.filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit())) {
            Some(d) => {
                self.pos += 4;
                u16::from_str_radix(d, 16).map_err(|_| self.fail("invalid escape"))
            }
            None if self.pos + 4 > self.text.len() => Err(self.fail("EOF while parsing a string")),
            None => Err(self.fail("invalid escape")),
        }
    }

    /// `\uXXXX`: a character, a pair of surrogate escapes as one, a lone half in its
    /// two-character form (joined to a half already at the end of `s`, as JS joins them).
    fn unicode_escape(&mut self, s: &mut String) -> Result<(), Error> {
        let unit = self.hex4()?;
        if let 0xD800..=0xDBFF = unit {
            let next = self.pos;
            if self.text.get(next..next + 2) == Some("\\u") {
                self.pos += 2;
                let low = self.hex4()?;
                if let 0xDC00..=0xDFFF = low {
                    let code =
                        0x10000 + ((u32::from(unit) & 0x3FF) << 10) + (u32::from(low) & 0x3FF);
                    s.push(char::from_u32(code).unwrap_or('\u{FFFD}'));
                    return Ok(());
                }
                self.pos = next;
            }
        }
        match char::from_u32(u32::from(unit)) {
            Some(c) => s.push(c),
            None => {
                let mut lone = String::new();
                push_lone(&mut lone, unit);
                push_str(s, &lone);
            }
        }
        Ok(())
    }

    /// The number at the reader's position: the nearest double, as JSON.parse reads it (`-0`
    /// too); beyond a double's range an error.
    pub fn number(&mut self) -> Result<Number, Error> {
        let n = self.scan_number()?;
        self.number_of(n)
    }

    /// Past the number at the reader's position, its grammar checked; its parts.
    fn scan_number(&mut self) -> Result<Scanned, Error> {
        self.peek();
        let start = self.pos;
        let negative = self.byte() == Some(b'-');
        if negative {
            self.pos += 1;
        }
        // The significant digits as an integer while it holds them all (`exact`), and the
        // power of ten that scales it.
        let mut significand = 0u64;
        let mut exact = true;
        let mut scale = 0i32;
        let mut digits = |r: &mut Self, after_point: bool| -> usize {
            let mut n = 0;
            while let Some(d @ b'0'..=b'9') = r.byte() {
                r.pos += 1;
                n += 1;
                let more = significand
                    .checked_mul(10)
                    .and_then(|s| s.checked_add(u64::from(d - b'0')));
                match more {
                    Some(s) if exact => {
                        significand = s;
                        scale = scale.saturating_sub(i32::from(after_point));
                    }
                    _ => {
                        exact = false;
                        scale = scale.saturating_add(i32::from(!after_point));
                    }
                }
            }
            n
        };
        let leading_zero = self.byte() == Some(b'0');
        let int_digits = digits(self, false);
        if int_digits == 0 {
            return Err(self.fail(if self.byte().is_none() {
                "EOF while parsing a value"
            } else {
                "invalid number"
            }));
        }
        if leading_zero && int_digits > 1 {
            self.pos = start + usize::from(negative) + 1;
            return Err(self.fail("invalid number"));
        }
        let mut integral = true;
        if self.byte() == Some(b'.') {
            self.pos += 1;
            integral = false;
            if digits(self, true) == 0 {
                return Err(self.fail("invalid number"));
            }
        }
        let mut exponent = 0i32;
        if let Some(b'e' | b'E') = self.byte() {
            self.pos += 1;
            integral = false;
            let minus = match self.byte() {
                Some(b'-') => {
                    self.pos += 1;
                    true
                }
                Some(b'+') => {
                    self.pos += 1;
                    false
                }
                _ => false,
            };
            let mut n = 0;
            while let Some(d @ b'0'..=b'9') = self.byte() {
                exponent = exponent
                    .saturating_mul(10)
                    .saturating_add(i32::from(d - b'0'));
                self.pos += 1;
                n += 1;
            }
            if n == 0 {
                return Err(self.fail("invalid number"));
            }
            if minus {
                exponent = -exponent;
            }
        }
        Ok(Scanned {
            start,
            negative,
            significand,
            exact,
            integral,
            power: scale.saturating_add(exponent),
        })
    }

    /// The value of a number [`scan_number`](Self::scan_number) read.
    fn number_of(&mut self, n: Scanned) -> Result<Number, Error> {
        let Scanned {
            start,
            negative,
            significand,
            exact,
            integral,
            power,
        } = n;
        // An integer literal: its digits, rounded once (`-0` stays `-0`). Else exact without
        // rounding twice: both factors are exact doubles (Clinger's fast path).
        let f = if integral && exact {
            let f = significand as f64;
            if negative {
                -f
            } else {
                f
            }
        } else if exact && significand < 1 << 53 && (-22..=22).contains(&power) {
            let mut p = 1.0f64;
            for _ in 0..power.unsigned_abs() {
                p *= 10.0;
            }
            let m = significand as f64;
            let f = if power < 0 { m / p } else { m * p };
            if negative {
                -f
            } else {
                f
            }
        } else {
            crate::jsnum::parse_float(self.text.get(start..self.pos).unwrap_or(""))
        };
        Number::from_f64(f).ok_or_else(|| {
            self.pos = start;
            self.fail("number out of range")
        })
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    /// A small generator (xorshift), so that every run draws the same texts.
    struct Gen(u64);

    impl Gen {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            let i = self.below(items.len());
            items.get(i).copied().unwrap_or("")
        }
    }

    const NUMBERS: &[&str] = &[
        "0",
        "-0",
        "1",
        "-1",
        "10",
        "0.5",
        "-0.0",
        "1e2",
        "1E-2",
        "1e+2",
        "2.5e-3",
        "18446744073709551615",
        "18446744073709551616",
        "-9223372036854775808",
        "-9223372036854775809",
        "9007199254740993",
        "0.1",
        "0.30000000000000004",
        "1.7976931348623157e308",
        "5e-324",
        "2.4703282292062328e-324",
        "1e-400",
        "1e400",
        "123456789012345678901234567890",
        "0.000000000000000000000000000001",
        "3.14159",
        "1234567890123456.7",
        "100000000000000000000000",
        "4.9e-324",
        "22e22",
        "1e23",
        "00",
        "01",
        "-",
        "1.",
        ".5",
        "1e",
        "1e+",
        "+1",
        "0x10",
        "1.5e",
        "--1",
        "-01",
    ];
    const STRINGS: &[&str] = &[
        "",
        "a",
        "h\u{e9}llo",
        "\u{1F600}",
        "\\n\\t\\r\\b\\f",
        "\\\"\\\\\\/",
        "\\u0041",
        "\\u00e9",
        "\\ud83d\\ude00",
        "\\uD83D\\uDE00",
        "\\u0000",
        "\\u001f",
        "\\uFFFF",
        "\\u12",
        "\\x",
        "\\",
        "\u{7}",
        "tab\there",
        "\\ud83d",
        "\\ude00",
        "\\ud83dx",
        "\\ud83d\\u0041",
        "a\\ud83d\\ud83d\\ude00",
    ];

    fn value_text(g: &mut Gen, depth: usize, out: &mut String) {
        let ws = |g: &mut Gen, out: &mut String| {
            if g.below(4) == 0 {
                out.push_str(g.pick(&[" ", "\n", "\t", "\r\n  ", ""]));
            }
        };
        ws(g, out);
        match g.below(if depth > 6 { 5 } else { 7 }) {
            0 => out.push_str(g.pick(&["null", "true", "false", "nul", "tru", "True"])),
            1 | 2 => out.push_str(g.pick(NUMBERS)),
            3 | 4 => {
                out.push('"');
                for _ in 0..g.below(3) {
                    out.push_str(g.pick(STRINGS));
                }
                out.push('"');
            }
            5 => {
                out.push('[');
                for i in 0..g.below(4) {
                    if i > 0 {
                        out.push(',');
                    }
                    value_text(g, depth + 1, out);
                }
                out.push(']');
            }
            _ => {
                out.push('{');
                for i in 0..g.below(4) {
                    if i > 0 {
                        out.push(',');
                    }
                    ws(g, out);
                    out.push_str(g.pick(&["\"a\"", "\"b\"", "\"a\"", "\"\\u0061\"", "\"\""]));
                    ws(g, out);
                    out.push(':');
                    value_text(g, depth + 1, out);
                }
                out.push('}');
            }
        }
        ws(g, out);
    }

    /// A text broken the ways streams break: cut short, a byte changed, one added.
    fn garble(g: &mut Gen, text: &str) -> String {
        let mut b: Vec<u8> = text.bytes().collect();
        match g.below(4) {
            0 => b.truncate(g.below(b.len() + 1)),
            1 if !b.is_empty() => {
                let at = g.below(b.len());
                let c = g.pick(&[
                    ",", "]", "}", ":", "\"", "\\", "0", "e", ".", "-", " ", "x", "{", "[",
                ]);
                if let (Some(slot), Some(&c)) = (b.get_mut(at), c.as_bytes().first()) {
                    *slot = c;
                }
            }
            2 => {
                let at = g.below(b.len() + 1);
                let c = g.pick(&[",", "]", "}", ":", "\"", "\\", "1", "[", "{"]);
                if let Some(&c) = c.as_bytes().first() {
                    b.insert(at, c);
                }
            }
            _ => {}
        }
        String::from_utf8(b).unwrap_or_default()
    }

    /// The reader against serde_json's (the oracle, with its exact float reader): the same
    /// values, numbers to the bit, for every text serde_json reads; an error for every text it
    /// refuses, except the lone surrogates that JSON.parse reads and serde_json does not.
    #[test]
    fn reads_as_serde_json_reads() -> Result<(), String> {
        let mut g = Gen(0x9e37_79b9_7f4a_7c15);
        let (mut read, mut refused) = (0, 0);
        for round in 0..40_000 {
            let mut text = String::new();
            value_text(&mut g, 0, &mut text);
            if round % 2 == 1 {
                text = garble(&mut g, &text);
            }
            let ours = Reader::new(&text, 64).whole();
            // Skipping checks the text as reading does.
            let mut skipping = Reader::new(&text, 64);
            let skipped = skipping.skip().and_then(|()| skipping.end());
            if skipped.is_ok() != ours.is_ok() {
                return Err(format!("{text:?}: skipped {skipped:?}, read {ours:?}"));
            }
            let mut de = serde_json::Deserializer::from_str(&text);
            let oracle =
                serde::Deserialize::deserialize(&mut de).and_then(|v: Value| de.end().map(|()| v));
            match (ours, oracle) {
                (Ok(a), Ok(b)) => {
                    // Debug tells -0.0 from 0.0 and a float from an integer.
                    if format!("{a:?}") != format!("{b:?}") {
                        return Err(format!("{text:?}: {a:?} vs {b:?}"));
                    }
                    read += 1;
                }
                (Err(_), Err(_)) => refused += 1,
                // serde_json refuses a lone surrogate escape, which JSON.parse reads.
                (Ok(_), Err(e))
                    if e.to_string().contains("surrogate")
                        || e.to_string().contains("hex escape") =>
                {
                    let lower = text.to_ascii_lowercase();
                    if ![
                        "\\ud8", "\\ud9", "\\uda", "\\udb", "\\udc", "\\udd", "\\ude", "\\udf",
                    ]
                    .iter()
                    .any(|p| lower.contains(p))
                    {
                        return Err(format!("{text:?}: read, but serde_json: {e}"));
                    }
                }
                (a, b) => return Err(format!("{text:?}: ours {a:?}, serde_json {b:?}")),
            }
        }
        assert!(
            read > 10_000 && refused > 10_000,
            "{read} read, {refused} refused"
        );
        Ok(())
    }

    #[test]
    fn errors_name_what_and_where() {
        let e = |t: &str| Reader::new(t, 8).whole().err().map(|e| e.to_string());
        assert_eq!(
            e("[1,]").as_deref(),
            Some("trailing comma at line 1 column 4")
        );
        assert_eq!(
            e("{\"a\" 1}").as_deref(),
            Some("expected `:` at line 1 column 6")
        );
        assert_eq!(
            e("[1,\n 2 x]").as_deref(),
            Some("expected `,` or `]` at line 2 column 4")
        );
        assert_eq!(
            e("\"abc").as_deref(),
            Some("EOF while parsing a string at line 1 column 5")
        );
        assert_eq!(
            e("1e400").as_deref(),
            Some("number out of range at line 1 column 1")
        );
        assert_eq!(
            e("[[[[[[[[[1]]]]]]]]]").as_deref(),
            Some(Error::TooDeep.to_string().as_str())
        );
        assert_eq!(e("[[[[[[[[1]]]]]]]]"), None);
    }
}
