//! The request of `anthropic-messages` (pi-ai 1.6.0 `streamSimple` → `buildParams`): the
//! system prompt as a cached text block, the transcript as Messages `messages` (user text and
//! images, assistant text, signed and redacted thinking, `tool_use`, and each turn's tool
//! results in one user message, error-result images after them), a cache breakpoint on the
//! last message, the tools with `eager_input_streaming`, `max_tokens`, and thinking: a budget
//! fitted inside `max_tokens` for budget models, adaptive with an effort for
//! `forceAdaptiveThinking` models, or disabled. Betas go in the `anthropic-beta` header.
//! <https://docs.anthropic.com/en/api/messages>
//!
//! `model.compat` settings read: `supportsEagerToolInputStreaming`,
//! `supportsLongCacheRetention`, `supportsCacheControlOnTools`, `supportsTemperature`,
//! `allowEmptySignature`, `supportsMidConvoSystemMessages`, `forceAdaptiveThinking`,
//! `sendSessionAffinityHeaders`, `sessionAffinityFormat`. Not sent: OAuth (Claude Code)
//! requests, message threads, native mid-conversation tool changes, effort markers, fallback
//! models and strict tools.
//! Pure: JSON in, JSON out.

use crate::json::Put;
use crate::json::{Map, Value};
use crate::text::Joined;

use super::compat_flag;
use super::openai_completions_request::clamp_max_tokens;
use super::transform::{
    collapse_system_messages, render_system_update, replace_images, transform_messages,
};
use crate::json::sanitize;
use crate::message::transcript::{get_current_system_prompt, get_current_tools};
use crate::message::{num, str_field, ThinkingLevel};

const ERROR_IMAGE_NOTE: &str = "(image attached after the tool results)";
const INTERLEAVED_THINKING_BETA: &str = "interleaved-thinking-2025-05-14";
const FINE_GRAINED_TOOL_STREAMING_BETA: &str = "fine-grained-tool-streaming-2025-05-14";
const MIN_ANSWER_TOKENS: f64 = 1024.0;

/// What the Anthropic request reads of the call's options.
#[derive(Clone, Debug, Default)]
pub struct AnthropicOptions {
    pub max_tokens: Option<f64>,
    pub temperature: Option<f64>,
    pub reasoning: Option<ThinkingLevel>,
    pub tool_choice: Option<Value>,
    /// `"none"`, `"short"` (the default) or `"long"`.
    pub cache_retention: Option<String>,
    /// `thinkingBudgets`: tokens per level, over the defaults.
    pub thinking_budgets: Option<Value>,
    /// `metadata.user_id`.
    pub user_id: Option<String>,
    /// The `anthropic-beta` header the model or call configures (`Some(None)` for `null`).
    pub configured_betas: Option<Option<String>>,
}

/// The request: its body and its betas (the `anthropic-beta` header).
pub struct AnthropicRequest {
    pub body: Value,
    pub betas: Vec<String>,
}

/// `[^a-zA-Z0-9_-]` → `_` per UTF-16 unit, cut to 64 units.
fn normalize_tool_call_id(id: &str) -> String {
    let mut out = String::new();
    for c in id.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            out.push(c);
        } else {
            out.extend(std::iter::repeat_n('_', c.len_utf16()));
        }
    }
    out.truncate(64);
    out
}

fn image(b: &Value) -> Value {
    crate::value!({"type": "image", "source": {"type": "base64", "media_type": str_field(b, "mimeType"), "data": str_field(b, "data")}})
}

/// A tool result's content: its text joined by newlines, or blocks when it has images.
fn result_content(content: &[Value]) -> Value {
    if !content.iter().any(|c| str_field(c, "type") == "image") {
        let texts: Vec<&str> = content.iter().map(|c| str_field(c, "text")).collect();
        return sanitize(&texts.joined("\n")).into();
    }
    let mut blocks: Vec<Value> = content
        .iter()
        .map(|b| {
            if str_field(b, "type") == "text" {
                crate::value!({"type": "text", "text": sanitize(str_field(b, "text"))})
            } else {
                image(b)
            }
        })
        .collect();
    if !blocks.iter().any(|b| str_field(b, "type") == "text") {
        blocks.insert(
            0,
            crate::value!({"type": "text", "text": "(see attached image)"}),
        );
    }
    Value::Array(blocks)
}

