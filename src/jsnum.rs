//! JS number semantics the core must reproduce without a JS engine: `String(n)` (ECMAScript
//! Number::toString) and `Number(s)` (StringToNumber). Validation messages and argument
//! coercion print and parse numbers exactly as pi does in JS.
//!
//! In the `.wasm` the JS engine does both (`String`, `Number`, `parseFloat`, installed as
//! an [`Engine`] by src/wasm): its semantics are the ones wanted, and Rust's float printer and parser (with their tables, 20 KB) stay
//! out of the module. The native build (the tests) has Rust implementations of the same
//! rules: the shortest round-trip digits from Rust's float printer, laid out by the
//! ECMAScript rules, and the StringToNumber grammar over `str::parse`.

/// The host's number conversions. In the `.wasm` they are the JS engine's, which src/wasm
/// installs when the module starts (the core names no JS API itself). `None` when the engine
/// failed (a global replaced by one that throws): the result is then NaN, or for `String`
/// the digits of an integral value, which every engine prints alike.
#[derive(Clone, Copy)]
pub struct Engine {
    /// `String(n)`.
    pub string: fn(f64) -> Option<String>,
    /// `Number(s)`.
    pub number: fn(&str) -> Option<f64>,
    /// `parseFloat(s)`.
    pub parse_float: fn(&str) -> Option<f64>,
}

#[cfg(target_arch = "wasm32")]
thread_local! {
    static ENGINE: std::cell::Cell<Option<Engine>> = const { std::cell::Cell::new(None) };
}

/// Makes `engine` the one this module uses (src/wasm does, at the module's start).
#[cfg(target_arch = "wasm32")]
pub fn install(engine: Engine) {
    ENGINE.with(|e| e.set(Some(engine)));
}

#[cfg(target_arch = "wasm32")]
fn engine() -> Option<Engine> {
    ENGINE.with(std::cell::Cell::get)
}

/// `String(n)` for an `f64`.
pub fn to_js_string(n: f64) -> String {
    // A whole number below 2^53 prints as its digits in every engine (`-0` as `0`): no call
    // into JS for the counts and indices that most numbers are.
    if n.fract() == 0.0 && n.abs() <= 9_007_199_254_740_991.0 {
        return (n as i64).to_string();
    }
    #[cfg(target_arch = "wasm32")]
    return match engine().and_then(|e| (e.string)(n)) {
        Some(s) => s,
        None => String::from("NaN"),
    };
    #[cfg(not(target_arch = "wasm32"))]
    return rust_to_js_string(n);
}

/// `Number(s)` (ECMAScript StringToNumber): whitespace trimmed, `""` is 0, `0x`/`0o`/`0b`
/// literals, `Infinity`, decimal literals; anything else is NaN.
pub fn from_js_string(s: &str) -> f64 {
    #[cfg(target_arch = "wasm32")]
    return engine().and_then(|e| (e.number)(s)).unwrap_or(f64::NAN);
    #[cfg(not(target_arch = "wasm32"))]
    return rust_from_js_string(s);
}

/// `parseFloat(s)`: leading JS whitespace skipped, then the longest prefix that is a decimal
/// literal (or `Infinity`), with an optional sign; `NaN` when there is none.
pub fn parse_float(s: &str) -> f64 {
    #[cfg(target_arch = "wasm32")]
    return engine()
        .and_then(|e| (e.parse_float)(s))
        .unwrap_or(f64::NAN);
    #[cfg(not(target_arch = "wasm32"))]
    return rust_parse_float(s);
}

