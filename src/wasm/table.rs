//! The identity table of one run: each JS object that enters the core (a message, a tool
//! result, arguments) is converted once and keeps its identity on the way back out, so the
//! user's prompt object is the very object in `message_start`, `message_end` and
//! `agent_end.messages`, and a tool's result object is the one `tool_execution_end`
//! carries, as in pi. An object the core made is converted once and then reused, so
//! `message_start` and `message_end` share it too.
//!
//! JS → Rust is keyed by a `WeakMap` (JS identity); Rust → JS by the `Rc`'s address, with
//! the `Rc` kept alive by the table so an address is never reused during the run.
//!
//! The core's copy is taken when an object is first seen. An object changed in place after
//! that keeps its old content on the Rust side (JS still gets the object itself); objects
//! known to change, such as a stream's live partial, are converted with `snapshot` instead.

use std::cell::RefCell;
use std::rc::Rc;

use crate::json::Value;
use js_sys::WeakMap;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::js::{call_method, from_json, to_json, Indexed, JsHost, Unreadable};
use crate::error::Thrown;

/// A JS-callable function owned by Rust.
pub type Callback = Closure<dyn Fn(JsValue) -> Result<(), JsValue>>;

pub struct Table {
    ids: WeakMap,
    /// Each value the run has in both forms, by its address (as decimal text) and by its
    /// place, which the JS object carries in `ids`.
    values: RefCell<Indexed<(Rc<Value>, JsValue)>>,
    /// Callbacks handed to JS during the run (a tool's `onUpdate`). Owned here and freed
    /// with the run: a closure given away with `into_js_value` is never freed, and one that
    /// holds the table kept every value of the run alive (a leak of the whole run).
    callbacks: RefCell<Vec<(Callback, Option<js_sys::Function>)>>,
    /// The glue object of src/js/loop.js: its `guard(fn)` gives `[wrapper, revoke]`, a JS
    /// function that calls `fn` until revoked; its readers of caller values (`items`,
    /// `readTool`) run where a throwing trap or getter is a plain JS throw.
    glue: RefCell<JsValue>,
    /// The run is checkpointed (`onCheckpoint`): every checkpoint is JSON, so a tool result's
    /// values are read as JSON when it arrives ([`Table::json_results`]).
    json_results: std::cell::Cell<bool>,
}

impl Drop for Table {
    /// The run is over: its callbacks are revoked (a late call from a tool does nothing)
    /// before the closures behind them are freed.
    fn drop(&mut self) {
        for (_, revoke) in self.callbacks.get_mut().iter() {
            if let Some(r) = revoke {
                let _ = r.call0(&JsValue::UNDEFINED);
            }
        }
    }
}

impl Default for Table {
    fn default() -> Self {
        Table {
            ids: WeakMap::new(),
            values: RefCell::new(Indexed::new()),
            callbacks: RefCell::new(Vec::new()),
            glue: RefCell::new(JsValue::UNDEFINED),
            json_results: std::cell::Cell::new(false),
        }
    }
}

/// The value's address as decimal text (the key of `values`), written on the stack: the
/// lookup in `to_js` allocates nothing.
struct Address([u8; 20], usize);

impl Address {
    fn of(rc: &Rc<Value>) -> Address {
        let mut n = Rc::as_ptr(rc) as usize;
        let mut digits = [b'0'; 20];
        let mut start = digits.len();
        while let Some(d) = start.checked_sub(1).and_then(|i| digits.get_mut(i)) {
            *d = b'0' + (n % 10) as u8;
            start -= 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        Address(digits, start)
    }

    fn text(&self) -> &str {
        let digits = self.0.get(self.1..).unwrap_or_default();
        std::str::from_utf8(digits).unwrap_or_default()
    }
}

impl Table {
    pub fn new() -> Rc<Table> {
        Rc::new(Table::default())
    }

    fn register(&self, rc: Rc<Value>, js: JsValue) -> usize {
        let address = Address::of(&rc).text().to_owned();
        self.values.borrow_mut().insert(address, (rc, js))
    }

    /// The core's value for a JS value: the known one for an object seen before, else a
    /// conversion (JSON semantics). `Err` names `what` when it is not convertible.
    pub fn to_rust(&self, js: &JsValue, what: &str) -> Result<Rc<Value>, Unreadable> {
        let is_object = js.is_object();
        if let Some(rc) = self.known(js) {
            return Ok(rc);
        }
        let value = to_json(js, what)?.unwrap_or(Value::Null);
        let rc = Rc::new(value);
        if is_object {
            let i = self.register(rc.clone(), js.clone());
            self.ids
                .set(js.unchecked_ref(), &JsValue::from_f64(i as f64));
        }
        Ok(rc)
    }

    /// The core's value for a JS object seen before (no caller code runs: a `WeakMap` lookup).
    pub fn known(&self, js: &JsValue) -> Option<Rc<Value>> {
        if !js.is_object() {
            return None;
        }
        let i = self.ids.get(js.unchecked_ref()).as_f64()?;
        let values = self.values.borrow();
        values.item(i as usize).map(|(rc, _)| rc.clone())
    }

