//! Checkpoint and restore (`agent::checkpoint`), natively: a reference session with parallel
//! and sequential tools, a steering message and a follow-up is killed after every event
//! index, its position and transcript go through JSON, and a new host resumes it. The
//! final transcript must equal the uninterrupted one, apart from a call cut off while
//! running whose tool does not say `replay: "safe"` (it gets the interrupted error). No event is
//! delivered twice apart from a cut response's, none is lost, and no tool runs twice unless
//! it is safe to replay.
#![cfg(not(target_arch = "wasm32"))]
#![allow(
    clippy::disallowed_methods, // core's substring search: only the .wasm avoids it (size)
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
mod common;

use std::cell::RefCell;
use std::rc::Rc;

use common::*;
use futures::FutureExt;
use pi_agent_wasm::agent::checkpoint::{interrupted_call_text, Position, Stage, Tracker};
use pi_agent_wasm::agent::validate::pattern::NativePatterns;
use pi_agent_wasm::agent::Host;
use pi_agent_wasm::agent::{resume_agent_loop, run_agent_loop};
use pi_agent_wasm::error::Thrown;
use pi_agent_wasm::event::AgentEvent;
use pi_agent_wasm::io::*;
use pi_agent_wasm::json::Value;
use pi_agent_wasm::message::AgentMessage;
use pi_agent_wasm::value as json;

type Queue = Rc<RefCell<Vec<AgentMessage>>>;

/// The queues of an `Agent`: each poll takes everything queued.
struct QueueHooks {
    steering: Queue,
    follow_ups: Queue,
}

impl Hooks for QueueHooks {
    fn convert_to_llm<'a>(&'a self, messages: &'a [AgentMessage]) -> HostFuture<'a, LlmContext> {
        let out = messages.to_vec().into();
        async move { Ok(out) }.boxed_local()
    }
    fn get_steering_messages(&self) -> Option<HostFuture<'_, Vec<AgentMessage>>> {
        let taken = std::mem::take(&mut *self.steering.borrow_mut());
        Some(async move { Ok(taken) }.boxed_local())
    }
    fn get_follow_up_messages(&self) -> Option<HostFuture<'_, Vec<AgentMessage>>> {
        let taken = std::mem::take(&mut *self.follow_ups.borrow_mut());
        Some(async move { Ok(taken) }.boxed_local())
    }
}

/// What a host keeps to restore a run.
#[derive(Clone)]
struct Saved {
    transcript: Vec<AgentMessage>,
    position: Value,
    steering: Vec<AgentMessage>,
    follow_ups: Vec<AgentMessage>,
}

/// Records events, keeps the transcript as an `Agent` does (from `message_end`), queues the
/// steering message when call c1 ends, and "dies" at step `kill_at` (an event, or the
/// checkpoint before a tool runs): it saves what a host would and throws, which stops the run
/// there.
struct KillSink {
    events: RefCell<Vec<AgentEvent>>,
    transcript: RefCell<Vec<AgentMessage>>,
    kill_at: Option<usize>,
    saved: RefCell<Option<Saved>>,
    tracker: Rc<Tracker>,
    steering: Queue,
    follow_ups: Queue,
    delivered: Rc<RefCell<usize>>,
}

impl KillSink {
    fn deliver(&self, event: AgentEvent) -> Result<(), Thrown> {
        if let AgentEvent::MessageEnd { message } = &event {
            self.transcript.borrow_mut().push(message.clone());
        }
        if let AgentEvent::ToolExecutionEnd { tool_call_id, .. } = &event {
            if tool_call_id == "c1" {
                self.steering.borrow_mut().push(user("steer"));
            }
        }
        self.events.borrow_mut().push(event);
        self.step()
    }

    /// One more step (an event, or a checkpoint before a tool runs); dies at `kill_at`.
    fn step(&self) -> Result<(), Thrown> {
        let index = *self.delivered.borrow();
        *self.delivered.borrow_mut() += 1;
        if self.kill_at == Some(index) {
            let position = self.tracker.position().unwrap();
            *self.saved.borrow_mut() = Some(Saved {
                transcript: self.transcript.borrow().clone(),
                position: position.to_json(),
                steering: self.steering.borrow().clone(),
                follow_ups: self.follow_ups.borrow().clone(),
            });
            return Err(Thrown::new("killed"));
        }
        Ok(())
    }
}

