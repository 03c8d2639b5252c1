//! pi-agent-wasm: the agent loop of `@earendil-works/pi-agent-core` 1.6.0 in Rust.
//!
//! The core modules are pure Rust and are tested natively with `cargo test`: they reach
//! their host (JS, or a test) only through the traits in [`io`]. Only [`wasm`] (compiled
//! for `wasm32` alone) names wasm-bindgen, js-sys or web-sys.

pub mod agent;
pub mod error;
pub mod event;
pub mod io;
pub mod jsnum;
pub mod json;
pub mod message;
pub mod provider;
pub mod stream;

#[cfg(target_arch = "wasm32")]
pub mod wasm;