/// An error result's images become a note in its content (a run of them one note); the
/// images and their caption are returned to follow the turn's results.
fn split_error_images(m: &Value, content: &[Value]) -> Option<(Vec<Value>, Vec<Value>)> {
    if m.get("isError") != Some(&Value::Bool(true)) {
        return None;
    }
    let images: Vec<Value> = content
        .iter()
        .filter(|b| str_field(b, "type") == "image")
        .cloned()
        .collect();
    if images.is_empty() {
        return None;
    }
    let replaced = replace_images(content, ERROR_IMAGE_NOTE);
    let caption = format!(
        "Images from the error result of tool call {} ({}):",
        str_field(m, "toolCallId"),
        str_field(m, "toolName")
    );
    let mut extra = vec![crate::value!({"type": "text", "text": caption})];
    extra.extend(images.iter().map(image));
    Some((replaced, extra))
}

fn assistant_blocks(m: &Value, allow_empty_signature: bool) -> Vec<Value> {
    let mut blocks = Vec::new();
    for b in m
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match str_field(b, "type") {
            "text" => {
                let text = str_field(b, "text");
                if !text.trim().is_empty() {
                    blocks.push(crate::value!({"type": "text", "text": sanitize(text)}));
                }
            }
            "thinking" => {
                if b.get("redacted") == Some(&Value::Bool(true)) {
                    let mut r = Map::new();
                    r.put("type", "redacted_thinking".into());
                    if let Some(sig) = b.get("thinkingSignature") {
                        r.put("data", sig.clone());
                    }
                    blocks.push(Value::Object(r));
                    continue;
                }
                let raw = str_field(b, "thinking");
                let sig = str_field(b, "thinkingSignature");
                let signed = !sig.trim().is_empty();
                if raw.trim().is_empty() && !signed {
                    continue;
                }
                let thinking = sanitize(raw);
                blocks.push(if signed {
                    crate::value!({"type": "thinking", "thinking": thinking, "signature": sig})
                } else if allow_empty_signature {
                    crate::value!({"type": "thinking", "thinking": thinking, "signature": ""})
                } else {
                    crate::value!({"type": "text", "text": thinking})
                });
            }
            "toolCall" => {
                let input = b
                    .get("arguments")
                    .filter(|a| !a.is_null())
                    .cloned()
                    .unwrap_or_else(|| crate::value!({}));
                blocks.push(crate::value!({"type": "tool_use", "id": b.get("id").cloned().unwrap_or(Value::Null), "name": b.get("name").cloned().unwrap_or(Value::Null), "input": input}));
            }
            _ => {}
        }
    }
    blocks
}

