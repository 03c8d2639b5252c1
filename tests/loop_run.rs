//! Entry points, the two-level loop and event orders (spec §4, §5, §6, §8), natively.
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

use common::*;
use pi_agent_wasm::error::Error;
use pi_agent_wasm::io::*;
use pi_agent_wasm::json::Value;
use pi_agent_wasm::message::ThinkingLevel;
use pi_agent_wasm::value as json;

fn labels(w: &World) -> Vec<String> {
    w.sink.labels()
}

#[test]
fn l_59_simple_prompt_event_order_and_l_66_returned_messages() {
    let w = World::default();
    w.model.push(Script::text("hi"));
    let out = w
        .run(vec![user("hello")], context(vec![], vec![]), config())
        .unwrap();
    assert_eq!(
        labels(&w),
        [
            "agent_start",
            "turn_start",
            "message_start(user)",
            "message_end(user)",
            "message_start(assistant)",
            "message_update(text_start)",
            "message_update(text_delta)",
            "message_update(text_end)",
            "message_end(assistant)",
            "turn_end",
            "agent_end"
        ]
    );
    assert_eq!(out.len(), 2);
    // L-66: agent_end carries the same list the run resolves with.
    let end = w.sink.json().pop().unwrap();
    assert_eq!(end["messages"].as_array().unwrap().len(), 2);
    assert_eq!(end["messages"][1]["content"][0]["text"], "hi");
}

#[test]
fn l_34_prompt_objects_are_shared_not_copied_and_caller_context_untouched() {
    let w = World::default();
    w.model.push(Script::text("ok"));
    let prompt = user("p");
    let earlier = user("earlier");
    let ctx = context(vec![earlier.clone()], vec![]);
    let out = w.run(vec![prompt.clone()], ctx.clone(), config()).unwrap();
    assert!(Rc::ptr_eq(&out[0], &prompt));
    // The context the caller holds still has only its message.
    assert_eq!(ctx.messages.len(), 1);
    // L-24/L-76: the provider received the whole transcript, in order.
    let req = &w.model.requests.borrow()[0];
    let texts: Vec<&str> = req
        .messages
        .iter()
        .map(|m| m["content"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["earlier", "p"]);
}

#[test]
fn l_35_l_172_continue_does_not_append_to_the_callers_list() {
    let w = World::default();
    w.model.push(Script::text("again"));
    let ctx = context(vec![user("u")], vec![]);
    let before = ctx.messages.clone();
    let out = w.run_continue(ctx.clone(), config()).unwrap();
    assert_eq!(ctx.messages.len(), before.len());
    assert_eq!(out.len(), 1);
    // L-64: no events for pre-existing messages.
    assert_eq!(
        labels(&w)[..3],
        ["agent_start", "turn_start", "message_start(assistant)"]
    );
}

#[test]
fn l_33_l_35_continue_preconditions_with_spec_wording() {
    let w = World::default();
    let e = w
        .run_continue(context(vec![], vec![]), config())
        .unwrap_err();
    assert_eq!(e, Error::NoMessages);
    assert_eq!(e.message(), "Cannot continue: no messages in context");
    let a = msg(assistant(json!([]), "stop"));
    let e = w
        .run_continue(context(vec![a], vec![]), config())
        .unwrap_err();
    assert_eq!(e.message(), "Cannot continue from message role: assistant");
    assert_eq!(e.code(), "continue_from_assistant");
    // Any other last role is accepted (system, toolResult, custom).
    let custom = msg(json!({"role": "note", "text": "x"}));
    w.model.push(Script::text("ok"));
    assert!(w
        .run_continue(context(vec![custom], vec![]), config())
        .is_ok());
    // No event was emitted for the rejected calls.
    assert_eq!(labels(&w)[0], "agent_start");
}

#[test]
fn l_36_l_34_missing_stream_function_rejects_after_the_prompt_events() {
    let w = World {
        no_stream_fn: true,
        ..World::default()
    };
    let e = w
        .run(vec![user("x")], context(vec![], vec![]), config())
        .unwrap_err();
    assert_eq!(
        e.message(),
        "No default stream function configured. Pass streamFn explicitly or call setDefaultStreamFn()."
    );
    assert_eq!(
        labels(&w),
        [
            "agent_start",
            "turn_start",
            "message_start(user)",
            "message_end(user)"
        ]
    );
}

#[test]
fn l_61_tool_turn_then_answer_and_l_49_results_follow_the_batch() {
    let w = World::default();
    w.model
        .push(Script::tools(vec![tool_call("c1", "echo", json!({}))]));
    w.model.push(Script::text("done"));
    let tools = vec![FakeTool::new("echo", Behavior::Return(text_result("r"))).rc()];
    let ctx = context(vec![], tools);
    let out = w.run(vec![user("go")], ctx, config()).unwrap();
    let l = labels(&w);
    let after_first: Vec<&str> = l
        .iter()
        .skip_while(|x| *x != "message_end(assistant)")
        .map(String::as_str)
        .collect();
    assert_eq!(
        after_first[..9],
        [
            "message_end(assistant)",
            "tool_execution_start(c1)",
            "tool_execution_end(c1)",
            "message_start(toolResult)",
            "message_end(toolResult)",
            "turn_end",
            "turn_start",
            "message_start(assistant)",
            "message_update(text_start)"
        ]
    );
    // L-72: a system declaration first, then user, assistant, toolResult, assistant.
    let roles: Vec<&str> = out.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "toolResult", "assistant"]
    );
    // The second request saw the tool result.
    let req2 = &w.model.requests.borrow()[1];
    assert_eq!(req2.messages.last().unwrap()["role"], "toolResult");
}

