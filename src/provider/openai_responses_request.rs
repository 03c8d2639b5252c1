//! The request of `openai-responses` (pi-ai 1.6.0 `streamSimple` → `buildParams`): the
//! transcript as Responses `input` items (the system prompt as a developer or system message,
//! user `input_text`/`input_image`, assistant reasoning items replayed from their signatures,
//! `message` items with their ids and phases, `function_call`s, and `function_call_output`s),
//! the tools the transcript declares, `max_output_tokens`, temperature, reasoning effort with
//! encrypted reasoning included, the prompt cache key, and `store: false`.
//! <https://platform.openai.com/docs/api-reference/responses/create>
//!
//! `model.compat` settings read: `supportsDeveloperRole`, `supportsStrictMode`,
//! `supportsMaxOutputTokens`, `promptCacheKeyMode`, `supportsLongCacheRetention`,
//! `supportsExplicitPromptCacheMode`, `supportsMidConvoSystemMessages`. Not sent: tools added
//! mid-conversation as `additional_tools` or tool-search items, `configuration_update` effort
//! items, grammar tools and strict JSON-schema sampling.
//! Pure: JSON in, JSON out.

use crate::json::Put;
use crate::json::{Map, Value};

use super::compat_flag;
use super::openai_completions_request::{
    clamp_max_tokens, clamp_thinking_level, merge_sampling_params, RequestOptions,
};
use super::transform::{collapse_system_messages, render_system_update, transform_messages};
use crate::json::json_stringify;
use crate::json::sanitize;
use crate::message::transcript::{get_current_system_prompt, get_current_tools};
use crate::message::{content_text, num, str_field};

/// Providers whose tool-call ids carry a Responses item id (`call|item`).
const ITEM_ID_PROVIDERS: [&str; 3] = ["openai", "openai-codex", "opencode"];
const MIN_OUTPUT_TOKENS: f64 = 16.0;

/// What the Responses request reads beyond the Chat Completions options.
#[derive(Clone, Debug, Default)]
pub struct ResponsesOptions {
    pub base: RequestOptions,
    pub session_id: Option<String>,
    /// `"none"`, `"short"` (the default) or `"long"`.
    pub cache_retention: Option<String>,
    pub api_key: Option<String>,
}

/// A key that is not an OpenAI API key sent to OpenAI is a ChatGPT sign-in token, which
/// rejects some request fields.
pub fn chatgpt_sign_in(model: &Value, api_key: Option<&str>) -> bool {
    str_field(model, "provider") == "openai"
        && str_field(model, "baseUrl") == "https://api.openai.com/v1"
        && api_key.is_some_and(|k| !k.starts_with("sk-"))
}

/// pi-ai's `shortHash` (over UTF-16 code units), base 36.
pub fn short_hash(text: &str) -> String {
    let (mut h1, mut h2) = (0xdead_beef_u32, 0x41c6_ce57_u32);
    for unit in text.encode_utf16() {
        let ch = u32::from(unit);
        h1 = (h1 ^ ch).wrapping_mul(2_654_435_761);
        h2 = (h2 ^ ch).wrapping_mul(1_597_334_677);
    }
    h1 = (h1 ^ (h1 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h2 ^ (h2 >> 13)).wrapping_mul(3_266_489_909);
    h2 = (h2 ^ (h2 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h1 ^ (h1 >> 13)).wrapping_mul(3_266_489_909);
    format!("{}{}", base36(h2), base36(h1))
}

fn base36(mut n: u32) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS.get((n % 36) as usize).copied().unwrap_or(b'0'));
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// `[^a-zA-Z0-9_-]` → `_` per UTF-16 unit, cut to 64 units, trailing `_` removed.
fn normalize_id_part(part: &str) -> String {
    let mut out = String::new();
    for c in part.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            out.push(c);
        } else {
            for _ in 0..c.len_utf16() {
                out.push('_');
            }
        }
    }
    out.truncate(64);
    out.trim_end_matches('_').to_string()
}

