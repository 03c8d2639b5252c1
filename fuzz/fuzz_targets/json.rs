//! The JSON text reader (src/json/read.rs) on arbitrary text, judged by serde_json's reader
//! (exact floats, no depth limit): where serde_json reads a value, the reader gives the same
//! one (numbers to the bit, a float never for an integer or the reverse, key order kept);
//! where serde_json refuses the text, so does the reader, except for an escaped lone
//! surrogate, which JSON.parse reads. Deeper than `json::MAX_DEPTH`, the reader refuses.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_agent_wasm::json::Value;
use pi_agent_wasm::json::{parse, MAX_DEPTH};

/// Whether `text` escapes a surrogate (`\uD800`–`\uDFFF`).
fn escapes_a_surrogate(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    ["8", "9", "a", "b", "c", "d", "e", "f"]
        .iter()
        .any(|d| lower.contains(&format!("\\ud{d}")))
}

fuzz_target!(|data: &[u8]| pi_fuzz::on_big_stack(|| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if pi_fuzz::nesting_depth(data) > MAX_DEPTH {
        assert!(parse(text).is_err(), "read deeper than the limit");
        return;
    }
    {
        let ours = parse(text);
        let mut de = serde_json::Deserializer::from_str(text);
        de.disable_recursion_limit();
        let judge =
            serde::Deserialize::deserialize(&mut de).and_then(|v: Value| de.end().map(|()| v));
        match (&ours, &judge) {
            // Debug tells -0.0 from 0.0 and 1.0 from 1.
            (Ok(a), Ok(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}")),
            (Err(_), Err(_)) => {}
            (Ok(_), Err(_)) if escapes_a_surrogate(text) => {}
            _ => panic!("reader {ours:?}, serde_json {judge:?}"),
        }
    }
}));
