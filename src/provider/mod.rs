//! Providers: one file per API, each a pure decoder from the API's stream events to pi's
//! `AssistantMessageEvent`s (and, with the transport, a request builder). No IO here.

pub mod openai_completions;
pub mod openai_completions_request;
pub mod transform;
pub mod usage;
