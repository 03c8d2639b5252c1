//! Message JSON: `Message::from_value`, the transcript readers and the four request
//! builders on arbitrary messages, models and options. The input is one JSON document
//! `{"model": …, "messages": […], "options": {…}}` (seeded from the request and
//! transform fixtures); a bare array is the messages alone, with a default model.
//! Nothing fails, and:
//! - a message that reads as a pi message reads back the same from its JSON form;
//! - each request body (or its `Err`) comes back, and `JSON.stringify` writes it as JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_agent_wasm::json::Value;
use pi_agent_wasm::message::transcript::{
    get_current_system_prompt, get_current_tools, to_tool_declaration,
};
use pi_agent_wasm::message::ThinkingLevel;
use pi_agent_wasm::provider::anthropic_request::{self, AnthropicOptions};
use pi_agent_wasm::provider::google_request::{self, GoogleOptions};
use pi_agent_wasm::provider::openai_completions_request::{build_params, RequestOptions};
use pi_agent_wasm::provider::openai_responses_request::{self, ResponsesOptions};
use pi_agent_wasm::provider::transform::transform_messages;
use pi_agent_wasm::value as json;
use pi_fuzz::typed::Message;
use pi_fuzz::{assert_stringify_round_trips, deep_clone, known, Deep};

const NOW: f64 = 1_700_000_000_000.0;

fn default_model() -> Value {
    json!({"id": "m1", "name": "M", "api": "openai-completions", "provider": "p1",
        "baseUrl": "http://127.0.0.1/v1", "reasoning": true, "input": ["text", "image"],
        "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 128000, "maxTokens": 4096})
}

fn read_back(m: &Value) {
    let Ok(message) = Message::from_value(deep_clone(m).into_inner()) else {
        return;
    };
    let json = Deep::new(message.to_value());
    match Message::from_value(deep_clone(&json).into_inner()) {
        Ok(again) => {
            let again = Deep::new(again.to_value());
            assert!(
                *again == *json,
                "message does not read back the same: {:?}",
                pi_fuzz::first_difference(&again, &json)
            );
        }
        Err(e) => panic!("message JSON does not read back: {e}"),
    }
}

fuzz_target!(|data: &[u8]| pi_fuzz::on_big_stack(|| {
    if known::skip_deep_text(data) {
        return;
    }
    let Some(input) = pi_fuzz::parse_json(data).map(Deep::into_inner) else {
        return;
    };
    let (model, messages, options) = match input {
        Value::Array(messages) => (default_model(), messages, Value::Null),
        Value::Object(mut o) => {
            let messages = match o.shift_remove("messages") {
                Some(Value::Array(a)) => a,
                Some(one) => vec![one],
                None => Vec::new(),
            };
            (
                o.shift_remove("model").unwrap_or_else(default_model),
                messages,
                o.shift_remove("options").unwrap_or(Value::Null),
            )
        }
        one => (default_model(), vec![one], Value::Null),
    };
    let (model, options) = (Deep::new(model), Deep::new(options));
    let messages: Vec<Deep> = messages.into_iter().map(Deep::new).collect();
    // The builders take the transcript as a slice of values; the harness keeps ownership.
    let messages = Deep::new(Value::Array(
        messages.into_iter().map(Deep::into_inner).collect(),
    ));
    let messages: &[Value] = messages.as_array().map_or(&[], Vec::as_slice);

    for m in messages {
        read_back(m);
    }
    for tool in get_current_tools(messages) {
        let tool = Deep::new(tool);
        let decl = Deep::new(to_tool_declaration(&tool));
        assert_stringify_round_trips(&decl, "tool declaration");
    }
    let _ = get_current_system_prompt(messages);
    let same_id = |id: &str, _: &Value| id.to_string();
    for m in transform_messages(messages, &model, &same_id, NOW) {
        let m = Deep::new(m);
        assert_stringify_round_trips(&m, "transformed message");
    }

    let num = |k: &str| options.get(k).and_then(Value::as_f64);
    let text = |k: &str| options.get(k).and_then(Value::as_str).map(str::to_string);
    let base = RequestOptions {
        max_tokens: num("maxTokens"),
        temperature: num("temperature"),
        reasoning: options
            .get("reasoning")
            .and_then(Value::as_str)
            .and_then(ThinkingLevel::parse),
        tool_choice: options
            .get("toolChoice")
            .map(|v| deep_clone(v).into_inner()),
        sampling_params: options
            .get("samplingParams")
            .map(|v| deep_clone(v).into_inner()),
    };

    let body = Deep::new(build_params(&model, messages, &base, NOW));
    assert_stringify_round_trips(&body, "chat completions body");

    let responses = ResponsesOptions {
        base: base.clone(),
        session_id: text("sessionId"),
        cache_retention: text("cacheRetention"),
        api_key: text("apiKey"),
    };
    if let Ok(body) =
        openai_responses_request::build_body(&model, messages, &responses, NOW).map(Deep::new)
    {
        assert_stringify_round_trips(&body, "responses body");
    }

    let anthropic = AnthropicOptions {
        max_tokens: base.max_tokens,
        temperature: base.temperature,
        reasoning: base.reasoning,
        tool_choice: base.tool_choice.clone(),
        cache_retention: text("cacheRetention"),
        thinking_budgets: options
            .get("thinkingBudgets")
            .map(|v| deep_clone(v).into_inner()),
        user_id: text("userId"),
        configured_betas: options.get("betas").map(|b| b.as_str().map(str::to_string)),
    };
    let request = anthropic_request::build_request(&model, messages, &anthropic, NOW);
    let body = Deep::new(request.body);
    assert_stringify_round_trips(&body, "anthropic body");

    let google = GoogleOptions {
        max_tokens: base.max_tokens,
        temperature: base.temperature,
        reasoning: base.reasoning,
        tool_choice: text("toolChoice"),
    };
    if let Ok(body) = google_request::build_body(&model, messages, &google, NOW).map(Deep::new) {
        assert_stringify_round_trips(&body, "google body");
    }
}));
