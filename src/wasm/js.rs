//! Small safe helpers for calling into JS: every call goes through a `catch` binding
//! (js-sys declares `Function::apply` with `catch`), every
//! thrown value of any type becomes a [`Thrown`] that keeps the original value, and a
//! returned value is awaited only when it is a thenable (an await per event costs more
//! than a whole event otherwise).
//!
//! Values from the caller may be Proxies (revoked, or with throwing traps) or have throwing
//! getters: any touch of one (a property read, `Array.isArray`, an array's `length` and
//! items, a `then` lookup) is made here, through `catch`, and a throw becomes an `Err` that
//! the run handles as pi does. A JS exception must never cross wasm frames: it would leave
//! the run's Promise pending forever and the instance's borrows held.

use std::cell::RefCell;
use std::rc::Rc;

use crate::json::Value;
use js_sys::{Array, Function, Reflect, JSON};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::settle::Settling;

use crate::error::Thrown;

#[wasm_bindgen]
extern "C" {
    /// The global `String(value)`, which may throw (a throwing `toString`).
    #[wasm_bindgen(catch, js_name = String)]
    fn js_string(value: &JsValue) -> Result<JsValue, JsValue>;

    /// `Object.prototype.toString.call(value)`, which throws for a revoked Proxy or a
    /// throwing `Symbol.toStringTag` getter.
    #[wasm_bindgen(catch, js_namespace = ["Object", "prototype", "toString"], js_name = call)]
    fn object_tag(value: &JsValue) -> Result<JsValue, JsValue>;

    /// `Array.isArray(value)`, which throws for a revoked Proxy.
    #[wasm_bindgen(catch, js_namespace = Array, js_name = isArray)]
    fn is_array_checked(value: &JsValue) -> Result<bool, JsValue>;

    /// `JSON.stringify(value)`, which throws on cycles and BigInt.
    #[wasm_bindgen(catch, js_namespace = JSON, js_name = stringify)]
    pub fn json_stringify(value: &JsValue) -> Result<JsValue, JsValue>;

    /// `Function.prototype.call.call(f, this, ...)`: calls `f` as `f(...)` does, without
    /// looking up `call` on `f` (a Proxy's `get` trap, an own `call` property).
    #[wasm_bindgen(catch, js_namespace = ["Function", "prototype", "call"], js_name = call)]
    fn call0(f: &Function, this: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["Function", "prototype", "call"], js_name = call)]
    fn call1(f: &Function, this: &JsValue, a: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["Function", "prototype", "call"], js_name = call)]
    fn call2(f: &Function, this: &JsValue, a: &JsValue, b: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["Function", "prototype", "call"], js_name = call)]
    fn call3(
        f: &Function,
        this: &JsValue,
        a: &JsValue,
        b: &JsValue,
        c: &JsValue,
    ) -> Result<JsValue, JsValue>;
    /// `Reflect.apply(f, this, args)`.
    #[wasm_bindgen(catch, js_namespace = Reflect, js_name = apply)]
    fn reflect_apply(f: &Function, this: &JsValue, args: &Array) -> Result<JsValue, JsValue>;

    /// `Object.fromEntries(value)`, which runs the value's iterator.
    #[wasm_bindgen(catch, js_namespace = Object, js_name = fromEntries)]
    fn from_entries_checked(value: &JsValue) -> Result<JsValue, JsValue>;
}

/// The text pi uses for a thrown value: `error.message` for an `Error`, else `String(error)`
/// (which itself may throw, for a symbol-keyed `toString` trap, say).
pub fn error_text(e: &JsValue) -> String {
    if e.dyn_ref::<js_sys::Error>().is_some() {
        // Read through `catch`: a Proxy of an Error may throw from its `get` trap.
        if let Some(message) = Reflect::get(e, &JsValue::from_str("message"))
            .ok()
            .and_then(|m| m.as_string())
        {
            return message;
        }
    }
    if let Some(s) = e.as_string() {
        return s;
    }
    if e.is_undefined() {
        return "undefined".into();
    }
    if e.is_null() {
        return "null".into();
    }
    // No `new Function` here: Workers forbid code generation from strings.
    js_string(e)
        .ok()
        .and_then(|s| s.as_string())
        .or_else(|| object_tag(e).ok().and_then(|t| t.as_string()))
        .unwrap_or_else(|| "[unprintable value]".into())
}

