//! Providers: one file per API, each a pure decoder from the API's stream events to pi's
//! `AssistantMessageEvent`s (and, with the transport, a request builder). No IO here.

pub mod google;
pub mod google_request;
pub mod openai_completions;
pub mod openai_completions_request;
pub mod transform;
pub mod usage;

use crate::event::AssistantMessageEvent;
use crate::message::AgentMessage;

/// A response decoder: SSE `data` payloads in, pi's events out.
pub trait Decoder {
    /// The `start` event (pushed once the response arrived).
    fn start(&self) -> AssistantMessageEvent;
    /// One `data:` payload. `Ok(true)` when the payload says the stream is over (`[DONE]`);
    /// `Err` names what was wrong, and the response ends as failed.
    fn data(&mut self, data: &str, out: &mut Vec<AssistantMessageEvent>) -> Result<bool, String>;
    /// The body ended: the blocks close, then `done` or the error it amounts to.
    fn finish(&mut self, out: &mut Vec<AssistantMessageEvent>) -> AgentMessage;
    /// Ends the response as failed (`aborted` or `error`) with `message`.
    fn fail(
        &mut self,
        message: &str,
        aborted: bool,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> AgentMessage;
}

impl Decoder for openai_completions::ChatCompletionsDecoder {
    fn start(&self) -> AssistantMessageEvent {
        openai_completions::ChatCompletionsDecoder::start(self)
    }
    fn data(&mut self, data: &str, out: &mut Vec<AssistantMessageEvent>) -> Result<bool, String> {
        if data == "[DONE]" {
            return Ok(true);
        }
        self.chunk(data, out).map(|()| false)
    }
    fn finish(&mut self, out: &mut Vec<AssistantMessageEvent>) -> AgentMessage {
        openai_completions::ChatCompletionsDecoder::finish(self, out)
    }
    fn fail(
        &mut self,
        message: &str,
        aborted: bool,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> AgentMessage {
        openai_completions::ChatCompletionsDecoder::fail(self, message, aborted, out)
    }
}

impl Decoder for google::GoogleDecoder {
    fn start(&self) -> AssistantMessageEvent {
        google::GoogleDecoder::start(self)
    }
    fn data(&mut self, data: &str, out: &mut Vec<AssistantMessageEvent>) -> Result<bool, String> {
        self.chunk(data, out).map(|()| false)
    }
    fn finish(&mut self, out: &mut Vec<AssistantMessageEvent>) -> AgentMessage {
        google::GoogleDecoder::finish(self, out)
    }
    fn fail(
        &mut self,
        message: &str,
        aborted: bool,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> AgentMessage {
        google::GoogleDecoder::fail(self, message, aborted, out)
    }
}
