//! Bounds where input is parsed or walked, and JS strings that survive (issue 12, defects 1,
//! 2 and 7), in the core: JSON text at and past `json::MAX_DEPTH`, streamed tool arguments
//! nested 10,000 deep, `$ref` cycles and walks past `MAX_WALK` in the validator (L-113), and
//! lone surrogates through the four decoders. The same through the built package, next to
//! pi, is in tests/js/bounds.test.mjs.
//!
//! A debug build's frames are several times a release build's, so the tests that walk
//! values at the limit run on a thread with a big stack; the stack the limits are set for
//! is the `.wasm`'s, measured in tests/js/bounds.test.mjs.
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

use common::decode_sse;
use pi_agent_wasm::agent::validate::pattern::NativePatterns;
use pi_agent_wasm::agent::validate::{validate_tool_call, MAX_WALK};
use pi_agent_wasm::json::Value;
use pi_agent_wasm::json::{self, MAX_DEPTH};
use pi_agent_wasm::provider::anthropic::AnthropicDecoder;
use pi_agent_wasm::provider::google::GoogleDecoder;
use pi_agent_wasm::provider::openai_completions::ChatCompletionsDecoder;
use pi_agent_wasm::provider::openai_responses::ResponsesDecoder;
use pi_agent_wasm::provider::parse_tool_call_arguments;
use pi_agent_wasm::provider::Decoder;
use pi_agent_wasm::value as json;

/// Runs `f` on a thread with a stack big enough for a debug build's frames.
fn big_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

fn nested(levels: usize) -> String {
    format!("{}1{}", "[".repeat(levels), "]".repeat(levels))
}

/// The nesting depth of arrays and objects in `v`, counted without recursing.
fn depth(v: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(v, 0)];
    while let Some((v, d)) = stack.pop() {
        let children: Vec<&Value> = match v {
            Value::Array(a) => a.iter().collect(),
            Value::Object(o) => o.values().collect(),
            _ => continue,
        };
        deepest = deepest.max(d + 1);
        stack.extend(children.into_iter().map(|c| (c, d + 1)));
    }
    deepest
}

fn too_deep() -> String {
    format!("JSON nested deeper than {MAX_DEPTH} levels (the limit)")
}

#[test]
fn text_at_the_limit_is_read_written_and_dropped_and_one_level_more_is_refused() {
    big_stack(|| {
        let v = json::parse(&nested(MAX_DEPTH)).unwrap();
        assert_eq!(depth(&v), MAX_DEPTH);
        let copy = v.clone();
        assert_eq!(json::parse(&json::stringify(&copy)).unwrap(), v);
        drop(copy);
        let e = json::parse(&nested(MAX_DEPTH + 1)).unwrap_err();
        assert_eq!(e.to_string(), too_deep());
        // Strings are not nesting, however many brackets they hold.
        let quoted = format!("[\"{}\"]", "[".repeat(MAX_DEPTH * 10));
        assert!(json::parse(&quoted).is_ok());
    });
}

#[test]
fn defect_2_arguments_nested_10000_deep_end_with_an_arguments_error() {
    big_stack(|| {
        let text = format!("{{\"a\":{}}}", nested(10_000));
        let (arguments, error) = parse_tool_call_arguments(&text);
        assert_eq!(arguments, json!({}));
        let error = error.unwrap();
        assert!(
            error.starts_with(&format!(
                "{}\n\nReceived arguments:\n{{\"a\":[[[",
                too_deep()
            )),
            "{}",
            &error[..200]
        );
    });
}

