//! Streaming primitives shared by every provider: the incremental SSE decoder
//! and incremental JSON for streamed tool arguments. Pure Rust, no JS.

pub mod partial_json;
pub mod sse;

pub use partial_json::{Change, PathSeg, StreamingJsonParser};
pub use sse::{SseDecoder, SseEvent, SseLimits, SseOverflow};
