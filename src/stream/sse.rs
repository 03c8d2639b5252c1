//! Incremental Server-Sent Events decoder.
//!
//! Implements the event-stream interpretation of the WHATWG HTML standard
//! (<https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation>)
//! over arbitrary byte chunks: `feed` any split of the body, `finish` at end of stream.
//!
//! Responsibilities: line splitting on CR, LF and CRLF (a CR at the end of one chunk and an
//! LF at the start of the next are one line end), UTF-8 decoding per line (a multi-byte
//! character split across chunks is carried, because line ends are ASCII and never fall
//! inside one), the leading BOM, comments, `event`, `data` (multi-line), `id` and `retry`.
//! What a `data` payload means (`[DONE]`, JSON, keep-alives) is provider business, not
//! decided here. Depends on nothing but `std`.
//!
//! Cost: each input byte is scanned once; only the unterminated tail of a chunk is copied
//! into the carry buffer, so feeding N bytes in any split costs O(N). A `data` line that
//! arrived in pieces moves from the carry into the event without a copy.
//!
//! Memory: [`SseLimits`] bound the longest line and the data of one event, so a body that
//! never ends a line cannot grow memory without limit. Past a bound the decoder drops what
//! it holds, reads nothing more and reports [`SseOverflow`].

use std::borrow::Cow;

/// One dispatched event, as the standard's `MessageEvent` would carry it. (serde, for the
/// tests' fixtures, in the native build only.)
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(not(target_arch = "wasm32"), derive(serde::Serialize))]
#[cfg_attr(not(target_arch = "wasm32"), serde(rename_all = "camelCase"))]
pub struct SseEvent {
    /// The `event:` field, or `"message"` when the event named none.
    #[cfg_attr(not(target_arch = "wasm32"), serde(rename = "type"))]
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The last event ID buffer at dispatch time (`""` when never set).
    pub last_event_id: String,
}

/// Bounds on what the decoder holds at once, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SseLimits {
    /// The longest line, its terminator not counted.
    pub max_line: usize,
    /// The most data one event may gather: its `data` lines joined with `\n`.
    pub max_data: usize,
}

impl Default for SseLimits {
    /// No bounds.
    fn default() -> Self {
        SseLimits {
            max_line: usize::MAX,
            max_data: usize::MAX,
        }
    }
}

/// The bound a stream exceeded; the decoder stopped there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SseOverflow {
    /// A line longer than this many bytes.
    Line(usize),
    /// An event with more data than this many bytes.
    Event(usize),
}

/// Incremental decoder state. See the module docs.
#[derive(Debug, Default)]
pub struct SseDecoder {
    /// Bytes of a line whose terminator has not arrived yet.
    carry: Vec<u8>,
    /// The previous chunk ended in CR: an LF opening the next chunk belongs to it.
    skip_lf: bool,
    /// Still before the first byte of the stream (the BOM may only appear there).
    at_start: bool,
    event_type: String,
    /// The event's `data` lines joined with `\n` (the standard's buffer without its final
    /// LF, so a whole line can become the buffer as it is).
    data: String,
    /// A `data` line was seen since the last dispatch (the standard's buffer is not empty).
    has_data: bool,
    last_event_id: String,
    retry: Option<u64>,
    limits: SseLimits,
    overflow: Option<SseOverflow>,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A carry buffer larger than this is freed after its line instead of kept for the next.
const KEEP_CARRY: usize = 64 * 1024;

impl SseDecoder {
    /// A decoder without bounds.
    pub fn new() -> Self {
        SseDecoder {
            at_start: true,
            ..SseDecoder::default()
        }
    }

    /// A decoder that stops at the first line or event over `limits`.
    pub fn with_limits(limits: SseLimits) -> Self {
        SseDecoder {
            limits,
            ..SseDecoder::new()
        }
    }

    /// The bound the stream exceeded, if it did. From then on `feed` reads nothing and
    /// `finish` dispatches nothing.
    pub fn overflow(&self) -> Option<SseOverflow> {
        self.overflow
    }

    /// Stops at `overflow`, freeing what the decoder holds.
    fn stop(&mut self, overflow: SseOverflow) {
        self.overflow = Some(overflow);
        self.carry = Vec::new();
        self.data = String::new();
        self.has_data = false;
    }