/// The sink shared with a tool's `onUpdate` (which outlives the borrow).
#[derive(Clone)]
struct Shared(Rc<KillSink>);

impl EventSink for Shared {
    fn emit(&self, event: AgentEvent) -> HostFuture<'_, ()> {
        let r = self.0.deliver(event);
        async move { r }.boxed_local()
    }
    fn checkpoint(&self) -> HostFuture<'_, ()> {
        let r = self.0.step();
        async move { r }.boxed_local()
    }
    fn emitter(&self) -> Emitter {
        let sink = self.0.clone();
        // A kill at a tool's update rejects the tool's call, and so the run (L-106).
        Rc::new(move |event| {
            let r = sink.deliver(event);
            Ok(async move { r }.boxed_local())
        })
    }
}

fn scripts() -> Vec<Script> {
    vec![
        Script::tools(vec![
            tool_call("c1", "look", json!({"q": 1})),
            tool_call("c2", "look", json!({"q": 2})),
        ]),
        Script::tools(vec![
            tool_call("w1", "write", json!({"t": "a"})),
            tool_call("c3", "look", json!({"q": 3})),
        ]),
        Script::text("done"),
        Script::text("bye"),
    ]
}

fn tools(log: &Rc<RefCell<Vec<String>>>) -> Vec<Rc<dyn Tool>> {
    let mut look = FakeTool::new("look", Behavior::Echo).with_log(log.clone());
    look.replay_safe = true;
    let write = FakeTool::new(
        "write",
        Behavior::Updates(vec![json!({"progress": 1})], text_result("written")),
    )
    .with_mode(ExecutionMode::Sequential)
    .with_log(log.clone());
    vec![look.rc(), write.rc()]
}

/// One host: a model that serves `scripts` from the `first`-th on, fresh tools (their
/// executions go to the shared `log`), the queues, and a sink that dies at `kill_at`.
struct Host_ {
    clock: TestClock,
    patterns: NativePatterns,
    signal: TestSignal,
    model: Model,
    hooks: QueueHooks,
    sink: Shared,
    tracker: Rc<Tracker>,
}

fn host(
    first: usize,
    kill_at: Option<usize>,
    steering: Vec<AgentMessage>,
    follow_ups: Vec<AgentMessage>,
) -> Host_ {
    let model = Model::default();
    for s in scripts().into_iter().skip(first) {
        model.push(s);
    }
    let steering = Rc::new(RefCell::new(steering));
    let follow_ups = Rc::new(RefCell::new(follow_ups));
    let tracker = Rc::new(Tracker::new());
    Host_ {
        clock: TestClock::default(),
        patterns: NativePatterns::default(),
        signal: TestSignal::default(),
        model,
        hooks: QueueHooks {
            steering: steering.clone(),
            follow_ups: follow_ups.clone(),
        },
        sink: Shared(Rc::new(KillSink {
            events: RefCell::new(Vec::new()),
            transcript: RefCell::new(Vec::new()),
            kill_at,
            saved: RefCell::new(None),
            tracker: tracker.clone(),
            steering,
            follow_ups,
            delivered: Rc::new(RefCell::new(0)),
        })),
        tracker,
    }
}

impl Host_ {
    fn host(&self) -> Host<'_> {
        Host {
            clock: &self.clock,
            patterns: &self.patterns,
            signal: Some(&self.signal),
            sink: &self.sink,
            hooks: &self.hooks,
            stream_fn: Some(&self.model),
            tracker: &self.tracker,
        }
    }
}

fn labels(events: &[AgentEvent]) -> Vec<String> {
    events.iter().map(label).collect()
}

/// A message without the fields a clock sets.
fn timeless(m: &Value) -> Value {
    let mut m = m.clone();
    if let Some(o) = m.as_object_mut() {
        o.shift_remove("timestamp");
        o.shift_remove("durationMs");
    }
    m
}

fn start_config() -> LoopConfig {
    config()
}

