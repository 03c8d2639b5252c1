//! The transcript model (spec §3) and declareToolChanges (§7), natively.
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
use pi_agent_wasm::agent::declarations;
use pi_agent_wasm::io::Tool;
use pi_agent_wasm::json::Value;
use pi_agent_wasm::message::transcript::*;
use pi_agent_wasm::value as json;

fn decl(name: &str, desc: &str) -> Value {
    json!({"name": name, "description": desc, "parameters": {"type": "object"}})
}

fn sys(v: Value) -> Rc<Value> {
    msg(v)
}

#[test]
fn l_23_initial_system_message_shapes_and_key_order() {
    assert_eq!(create_initial_system_message(None, &[]), None);
    assert_eq!(create_initial_system_message(Some(""), &[]), None);
    let m = create_initial_system_message(Some("be brief"), &[decl("a", "A")]).unwrap();
    assert_eq!(
        serde_json::to_string(&m).unwrap(),
        r#"{"role":"system","content":"be brief","toolsAdded":[{"name":"a","description":"A","parameters":{"type":"object"}}],"timestamp":0}"#
    );
    let m = create_initial_system_message(None, &[decl("a", "A")]).unwrap();
    assert_eq!(m["content"], "");
}

#[test]
fn l_25_current_tools_replay_removals_then_additions_keeping_positions() {
    let ms = [
        json!({"role": "system", "content": "", "toolsAdded": [decl("a", "1"), decl("b", "1"), decl("c", "1")]}),
        json!({"role": "user", "content": "x", "toolsAdded": [decl("z", "ignored")]}),
        json!({"role": "system", "content": "", "toolsAdded": [decl("a", "2")]}),
        json!({"role": "system", "content": "", "toolsRemoved": [{"name": "b"}], "toolsAdded": [decl("b", "3")]}),
    ];
    let tools = get_current_tools(ms.iter());
    let summary: Vec<(String, String)> = tools
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().into(),
                t["description"].as_str().unwrap().into(),
            )
        })
        .collect();
    // a re-added without removal keeps its position; b removed then re-added moves to the end.
    assert_eq!(
        summary,
        [
            ("a".into(), "2".into()),
            ("c".into(), "1".into()),
            ("b".into(), "3".into())
        ]
    );
}

#[test]
fn l_26_l_27_changes_list_changed_tools_in_both_lists() {
    let prev = [decl("a", "1"), decl("b", "1"), decl("gone", "1")];
    let cur = [decl("b", "2"), decl("a", "1"), decl("new", "1")];
    let c = get_tool_state_changes(&prev, &cur);
    let names = |l: &[Value]| {
        l.iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&c.tools_added), ["b", "new"]);
    assert_eq!(names(&c.tools_removed), ["b", "gone"]);
    assert_eq!(c.tools_removed[0], json!({"name": "b"}));
}

#[test]
fn l_26_declarations_compare_by_serialized_json_key_order_included() {
    let a = json!({"name": "t", "description": "d", "parameters": {"type": "object", "properties": {}}});
    let b: Value = serde_json::from_str(
        r#"{"name":"t","description":"d","parameters":{"properties":{},"type":"object"}}"#,
    )
    .unwrap();
    assert!(!declarations_equal(&a, &b));
    // Extra executable fields are ignored.
    let mut c = a.clone();
    c["label"] = json!("Label");
    assert!(declarations_equal(&a, &c));
}

#[test]
fn l_28_l_29_current_system_message_and_prompt() {
    let ms = [
        json!({"role": "system", "content": "base", "sections": {"s1": "one", "s2": "two"}, "timestamp": 7}),
        json!({"role": "user", "content": "hi"}),
        json!({"role": "system", "content": [{"type": "text", "text": "more"}, {"type": "text", "text": "lines"}], "sections": {"s1": null}, "toolsAdded": [decl("t", "T")], "timestamp": 9}),
        json!({"role": "system", "content": "", "timestamp": 10}),
    ];
    let m = get_current_system_message(ms.iter()).unwrap();
    assert_eq!(m["content"], "base\n\nmore\nlines");
    assert_eq!(m["sections"], json!({"s2": "two"}));
    assert_eq!(m["toolsAdded"][0]["name"], "t");
    assert_eq!(m["timestamp"], 7);
    assert_eq!(
        get_current_system_prompt(ms.iter()),
        "base\n\nmore\nlines\n\ntwo"
    );
    assert_eq!(
        get_current_system_message([json!({"role": "user"})].iter()),
        None
    );
    assert_eq!(get_current_system_prompt([].iter()), "");
}

fn tool(name: &str) -> Rc<dyn Tool> {
    FakeTool::new(name, Behavior::Echo).rc()
}

