//! A native differential suite: the scripted scenarios of tests/fixtures/reference/
//! scenarios.mjs, recorded through the reference pi-agent-core 1.6.0 (generate.mjs), run
//! through our loop. Event traces, the messages each request received and the returned
//! messages must be identical, key order included (loop-made timestamps and durations are
//! normalised on both sides).
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
use pi_agent_wasm::io::*;
use pi_agent_wasm::json::Value;
use pi_agent_wasm::message::ThinkingLevel;
use pi_agent_wasm::value as json;

fn normalize(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| {
                    let x = match (k.as_str(), x.as_f64()) {
                        ("timestamp", Some(t)) if t > 1e12 => json!("NOW"),
                        ("durationMs", Some(_)) => json!("DURATION"),
                        _ => normalize(x),
                    };
                    (k.clone(), x)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(normalize).collect()),
        other => other.clone(),
    }
}

fn first_difference(ours: &[Value], pi: &[Value]) -> Option<String> {
    for (i, (a, b)) in ours.iter().zip(pi).enumerate() {
        if !same(a, b) {
            return Some(format!("at {i}:\n  ours: {a}\n  pi:   {b}"));
        }
    }
    (ours.len() != pi.len()).then(|| format!("lengths differ: ours {} pi {}", ours.len(), pi.len()))
}

fn tool(spec: &Value) -> Rc<dyn Tool> {
    let b = &spec["behavior"];
    let behavior = if b.get("echo").is_some() {
        Behavior::Echo
    } else if let Some(t) = b.get("throw") {
        Behavior::Throw(t.as_str().unwrap().into())
    } else {
        Behavior::Return(b["return"].clone())
    };
    let mut t = FakeTool::new(spec["name"].as_str().unwrap(), behavior);
    if let Some(p) = spec.get("params") {
        t = t.with_params(p.clone());
    }
    if spec["mode"] == "sequential" {
        t = t.with_mode(ExecutionMode::Sequential);
    }
    t.rc()
}

fn messages(v: &Value) -> Vec<Rc<Value>> {
    v.as_array()
        .map(|a| a.iter().cloned().map(Rc::new).collect())
        .unwrap_or_default()
}

#[test]
fn scenarios_match_the_reference_traces() {
    let scenarios = common::reference_cases("loop.json");
    assert!(scenarios.len() >= 14);
    let mut failures = Vec::new();
    for sc in &scenarios {
        let mut w = World::default();
        for r in sc["responses"].as_array().unwrap() {
            w.model.push(Script::streamed(r.clone()));
        }
        if let Some(batches) = sc.get("steering").and_then(Value::as_array) {
            w.hooks.steering_configured = true;
            w.hooks
                .steering
                .borrow_mut()
                .extend(batches.iter().map(messages));
        }
        if let Some(batches) = sc.get("followUps").and_then(Value::as_array) {
            w.hooks.follow_ups_configured = true;
            w.hooks
                .follow_ups
                .borrow_mut()
                .extend(batches.iter().map(messages));
        }
        let mut cfg = config();
        if sc["config"]["toolExecution"] == "sequential" {
            cfg.tool_execution = ToolExecution::Sequential;
        }
        if let Some(level) = sc["config"]["reasoning"].as_str() {
            cfg.reasoning = ThinkingLevel::parse(level);
        }
        let tools: Vec<Rc<dyn Tool>> = sc["tools"]
            .as_array()
            .map(|a| a.iter().map(tool).collect())
            .unwrap_or_default();
        let ctx = context(messages(&sc["context"]), tools);
        let out = if sc["continue"] == true {
            w.run_continue(ctx, cfg)
        } else {
            w.run(messages(&sc["prompts"]), ctx, cfg)
        }
        .unwrap();
        let name = sc["name"].as_str().unwrap();
        let expected = &sc["expected"];
        let events: Vec<Value> = w.sink.json().iter().map(normalize).collect();
        if let Some(d) = first_difference(&events, expected["events"].as_array().unwrap()) {
            failures.push(format!("{name}: events {d}"));
        }
        let requests: Vec<Value> = w
            .model
            .requests
            .borrow()
            .iter()
            .map(|r| normalize(&Value::Array(r.messages.clone())))
            .collect();
        if let Some(d) = first_difference(&requests, expected["requests"].as_array().unwrap()) {
            failures.push(format!("{name}: requests {d}"));
        }
        let returned: Vec<Value> = out.iter().map(|m| normalize(m)).collect();
        if let Some(d) = first_difference(&returned, expected["messages"].as_array().unwrap()) {
            failures.push(format!("{name}: returned messages {d}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
