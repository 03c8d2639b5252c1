//! A JS tool object (`AgentTool`) as the core's `Tool`: `execute(toolCallId, params, signal,
//! onUpdate)` may return a value, a Promise, or throw anything; `prepareArguments` may
//! return the same object (no change) or a new one.

use std::rc::Rc;

use crate::json::Value;
use wasm_bindgen::prelude::*;

use super::error::rejected;
use super::js::{awaited, read_fn, to_json};
use super::table::Table;
use crate::agent::hook_values;
use crate::error::{Error, Thrown};
use crate::io::{ExecutionMode, HostFuture, HostResult, ReadResult, Tool, UpdateFn};

/// The fields of a tool's result the loop reads (pi's `result.…` in `executePreparedToolCall`,
/// `finalizeExecutedToolCall` and `createToolResultMessage`).
pub const RESULT_FIELDS: &str = "content,details,usage,terminate,isError,structuredContent";

pub struct JsTool {
    pub js: JsValue,
    name: String,
    mode: ExecutionMode,
    replay_safe: bool,
    parameters: Value,
    declaration: Value,
    signal: JsValue,
    table: Rc<Table>,
}

impl JsTool {
    /// The `arguments` of the response's block for `call` as they are now, read as JSON, when
    /// they changed since the response ended: pi validates (a copy of) that very object when
    /// it prepares the call (L-97, L-98), so a change a listener made in place counts. `None`
    /// (the arguments the core read with the response, a `-0` in them kept) when they are
    /// the same JSON, when the glue kept no block for the call's id (a checkpointed run
    /// resumed, `runToolCall`, an id used twice), or when they are no JSON.
    fn live_arguments(&self, call: &Value) -> Option<Value> {
        let id = crate::message::str_field(call, "id");
        let own = self.table.glue().call_arguments(&super::js::js_str(id));
        let text = super::js::json_stringify(&own).ok()?.as_string()?;
        if call
            .get("arguments")
            .is_some_and(|read| crate::json::json_stringify(read) == text)
        {
            return None;
        }
        crate::json::parse(&text).ok()
    }

    /// Reads a tool object through the glue's `readTool`, as pi reads it when it declares
    /// the tools (L-26): a throwing getter or Proxy trap is `Err` with what it threw; a part
    /// that is not JSON (or no parameters), an `invalid_input` error naming it.
    pub fn new(js: JsValue, signal: JsValue, table: Rc<Table>) -> Result<JsTool, Thrown> {
        let text = table
            .glue()
            .read_tool(&js)
            .map_err(super::js::thrown)?
            .as_string()
            .unwrap_or_default();
        // `[executionMode, declaration, replay === "safe"]`, made by JSON.stringify.
        // The parameters sit two levels down (the array, the declaration); only they nest.
        let read: Value = crate::json::parse_wrapped(&text, 2).map_err(|e| {
            let what = match (&e, super::js::get(&js, "name").as_string()) {
                (crate::json::Error::TooDeep, Some(name)) => format!("parameters of tool {name}"),
                _ => "a tool".to_string(),
            };
            rejected(Error::InvalidInput(format!(
                "{what} cannot be read as JSON: {e}"
            )))
        })?;
        let mode = match read.get(0).and_then(Value::as_str) {
            Some("sequential") => ExecutionMode::Sequential,
            Some("parallel") => ExecutionMode::Parallel,
            _ => ExecutionMode::Unset,
        };
        let declaration = read.get(1).cloned().unwrap_or(Value::Null);
        Ok(JsTool {
            js,
            name: crate::message::str_field(&declaration, "name").to_string(),
            mode,
            replay_safe: read.get(2) == Some(&Value::Bool(true)),
            parameters: declaration
                .get("parameters")
                .cloned()
                .unwrap_or(Value::Null),
            declaration,
            signal,
            table,
        })
    }
}