    /// A conversion that is not remembered, for objects that keep changing after they are
    /// seen (a response stream's live partial, which pi-ai mutates into the final message).
    pub fn snapshot(&self, js: &JsValue, what: &str) -> Result<Rc<Value>, Unreadable> {
        Ok(Rc::new(to_json(js, what)?.unwrap_or(Value::Null)))
    }

    /// The JS value for a core value: the original object when it came from JS (or was
    /// already sent), else a fresh conversion that is remembered.
    pub fn to_js(&self, rc: &Rc<Value>) -> JsValue {
        {
            if let Some((_, js)) = self.values.borrow().get(Address::of(rc).text()) {
                return js.clone();
            }
        }
        let js = from_json(rc);
        if js.is_object() {
            let i = self.register(rc.clone(), js.clone());
            self.ids
                .set(js.unchecked_ref(), &JsValue::from_f64(i as f64));
        }
        js
    }

    /// The core's value for a result object (a tool's) read by the glue's `split`: its own
    /// enumerable members, each JSON primitive as JSON and each other value kept as the JS
    /// value itself ([`JsHost`]), unread. Not paired with the object ([`Table::register_pair`]
    /// does that). A throwing getter or trap is `Err` with what it threw.
    pub fn split(&self, js: &JsValue, what: &'static str) -> Result<Rc<Value>, Thrown> {
        let parts = js_sys::Array::from(&self.glue("split", &[js])?);
        let text = parts.get(0).as_string().unwrap_or_default();
        let mut value = crate::json::parse(&text).map_err(|e| {
            Thrown::new(Unreadable {
                message: format!("{what} cannot be read as JSON: {e}"),
                cause: None,
            })
        })?;
        let places = js_sys::Array::from(&parts.get(1));
        let values = js_sys::Array::from(&parts.get(2));
        if let Value::Object(o) = &mut value {
            for (place, v) in places.iter().zip(values.iter()) {
                let slot = place.as_f64().and_then(|p| o.value_at_mut(p as usize));
                if let Some(slot) = slot {
                    *slot = Value::Host(crate::json::Host::new(JsHost { value: v, what }));
                }
            }
        }
        Ok(Rc::new(value))
    }

    /// Pairs a core value with a JS object made for it (a copy built in JS), so the object is
    /// what JS gets for it.
    pub fn register_pair(&self, rc: Rc<Value>, js: JsValue) {
        if js.is_object() {
            let i = self.register(rc, js.clone());
            self.ids
                .set(js.unchecked_ref(), &JsValue::from_f64(i as f64));
        }
    }

    /// A value the core passes along without reading (a tool's partial result): no
    /// conversion, and the same JS value comes back out.
    pub fn opaque(&self, js: JsValue) -> Rc<Value> {
        let rc = Rc::new(Value::Null);
        self.register(rc.clone(), js);
        rc
    }

    /// Whether tool results must be JSON (see the field).
    pub fn json_results(&self) -> bool {
        self.json_results.get()
    }

    pub fn set_json_results(&self, on: bool) {
        self.json_results.set(on);
    }

    /// Sets the glue (see the field).
    pub fn set_glue(&self, glue: &JsValue) {
        *self.glue.borrow_mut() = glue.clone();
    }

    /// Calls the glue's function `name` (no borrow is held across the call).
    pub fn glue(&self, name: &'static str, args: &[&JsValue]) -> Result<JsValue, Thrown> {
        let glue = self.glue.borrow().clone();
        call_method(&glue, name, args)
    }

    /// `[obj[a], obj[b], …]` for `names` `"a,b,…"`, read by the glue's `fields` (a throwing
    /// getter or trap is `Err`): a fresh array, read without running caller code.
    pub fn fields(&self, obj: &JsValue, names: &'static str) -> Result<js_sys::Array, Thrown> {
        Ok(self
            .glue("fields", &[obj, &super::js::key(names)])?
            .unchecked_into())
    }

    /// A plain copy of the result object `obj` (`view` in the glue): its own enumerable
    /// properties, and `names` ("a,b,…") read as `obj[name]`, so that a class's getters or a
    /// Proxy's `get` trap give what pi's reads of them give. A value that is no object, or an
    /// array, is given back as it is (the loop's checks name it).
    pub fn view(&self, obj: &JsValue, names: &'static str) -> Result<JsValue, Thrown> {
        if !(obj.is_object() || obj.is_function()) || js_sys::Array::is_array(obj) {
            return Ok(obj.clone());
        }
        self.glue("view", &[obj, &super::js::key(names)])
    }

    /// Keeps `callback` until the run ends and returns the JS function to hand out for it.
    pub fn keep_callback(&self, callback: Callback) -> JsValue {
        let target: JsValue = callback.as_ref().clone();
        let guarded = self
            .glue("guard", &[&target])
            .ok()
            .map(|pair| js_sys::Array::from(&pair));
        let (js, revoke) = match guarded {
            Some(pair) => (pair.get(0), pair.get(1).dyn_into::<js_sys::Function>().ok()),
            None => (target, None),
        };
        self.callbacks.borrow_mut().push((callback, revoke));
        js
    }

    /// A JS array of core values.
    pub fn array(&self, items: &[Rc<Value>]) -> js_sys::Array {
        items.iter().map(|m| self.to_js(m)).collect()
    }
}