/// A thrown JS value, kept for rethrowing.
pub fn thrown(e: JsValue) -> Thrown {
    Thrown {
        message: error_text(&e),
        payload: Some(Rc::new(e)),
    }
}

/// `f.call(this, ...args)` as a direct call makes it: up to three arguments directly, more
/// through an array (each push is a crossing into JS, and this runs for every emitted event).
fn invoke(f: &Function, this: &JsValue, args: &[&JsValue]) -> Result<JsValue, JsValue> {
    match args {
        [] => call0(f, this),
        [a] => call1(f, this, a),
        [a, b] => call2(f, this, a, b),
        [a, b, c] => call3(f, this, a, b, c),
        _ => {
            let list = Array::new();
            for a in args {
                list.push(a);
            }
            reflect_apply(f, this, &list)
        }
    }
}

/// Calls `f` with `args`; a throw is `Err`.
pub fn call(f: &Function, args: &[&JsValue]) -> Result<JsValue, Thrown> {
    invoke(f, &JsValue::UNDEFINED, args).map_err(thrown)
}

/// Calls `obj[name](...args)` with `this = obj`. A throwing getter is `Err` with its value.
pub fn call_method(
    obj: &JsValue,
    name: &'static str,
    args: &[&JsValue],
) -> Result<JsValue, Thrown> {
    let f = read(obj, name)?
        .dyn_into::<Function>()
        .map_err(|_| Thrown::new(format!("{name} is not a function")))?;
    call_with(&f, obj, args)
}

/// Calls `f(...args)` with `this`; a throw is `Err`.
pub fn call_with(f: &Function, this: &JsValue, args: &[&JsValue]) -> Result<JsValue, Thrown> {
    invoke(f, this, args).map_err(thrown)
}

/// Awaits `v` as `await v` would: a thenable is awaited (a throwing `then` getter or a
/// rejection is `Err`); any other value is returned as is, without an await (an await per
/// event costs more than a whole event).
pub async fn settle(v: JsValue) -> Result<JsValue, Thrown> {
    settle_with(v, false).await
}

/// As pi's `await f()` inside its `try`: [`settle`], except that a value that is no
/// thenable settles as late as a resolved Promise would, and a synchronous throw (`Err`)
/// one turn of the task queue earlier (pi's `catch` skips that `await`). So the code after
/// it runs in pi's order relative to other tools' (L-92).
pub async fn awaited(v: Result<JsValue, Thrown>) -> Result<JsValue, Thrown> {
    match v {
        Ok(v) => settle_with(v, true).await,
        Err(e) => {
            crate::agent::tools::yield_now().await;
            Err(e)
        }
    }
}

async fn settle_with(v: JsValue, yield_plain: bool) -> Result<JsValue, Thrown> {
    match Settling::start(&v, false).map_err(thrown)? {
        Some(settling) => settling.await.map_err(thrown),
        None => {
            if yield_plain {
                tick().await;
            }
            Ok(v)
        }
    }
}

/// What an emit left to await, as pi's `Promise.resolve(v)` made now: a `then` getter runs
/// now (its throw is `Err`), and a rejection counts as handled from now on, though it is
/// awaited later.
pub fn pending(
    v: JsValue,
) -> Result<futures::future::LocalBoxFuture<'static, Result<(), Thrown>>, Thrown> {
    use futures::FutureExt;
    // A plain value is awaited as the resolved Promise pi's `Promise.resolve(v)` makes: the
    // turns it takes decide when the tool's end comes relative to other tools' (L-92).
    let future = Settling::start(&v, true).map_err(thrown)?;
    Ok(async move {
        match future {
            Some(settling) => settling.await.map(|_| ()).map_err(thrown),
            None => Ok(()),
        }
    }
    .boxed_local())
}

/// One microtask.
pub async fn tick() {
    if let Ok(Some(settling)) = Settling::start(&JsValue::UNDEFINED, true) {
        let _ = settling.await;
    }
}

/// `Object.fromEntries(value)` of a caller's iterable of pairs (a `Headers`), as JSON; a
/// throw is `Err`.
pub fn from_entries(value: &JsValue) -> Result<Option<Value>, String> {
    let o = from_entries_checked(value).map_err(|e| error_text(&e))?;
    to_json(&o, "headers").map_err(String::from)
}

