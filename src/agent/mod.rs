//! The agent loop of pi-agent-core 1.6.0: entry points and the two-level loop (`run`), one
//! request (`turn`), tool execution (`tools`), argument validation (`validate`). The tool
//! declarations of the transcript are `message::transcript`.

pub mod checkpoint;
pub mod hook_values;
pub mod run;
pub mod tools;
pub mod turn;
pub mod validate;

pub use run::{check_continue, resume_agent_loop, run_agent_loop, run_agent_loop_continue};
pub use tools::{run_tool_call, ToolCallOutcome, ToolEnv};

use crate::event::AgentEvent;
use crate::io::{AbortSignal, Clock, EventSink, Hooks, HostResult, Patterns, StreamFn};

/// The declarations of `tools` (L-26), which `message::transcript::declare_tool_changes`
/// compares with the transcript's.
pub fn declarations(tools: &[std::rc::Rc<dyn crate::io::Tool>]) -> Vec<crate::json::Value> {
    tools.iter().map(|t| t.declaration()).collect()
}

/// Everything a run talks to.
pub struct Host<'a> {
    pub clock: &'a dyn Clock,
    /// The regular-expression engine for `pattern` in tool schemas.
    pub patterns: &'a dyn Patterns,
    pub signal: Option<&'a dyn AbortSignal>,
    pub sink: &'a dyn EventSink,
    pub hooks: &'a dyn Hooks,
    /// `None`: no stream function was given and no default is set. pi resolves this only
    /// after the prompt events (L-34 step 4), and so does the loop.
    pub stream_fn: Option<&'a dyn StreamFn>,
    /// The run's position, kept current for checkpoints (`agent::checkpoint`).
    pub tracker: &'a checkpoint::Tracker,
}

impl Host<'_> {
    pub fn aborted(&self) -> bool {
        self.signal.is_some_and(|s| s.aborted())
    }

    pub async fn emit(&self, event: AgentEvent) -> HostResult<()> {
        self.tracker.observe(&event);
        self.sink.emit(event).await
    }
}
