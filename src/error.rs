//! The one error type of the core, each variant with a stable snake_case `code()`.
//!
//! Two kinds of failure exist (CONVENTIONS "errors are data where the spec says so"):
//! failures the spec turns into data (tool errors, provider errors) never reach this type;
//! failures that reject a run (a throwing hook, stream function or event sink, a broken
//! precondition) do. A value thrown by host code is kept as [`Thrown`], so the binding can
//! rethrow the caller's original object, as pi's `runAgentLoop` rejects with it.

use std::any::Any;
use std::fmt;
use std::rc::Rc;

/// A value thrown by host code (a JS exception of any type), kept opaque.
#[derive(Clone)]
pub struct Thrown {
    /// `error.message` for an `Error`, `String(value)` otherwise: the text pi uses in
    /// error tool results (L-101, L-104).
    pub message: String,
    /// The original thrown value, for the host to rethrow unchanged.
    pub payload: Option<Rc<dyn Any>>,
}

impl Thrown {
    pub fn new(message: impl Into<String>) -> Self {
        Thrown {
            message: message.into(),
            payload: None,
        }
    }
}

impl fmt::Debug for Thrown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Thrown")
            .field("message", &self.message)
            .finish()
    }
}

impl PartialEq for Thrown {
    fn eq(&self, other: &Self) -> bool {
        self.message == other.message
    }
}

/// Why a run (or a call into the core) was rejected.
#[derive(Clone, Debug, PartialEq)]
pub enum Error {
    /// Host code threw: a hook, `convertToLlm`, the stream function or the event sink.
    Thrown(Thrown),
    /// L-33/L-35: `context.messages` is empty.
    NoMessages,
    /// L-33/L-35: the last message is an assistant message.
    ContinueFromAssistant,
    /// L-36: no stream function given and no default configured.
    NoDefaultStreamFn,
    /// A value from outside had the wrong shape (names what and where).
    InvalidInput(String),
}

impl Error {
    /// Stable, snake_case, listed here only.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Thrown(_) => "host_threw",
            Error::NoMessages => "no_messages",
            Error::ContinueFromAssistant => "continue_from_assistant",
            Error::NoDefaultStreamFn => "no_default_stream_fn",
            Error::InvalidInput(_) => "invalid_input",
        }
    }

    /// The message, worded as pi words it where pi has the same error.
    pub fn message(&self) -> String {
        match self {
            Error::Thrown(t) => t.message.clone(),
            Error::NoMessages => "Cannot continue: no messages in context".into(),
            Error::ContinueFromAssistant => "Cannot continue from message role: assistant".into(),
            Error::NoDefaultStreamFn => {
                "No default stream function configured. Pass streamFn explicitly or call setDefaultStreamFn()."
                    .into()
            }
            Error::InvalidInput(what) => what.clone(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl From<Thrown> for Error {
    fn from(t: Thrown) -> Self {
        Error::Thrown(t)
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
