//! The remaining rules of §§2–10 that the other suites exercise only implicitly, each named.
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

use common::event_stream::AgentEventStream;
use common::*;
use futures::executor::block_on;
use pi_agent_wasm::agent::run_agent_loop;
use pi_agent_wasm::agent::Host;
use pi_agent_wasm::event::{AgentEvent, AssistantMessageEvent};
use pi_agent_wasm::io::*;
use pi_agent_wasm::json::Value;
use pi_agent_wasm::message::StopReason;
use pi_agent_wasm::value as json;

#[test]
fn l_14_l_17_stream_completes_on_agent_end_and_ignores_later_pushes() {
    let s = AgentEventStream::new();
    block_on(s.emit(AgentEvent::AgentStart)).unwrap();
    block_on(s.emit(AgentEvent::AgentEnd {
        messages: vec![user("x")],
    }))
    .unwrap();
    block_on(s.emit(AgentEvent::TurnStart)).unwrap();
    s.finish(Ok(vec![]));
    let mut kinds = Vec::new();
    while let Some(e) = block_on(s.next()) {
        kinds.push(e.unwrap().kind());
    }
    assert_eq!(kinds, ["agent_start", "agent_end"]);
    // The result is agent_end's messages, not the later finish().
    assert_eq!(block_on(s.result()).unwrap().len(), 1);
}

#[test]
fn l_18_l_19_assistant_event_shapes() {
    let partial = Rc::new(RefCell::new(
        json!({"role": "assistant", "content": [{"type": "text", "text": "ab"}]}),
    ));
    let delta = AssistantMessageEvent::TextDelta {
        content_index: 0,
        delta: "b".into(),
        partial: partial.clone(),
    };
    assert_eq!(
        delta.to_json(),
        json!({"type": "text_delta", "contentIndex": 0, "delta": "b", "partial": {"role": "assistant", "content": [{"type": "text", "text": "ab"}]}})
    );
    let end = AssistantMessageEvent::ToolcallEnd {
        content_index: 1,
        tool_call: json!({"type": "toolCall"}),
        partial,
    };
    assert_eq!(end.to_json()["toolCall"], json!({"type": "toolCall"}));
    let done = AssistantMessageEvent::Done {
        reason: StopReason::ToolUse,
        message: user("m"),
    };
    assert_eq!(done.to_json()["reason"], "toolUse");
    assert!(done.to_json().get("partial").is_none());
    assert!(done.is_terminal());
}

#[test]
fn l_20_l_123_provider_abort_arrives_as_an_aborted_message_kept_in_the_transcript() {
    let w = World::default();
    let mut m = assistant(json!([{"type": "text", "text": "half an ans"}]), "aborted");
    m["errorMessage"] = json!("Request was aborted");
    w.model.push(Script::streamed(m));
    let out = w
        .run(vec![user("q")], context(vec![], vec![]), config())
        .unwrap();
    assert_eq!(out[1]["stopReason"], "aborted");
    assert_eq!(out[1]["content"][0]["text"], "half an ans");
    let end = w.sink.json().pop().unwrap();
    assert_eq!(end["messages"][1]["stopReason"], "aborted");
}

#[test]
fn l_39_l_80_forwarded_options_carry_key_and_reasoning() {
    let w = World::default();
    w.model.push(Script::text("a"));
    let mut cfg = config();
    cfg.api_key = Some("k".into());
    cfg.reasoning = Some(pi_agent_wasm::message::ThinkingLevel::Minimal);
    w.run(vec![user("q")], context(vec![], vec![]), cfg)
        .unwrap();
    let r = &w.model.requests.borrow()[0];
    assert_eq!(r.api_key.as_deref(), Some("k"));
    assert_eq!(r.reasoning.as_deref(), Some("minimal"));
    assert_eq!(r.model["provider"], "test-provider");
}

#[test]
fn l_41_l_42_l_46_l_54_l_55_natural_end_after_the_last_answer() {
    let mut w = World::default();
    w.hooks.follow_ups_configured = true;
    w.model
        .push(Script::tools(vec![tool_call("c1", "t", json!({}))]));
    w.model.push(Script::text("answer"));
    let tools = vec![FakeTool::new("t", Behavior::Return(text_result("r"))).rc()];
    let out = w
        .run(vec![user("q")], context(vec![], tools), config())
        .unwrap();
    // Each assistant response is in the returned list, and the run ends with no pending work.
    assert_eq!(out.iter().filter(|m| m["role"] == "assistant").count(), 2);
    assert_eq!(w.model.requests.borrow().len(), 2);
    assert_eq!(
        w.log()
            .iter()
            .filter(|l| *l == "getFollowUpMessages")
            .count(),
        1
    );
    assert_eq!(w.sink.labels().last().unwrap(), "agent_end");
}

#[test]
fn l_67_l_68_l_69_only_the_last_pending_system_message_is_rewritten() {
    use pi_agent_wasm::agent::declarations;
    use pi_agent_wasm::message::transcript::declare_tool_changes;
    let tools = vec![FakeTool::new("a", Behavior::Echo).rc()];
    let first = msg(
        json!({"role": "system", "content": "one", "toolsAdded": [{"name": "zz", "description": "", "parameters": {}}], "timestamp": 1}),
    );
    let last = msg(json!({"role": "system", "content": "two", "timestamp": 2}));
    let out = declare_tool_changes(&[], &declarations(&tools), &[first.clone(), last], 3.0);
    // The earlier system message counts as an ordinary message: its zz declaration is in
    // the baseline, so the last one both adds a and removes zz.
    assert!(Rc::ptr_eq(&out[0], &first));
    assert_eq!(out[1]["toolsAdded"][0]["name"], "a");
    assert_eq!(out[1]["toolsRemoved"], json!([{"name": "zz"}]));
}

