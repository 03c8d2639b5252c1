//! `pattern` and `patternProperties` are ECMAScript regular expressions (`RegExp(p, "u")` in
//! pi-schema). The core does not carry a regex engine into the `.wasm`: the host supplies
//! one. In wasm that is JS `RegExp` itself (src/wasm); natively, for tests, the `regex`
//! crate, whose syntax covers the patterns tool schemas use (no look-around or
//! backreferences).

#[cfg(not(target_arch = "wasm32"))]
use std::cell::RefCell;
#[cfg(not(target_arch = "wasm32"))]
use std::collections::HashMap;

pub use crate::io::Patterns;

/// Native engine with a per-pattern cache (tool schemas are long-lived).
#[cfg(not(target_arch = "wasm32"))]
#[derive(Default)]
pub struct NativePatterns {
    cache: RefCell<HashMap<String, Result<regex::Regex, String>>>,
}

#[cfg(not(target_arch = "wasm32"))]
impl Patterns for NativePatterns {
    fn test(&self, pattern: &str, text: &str) -> Result<bool, String> {
        let mut cache = self.cache.borrow_mut();
        let compiled = cache.entry(pattern.to_string()).or_insert_with(|| {
            regex::Regex::new(pattern)
                .map_err(|e| format!("Invalid regular expression: /{pattern}/u: {e}"))
        });
        match compiled {
            Ok(re) => Ok(re.is_match(text)),
            Err(e) => Err(e.clone()),
        }
    }
}

/// An engine for hosts without one: every pattern is reported as unsupported, so schemas
/// that use `pattern` fail with a clear message instead of passing silently.
pub struct NoPatterns;

impl Patterns for NoPatterns {
    fn test(&self, pattern: &str, _text: &str) -> Result<bool, String> {
        Err(format!(
            "pattern /{pattern}/ cannot be checked: no regular expression engine"
        ))
    }
}