/// Values of type `V` by string key: where each is in a list, through crate::json's map (its
/// hash index; no second hash map in the `.wasm`).
pub struct Indexed<V> {
    at: crate::json::Map,
    items: Vec<V>,
}

impl<V> Indexed<V> {
    pub const fn new() -> Self {
        Indexed {
            at: crate::json::Map::new(),
            items: Vec::new(),
        }
    }

    pub fn get(&self, key: &str) -> Option<&V> {
        let i = self.at.get(key)?.as_u64()?;
        self.item(i as usize)
    }

    /// The place of the item under `key`.
    pub fn place(&self, key: &str) -> Option<usize> {
        self.at.get(key)?.as_u64().map(|i| i as usize)
    }

    /// The `i`th item inserted.
    pub fn item(&self, i: usize) -> Option<&V> {
        self.items.get(i)
    }

    /// Adds `value` under `key`; its place among the items.
    pub fn insert(&mut self, key: String, value: V) -> usize {
        let i = self.items.len();
        self.at.insert(key, Value::from(i));
        self.items.push(value);
        i
    }
}

thread_local! {
    /// JS strings for the property names and tags the binding uses, made once: creating a JS
    /// string from wasm memory costs a TextDecoder call, several times a property access.
    static KEYS: RefCell<Indexed<JsValue>> = const { RefCell::new(Indexed::new()) };
}

/// The JS string for a fixed name, created once per instance.
pub fn key(name: &'static str) -> JsValue {
    KEYS.with(|keys| {
        if let Some(v) = keys.borrow().get(name) {
            return v.clone();
        }
        let v = JsValue::from_str(name);
        keys.borrow_mut().insert(name.to_owned(), v.clone());
        v
    })
}

/// `obj[name]`, `undefined` when absent, when `obj` is no object, or when the read throws:
/// for objects this package made, and for reads where a failure counts as absence.
/// Caller values are read with [`read`].
pub fn get(obj: &JsValue, name: &'static str) -> JsValue {
    read(obj, name).unwrap_or(JsValue::UNDEFINED)
}

/// `obj[name]` of a caller's value, `undefined` when `obj` is no object; a throwing getter
/// or Proxy trap is `Err` with the thrown value (pi would throw it at the same read).
pub fn read(obj: &JsValue, name: &'static str) -> Result<JsValue, Thrown> {
    if !obj.is_object() && !obj.is_function() {
        return Ok(JsValue::UNDEFINED);
    }
    Reflect::get(obj, &key(name)).map_err(thrown)
}

/// `obj[name]` of a caller's value if it is a function; a throwing read is `Err`.
pub fn read_fn(obj: &JsValue, name: &'static str) -> Result<Option<Function>, Thrown> {
    Ok(read(obj, name)?.dyn_into::<Function>().ok())
}

pub fn set(obj: &JsValue, name: &'static str, v: &JsValue) {
    // Setting on a plain object we created cannot fail.
    let _ = Reflect::set(obj, &key(name), v);
}

/// Why a caller's value could not be read: the text, naming the value, and what reading it
/// threw (a getter's or a Proxy trap's error, a BigInt's TypeError), which the error raised
/// for it carries as its `cause`.
#[derive(Debug)]
pub struct Unreadable {
    pub message: String,
    pub cause: Option<JsValue>,
}

impl From<Unreadable> for String {
    fn from(u: Unreadable) -> String {
        u.message
    }
}

/// A JS value as JSON (`JSON.stringify` semantics: `undefined` members and functions
/// dropped, `toJSON` honoured). `None` for `undefined` and functions; `Err` for cycles or
/// BigInt, naming `what`.
pub fn to_json(v: &JsValue, what: &str) -> Result<Option<Value>, Unreadable> {
    if v.is_undefined() || v.is_function() {
        return Ok(None);
    }
    let text = json_stringify(v).map_err(|e| {
        let why = error_text(&e);
        // JSON.stringify runs out of stack far beyond the depth the core reads at all: say so
        // rather than quote the engine's stack message.
        let message = if crate::text::contains(&why, "call stack") {
            format!(
                "{what} cannot be converted to JSON: it is nested deeper than {} levels (the limit)",
                crate::json::MAX_DEPTH
            )
        } else {
            format!("{what} cannot be converted to JSON: {why}")
        };
        Unreadable {
            message,
            cause: Some(e),
        }
    })?;
    let Some(text) = text.as_string() else {
        return Ok(None);
    };
    crate::json::parse(&text).map(Some).map_err(|e| Unreadable {
        message: format!("{what} cannot be read as JSON: {e}"),
        cause: None,
    })
}