#[test]
fn l_81_request_pipeline_order_and_l_77_api_key_fallback() {
    let mut w = World::default();
    w.hooks.transform = Some(Box::new(|m| m.to_vec()));
    w.hooks.api_key = Some(Some(String::new())); // falsy → falls back
    w.model.push(Script::text("x"));
    let mut cfg = config();
    cfg.api_key = Some("static-key".into());
    w.run(vec![user("q")], context(vec![], vec![]), cfg)
        .unwrap();
    let log: Vec<String> = w
        .log()
        .into_iter()
        .filter(|l| !l.starts_with("event:"))
        .collect();
    assert_eq!(
        log,
        [
            "transformContext",
            "convertToLlm",
            "getApiKey:test-provider",
            "streamFn"
        ]
    );
    assert_eq!(
        w.model.requests.borrow()[0].api_key.as_deref(),
        Some("static-key")
    );
}

#[test]
fn l_77_get_api_key_result_wins_when_truthy() {
    let mut w = World::default();
    w.hooks.api_key = Some(Some("dynamic".into()));
    w.model.push(Script::text("x"));
    let mut cfg = config();
    cfg.api_key = Some("static".into());
    w.run(vec![user("q")], context(vec![], vec![]), cfg)
        .unwrap();
    assert_eq!(
        w.model.requests.borrow()[0].api_key.as_deref(),
        Some("dynamic")
    );
}

#[test]
fn l_74_transform_context_applies_to_one_request_only() {
    let mut w = World::default();
    w.hooks.transform = Some(Box::new(|m| m.iter().skip(1).cloned().collect()));
    w.model.push(Script::text("x"));
    let out = w
        .run(
            vec![user("a"), user("b")],
            context(vec![], vec![]),
            config(),
        )
        .unwrap();
    assert_eq!(w.model.requests.borrow()[0].messages.len(), 1);
    // Not written back: the run still returns both prompts.
    assert_eq!(out.len(), 3);
}

