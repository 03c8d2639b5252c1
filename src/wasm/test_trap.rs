//! Deliberate traps for the trap-recovery tests, compiled only with the `test-trap` feature
//! (never in the shipped `.wasm`; tests/js/shared/trap-build.mjs builds that variant into
//! target/, apart from pkg/). A marker in data that reaches the binding layer picks how the
//! instance dies:
//!
//! - `PI_TEST_TRAP:unreachable` executes `unreachable` (what a panic is under panic=abort);
//! - `PI_TEST_TRAP:stack` recurses without bound, overflowing the stack.
//!
//! The hooks sit where the issue asks for a trap: a streamed delta of a built-in response
//! (with the response's state borrowed), a tool result being converted, and `SseDecoder`.

const MARKER: &str = "PI_TEST_TRAP:";

/// Traps when `text` carries the marker; does nothing otherwise.
pub fn check(text: &str) {
    let Some(at) = text.find(MARKER) else {
        return;
    };
    let kind = text.get(at + MARKER.len()..).unwrap_or_default();
    if kind.starts_with("unreachable") {
        core::arch::wasm32::unreachable();
    }
    if kind.starts_with("stack") {
        let depth = recurse(std::hint::black_box(1));
        // Never reached: the recursion ends only in a trap.
        check(&depth.to_string());
    }
}

/// [`check`] for bytes (an SSE chunk).
pub fn check_bytes(bytes: &[u8]) {
    check(&String::from_utf8_lossy(bytes));
}

/// Unbounded recursion whose frames live on the shadow stack in linear memory, so it
/// overflows that stack (or the engine's) long before the loop counter could.
#[allow(unconditional_recursion)]
fn recurse(n: u64) -> u64 {
    let mut frame = [n; 64];
    std::hint::black_box(&mut frame);
    recurse(std::hint::black_box(n + 1)).wrapping_add(frame.iter().fold(0, |a, b| a ^ b))
}
