//! Tool execution (spec §9) and abort (§10), natively, with gated tools so tests control
//! completion order without sleeping.
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
use pi_agent_wasm::agent::tools::truncated_call_text;
use pi_agent_wasm::event::AgentEvent;
use pi_agent_wasm::io::*;
use pi_agent_wasm::json::Value;
use pi_agent_wasm::value as json;

fn tool_results(out: &[Rc<Value>]) -> Vec<Value> {
    out.iter()
        .filter(|m| m["role"] == "toolResult")
        .map(|m| (**m).clone())
        .collect()
}

fn result_text(m: &Value) -> String {
    m["content"][0]["text"].as_str().unwrap_or("").to_string()
}

fn end_events(w: &World) -> Vec<Value> {
    w.sink
        .json()
        .into_iter()
        .filter(|e| e["type"] == "tool_execution_end")
        .collect()
}

fn run_one_call(w: &World, tool: Rc<dyn Tool>, args: Value) -> Vec<Value> {
    w.model
        .push(Script::tools(vec![tool_call("c1", tool.name(), args)]));
    w.model.push(Script::text("done"));
    let out = w
        .run(vec![user("go")], context(vec![], vec![tool]), config())
        .unwrap();
    tool_results(&out)
}

#[test]
fn l_96_unknown_tool_is_an_error_result_without_duration() {
    let w = World::default();
    w.model
        .push(Script::tools(vec![tool_call("c1", "nope", json!({}))]));
    w.model.push(Script::text("ok"));
    let out = w
        .run(vec![user("go")], context(vec![], vec![]), config())
        .unwrap();
    let r = &tool_results(&out)[0];
    assert_eq!(result_text(r), "Tool nope not found");
    assert_eq!(r["isError"], true);
    assert!(r.get("durationMs").is_none());
    // L-117/L-102: no durationMs key on the end event either.
    assert!(end_events(&w)[0].get("durationMs").is_none());
}

#[test]
fn l_103_l_117_l_120_executed_call_result_message_shape() {
    let w = World::default();
    let tool = FakeTool::new(
        "t",
        Behavior::Return(json!({"content": [{"type": "text", "text": "hi"}], "details": {"k": 1}, "custom": true})),
    )
    .rc();
    let r = &run_one_call(&w, tool, json!({}))[0];
    assert_eq!(
        r.as_object().unwrap().keys().collect::<Vec<_>>(),
        [
            "role",
            "toolCallId",
            "toolName",
            "content",
            "details",
            "isError",
            "durationMs",
            "timestamp"
        ]
    );
    assert_eq!(r["details"], json!({"k": 1}));
    assert_eq!(r["isError"], false);
    assert!(r["durationMs"].as_f64().unwrap() >= 0.0);
    // L-117: the end event carries the result object as is (custom key kept).
    let end = &end_events(&w)[0];
    assert_eq!(end["result"]["custom"], true);
    assert!(end["durationMs"].is_number());
}

#[test]
fn l_120_result_without_content_yields_empty_content_in_the_message_only() {
    let w = World::default();
    let tool = FakeTool::new("t", Behavior::Return(json!({"details": null}))).rc();
    let r = &run_one_call(&w, tool, json!({}))[0];
    assert_eq!(r["content"], json!([]));
    assert!(end_events(&w)[0]["result"].get("content").is_none());
}

#[test]
fn l_104_throwing_tool_becomes_error_result_with_duration() {
    let w = World::default();
    let tool = FakeTool::new("t", Behavior::Throw("kaput".into())).rc();
    let r = &run_one_call(&w, tool, json!({}))[0];
    assert_eq!(result_text(r), "kaput");
    assert_eq!(r["isError"], true);
    assert!(r["durationMs"].is_number());
    assert_eq!(
        end_events(&w)[0]["result"],
        json!({"content": [{"type": "text", "text": "kaput"}], "details": {}})
    );
}