#[test]
fn defect_2_the_decoder_ends_a_call_nested_10000_deep_with_an_arguments_error() {
    big_stack(|| {
        let model = json!({"id": "gpt-test", "api": "openai-completions", "provider": "openai"});
        let text = format!("{{\"a\":{}}}", nested(10_000));
        let chunk = |delta: Value, finish: Value| {
            format!(
                "data: {}\n\n",
                json!({"id": "x", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
            )
        };
        let mut sse = chunk(
            json!({"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": {"name": "t", "arguments": ""}}]}),
            Value::Null,
        );
        for piece in text.as_bytes().chunks(50) {
            let piece = std::str::from_utf8(piece).unwrap();
            sse += &chunk(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}),
                Value::Null,
            );
        }
        sse += &chunk(json!({}), json!("tool_calls"));
        sse += "data: [DONE]\n\n";
        let (_, message) = decode_sse(
            &mut ChatCompletionsDecoder::new(Rc::new(model), 0.0),
            &[sse.as_bytes()],
        );
        let call = &message["content"][0];
        assert_eq!(call["arguments"], json!({}));
        assert!(call["argumentsError"]
            .as_str()
            .unwrap()
            .starts_with(&too_deep()));
        assert_eq!(message["stopReason"], "toolUse");
    });
}

/// L-112..L-115: the error text of validating `args` against `schema`.
fn validation_error(schema: Value, args: Value) -> String {
    let call = json!({"name": "t", "arguments": args});
    validate_tool_call(&schema, &call, &NativePatterns::default()).unwrap_err()
}

#[test]
fn defect_1_l_113_a_ref_cycle_that_never_goes_into_the_value_is_an_error_naming_it() {
    let cases = [
        (json!({"$ref": "#"}), json!({"a": 1}), "#"),
        (
            json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}),
            json!({"a": 1}),
            "#/$defs/a",
        ),
        (
            json!({"type": "object", "properties": {"a": {"$ref": "#/properties/a"}}}),
            json!({"a": 1}),
            "#/properties/a",
        ),
        (
            json!({"anyOf": [{"$ref": "#"}, {"type": "string"}]}),
            json!("x"),
            "#",
        ),
        (json!({"allOf": [{"$ref": "#"}]}), json!(1), "#"),
        (json!({"not": {"$ref": "#"}}), json!(1), "#"),
        (
            json!({"if": {"$ref": "#/else"}, "else": {"$ref": "#/if"}}),
            json!(1),
            "#/else",
        ),
        (
            json!({"type": "array", "items": {"$ref": "#/items"}}),
            json!([1]),
            "#/items",
        ),
        (
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "$ref": "#"}),
            json!(1),
            "#",
        ),
    ];
    for (schema, args, closing) in cases {
        let e = validation_error(schema.clone(), args);
        let want = format!(
            "Validation failed for tool \"t\":\n  - root: the schema's $ref {closing} closes a cycle that never goes into the value\n\nReceived arguments:\n"
        );
        assert!(e.starts_with(&want), "{schema}: {e}");
    }
}

#[test]
fn defect_1_a_recursive_schema_that_goes_into_the_value_still_validates() {
    let schema = json!({"type": "object", "properties": {"a": {"$ref": "#"}}});
    let call = json!({"name": "t", "arguments": {"a": {"a": {"a": {}}}}});
    let patterns = NativePatterns::default();
    assert!(validate_tool_call(&schema, &call, &patterns).is_ok());
    let e = validation_error(schema, json!({"a": {"a": {"a": 1}}}));
    assert!(e.contains("  - a.a.a: expected object, got integer"), "{e}");
}

#[test]
fn a_walk_deeper_than_max_walk_fails_naming_the_limit() {
    big_stack(|| {
        let schema = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}},
            "$defs": {"n": {"anyOf": [{"type": "array", "items": {"$ref": "#/$defs/n"}}, {"type": "number"}]}}});
        let fits = json::parse(&format!("{{\"a\":{}}}", nested(MAX_WALK / 3 - 2))).unwrap();
        let call = json!({"name": "t", "arguments": fits});
        assert!(validate_tool_call(&schema, &call, &NativePatterns::default()).is_ok());
        let deeper = json::parse(&format!("{{\"a\":{}}}", nested(MAX_WALK / 2))).unwrap();
        let e = validation_error(schema, deeper);
        assert!(
            e.starts_with(&format!("Validation failed for tool \"t\":\n  - root: the schema and the value nest deeper than {MAX_WALK} levels (the limit)\n")),
            "{}",
            &e[..200]
        );
    });
}

// ---- lone surrogates through the decoders ------------------------------------------------

