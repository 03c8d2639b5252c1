//! Streaming primitives shared by every provider: the incremental SSE decoder. Pure Rust,
//! no JS. (The partial arguments of a streaming tool call are parsed in JS, once: see
//! `provider::arguments`.)

pub mod sse;

pub use sse::{SseDecoder, SseEvent, SseLimits, SseOverflow};
