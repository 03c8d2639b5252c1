//! The observational stream (L-17, L-31, L-32) and runToolCall (L-38), natively.
#![cfg(not(target_arch = "wasm32"))]
#![allow(
    clippy::disallowed_methods, // core's substring search: only the .wasm avoids it (size)
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
mod common;

use std::rc::Rc;

use common::event_stream::AgentEventStream;
use common::*;
use futures::executor::block_on;
use pi_agent_wasm::agent::Host;
use pi_agent_wasm::agent::{run_agent_loop, run_tool_call, ToolEnv};
use pi_agent_wasm::error::Thrown;
use pi_agent_wasm::io::*;
use pi_agent_wasm::json::Value;
use pi_agent_wasm::value as json;

fn drive(
    w: &World,
    prompts: Vec<Rc<Value>>,
    ctx: Context,
) -> (
    Vec<String>,
    pi_agent_wasm::error::Result<Vec<Rc<Value>>>,
    Option<String>,
) {
    let stream = AgentEventStream::new();
    let host = Host {
        clock: &w.clock,
        patterns: &w.patterns,
        signal: Some(&*w.signal),
        sink: &stream,
        hooks: &w.hooks,
        stream_fn: Some(&w.model),
        tracker: &w.tracker,
    };
    let consumer = stream.clone();
    let run = stream
        .clone()
        .drive(run_agent_loop(&host, prompts, ctx, config()));
    let consume = async move {
        let mut types = Vec::new();
        let mut err = None;
        while let Some(item) = consumer.next().await {
            match item {
                Ok(e) => types.push(e.kind().to_string()),
                Err(e) => err = Some(e.message()),
            }
        }
        (types, consumer.result().await, err)
    };
    let ((), out) = block_on(futures::future::join(run, consume));
    out
}

#[test]
fn l_17_l_31_stream_yields_every_event_and_the_result() {
    let w = World::default();
    w.model.push(Script::text("hi"));
    let (types, result, err) = drive(&w, vec![user("q")], context(vec![], vec![]));
    assert_eq!(types.first().unwrap(), "agent_start");
    assert_eq!(types.last().unwrap(), "agent_end");
    assert_eq!(result.unwrap().len(), 2);
    assert!(err.is_none());
}

#[test]
fn l_32_l_171_a_rejected_run_ends_the_stream_with_its_error_instead_of_hanging() {
    let w = World::default();
    w.model.push(Script {
        events: vec![],
        result: None,
        throw: Some("stream fn threw".into()),
    });
    let (types, result, err) = drive(&w, vec![user("q")], context(vec![], vec![]));
    assert_eq!(
        types,
        ["agent_start", "turn_start", "message_start", "message_end"]
    );
    assert_eq!(err.as_deref(), Some("stream fn threw"));
    assert_eq!(result.unwrap_err().message(), "stream fn threw");
}

fn env(w: &World) -> ToolEnv<'_> {
    ToolEnv {
        clock: &w.clock,
        patterns: &w.patterns,
        signal: Some(&*w.signal),
        hooks: &w.hooks,
    }
}

fn no_updates() -> UpdateSink {
    Rc::new(|_| Ok(Box::pin(async { Ok(()) })))
}

#[test]
fn l_38_run_tool_call_runs_the_pipeline_without_events() {
    let mut w = World::default();
    w.hooks.before = Some(Box::new(|_| Ok(None)));
    let tool = FakeTool::new(
        "t",
        Behavior::Updates(vec![json!({"u": 1})], text_result("done")),
    )
    .with_params(json!({
        "type": "object", "properties": {"n": {"type": "integer"}}
    }));
    let tools: Vec<Rc<dyn Tool>> = vec![Rc::new(tool)];
    let updates = Rc::new(std::cell::RefCell::new(Vec::new()));
    let seen = updates.clone();
    let on_update: UpdateSink = Rc::new(move |v: Rc<Value>| {
        seen.borrow_mut().push((*v).clone());
        Ok(Box::pin(async { Ok(()) }))
    });
    let a = msg(assistant(json!([]), "toolUse"));
    let call = Rc::new(tool_call("x", "t", json!({"n": "3"})));
    let out = block_on(run_tool_call(
        &env(&w),
        &tools,
        call,
        &a,
        &context(vec![], vec![]),
        on_update,
    ))
    .unwrap();
    assert!(!out.is_error);
    assert_eq!(out.result["content"][0]["text"], "done");
    assert!(out.duration_ms.is_some());
    assert_eq!(*updates.borrow(), [json!({"u": 1})]);
    assert!(w.sink.events.borrow().is_empty());
    assert!(w.log().iter().any(|l| l == "beforeToolCall:x"));
}

#[test]
fn l_38_run_tool_call_failures_resolve_as_errors_abort_checked_first() {
    let mut w = World::default();
    w.hooks.before = Some(Box::new(|_| panic!("not reached when aborted")));
    let a = msg(assistant(json!([]), "toolUse"));
    let tools: Vec<Rc<dyn Tool>> = vec![FakeTool::new("t", Behavior::Echo).rc()];
    w.signal.aborted.set(true);
    let out = block_on(run_tool_call(
        &env(&w),
        &tools,
        Rc::new(tool_call("x", "t", json!({}))),
        &a,
        &context(vec![], vec![]),
        no_updates(),
    ))
    .unwrap();
    assert!(out.is_error);
    assert_eq!(out.result["content"][0]["text"], "Operation aborted");
    assert!(out.duration_ms.is_none());
    w.signal.aborted.set(false);
    w.hooks.before = None;
    // Lookup uses the given tools, not the context's.
    let ctx = context(vec![], vec![FakeTool::new("other", Behavior::Echo).rc()]);
    let out = block_on(run_tool_call(
        &env(&w),
        &tools,
        Rc::new(tool_call("x", "other", json!({}))),
        &a,
        &ctx,
        no_updates(),
    ))
    .unwrap();
    assert_eq!(out.result["content"][0]["text"], "Tool other not found");
}

#[test]
fn l_38_l_106_a_rejecting_update_sink_rejects_run_tool_call() {
    let w = World::default();
    let tools: Vec<Rc<dyn Tool>> =
        vec![FakeTool::new("t", Behavior::Updates(vec![json!(1)], text_result("r"))).rc()];
    let failing: UpdateSink = Rc::new(|_| Ok(Box::pin(async { Err(Thrown::new("sink down")) })));
    let a = msg(assistant(json!([]), "toolUse"));
    let r = block_on(run_tool_call(
        &env(&w),
        &tools,
        Rc::new(tool_call("x", "t", json!({}))),
        &a,
        &context(vec![], vec![]),
        failing,
    ));
    assert_eq!(r.unwrap_err().message, "sink down");
}
