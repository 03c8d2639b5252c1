//! pi-agent-wasm: the agent loop of `@earendil-works/pi-agent-core` 1.6.0 in Rust.
//!
//! The core modules are pure Rust and are tested natively with `cargo test`: they reach
//! their host (JS, or a test) only through the traits in [`io`]. Only [`wasm`] (compiled
//! for `wasm32` alone) names wasm-bindgen, js-sys or web-sys.
//!
//! Layers point one way: a module names only modules to its left in `text → jsnum → json →
//! error → message → stream → event → io → agent → provider → wasm` (tests/layers.rs).
//!
//! # The walk of one streamed text delta (built-in provider)
//! 1. `wasm::builtin` reads a body chunk from `fetch` ([`io::Transport`]): one await per
//!    network chunk.
//! 2. `provider::driver` feeds it to the SSE decoder and each event's data to the API's
//!    decoder, which appends the delta to the partial ([`event::Partial`]) and queues a
//!    `text_delta` event holding the delta and the same partial.
//! 3. `agent::turn` hands the event to [`io::EventSink::update`]; `wasm::sink` appends a
//!    record `[TEXT_DELTA, index, "delta"]` to the response's JSON batch (`wasm::mirror`;
//!    the kinds are `wasm::glue::kind`, the glue's `RECORD_KINDS`).
//! 4. When the stream would wait for the network again, the turn flushes: the glue
//!    (`src/js/loop.js`) parses the batch once, appends each delta to the JS partial, builds
//!    pi's event with `{ ...partial }`, calls the caller's `emit` and awaits it there when
//!    it returned a thenable. Rust awaits once per chunk.
//!
//! With a JS stream function (pi-ai's `streamSimple`), the glue iterates the JS stream and
//! emits each `message_update` itself; the core sees only `start` and the final message.
//!
//! # The walk of one tool call's arguments (built-in provider)
//! 1. The API's decoder appends each argument delta to the call's raw text
//!    (`provider::arguments`) and queues a `toolcall_delta`; nothing is parsed yet.
//! 2. `wasm::sink` records `[TOOLCALL_DELTA, index, "delta"]`; the glue appends the delta
//!    to the call's partial parser (`src/js/streaming-json.js`, the one parser of partial
//!    arguments) and sets the JS partial's `arguments` from it.
//! 3. At the call's end the decoder parses the text once, strictly; the finished block
//!    crosses in the `toolcall_end` record, and the core validates it (`agent::validate`).
//! 4. `wasm::tools` hands the arguments to `execute` (converted once), and takes the result
//!    with the glue's `split`: its `content` and `details` stay the tool's own objects
//!    ([`json::Host`]), so the tool-result message carries them unread.

#![cfg_attr(test, allow(clippy::disallowed_methods))]
// The loop-only build (measured, never shipped: see Cargo.toml) leaves the glue the
// built-in providers use unused.
#![cfg_attr(not(feature = "providers"), allow(dead_code, unused_imports))]

pub mod agent;
pub mod error;
pub mod event;
pub mod io;
pub mod jsnum;
pub mod json;
pub mod message;
pub mod provider;
pub mod stream;
pub mod text;

#[cfg(target_arch = "wasm32")]
pub mod wasm;