#[test]
fn l_84_l_87_final_message_is_the_result_with_thinking_level_and_provider_object_untouched() {
    let w = World::default();
    let script = Script::text("hi");
    let provider_copy = script.result.clone().unwrap();
    w.model.push(script);
    let mut cfg = config();
    cfg.reasoning = Some(ThinkingLevel::High);
    let out = w
        .run(vec![user("q")], context(vec![], vec![]), cfg)
        .unwrap();
    assert_eq!(out[1]["thinkingLevel"], "high");
    // L-173 improvement: the provider's object was not mutated.
    assert!(provider_copy.get("thinkingLevel").is_none());
    // L-84: message_end carries the final object itself.
    let events = w.sink.events.borrow();
    let end = events.iter().rev().find_map(|e| match e {
        pi_agent_wasm::event::AgentEvent::MessageEnd { message }
            if message["role"] == "assistant" =>
        {
            Some(message.clone())
        }
        _ => None,
    });
    assert!(Rc::ptr_eq(&end.unwrap(), &out[1]));
}

#[test]
fn l_87_thinking_level_off_when_reasoning_unset() {
    let w = World::default();
    w.model.push(Script::text("hi"));
    let out = w
        .run(vec![user("q")], context(vec![], vec![]), config())
        .unwrap();
    assert_eq!(out[1]["thinkingLevel"], "off");
    assert_eq!(w.model.requests.borrow()[0].reasoning, None);
}

#[test]
fn l_86_terminal_only_stream_yields_one_start_and_end() {
    let w = World::default();
    w.model.push(Script::terminal_only(assistant(
        json!([{"type": "text", "text": "t"}]),
        "stop",
    )));
    w.run(vec![user("q")], context(vec![], vec![]), config())
        .unwrap();
    assert_eq!(
        labels(&w)[4..],
        [
            "message_start(assistant)",
            "message_end(assistant)",
            "turn_end",
            "agent_end"
        ]
    );
}

#[test]
fn l_83_updates_before_start_are_dropped_and_unknown_ignored() {
    let w = World::default();
    let mut s = Script::text("t");
    // Move `start` after the first update: that update must be dropped.
    let start = s.events.remove(0);
    s.events.insert(1, start);
    w.model.push(s);
    w.run(vec![user("q")], context(vec![], vec![]), config())
        .unwrap();
    assert_eq!(
        labels(&w)[4..7],
        [
            "message_start(assistant)",
            "message_update(text_delta)",
            "message_update(text_end)"
        ]
    );
}

#[test]
fn l_85_l_170_stream_without_terminal_event_or_result_ends_as_error_instead_of_hanging() {
    let w = World::default();
    let mut s = Script::text("partial text");
    s.events.retain(|e| !e.is_terminal());
    s.result = None;
    w.model.push(s);
    let out = w
        .run(vec![user("q")], context(vec![], vec![]), config())
        .unwrap();
    let last = out.last().unwrap();
    assert_eq!(last["stopReason"], "error");
    assert!(last["errorMessage"]
        .as_str()
        .unwrap()
        .contains("without a done or error event"));
    // The streamed partial is kept as the message (nothing streamed is lost).
    assert_eq!(last["role"], "assistant");
    assert_eq!(labels(&w).last().unwrap(), "agent_end");
}

#[test]
fn l_85_stream_ended_with_result_but_no_terminal_event_uses_the_result() {
    let w = World::default();
    let mut s = Script::text("fine");
    s.events.retain(|e| !e.is_terminal());
    w.model.push(s);
    let out = w
        .run(vec![user("q")], context(vec![], vec![]), config())
        .unwrap();
    assert_eq!(out[1]["content"][0]["text"], "fine");
    assert_eq!(out[1]["stopReason"], "stop");
}

#[test]
fn l_48_l_63_error_response_hard_exits_without_tools_or_polls() {
    let mut w = World::default();
    w.hooks.steering_configured = true;
    w.hooks.follow_ups_configured = true;
    w.hooks.finish_configured = true;
    let mut m = assistant(json!([tool_call("c1", "t", json!({}))]), "error");
    m["errorMessage"] = json!("boom");
    w.model.push(Script::streamed(m));
    let tools = vec![FakeTool::new("t", Behavior::Return(text_result("x"))).rc()];
    let out = w
        .run(vec![user("q")], context(vec![], tools), config())
        .unwrap();
    let l = labels(&w);
    assert_eq!(
        l[l.len() - 3..],
        ["message_end(assistant)", "turn_end", "agent_end"]
    );
    // Steering polled once at start (L-40); no post-turn poll, no follow-up poll.
    let log = w.log();
    assert_eq!(
        log.iter().filter(|x| *x == "getSteeringMessages").count(),
        1
    );
    assert!(!log.iter().any(|x| x == "getFollowUpMessages"));
    // finishTurn still called on a hard exit.
    assert!(log.iter().any(|x| x == "finishTurn"));
    assert!(!log.iter().any(|x| x.starts_with("execute:")));
    assert_eq!(out.last().unwrap()["errorMessage"], "boom");
}

