//! The JS binding: the only module that names wasm-bindgen, js-sys or web-sys.
//! Every export has one shape: convert in, call the core, convert out, one `map_err`.

mod api;
mod builtin;
mod error;
mod fetch;
mod glue;
mod hooks;
mod host;
mod js;
mod mirror;
mod numbers;
mod settle;
mod sink;
mod sse;
mod stream_fn;
mod table;
#[cfg(feature = "test-trap")]
mod test_trap;
mod tools;

pub use error::JsResult;
pub use sse::JsSseDecoder as SseDecoder;

/// The allocator: talc in place of Rust's default (dlmalloc), for size (see Cargo.toml).
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();
