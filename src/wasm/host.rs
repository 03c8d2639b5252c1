//! The small host services for the core in JS: the clock (the glue's), the `AbortSignal` and `RegExp` for schema patterns. The event sink is sink.rs, the JS copy
//! of a streamed partial mirror.rs.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;

use super::js::get;
use crate::io::{AbortSignal, Clock, Patterns};

#[wasm_bindgen]
extern "C" {
    type JsRegExp;
    #[wasm_bindgen(constructor, catch, js_class = "RegExp")]
    fn new(pattern: &JsValue, flags: &str) -> Result<JsRegExp, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn test(this: &JsRegExp, text: &JsValue) -> Result<bool, JsValue>;
}

/// The run's clock: its glue's `clock` (src/js/loop.js), which a recorded or replayed run
/// replaces (src/js/cassette.js). It never throws.
pub struct JsClock(pub super::glue::Glue);

impl Clock for JsClock {
    fn now(&self) -> f64 {
        self.0.clock(0)
    }
    fn monotonic(&self) -> f64 {
        self.0.clock(1)
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

/// `new RegExp(pattern, "u")`, or without the flag for a pattern the flag rejects (as
/// pi-schema compiles them), compiled once per pattern. Pattern and text cross as JS strings
/// (lone surrogates as JS holds them).
#[derive(Default)]
pub struct JsPatterns {
    /// Each pattern seen in this run, compiled, and where it is in that list by pattern
    /// (crate::json's map, whose index keeps a schema of many patterns linear).
    compiled: RefCell<Vec<Result<Rc<JsRegExp>, String>>>,
    by_pattern: RefCell<crate::json::Map>,
}

impl Patterns for JsPatterns {
    fn test(&self, pattern: &str, text: &str) -> Result<bool, String> {
        let at = self
            .by_pattern
            .borrow()
            .get(pattern)
            .and_then(|v| v.as_u64());
        let known = at.and_then(|i| self.compiled.borrow().get(i as usize).cloned());
        let compiled = known.unwrap_or_else(|| {
            let source = super::js::js_str(pattern);
            let c = JsRegExp::new(&source, "u")
                .or_else(|_| JsRegExp::new(&source, ""))
                .map(Rc::new)
                .map_err(|e| super::js::error_text(&e));
            let mut compiled = self.compiled.borrow_mut();
            self.by_pattern
                .borrow_mut()
                .insert(pattern.to_string(), compiled.len().into());
            compiled.push(c.clone());
            c
        });
        compiled.and_then(|re| {
            re.test(&super::js::js_str(text))
                .map_err(|e| super::js::error_text(&e))
        })
    }
}