#[test]
fn l_75_l_79_convert_to_llm_output_is_what_the_stream_function_gets() {
    let w = World::default();
    w.model.push(Script::text("a"));
    w.run(
        vec![msg(json!({"role": "ui-only", "x": 1})), user("q")],
        context(vec![], vec![]),
        config(),
    )
    .unwrap();
    let r = &w.model.requests.borrow()[0];
    assert_eq!(r.messages.len(), 1);
    assert_eq!(r.messages[0]["role"], "user");
}

#[test]
fn l_89_a_second_start_emits_a_second_message_start_and_only_the_final_is_kept() {
    let w = World::default();
    let mut s = Script::text("t");
    let again = s.events[0].clone();
    s.events.insert(2, again);
    w.model.push(s);
    let out = w
        .run(vec![user("q")], context(vec![], vec![]), config())
        .unwrap();
    assert_eq!(
        w.sink
            .labels()
            .iter()
            .filter(|l| *l == "message_start(assistant)")
            .count(),
        2
    );
    assert_eq!(out.len(), 2);
    assert_eq!(w.model.requests.borrow().len(), 1);
}

#[test]
fn l_107_l_111_l_116_l_118_after_hook_sees_the_executed_result_and_undefined_keeps_it() {
    let mut w = World::default();
    let seen = Rc::new(RefCell::new(Vec::<(Value, bool)>::new()));
    let s2 = seen.clone();
    w.hooks.after = Some(Box::new(move |c| {
        s2.borrow_mut().push(((**c.result).clone(), c.is_error));
        Ok(None)
    }));
    w.model.push(Script::tools(vec![
        tool_call("c1", "ok", json!({})),
        tool_call("c2", "bad", json!({})),
    ]));
    w.model.push(Script::text("x"));
    let tools = vec![
        FakeTool::new("ok", Behavior::Return(text_result("fine"))).rc(),
        FakeTool::new("bad", Behavior::Throw("nope".into())).rc(),
    ];
    let out = w
        .run(vec![user("q")], context(vec![], tools), config())
        .unwrap();
    let seen = seen.borrow();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0], (text_result("fine"), false));
    // L-116: the thrown error's result shape.
    assert_eq!(
        seen[1],
        (
            json!({"content": [{"type": "text", "text": "nope"}], "details": {}}),
            true
        )
    );
    let rs: Vec<&Rc<Value>> = out.iter().filter(|m| m["role"] == "toolResult").collect();
    assert_eq!(
        (rs[0]["isError"].clone(), rs[1]["isError"].clone()),
        (json!(false), json!(true))
    );
}

#[test]
fn l_122_l_128_an_abort_between_turns_does_not_stop_the_loop() {
    let mut w = World::default();
    let signal = w.signal.clone();
    w.hooks.steering_configured = true;
    w.hooks
        .steering
        .borrow_mut()
        .extend([vec![], vec![], vec![user("queued after abort")]]);
    // prepareNextTurn aborts; the queued steering is still drained and another request made.
    w.hooks.next_turn = Some(Box::new(move |_| {
        signal.aborted.set(true);
        None
    }));
    w.model
        .push(Script::tools(vec![tool_call("c1", "t", json!({}))]));
    let mut aborted = assistant(json!([]), "aborted");
    aborted["errorMessage"] = json!("aborted");
    w.model.push(Script::streamed(aborted));
    let tools = vec![FakeTool::new("t", Behavior::Return(text_result("r"))).rc()];
    let out = w
        .run(vec![user("q")], context(vec![], tools), config())
        .unwrap();
    assert_eq!(w.model.requests.borrow().len(), 2);
    assert!(out
        .iter()
        .any(|m| m["content"][0]["text"] == "queued after abort"));
    assert_eq!(out.last().unwrap()["stopReason"], "aborted");
}

#[test]
fn l_122_a_pre_aborted_signal_still_reaches_the_stream_function() {
    let w = World::default();
    w.signal.aborted.set(true);
    let mut aborted = assistant(json!([]), "aborted");
    aborted["errorMessage"] = json!("aborted before start");
    w.model.push(Script::terminal_only(aborted));
    let out = w
        .run(vec![user("q")], context(vec![], vec![]), config())
        .unwrap();
    assert_eq!(w.model.requests.borrow().len(), 1);
    assert_eq!(out[1]["stopReason"], "aborted");
}

#[test]
fn l_15_l_170_a_stream_function_that_never_finishes_its_result_does_not_hang_the_run() {
    // The scripted stream reports "ended without result" as None; the run completes.
    let w = World::default();
    w.model.push(Script {
        events: vec![],
        result: None,
        throw: None,
    });
    let stream = AgentEventStream::new();
    let host = Host {
        sink: &stream,
        ..w.host()
    };
    let out = block_on(run_agent_loop(
        &host,
        vec![user("q")],
        context(vec![], vec![]),
        config(),
    ))
    .unwrap();
    assert_eq!(out[1]["stopReason"], "error");
}
