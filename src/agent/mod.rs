//! The agent loop of pi-agent-core 1.6.0: entry points and the two-level loop (`run`), one
//! request (`turn`), tool execution (`tools`), tool declarations (`transcript`), argument
//! validation (`validate`).

pub mod hook_values;
pub mod run;
pub mod tools;
pub mod transcript;
pub mod turn;
pub mod validate;

pub use run::{check_continue, run_agent_loop, run_agent_loop_continue};
pub use tools::{run_tool_call, ToolCallOutcome, ToolEnv};
