//! Awaiting a Promise from Rust, cheaply: the one hot await of the binding (every event the
//! sink returns a Promise for, every hook, tool and stream step).
//!
//! `wasm_bindgen_futures::JsFuture` makes two wasm-bindgen closures per Promise (each with
//! its table slot and finalizer), which showed as the largest single cost of a turn in
//! profiles. Here two closures live for the whole instance, and the glue's `awaitInto` (one
//! crossing) hands each thenable's settlement to them with its slot number: `await v` made in
//! JS, where reading `then`, `Promise.resolve` and `then` cost no crossing each.
//! The settled value waits in its slot until the future is polled.
//!
//! A future dropped before its Promise settled frees its slot at once: slots carry a
//! generation, passed along with the number, and a late call for an older generation is
//! ignored. (A Promise that never settles, a cancelled timer's, holds no slot.)

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::glue::Glue;

#[derive(Default)]
struct Slot {
    generation: u32,
    result: Option<Result<JsValue, JsValue>>,
    waker: Option<Waker>,
    taken: bool,
}

#[derive(Default)]
struct Slots {
    slots: Vec<Slot>,
    free: Vec<u32>,
}

impl Slots {
    /// A free slot: its number and generation.
    fn take(&mut self) -> (u32, u32) {
        let i = match self.free.pop() {
            Some(i) => i,
            None => {
                self.slots.push(Slot::default());
                u32::try_from(self.slots.len() - 1).unwrap_or(u32::MAX)
            }
        };
        match self.slots.get_mut(i as usize) {
            Some(s) => {
                s.taken = true;
                (i, s.generation)
            }
            None => (i, 0),
        }
    }

    fn release(&mut self, i: u32) {
        if let Some(s) = self.slots.get_mut(i as usize) {
            if s.taken {
                s.taken = false;
                s.generation = s.generation.wrapping_add(1);
                s.result = None;
                s.waker = None;
                self.free.push(i);
            }
        }
    }

    /// Slot `i` while it is taken in `generation`.
    fn get(&mut self, i: u32, generation: u32) -> Option<&mut Slot> {
        self.slots
            .get_mut(i as usize)
            .filter(|s| s.taken && s.generation == generation)
    }
}

/// Called from JS when the Promise of slot `i` in `generation` settled.
fn settled(i: u32, generation: u32, result: Result<JsValue, JsValue>) {
    let waker = SLOTS.with(|s| {
        let mut s = s.borrow_mut();
        let slot = s.get(i, generation)?;
        // Once: the glue may end an await of an aborted run that settles later anyway.
        if slot.result.is_some() {
            return None;
        }
        slot.result = Some(result);
        slot.waker.take()
    });
    // Outside the borrow: waking only queues the task.
    if let Some(w) = waker {
        w.wake();
    }
}

thread_local! {
    static SLOTS: RefCell<Slots> = RefCell::new(Slots::default());
    /// `(slot, generation, value, rejected)`, called by the glue's `awaitInto`.
    static ON_SETTLED: Closure<dyn Fn(u32, u32, JsValue, bool)> =
        Closure::new(|i: u32, g: u32, v: JsValue, rejected: bool| {
            settled(i, g, if rejected { Err(v) } else { Ok(v) })
        });
}

/// The settlement of a thenable, as `await v`: `Err` is the rejection value.
pub struct Settling {
    slot: u32,
    generation: u32,
}

thread_local! {
    /// The run ([`InRun`]) being polled now; 0 for none.
    static RUN: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    /// The glue whose `awaitInto` every await goes through: each entry point's (they share
    /// it), installed when its run's table is made (table.rs).
    /// (`undefined` before the first run: an await then throws a TypeError, never reached.)
    static GLUE: RefCell<JsValue> = const { RefCell::new(JsValue::UNDEFINED) };
}

/// Makes `glue`'s `awaitInto` the one awaits use. A run's glue (pending.js `runGlue`) holds
/// that run's objects; the one kept is the shared object it inherits `awaitInto` from, so no
/// run's objects outlive it here.
pub fn install(glue: &Glue) {
    let glue: &js_sys::Object = glue.unchecked_ref();
    let shared = if js_sys::Object::has_own(glue, &"awaitInto".into()) {
        glue.clone()
    } else {
        js_sys::Object::get_prototype_of(glue)
    };
    GLUE.with(|g| *g.borrow_mut() = shared.into());
}

impl Settling {
    /// Starts awaiting `v` when it is a thenable (its `then` read now: a throwing getter is
    /// `Err`); `None` for any other value, which `await` would give back as it is, unless
    /// `plain`: then it is awaited as `Promise.resolve(v)`, a microtask later.
    pub fn start(v: &JsValue, plain: bool) -> Result<Option<Settling>, JsValue> {
        let (slot, generation) = SLOTS.with(|s| s.borrow_mut().take());
        // (Not borrowed while JS runs: a `then` getter is the caller's code.)
        let glue: Glue = GLUE.with(|g| g.borrow().clone()).unchecked_into();
        let run = RUN.with(std::cell::Cell::get);
        let started =
            ON_SETTLED.with(|f| glue.await_into(v, f.as_ref(), slot, generation, plain, run));
        match started {
            Ok(true) => Ok(Some(Settling { slot, generation })),
            other => {
                SLOTS.with(|s| s.borrow_mut().release(slot));
                other.map(|_| None)
            }
        }
    }
}

/// `run`'s future polled with `id` as the run its awaits belong to, so that the glue can end
/// those an aborted run waits on too long (`abortGraceMs`, loop.js `boundAwaits`).
pub struct InRun<'a, T> {
    pub id: u32,
    pub run: futures::future::LocalBoxFuture<'a, T>,
}

impl<T> Future for InRun<'_, T> {
    type Output = T;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let outer = RUN.with(|r| r.replace(self.id));
        let out = self.run.as_mut().poll(cx);
        RUN.with(|r| r.set(outer));
        out
    }
}

impl Future for Settling {
    type Output = Result<JsValue, JsValue>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let (slot, generation) = (self.slot, self.generation);
        SLOTS.with(|s| {
            let mut s = s.borrow_mut();
            let Some(entry) = s.get(slot, generation) else {
                // Polled again after it was ready: not done by the executors here.
                return Poll::Ready(Err(JsValue::from_str(
                    "internal: an awaited Promise was polled after it settled",
                )));
            };
            match entry.result.take() {
                Some(r) => {
                    s.release(slot);
                    Poll::Ready(r)
                }
                None => {
                    entry.waker = Some(cx.waker().clone());
                    Poll::Pending
                }
            }
        })
    }
}

impl Drop for Settling {
    /// Frees the slot unless it was freed when the future completed (a newer generation).
    fn drop(&mut self) {
        let (slot, generation) = (self.slot, self.generation);
        SLOTS.with(|s| {
            let mut s = s.borrow_mut();
            if s.get(slot, generation).is_some() {
                s.release(slot);
            }
        });
    }
}
