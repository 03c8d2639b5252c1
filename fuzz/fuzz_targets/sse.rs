//! The SSE decoder (src/stream/sse.rs) on arbitrary bytes: fed in one chunk, byte by byte,
//! and in the split the first input byte picks, it must give the same events, the same
//! `finish()` answer and the same `retry`, and agree with a plain reading of the WHATWG
//! event-stream interpretation over the whole body (below).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_agent_wasm::stream::{SseDecoder, SseEvent};

type Outcome = (Vec<SseEvent>, bool, Option<u64>);

fn decode(chunks: &[&[u8]]) -> Outcome {
    let mut d = SseDecoder::new();
    let mut out = Vec::new();
    for c in chunks {
        d.feed(c, &mut out);
    }
    let dropped = d.finish(&mut out);
    (out, dropped, d.retry())
}

/// The standard's interpretation, written for clarity over the whole body at once: strip
/// one leading BOM, cut lines at CRLF, CR or LF, dispatch on a blank line. A last line
/// without its end is still read (as the decoder documents), and an event missing its
/// blank line is dropped.
fn reference(body: &[u8]) -> Outcome {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let mut lines: Vec<&[u8]> = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < body.len() {
        match body[i] {
            b'\n' => {
                lines.push(&body[start..i]);
                start = i + 1;
            }
            b'\r' => {
                lines.push(&body[start..i]);
                if body.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < body.len() {
        lines.push(&body[start..]);
    }
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let (mut events, mut event_type, mut data, mut id, mut retry) = (
        Vec::new(),
        String::new(),
        String::new(),
        String::new(),
        None,
    );
    for line in lines {
        if line.is_empty() {
            if !data.is_empty() {
                data.pop();
                events.push(SseEvent {
                    event: if event_type.is_empty() {
                        "message".into()
                    } else {
                        event_type.clone()
                    },
                    data: std::mem::take(&mut data),
                    last_event_id: id.clone(),
                });
            }
            event_type.clear();
            continue;
        }
        if line[0] == b':' {
            continue;
        }
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(c) => {
                let v = &line[c + 1..];
                (&line[..c], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        match name {
            b"event" => event_type = text(value),
            b"data" => {
                data.push_str(&text(value));
                data.push('\n');
            }
            b"id" if !value.contains(&0) => id = text(value),
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                retry = Some(value.iter().fold(0u64, |a, d| {
                    a.saturating_mul(10).saturating_add(u64::from(d - b'0'))
                }));
            }
            _ => {}
        }
    }
    (events, !data.is_empty(), retry)
}

fuzz_target!(|data: &[u8]| pi_fuzz::on_big_stack(|| {
    let Some((&seed, body)) = data.split_first() else {
        return;
    };
    let whole = decode(&[body]);
    assert_eq!(whole, reference(body), "one chunk vs the standard");
    let bytes: Vec<&[u8]> = body.chunks(1).collect();
    assert_eq!(decode(&bytes), whole, "byte by byte vs one chunk");
    assert_eq!(
        decode(&pi_fuzz::split(seed, body)),
        whole,
        "split {seed} vs one chunk"
    );
}));
