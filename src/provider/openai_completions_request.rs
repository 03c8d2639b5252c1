//! The request of `openai-completions` (pi-ai 1.6.0 `streamSimple` → `buildParams`), for
//! OpenAI and compatible servers: the transcript as Chat Completions `messages` (system or
//! developer prompt, user text and images, assistant text with its reasoning field and tool
//! calls, tool results with images attached after them), the tools the transcript declares,
//! `max_completion_tokens`/`max_tokens` fitted to the context window, temperature, reasoning
//! effort, usage in streaming, and the headers (key, identity, model and option headers).
//! <https://platform.openai.com/docs/api-reference/chat/create>
//!
//! Compatibility is detected from the provider and base URL and overridden by `model.compat`,
//! as pi-ai does, for these settings: `supportsStore`, `supportsDeveloperRole`,
//! `supportsReasoningEffort`, `supportsUsageInStreaming`, `maxTokensField`,
//! `requiresToolResultName`, `requiresAssistantAfterToolResult`,
//! `requiresNonNullAssistantContent`, `requiresThinkingAsText`,
//! `requiresReasoningContentOnAssistantMessages`, `supportsStrictMode`, and the `openai`,
//! `deepseek` and `openrouter` thinking formats. Not yet sent: the other thinking formats
//! (zai, qwen, chat templates, baseten, together, string-thinking, ant-ling), grammar tools,
//! Anthropic-style cache control, prompt cache keys and session-affinity headers.
//! Pure: JSON in, JSON out.

use crate::json::Put;
use crate::json::{Map, Value};
use crate::text::Joined;

use super::openai_completions::is_reasoning_detail;
use super::transform::{collapse_system_messages, transform_messages};
use crate::json::json_stringify;
use crate::json::sanitize;
use crate::message::transcript::get_current_tools;
use crate::message::{content_text, num, str_field, ThinkingLevel};

/// The options of `streamSimple` the request reads.
#[derive(Clone, Debug, Default)]
pub struct RequestOptions {
    pub max_tokens: Option<f64>,
    pub temperature: Option<f64>,
    pub reasoning: Option<ThinkingLevel>,
    pub tool_choice: Option<Value>,
    pub sampling_params: Option<Value>,
}

/// The compatibility settings the request uses.
#[derive(Clone, Debug)]
pub struct Compat {
    pub supports_store: bool,
    pub supports_developer_role: bool,
    pub supports_reasoning_effort: bool,
    pub supports_usage_in_streaming: bool,
    pub max_tokens_field: String,
    pub requires_tool_result_name: bool,
    pub requires_assistant_after_tool_result: bool,
    pub requires_non_null_assistant_content: bool,
    pub requires_thinking_as_text: bool,
    pub requires_reasoning_content: bool,
    pub supports_strict_mode: bool,
    pub thinking_format: String,
}

