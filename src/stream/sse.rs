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
//! into the carry buffer, so feeding N bytes in any split costs O(N).

use serde::Serialize;

/// One dispatched event, as the standard's `MessageEvent` would carry it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SseEvent {
    /// The `event:` field, or `"message"` when the event named none.
    #[serde(rename = "type")]
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The last event ID buffer at dispatch time (`""` when never set).
    pub last_event_id: String,
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
    data: String,
    last_event_id: String,
    retry: Option<u64>,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl SseDecoder {
    pub fn new() -> Self {
        SseDecoder {
            at_start: true,
            ..SseDecoder::default()
        }
    }

    /// The reconnection time from the last valid `retry:` field, in milliseconds.
    pub fn retry(&self) -> Option<u64> {
        self.retry
    }

    /// Feeds one chunk and appends every event it completes to `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) {
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
            if self.carry.is_empty() {
                self.line(line, out);
            } else {
                let mut full = std::mem::take(&mut self.carry);
                full.extend_from_slice(line);
                self.line(&full, out);
                // Keep the allocation for the next partial line.
                full.clear();
                self.carry = full;
            }
            rest = after;
        }
        self.carry.extend_from_slice(rest);
    }

    /// Ends the stream. A final line without a terminator is still interpreted, but an event
    /// without its blank line is discarded, as the standard says ("If the file ends in the
    /// middle of an event, before the final empty line, the incomplete event is not
    /// dispatched"). Returns whether such an incomplete event was dropped, so callers can
    /// report a truncated stream.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) -> bool {
        if !self.carry.is_empty() {
            let last = std::mem::take(&mut self.carry);
            self.line(&last, out);
        }
        let dropped = !self.data.is_empty();
        self.data.clear();
        self.event_type.clear();
        self.skip_lf = false;
        dropped
    }

    fn line(&mut self, mut line: &[u8], out: &mut Vec<SseEvent>) {
        if self.at_start {
            self.at_start = false;
            if let Some(tail) = line.strip_prefix(BOM) {
                line = tail;
            }
        }
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line.first() == Some(&b':') {
            return; // comment
        }
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let (name, value) = line.split_at(colon);
                let value = value.get(1..).unwrap_or_default();
                (name, value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        match name {
            b"event" => {
                self.event_type.clear();
                push_utf8(&mut self.event_type, value);
            }
            b"data" => {
                self.data.reserve(value.len() + 1);
                push_utf8(&mut self.data, value);
                self.data.push('\n');
            }
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
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        if self.data.is_empty() {
            self.event_type.clear();
            return;
        }
        if self.data.ends_with('\n') {
            self.data.pop();
        }
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