/// A tool-call id of `source` (another model's message) as this model's API accepts it.
fn normalize_tool_call_id(model: &Value, id: &str, source: &Value) -> String {
    if !ITEM_ID_PROVIDERS.contains(&str_field(model, "provider")) || !id.bytes().any(|b| b == b'|')
    {
        return normalize_id_part(id);
    }
    let mut parts = id.split('|');
    let call = normalize_id_part(parts.next().unwrap_or(""));
    let item = parts.next().unwrap_or("");
    let foreign = str_field(source, "provider") != str_field(model, "provider")
        || str_field(source, "api") != str_field(model, "api");
    let mut item = if foreign {
        let mut hashed = format!("fc_{}", short_hash(item));
        hashed.truncate(64);
        hashed
    } else {
        normalize_id_part(item)
    };
    if !item.starts_with("fc_") {
        item = normalize_id_part(&format!("fc_{item}"));
    }
    format!("{call}|{item}")
}

fn image_url(b: &Value) -> String {
    format!(
        "data:{};base64,{}",
        str_field(b, "mimeType"),
        str_field(b, "data")
    )
}

fn input_image(b: &Value) -> Value {
    crate::value!({"type": "input_image", "detail": "auto", "image_url": image_url(b)})
}

/// A tool result's `output`: its text, or text and images for a model with image input.
fn tool_output(model: &Value, content: &[Value]) -> Value {
    let text = content_text(Some(&Value::Array(content.to_vec())), "\n");
    let images: Vec<&Value> = content
        .iter()
        .filter(|b| str_field(b, "type") == "image")
        .collect();
    let has_text = !text.trim().is_empty();
    let vision = model
        .get("input")
        .and_then(Value::as_array)
        .is_some_and(|i| i.iter().any(|x| x == "image"));
    if images.is_empty() || !vision {
        return if has_text {
            sanitize(&text).into()
        } else if images.is_empty() {
            "(no tool output)".into()
        } else {
            "(see attached image)".into()
        };
    }
    let mut out = Vec::new();
    if has_text {
        out.push(crate::value!({"type": "input_text", "text": sanitize(&text)}));
    }
    out.extend(images.into_iter().map(input_image));
    Value::Array(out)
}

/// The assistant message's items, `Err` for a thinking signature that is not JSON.
fn assistant_items(
    m: &Value,
    model: &Value,
    msg_index: usize,
    out: &mut Vec<Value>,
) -> Result<(), String> {
    let same_api = str_field(m, "provider") == str_field(model, "provider")
        && str_field(m, "api") == str_field(model, "api");
    let same_model = same_api && str_field(m, "model") == str_field(model, "id");
    let mut text_index = 0;
    for b in m
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match str_field(b, "type") {
            "thinking" => {
                let sig = str_field(b, "thinkingSignature");
                if !sig.is_empty() {
                    let item = crate::json::parse(sig).map_err(|e| {
                        format!("Thinking signature is not a Responses reasoning item: {e}")
                    })?;
                    out.push(item);
                }
            }
            "text" => {
                let (mut id, phase) = text_signature(str_field(b, "textSignature"));
                if id.is_empty() {
                    id = if text_index == 0 {
                        format!("msg_pi_{msg_index}")
                    } else {
                        format!("msg_pi_{msg_index}_{text_index}")
                    };
                } else if id.encode_utf16().count() > 64 {
                    id = format!("msg_{}", short_hash(&id));
                }
                text_index += 1;
                let mut item = Map::new();
                item.put("type", "message".into());
                item.put("role", "assistant".into());
                item.insert(
                    "content".into(),
                    crate::value!([{"type": "output_text", "text": sanitize(str_field(b, "text")), "annotations": []}]),
                );
                item.put("status", "completed".into());
                item.put("id", id.into());
                if let Some(p) = phase {
                    item.put("phase", p.into());
                }
                out.push(Value::Object(item));
            }
            "toolCall" => {
                let full = str_field(b, "id");
                let mut parts = full.split('|');
                let call = parts.next().unwrap_or("");
                let item_id = parts.next().filter(|i| same_model && i.starts_with("fc_"));
                let mut item = Map::new();
                item.put("type", "function_call".into());
                if let Some(i) = item_id {
                    item.put("id", i.into());
                }
                item.put("call_id", call.into());
                item.put("name", b.get("name").cloned().unwrap_or(Value::Null));
                if let Some(args) = b.get("arguments") {
                    item.put("arguments", json_stringify(args).into());
                }
                if let (true, Some(ns)) = (same_model, b.get("namespace")) {
                    item.put("namespace", ns.clone());
                }
                out.push(Value::Object(item));
            }
            _ => {}
        }
    }
    Ok(())
}