#[test]
fn a_run_killed_after_any_event_resumes_to_the_same_transcript() {
    // The uninterrupted session.
    let log = Rc::new(RefCell::new(Vec::new()));
    let whole = host(0, None, vec![], vec![user("more")]);
    let out = futures::executor::block_on(run_agent_loop(
        &whole.host(),
        vec![user("go")],
        context(vec![], tools(&log)),
        start_config(),
    ))
    .unwrap();
    let expected_labels = labels(&whole.sink.0.events.borrow());
    let expected: Vec<Value> = out.iter().map(|m| timeless(m)).collect();
    assert_eq!(
        expected.len(),
        12,
        "prompt, 4 responses, 4 results, 2 queued messages"
    );
    assert_eq!(
        log.borrow()
            .iter()
            .filter(|l| l.starts_with("execute:"))
            .count(),
        4
    );

    // Every event, and every checkpoint before a tool runs, is a place to die.
    let total = *whole.sink.0.delivered.borrow();
    assert_eq!(
        total,
        expected_labels.len() + 4,
        "a checkpoint before each of the 4 executions"
    );
    let mut interrupted_cases = 0;
    let mut cut_responses = 0;
    for k in 0..total {
        let log = Rc::new(RefCell::new(Vec::new()));
        let first = host(0, Some(k), vec![], vec![user("more")]);
        let r = futures::executor::block_on(run_agent_loop(
            &first.host(),
            vec![user("go")],
            context(vec![], tools(&log)),
            start_config(),
        ));
        assert!(r.is_err(), "k={k}: the kill stops the run");
        let saved = first.sink.0.saved.borrow().clone().unwrap();

        // A new host, from what was saved, through JSON.
        let text = serde_json::to_string(&saved.position).unwrap();
        let position = Position::from_json(&serde_json::from_str(&text).unwrap()).unwrap();
        assert_eq!(
            position.to_json(),
            saved.position,
            "k={k}: the JSON round trip"
        );
        let answered = saved
            .transcript
            .iter()
            .filter(|m| m["role"] == "assistant")
            .count();
        let second = host(
            answered,
            None,
            saved.steering.clone(),
            saved.follow_ups.clone(),
        );
        let resumed = futures::executor::block_on(resume_agent_loop(
            &second.host(),
            context(saved.transcript.clone(), tools(&log)),
            start_config(),
            position.clone(),
        ))
        .unwrap_or_else(|e| panic!("k={k}: resume failed: {e:?}"));

        // The transcript: equal, but for calls cut off whose tool may not run again.
        let cut_off: Vec<String> = match &position.stage {
            Stage::Tools { executing, .. } => executing
                .iter()
                .filter(|id| id.starts_with('w'))
                .cloned()
                .collect(),
            _ => vec![],
        };
        // Events: the first host's, less a response cut while streaming, then the second's.
        let mut got = labels(&first.sink.0.events.borrow());
        if matches!(position.stage, Stage::Request(_)) {
            if let Some(s) = got.iter().rposition(|l| l == "message_start(assistant)") {
                if !got[s..].iter().any(|l| l == "message_end(assistant)") {
                    got.truncate(s);
                    cut_responses += 1;
                }
            }
        }
        let before = got.len();
        got.extend(labels(&second.sink.0.events.borrow()));
        // A call cut off after its checkpoint does not run again: its updates never come.
        let mut expected_here = expected_labels.clone();
        for c in &cut_off {
            let update = format!("tool_execution_update({c})");
            if !got[..before].contains(&update) {
                expected_here.retain(|l| *l != update);
            }
        }
        assert_eq!(got, expected_here, "k={k}: events");

        assert_eq!(resumed.len(), expected.len(), "k={k}");
        for (i, (m, e)) in resumed.iter().zip(&expected).enumerate() {
            let id = m["toolCallId"].as_str().unwrap_or("");
            if cut_off.iter().any(|c| c == id) {
                interrupted_cases += 1;
                assert_eq!(m["isError"], true, "k={k}");
                assert_eq!(
                    m["content"][0]["text"],
                    interrupted_call_text("write"),
                    "k={k}"
                );
            } else {
                assert_eq!(timeless(m), *e, "k={k}: message {i}");
            }
        }

        // No tool ran twice unless safe to replay; every call that succeeded ran.
        let log = log.borrow();
        for id in ["c1", "c2", "w1", "c3"] {
            let runs = log
                .iter()
                .filter(|l| **l == format!("execute:{id}"))
                .count();
            let limit = if id.starts_with('w') { 1 } else { 2 };
            assert!(runs <= limit, "k={k}: {id} ran {runs} times");
            if !cut_off.iter().any(|c| c == id) {
                assert!(runs >= 1, "k={k}: {id} never ran");
            }
        }
    }
    assert!(cut_responses >= 4, "kills inside each streamed response");
    assert!(interrupted_cases >= 1, "a kill while the write tool ran");
}

