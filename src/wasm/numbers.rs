//! The JS engine's number conversions for the core (`jsnum::Engine`), installed when the
//! module starts. Called with `catch`: a global replaced by something that throws gives NaN
//! (or, for `String`, the digits of an integral value), not a trap.

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

fn string(n: f64) -> String {
    js_string(n).unwrap_or_else(|_| {
        if n.fract() == 0.0 && n.abs() <= 9_007_199_254_740_991.0 {
            (n as i64).to_string()
        } else {
            String::from("NaN")
        }
    })
}

fn number(s: &str) -> f64 {
    js_number(s).unwrap_or(f64::NAN)
}

fn parse_float(s: &str) -> f64 {
    js_parse_float(s).unwrap_or(f64::NAN)
}

#[wasm_bindgen(start)]
fn start() {
    install(Engine {
        string,
        number,
        parse_float,
    });
}
