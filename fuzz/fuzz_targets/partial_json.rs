//! The streaming JSON parser (src/stream/partial_json.rs) on arbitrary text in arbitrary
//! deltas (the first input byte picks the split). It never fails, and:
//! - the value it shows does not depend on how the text was split;
//! - replaying its edit records gives the value it shows, once the root container closed;
//! - where a strict parse accepts a document with a container root, the shown value is
//!   the strictly parsed one, and so are the final tool arguments (`parseToolCallArguments`)
//!   for an object.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_agent_wasm::provider::parse_tool_call_arguments;
use pi_agent_wasm::stream::partial_json::apply_change;
use pi_agent_wasm::stream::StreamingJsonParser;
use pi_fuzz::same;
use pi_agent_wasm::json::Value;

fuzz_target!(|data: &[u8]| {
    let Some((&seed, bytes)) = data.split_first() else {
        return;
    };
    if pi_fuzz::known::skip_deep_text(bytes) {
        return;
    }
    let text = String::from_utf8_lossy(bytes);

    let mut whole = StreamingJsonParser::new();
    let mut replayed = Value::Null;
    for c in whole.append(&text) {
        apply_change(&mut replayed, &c);
    }
    let replayed = pi_fuzz::Deep::new(replayed);
    let shown = whole.value().map(pi_fuzz::Deep::new);

    let mut parts = StreamingJsonParser::new();
    let mut replayed_parts = Value::Null;
    for piece in pi_fuzz::split_str(seed, &text) {
        for c in parts.append(piece) {
            apply_change(&mut replayed_parts, &c);
        }
    }
    let replayed_parts = pi_fuzz::Deep::new(replayed_parts);
    let shown_parts = parts.value().map(pi_fuzz::Deep::new);
    match (&shown_parts, &shown) {
        (Some(a), Some(b)) => assert!(
            pi_fuzz::first_difference(a, b).is_none(),
            "shown value depends on the split: {:?}",
            pi_fuzz::first_difference(a, b)
        ),
        (None, None) => {}
        _ => panic!("a value shows for one split only"),
    }

    // Past the nesting limit the streaming parser stops by design (json::MAX_DEPTH), where
    // the harness's strict parse goes on: only the split-independence above applies.
    if pi_fuzz::nesting_depth(text.as_bytes()) > pi_agent_wasm::json::MAX_DEPTH {
        return;
    }
    let Some(strict) = pi_fuzz::parse_json(text.as_bytes()) else {
        return;
    };
    if !(strict.is_object() || strict.is_array()) {
        return;
    }
    let shown = shown.expect("a strict document shows a value");
    let diff = pi_fuzz::first_difference;
    assert!(
        same(&shown, &strict),
        "shown vs strict: {:?}",
        diff(&shown, &strict)
    );
    assert!(
        same(&replayed, &shown),
        "replayed vs shown: {:?}",
        diff(&replayed, &shown)
    );
    assert!(
        same(&replayed_parts, &shown),
        "replayed in parts vs shown: {:?}",
        diff(&replayed_parts, &shown)
    );
    if strict.is_object() {
        let (args, error) = parse_tool_call_arguments(&text);
        let args = pi_fuzz::Deep::new(args);
        // Today's strict parse stops at serde_json's 128 levels (issue 12 point 7: the
        // bounds change will raise it); deeper documents are reported, not crashes.
        if error.is_none() {
            assert!(
                same(&args, &strict),
                "arguments vs strict: {:?}",
                diff(&args, &strict)
            );
        } else {
            assert!(
                pi_fuzz::nesting_depth(text.as_bytes()) >= 128,
                "a strict document refused: {error:?}"
            );
        }
    }
});