#[test]
fn l_82_throwing_stream_function_rejects_the_run() {
    let w = World::default();
    w.model.push(Script {
        events: vec![],
        result: None,
        throw: Some("network down".into()),
    });
    let e = w
        .run(vec![user("q")], context(vec![], vec![]), config())
        .unwrap_err();
    assert_eq!(e.message(), "network down");
    assert_eq!(e.code(), "host_threw");
    assert!(!labels(&w).contains(&"agent_end".to_string()));
}

#[test]
fn l_82_throwing_convert_to_llm_rejects_the_run() {
    let mut w = World::default();
    w.hooks.convert_throws = Some("bad convert".into());
    let e = w
        .run(vec![user("q")], context(vec![], vec![]), config())
        .unwrap_err();
    assert_eq!(e.message(), "bad convert");
}

#[test]
fn l_144_throwing_sink_rejects_the_run() {
    let w = World::default();
    *w.sink.throw_at.borrow_mut() = Some(("turn_start".into(), 1));
    let e = w
        .run(vec![user("q")], context(vec![], vec![]), config())
        .unwrap_err();
    assert_eq!(e.message(), "listener threw at turn_start");
    assert_eq!(labels(&w), ["agent_start"]);
}

#[test]
fn l_40_l_44_l_65_initial_steering_is_injected_before_the_first_request() {
    let mut w = World::default();
    w.hooks.steering_configured = true;
    w.hooks.steering.borrow_mut().push_back(vec![user("steer")]);
    w.model.push(Script::text("a"));
    let out = w
        .run(vec![user("p")], context(vec![], vec![]), config())
        .unwrap();
    assert_eq!(out.len(), 3);
    assert_eq!(out[1]["content"][0]["text"], "steer");
    assert_eq!(w.model.requests.borrow()[0].messages.len(), 2);
}

#[test]
fn l_51_steering_after_a_turn_causes_another_turn_and_l_57_poll_points() {
    let mut w = World::default();
    w.hooks.steering_configured = true;
    w.hooks.follow_ups_configured = true;
    // poll 1 (start): none; poll 2 (after turn 1): one message; later polls: none.
    w.hooks
        .steering
        .borrow_mut()
        .extend([vec![], vec![user("more")]]);
    w.model.push(Script::text("first"));
    w.model.push(Script::text("second"));
    let out = w
        .run(vec![user("p")], context(vec![], vec![]), config())
        .unwrap();
    let roles: Vec<&str> = out.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant"]);
    let log: Vec<String> = w
        .log()
        .into_iter()
        .filter(|l| l.starts_with("get"))
        .collect();
    // start, after turn 1, after turn 2, then follow-ups.
    assert_eq!(
        log,
        [
            "getSteeringMessages",
            "getSteeringMessages",
            "getSteeringMessages",
            "getFollowUpMessages"
        ]
    );
}

#[test]
fn l_43_preamble_repolls_steering_after_a_tool_batch() {
    let mut w = World::default();
    w.hooks.steering_configured = true;
    w.model
        .push(Script::tools(vec![tool_call("c1", "t", json!({}))]));
    w.model.push(Script::text("end"));
    let tools = vec![FakeTool::new("t", Behavior::Return(text_result("x"))).rc()];
    w.run(vec![user("p")], context(vec![], tools), config())
        .unwrap();
    let polls = w
        .log()
        .iter()
        .filter(|l| *l == "getSteeringMessages")
        .count();
    // start, after turn 1, preamble of turn 2 (nothing pending), after turn 2.
    assert_eq!(polls, 4);
}

