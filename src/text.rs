//! Substring search for `&str` needles, so that core's two-way searcher (`str::contains`,
//! `replace`, `split_once` with a `&str` pattern) stays out of the `.wasm`: with its panic
//! path (a `Debug` of `char` and Unicode's printable tables) it was 5.0 KB of gzip (193.1 -> 188.1 KB).
//! The needles here are short (URL parts, markers, a key), so a first-byte scan then a
//! compare is as fast; the work is at most the text's length times the needle's.
//! (Char patterns are fine: core searches those with `memchr`.)

/// Where `needle` first starts in `hay` (`Some(0)` for an empty needle).
pub fn find(hay: &str, needle: &str) -> Option<usize> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    let Some(&first) = n.first() else {
        return Some(0);
    };
    // A match starts at a character boundary: a UTF-8 text's first byte is never a
    // continuation byte. The scan for the first byte is a tight loop (the hot case: the
    // lone-surrogate marker looked for in every streamed delta, json::has_lone).
    let mut from = 0;
    while let Some(i) = h.get(from..)?.iter().position(|&b| b == first) {
        let at = from + i;
        // A candidate too close to the end for the needle: no later one fits either.
        if h.get(at..at + n.len())? == n {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// Whether `needle` occurs in `hay`.
pub fn contains(hay: &str, needle: &str) -> bool {
    find(hay, needle).is_some()
}

/// `hay` split around the first `needle`.
pub fn split_once<'a>(hay: &'a str, needle: &str) -> Option<(&'a str, &'a str)> {
    let i = find(hay, needle)?;
    Some((hay.get(..i)?, hay.get(i + needle.len()..)?))
}

/// `hay` with every `from` (left to right, not overlapping) replaced by `to`; an empty
/// `from` replaces nothing.
pub fn replace(hay: &str, from: &str, to: &str) -> String {
    if from.is_empty() {
        return hay.to_string();
    }
    let mut out = String::with_capacity(hay.len());
    let mut rest = hay;
    while let Some((before, after)) = split_once(rest, from) {
        out.push_str(before);
        out.push_str(to);
        rest = after;
    }
    out.push_str(rest);
    out
}

/// What follows each occurrence of `needle` in `hay`, in order.
pub fn each_after<'a>(hay: &'a str, needle: &str) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut rest = hay;
    while let Some((_, after)) = split_once(rest, needle) {
        out.push(after);
        if needle.is_empty() {
            break;
        }
        rest = after;
    }
    out
}

/// `join` for a list of texts: std's `[S]::join` is a copy loop generic per element type
/// that costs about 1 KB of `.wasm` each; this one is a few pushes.
pub trait Joined {
    /// The texts with `sep` between them.
    fn joined(&self, sep: &str) -> String;
}

impl<S: AsRef<str>> Joined for [S] {
    fn joined(&self, sep: &str) -> String {
        let mut out = String::new();
        for (i, part) in self.iter().enumerate() {
            if i > 0 {
                out.push_str(sep);
            }
            out.push_str(part.as_ref());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_core() {
        let hays = [
            "",
            "a",
            "abc",
            "abcabc",
            "aaa",
            "héllo wörld",
            "x://y",
            "~1~0~1",
            "ab",
            "xxaxab",
            "a\u{FDD0}b\u{FDD0}",
            "\u{FDD1}\u{FDD0}",
        ];
        let needles = [
            "",
            "a",
            "b",
            "bc",
            "abc",
            "aa",
            "ö",
            "://",
            "~1",
            "abcd",
            "é",
            "ab",
            "xab",
            "\u{FDD0}",
            "b\u{FDD0}",
        ];
        for h in hays {
            for n in needles {
                assert_eq!(find(h, n), h.find(n), "{h} {n}");
                assert_eq!(split_once(h, n), h.split_once(n), "{h} {n}");
                if !n.is_empty() {
                    assert_eq!(replace(h, n, "<>"), h.replace(n, "<>"), "{h} {n}");
                    let core: Vec<&str> = h
                        .match_indices(n)
                        .filter_map(|(i, _)| h.get(i + n.len()..))
                        .collect();
                    assert_eq!(each_after(h, n), core, "{h} {n}");
                }
            }
        }
    }

    #[test]
    fn joined_puts_the_separator_between_texts_only() {
        use super::Joined;
        assert_eq!(["a", "b", "c"].joined(", "), "a, b, c");
        assert_eq!(["x".to_string()].joined("-"), "x");
        assert_eq!(Vec::<String>::new().joined("-"), "");
        assert_eq!(["", ""].joined("|"), "|");
    }
}