/// pi-ai `parseTextSignature`: the message id and phase a text block's signature holds
/// (`{"v":1,"id":…,"phase":…}`, or a legacy plain id).
fn text_signature(sig: &str) -> (String, Option<String>) {
    if sig.is_empty() {
        return (String::new(), None);
    }
    if sig.starts_with('{') {
        if let Ok(v) = crate::json::parse(sig) {
            if v.get("v").and_then(Value::as_f64) == Some(1.0) {
                if let Some(id) = v.get("id").and_then(Value::as_str) {
                    let phase = v
                        .get("phase")
                        .and_then(Value::as_str)
                        .filter(|p| matches!(*p, "commentary" | "final_answer"));
                    return (id.to_string(), phase.map(str::to_string));
                }
            }
        }
    }
    (sig.to_string(), None)
}

/// The request body; `Err` names what in the transcript cannot be sent.
pub fn build_body(
    model: &Value,
    messages: &[Value],
    options: &ResponsesOptions,
    now: f64,
) -> Result<Value, String> {
    let mid_convo_system = compat_flag(model, "supportsMidConvoSystemMessages", false);
    let resolved = if mid_convo_system {
        messages.to_vec()
    } else {
        collapse_system_messages(messages)
    };
    let normalize = |id: &str, source: &Value| normalize_tool_call_id(model, id, source);
    let transformed = transform_messages(&resolved, model, &normalize, now);
    let reasoning_model = model.get("reasoning") == Some(&Value::Bool(true));
    let role = if reasoning_model && compat_flag(model, "supportsDeveloperRole", true) {
        "developer"
    } else {
        "system"
    };

    let mut input: Vec<Value> = Vec::new();
    let mut msg_index = 0usize;
    for (position, m) in transformed.iter().enumerate() {
        let leading_system = position == 0 && str_field(m, "role") == "system";
        match str_field(m, "role") {
            "system" => {
                let text = if leading_system {
                    get_current_system_prompt(std::iter::once(m))
                } else {
                    render_system_update(m)
                };
                if !text.is_empty() {
                    input.push(crate::value!({"role": role, "content": sanitize(&text)}));
                }
            }
            "user" => match m.get("content") {
                Some(Value::String(s)) => {
                    input.push(
                        crate::value!({"role": "user", "content": [{"type": "input_text", "text": sanitize(s)}]}),
                    );
                }
                Some(Value::Array(blocks)) => {
                    if blocks.is_empty() {
                        continue;
                    }
                    let content: Vec<Value> = blocks
                        .iter()
                        .map(|b| {
                            if str_field(b, "type") == "text" {
                                crate::value!({"type": "input_text", "text": sanitize(str_field(b, "text"))})
                            } else {
                                input_image(b)
                            }
                        })
                        .collect();
                    input.push(crate::value!({"role": "user", "content": content}));
                }
                _ => {}
            },
            "assistant" => {
                let before = input.len();
                assistant_items(m, model, msg_index, &mut input)?;
                if input.len() == before {
                    continue;
                }
            }
            "toolResult" => {
                let call = str_field(m, "toolCallId").split('|').next().unwrap_or("");
                let content = m
                    .get("content")
                    .and_then(Value::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or(&[]);
                input.push(crate::value!({"type": "function_call_output", "call_id": call, "output": tool_output(model, content)}));
            }
            _ => {}
        }
        if !leading_system {
            msg_index += 1;
        }
    }

    let retention = options.cache_retention.as_deref().unwrap_or("short");
    let sign_in = chatgpt_sign_in(model, options.api_key.as_deref());
    let key_mode = model
        .get("compat")
        .and_then(|c| c.get("promptCacheKeyMode"))
        .and_then(Value::as_str)
        .unwrap_or("auto");
    let long_ok = compat_flag(model, "supportsLongCacheRetention", true);
    let explicit = compat_flag(model, "supportsExplicitPromptCacheMode", false);

    let mut p = Map::new();
    p.put("model", str_field(model, "id").into());
    p.put("input", Value::Array(input));
    p.put("stream", true.into());
    if retention != "none" && key_mode != "disabled" {
        if let Some(id) = &options.session_id {
            p.insert(
                "prompt_cache_key".into(),
                id.chars().take(64).collect::<String>().into(),
            );
        }
    }
    if !sign_in {
        if retention == "long" && long_ok && !explicit {
            p.put("prompt_cache_retention", "24h".into());
        }
        if explicit {
            if retention == "none" {
                p.insert(
                    "prompt_cache_options".into(),
                    crate::value!({"mode": "explicit"}),
                );
            } else if retention == "long" && long_ok {
                p.put("prompt_cache_options", crate::value!({"ttl": "30m"}));
            }
        }
    }
    p.put("store", false.into());
    let base = &options.base;
    let model_max = model
        .get("maxTokens")
        .and_then(Value::as_f64)
        .unwrap_or(0.0);
    let max_tokens = clamp_max_tokens(model, messages, base.max_tokens.unwrap_or(model_max));
    if max_tokens != 0.0 && compat_flag(model, "supportsMaxOutputTokens", true) && !sign_in {
        p.insert(
            "max_output_tokens".into(),
            num(max_tokens.max(MIN_OUTPUT_TOKENS)),
        );
    }
    if let (Some(t), false) = (base.temperature, sign_in) {
        p.put("temperature", num(t));
    }
    let system: Vec<Value> = transformed
        .iter()
        .filter(|m| str_field(m, "role") == "system")
        .cloned()
        .collect();
    let tools = get_current_tools(system.iter());
    if !tools.is_empty() {
        let strict = compat_flag(model, "supportsStrictMode", false);
        let list = tools
            .iter()
            .map(|t| {
                let mut f = Map::new();
                f.put("type", "function".into());
                f.put("name", t.get("name").cloned().unwrap_or(Value::Null));
                if let Some(d) = t.get("description") {
                    f.put("description", d.clone());
                }
                f.insert(
                    "parameters".into(),
                    t.get("parameters").cloned().unwrap_or(Value::Null),
                );
                if strict {
                    f.put("strict", false.into());
                }
                Value::Object(f)
            })
            .collect();
        p.put("tools", Value::Array(list));
    }
    if let Some(choice) = &base.tool_choice {
        p.put("tool_choice", choice.clone());
    }
    if reasoning_model {
        let effort = base
            .reasoning
            .map(|l| clamp_thinking_level(model, l.as_str()))
            .filter(|l| l != "off");
        let level_map = model.get("thinkingLevelMap");
        match effort {
            Some(level) => {
                let mapped = match level_map.and_then(|m| m.get(&level)) {
                    Some(v) if !v.is_null() => v.clone(),
                    _ => level.into(),
                };
                p.insert(
                    "reasoning".into(),
                    crate::value!({"effort": mapped, "summary": "auto"}),
                );
                p.insert(
                    "include".into(),
                    crate::value!(["reasoning.encrypted_content"]),
                );
            }
            None => {
                let off = level_map.and_then(|m| m.get("off"));
                if str_field(model, "provider") != "github-copilot"
                    && !off.is_some_and(Value::is_null)
                {
                    let off = off.cloned().unwrap_or_else(|| "none".into());
                    p.put("reasoning", crate::value!({"effort": off}));
                }
            }
        }
        if str_field(model, "provider") == "xai" {
            p.insert(
                "include".into(),
                crate::value!(["reasoning.encrypted_content"]),
            );
        }
    }
    merge_sampling_params(model, base, &mut p);
    Ok(Value::Object(p))
}

/// `{baseUrl}/responses`.
pub fn url(model: &Value) -> String {
    format!(
        "{}/responses",
        str_field(model, "baseUrl").trim_end_matches('/')
    )
}