/// pi-ai `detectCompat` overridden by `model.compat` (for the settings above).
pub fn compat(model: &Value) -> Compat {
    let provider = str_field(model, "provider");
    let url = str_field(model, "baseUrl");
    let has = |s: &str| crate::text::contains(url, s);
    let zai =
        matches!(provider, "zai" | "zai-coding-cn") || has("api.z.ai") || has("open.bigmodel.cn");
    let together = provider == "together" || has("api.together.ai") || has("api.together.xyz");
    let moonshot = matches!(provider, "moonshotai" | "moonshotai-cn") || has("api.moonshot.");
    let openrouter = provider == "openrouter" || has("openrouter.ai");
    let cf_workers = provider == "cloudflare-workers-ai" || has("api.cloudflare.com");
    let cf_gateway = provider == "cloudflare-ai-gateway" || has("gateway.ai.cloudflare.com");
    let nvidia = provider == "nvidia" || has("integrate.api.nvidia.com");
    let ant_ling = provider == "ant-ling" || has("api.ant-ling.com");
    let cerebras = provider == "cerebras" || has("cerebras.ai");
    // ASCII case folding: URLs and model ids are ASCII, and Unicode case tables cost 17 KB of
    // gzipped wasm.
    let deepseek =
        provider == "deepseek" || crate::text::contains(&url.to_ascii_lowercase(), "deepseek.com");
    let grok = provider == "xai" || has("api.x.ai");
    let non_standard = nvidia
        || cerebras
        || grok
        || together
        || has("chutes.ai")
        || deepseek
        || zai
        || moonshot
        || provider == "opencode"
        || has("opencode.ai")
        || cf_workers
        || cf_gateway
        || ant_ling;
    let max_tokens = has("chutes.ai")
        || deepseek
        || moonshot
        || cf_gateway
        || together
        || nvidia
        || ant_ling
        || zai;
    let detected = Compat {
        supports_store: !non_standard,
        supports_developer_role: provider == "openai" || has("api.openai.com"),
        supports_reasoning_effort: !grok
            && !zai
            && !moonshot
            && !together
            && !cf_gateway
            && !nvidia
            && !ant_ling,
        supports_usage_in_streaming: true,
        max_tokens_field: if max_tokens {
            "max_tokens"
        } else {
            "max_completion_tokens"
        }
        .into(),
        requires_tool_result_name: false,
        requires_assistant_after_tool_result: false,
        requires_non_null_assistant_content: false,
        requires_thinking_as_text: false,
        requires_reasoning_content: deepseek,
        supports_strict_mode: false,
        thinking_format: if deepseek {
            "deepseek"
        } else if zai {
            "zai"
        } else if together {
            "together"
        } else if ant_ling {
            "ant-ling"
        } else if openrouter {
            "openrouter"
        } else {
            "openai"
        }
        .into(),
    };
    let Some(c) = model.get("compat").filter(|c| c.is_object()) else {
        return detected;
    };
    let flag = |k: &str, d: bool| c.get(k).and_then(Value::as_bool).unwrap_or(d);
    Compat {
        supports_store: flag("supportsStore", detected.supports_store),
        supports_developer_role: flag("supportsDeveloperRole", detected.supports_developer_role),
        supports_reasoning_effort: flag(
            "supportsReasoningEffort",
            detected.supports_reasoning_effort,
        ),
        supports_usage_in_streaming: flag(
            "supportsUsageInStreaming",
            detected.supports_usage_in_streaming,
        ),
        max_tokens_field: c
            .get("maxTokensField")
            .and_then(Value::as_str)
            .map_or(detected.max_tokens_field, str::to_string),
        requires_tool_result_name: flag(
            "requiresToolResultName",
            detected.requires_tool_result_name,
        ),
        requires_assistant_after_tool_result: flag(
            "requiresAssistantAfterToolResult",
            detected.requires_assistant_after_tool_result,
        ),
        requires_non_null_assistant_content: flag(
            "requiresNonNullAssistantContent",
            detected.requires_non_null_assistant_content,
        ),
        requires_thinking_as_text: flag(
            "requiresThinkingAsText",
            detected.requires_thinking_as_text,
        ),
        requires_reasoning_content: flag(
            "requiresReasoningContentOnAssistantMessages",
            detected.requires_reasoning_content,
        ),
        supports_strict_mode: flag("supportsStrictMode", detected.supports_strict_mode),
        thinking_format: c
            .get("thinkingFormat")
            .and_then(Value::as_str)
            .map_or(detected.thinking_format, str::to_string),
    }
}

/// JS `string.length`: UTF-16 code units.
fn js_len(s: &str) -> usize {
    s.encode_utf16().count()
}

const CHARS_PER_TOKEN: f64 = 3.5;

fn text_tokens(units: usize) -> f64 {
    (units as f64 / CHARS_PER_TOKEN).ceil()
}

fn content_chars(content: Option<&Value>) -> usize {
    match content {
        Some(Value::String(s)) => js_len(s),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .map(|b| {
                if str_field(b, "type") == "text" {
                    js_len(str_field(b, "text"))
                } else {
                    4800
                }
            })
            .sum(),
        _ => 0,
    }
}

/// pi-ai `estimateMessageTokens`.
fn message_tokens(m: &Value) -> f64 {
    match str_field(m, "role") {
        "system" => {
            let tools = |k: &str| match m.get(k).and_then(Value::as_array) {
                Some(t) if !t.is_empty() => {
                    text_tokens(js_len(&json_stringify(&Value::Array(t.clone()))))
                }
                _ => 0.0,
            };
            let text = crate::message::transcript::get_current_system_prompt(std::iter::once(m));
            text_tokens(js_len(&text)) + tools("toolsAdded") + tools("toolsRemoved")
        }
        "user" | "toolResult" => text_tokens(content_chars(m.get("content"))),
        _ => {
            let chars: usize = m
                .get("content")
                .and_then(Value::as_array)
                .map(|blocks| {
                    blocks
                        .iter()
                        .map(|b| match str_field(b, "type") {
                            "text" => js_len(str_field(b, "text")),
                            "thinking" => js_len(str_field(b, "thinking")),
                            _ => {
                                js_len(str_field(b, "name"))
                                    + js_len(&json_stringify(
                                        b.get("arguments").unwrap_or(&Value::Null),
                                    ))
                            }
                        })
                        .sum()
                })
                .unwrap_or(0);
            text_tokens(chars)
        }
    }
}

