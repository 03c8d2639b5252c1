//! `format` checks, as pi-schema asserts them (its `formats` option, TypeBox's checks).
//! Written by hand, without a regex engine: `date`, `time`, `date-time`, `duration`,
//! `email`, `ipv4`, `ipv6`, `uuid`, `uri`, `json-pointer` and `regex` (through the host's
//! engine). Other formats (`hostname`, `idn-*`, `iri*`, `uri-reference`, `uri-template`,
//! `url`, `relative-json-pointer`) are not checked, as an unknown format is not; that is
//! documented in check.rs. Each check is compared with the reference on fixture cases.

use super::pattern::Patterns;

/// `Some(valid)` for a checked format, `None` for one this validator does not check.
pub fn check(format: &str, s: &str, patterns: &dyn Patterns) -> Option<bool> {
    Some(match format {
        "date" => is_date(s),
        "time" => is_time(s),
        "date-time" => is_date_time(s),
        "duration" => is_duration(s),
        "email" => is_email(s),
        "ipv4" => is_ipv4(s),
        "ipv6" => is_ipv6(s),
        "uuid" => is_uuid(s),
        "uri" => is_uri(s),
        "json-pointer" => is_json_pointer(s),
        "regex" => patterns.test(s, "").is_ok(),
        _ => return None,
    })
}

fn digits(s: &str, n: usize) -> Option<u32> {
    (s.len() == n && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

fn is_date(s: &str) -> bool {
    let mut parts = s.split('-');
    let (Some(y), Some(m), Some(d), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let (Some(y), Some(m), Some(d)) = (digits(y, 4), digits(m, 2), digits(d, 2)) else {
        return false;
    };
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// `HH:MM:SS[.frac](Z|±HH:MM)`; a leap second only at 23:59:60 UTC.
fn is_time(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 9 || b.get(2) != Some(&b':') || b.get(5) != Some(&b':') {
        return false;
    }
    let num = |from: usize| s.get(from..from + 2).and_then(|x| digits(x, 2));
    let (Some(h), Some(m), Some(sec)) = (num(0), num(3), num(6)) else {
        return false;
    };
    let mut rest = s.get(8..).unwrap_or("");
    if let Some(frac) = rest.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return false;
        }
        rest = frac.get(n..).unwrap_or("");
    }
    let (sign, tz_h, tz_m) = match rest {
        "Z" | "z" => (1i64, 0, 0),
        _ => {
            let sign = match rest.as_bytes().first() {
                Some(b'+') => 1,
                Some(b'-') => -1,
                _ => return false,
            };
            let (Some(th), Some(":"), Some(tm), 6) = (
                rest.get(1..3).and_then(|x| digits(x, 2)),
                rest.get(3..4),
                rest.get(4..6).and_then(|x| digits(x, 2)),
                rest.len(),
            ) else {
                return false;
            };
            if th > 23 || tm > 59 {
                return false;
            }
            (sign, th, tm)
        }
    };
    if h > 23 || m > 59 || sec > 60 {
        return false;
    }
    if sec < 60 {
        return true;
    }
    let utc = i64::from(h * 60 + m) - sign * i64::from(tz_h * 60 + tz_m);
    utc.rem_euclid(1440) == 1439
}

fn is_date_time(s: &str) -> bool {
    let mut parts = s.split(['T', 't']);
    matches!((parts.next(), parts.next(), parts.next()), (Some(d), Some(t), None) if is_date(d) && is_time(t))
}

/// ISO 8601 duration: `P[nY[nM[nD]]|nM[nD]|nD][T…]`, `PT…` or `PnW`.
fn is_duration(s: &str) -> bool {
    let Some(rest) = s.strip_prefix('P') else {
        return false;
    };
    // Units in order, each optional but contiguous from the first used one.
    fn units(s: &str, order: &[u8]) -> Option<usize> {
        let mut used = 0;
        let mut i = 0;
        let b = s.as_bytes();
        let mut next_unit = 0;
        while i < b.len() {
            let start = i;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i == start {
                break;
            }
            let unit = *b.get(i)?;
            let pos = order.iter().position(|u| *u == unit)?;
            // The next unit must directly follow the previous one (Y then M then D).
            if used > 0 && pos != next_unit {
                return None;
            }
            next_unit = pos + 1;
            used += 1;
            i += 1;
        }
        (i == s.len()).then_some(used)
    }
    if let Some(weeks) = rest.strip_suffix('W') {
        return !weeks.is_empty() && weeks.bytes().all(|b| b.is_ascii_digit());
    }
    let (date, time) = match crate::text::split_once(rest, "T") {
        Some((d, t)) => (d, Some(t)),
        None => (rest, None),
    };
    let Some(date_units) = units(date, b"YMD") else {
        return false;
    };
    match time {
        None => date_units > 0,
        Some(t) => matches!(units(t, b"HMS"), Some(n) if n > 0),
    }
}

fn is_atext(c: char) -> bool {
    c.is_ascii_alphanumeric() || c.is_ascii() && b"!#$%&'*+/=?^_`{|}~-".contains(&(c as u8))
}

fn is_label(l: &str) -> bool {
    let b = l.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
        && b.first().is_some_and(u8::is_ascii_alphanumeric)
        && b.last().is_some_and(u8::is_ascii_alphanumeric)
}

fn is_email(s: &str) -> bool {
    let Some(at) = s.rfind('@') else { return false };
    let (local, domain) = (s.get(..at).unwrap_or(""), s.get(at + 1..).unwrap_or(""));
    let local_ok = if let Some(q) = local.strip_prefix('"').and_then(|x| x.strip_suffix('"')) {
        let mut chars = q.chars();
        let mut ok = !local.is_empty();
        while let Some(c) = chars.next() {
            match c {
                '\\' => ok &= chars.next().is_some_and(|e| (' '..='~').contains(&e)),
                '"' => ok = false,
                _ => {}
            }
        }
        ok
    } else {
        !local.is_empty()
            && local
                .split('.')
                .all(|p| !p.is_empty() && p.chars().all(is_atext))
    };
    let domain_ok = if let Some(lit) = domain.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
        match lit.get(..5) {
            Some(p) if p.eq_ignore_ascii_case("IPv6:") => {
                let v = lit.get(5..).unwrap_or("");
                !v.is_empty() && v.chars().all(|c| c.is_ascii_hexdigit() || c == ':')
            }
            _ => is_ipv4(lit),
        }
    } else {
        domain.split('.').all(is_label)
    };
    local_ok && domain_ok
}

fn is_ipv4(s: &str) -> bool {
    let parts: Vec<&str> = s.split('.').collect();
    parts.len() == 4
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.len() <= 3
                && p.bytes().all(|b| b.is_ascii_digit())
                && (p.len() == 1 || !p.starts_with('0'))
                && p.parse::<u16>().is_ok_and(|n| n <= 255)
        })
}

