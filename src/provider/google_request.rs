//! The request of `google-generative-ai` (pi-ai 1.6.0 `streamSimple` → `buildParams` →
//! `convertMessages`/`convertTools`, as the Gemini REST API receives it): `contents` with
//! `user`/`model` roles (text, images as `inlineData`, thinking as `thought` parts with their
//! signatures, `functionCall`s, `functionResponse`s grouped in one user turn), the leading
//! system prompt as `systemInstruction`, the declared tools as `parametersJsonSchema`
//! (string and number `const` sent as one-value `enum`s), `toolConfig` from `toolChoice`, and
//! `generationConfig` (temperature, `maxOutputTokens` fitted to the context window, thinking
//! budget or level per model). <https://ai.google.dev/api/generate-content>
//!
//! Not yet: JSON-schema constrained sampling (`VALIDATED` mode and strict schemas), custom
//! `thinkingBudgets`, and `samplingParams`. Pure: JSON in, JSON out.

use crate::json::Put;
use crate::json::{Map, Value};
use crate::text::Joined;

use super::openai_completions_request::{clamp_max_tokens, clamp_thinking_level};
use super::transform::{collapse_system_messages, transform_messages};
use crate::json::sanitize;
use crate::message::transcript::{get_current_system_prompt, get_current_tools};
use crate::message::{str_field, ThinkingLevel};

/// The options of `streamSimple` the request reads.
#[derive(Clone, Debug, Default)]
pub struct GoogleOptions {
    pub max_tokens: Option<f64>,
    pub temperature: Option<f64>,
    pub reasoning: Option<ThinkingLevel>,
    pub tool_choice: Option<String>,
}

fn gemini_major(id: &str) -> Option<u32> {
    let id = id.to_ascii_lowercase();
    let rest = id
        .strip_prefix("gemini-live-")
        .or_else(|| id.strip_prefix("gemini-"))?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Models that need call ids echoed in `functionCall`/`functionResponse`.
fn requires_tool_call_id(id: &str) -> bool {
    id.starts_with("claude-")
        || id.starts_with("gpt-oss-")
        || gemini_major(id).is_some_and(|v| v >= 3)
}

fn multimodal_function_response(id: &str) -> bool {
    gemini_major(id).is_none_or(|v| v >= 3)
}

/// Whether the model takes `thinkingLevel` rather than `thinkingBudget` (pi-ai's list).
fn uses_thinking_level(id: &str) -> bool {
    let id = id.to_ascii_lowercase();
    let after = |prefix: &str| -> Vec<&str> { crate::text::each_after(&id, prefix) };
    let gemini3 = after("gemini-3").iter().any(|rest| {
        let rest = rest
            .strip_prefix('.')
            .map(|r| r.trim_start_matches(|c: char| c.is_ascii_digit()))
            .unwrap_or(rest);
        rest.starts_with("-pro") || rest.starts_with("-flash")
    });
    let later = after("gemini-").iter().any(|rest| {
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        digits.parse::<u32>().is_ok_and(|v| v >= 4)
    });
    let gemma4 = crate::text::contains(&id, "gemma-4") || crate::text::contains(&id, "gemma4");
    gemini3 || later || gemma4 || id == "gemini-flash-latest" || id == "gemini-flash-lite-latest"
}

fn resolve_level(model: &Value, level: &str) -> Option<String> {
    let mapped = model
        .get("thinkingLevelMap")
        .and_then(|m| m.get(level))
        .and_then(Value::as_str)
        .map(str::to_ascii_lowercase)
        .unwrap_or_else(|| level.to_string());
    matches!(mapped.as_str(), "minimal" | "low" | "medium" | "high").then_some(mapped)
}

fn budget(id: &str, level: &str) -> f64 {
    let table: &[(&str, [f64; 4])] = &[
        ("2.5-pro", [128.0, 2048.0, 8192.0, 32768.0]),
        ("2.5-flash-lite", [512.0, 2048.0, 8192.0, 24576.0]),
        ("2.5-flash", [128.0, 2048.0, 8192.0, 24576.0]),
    ];
    let slot = match level {
        "minimal" => 0,
        "low" => 1,
        "medium" => 2,
        _ => 3,
    };
    table
        .iter()
        .find(|(k, _)| crate::text::contains(id, k))
        .and_then(|(_, b)| b.get(slot).copied())
        .unwrap_or(-1.0)
}

/// The `thinkingConfig`, or `None` for a model without reasoning.
fn thinking_config(
    model: &Value,
    reasoning: Option<ThinkingLevel>,
) -> Result<Option<Value>, String> {
    if model.get("reasoning") != Some(&Value::Bool(true)) {
        return Ok(None);
    }
    let id = str_field(model, "id");
    let disabled = || -> Result<Value, String> {
        if !uses_thinking_level(id) {
            return Ok(crate::value!({"thinkingBudget": 0}));
        }
        let fallback = clamp_thinking_level(model, "off");
        if fallback == "off" {
            return Ok(crate::value!({"thinkingBudget": 0}));
        }
        let level = resolve_level(model, &fallback).ok_or_else(|| unsupported(model, &fallback))?;
        Ok(crate::value!({"thinkingLevel": level.to_ascii_uppercase()}))
    };
    let Some(level) = reasoning.filter(|l| *l != ThinkingLevel::Off) else {
        return disabled().map(Some);
    };
    let clamped = clamp_thinking_level(model, level.as_str());
    if clamped == "off" {
        return disabled().map(Some);
    }
    let resolved = resolve_level(model, &clamped).ok_or_else(|| unsupported(model, &clamped))?;
    Ok(Some(if uses_thinking_level(id) {
        crate::value!({"includeThoughts": true, "thinkingLevel": resolved.to_ascii_uppercase()})
    } else {
        crate::value!({"includeThoughts": true, "thinkingBudget": budget(id, &resolved)})
    }))
}

fn unsupported(model: &Value, level: &str) -> String {
    format!(
        "Unsupported Google thinking level mapping for {}/{}: {level}",
        str_field(model, "provider"),
        str_field(model, "id")
    )
}

const NAME_MAPS: [&str; 6] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
];
const SUBSCHEMAS: [&str; 16] = [
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "items",
    "prefixItems",
    "additionalItems",
    "unevaluatedItems",
    "contains",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
];