    /// The reconnection time from the last valid `retry:` field, in milliseconds.
    pub fn retry(&self) -> Option<u64> {
        self.retry
    }

    /// Feeds one chunk and appends every event it completes to `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) {
        if self.overflow.is_some() {
            return;
        }
        let mut rest = chunk;
        if self.skip_lf && !rest.is_empty() {
            self.skip_lf = false;
            if let Some(tail) = rest.strip_prefix(b"\n") {
                rest = tail;
            }
        }
        while let Some(pos) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            let (line, after) = rest.split_at(pos);
            let mut after = after.get(1..).unwrap_or_default();
            if rest.get(pos) == Some(&b'\r') {
                match after.first() {
                    Some(b'\n') => after = after.get(1..).unwrap_or_default(),
                    Some(_) => {}
                    None => self.skip_lf = true,
                }
            }
            if self.carry.len().saturating_add(line.len()) > self.limits.max_line {
                return self.stop(SseOverflow::Line(self.limits.max_line));
            }
            if self.carry.is_empty() {
                self.line(Cow::Borrowed(line), out);
            } else {
                let mut full = std::mem::take(&mut self.carry);
                self.grow_to(&mut full, line.len());
                full.extend_from_slice(line);
                // A small buffer is kept for the next partial line (a data line takes it).
                if let Some(mut kept) = self.line(Cow::Owned(full), out) {
                    if kept.capacity() <= KEEP_CARRY {
                        kept.clear();
                        self.carry = kept;
                    }
                }
            }
            if self.overflow.is_some() {
                return;
            }
            rest = after;
        }
        if self.carry.len().saturating_add(rest.len()) > self.limits.max_line {
            return self.stop(SseOverflow::Line(self.limits.max_line));
        }
        let mut carry = std::mem::take(&mut self.carry);
        self.grow_to(&mut carry, rest.len());
        carry.extend_from_slice(rest);
        self.carry = carry;
    }

    /// Makes room for `extra` more bytes, growing by doubling as `Vec` does but never past
    /// the line bound, so a line at the bound holds no more than the bound.
    fn grow_to(&self, buf: &mut Vec<u8>, extra: usize) {
        let need = buf.len().saturating_add(extra);
        if need <= buf.capacity() {
            return;
        }
        let target = need
            .max(buf.capacity().saturating_mul(2))
            .min(self.limits.max_line.max(need));
        buf.reserve_exact(target - buf.len());
    }

    /// Ends the stream. A final line without a terminator is still interpreted, but an event
    /// without its blank line is discarded, as the standard says ("If the file ends in the
    /// middle of an event, before the final empty line, the incomplete event is not
    /// dispatched"). Returns whether such an incomplete event was dropped, so callers can
    /// report a truncated stream.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) -> bool {
        if !self.carry.is_empty() {
            let last = std::mem::take(&mut self.carry);
            self.line(Cow::Owned(last), out);
        }
        let dropped = self.has_data;
        self.data = String::new();
        self.has_data = false;
        self.event_type.clear();
        self.skip_lf = false;
        dropped
    }

    /// Interprets one line. An owned line whose allocation was not taken over (by the event's
    /// data) is handed back for reuse.
    fn line(&mut self, line: Cow<'_, [u8]>, out: &mut Vec<SseEvent>) -> Option<Vec<u8>> {
        let mut start = 0;
        if self.at_start {
            self.at_start = false;
            if line.starts_with(BOM) {
                start = BOM.len();
            }
        }
        let bytes = line.get(start..).unwrap_or_default();
        if bytes.is_empty() {
            self.dispatch(out);
            return owned(line);
        }
        if bytes.first() == Some(&b':') {
            return owned(line); // comment
        }
        let (name, value_at) = match bytes.iter().position(|&b| b == b':') {
            Some(colon) => {
                let after = colon + 1;
                let space = usize::from(bytes.get(after) == Some(&b' '));
                (bytes.get(..colon).unwrap_or_default(), after + space)
            }
            None => (bytes, bytes.len()),
        };
        let value = bytes.get(value_at..).unwrap_or_default();
        match name {
            b"event" => {
                self.event_type.clear();
                push_utf8(&mut self.event_type, value);
            }
            b"data" => return self.push_data(line, start + value_at),
            // An id containing NULL is ignored.
            b"id" if !value.contains(&0) => {
                self.last_event_id.clear();
                push_utf8(&mut self.last_event_id, value);
            }
            // Only an all-digit value counts; overlong values saturate instead of overflowing.
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                let ms = value.iter().fold(0u64, |acc, d| {
                    acc.saturating_mul(10)
                        .saturating_add(u64::from(d.saturating_sub(b'0')))
                });
                self.retry = Some(ms);
            }
            _ => {} // unknown fields are ignored
        }
        owned(line)
    }

    /// Appends a `data` line's value (from byte `at` of `line`) to the event. The first data
    /// line of an event, when owned and valid UTF-8, becomes the buffer without a copy.
    fn push_data(&mut self, line: Cow<'_, [u8]>, at: usize) -> Option<Vec<u8>> {
        let len = line.len().saturating_sub(at);
        let sep = usize::from(self.has_data);
        if self.data.len().saturating_add(sep).saturating_add(len) > self.limits.max_data {
            self.stop(SseOverflow::Event(self.limits.max_data));
            return None;
        }
        let was_empty = !self.has_data;
        self.has_data = true;
        if was_empty {
            if let Cow::Owned(mut bytes) = line {
                bytes.drain(..at.min(bytes.len()));
                match String::from_utf8(bytes) {
                    Ok(text) => self.data = text,
                    Err(e) => {
                        self.data.clear();
                        push_utf8(&mut self.data, e.as_bytes());
                    }
                }
                return None;
            }
        } else {
            self.data.push('\n');
        }
        push_utf8(&mut self.data, line.get(at..).unwrap_or_default());
        owned(line)
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        if !self.has_data {
            self.event_type.clear();
            return;
        }
        self.has_data = false;
        let event = if self.event_type.is_empty() {
            String::from("message")
        } else {
            std::mem::take(&mut self.event_type)
        };
        out.push(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
            last_event_id: self.last_event_id.clone(),
        });
    }
}

