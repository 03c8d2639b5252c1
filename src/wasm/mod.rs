//! The JS binding: the only module that names wasm-bindgen, js-sys or web-sys.
//! Every export has one shape: convert in, call the core, convert out, one `map_err`.

mod error;
mod sse;

pub use sse::JsSseDecoder as SseDecoder;

pub use error::JsResult;