fn is_ipv6(s: &str) -> bool {
    // An embedded IPv4 tail counts as two groups: check it, then read it as "0:0".
    let owned;
    let s = match s.rfind(':') {
        Some(i) if s.get(i + 1..).is_some_and(|t| t.bytes().any(|b| b == b'.')) => {
            if !is_ipv4(s.get(i + 1..).unwrap_or("")) {
                return false;
            }
            owned = format!("{}0:0", s.get(..=i).unwrap_or(""));
            owned.as_str()
        }
        _ => s,
    };
    let hex = |g: &str| (1..=4).contains(&g.len()) && g.bytes().all(|b| b.is_ascii_hexdigit());
    let groups = |part: &str| -> Option<usize> {
        if part.is_empty() {
            return Some(0);
        }
        let gs: Vec<&str> = part.split(':').collect();
        gs.iter().all(|g| hex(g)).then_some(gs.len())
    };
    match crate::text::split_once(s, "::") {
        Some((a, b)) => {
            !crate::text::contains(b, "::")
                && matches!((groups(a), groups(b)), (Some(x), Some(y)) if x + y <= 7)
        }
        None => groups(s) == Some(8),
    }
}

fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

fn is_json_pointer(s: &str) -> bool {
    if s.is_empty() {
        return true;
    }
    if !s.starts_with('/') {
        return false;
    }
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '~' && !matches!(chars.next(), Some('0' | '1')) {
            return false;
        }
    }
    true
}

/// RFC 3986 absolute URI: a scheme, `:`, then only URI characters with valid
/// percent-escapes. (Authority and path structure are not parsed further.)
fn is_uri(s: &str) -> bool {
    let Some((scheme, rest)) = crate::text::split_once(s, ":") else {
        return false;
    };
    let scheme_ok = scheme
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic())
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
    let b = rest.as_bytes();
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        if c == b'%' {
            if !(b.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
            {
                return false;
            }
            i += 3;
            continue;
        }
        if !(c.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/?#[]".contains(&c)) {
            return false;
        }
        i += 1;
    }
    scheme_ok && rest.matches('#').count() <= 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert!(
            is_date("2024-02-29")
                && !is_date("2023-02-29")
                && !is_date("2024-13-01")
                && !is_date("24-01-01")
        );
        assert!(
            is_time("23:59:60Z")
                && !is_time("12:00:60Z")
                && is_time("12:00:00.5+01:00")
                && !is_time("12:00:00")
        );
        assert!(
            is_date_time("2024-01-01T10:00:00Z")
                && is_date_time("2024-01-01t10:00:00z")
                && !is_date_time("2024-01-01 10:00:00Z")
        );
        assert!(
            is_duration("P1Y2M3DT4H5M6S")
                && is_duration("PT1M")
                && is_duration("P2W")
                && !is_duration("P")
                && !is_duration("PT")
                && !is_duration("P1D2M")
                && !is_duration("P1Y3D")
        );
        assert!(
            is_email("a.b+c@example.com")
                && is_email("\"x y\"@ex.org")
                && is_email("u@[1.2.3.4]")
                && !is_email("a..b@x.com")
                && !is_email("@x.com")
                && !is_email("a@-x.com")
        );
        assert!(
            is_ipv4("192.168.0.1")
                && !is_ipv4("256.1.1.1")
                && !is_ipv4("01.1.1.1")
                && !is_ipv4("1.2.3")
        );
        assert!(
            is_ipv6("::1")
                && is_ipv6("2001:db8::8a2e:370:7334")
                && is_ipv6("::ffff:192.0.2.1")
                && is_ipv6("1:2:3:4:5:6:7:8")
                && !is_ipv6("1:2:3:4:5:6:7:8:9")
                && !is_ipv6("1::2::3")
                && !is_ipv6("12345::")
        );
        assert!(
            is_uuid("123e4567-e89b-12d3-a456-426614174000")
                && !is_uuid("123e4567e89b12d3a456426614174000")
        );
        assert!(
            is_json_pointer("/a~0b/c~1d")
                && is_json_pointer("")
                && !is_json_pointer("a")
                && !is_json_pointer("/~2")
        );
        assert!(
            is_uri("https://example.com/a?b=c#d")
                && is_uri("urn:isbn:123")
                && !is_uri("/relative")
                && !is_uri("http://ex ample.com")
                && !is_uri("http://x/%zz")
        );
    }
}