#[test]
fn a_finished_run_resumes_to_nothing_and_a_bad_position_is_refused() {
    let log = Rc::new(RefCell::new(Vec::new()));
    let h = host(0, None, vec![], vec![]);
    futures::executor::block_on(run_agent_loop(
        &h.host(),
        vec![user("go")],
        context(vec![], tools(&log)),
        config(),
    ))
    .unwrap();
    let done = h.tracker.position().unwrap();
    assert_eq!(done.stage, Stage::Done);
    let transcript = h.sink.0.transcript.borrow().clone();
    let again = host(0, None, vec![], vec![]);
    let out = futures::executor::block_on(resume_agent_loop(
        &again.host(),
        context(transcript.clone(), tools(&log)),
        config(),
        done.clone(),
    ))
    .unwrap();
    assert_eq!(out.len(), transcript.len());
    assert!(
        again.sink.0.events.borrow().is_empty(),
        "nothing is emitted again"
    );

    // More messages of the run than the transcript has.
    let mut wrong = done.clone();
    wrong.new = transcript.len() + 1;
    wrong.stage = Stage::Next {
        results: 0,
        has_more: false,
        explicit: false,
        end: false,
    };
    let e = futures::executor::block_on(resume_agent_loop(
        &again.host(),
        context(transcript.clone(), tools(&log)),
        config(),
        wrong,
    ))
    .unwrap_err();
    assert_eq!(e.code(), "invalid_input");
    assert!(e.message().contains("checkpoint"), "{}", e.message());

    // A turn whose response is not an assistant message.
    let mut wrong = done;
    wrong.stage = Stage::Tools {
        results: 1,
        ended: vec![],
        started: vec![],
        executing: vec![],
        announced: false,
    };
    let e = futures::executor::block_on(resume_agent_loop(
        &again.host(),
        context(transcript, tools(&log)),
        config(),
        wrong,
    ))
    .unwrap_err();
    assert!(e.message().contains("assistant"), "{}", e.message());

    // Ids that are not the turn's calls: the position is from another transcript.
    let calls = assistant(
        json!([
            tool_call("c1", "look", json!({})),
            tool_call("c2", "look", json!({}))
        ]),
        "toolUse",
    );
    let turn = vec![user("go"), msg(calls)];
    let at = |executing: Vec<&str>| Position {
        stage: Stage::Tools {
            results: 0,
            ended: vec![],
            started: executing.iter().map(|s| s.to_string()).collect(),
            executing: executing.iter().map(|s| s.to_string()).collect(),
            announced: false,
        },
        new: 2,
        model: Rc::new(json!({"id": "m"})),
        reasoning: None,
    };
    for (executing, why) in [
        (vec!["zzz"], "zzz is not a tool call"),
        (vec!["c1", "c1"], "c1 is listed twice"),
    ] {
        let e = futures::executor::block_on(resume_agent_loop(
            &again.host(),
            context(turn.clone(), tools(&log)),
            config(),
            at(executing),
        ))
        .unwrap_err();
        assert!(e.message().contains(why), "{}", e.message());
    }
    let mut answered = turn.clone();
    answered.push(msg(json!({"role": "toolResult", "toolCallId": "c2", "toolName": "look", "content": [], "isError": false, "timestamp": 1})));
    let mut one = at(vec![]);
    one.new = 3;
    if let Stage::Tools { results, .. } = &mut one.stage {
        *results = 1;
    }
    let e = futures::executor::block_on(resume_agent_loop(
        &again.host(),
        context(answered, tools(&log)),
        config(),
        one,
    ))
    .unwrap_err();
    assert!(
        e.message().contains("in order (expected c1)"),
        "{}",
        e.message()
    );
    assert!(
        again.sink.0.events.borrow().is_empty(),
        "a refused position emits nothing"
    );

    for bad in [
        json!(null),
        json!({"v": 2}),
        json!({"v": 1, "at": "nowhere", "new": 0, "model": {}}),
        json!({"v": 1, "at": "tools", "new": 0, "model": {}, "results": -1, "ended": [], "started": [], "executing": [], "announced": false}),
        json!({"v": 1, "at": "request", "new": 0, "model": {}, "turnStart": true, "inject": [1], "declare": false, "announced": false, "poll": false}),
    ] {
        let e = Position::from_json(&bad).unwrap_err();
        assert!(e.message().starts_with("checkpoint: "), "{}", e.message());
    }
}