/// The allocation of an owned line, for reuse.
fn owned(line: Cow<'_, [u8]>) -> Option<Vec<u8>> {
    match line {
        Cow::Owned(v) => Some(v),
        Cow::Borrowed(_) => None,
    }
}

/// Appends `bytes` decoded as UTF-8, invalid sequences becoming U+FFFD as the standard's
/// "UTF-8 decode" does.
fn push_utf8(dst: &mut String, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(s) => dst.push_str(s),
        Err(_) => dst.push_str(&String::from_utf8_lossy(bytes)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_chunks(chunks: &[&[u8]]) -> (Vec<SseEvent>, bool) {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        for c in chunks {
            d.feed(c, &mut out);
        }
        let dropped = d.finish(&mut out);
        (out, dropped)
    }

    fn ev(event: &str, data: &str, id: &str) -> SseEvent {
        SseEvent {
            event: event.into(),
            data: data.into(),
            last_event_id: id.into(),
        }
    }

    #[test]
    fn basic_fields_and_defaults() {
        let (out, dropped) =
            decode_chunks(&[b"data: hello\n\nevent: ping\ndata: {\"a\":1}\nid: 7\n\n"]);
        assert_eq!(
            out,
            vec![ev("message", "hello", ""), ev("ping", "{\"a\":1}", "7")]
        );
        assert!(!dropped);
    }

    #[test]
    fn multi_line_data_and_space_rule() {
        // Only one leading space is removed; a field without colon has an empty value.
        let (out, _) = decode_chunks(&[b"data:a\ndata:  b\ndata\n\n"]);
        assert_eq!(out, vec![ev("message", "a\n b\n", "")]);
    }

    #[test]
    fn comments_and_empty_events_dispatch_nothing() {
        let (out, _) = decode_chunks(&[b": keep-alive\n\nevent: x\n\ndata: y\n\n"]);
        // `event: x` with no data resets the type, so the next event is a "message".
        assert_eq!(out, vec![ev("message", "y", "")]);
    }

    #[test]
    fn cr_crlf_lf_line_ends() {
        let (out, _) = decode_chunks(&[b"data: a\r\rdata: b\r\n\r\ndata: c\n\n"]);
        assert_eq!(
            out,
            vec![
                ev("message", "a", ""),
                ev("message", "b", ""),
                ev("message", "c", "")
            ]
        );
    }

    #[test]
    fn crlf_split_across_chunks_is_one_line_end() {
        let (out, _) = decode_chunks(&[b"data: a\r", b"\n", b"\r", b"\ndata: b\n\n"]);
        assert_eq!(out, vec![ev("message", "a", ""), ev("message", "b", "")]);
    }

    #[test]
    fn bom_only_at_start() {
        let (out, _) = decode_chunks(&[b"\xEF\xBB", b"\xBFdata: x\n\n\xEF\xBB\xBFdata: y\n\n"]);
        // The second BOM makes the line's field name "\u{FEFF}data", which is ignored.
        assert_eq!(out, vec![ev("message", "x", "")]);
    }

    #[test]
    fn id_persists_and_null_id_is_ignored() {
        let (out, _) =
            decode_chunks(&[b"id: 1\ndata: a\n\ndata: b\n\nid: x\0y\ndata: c\n\nid\ndata: d\n\n"]);
        assert_eq!(
            out,
            vec![
                ev("message", "a", "1"),
                ev("message", "b", "1"),
                ev("message", "c", "1"),
                ev("message", "d", "")
            ]
        );
    }

    #[test]
    fn retry_needs_digits_only() {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        d.feed(
            b"retry: 1500\n\nretry: 15x\n\nretry: 99999999999999999999999\n",
            &mut out,
        );
        assert_eq!(d.retry(), Some(u64::MAX));
        let mut d = SseDecoder::new();
        d.feed(b"retry: 1500\nretry: 2a\n", &mut out);
        assert_eq!(d.retry(), Some(1500));
    }

    #[test]
    fn incomplete_event_at_eof_is_dropped_and_reported() {
        let (out, dropped) = decode_chunks(&[b"data: a\n\ndata: partial"]);
        assert_eq!(out, vec![ev("message", "a", "")]);
        assert!(dropped);
    }

    #[test]
    fn invalid_utf8_becomes_replacement_char() {
        let (out, _) = decode_chunks(&[b"data: a\xFFb\n\n"]);
        assert_eq!(out, vec![ev("message", "a\u{FFFD}b", "")]);
    }

    const FIXTURES: &[&[u8]] = &[
        b"\xEF\xBB\xBFevent: message_start\r\ndata: {\"type\":\"message_start\"}\r\n\r\n: ping\r\n\r\nevent: content_block_delta\r\ndata: {\"text\":\"h\xC3\xA9llo \xF0\x9F\x98\x80\"}\r\n\r\n",
        b"data: {\"choices\":[{\"delta\":{\"content\":\"\xE4\xBD\xA0\xE5\xA5\xBD\"}}]}\n\ndata: [DONE]\n\n",
        b"id: 42\rretry: 10\revent: a\rdata: 1\rdata: 2\r\r:c\r\rdata:\r\r",
        b"data: x\n\ndata: y\r\n\r\ndata: z\r\rdata: tail-without-blank-line",
    ];

    /// Every fixture split at every byte offset (and byte by byte) decodes exactly as one chunk.
    #[test]
    fn every_split_matches_one_chunk() {
        for fixture in FIXTURES {
            let whole = decode_chunks(&[fixture]);
            assert!(!whole.0.is_empty());
            for cut in 0..=fixture.len() {
                let (a, b) = fixture.split_at(cut);
                assert_eq!(decode_chunks(&[a, b]), whole, "split at {cut}");
                for cut2 in cut..=fixture.len() {
                    let (b1, b2) = b.split_at(cut2 - cut);
                    assert_eq!(decode_chunks(&[a, b1, b2]), whole, "split at {cut}/{cut2}");
                }
            }
            let bytes: Vec<&[u8]> = fixture.chunks(1).collect();
            assert_eq!(decode_chunks(&bytes), whole);
        }
    }

    fn bounded(max: usize) -> SseDecoder {
        SseDecoder::with_limits(SseLimits {
            max_line: max,
            max_data: max,
        })
    }

    #[test]
    fn a_line_at_the_bound_passes_and_one_byte_more_stops_the_decoder() {
        // `data: ` + 10 bytes = a 16-byte line.
        let mut out = Vec::new();
        let mut d = bounded(16);
        d.feed(b"data: 0123456789\n\n", &mut out);
        assert_eq!(out, vec![ev("message", "0123456789", "")]);
        assert_eq!(d.overflow(), None);

        for chunks in [
            &[&b"data: 01234567890\n\n"[..]][..],
            &[b"data: 0123", b"4567", b"890"],
        ] {
            let mut out = Vec::new();
            let mut d = bounded(16);
            for c in chunks {
                d.feed(c, &mut out);
            }
            assert_eq!(d.overflow(), Some(SseOverflow::Line(16)));
            assert_eq!(d.carry.capacity(), 0, "what it held is freed");
            // Nothing more is read, and nothing is dispatched at the end.
            d.feed(b"\n\ndata: x\n\n", &mut out);
            assert!(!d.finish(&mut out));
            assert!(out.is_empty());
        }
    }

    #[test]
    fn an_endless_line_holds_no_more_than_the_bound() {
        let mut d = bounded(1000);
        let mut out = Vec::new();
        d.feed(b"data: ", &mut out);
        // 6 + 143 × 7 = 1007 bytes: over the bound with the last piece.
        for _ in 0..143 {
            d.feed(b"xxxxxxx", &mut out);
            assert!(d.carry.capacity() <= 1000, "{}", d.carry.capacity());
        }
        assert_eq!(d.overflow(), Some(SseOverflow::Line(1000)));
    }

    #[test]
    fn an_event_of_many_short_lines_stops_at_the_data_bound() {
        let mut d = bounded(64);
        let mut out = Vec::new();
        // Each line adds 9 bytes and a `\n` between lines: 10 lines are 99 bytes.
        d.feed(&b"data: 123456789\n".repeat(6), &mut out);
        assert_eq!(d.overflow(), None);
        d.feed(&b"data: 123456789\n".repeat(4), &mut out);
        assert_eq!(d.overflow(), Some(SseOverflow::Event(64)));
        assert!(d.data.capacity() == 0 && !d.has_data);
        assert!(out.is_empty());
    }

    #[test]
    fn events_before_the_overflow_are_dispatched() {
        let mut d = bounded(16);
        let mut out = Vec::new();
        d.feed(
            b"data: a\n\ndata: b\n\n: an overlong comment line\n",
            &mut out,
        );
        assert_eq!(out, vec![ev("message", "a", ""), ev("message", "b", "")]);
        assert_eq!(d.overflow(), Some(SseOverflow::Line(16)));
    }

    #[test]
    fn bounded_decoding_of_every_split_matches_unbounded() {
        for fixture in FIXTURES {
            let whole = decode_chunks(&[fixture]);
            for cut in 0..=fixture.len() {
                let (a, b) = fixture.split_at(cut);
                let mut d = bounded(fixture.len());
                let mut out = Vec::new();
                d.feed(a, &mut out);
                d.feed(b, &mut out);
                let dropped = d.finish(&mut out);
                assert_eq!((out, dropped), whole, "split at {cut}");
            }
        }
    }

    #[test]
    fn a_data_line_in_pieces_becomes_the_event_without_a_copy_and_stays_exact() {
        // Split data lines, a second data line, invalid UTF-8 in a split line, CRLF.
        let body: &[u8] =
            b"data: first half\xE2\x82\xAC and more\r\ndata: second\r\n\r\ndata: a\xFFb\n\n";
        let whole = decode_chunks(&[body]);
        assert_eq!(
            whole.0,
            vec![
                ev("message", "first half\u{20AC} and more\nsecond", ""),
                ev("message", "a\u{FFFD}b", "")
            ]
        );
        let bytes: Vec<&[u8]> = body.chunks(3).collect();
        assert_eq!(decode_chunks(&bytes), whole);
    }

    #[test]
    fn large_stream_is_linear_in_carry() {
        // A 1 MB data line fed in 7-byte chunks is reassembled exactly once.
        let payload = "x".repeat(1 << 20);
        let body = format!("data: {payload}\n\n");
        let chunks: Vec<&[u8]> = body.as_bytes().chunks(7).collect();
        let (out, _) = decode_chunks(&chunks);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].data.len(), 1 << 20);
    }
}
