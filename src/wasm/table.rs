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

use super::glue::Glue;
use super::js::{from_json, thrown, to_json, Indexed, JsHost, Unreadable};
use crate::error::Thrown;

/// What a tool's `onUpdate` does with a partial result; `Err` is thrown to the tool.
pub type Update = Rc<dyn Fn(JsValue) -> Result<(), JsValue>>;

/// The `onUpdate` functions of every run's tool calls, by slot, each with the generation its
/// bound function names: one wasm closure for the instance, bound per call to its slot
/// (`Function.prototype.bind`, a native call), instead of a closure and a finalizer per
/// call. A run frees its slots when its table drops; a late call for a freed slot (an older
/// generation) does nothing.
#[derive(Default)]
struct Updates {
    slots: Vec<(u32, Option<Update>)>,
    free: Vec<u32>,
}

thread_local! {
    static UPDATES: RefCell<Updates> = RefCell::new(Updates::default());
    static ON_UPDATE: Closure<dyn Fn(u32, u32, JsValue) -> Result<(), JsValue>> =
        Closure::new(|i: u32, g: u32, partial: JsValue| {
            // Not borrowed while the update runs: it is the caller's code.
            let update = UPDATES.with(|u| {
                let u = u.borrow();
                let (generation, update) = u.slots.get(i as usize)?;
                (*generation == g).then(|| update.clone())?
            });
            update.map_or(Ok(()), |f| f(partial))
        });
}

/// A slot of [`UPDATES`] that a run holds; dropping it frees the slot.
struct UpdateSlot(u32);

impl Drop for UpdateSlot {
    fn drop(&mut self) {
        UPDATES.with(|u| {
            let u = &mut *u.borrow_mut();
            if let Some(slot) = u.slots.get_mut(self.0 as usize) {
                slot.0 = slot.0.wrapping_add(1);
                slot.1 = None;
                u.free.push(self.0);
            }
        });
    }
}

pub struct Table {
    ids: WeakMap,
    /// Each value the run has in both forms, by its address (as decimal text) and by its
    /// place, which the JS object carries in `ids`.
    values: RefCell<Indexed<(Rc<Value>, JsValue)>>,
    /// The JS side of `values`, by place: a list of the run's objects is made in one
    /// crossing (a transcript, every turn), not one per message ([`Table::array`]).
    objects: js_sys::Array,
    /// The list [`Table::array`] keeps: the transcript, which grows turn by turn. The core's
    /// values, and the glue's own copy of the list, never handed out. A list that starts as
    /// it crosses only its new items, and a list a hook gives back that starts as it is
    /// known at once ([`Table::known_start`]).
    list: RefCell<(Vec<Rc<Value>>, js_sys::Array)>,
    /// The slots of the `onUpdate` functions handed out during the run, freed with it (an
    /// update holds the table weakly: one holding it strongly kept every value of the run
    /// alive).
    updates: RefCell<Vec<UpdateSlot>>,
    /// The glue object of src/js/loop.js: its readers of caller values (`items`,
    /// `readTool`) run where a throwing trap or getter is a plain JS throw.
    glue: Glue,
    /// The run is checkpointed (`onCheckpoint`): every checkpoint is JSON, so a tool result's
    /// values are read as JSON when it arrives ([`Table::json_results`]).
    json_results: std::cell::Cell<bool>,
}