fn usage_tokens(u: &Value) -> f64 {
    let n = |k: &str| u.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let total = n("totalTokens");
    if total != 0.0 {
        total
    } else {
        n("input") + n("output") + n("cacheRead") + n("cacheWrite")
    }
}

/// pi-ai `estimateContextTokens`: the last usable usage plus estimates of what follows it.
pub fn estimate_context_tokens(messages: &[Value]) -> f64 {
    let mut latest_prefix = f64::NEG_INFINITY;
    let mut usage_at: Option<(f64, usize)> = None;
    for (i, m) in messages.iter().enumerate() {
        let ts = m
            .get("timestamp")
            .and_then(Value::as_f64)
            .unwrap_or(f64::NAN);
        if str_field(m, "role") == "assistant" {
            let usable =
                ts >= latest_prefix && !matches!(str_field(m, "stopReason"), "aborted" | "error");
            let tokens = m.get("usage").map_or(0.0, usage_tokens);
            if usable && tokens > 0.0 {
                usage_at = Some((tokens, i));
            }
        }
        latest_prefix = latest_prefix.max(ts);
    }
    match usage_at {
        Some((tokens, i)) => tokens + messages.iter().skip(i + 1).map(message_tokens).sum::<f64>(),
        None => messages.iter().map(message_tokens).sum(),
    }
}

/// pi-ai `clampMaxTokensToContext`.
pub fn clamp_max_tokens(model: &Value, messages: &[Value], max_tokens: f64) -> f64 {
    let window = model
        .get("contextWindow")
        .and_then(Value::as_f64)
        .unwrap_or(0.0);
    if window <= 0.0 {
        return max_tokens.max(1.0);
    }
    let input = estimate_context_tokens(messages);
    let margin = 4096f64.max((input * 0.15).ceil());
    let mut room = window - input - margin;
    if room < 32768.0 {
        room = 32768f64.min(window - input - 4096.0);
    }
    max_tokens.min(room.max(1.0))
}

const LEVELS: [&str; 7] = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

/// pi-ai `clampThinkingLevel`: the nearest level the model supports, upwards first.
pub fn clamp_thinking_level(model: &Value, level: &str) -> String {
    let map = model.get("thinkingLevelMap");
    let supported: Vec<&str> = if model.get("reasoning") != Some(&Value::Bool(true)) {
        vec!["off"]
    } else {
        LEVELS
            .iter()
            .copied()
            .filter(|l| {
                let mapped = map.and_then(|m| m.get(*l));
                if mapped.is_some_and(Value::is_null) {
                    return false;
                }
                !matches!(*l, "xhigh" | "max") || mapped.is_some()
            })
            .collect()
    };
    if supported.contains(&level) {
        return level.to_string();
    }
    let first = supported.first().copied().unwrap_or("off").to_string();
    let Some(i) = LEVELS.iter().position(|l| *l == level) else {
        return first;
    };
    LEVELS
        .iter()
        .skip(i)
        .chain(LEVELS.iter().take(i).rev())
        .find(|l| supported.contains(l))
        .map_or(first, |l| l.to_string())
}

