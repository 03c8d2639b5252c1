//! The small host services for the core in JS: the clock (`Date.now`, `performance.now`),
//! the `AbortSignal` and `RegExp` for schema patterns. The event sink is sink.rs, the JS copy
//! of a streamed partial mirror.rs.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use wasm_bindgen::prelude::*;

use super::js::get;
use crate::io::{AbortSignal, Clock, Patterns};

#[wasm_bindgen]
extern "C" {
    /// `performance.now()`; through `catch`, as a host may lack or replace `performance`.
    #[wasm_bindgen(catch, js_namespace = performance, js_name = now)]
    fn performance_now() -> Result<f64, JsValue>;

    type JsRegExp;
    #[wasm_bindgen(constructor, catch, js_class = "RegExp")]
    fn new(pattern: &str, flags: &str) -> Result<JsRegExp, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn test(this: &JsRegExp, text: &str) -> Result<bool, JsValue>;
}

pub struct JsClock;

impl Clock for JsClock {
    fn now(&self) -> f64 {
        js_sys::Date::now()
    }
    fn monotonic(&self) -> f64 {
        performance_now().unwrap_or_else(|_| js_sys::Date::now())
    }
}

/// The caller's `AbortSignal` (or `undefined`).
#[derive(Clone)]
pub struct JsSignal(pub JsValue);

impl AbortSignal for JsSignal {
    fn aborted(&self) -> bool {
        get(&self.0, "aborted").as_bool().unwrap_or(false)
    }
}

/// `new RegExp(pattern, "u")`, compiled once per pattern.
#[derive(Default)]
pub struct JsPatterns {
    cache: RefCell<HashMap<String, Result<Rc<JsRegExp>, String>>>,
}

impl Patterns for JsPatterns {
    fn test(&self, pattern: &str, text: &str) -> Result<bool, String> {
        let compiled = {
            let mut cache = self.cache.borrow_mut();
            cache
                .entry(pattern.to_string())
                .or_insert_with(|| {
                    JsRegExp::new(pattern, "u")
                        .map(Rc::new)
                        .map_err(|e| super::js::error_text(&e))
                })
                .clone()
        };
        compiled.and_then(|re| re.test(text).map_err(|e| super::js::error_text(&e)))
    }
}