impl Tool for JsTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn execution_mode(&self) -> ExecutionMode {
        self.mode
    }

    fn replay_safe(&self) -> bool {
        self.replay_safe
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn declaration(&self) -> Value {
        self.declaration.clone()
    }

    fn prepare_arguments(&self, call: &Rc<Value>) -> Option<HostResult<Value>> {
        // A throwing read is the preparation throwing: an error result (L-101).
        let f = match read_fn(&self.js, "prepareArguments") {
            Ok(Some(f)) => f,
            Ok(None) => return self.live_arguments(call).map(Ok),
            Err(e) => return Some(Err(e)),
        };
        // As pi, with the call's own `arguments` object (the response's block, or the tool
        // call runToolCall got): what it returns is read as it is now, so a change made in
        // place counts, as pi validates that very object (L-97).
        let call = self.table.to_js(call);
        let out = self.table.glue().prepare_arguments(&f, &self.js, &call);
        Some(out.map_err(super::js::thrown).and_then(|out| {
            to_json(&out, "prepareArguments' result")
                .map(|v| v.unwrap_or(Value::Null))
                .map_err(Thrown::new)
        }))
    }

    fn execute(
        &self,
        tool_call_id: &str,
        args: Rc<Value>,
        on_update: UpdateFn,
    ) -> HostFuture<'_, Rc<Value>> {
        let args_js = self.table.to_js(&args);
        let table = Rc::downgrade(&self.table);
        // Partial results are not read by the core: they are kept as the very objects the
        // tool passed, without conversion, and forwarded unchanged (L-105). The sink runs
        // inside this call, and what it throws synchronously is thrown to the tool, as
        // pi's `onUpdate` does. The update holds the table weakly.
        let callback =
            self.table
                .on_update(Rc::new(move |partial: JsValue| match table.upgrade() {
                    Some(table) => {
                        on_update(table.opaque(partial)).map_err(super::error::thrown_to_js)
                    }
                    None => Ok(()),
                }));
        let returned = self
            .table
            .glue()
            .execute_tool(
                &self.js,
                &super::js::js_str(tool_call_id),
                &args_js,
                &self.signal,
                &callback,
            )
            .map_err(super::js::thrown);
        Box::pin(async move {
            // pi awaits what `execute` gave, so even a synchronous return or throw settles a
            // microtask later: the other calls of a parallel batch start first (L-92).
            let value = awaited(returned).await?;
            if !value.is_object() {
                let got = if value.is_undefined() || value.is_null() {
                    "undefined or null"
                } else {
                    super::js::describe(&value)
                };
                return Err(Thrown::new(hook_values::not_a_result(&self.name, got)));
            }
            #[cfg(feature = "test-trap")]
            super::test_trap::check(
                &super::js::get(&super::js::get(&value, "details"), "trap")
                    .as_string()
                    .unwrap_or_default(),
            );
            // Kept as the tool's own object: its `content` and `details` are not read here
            // (one owner per value), and the object is what JS gets back for it.
            if let Some(known) = self.table.known(&value) {
                return Ok(known);
            }
            let result = self.table.split(&value, "a tool result")?;
            // A checkpointed run's transcript is JSON: a result JSON cannot hold is the call's
            // error result, naming why, rather than a checkpoint that cannot be saved.
            if self.table.json_results() {
                if let Some(why) = result.host_error() {
                    return Err(Thrown::new(why));
                }
            }
            self.table.register_pair(result.clone(), value);
            Ok(result)
        })
    }

    fn read_result(&self, result: Rc<Value>) -> HostResult<ReadResult> {
        // The object itself (the table pairs it with its JSON copy), read by the glue; its
        // copy with the fields as read is paired with it too.
        let js = self.table.to_js(&result);
        let view = self
            .table
            .glue()
            .view_if_different(&js, &super::js::key(RESULT_FIELDS), true)
            .map_err(super::js::thrown)?;
        if view.is_undefined() {
            return Ok(ReadResult { result, own: None });
        }
        let read = self.table.split(&view, "a tool result")?;
        self.table.register_pair(read.clone(), js);
        Ok(ReadResult {
            result: read,
            own: Some(result),
        })
    }

    fn host_value(&self) -> Option<&dyn std::any::Any> {
        Some(&self.js)
    }
}
