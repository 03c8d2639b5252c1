//! Awaiting a native Promise from Rust, cheaply: the one hot await of the binding (every
//! event the sink returns a Promise for, every hook, tool and stream step).
//!
//! `wasm_bindgen_futures::JsFuture` makes two wasm-bindgen closures per Promise (each with
//! its table slot and finalizer), which showed as the largest single cost of a turn in
//! profiles. Here two closures live for the whole instance, and each Promise gets them
//! bound to its slot number (`Function.prototype.bind`, a native call): `then(ok, err)`.
//! The settled value waits in its slot until the future is polled.
//!
//! A future dropped before its Promise settled frees its slot at once: slots carry a
//! generation, bound along with the number, and a late call for an older generation is
//! ignored. (A Promise that never settles, a cancelled timer's, holds no slot.)

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

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
    static ON_OK: Closure<dyn Fn(u32, u32, JsValue)> =
        Closure::new(|i: u32, g: u32, v: JsValue| settled(i, g, Ok(v)));
    static ON_ERR: Closure<dyn Fn(u32, u32, JsValue)> =
        Closure::new(|i: u32, g: u32, e: JsValue| settled(i, g, Err(e)));
}

#[wasm_bindgen]
extern "C" {
    /// `Promise.prototype.then.call(p, ok, err)`: a native Promise's own `then`, whatever
    /// its `then` property says.
    #[wasm_bindgen(js_namespace = ["Promise", "prototype", "then"], js_name = call)]
    fn then_call(p: &Promise, ok: &JsValue, err: &JsValue);
}

/// The settlement of the native Promise `p`, as `await p`: `Err` is the rejection value.
pub struct Settling {
    slot: u32,
    generation: u32,
}

impl Settling {
    pub fn new(p: &Promise) -> Settling {
        let (slot, generation) = SLOTS.with(|s| s.borrow_mut().take());
        let (i, g) = (JsValue::from(slot), JsValue::from(generation));
        let bound = |f: &Closure<dyn Fn(u32, u32, JsValue)>| {
            f.as_ref()
                .unchecked_ref::<Function>()
                .bind2(&JsValue::UNDEFINED, &i, &g)
        };
        let ok = ON_OK.with(bound);
        let err = ON_ERR.with(bound);
        then_call(p, &ok, &err);
        Settling { slot, generation }
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
