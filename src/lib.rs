//! pi-agent-wasm: the agent loop of `@earendil-works/pi-agent-core` 1.6.0 in Rust.
//!
//! The core modules are pure Rust and are tested natively with `cargo test`. Only
//! [`wasm`] (compiled for `wasm32` alone) names wasm-bindgen, js-sys or web-sys.

pub mod stream;

#[cfg(target_arch = "wasm32")]
pub mod wasm;