#[cfg(not(target_arch = "wasm32"))]
fn rust_to_js_string(n: f64) -> String {
    if n.is_nan() {
        return "NaN".into();
    }
    if n == 0.0 {
        return "0".into(); // also -0
    }
    if n.is_infinite() {
        return if n > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    let (digits, exp) = shortest_digits(n.abs());
    let sign = if n < 0.0 { "-" } else { "" };
    // n = 0.digits × 10^exp, i.e. the decimal point sits after `exp` digits (ECMAScript's n).
    let k = digits.len() as i64;
    let e = exp;
    let body = if k <= e && e <= 21 {
        let mut s = digits.clone();
        s.extend(std::iter::repeat_n('0', (e - k) as usize));
        s
    } else if 0 < e && e <= 21 {
        let (a, b) = digits.split_at(e as usize);
        format!("{a}.{b}")
    } else if -6 < e && e <= 0 {
        format!("0.{}{}", "0".repeat((-e) as usize), digits)
    } else {
        let exp_sign = if e - 1 < 0 { '-' } else { '+' };
        let mut chars = digits.chars();
        let first = chars.next().unwrap_or('0');
        let rest: String = chars.collect();
        if rest.is_empty() {
            format!("{first}e{exp_sign}{}", (e - 1).abs())
        } else {
            format!("{first}.{rest}e{exp_sign}{}", (e - 1).abs())
        }
    };
    format!("{sign}{body}")
}

/// The shortest decimal digits of a positive finite `x` and the position of the decimal
/// point: `x = 0.d1d2… × 10^exp`.
#[cfg(not(target_arch = "wasm32"))]
fn shortest_digits(x: f64) -> (String, i64) {
    // Rust's `{:e}` prints the shortest digits that read back as `x`.
    let printed = format!("{x:e}");
    let (mantissa, exp_part) = match crate::text::split_once(&printed, "e") {
        Some((m, e)) => (m, e.parse::<i64>().unwrap_or(0)),
        None => (printed.as_str(), 0),
    };
    let (int_part, frac_part) = crate::text::split_once(mantissa, ".").unwrap_or((mantissa, ""));
    let mut digits: String = int_part.chars().chain(frac_part.chars()).collect();
    let mut point = int_part.len() as i64 + exp_part;
    // Strip leading zeros (0.00123) and trailing zeros (1.0, 100).
    while digits.starts_with('0') && digits.len() > 1 {
        digits.remove(0);
        point -= 1;
    }
    while digits.ends_with('0') && digits.len() > 1 {
        digits.pop();
    }
    (digits, point)
}

fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{9}' | '\u{A}' | '\u{B}' | '\u{C}' | '\u{D}' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// `s.trim() === ""` in JS: empty or only JS whitespace and line terminators (Rust's
/// `trim` differs: it strips U+0085 and keeps U+FEFF).
pub fn is_js_blank(s: &str) -> bool {
    s.chars().all(is_js_whitespace)
}

#[cfg(not(target_arch = "wasm32"))]
fn rust_from_js_string(s: &str) -> f64 {
    let t = s.trim_matches(is_js_whitespace);
    if t.is_empty() {
        return 0.0;
    }
    for (prefix, radix) in [
        ("0x", 16),
        ("0X", 16),
        ("0o", 8),
        ("0O", 8),
        ("0b", 2),
        ("0B", 2),
    ] {
        if let Some(rest) = t.strip_prefix(prefix) {
            if rest.is_empty() || !rest.chars().all(|c| c.is_digit(radix)) {
                return f64::NAN;
            }
            return rest.chars().fold(0.0, |acc, c| {
                acc * f64::from(radix) + f64::from(c.to_digit(radix).unwrap_or(0))
            });
        }
    }
    let (sign, unsigned) = match t.as_bytes().first() {
        Some(b'-') => (-1.0, t.get(1..).unwrap_or("")),
        Some(b'+') => (1.0, t.get(1..).unwrap_or("")),
        _ => (1.0, t),
    };
    if unsigned == "Infinity" {
        return sign * f64::INFINITY;
    }
    if !is_decimal_literal(unsigned) {
        return f64::NAN;
    }
    unsigned
        .parse::<f64>()
        .map(|v| sign * v)
        .unwrap_or(f64::NAN)
}

#[cfg(not(target_arch = "wasm32"))]
fn rust_parse_float(s: &str) -> f64 {
    let t = s.trim_start_matches(is_js_whitespace);
    let (sign, rest) = match t.as_bytes().first() {
        Some(b'-') => (-1.0, t.get(1..).unwrap_or("")),
        Some(b'+') => (1.0, t.get(1..).unwrap_or("")),
        _ => (1.0, t),
    };
    if rest.starts_with("Infinity") {
        return sign * f64::INFINITY;
    }
    // The longest prefix of digits [. digits] [e±digits] with at least one digit before
    // any exponent.
    let b = rest.as_bytes();
    let digits = |mut i: usize| {
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        i
    };
    let int_end = digits(0);
    let mut end = int_end;
    if b.get(end) == Some(&b'.') {
        let frac_end = digits(end + 1);
        if frac_end > end + 1 || int_end > 0 {
            end = frac_end;
        }
    }
    if end == 0 || (end == 1 && b.first() == Some(&b'.')) {
        return f64::NAN;
    }
    if matches!(b.get(end), Some(b'e' | b'E')) {
        let sign_len = usize::from(matches!(b.get(end + 1), Some(b'+' | b'-')));
        let exp_end = digits(end + 1 + sign_len);
        if exp_end > end + 1 + sign_len {
            end = exp_end;
        }
    }
    rest.get(..end)
        .and_then(|n| n.parse::<f64>().ok())
        .map_or(f64::NAN, |v| sign * v)
}

#[cfg(not(target_arch = "wasm32"))]
/// StrUnsignedDecimalLiteral: digits [. digits] [e±digits] | . digits [e±digits].
fn is_decimal_literal(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    let int_digits = digits(&mut i);
    let mut frac_digits = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        frac_digits = digits(&mut i);
    }
    if int_digits + frac_digits == 0 {
        return false;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_float_matches_javascript() {
        // Expected values printed by Node's parseFloat.
        let cases: &[(&str, &str)] = &[
            ("2", "2"),
            (" 2.5s", "2.5"),
            ("1e3", "1000"),
            ("1e", "1"),
            ("-.5", "-0.5"),
            (".", "NaN"),
            (".e1", "NaN"),
            ("5.", "5"),
            ("+Infinityx", "Infinity"),
            ("abc", "NaN"),
            ("", "NaN"),
            ("  \t7", "7"),
            ("1.2.3", "1.2"),
            ("0x10", "0"),
            ("1e+2x", "100"),
            ("-0", "0"),
            ("Wed, 21 Oct 2015 07:28:00 GMT", "NaN"),
            ("3.e2", "300"),
        ];
        for (input, want) in cases {
            assert_eq!(
                to_js_string(parse_float(input)),
                *want,
                "parseFloat({input:?})"
            );
        }
    }

    #[test]
    fn to_string_matches_ecmascript() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0"),
            (-0.0, "0"),
            (1.0, "1"),
            (-42.0, "-42"),
            (0.1, "0.1"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1.5e-7, "1.5e-7"),
            (1e-7, "1e-7"),
            (0.000001, "0.000001"),
            (123456789012345680000.0, "123456789012345680000"),
            (1e21, "1e+21"),
            (1.25e22, "1.25e+22"),
            (3.7, "3.7"),
            (100.0, "100"),
            (9007199254740993.0, "9007199254740992"),
            (f64::MAX, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
        ];
        for (n, want) in cases {
            assert_eq!(to_js_string(*n), *want, "{n:e}");
        }
    }

    #[test]
    fn blank_is_js_trim_empty() {
        for blank in ["", " ", "\t\n\r", "\u{FEFF}", "\u{3000}\u{2028}"] {
            assert!(is_js_blank(blank), "{blank:?}");
        }
        for text in ["k", " k ", "\u{85}", "\u{200B}"] {
            assert!(!is_js_blank(text), "{text:?}");
        }
    }

    #[test]
    fn from_string_matches_ecmascript() {
        assert_eq!(from_js_string(""), 0.0);
        assert_eq!(from_js_string("  42 \n"), 42.0);
        assert_eq!(from_js_string("3.7"), 3.7);
        assert_eq!(from_js_string(".5"), 0.5);
        assert_eq!(from_js_string("5."), 5.0);
        assert_eq!(from_js_string("-1e3"), -1000.0);
        assert_eq!(from_js_string("0x1F"), 31.0);
        assert_eq!(from_js_string("0b101"), 5.0);
        assert_eq!(from_js_string("-Infinity"), f64::NEG_INFINITY);
        for bad in [
            "abc", "1_000", "inf", "NaN", "0x", "-0x1", "1e", "e5", ".", "12px", "true",
        ] {
            assert!(from_js_string(bad).is_nan(), "{bad}");
        }
    }
}