/// Gemini ignores `const` in `parametersJsonSchema`: a string or number `const` becomes a
/// one-value `enum`, in every subschema.
fn const_as_enum(schema: &Value, name_map: bool) -> Value {
    match schema {
        Value::Array(items) => {
            Value::Array(items.iter().map(|s| const_as_enum(s, false)).collect())
        }
        Value::Object(o) => {
            let mut out: Map = o
                .iter()
                .map(|(k, v)| {
                    let v = if name_map || SUBSCHEMAS.contains(&k.as_str()) {
                        const_as_enum(v, false)
                    } else if NAME_MAPS.contains(&k.as_str()) {
                        const_as_enum(v, true)
                    } else {
                        v.clone()
                    };
                    (k.clone(), v)
                })
                .collect();
            // (`"const" in result && result.enum === undefined`, then `delete result.const`.)
            if !name_map && out.contains_key("const") && out.get("enum").is_none() {
                if let Some(c) = out
                    .get("const")
                    .filter(|c| c.is_string() || c.is_number())
                    .cloned()
                {
                    out.shift_remove("const");
                    out.put("enum", Value::Array(vec![c]));
                }
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

fn inline_data(b: &Value) -> Value {
    crate::value!({"inlineData": {"mimeType": str_field(b, "mimeType"), "data": str_field(b, "data")}})
}

/// A base64 signature from the same provider and model, as pi-ai keeps them.
fn signature(same: bool, sig: Option<&Value>) -> Option<String> {
    let s = sig.and_then(Value::as_str)?;
    let valid = !s.is_empty() && s.len() % 4 == 0 && {
        let body = s.trim_end_matches('=');
        s.len() - body.len() <= 2
            && !body.is_empty()
            && body
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '+' || c == '/')
    };
    (same && valid).then(|| s.to_string())
}

fn contents(model: &Value, conversation: &[Value], now: f64) -> Vec<Value> {
    let id = str_field(model, "id");
    let with_ids = requires_tool_call_id(id);
    let normalize = |call_id: &str| -> String {
        if !with_ids {
            return call_id.to_string();
        }
        call_id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .take(64)
            .collect()
    };
    let vision = model
        .get("input")
        .and_then(Value::as_array)
        .is_some_and(|i| i.iter().any(|x| x == "image"));
    let mut out: Vec<Value> = Vec::new();
    for m in transform_messages(
        conversation,
        model,
        &|id: &str, _: &Value| normalize(id),
        now,
    ) {
        match str_field(&m, "role") {
            "user" => match m.get("content") {
                Some(Value::String(s)) => {
                    out.push(crate::value!({"role": "user", "parts": [{"text": sanitize(s)}]}))
                }
                Some(Value::Array(blocks)) => {
                    let parts: Vec<Value> = blocks
                        .iter()
                        .map(|b| {
                            if str_field(b, "type") == "text" {
                                crate::value!({"text": sanitize(str_field(b, "text"))})
                            } else {
                                inline_data(b)
                            }
                        })
                        .collect();
                    if !parts.is_empty() {
                        out.push(crate::value!({"role": "user", "parts": parts}));
                    }
                }
                _ => {}
            },
            "assistant" => {
                let same = str_field(&m, "provider") == str_field(model, "provider")
                    && str_field(&m, "model") == id;
                let mut parts = Vec::new();
                for b in m
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    match str_field(b, "type") {
                        "text" => {
                            let sig = signature(same, b.get("textSignature"));
                            let text = str_field(b, "text");
                            if text.trim().is_empty() && sig.is_none() {
                                continue;
                            }
                            let mut p = crate::value!({"text": sanitize(text)});
                            if let (Some(s), Value::Object(o)) = (sig, &mut p) {
                                o.put("thoughtSignature", s.into());
                            }
                            parts.push(p);
                        }
                        "thinking" => {
                            let text = str_field(b, "thinking");
                            if same {
                                let sig = signature(same, b.get("thinkingSignature"));
                                if text.trim().is_empty() && sig.is_none() {
                                    continue;
                                }
                                let mut p =
                                    crate::value!({"thought": true, "text": sanitize(text)});
                                if let (Some(s), Value::Object(o)) = (sig, &mut p) {
                                    o.put("thoughtSignature", s.into());
                                }
                                parts.push(p);
                            } else if !text.trim().is_empty() {
                                parts.push(crate::value!({"text": sanitize(text)}));
                            }
                        }
                        "toolCall" => {
                            let mut call = Map::new();
                            call.insert(
                                "name".into(),
                                b.get("name").cloned().unwrap_or(Value::Null),
                            );
                            call.insert(
                                "args".into(),
                                b.get("arguments")
                                    .filter(|a| !a.is_null())
                                    .cloned()
                                    .unwrap_or_else(|| crate::value!({})),
                            );
                            if with_ids {
                                call.insert(
                                    "id".into(),
                                    b.get("id").cloned().unwrap_or(Value::Null),
                                );
                            }
                            let mut p = Map::new();
                            p.put("functionCall", Value::Object(call));
                            if let Some(s) = signature(same, b.get("thoughtSignature")) {
                                p.put("thoughtSignature", s.into());
                            }
                            parts.push(Value::Object(p));
                        }
                        _ => {}
                    }
                }
                if !parts.is_empty() {
                    out.push(crate::value!({"role": "model", "parts": parts}));
                }
            }
            "toolResult" => {
                let blocks = m
                    .get("content")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                let text = blocks
                    .iter()
                    .filter(|b| str_field(b, "type") == "text")
                    .map(|b| str_field(b, "text"))
                    .collect::<Vec<_>>()
                    .joined("\n");
                let images: Vec<Value> = if vision {
                    blocks
                        .iter()
                        .filter(|b| str_field(b, "type") == "image")
                        .map(inline_data)
                        .collect()
                } else {
                    Vec::new()
                };
                let shown = if !text.trim().is_empty() {
                    sanitize(&text)
                } else if !images.is_empty() {
                    "(see attached image)".to_string()
                } else {
                    String::new()
                };
                let multimodal = multimodal_function_response(id);
                let mut response = Map::new();
                response.insert(
                    "name".into(),
                    m.get("toolName").cloned().unwrap_or(Value::Null),
                );
                let key = if m.get("isError") == Some(&Value::Bool(true)) {
                    "error"
                } else {
                    "output"
                };
                response.put("response", crate::value!({ key: shown }));
                if !images.is_empty() && multimodal {
                    response.put("parts", Value::Array(images.clone()));
                }
                if with_ids {
                    response.insert(
                        "id".into(),
                        m.get("toolCallId").cloned().unwrap_or(Value::Null),
                    );
                }
                let part = crate::value!({"functionResponse": Value::Object(response)});
                let merge = out.last().is_some_and(|c| {
                    str_field(c, "role") == "user"
                        && c.get("parts").and_then(Value::as_array).is_some_and(|ps| {
                            ps.iter().any(|p| p.get("functionResponse").is_some())
                        })
                });
                match out
                    .last_mut()
                    .and_then(|c| c.get_mut("parts"))
                    .and_then(Value::as_array_mut)
                {
                    Some(parts) if merge => parts.push(part),
                    _ => out.push(crate::value!({"role": "user", "parts": [part]})),
                }
                if !images.is_empty() && !multimodal {
                    let mut parts = vec![crate::value!({"text": "Tool result image:"})];
                    parts.extend(images);
                    out.push(crate::value!({"role": "user", "parts": parts}));
                }
            }
            _ => {}
        }
    }
    out
}

/// The request body. `Err` for a thinking level the model's map cannot express.
pub fn build_body(
    model: &Value,
    messages: &[Value],
    options: &GoogleOptions,
    now: f64,
) -> Result<Value, String> {
    let collapsed = collapse_system_messages(messages);
    let initial = collapsed
        .first()
        .filter(|m| str_field(m, "role") == "system");
    let conversation = if initial.is_some() {
        collapsed.get(1..).unwrap_or(&[])
    } else {
        &collapsed[..]
    };
    let mut body = Map::new();
    body.insert(
        "contents".into(),
        Value::Array(contents(model, conversation, now)),
    );
    if let Some(system) = initial {
        let text = get_current_system_prompt(std::iter::once(system));
        if !text.is_empty() {
            body.insert(
                "systemInstruction".into(),
                crate::value!({"role": "user", "parts": [{"text": sanitize(&text)}]}),
            );
        }
    }
    let tools = get_current_tools(collapsed.iter());
    if !tools.is_empty() {
        let declarations: Vec<Value> = tools
            .iter()
            .map(|t| {
                crate::value!({
                    "name": t.get("name").cloned().unwrap_or(Value::Null),
                    "description": t.get("description").cloned().unwrap_or(Value::Null),
                    "parametersJsonSchema": const_as_enum(t.get("parameters").unwrap_or(&Value::Null), false),
                })
            })
            .collect();
        body.insert(
            "tools".into(),
            crate::value!([{ "functionDeclarations": declarations }]),
        );
        let mode = match options.tool_choice.as_deref() {
            Some("none") => Some("NONE"),
            Some("any") => Some("ANY"),
            Some(_) => Some("AUTO"),
            None => None,
        };
        if let Some(mode) = mode {
            body.insert(
                "toolConfig".into(),
                crate::value!({"functionCallingConfig": {"mode": mode}}),
            );
        }
    }
    let mut generation = Map::new();
    if let Some(t) = options.temperature {
        generation.put("temperature", crate::message::num(t));
    }
    let requested = options
        .max_tokens
        .or_else(|| model.get("maxTokens").and_then(Value::as_f64))
        .unwrap_or(0.0);
    generation.insert(
        "maxOutputTokens".into(),
        crate::message::num(clamp_max_tokens(model, messages, requested)),
    );
    if let Some(config) = thinking_config(model, options.reasoning)? {
        generation.put("thinkingConfig", config);
    }
    body.put("generationConfig", Value::Object(generation));
    let mut body = Value::Object(body);
    sdk_key_order(&mut body);
    Ok(body)
}

/// `POST {baseUrl}/models/{id}:streamGenerateContent?alt=sse`.
pub fn url(model: &Value) -> String {
    let base = str_field(model, "baseUrl").trim_end_matches('/');
    format!(
        "{base}/models/{}:streamGenerateContent?alt=sse",
        str_field(model, "id")
    )
}

/// The key order @google/genai writes (its converters copy the fields they know, in their
/// own order): a content's `parts` before `role`, a part's fields in its list, a function
/// call's `args`, `id`, `name`. pi-ai's request bytes come out of that SDK.
fn sdk_key_order(body: &mut Value) {
    const PART: [&str; 14] = [
        "mediaResolution",
        "toolCall",
        "toolResponse",
        "audioTranscription",
        "codeExecutionResult",
        "executableCode",
        "fileData",
        "functionCall",
        "functionResponse",
        "inlineData",
        "text",
        "thought",
        "thoughtSignature",
        "videoMetadata",
    ];
    fn reorder(v: &mut Value, order: &[&str]) {
        if let Value::Object(o) = v {
            let mut sorted = Map::new();
            for k in order {
                if let Some(x) = o.shift_remove(k) {
                    sorted.insert((*k).to_string(), x);
                }
            }
            sorted.extend(std::mem::take(o));
            *o = sorted;
        }
    }
    let Value::Object(b) = body else { return };
    let mut contents: Vec<&mut Value> = Vec::new();
    for (key, v) in b.iter_mut() {
        match (key.as_str(), v) {
            ("contents", Value::Array(list)) => contents.extend(list.iter_mut()),
            ("systemInstruction", v) => contents.push(v),
            _ => {}
        }
    }
    for content in contents {
        reorder(content, &["parts", "role"]);
        if let Some(Value::Array(parts)) = content.get_mut("parts") {
            for part in parts {
                reorder(part, &PART);
                if let Some(call) = part.get_mut("functionCall") {
                    reorder(call, &["args", "id", "name"]);
                }
            }
        }
    }
}