/// The request body for `model` and the transcript `messages`.
pub fn build_params(
    model: &Value,
    messages: &[Value],
    options: &RequestOptions,
    now: f64,
) -> Value {
    let compat = compat(model);
    let id = str_field(model, "id");
    let collapsed = collapse_system_messages(messages);
    let normalize = |call_id: &str| -> String {
        if let Some((call, item)) = crate::text::split_once(call_id, "|") {
            let clean = |s: &str| {
                s.chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                            c
                        } else {
                            '_'
                        }
                    })
                    .collect::<String>()
            };
            let (call, item) = (clean(call), clean(item));
            let combined = if item.is_empty() {
                call.clone()
            } else {
                format!("{call}_{item}")
            };
            // Longer ids need pi-ai's hash; they are kept whole here.
            return combined;
        }
        if str_field(model, "provider") == "openai" && call_id.chars().count() > 40 {
            return call_id.chars().take(40).collect();
        }
        call_id.to_string()
    };
    let transformed =
        transform_messages(&collapsed, model, &|id: &str, _: &Value| normalize(id), now);
    let tools = get_current_tools(collapsed.iter());
    let reasoning_model = model.get("reasoning") == Some(&Value::Bool(true));
    let instruction_role = if reasoning_model && compat.supports_developer_role {
        "developer"
    } else {
        "system"
    };
    let vision = model
        .get("input")
        .and_then(Value::as_array)
        .is_some_and(|i| i.iter().any(|x| x == "image"));

    let mut out: Vec<Value> = Vec::new();
    let mut last_role: Option<String> = None;
    let mut i = 0;
    while let Some(m) = transformed.get(i) {
        let role = str_field(m, "role");
        if compat.requires_assistant_after_tool_result
            && last_role.as_deref() == Some("toolResult")
            && role == "user"
        {
            out.push(crate::value!({"role": "assistant", "content": "I have processed the tool results."}));
        }
        match role {
            "system" => {
                let text =
                    crate::message::transcript::get_current_system_prompt(std::iter::once(m));
                if !text.is_empty() {
                    out.push(crate::value!({"role": instruction_role, "content": sanitize(&text)}));
                }
            }
            "user" => match m.get("content") {
                Some(Value::String(s)) => {
                    out.push(crate::value!({"role": "user", "content": sanitize(s)}))
                }
                Some(Value::Array(blocks)) => {
                    let content: Vec<Value> = blocks
                        .iter()
                        .filter(|b| str_field(b, "type") != "text" || !str_field(b, "text").is_empty())
                        .map(|b| {
                            if str_field(b, "type") == "text" {
                                crate::value!({"type": "text", "text": sanitize(str_field(b, "text"))})
                            } else {
                                crate::value!({"type": "image_url", "image_url": {"url": format!("data:{};base64,{}", str_field(b, "mimeType"), str_field(b, "data"))}})
                            }
                        })
                        .collect();
                    if content.is_empty() {
                        i += 1;
                        continue;
                    }
                    out.push(crate::value!({"role": "user", "content": content}));
                }
                _ => {}
            },
            "assistant" => {
                if let Some(a) = assistant_message(m, model, &compat) {
                    out.push(a);
                }
            }
            "toolResult" => {
                let mut images = Vec::new();
                while let Some(t) = transformed
                    .get(i)
                    .filter(|t| str_field(t, "role") == "toolResult")
                {
                    let text = content_text(
                        Some(&Value::Array(
                            t.get("content")
                                .and_then(Value::as_array)
                                .cloned()
                                .unwrap_or_default(),
                        )),
                        "\n",
                    );
                    let blocks = t
                        .get("content")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default();
                    let has_images = blocks.iter().any(|b| str_field(b, "type") == "image");
                    let shown = if !text.trim().is_empty() {
                        text
                    } else if has_images {
                        "(see attached image)".into()
                    } else {
                        "(no tool output)".into()
                    };
                    let mut r = Map::new();
                    r.put("role", "tool".into());
                    r.put("content", sanitize(&shown).into());
                    r.put("tool_call_id", str_field(t, "toolCallId").into());
                    if compat.requires_tool_result_name && !str_field(t, "toolName").is_empty() {
                        r.put("name", str_field(t, "toolName").into());
                    }
                    out.push(Value::Object(r));
                    if has_images && vision {
                        for b in blocks.iter().filter(|b| str_field(b, "type") == "image") {
                            images.push(crate::value!({"type": "image_url", "image_url": {"url": format!("data:{};base64,{}", str_field(b, "mimeType"), str_field(b, "data"))}}));
                        }
                    }
                    i += 1;
                }
                if images.is_empty() {
                    last_role = Some("toolResult".into());
                } else {
                    if compat.requires_assistant_after_tool_result {
                        out.push(crate::value!({"role": "assistant", "content": "I have processed the tool results."}));
                    }
                    let mut content = vec![
                        crate::value!({"type": "text", "text": "Attached image(s) from tool result:"}),
                    ];
                    content.extend(images);
                    out.push(crate::value!({"role": "user", "content": content}));
                    last_role = Some("user".into());
                }
                continue;
            }
            _ => {}
        }
        last_role = Some(role.to_string());
        i += 1;
    }

    let mut p = Map::new();
    p.put("model", id.into());
    p.put("messages", Value::Array(out));
    p.put("stream", true.into());
    if compat.supports_usage_in_streaming {
        p.insert(
            "stream_options".into(),
            crate::value!({"include_usage": true}),
        );
    }
    if compat.supports_store {
        p.put("store", false.into());
    }
    let model_max = model
        .get("maxTokens")
        .and_then(Value::as_f64)
        .unwrap_or(0.0);
    let max_tokens = clamp_max_tokens(model, messages, options.max_tokens.unwrap_or(model_max));
    if max_tokens != 0.0 {
        p.insert(compat.max_tokens_field.clone(), num(max_tokens));
    }
    if let Some(t) = options.temperature {
        p.put("temperature", num(t));
    }
    if !tools.is_empty() {
        let list: Vec<Value> = tools
            .iter()
            .map(|t| {
                let mut f = Map::new();
                f.put("name", t.get("name").cloned().unwrap_or(Value::Null));
                if let Some(d) = t.get("description") {
                    f.put("description", d.clone());
                }
                f.insert(
                    "parameters".into(),
                    t.get("parameters").cloned().unwrap_or(Value::Null),
                );
                if compat.supports_strict_mode {
                    f.put("strict", false.into());
                }
                crate::value!({"type": "function", "function": Value::Object(f)})
            })
            .collect();
        p.put("tools", Value::Array(list));
    }
    if let Some(choice) = &options.tool_choice {
        p.put("tool_choice", choice.clone());
    }
    let effort = options
        .reasoning
        .map(|l| clamp_thinking_level(model, l.as_str()))
        .filter(|l| l != "off");
    let mapped = |level: &str| -> Value {
        match model.get("thinkingLevelMap").and_then(|m| m.get(level)) {
            Some(v) if !v.is_null() => v.clone(),
            _ => level.into(),
        }
    };
    let off_value = model.get("thinkingLevelMap").and_then(|m| m.get("off"));
    match compat.thinking_format.as_str() {
        "deepseek" if reasoning_model => {
            if effort.is_some() {
                p.put("thinking", crate::value!({"type": "enabled"}));
            } else if !off_value.is_some_and(Value::is_null) {
                p.put("thinking", crate::value!({"type": "disabled"}));
            }
            if let (Some(e), true) = (&effort, compat.supports_reasoning_effort) {
                p.put("reasoning_effort", mapped(e));
            }
        }
        "openrouter" if reasoning_model => match &effort {
            Some(e) => {
                p.put("reasoning", crate::value!({"effort": mapped(e)}));
            }
            None if !off_value.is_some_and(Value::is_null) => {
                let off = off_value.cloned().unwrap_or_else(|| "none".into());
                p.put("reasoning", crate::value!({"effort": off}));
            }
            None => {}
        },
        "openai" if reasoning_model && compat.supports_reasoning_effort => match &effort {
            Some(e) => {
                p.put("reasoning_effort", mapped(e));
            }
            None => {
                if let Some(Value::String(off)) = off_value {
                    p.put("reasoning_effort", off.as_str().into());
                }
            }
        },
        _ => {}
    }
    // Model and request sampling parameters last, so they override named fields.
    merge_sampling_params(model, options, &mut p);
    Value::Object(p)
}