impl Table {
    pub fn new(glue: Glue) -> Rc<Table> {
        // Every entry point makes its table first: its awaits go through this glue.
        super::settle::install(&glue);
        Rc::new(Table {
            ids: WeakMap::new(),
            values: RefCell::new(Indexed::new()),
            objects: js_sys::Array::new(),
            list: RefCell::new((Vec::new(), js_sys::Array::new())),
            updates: RefCell::new(Vec::new()),
            glue,
            json_results: std::cell::Cell::new(false),
        })
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
    fn register(&self, rc: Rc<Value>, js: JsValue) -> usize {
        let address = Address::of(&rc).text().to_owned();
        self.objects.push(&js);
        self.values.borrow_mut().insert(address, (rc, js))
    }

    /// The place of a core value's JS object, converting it first when it has none yet;
    /// `None` for a value whose JS form is no object (it has no place).
    fn place_of(&self, rc: &Rc<Value>) -> Option<u32> {
        let address = Address::of(rc);
        if let Some(i) = self.values.borrow().place(address.text()) {
            return u32::try_from(i).ok();
        }
        self.to_js(rc);
        let i = self.values.borrow().place(address.text())?;
        u32::try_from(i).ok()
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
        let js = self.tool_result_js(rc).unwrap_or_else(|| from_json(rc));
        if js.is_object() {
            let i = self.register(rc.clone(), js.clone());
            self.ids
                .set(js.unchecked_ref(), &JsValue::from_f64(i as f64));
        }
        js
    }

    /// A tool result message the core made (`agent::tools::tool_result_message`: these
    /// members, in this order), built by the glue's `toolResult`; `None` for any other value.
    fn tool_result_js(&self, v: &Value) -> Option<JsValue> {
        const MEMBERS: [&str; 9] = [
            "role",
            "toolCallId",
            "toolName",
            "content",
            "details",
            "usage",
            "isError",
            "durationMs",
            "timestamp",
        ];
        let Value::Object(o) = v else { return None };
        let mut names = MEMBERS.iter();
        if o.get_raw("role")?.as_str()? != "toolResult"
            || !o.iter().all(|(k, _)| names.any(|n| n == k))
        {
            return None;
        }
        let m = |k: &str| o.get_raw(k).map_or(JsValue::UNDEFINED, from_json);
        self.glue
            .tool_result(
                &m("toolCallId"),
                &m("toolName"),
                &m("content"),
                &m("details"),
                &m("usage"),
                &m("isError"),
                &m("durationMs"),
                &m("timestamp"),
            )
            .ok()
    }

    /// The core's value for a result object (a tool's) read by the glue's `split`: its own
    /// enumerable members, each JSON primitive as JSON and each other value kept as the JS
    /// value itself ([`JsHost`]), unread. Not paired with the object ([`Table::register_pair`]
    /// does that). A throwing getter or trap is `Err` with what it threw.
    pub fn split(&self, js: &JsValue, what: &'static str) -> Result<Rc<Value>, Thrown> {
        let parts = self.glue.split(js).map_err(thrown)?;
        // JSON.stringify's text of one flat object of JSON primitives: it always reads.
        let mut value =
            crate::json::parse(&parts.get(0).as_string().unwrap_or_default()).unwrap_or_default();
        if let Value::Object(o) = &mut value {
            // `[json, place, value, place, value, …]`
            for i in (1..parts.length()).step_by(2) {
                let slot = parts
                    .get(i)
                    .as_f64()
                    .and_then(|p| o.value_at_mut(p as usize));
                if let Some(slot) = slot {
                    let value = parts.get(i + 1);
                    *slot = Value::Host(crate::json::Host::new(JsHost { value, what }));
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

    /// The glue (see the field).
    pub fn glue(&self) -> &Glue {
        &self.glue
    }

    /// `[obj[a], obj[b], …]` for `names` `"a,b,…"`, read by the glue's `fields` (a throwing
    /// getter or trap is `Err`): a fresh array, read without running caller code.
    pub fn fields(&self, obj: &JsValue, names: &'static str) -> Result<js_sys::Array, Thrown> {
        self.glue
            .fields(obj, &super::js::key(names))
            .map_err(thrown)
    }

    /// A plain copy of the result object `obj` (`view` in the glue): its own enumerable
    /// properties, and `names` ("a,b,…") read as `obj[name]`, so that a class's getters or a
    /// Proxy's `get` trap give what pi's reads of them give. A value that is no object, or an
    /// array, is given back as it is (the loop's checks name it).
    pub fn view(&self, obj: &JsValue, names: &'static str) -> Result<JsValue, Thrown> {
        if !(obj.is_object() || obj.is_function()) || js_sys::Array::is_array(obj) {
            return Ok(obj.clone());
        }
        self.glue.view(obj, &super::js::key(names)).map_err(thrown)
    }

    /// The `onUpdate` function to hand out for `update` until the run ends; after it, a call
    /// does nothing.
    pub fn on_update(&self, update: Update) -> JsValue {
        let (i, generation) = UPDATES.with(|u| {
            let u = &mut *u.borrow_mut();
            let i = match u.free.pop() {
                Some(i) => i,
                None => {
                    u.slots.push((0, None));
                    u32::try_from(u.slots.len() - 1).unwrap_or(u32::MAX)
                }
            };
            match u.slots.get_mut(i as usize) {
                Some(slot) => {
                    slot.1 = Some(update);
                    (i, slot.0)
                }
                None => (i, 0),
            }
        });
        self.updates.borrow_mut().push(UpdateSlot(i));
        ON_UPDATE
            .with(|f| {
                f.as_ref().unchecked_ref::<js_sys::Function>().bind2(
                    &JsValue::UNDEFINED,
                    &JsValue::from(i),
                    &JsValue::from(generation),
                )
            })
            .into()
    }

    /// The core's values for the first items of `items` (a fresh array the glue made) that
    /// are the very objects of the list handed out last, in order: a hook that gives back
    /// the transcript it got (or one it extended) is known without a lookup per message.
    pub fn known_start(&self, items: &js_sys::Array) -> Vec<Rc<Value>> {
        let list = self.list.borrow();
        let n = self.glue.shared(items, &list.1).map_or(0, |n| n as usize);
        list.0.get(..n).unwrap_or_default().to_vec()
    }

    /// A JS array of core values: their objects, picked by place in one crossing. A list
    /// that starts as the kept one (the transcript, turn after turn) sends only the places
    /// of its new items. One that shares no start with it and is under half its length (a
    /// turn's tool results) leaves it kept; any other takes its place (the transcript a hook
    /// replaced).
    pub fn array(&self, items: &[Rc<Value>]) -> js_sys::Array {
        let mut list = self.list.borrow_mut();
        let keep = list
            .0
            .iter()
            .zip(items)
            .take_while(|(a, b)| Rc::ptr_eq(a, b))
            .count();
        let Some(places) = self.places(items.get(keep..).unwrap_or_default()) else {
            return self.each(items);
        };
        if keep == 0 && items.len() < list.0.len() / 2 {
            return self
                .glue
                .extend(&js_sys::Array::new(), 0, &self.objects, &places)
                .unwrap_or_else(|_| self.each(items));
        }
        list.0.truncate(keep);
        list.0
            .extend_from_slice(items.get(keep..).unwrap_or_default());
        match self
            .glue
            .extend(&list.1, keep as u32, &self.objects, &places)
        {
            Ok(array) => array,
            Err(_) => {
                *list = (Vec::new(), js_sys::Array::new());
                self.each(items)
            }
        }
    }

    /// The places of `items`' JS objects (converting those not converted yet); `None` when
    /// one has no place (its JS form is no object).
    pub fn places(&self, items: &[Rc<Value>]) -> Option<Vec<u32>> {
        let mut places = Vec::with_capacity(items.len());
        for m in items {
            places.push(self.place_of(m)?);
        }
        Some(places)
    }

    /// The run's JS objects by place.
    pub fn objects(&self) -> &js_sys::Array {
        &self.objects
    }

    /// A JS array of core values, each converted (or looked up) on its own.
    fn each(&self, items: &[Rc<Value>]) -> js_sys::Array {
        items.iter().map(|m| self.to_js(m)).collect()
    }
}