#[test]
fn l_71_inserts_a_declaration_before_the_first_non_system_pending_message() {
    let tools = vec![tool("a")];
    let pending = vec![sys(json!({"role": "user", "content": "x"}))];
    let out = declare_tool_changes(&[], &declarations(&tools), &pending, 42.0);
    assert_eq!(out.len(), 2);
    assert_eq!(
        serde_json::to_string(&*out[0]).unwrap(),
        r#"{"role":"system","content":"","timestamp":42,"toolsAdded":[{"name":"a","description":"the a tool","parameters":{"type":"object","properties":{}}}]}"#
    );
    assert!(Rc::ptr_eq(&out[1], &pending[0]));
    // With no pending messages the declaration is the only one.
    let out = declare_tool_changes(&[], &declarations(&tools), &[], 1.0);
    assert_eq!(out.len(), 1);
    // With only system messages pending, it goes last... unless one is the pending S (L-70).
    let s = sys(json!({"role": "system", "content": "p"}));
    let out = declare_tool_changes(&[], &declarations(&tools), &[s], 1.0);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0]["content"], "p");
    assert_eq!(out[0]["toolsAdded"][0]["name"], "a");
}

#[test]
fn l_70_unchanged_returns_the_same_objects() {
    let tools = vec![tool("a")];
    let declared = [sys(
        json!({"role": "system", "content": "", "toolsAdded": [tools[0].declaration()]}),
    )];
    let pending = vec![sys(json!({"role": "system", "content": "note"})), user("u")];
    let out = declare_tool_changes(&declared, &declarations(&tools), &pending, 1.0);
    // The same objects, and no more or fewer of them (a zip alone stops at the shorter).
    assert_eq!(out.len(), pending.len());
    assert!(out.iter().zip(&pending).all(|(a, b)| Rc::ptr_eq(a, b)));
}

#[test]
fn l_70_a_pending_system_message_claiming_tools_is_rewritten_to_the_truth() {
    let tools = vec![tool("a")];
    let declared = [sys(
        json!({"role": "system", "content": "", "toolsAdded": [tools[0].declaration()]}),
    )];
    let liar = sys(
        json!({"role": "system", "content": "c", "custom": 1, "toolsAdded": [decl("fake", "f")], "toolsRemoved": [{"name": "a"}], "timestamp": 3}),
    );
    let out = declare_tool_changes(&declared, &declarations(&tools), &[liar], 1.0);
    // Replaying must yield exactly context.tools: no changes remain, so the tool keys go.
    assert_eq!(
        *out[0],
        json!({"role": "system", "content": "c", "custom": 1, "timestamp": 3})
    );
}

#[test]
fn l_72_replacing_tools_announces_removal_and_addition() {
    let declared = [sys(
        json!({"role": "system", "content": "", "toolsAdded": [tool("a").declaration(), tool("b").declaration()]}),
    )];
    let out = declare_tool_changes(
        &declared,
        &declarations(&[tool("b"), tool("c")]),
        &[user("u")],
        5.0,
    );
    assert_eq!(out[0]["toolsAdded"][0]["name"], "c");
    assert_eq!(out[0]["toolsRemoved"], json!([{"name": "a"}]));
}

#[test]
fn l_72_l_73_run_declares_once_and_only_name_description_parameters() {
    let w = World::default();
    w.model
        .push(Script::tools(vec![tool_call("c1", "a", json!({}))]));
    w.model.push(Script::text("done"));
    let out = w
        .run(vec![user("go")], context(vec![], vec![tool("a")]), config())
        .unwrap();
    let systems: Vec<&Rc<Value>> = out.iter().filter(|m| m["role"] == "system").collect();
    assert_eq!(systems.len(), 1);
    let d = &systems[0]["toolsAdded"][0];
    assert_eq!(
        d.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["name", "description", "parameters"]
    );
    // L-60: the declaration precedes the prompt in events too.
    assert_eq!(
        w.sink.labels()[2..4],
        ["message_start(system)", "message_end(system)"]
    );
}

#[test]
fn l_72_tools_changed_by_prepare_next_turn_are_announced_next_turn() {
    let mut w = World::default();
    w.hooks.next_turn = Some(Box::new(|turn| {
        let mut c = turn.context.clone();
        c.tools = vec![tool("a"), tool("b")];
        Some(pi_agent_wasm::io::NextTurn {
            context: Some(c),
            ..Default::default()
        })
    }));
    w.model
        .push(Script::tools(vec![tool_call("c1", "a", json!({}))]));
    w.model.push(Script::text("done"));
    let out = w
        .run(vec![user("go")], context(vec![], vec![tool("a")]), config())
        .unwrap();
    let systems: Vec<&Rc<Value>> = out.iter().filter(|m| m["role"] == "system").collect();
    assert_eq!(systems.len(), 2);
    assert_eq!(systems[1]["toolsAdded"][0]["name"], "b");
    // It sits after the tool result, before the second assistant message.
    let roles: Vec<&str> = out.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "toolResult",
            "system",
            "assistant"
        ]
    );
}
