//! A test double of the observational event stream behind `agentLoop`/`agentLoopContinue`
//! (L-17, L-31), which the package implements in JS (src/js/loop.js `observe`): the run
//! pushes events without waiting for the consumer; the consumer pulls them in order and
//! reads the run's result. Native tests drive the core through it.
//!
//! As the JS one (L-32, L-171, better than pi, whose stream never completes when the run
//! rejects): `next()` yields the error after the events already pushed, and `result()`
//! resolves with the error.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::task::{Poll, Waker};

use futures::future::poll_fn;

use pi_agent_wasm::error::Result;
use pi_agent_wasm::event::AgentEvent;
use pi_agent_wasm::io::{Emitter, EventSink, HostFuture};
use pi_agent_wasm::message::AgentMessage;

#[derive(Default)]
struct State {
    queue: VecDeque<AgentEvent>,
    /// Set once: by `agent_end` (its messages) or by the run's end (`finish`).
    outcome: Option<Result<Vec<AgentMessage>>>,
    /// The error was already yielded by `next()`.
    error_taken: bool,
    wakers: Vec<Waker>,
}

/// A push queue of a run's events with the run's result (`EventStream<AgentEvent, …>`).
#[derive(Clone, Default)]
pub struct AgentEventStream {
    state: Rc<RefCell<State>>,
}

impl AgentEventStream {
    pub fn new() -> Self {
        Self::default()
    }

    fn wake(&self) {
        let wakers = std::mem::take(&mut self.state.borrow_mut().wakers);
        for w in wakers {
            w.wake();
        }
    }

    /// Records how the run ended. The first outcome wins (an `agent_end` already seen).
    pub fn finish(&self, outcome: Result<Vec<AgentMessage>>) {
        {
            let mut s = self.state.borrow_mut();
            if s.outcome.is_none() {
                s.outcome = Some(outcome);
            }
        }
        self.wake();
    }

    /// The next event; `None` once the run has ended and every event was read; `Some(Err)`
    /// once, after the last event, when the run rejected.
    pub async fn next(&self) -> Option<Result<AgentEvent>> {
        poll_fn(|cx| {
            let mut s = self.state.borrow_mut();
            if let Some(e) = s.queue.pop_front() {
                return Poll::Ready(Some(Ok(e)));
            }
            match &s.outcome {
                None => {
                    s.wakers.push(cx.waker().clone());
                    Poll::Pending
                }
                Some(Err(e)) if !s.error_taken => {
                    let e = e.clone();
                    s.error_taken = true;
                    Poll::Ready(Some(Err(e)))
                }
                Some(_) => Poll::Ready(None),
            }
        })
        .await
    }

    /// The run's new messages (`agent_end.messages`), or its error.
    pub async fn result(&self) -> Result<Vec<AgentMessage>> {
        poll_fn(|cx| {
            let mut s = self.state.borrow_mut();
            match &s.outcome {
                Some(r) => Poll::Ready(r.clone()),
                None => {
                    s.wakers.push(cx.waker().clone());
                    Poll::Pending
                }
            }
        })
        .await
    }

    /// Drives `run` to completion, recording its outcome. The host spawns this.
    pub async fn drive(self, run: impl std::future::Future<Output = Result<Vec<AgentMessage>>>) {
        let outcome = run.await;
        self.finish(outcome);
    }
}

impl EventSink for AgentEventStream {
    fn emit(&self, event: AgentEvent) -> HostFuture<'_, ()> {
        {
            let mut s = self.state.borrow_mut();
            // Pushes after completion are ignored (L-14).
            if s.outcome.is_none() {
                if let AgentEvent::AgentEnd { messages } = &event {
                    s.outcome = Some(Ok(messages.clone()));
                }
                s.queue.push_back(event);
            }
        }
        self.wake();
        Box::pin(async { Ok(()) })
    }

    fn emitter(&self) -> Emitter {
        let stream = self.clone();
        Rc::new(move |event| {
            // This sink never waits: the event is queued now.
            drop(stream.emit(event));
            Ok(Box::pin(async { Ok(()) }))
        })
    }
}
