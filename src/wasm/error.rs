//! Errors raised into JS: always a real `Error` with a stable snake_case `code`.

use wasm_bindgen::JsValue;

pub type JsResult<T> = Result<T, JsValue>;

/// Builds `new Error(message)` with `error.code = code`.
pub fn js_error(code: &str, message: &str) -> JsValue {
    let err = js_sys::Error::new(message);
    // Setting a property on a fresh Error cannot fail; if it somehow did, the Error
    // without its code is still the right thing to throw.
    let _ = js_sys::Reflect::set(&err, &JsValue::from_str("code"), &JsValue::from_str(code));
    err.into()
}
