//! Errors raised into JS: always a real `Error` with a stable snake_case `code` taken from
//! the core's [`Error`] type, and, when a caller's value caused it, that value as `cause`.

use std::rc::Rc;

use wasm_bindgen::JsValue;

use super::js::Unreadable;
use crate::error::{Error, Thrown};

pub type JsResult<T> = Result<T, JsValue>;

/// `new Error(message, { cause })` with `error.code = code`.
fn js_error(code: &str, message: &str, cause: Option<&JsValue>) -> JsValue {
    let err = js_sys::Error::new(message);
    // Setting a property on a fresh Error cannot fail; if it somehow did, the Error
    // without its code is still the right thing to throw.
    let _ = js_sys::Reflect::set(&err, &JsValue::from_str("code"), &JsValue::from_str(code));
    if let Some(cause) = cause {
        let _ = js_sys::Reflect::set(&err, &JsValue::from_str("cause"), cause);
    }
    err.into()
}

/// The JS `Error` for a core error.
pub fn to_js(e: &Error) -> JsValue {
    js_error(e.code(), &e.message(), None)
}

/// The JS `Error` for bad input named by `message` (`code: "invalid_input"`).
pub fn invalid(message: impl Into<String>) -> JsValue {
    to_js(&Error::InvalidInput(message.into()))
}

/// The JS `Error` for a caller's value that could not be read, with what reading it threw
/// as `cause` (`code: "invalid_input"`).
pub fn unreadable(u: Unreadable) -> JsValue {
    let e = Error::InvalidInput(u.message);
    js_error(e.code(), &e.message(), u.cause.as_ref())
}

/// A core error as the value a returned Promise rejects with: a host's thrown value as it
/// was thrown, anything else a real `Error` with a stable `code`.
pub fn rejection(e: Error) -> JsValue {
    if let Error::Thrown(t) = &e {
        if let Some(v) = t.payload.as_ref().and_then(|p| p.downcast_ref::<JsValue>()) {
            return v.clone();
        }
    }
    to_js(&e)
}

/// [`rejection`] of a host's throw.
pub fn thrown_to_js(t: Thrown) -> JsValue {
    rejection(Error::Thrown(t))
}

/// A policy error, thrown into the run as a real `Error` with its `code`.
pub fn rejected(e: Error) -> Thrown {
    Thrown {
        payload: Some(Rc::new(to_js(&e))),
        message: e.message(),
    }
}

/// A caller's value that could not be read, thrown into the run as an `invalid_input`
/// `Error` whose `cause` is what reading it threw.
pub fn rejected_unreadable(u: Unreadable) -> Thrown {
    Thrown {
        message: u.message.clone(),
        payload: Some(Rc::new(unreadable(u))),
    }
}