/// pi-ai `resolveSamplingParams` merged into the request: `model.samplingParams`, then the
/// model's parameters for the (clamped) thinking level, then the request's.
pub fn merge_sampling_params(model: &Value, options: &RequestOptions, p: &mut Map) {
    let level = options.reasoning.map_or("off".to_string(), |l| {
        clamp_thinking_level(model, l.as_str())
    });
    let by_level = model
        .get("samplingParamsByThinkingLevel")
        .and_then(|m| m.get(&level));
    for source in [
        model.get("samplingParams"),
        by_level,
        options.sampling_params.as_ref(),
    ]
    .into_iter()
    .flatten()
    {
        if let Value::Object(o) = source {
            for (k, v) in o {
                p.insert(k.clone(), v.clone());
            }
        }
    }
}

/// pi-ai's `parseOpenAIReasoningDetails`: a signature that is a non-empty JSON array of
/// reasoning details.
fn signed_details(signature: &str) -> Option<Value> {
    match crate::json::parse(signature).ok()? {
        Value::Array(list) if !list.is_empty() && list.iter().all(is_reasoning_detail) => {
            Some(Value::Array(list))
        }
        _ => None,
    }
}

/// pi-ai's `parseLegacyEncryptedReasoningDetail`: a tool call's signature that is one
/// encrypted detail with an id and data.
fn legacy_detail(signature: &str) -> Option<Value> {
    let v = crate::json::parse(signature).ok()?;
    let nonempty = |k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty())
    };
    (is_reasoning_detail(&v)
        && str_field(&v, "type") == "reasoning.encrypted"
        && nonempty("id")
        && nonempty("data"))
    .then_some(v)
}