#[test]
fn l_119_tool_reporting_is_error_keeps_its_content() {
    let w = World::default();
    let tool = FakeTool::new(
        "t",
        Behavior::Return(
            json!({"content": [{"type": "text", "text": "soft"}], "details": {}, "isError": true}),
        ),
    )
    .rc();
    let r = &run_one_call(&w, tool, json!({}))[0];
    assert_eq!(r["isError"], true);
    assert_eq!(result_text(r), "soft");
}

#[test]
fn l_98_l_114_arguments_are_coerced_and_the_transcript_call_is_untouched() {
    let w = World::default();
    let params = json!({"type": "object", "properties": {"n": {"type": "number"}, "s": {"type": "string"}}, "required": ["n"]});
    let tool = Rc::new(FakeTool::new("t", Behavior::Echo).with_params(params));
    w.model.push(Script::tools(vec![tool_call(
        "c1",
        "t",
        json!({"n": "42", "s": 5}),
    )]));
    w.model.push(Script::text("done"));
    let dyn_tool: Rc<dyn Tool> = tool.clone();
    let out = w
        .run(vec![user("go")], context(vec![], vec![dyn_tool]), config())
        .unwrap();
    assert_eq!(tool.calls.borrow()[0].1, json!({"n": 42, "s": "5"}));
    // The assistant message still holds what the model sent.
    let a = out.iter().find(|m| m["role"] == "assistant").unwrap();
    assert_eq!(a["content"][0]["arguments"], json!({"n": "42", "s": 5}));
}

#[test]
fn l_115_validation_failure_text() {
    let w = World::default();
    let params = json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"], "additionalProperties": false});
    let tool = FakeTool::new("read", Behavior::Echo)
        .with_params(params)
        .rc();
    let r = &run_one_call(&w, tool, json!({"extra": 1}))[0];
    assert_eq!(
        result_text(r),
        "Validation failed for tool \"read\":\n  - path: missing\n  - extra: unknown field\n\nReceived arguments:\n{\n  \"extra\": 1\n}"
    );
    assert!(r.get("durationMs").is_none());
}

#[test]
fn l_112_arguments_error_from_the_provider() {
    let w = World::default();
    let mut call = tool_call("c1", "t", json!({}));
    call["argumentsError"] = json!("Unexpected end of JSON input");
    w.model.push(Script::tools(vec![call]));
    w.model.push(Script::text("done"));
    let tool = FakeTool::new("t", Behavior::Echo).rc();
    let out = w
        .run(vec![user("go")], context(vec![], vec![tool]), config())
        .unwrap();
    assert_eq!(
        result_text(&tool_results(&out)[0]),
        "Invalid arguments for tool \"t\": Unexpected end of JSON input"
    );
}

