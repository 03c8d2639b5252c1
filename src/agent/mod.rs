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

/// The declarations of `tools` (L-26), which `message::transcript::declare_tool_changes`
/// compares with the transcript's.
pub fn declarations(tools: &[std::rc::Rc<dyn crate::io::Tool>]) -> Vec<crate::json::Value> {
    tools.iter().map(|t| t.declaration()).collect()
}
