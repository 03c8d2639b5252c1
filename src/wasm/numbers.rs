//! The JS engine's number conversions for the core (`jsnum::Engine`), installed when the
//! module starts. Called with `catch`: a global replaced by something that throws gives
//! `None` (jsnum's fallback), not a trap.

use wasm_bindgen::prelude::*;

use crate::jsnum::{install, Engine};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = String, catch)]
    fn js_string(n: f64) -> Result<String, JsValue>;
    #[wasm_bindgen(js_name = Number, catch)]
    fn js_number(s: &str) -> Result<f64, JsValue>;
    #[wasm_bindgen(js_name = parseFloat, catch)]
    fn js_parse_float(s: &str) -> Result<f64, JsValue>;
}

#[wasm_bindgen(start)]
fn start() {
    install(Engine {
        string: |n| js_string(n).ok(),
        number: |s| js_number(s).ok(),
        parse_float: |s| js_parse_float(s).ok(),
    });
}