fn convert_messages(messages: &[Value], allow_empty_signature: bool) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let mut pending_system: Vec<Value> = Vec::new();
    let mut i = 0;
    while let Some(m) = messages.get(i) {
        match str_field(m, "role") {
            "system" => {
                let text = render_system_update(m);
                if !text.is_empty() {
                    pending_system.push(
                        crate::value!({"role": "system", "content": [{"type": "text", "text": sanitize(&text)}]}),
                    );
                }
            }
            "user" => match m.get("content") {
                Some(Value::String(s)) if !s.trim().is_empty() => {
                    out.push(crate::value!({"role": "user", "content": sanitize(s)}));
                }
                Some(Value::Array(items)) => {
                    let blocks: Vec<Value> = items
                        .iter()
                        .filter_map(|b| {
                            if str_field(b, "type") == "text" {
                                // pi-ai drops a text that is blank once sanitised.
                                let text = sanitize(str_field(b, "text"));
                                (!text.trim().is_empty())
                                    .then(|| crate::value!({"type": "text", "text": text}))
                            } else {
                                Some(image(b))
                            }
                        })
                        .collect();
                    if !blocks.is_empty() {
                        out.push(crate::value!({"role": "user", "content": blocks}));
                    }
                }
                _ => {}
            },
            "assistant" => {
                let blocks = assistant_blocks(m, allow_empty_signature);
                if !blocks.is_empty() {
                    out.append(&mut pending_system);
                    out.push(crate::value!({"role": "assistant", "content": blocks}));
                }
            }
            "toolResult" => {
                let mut results = Vec::new();
                let mut images = Vec::new();
                while let Some(t) = messages
                    .get(i)
                    .filter(|t| str_field(t, "role") == "toolResult")
                {
                    let content = t
                        .get("content")
                        .and_then(Value::as_array)
                        .map(Vec::as_slice)
                        .unwrap_or(&[]);
                    let (content, extra) = match split_error_images(t, content) {
                        Some((replaced, extra)) => (result_content(&replaced), extra),
                        None => (result_content(content), Vec::new()),
                    };
                    let mut r = Map::new();
                    r.put("type", "tool_result".into());
                    r.put("tool_use_id", str_field(t, "toolCallId").into());
                    r.put("content", content);
                    if let Some(e) = t.get("isError") {
                        r.put("is_error", e.clone());
                    }
                    results.push(Value::Object(r));
                    images.extend(extra);
                    i += 1;
                }
                results.extend(images);
                out.push(crate::value!({"role": "user", "content": results}));
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out.append(&mut pending_system);
    out
}

/// Puts the cache breakpoint on the last block of the last message when it is a user or
/// system message.
fn mark_last_message(messages: &mut [Value], cache_control: &Value) {
    let Some(Value::Object(last)) = messages.last_mut() else {
        return;
    };
    if !matches!(
        last.get("role").and_then(Value::as_str),
        Some("user" | "system")
    ) {
        return;
    }
    match last.get_mut("content") {
        Some(Value::Array(blocks)) => {
            if let Some(Value::Object(b)) = blocks.last_mut() {
                let cacheable = matches!(
                    b.get("type").and_then(Value::as_str),
                    Some("text" | "image" | "tool_result" | "tool_addition" | "tool_removal")
                );
                if cacheable {
                    b.put("cache_control", cache_control.clone());
                }
            }
        }
        Some(Value::String(s)) => {
            let text = std::mem::take(s);
            last.insert(
                "content".into(),
                crate::value!([{"type": "text", "text": text, "cache_control": cache_control}]),
            );
        }
        _ => {}
    }
}

/// The thinking budget of a level: `thinkingBudgets` over pi-ai's defaults; `xhigh`/`max`
/// count as `high`.
fn budget_for(level: &str, custom: Option<&Value>) -> Option<f64> {
    let level = match level {
        "xhigh" | "max" => "high",
        other => other,
    };
    if let Some(v) = custom.and_then(|c| c.get(level)) {
        return v.as_f64();
    }
    match level {
        "minimal" => Some(1024.0),
        "low" => Some(2048.0),
        "medium" => Some(8192.0),
        "high" => Some(16384.0),
        _ => None,
    }
}

/// pi-ai `mapThinkingLevelToEffort` for adaptive-thinking models.
fn effort_for(model: &Value, level: &str) -> Value {
    if let Some(Value::String(mapped)) = model.get("thinkingLevelMap").and_then(|m| m.get(level)) {
        return mapped.as_str().into();
    }
    match level {
        "minimal" | "low" => "low",
        "medium" => "medium",
        _ => "high",
    }
    .into()
}

pub fn build_request(
    model: &Value,
    messages: &[Value],
    options: &AnthropicOptions,
    now: f64,
) -> AnthropicRequest {
    let mid_convo_system = compat_flag(model, "supportsMidConvoSystemMessages", false);
    let resolved = if mid_convo_system {
        messages.to_vec()
    } else {
        collapse_system_messages(messages)
    };
    let retention = options.cache_retention.as_deref().unwrap_or("short");
    let cache_control = (retention != "none").then(|| {
        if retention == "long" && compat_flag(model, "supportsLongCacheRetention", true) {
            crate::value!({"type": "ephemeral", "ttl": "1h"})
        } else {
            crate::value!({"type": "ephemeral"})
        }
    });
    let initial = resolved
        .first()
        .filter(|m| str_field(m, "role") == "system");
    let system_text = initial
        .map(|m| get_current_system_prompt(std::iter::once(m)))
        .unwrap_or_default();
    let normalize = |id: &str, _: &Value| normalize_tool_call_id(id);
    let transformed = transform_messages(&resolved, model, &normalize, now);
    let conversation = match initial {
        Some(_) => transformed.get(1..).unwrap_or(&[]),
        None => &transformed[..],
    };
    let mut converted = convert_messages(
        conversation,
        compat_flag(model, "allowEmptySignature", false),
    );
    if let Some(cc) = &cache_control {
        mark_last_message(&mut converted, cc);
    }

    // Thinking: streamSimple's choice of budget, adaptive effort, or off.
    let reasoning_model = model.get("reasoning") == Some(&Value::Bool(true));
    let adaptive = compat_flag(model, "forceAdaptiveThinking", false);
    let level = options.reasoning.map(|l| l.as_str().to_string());
    let model_max = model
        .get("maxTokens")
        .and_then(Value::as_f64)
        .unwrap_or(0.0);
    let mut max_tokens = clamp_max_tokens(model, messages, options.max_tokens.unwrap_or(model_max));
    let mut budget_tokens = None;
    if let (Some(level), false) = (&level, adaptive) {
        if let Some(mut budget) = budget_for(level, options.thinking_budgets.as_ref()) {
            let adjusted = (max_tokens + budget).min(model_max);
            if adjusted <= budget {
                budget = budget.min((adjusted - MIN_ANSWER_TOKENS).max(0.0));
            }
            max_tokens = clamp_max_tokens(model, messages, adjusted);
            budget_tokens = Some(budget.min((max_tokens - MIN_ANSWER_TOKENS).max(0.0)));
        }
    }
    let thinking_enabled = level.is_some();

    let tools = get_current_tools(resolved.iter());
    let mut betas: Vec<String> = Vec::new();
    match &options.configured_betas {
        Some(None) => {}
        Some(Some(list)) => {
            for b in list.split(',').map(str::trim).filter(|b| !b.is_empty()) {
                if !betas.iter().any(|x| x == b) {
                    betas.push(b.to_string());
                }
            }
        }
        None => {
            let eager = compat_flag(model, "supportsEagerToolInputStreaming", true);
            if !tools.is_empty() && !eager {
                betas.push(FINE_GRAINED_TOOL_STREAMING_BETA.into());
            }
            if reasoning_model && thinking_enabled && !adaptive {
                betas.push(INTERLEAVED_THINKING_BETA.into());
            }
        }
    }

    let mut p = Map::new();
    p.put("model", str_field(model, "id").into());
    p.put("messages", Value::Array(converted));
    p.put("max_tokens", num(max_tokens));
    p.put("stream", true.into());
    if !system_text.is_empty() {
        let mut block = Map::new();
        block.put("type", "text".into());
        block.put("text", sanitize(&system_text).into());
        if let Some(cc) = &cache_control {
            block.put("cache_control", cc.clone());
        }
        p.put("system", crate::value!([Value::Object(block)]));
    }
    if let (Some(t), false, true) = (
        options.temperature,
        thinking_enabled,
        compat_flag(model, "supportsTemperature", true),
    ) {
        p.put("temperature", num(t));
    }
    if !tools.is_empty() {
        let eager = compat_flag(model, "supportsEagerToolInputStreaming", true);
        let cache_tools = cache_control
            .as_ref()
            .filter(|_| compat_flag(model, "supportsCacheControlOnTools", true));
        let count = tools.len();
        let list = tools
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let schema = t.get("parameters").unwrap_or(&Value::Null);
                let mut input = Map::new();
                input.put("type", "object".into());
                input.insert(
                    "properties".into(),
                    schema
                        .get("properties")
                        .cloned()
                        .unwrap_or_else(|| crate::value!({})),
                );
                input.insert(
                    "required".into(),
                    schema
                        .get("required")
                        .cloned()
                        .unwrap_or_else(|| crate::value!([])),
                );
                for key in ["additionalProperties", "$defs", "definitions"] {
                    if let Some(v) = schema.get(key) {
                        input.insert(key.into(), v.clone());
                    }
                }
                let mut d = Map::new();
                d.put("name", t.get("name").cloned().unwrap_or(Value::Null));
                if let Some(desc) = t.get("description") {
                    d.put("description", desc.clone());
                }
                if eager {
                    d.put("eager_input_streaming", true.into());
                }
                d.put("input_schema", Value::Object(input));
                if let (Some(cc), true) = (cache_tools, i + 1 == count) {
                    d.put("cache_control", cc.clone());
                }
                Value::Object(d)
            })
            .collect();
        p.put("tools", Value::Array(list));
    }
    let off_is_null = model
        .get("thinkingLevelMap")
        .and_then(|m| m.get("off"))
        .is_some_and(Value::is_null);
    if reasoning_model && !thinking_enabled && !off_is_null {
        p.put("thinking", crate::value!({"type": "disabled"}));
    } else if reasoning_model && thinking_enabled {
        if adaptive {
            p.insert(
                "thinking".into(),
                crate::value!({"type": "adaptive", "display": "summarized"}),
            );
            let effort = effort_for(model, level.as_deref().unwrap_or("high"));
            p.put("output_config", crate::value!({"effort": effort}));
        } else {
            let budget = budget_tokens.filter(|b| *b != 0.0).unwrap_or(1024.0);
            p.insert(
                "thinking".into(),
                crate::value!({"type": "enabled", "budget_tokens": num(budget), "display": "summarized"}),
            );
        }
    }
    if let Some(id) = &options.user_id {
        p.put("metadata", crate::value!({"user_id": id}));
    }
    match &options.tool_choice {
        Some(Value::String(c)) if !c.is_empty() => {
            p.put("tool_choice", crate::value!({"type": c}));
        }
        Some(c) if !c.is_null() && c != &Value::Bool(false) => {
            p.put("tool_choice", c.clone());
        }
        _ => {}
    }
    AnthropicRequest {
        body: Value::Object(p),
        betas,
    }
}

/// `{baseUrl}/v1/messages?beta=true`, the endpoint pi-ai's SDK client posts to.
pub fn url(model: &Value) -> String {
    format!(
        "{}/v1/messages?beta=true",
        str_field(model, "baseUrl").trim_end_matches('/')
    )
}