/// Resumes `saved` on a new host that dies at `kill_at` (when given).
fn resume_saved(
    saved: &Saved,
    kill_at: Option<usize>,
    log: &Rc<RefCell<Vec<String>>>,
) -> (Host_, pi_agent_wasm::error::Result<Vec<AgentMessage>>) {
    let position = Position::from_json(&saved.position).unwrap();
    let answered = saved
        .transcript
        .iter()
        .filter(|m| m["role"] == "assistant")
        .count();
    let h = host(
        answered,
        kill_at,
        saved.steering.clone(),
        saved.follow_ups.clone(),
    );
    *h.sink.0.transcript.borrow_mut() = saved.transcript.clone();
    let r = futures::executor::block_on(resume_agent_loop(
        &h.host(),
        context(saved.transcript.clone(), tools(log)),
        config(),
        position,
    ));
    (h, r)
}

#[test]
fn a_run_killed_twice_at_any_two_points_still_finishes_with_one_result_per_call() {
    let log = Rc::new(RefCell::new(Vec::new()));
    let whole = host(0, None, vec![], vec![user("more")]);
    let expected: Vec<Value> = futures::executor::block_on(run_agent_loop(
        &whole.host(),
        vec![user("go")],
        context(vec![], tools(&log)),
        config(),
    ))
    .unwrap()
    .iter()
    .map(|m| timeless(m))
    .collect();
    let total = *whole.sink.0.delivered.borrow();
    let mut cases = 0;
    for k1 in 0..total {
        let log = Rc::new(RefCell::new(Vec::new()));
        let first = host(0, Some(k1), vec![], vec![user("more")]);
        let _ = futures::executor::block_on(run_agent_loop(
            &first.host(),
            vec![user("go")],
            context(vec![], tools(&log)),
            config(),
        ));
        let saved1 = first.sink.0.saved.borrow().clone().unwrap();
        // How many steps the resumed run has, then a death at each of them.
        let (probe, _) = resume_saved(&saved1, None, &Rc::new(RefCell::new(Vec::new())));
        let steps = *probe.sink.0.delivered.borrow();
        for k2 in 0..steps {
            let log = Rc::new(RefCell::new(log.borrow().clone()));
            let (second, r) = resume_saved(&saved1, Some(k2), &log);
            assert!(
                r.is_err(),
                "k1={k1} k2={k2}: the second death stops the run"
            );
            let saved2 = second.sink.0.saved.borrow().clone().unwrap();
            let (_, out) = resume_saved(&saved2, None, &log);
            let out = out.unwrap_or_else(|e| panic!("k1={k1} k2={k2}: {e:?}"));
            assert_eq!(out.len(), expected.len(), "k1={k1} k2={k2}");
            for (m, e) in out.iter().zip(&expected) {
                if m["isError"] == true && m["toolCallId"] == "w1" {
                    assert_eq!(m["content"][0]["text"], interrupted_call_text("write"));
                } else {
                    assert_eq!(timeless(m), *e, "k1={k1} k2={k2}");
                }
            }
            let runs = log.borrow().iter().filter(|l| *l == "execute:w1").count();
            assert!(runs <= 1, "k1={k1} k2={k2}: the write ran {runs} times");
            cases += 1;
        }
    }
    assert!(cases > 1000, "{cases} pairs");
}