/// The text, thinking and arguments of a decoded message.
fn blocks(message: &Value) -> (String, String, Value) {
    let mut out = (String::new(), String::new(), Value::Null);
    for b in message["content"].as_array().unwrap() {
        match b["type"].as_str().unwrap() {
            "text" => out.0 = b["text"].as_str().unwrap().to_string(),
            "thinking" => out.1 = b["thinking"].as_str().unwrap().to_string(),
            _ => out.2 = b["arguments"].clone(),
        }
    }
    out
}

/// An SSE event whose data is `data` (its `\udXXX` escapes as an ASCII-only provider writes
/// them); named when `name` is.
fn event(name: Option<&str>, data: Value) -> String {
    let data = data
        .to_string()
        .replace("HIGH", "\\ud83d")
        .replace("LOW", "\\ude00");
    match name {
        Some(n) => format!("event: {n}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

/// The arguments text in three pieces: a pair cut in the outer JSON string, then one cut
/// between two escapes of the arguments' own JSON.
const ARGS: [&str; 3] = [r#"{"path": "aHIGH"#, r#"LOW\ud83d"#, r#"\ude00b"}"#];

fn check(decoder: &mut dyn Decoder, sse: &str) {
    let (_, message) = decode_sse(decoder, &[sse.as_bytes()]);
    let (text, thinking, arguments) = blocks(&message);
    assert_eq!(thinking, "think 😀 on");
    assert_eq!(text, "text 😀 end");
    assert_eq!(arguments, json!({"path": "a😀😀b"}));
}

#[test]
fn defect_7_chat_completions_joins_a_pair_split_across_deltas() {
    let model = json!({"id": "gpt-test", "api": "openai-completions", "provider": "openai"});
    let delta = |d: Value| {
        event(
            None,
            json!({"id": "x", "choices": [{"index": 0, "delta": d}]}),
        )
    };
    let mut sse = delta(json!({"reasoning_content": "think HIGH"}))
        + &delta(json!({"reasoning_content": "LOW on"}))
        + &delta(json!({"content": "text HIGH"}))
        + &delta(json!({"content": "LOW end"}))
        + &delta(
            json!({"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "read", "arguments": ARGS[0]}}]}),
        );
    for a in &ARGS[1..] {
        sse += &delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": *a}}]}));
    }
    sse += &event(
        None,
        json!({"id": "x", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
    );
    check(&mut ChatCompletionsDecoder::new(Rc::new(model), 0.0), &sse);
}

#[test]
fn defect_7_responses_joins_a_pair_split_across_deltas() {
    let model = json!({"id": "gpt-5-mini", "api": "openai-responses", "provider": "openai"});
    let e = |name: &str, mut data: Value| {
        data["type"] = json!(name);
        event(Some(name), data)
    };
    let call = json!({"id": "fc_1", "type": "function_call", "call_id": "c1", "name": "read", "arguments": ""});
    let mut sse = e(
        "response.output_item.added",
        json!({"output_index": 0, "item": {"id": "rs_1", "type": "reasoning", "summary": []}}),
    ) + &e(
        "response.reasoning_summary_part.added",
        json!({"item_id": "rs_1", "output_index": 0, "summary_index": 0, "part": {"type": "summary_text", "text": ""}}),
    ) + &e(
        "response.reasoning_summary_text.delta",
        json!({"item_id": "rs_1", "output_index": 0, "summary_index": 0, "delta": "think HIGH"}),
    ) + &e(
        "response.reasoning_summary_text.delta",
        json!({"item_id": "rs_1", "output_index": 0, "summary_index": 0, "delta": "LOW on"}),
    ) + &e(
        "response.output_item.added",
        json!({"output_index": 1, "item": {"id": "msg_1", "type": "message", "role": "assistant", "content": []}}),
    ) + &e(
        "response.content_part.added",
        json!({"item_id": "msg_1", "output_index": 1, "content_index": 0, "part": {"type": "output_text", "text": ""}}),
    ) + &e(
        "response.output_text.delta",
        json!({"item_id": "msg_1", "output_index": 1, "content_index": 0, "delta": "text HIGH"}),
    ) + &e(
        "response.output_text.delta",
        json!({"item_id": "msg_1", "output_index": 1, "content_index": 0, "delta": "LOW end"}),
    ) + &e(
        "response.output_item.added",
        json!({"output_index": 2, "item": call}),
    );
    for a in ARGS {
        sse += &e(
            "response.function_call_arguments.delta",
            json!({"item_id": "fc_1", "output_index": 2, "delta": a}),
        );
    }
    // The call ends (its item without `arguments`: the streamed text stands). The arguments of
    // a call that never ends are parsed in JS alone (tests/js/builtin-arguments.test.mjs).
    sse += &e(
        "response.output_item.done",
        json!({"output_index": 2, "item": {"id": "fc_1", "type": "function_call", "call_id": "c1", "name": "read"}}),
    );
    sse += &e(
        "response.completed",
        json!({"response": {"id": "r1", "status": "completed", "output": []}}),
    );
    check(&mut ResponsesDecoder::new(Rc::new(model), 0.0), &sse);
}

#[test]
fn defect_7_anthropic_joins_a_pair_split_across_deltas() {
    let model =
        json!({"id": "claude-sonnet-4-5", "api": "anthropic-messages", "provider": "anthropic"});
    let e = |name: &str, mut data: Value| {
        data["type"] = json!(name);
        event(Some(name), data)
    };
    let delta = |i: usize, d: Value| e("content_block_delta", json!({"index": i, "delta": d}));
    let mut sse = e(
        "message_start",
        json!({"message": {"id": "m", "role": "assistant", "content": [], "usage": {"input_tokens": 1, "output_tokens": 1}}}),
    ) + &e(
        "content_block_start",
        json!({"index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
    ) + &delta(
        0,
        json!({"type": "thinking_delta", "thinking": "think HIGH"}),
    ) + &delta(0, json!({"type": "thinking_delta", "thinking": "LOW on"}))
        + &e("content_block_stop", json!({"index": 0}))
        + &e(
            "content_block_start",
            json!({"index": 1, "content_block": {"type": "text", "text": ""}}),
        )
        + &delta(1, json!({"type": "text_delta", "text": "text HIGH"}))
        + &delta(1, json!({"type": "text_delta", "text": "LOW end"}))
        + &e("content_block_stop", json!({"index": 1}))
        + &e(
            "content_block_start",
            json!({"index": 2, "content_block": {"type": "tool_use", "id": "c1", "name": "read", "input": {}}}),
        );
    for a in ARGS {
        sse += &delta(2, json!({"type": "input_json_delta", "partial_json": a}));
    }
    sse += &e("content_block_stop", json!({"index": 2}));
    sse += &e(
        "message_delta",
        json!({"delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 2}}),
    );
    sse += &e("message_stop", json!({}));
    check(&mut AnthropicDecoder::new(Rc::new(model), 0.0), &sse);
}

#[test]
fn defect_7_google_joins_a_pair_split_across_parts_and_keeps_a_lone_half_in_arguments() {
    let model =
        json!({"id": "gemini-2.5-flash", "api": "google-generative-ai", "provider": "google"});
    let c = |parts: Value| {
        event(
            None,
            json!({"candidates": [{"index": 0, "content": {"role": "model", "parts": parts}}]}),
        )
    };
    let sse = c(json!([{"text": "think HIGH", "thought": true}]))
        + &c(json!([{"text": "LOW on", "thought": true}]))
        + &c(json!([{"text": "text HIGH"}]))
        + &c(json!([{"text": "LOW end"}]))
        + &event(
            None,
            json!({"candidates": [{"index": 0, "content": {"role": "model", "parts": [{"functionCall": {"name": "read", "args": {"path": "aHIGHb"}}}]}, "finishReason": "STOP"}]}),
        );
    let (_, message) = decode_sse(
        &mut GoogleDecoder::new(Rc::new(model), 0.0),
        &[sse.as_bytes()],
    );
    let (text, thinking, arguments) = blocks(&message);
    assert_eq!(thinking, "think 😀 on");
    assert_eq!(text, "text 😀 end");
    // Gemini sends a call whole: its lone half stays one, and goes back to JS as one.
    assert_eq!(json::stringify(&arguments), r#"{"path":"a\ud83db"}"#);
}