#[test]
fn l_97_prepare_arguments_result_is_validated_and_hooks_see_the_original_call() {
    let mut w = World::default();
    let params =
        json!({"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]});
    let mut tool = FakeTool::new("t", Behavior::Echo).with_params(params);
    tool.prepare = Some(Box::new(|raw| {
        Some(Ok(json!({"x": raw["legacy"].clone()})))
    }));
    let tool = Rc::new(tool);
    w.hooks.before = Some(Box::new(|c| {
        assert_eq!(c.tool_call["arguments"], json!({"legacy": "7"}));
        assert_eq!(**c.args, json!({"x": 7}));
        Ok(None)
    }));
    w.model.push(Script::tools(vec![tool_call(
        "c1",
        "t",
        json!({"legacy": "7"}),
    )]));
    w.model.push(Script::text("done"));
    let dyn_tool: Rc<dyn Tool> = tool.clone();
    w.run(vec![user("go")], context(vec![], vec![dyn_tool]), config())
        .unwrap();
    assert_eq!(tool.calls.borrow()[0].1, json!({"x": 7}));
}

#[test]
fn l_101_throwing_prepare_arguments_is_an_immediate_error() {
    let w = World::default();
    let mut tool = FakeTool::new("t", Behavior::Echo);
    tool.prepare = Some(Box::new(|_| {
        Some(Err(pi_agent_wasm::error::Thrown::new("bad shape")))
    }));
    let r = &run_one_call(&w, Rc::new(tool), json!({}))[0];
    assert_eq!(result_text(r), "bad shape");
    assert!(r.get("durationMs").is_none());
}

#[test]
fn l_99_before_tool_call_blocks_with_reason_and_default_text() {
    let mut w = World::default();
    w.hooks.before = Some(Box::new(|c| {
        let id = c.tool_call["id"].as_str().unwrap();
        Ok(Some(BeforeToolCallResult {
            block: true,
            reason: if id == "c1" {
                Some("no way".into())
            } else {
                Some(String::new())
            },
            terminate: false,
        }))
    }));
    w.model.push(Script::tools(vec![
        tool_call("c1", "t", json!({})),
        tool_call("c2", "t", json!({})),
    ]));
    w.model.push(Script::text("done"));
    let tool = Rc::new(FakeTool::new("t", Behavior::Echo));
    let dyn_tool: Rc<dyn Tool> = tool.clone();
    let out = w
        .run(vec![user("go")], context(vec![], vec![dyn_tool]), config())
        .unwrap();
    let rs = tool_results(&out);
    assert_eq!(result_text(&rs[0]), "no way");
    assert_eq!(result_text(&rs[1]), "Tool execution was blocked");
    assert!(tool.calls.borrow().is_empty());
    // A non-terminating block keeps the loop going.
    assert_eq!(w.model.requests.borrow().len(), 2);
}

#[test]
fn l_101_throwing_before_tool_call_is_an_error_result() {
    let mut w = World::default();
    w.hooks.before = Some(Box::new(|_| {
        Err(pi_agent_wasm::error::Thrown::new("hook broke"))
    }));
    let r = &run_one_call(&w, FakeTool::new("t", Behavior::Echo).rc(), json!({}))[0];
    assert_eq!(result_text(r), "hook broke");
}

#[test]
fn l_100_hook_mutations_of_args_reach_execute_unvalidated() {
    // The core hands the hook a reference; the JS binding passes the same object it later
    // gives execute. Here: args the hook saw are the ones execute receives.
    let mut w = World::default();
    w.hooks.before = Some(Box::new(|c| {
        assert_eq!(**c.args, json!({"a": 1}));
        Ok(None)
    }));
    let tool = Rc::new(FakeTool::new("t", Behavior::Echo));
    let dyn_tool: Rc<dyn Tool> = tool.clone();
    run_one_call(&w, dyn_tool, json!({"a": 1}));
    assert_eq!(tool.calls.borrow()[0].1, json!({"a": 1}));
}

#[test]
fn l_121_all_terminate_ends_the_run_and_mixed_batches_continue() {
    let mut w = World::default();
    w.hooks.before = Some(Box::new(|_| {
        Ok(Some(BeforeToolCallResult {
            block: true,
            reason: None,
            terminate: true,
        }))
    }));
    w.model
        .push(Script::tools(vec![tool_call("c1", "t", json!({}))]));
    let out = w
        .run(
            vec![user("go")],
            context(vec![], vec![FakeTool::new("t", Behavior::Echo).rc()]),
            config(),
        )
        .unwrap();
    assert_eq!(w.model.requests.borrow().len(), 1);
    assert_eq!(out.last().unwrap()["role"], "toolResult");
    // The terminate flag is not copied into the message (L-12, L-120).
    assert!(out.last().unwrap().get("terminate").is_none());

    let w = World::default();
    let stop = FakeTool::new(
        "stop",
        Behavior::Return(json!({"content": [], "details": {}, "terminate": true})),
    )
    .rc();
    let go = FakeTool::new("go", Behavior::Return(text_result("x"))).rc();
    w.model.push(Script::tools(vec![
        tool_call("c1", "stop", json!({})),
        tool_call("c2", "go", json!({})),
    ]));
    w.model.push(Script::text("after"));
    w.run(
        vec![user("go")],
        context(vec![], vec![stop.clone(), go]),
        config(),
    )
    .unwrap();
    assert_eq!(w.model.requests.borrow().len(), 2);

    let w = World::default();
    w.model.push(Script::tools(vec![
        tool_call("c1", "stop", json!({})),
        tool_call("c2", "stop", json!({})),
    ]));
    w.run(vec![user("go")], context(vec![], vec![stop]), config())
        .unwrap();
    assert_eq!(w.model.requests.borrow().len(), 1);
}

#[test]
fn l_56_terminate_still_honours_steering() {
    let mut w = World::default();
    w.hooks.steering_configured = true;
    w.hooks
        .steering
        .borrow_mut()
        .extend([vec![], vec![user("steer")]]);
    let stop = FakeTool::new(
        "stop",
        Behavior::Return(json!({"content": [], "details": {}, "terminate": true})),
    )
    .rc();
    w.model
        .push(Script::tools(vec![tool_call("c1", "stop", json!({}))]));
    w.model.push(Script::text("after steer"));
    w.run(vec![user("go")], context(vec![], vec![stop]), config())
        .unwrap();
    assert_eq!(w.model.requests.borrow().len(), 2);
}

#[test]
fn l_108_l_109_after_tool_call_merges_field_by_field() {
    let mut w = World::default();
    w.hooks.after = Some(Box::new(|c| {
        assert_eq!(c.result["structuredContent"], json!({"s": 1}));
        Ok(Some(AfterToolCallResult {
            content: Some(json!([{"type": "text", "text": "replaced"}])),
            is_error: Some(true),
            ..AfterToolCallResult::default()
        }))
    }));
    let tool = FakeTool::new(
        "t",
        Behavior::Return(json!({"content": [{"type": "text", "text": "orig"}], "details": {"d": 1}, "structuredContent": {"s": 1}, "x": 2})),
    )
    .rc();
    let r = &run_one_call(&w, tool, json!({}))[0];
    assert_eq!(result_text(r), "replaced");
    assert_eq!(r["details"], json!({"d": 1}));
    assert_eq!(r["isError"], true);
    let end = &end_events(&w)[0];
    // Content replaced without structuredContent → structuredContent dropped; custom key kept.
    assert!(end["result"].get("structuredContent").is_none());
    assert_eq!(end["result"]["x"], 2);
    assert_eq!(end["isError"], true);
}

#[test]
fn l_109_structured_content_kept_when_content_not_replaced() {
    let mut w = World::default();
    w.hooks.after = Some(Box::new(|_| {
        Ok(Some(AfterToolCallResult {
            details: Some(json!({"new": true})),
            ..AfterToolCallResult::default()
        }))
    }));
    let tool = FakeTool::new(
        "t",
        Behavior::Return(json!({"content": [], "details": {}, "structuredContent": {"s": 1}})),
    )
    .rc();
    run_one_call(&w, tool, json!({}));
    let end = &end_events(&w)[0];
    assert_eq!(end["result"]["structuredContent"], json!({"s": 1}));
    assert_eq!(end["result"]["details"], json!({"new": true}));
}

#[test]
fn l_110_throwing_after_tool_call_discards_the_result_but_keeps_duration() {
    let mut w = World::default();
    w.hooks.after = Some(Box::new(|_| {
        Err(pi_agent_wasm::error::Thrown::new("after broke"))
    }));
    let r = &run_one_call(
        &w,
        FakeTool::new("t", Behavior::Return(text_result("fine"))).rc(),
        json!({}),
    )[0];
    assert_eq!(result_text(r), "after broke");
    assert_eq!(r["isError"], true);
    assert!(r["durationMs"].is_number());
}

#[test]
fn l_102_immediate_outcomes_never_reach_after_tool_call() {
    let mut w = World::default();
    w.hooks.after = Some(Box::new(|_| panic!("afterToolCall must not run")));
    w.model
        .push(Script::tools(vec![tool_call("c1", "missing", json!({}))]));
    w.model.push(Script::text("ok"));
    w.run(vec![user("go")], context(vec![], vec![]), config())
        .unwrap();
}

#[test]
fn l_105_updates_are_forwarded_in_order_before_the_end() {
    let w = World::default();
    let tool = FakeTool::new(
        "t",
        Behavior::Updates(vec![json!({"p": 1}), json!({"p": 2})], text_result("r")),
    )
    .rc();
    run_one_call(&w, tool, json!({"a": 1}));
    let events: Vec<Value> = w
        .sink
        .json()
        .into_iter()
        .filter(|e| e["type"].as_str().unwrap().starts_with("tool_execution"))
        .collect();
    assert_eq!(events[1]["type"], "tool_execution_update");
    assert_eq!(events[1]["partialResult"], json!({"p": 1}));
    assert_eq!(events[1]["args"], json!({"a": 1}));
    assert_eq!(events[2]["partialResult"], json!({"p": 2}));
    assert_eq!(events[3]["type"], "tool_execution_end");
}

#[test]
fn l_105_updates_after_settle_are_ignored() {
    let w = World::default();
    let tool = Rc::new(FakeTool::new("t", Behavior::Return(text_result("r"))));
    let dyn_tool: Rc<dyn Tool> = tool.clone();
    run_one_call(&w, dyn_tool, json!({}));
    let late = tool.late_update.borrow().clone().unwrap();
    late(Rc::new(json!({"late": true}))).unwrap();
    assert!(!w
        .sink
        .json()
        .iter()
        .any(|e| e["type"] == "tool_execution_update"));
}

#[test]
fn l_106_l_168_a_rejecting_update_emit_rejects_the_run() {
    let w = World::default();
    *w.sink.throw_at.borrow_mut() = Some(("tool_execution_update".into(), 1));
    let tool = FakeTool::new("t", Behavior::Updates(vec![json!(1)], text_result("r"))).rc();
    w.model
        .push(Script::tools(vec![tool_call("c1", "t", json!({}))]));
    let e = w
        .run(vec![user("go")], context(vec![], vec![tool]), config())
        .unwrap_err();
    assert_eq!(e.message(), "listener threw at tool_execution_update");
}

#[test]
fn l_90_l_91_one_sequential_tool_makes_the_batch_sequential() {
    let log = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let w = World::default();
    let a = FakeTool::new("a", Behavior::Return(text_result("a")))
        .with_log(log.clone())
        .rc();
    let b = FakeTool::new("b", Behavior::Return(text_result("b")))
        .with_mode(ExecutionMode::Sequential)
        .with_log(log.clone())
        .rc();
    w.model.push(Script::tools(vec![
        tool_call("c1", "a", json!({})),
        tool_call("c2", "b", json!({})),
    ]));
    w.model.push(Script::text("done"));
    w.run(vec![user("go")], context(vec![], vec![a, b]), config())
        .unwrap();
    let l = w.sink.labels();
    let from = l
        .iter()
        .position(|x| x == "tool_execution_start(c1)")
        .unwrap();
    assert_eq!(
        l[from..from + 8],
        [
            "tool_execution_start(c1)",
            "tool_execution_end(c1)",
            "message_start(toolResult)",
            "message_end(toolResult)",
            "tool_execution_start(c2)",
            "tool_execution_end(c2)",
            "message_start(toolResult)",
            "message_end(toolResult)"
        ]
    );
}

#[test]
fn l_90_global_sequential_config() {
    let w = World::default();
    let a = FakeTool::new("a", Behavior::Return(text_result("a")))
        .with_mode(ExecutionMode::Parallel)
        .rc();
    w.model.push(Script::tools(vec![
        tool_call("c1", "a", json!({})),
        tool_call("c2", "a", json!({})),
    ]));
    w.model.push(Script::text("done"));
    let mut cfg = config();
    cfg.tool_execution = ToolExecution::Sequential;
    w.run(vec![user("go")], context(vec![], vec![a]), cfg)
        .unwrap();
    let l = w.sink.labels();
    let from = l
        .iter()
        .position(|x| x == "tool_execution_start(c1)")
        .unwrap();
    assert_eq!(l[from + 2], "message_start(toolResult)");
}

#[test]
fn l_92_l_62_parallel_preflight_in_order_ends_in_completion_order_messages_in_call_order() {
    let mut world = World::default();
    let log = world.log.clone();
    world.hooks.before = Some(Box::new(|_| Ok(None)));
    let slow = Rc::new(
        FakeTool::new("slow", Behavior::Gated)
            .gated(1)
            .with_log(log.clone()),
    );
    let fast = Rc::new(
        FakeTool::new("fast", Behavior::Gated)
            .gated(1)
            .with_log(log.clone()),
    );
    world.model.push(Script::tools(vec![
        tool_call("c1", "slow", json!({})),
        tool_call("c2", "missing", json!({})),
        tool_call("c3", "fast", json!({})),
    ]));
    world.model.push(Script::text("done"));
    let world = Rc::new(world);
    let tools: Vec<Rc<dyn Tool>> = vec![slow.clone(), fast.clone()];
    let mut run = Stepped::start(
        world.clone(),
        vec![user("go")],
        context(vec![], tools),
        config(),
    );
    // Both executions started only after every preflight (incl. both beforeToolCall).
    let l = world.log();
    let first_exec = l.iter().position(|x| x.starts_with("execute:")).unwrap();
    let last_before = l
        .iter()
        .rposition(|x| x.starts_with("beforeToolCall:"))
        .unwrap();
    assert!(last_before < first_exec);
    assert!(!run.done());
    fast.open(text_result("fast"));
    run.step();
    slow.open(text_result("slow"));
    run.step();
    assert!(run.done());
    let labels = world.sink.labels();
    let tools_part: Vec<&str> = labels
        .iter()
        .filter(|x| x.starts_with("tool_execution") || x.contains("toolResult"))
        .map(String::as_str)
        .collect();
    assert_eq!(
        tools_part,
        [
            "tool_execution_start(c1)",
            "tool_execution_start(c2)",
            "tool_execution_end(c2)", // immediate: right after its start
            "tool_execution_start(c3)",
            "tool_execution_end(c3)", // fast finished first
            "tool_execution_end(c1)",
            "message_start(toolResult)",
            "message_end(toolResult)",
            "message_start(toolResult)",
            "message_end(toolResult)",
            "message_start(toolResult)",
            "message_end(toolResult)"
        ]
    );
    let out = run.result.borrow_mut().take().unwrap().unwrap();
    let ids: Vec<&str> = out
        .iter()
        .filter(|m| m["role"] == "toolResult")
        .map(|m| m["toolCallId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["c1", "c2", "c3"]);
    // turn_end's toolResults are in call order too.
    let turn_end = world
        .sink
        .json()
        .into_iter()
        .find(|e| e["type"] == "turn_end")
        .unwrap();
    let ids: Vec<&str> = turn_end["toolResults"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["toolCallId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["c1", "c2", "c3"]);
}

#[test]
fn l_93_hooks_see_the_pre_batch_context() {
    let mut w = World::default();
    w.hooks.before = Some(Box::new(|_| Ok(None)));
    w.model.push(Script::tools(vec![
        tool_call("c1", "t", json!({})),
        tool_call("c2", "t", json!({})),
    ]));
    w.model.push(Script::text("done"));
    let mut cfg = config();
    cfg.tool_execution = ToolExecution::Sequential;
    w.run(
        vec![user("go")],
        context(vec![], vec![FakeTool::new("t", Behavior::Echo).rc()]),
        cfg,
    )
    .unwrap();
    let seen = w.hooks.seen.borrow();
    // Even sequentially, c2's hook does not see c1's result in context.messages.
    assert_eq!(seen[1].1.last().unwrap(), "assistant");
}

#[test]
fn l_94_length_stop_fails_every_call_with_the_exact_text() {
    let w = World::default();
    let tool = Rc::new(FakeTool::new("t", Behavior::Echo));
    w.model.push(Script::streamed(assistant(
        json!([
            tool_call("c1", "t", json!({})),
            tool_call("c2", "ghost", json!({}))
        ]),
        "length",
    )));
    w.model.push(Script::text("retry"));
    let dyn_tool: Rc<dyn Tool> = tool.clone();
    let out = w
        .run(vec![user("go")], context(vec![], vec![dyn_tool]), config())
        .unwrap();
    let rs = tool_results(&out);
    assert_eq!(
        result_text(&rs[0]),
        "Tool call \"t\" was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments."
    );
    assert_eq!(result_text(&rs[1]), truncated_call_text("ghost"));
    assert!(tool.calls.borrow().is_empty());
    assert!(rs[0].get("durationMs").is_none());
    // Never terminates: another request follows.
    assert_eq!(w.model.requests.borrow().len(), 2);
}

#[test]
fn l_95_l_124_l_127_aborted_before_preflight_every_call_still_gets_a_result() {
    let mut w = World::default();
    w.hooks.before = Some(Box::new(|_| panic!("hooks are skipped once aborted")));
    let signal = w.signal.clone();
    // Abort when the assistant message ends, before tool preflight.
    *w.sink.on_event.borrow_mut() = Some(Box::new(move |e| {
        if let AgentEvent::MessageEnd { message } = e {
            if message["role"] == "assistant" {
                signal.aborted.set(true);
            }
        }
    }));
    w.model.push(Script::tools(vec![
        tool_call("c1", "t", json!({})),
        tool_call("c2", "t", json!({})),
    ]));
    let mut aborted = assistant(json!([]), "aborted");
    aborted["errorMessage"] = json!("Request aborted");
    w.model.push(Script::streamed(aborted));
    let tool = Rc::new(FakeTool::new("t", Behavior::Echo));
    let dyn_tool: Rc<dyn Tool> = tool.clone();
    let out = w
        .run(vec![user("go")], context(vec![], vec![dyn_tool]), config())
        .unwrap();
    let rs = tool_results(&out);
    assert_eq!(rs.len(), 2);
    assert!(rs
        .iter()
        .all(|r| result_text(r) == "Operation aborted" && r["isError"] == true));
    assert!(rs.iter().all(|r| r.get("durationMs").is_none()));
    assert!(tool.calls.borrow().is_empty());
    // L-127: the loop continued to another request, whose aborted response ended the run.
    assert_eq!(w.model.requests.borrow().len(), 2);
    assert_eq!(out.last().unwrap()["stopReason"], "aborted");
}

#[test]
fn l_99_abort_during_before_tool_call_wins_over_block() {
    let mut w = World::default();
    let signal = w.signal.clone();
    w.hooks.before = Some(Box::new(move |_| {
        signal.aborted.set(true);
        Ok(Some(BeforeToolCallResult {
            block: true,
            reason: Some("blocked".into()),
            terminate: true,
        }))
    }));
    w.model
        .push(Script::tools(vec![tool_call("c1", "t", json!({}))]));
    w.model.push(Script::text("after"));
    let out = w
        .run(
            vec![user("go")],
            context(vec![], vec![FakeTool::new("t", Behavior::Echo).rc()]),
            config(),
        )
        .unwrap();
    let r = &tool_results(&out)[0];
    assert_eq!(result_text(r), "Operation aborted");
    // Not a terminating block: the loop made another request (L-127).
    assert_eq!(w.model.requests.borrow().len(), 2);
}

#[test]
fn l_126_parallel_call_prepared_before_an_abort_is_finalized_as_aborted() {
    let mut w = World::default();
    let signal = w.signal.clone();
    // Abort during the second call's preflight: the first is prepared but not started.
    w.hooks.before = Some(Box::new(move |c| {
        if c.tool_call["id"] == "c2" {
            signal.aborted.set(true);
        }
        Ok(None)
    }));
    let tool = Rc::new(FakeTool::new("t", Behavior::Echo));
    w.model.push(Script::tools(vec![
        tool_call("c1", "t", json!({})),
        tool_call("c2", "t", json!({})),
    ]));
    w.model.push(Script::text("after"));
    let dyn_tool: Rc<dyn Tool> = tool.clone();
    let out = w
        .run(vec![user("go")], context(vec![], vec![dyn_tool]), config())
        .unwrap();
    let rs = tool_results(&out);
    assert!(rs.iter().all(|r| result_text(r) == "Operation aborted"));
    assert!(tool.calls.borrow().is_empty());
    // c2's end (immediate) comes in the preflight phase, c1's after it (phase 2).
    let ends: Vec<String> = w
        .sink
        .labels()
        .into_iter()
        .filter(|l| l.starts_with("tool_execution_end"))
        .collect();
    assert_eq!(ends, ["tool_execution_end(c2)", "tool_execution_end(c1)"]);
}

#[test]
fn l_125_running_call_receives_abort_and_its_own_outcome_counts() {
    let world = Rc::new(World::default());
    let tool = Rc::new(FakeTool::new("t", Behavior::Gated).gated(1));
    world
        .model
        .push(Script::tools(vec![tool_call("c1", "t", json!({}))]));
    let mut aborted = assistant(json!([]), "aborted");
    aborted["errorMessage"] = json!("aborted");
    world.model.push(Script::streamed(aborted));
    let dyn_tool: Rc<dyn Tool> = tool.clone();
    let mut run = Stepped::start(
        world.clone(),
        vec![user("go")],
        context(vec![], vec![dyn_tool]),
        config(),
    );
    world.signal.aborted.set(true);
    tool.open(json!({"throw": "cancelled by signal"}));
    run.step();
    let out = run.result.borrow_mut().take().unwrap().unwrap();
    let r = &tool_results(&out)[0];
    assert_eq!(result_text(r), "cancelled by signal");
    assert!(r["durationMs"].is_number());
}

#[test]
fn every_tool_call_gets_exactly_one_result_and_balanced_events() {
    let w = World::default();
    let calls: Vec<Value> = (0..6)
        .map(|i| {
            tool_call(
                &format!("c{i}"),
                ["ok", "boom", "missing"][i % 3],
                json!({}),
            )
        })
        .collect();
    w.model.push(Script::tools(calls));
    w.model.push(Script::text("fin"));
    let tools = vec![
        FakeTool::new("ok", Behavior::Return(text_result("fine"))).rc(),
        FakeTool::new("boom", Behavior::Throw("x".into())).rc(),
    ];
    let out = w
        .run(vec![user("go")], context(vec![], tools), config())
        .unwrap();
    let rs = tool_results(&out);
    assert_eq!(rs.len(), 6);
    let labels = w.sink.labels();
    for i in 0..6 {
        assert_eq!(
            labels
                .iter()
                .filter(|l| **l == format!("tool_execution_start(c{i})"))
                .count(),
            1
        );
        assert_eq!(
            labels
                .iter()
                .filter(|l| **l == format!("tool_execution_end(c{i})"))
                .count(),
            1
        );
    }
    let starts = labels
        .iter()
        .filter(|l| l.starts_with("message_start"))
        .count();
    let ends = labels
        .iter()
        .filter(|l| l.starts_with("message_end"))
        .count();
    assert_eq!(starts, ends);
}

#[test]
fn l_99_l_101_a_before_hook_that_aborts_and_then_throws_gives_its_own_error() {
    // pi's abort check after `beforeToolCall` sits behind the await that the throw skips.
    for throws in [true, false] {
        let mut w = World::default();
        let signal = w.signal.clone();
        w.hooks.before = Some(Box::new(move |_| {
            signal.aborted.set(true);
            if throws {
                Err(pi_agent_wasm::error::Thrown::new("hook failed after abort"))
            } else {
                Ok(None)
            }
        }));
        let tool = FakeTool::new("t", Behavior::Echo).rc();
        let results = run_one_call(&w, tool, json!({}));
        let expected = if throws {
            "hook failed after abort"
        } else {
            "Operation aborted"
        };
        assert_eq!(results[0]["content"][0]["text"], expected);
        assert_eq!(results[0]["isError"], true);
    }
}
