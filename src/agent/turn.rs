//! One provider request (spec §8, `streamAssistantResponse`): transformContext →
//! convertToLlm → getApiKey → stream function, then the response's events become
//! `message_start`/`message_update`/`message_end`.
//!
//! Improvements over pi, each tested:
//! - a stream that ends with neither a terminal event nor a result ends the turn as an
//!   error message instead of waiting forever (L-15, L-85, L-170);
//! - the provider's final message is not mutated: `thinkingLevel` is set on our copy when
//!   the provider still holds the object (L-173);
//! - the partial is never left in the transcript (L-89): the final message replaces it.

use crate::json::Put;
use std::rc::Rc;

use crate::json::Value;

use super::Host;
use crate::error::{Error, Result};
use crate::event::{AgentEvent, AssistantMessageEvent};
use crate::io::{Context, LoopConfig, StreamFn, StreamOptions};
use crate::message::{num, zero_usage, AgentMessage, Object};

/// The error message used when a stream ends with neither a terminal event nor a result.
pub const STREAM_ENDED_WITHOUT_RESULT: &str =
    "The stream function's stream ended without a done or error event and without a result";

/// Requests one assistant response and appends it to `context.messages`. Returns the final
/// message. Errors are thrown host values (hooks, stream function, sink): they reject the run.
pub async fn stream_assistant_response(
    host: &Host<'_>,
    stream_fn: &dyn StreamFn,
    context: &mut Context,
    config: &LoopConfig,
) -> Result<AgentMessage> {
    // L-74: the transform's result is used for this request only.
    let transformed = match host.hooks.transform_context(context) {
        Some(f) => Some(f.await?),
        None => None,
    };
    // pi gives the transform the live `context.messages`: its changes in place persist.
    host.hooks.sync_context(context)?;
    let messages: &[AgentMessage] = transformed.as_deref().unwrap_or(&context.messages);
    // L-75, L-76.
    let llm_context = host.hooks.convert_to_llm(messages).await?;
    // L-77: a falsy result falls back to the static key.
    let provider = config
        .model
        .get("provider")
        .and_then(Value::as_str)
        .unwrap_or("");
    let from_hook = match host.hooks.get_api_key(provider) {
        Some(f) => f.await?,
        None => None,
    };
    let api_key = from_hook
        .filter(|k| !k.is_empty())
        .or_else(|| config.api_key.clone());
    let options = StreamOptions {
        api_key,
        reasoning: config.reasoning,
        // L-78: each request's identity is made by the host from `config.identity` then (the
        // binding's glue, `requestIdentity`): the rule has one home, in JS, as pi's.
        identity: Value::Null,
    };
    // L-79.
    let mut stream = stream_fn
        .stream(&config.model, llm_context, options)
        .await?;

    // L-83.
    let mut last_partial: Option<AgentMessage> = None;
    // (Held updates come only from a stream that never throws: the built-in one.)
    while let Some(event) = stream.next().await? {
        match &event {
            AssistantMessageEvent::Start { partial } => {
                let snapshot = stream.start_snapshot(partial);
                last_partial = Some(snapshot.clone());
                host.emit(AgentEvent::MessageStart { message: snapshot })
                    .await?;
            }
            AssistantMessageEvent::Done { .. } | AssistantMessageEvent::Error { .. } => break,
            // Updates before any `start` are dropped (L-83, verified).
            _ if last_partial.is_none() => {}
            _ => host.sink.update(event, !stream.ready()).await?,
        }
    }
    host.sink.flush().await?;
    // L-84/L-85: the stream's own result, not the terminal event's message.
    let final_message = match stream.result().await? {
        Some(m) if m.is_object() => m,
        Some(_) => synthesize_error(
            host,
            config,
            last_partial.as_ref(),
            "The stream function's result is not a message object",
        ),
        None => synthesize_error(
            host,
            config,
            last_partial.as_ref(),
            STREAM_ENDED_WITHOUT_RESULT,
        ),
    };
    // L-87: record the requested level, on a copy (L-173).
    let level = config.reasoning.map_or("off", |l| l.as_str());
    let final_message = stream.with_thinking_level(final_message, level);
    context.messages.push(final_message.clone());
    host.hooks.sync_context(context)?;
    if last_partial.is_none() {
        // L-86: no `start` → one `message_start` with a copy of the final message.
        let copy = Rc::new((*final_message).clone());
        host.emit(AgentEvent::MessageStart { message: copy })
            .await?;
    }
    host.emit(AgentEvent::MessageEnd {
        message: final_message.clone(),
    })
    .await?;
    Ok(final_message)
}

/// The error message for a stream that gave no usable result: the streamed partial (so no
/// streamed content is lost) or an empty assistant message, with `stopReason: "error"`, or
/// `"aborted"` when the run's signal is aborted.
fn synthesize_error(
    host: &Host<'_>,
    config: &LoopConfig,
    partial: Option<&AgentMessage>,
    why: &str,
) -> AgentMessage {
    let mut o = match partial.map(|p| (**p).clone()) {
        Some(Value::Object(o)) => o,
        _ => {
            let mut o = Object::new();
            o.put("role", "assistant".into());
            o.put("content", Value::Array(Vec::new()));
            for key in ["api", "provider"] {
                o.insert(
                    key.into(),
                    config.model.get(key).cloned().unwrap_or_else(|| "".into()),
                );
            }
            o.insert(
                "model".into(),
                config.model.get("id").cloned().unwrap_or_else(|| "".into()),
            );
            o.put("usage", zero_usage());
            o.put("timestamp", num(host.clock.now()));
            o
        }
    };
    let reason = if host.aborted() { "aborted" } else { "error" };
    o.put("stopReason", reason.into());
    o.put("errorMessage", why.into());
    Rc::new(Value::Object(o))
}

/// Resolves the stream function, after the prompt events (L-34 step 4).
pub fn resolve_stream_fn<'a>(host: &Host<'a>) -> Result<&'a dyn StreamFn> {
    host.stream_fn.ok_or(Error::NoDefaultStreamFn)
}