#[test]
fn l_52_follow_ups_continue_the_outer_loop() {
    let mut w = World::default();
    w.hooks.follow_ups_configured = true;
    w.hooks
        .follow_ups
        .borrow_mut()
        .push_back(vec![user("follow")]);
    w.model.push(Script::text("a"));
    w.model.push(Script::text("b"));
    let out = w
        .run(vec![user("p")], context(vec![], vec![]), config())
        .unwrap();
    assert_eq!(out.len(), 4);
    let l = labels(&w);
    let i = l.iter().position(|x| x == "turn_end").unwrap();
    assert_eq!(
        l[i..i + 4],
        [
            "turn_end",
            "turn_start",
            "message_start(user)",
            "message_end(user)"
        ]
    );
}

#[test]
fn l_50_l_51_finish_turn_end_stops_without_polls() {
    let mut w = World::default();
    w.hooks.finish_configured = true;
    w.hooks.steering_configured = true;
    w.hooks.follow_ups_configured = true;
    w.hooks
        .finish
        .borrow_mut()
        .push_back(Some(TurnDecision::End));
    w.model
        .push(Script::tools(vec![tool_call("c1", "t", json!({}))]));
    let tools = vec![FakeTool::new("t", Behavior::Return(text_result("x"))).rc()];
    let out = w
        .run(vec![user("p")], context(vec![], tools), config())
        .unwrap();
    assert_eq!(w.model.requests.borrow().len(), 1);
    assert_eq!(out.last().unwrap()["role"], "toolResult");
    let log = w.log();
    // finishTurn runs after the tool-result message events and before turn_end.
    let f = log.iter().position(|x| x == "finishTurn").unwrap();
    assert_eq!(log[f - 1], "event:message_end(toolResult)");
    assert_eq!(log[f + 1], "event:turn_end");
    assert_eq!(
        log.iter().filter(|x| *x == "getSteeringMessages").count(),
        1
    );
    assert!(!log.iter().any(|x| x == "getFollowUpMessages"));
    // L-58: finishTurn saw the context with the assistant message and tool result.
    let seen = w.hooks.seen.borrow();
    assert_eq!(seen[0].1, ["system", "user", "assistant", "toolResult"]);
}

#[test]
fn l_53_explicit_continue_makes_exactly_one_extra_request() {
    let mut w = World::default();
    w.hooks.finish_configured = true;
    w.hooks
        .finish
        .borrow_mut()
        .push_back(Some(TurnDecision::Continue));
    w.model.push(Script::text("a"));
    w.model.push(Script::text("b"));
    let out = w
        .run(vec![user("p")], context(vec![], vec![]), config())
        .unwrap();
    assert_eq!(w.model.requests.borrow().len(), 2);
    // The context-only request ends with the assistant message.
    assert_eq!(
        w.model.requests.borrow()[1].messages.last().unwrap()["role"],
        "assistant"
    );
    assert_eq!(out.len(), 3);
}

#[test]
fn l_51_continue_is_satisfied_by_a_natural_request() {
    let mut w = World::default();
    w.hooks.finish_configured = true;
    w.hooks
        .finish
        .borrow_mut()
        .push_back(Some(TurnDecision::Continue));
    w.model
        .push(Script::tools(vec![tool_call("c1", "t", json!({}))]));
    w.model.push(Script::text("b"));
    let tools = vec![FakeTool::new("t", Behavior::Return(text_result("x"))).rc()];
    w.run(vec![user("p")], context(vec![], tools), config())
        .unwrap();
    assert_eq!(w.model.requests.borrow().len(), 2);
}

