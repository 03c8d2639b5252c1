//! Streaming primitives shared by every provider: the incremental SSE decoder
//! (and, later, incremental JSON for tool arguments). Pure Rust, no JS.

pub mod sse;

pub use sse::{SseDecoder, SseEvent};