/// A JSON value as a fresh JS value (lone surrogates restored: crate::json; `-0` kept), each
/// host value within it ([`JsHost`]) the host's own value, unread.
pub fn from_json(v: &Value) -> JsValue {
    // A primitive is made directly (no JSON text, no `JSON.parse` crossing).
    match v {
        Value::Null => return JsValue::NULL,
        Value::Bool(b) => return JsValue::from_bool(*b),
        Value::Number(n) => return n.as_f64().map_or(JsValue::NULL, JsValue::from_f64),
        Value::String(s) => return js_str(s),
        _ => {}
    }
    if !v.has_host() {
        return JSON::parse(&crate::json::json_for_js(v)).unwrap_or(JsValue::UNDEFINED);
    }
    if let Value::Host(h) = v {
        return host_js(h);
    }
    let js = JSON::parse(&crate::json::json_skeleton_for_js(v)).unwrap_or(JsValue::UNDEFINED);
    put_hosts(&js, v);
    js
}

/// Puts each host value within `v` into `js`, the JSON copy of `v` in which it is `null`.
fn put_hosts(js: &JsValue, v: &Value) {
    // Only the members that hold one are named in JS (a key made from wasm memory costs a
    // TextDecoder call).
    let put = |key: JsValue, item: &Value| match item {
        Value::Host(h) => {
            let _ = Reflect::set(js, &key, &host_js(h));
        }
        _ => {
            if let Ok(inner) = Reflect::get(js, &key) {
                put_hosts(&inner, item);
            }
        }
    };
    match v {
        Value::Object(o) => o
            .iter()
            .filter(|(_, item)| item.has_host())
            .for_each(|(k, item)| put(js_str(k), item)),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .filter(|(_, item)| item.has_host())
            .for_each(|(i, item)| put(JsValue::from_f64(i as f64), item)),
        _ => {}
    }
}

/// The JS value of a host value: the object itself.
fn host_js(h: &crate::json::Host) -> JsValue {
    match h.node().downcast_ref::<JsValue>() {
        Some(js) => js.clone(),
        None => h.value().map_or(JsValue::UNDEFINED, from_json),
    }
}

/// A JS value the core passes along unread (a tool result's `content`): read as JSON (with
/// [`to_json`]) only when the core looks into it.
pub struct JsHost {
    pub value: JsValue,
    /// What it is, for the error when it cannot be read.
    pub what: &'static str,
}

impl crate::json::HostValue for JsHost {
    fn read(&self) -> Result<Option<Value>, String> {
        to_json(&self.value, self.what).map_err(|u| u.message)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        &self.value
    }
}

/// A core string as the JS string it stands for (a lone surrogate restored: crate::json).
pub fn js_str(s: &str) -> JsValue {
    if !crate::json::has_lone(s) {
        return JsValue::from_str(s);
    }
    JSON::parse(&crate::json::stringify(&Value::String(s.to_string())))
        .unwrap_or_else(|_| JsValue::from_str(s))
}

/// `Array.isArray(v)`; a value that throws on the question (a revoked Proxy) is no array.
pub fn is_array(v: &JsValue) -> bool {
    is_array_checked(v).unwrap_or(false)
}

/// `typeof`-style description for error messages.
pub fn describe(v: &JsValue) -> &'static str {
    if v.is_undefined() {
        "undefined"
    } else if v.is_null() {
        "null"
    } else if is_array(v) {
        "an array"
    } else if v.is_function() {
        "a function"
    } else if v.is_string() {
        "a string"
    } else if v.as_f64().is_some() {
        "a number"
    } else if v.as_bool().is_some() {
        "a boolean"
    } else if v.is_object() {
        "an object"
    } else {
        "a value of another type"
    }
}