#[test]
fn l_43_l_47_prepare_next_turn_replaces_model_level_and_injects_messages_first() {
    let mut w = World::default();
    w.hooks.steering_configured = true;
    w.hooks
        .steering
        .borrow_mut()
        .extend([vec![], vec![user("queued")]]);
    w.hooks.next_turn = Some(Box::new(|turn| {
        assert_eq!(turn.message["role"], "assistant");
        Some(NextTurn {
            context: None,
            messages: Some(vec![msg(
                json!({"role": "user", "content": "prepared", "timestamp": 2}),
            )]),
            model: Some(Rc::new(json!({"id": "m2", "provider": "p2"}))),
            thinking_level: Some(ThinkingLevel::Low),
        })
    }));
    w.model.push(Script::text("a"));
    w.model.push(Script::text("b"));
    let out = w
        .run(vec![user("p")], context(vec![], vec![]), config())
        .unwrap();
    let texts: Vec<Value> = out.iter().map(|m| m["content"].clone()).collect();
    assert_eq!(texts[2], json!("prepared"));
    assert_eq!(texts[3][0]["text"], "queued");
    let req = &w.model.requests.borrow()[1];
    assert_eq!(req.model["id"], "m2");
    assert_eq!(req.reasoning.as_deref(), Some("low"));
    assert_eq!(out.last().unwrap()["thinkingLevel"], "low");
}

#[test]
fn l_45_prepare_request_runs_before_every_request_and_off_clears_reasoning() {
    let mut w = World::default();
    w.hooks.request = Some(Box::new(|r| {
        Some(RequestUpdate {
            context: None,
            model: None,
            thinking_level: if r.thinking_level == ThinkingLevel::High {
                Some(ThinkingLevel::Off)
            } else {
                None
            },
        })
    }));
    w.model.push(Script::text("a"));
    let mut cfg = config();
    cfg.reasoning = Some(ThinkingLevel::High);
    let out = w
        .run(vec![user("p")], context(vec![], vec![]), cfg)
        .unwrap();
    assert_eq!(w.model.requests.borrow()[0].reasoning, None);
    assert_eq!(out[1]["thinkingLevel"], "off");
    // prepareRequest saw the prompt already appended.
    assert_eq!(w.hooks.seen.borrow()[0].1, ["user"]);
}

#[test]
fn l_45_prepare_request_context_replacement_persists() {
    let mut w = World::default();
    w.hooks.request = Some(Box::new(|r| {
        let mut c = r.context.clone();
        c.messages.retain(|m| m["content"] != json!("drop me"));
        Some(RequestUpdate {
            context: Some(c),
            model: None,
            thinking_level: None,
        })
    }));
    w.model.push(Script::text("a"));
    let out = w
        .run(
            vec![
                msg(json!({"role": "user", "content": "drop me", "timestamp": 1})),
                user("keep"),
            ],
            context(vec![], vec![]),
            config(),
        )
        .unwrap();
    assert_eq!(w.model.requests.borrow()[0].messages.len(), 1);
    // newMessages still records what was appended.
    assert_eq!(out.len(), 3);
}

#[test]
fn l_88_custom_messages_pass_through_untouched() {
    let w = World::default();
    w.model.push(Script::text("a"));
    let custom = msg(json!({"role": "artifact", "blob": {"z": 1, "a": [1, 2]}, "timestamp": 5}));
    let out = w
        .run(
            vec![custom.clone(), user("u")],
            context(vec![], vec![]),
            config(),
        )
        .unwrap();
    assert!(Rc::ptr_eq(&out[0], &custom));
    assert_eq!(labels(&w)[2], "message_start(artifact)");
    // Dropped by convertToLlm only.
    assert_eq!(w.model.requests.borrow()[0].messages.len(), 1);
}

#[test]
fn l_05_tool_calls_run_whatever_the_stop_reason() {
    let w = World::default();
    w.model.push(Script::streamed(assistant(
        json!([tool_call("c1", "t", json!({}))]),
        "stop",
    )));
    w.model.push(Script::text("b"));
    let tools = vec![FakeTool::new("t", Behavior::Return(text_result("x"))).rc()];
    let out = w
        .run(vec![user("p")], context(vec![], tools), config())
        .unwrap();
    assert_eq!(out.iter().filter(|m| m["role"] == "toolResult").count(), 1);
}