/// One assistant message as Chat Completions replays it; `None` when it has nothing to send.
fn assistant_message(m: &Value, model: &Value, compat: &Compat) -> Option<Value> {
    let blocks = m
        .get("content")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut a = Map::new();
    a.put("role", "assistant".into());
    let empty = if compat.requires_assistant_after_tool_result
        || compat.requires_non_null_assistant_content
    {
        Value::String(String::new())
    } else {
        Value::Null
    };
    a.put("content", empty);
    let texts: Vec<String> = blocks
        .iter()
        .filter(|b| str_field(b, "type") == "text" && !str_field(b, "text").trim().is_empty())
        .map(|b| sanitize(str_field(b, "text")))
        .collect();
    let text = texts.joined("");
    let thinking: Vec<&Value> = blocks
        .iter()
        .filter(|b| {
            str_field(b, "type") == "thinking" && !str_field(b, "thinking").trim().is_empty()
        })
        .collect();
    // OpenRouter's reasoning, replayed as the `reasoning_details` it streamed (kept in a
    // thinking block's signature), else as legacy encrypted details on the tool calls.
    let of_type = |t: &'static str| blocks.iter().filter(move |b| str_field(b, "type") == t);
    let legacy: Vec<Value> = of_type("toolCall")
        .filter_map(|b| legacy_detail(str_field(b, "thoughtSignature")))
        .collect();
    let preserved = of_type("thinking")
        .find_map(|b| signed_details(str_field(b, "thinkingSignature")))
        .or_else(|| (!legacy.is_empty()).then_some(Value::Array(legacy)));
    if !thinking.is_empty() {
        if compat.requires_thinking_as_text {
            let joined: Vec<String> = thinking
                .iter()
                .map(|b| sanitize(str_field(b, "thinking")))
                .collect();
            let mut parts = vec![crate::value!({"type": "text", "text": joined.joined("\n\n")})];
            parts.extend(
                texts
                    .iter()
                    .map(|t| crate::value!({"type": "text", "text": t})),
            );
            a.put("content", Value::Array(parts));
        } else {
            if !text.is_empty() {
                a.put("content", text.clone().into());
            }
            let mut signature = thinking
                .first()
                .map(|b| str_field(b, "thinkingSignature"))
                .unwrap_or("");
            if str_field(model, "provider") == "opencode-go" && signature == "reasoning" {
                signature = "reasoning_content";
            }
            if preserved.is_none()
                && matches!(
                    signature,
                    "reasoning" | "reasoning_content" | "reasoning_text"
                )
            {
                let joined: Vec<&str> = thinking.iter().map(|b| str_field(b, "thinking")).collect();
                a.insert(signature.into(), joined.joined("\n").into());
            }
        }
    } else if !text.is_empty() {
        a.put("content", text.into());
    }
    let calls: Vec<Value> = blocks
        .iter()
        .filter(|b| str_field(b, "type") == "toolCall")
        .map(|b| {
            crate::value!({"id": str_field(b, "id"), "type": "function", "function": {
                "name": str_field(b, "name"),
                "arguments": b.get("arguments").map_or_else(|| "{}".to_string(), json_stringify),
            }})
        })
        .collect();
    if !calls.is_empty() {
        a.put("tool_calls", Value::Array(calls));
    }
    if let Some(details) = preserved {
        a.put("reasoning_details", details);
    }
    if compat.requires_reasoning_content
        && model.get("reasoning") == Some(&Value::Bool(true))
        && !a.contains_key("reasoning_content")
    {
        a.put("reasoning_content", "".into());
    }
    let has_content = match a.get("content") {
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(v)) => !v.is_empty(),
        _ => false,
    };
    (has_content || a.contains_key("tool_calls")).then_some(Value::Object(a))
}
