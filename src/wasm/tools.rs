//! A JS tool object (`AgentTool`) as the core's `Tool`: `execute(toolCallId, params, signal,
//! onUpdate)` may return a value, a Promise, or throw anything; `prepareArguments` may
//! return the same object (no change) or a new one.

use std::rc::Rc;

use serde_json::Value;
use wasm_bindgen::prelude::*;

use super::js::{call_method, get, get_fn, settle, to_json};
use super::table::Table;
use crate::agent::hook_values;
use crate::error::Thrown;
use crate::io::{ExecutionMode, HostFuture, HostResult, Tool, UpdateFn};
use crate::message::Object;

pub struct JsTool {
    pub js: JsValue,
    name: String,
    mode: ExecutionMode,
    parameters: Value,
    declaration: Value,
    signal: JsValue,
    table: Rc<Table>,
}

impl JsTool {
    /// Reads a tool object. `Err` names what is wrong (a schema that is not JSON).
    pub fn new(js: JsValue, signal: JsValue, table: Rc<Table>) -> Result<JsTool, String> {
        let name = get(&js, "name").as_string().unwrap_or_default();
        let mode = match get(&js, "executionMode").as_string().as_deref() {
            Some("sequential") => ExecutionMode::Sequential,
            Some("parallel") => ExecutionMode::Parallel,
            _ => ExecutionMode::Unset,
        };
        let what = format!("the parameters of tool {name}");
        let parameters = to_json(&get(&js, "parameters"), &what)?.unwrap_or(Value::Null);
        // L-26: name, description, JSON-normalised parameters, constrainedSampling if defined.
        let mut d = Object::new();
        d.insert("name".into(), name.clone().into());
        if let Some(desc) = to_json(&get(&js, "description"), "a tool description")? {
            d.insert("description".into(), desc);
        }
        d.insert("parameters".into(), parameters.clone());
        let constrained = get(&js, "constrainedSampling");
        if !constrained.is_undefined() {
            let v = to_json(&constrained, "constrainedSampling")?.unwrap_or(Value::Null);
            d.insert("constrainedSampling".into(), v);
        }
        Ok(JsTool {
            js,
            name,
            mode,
            parameters,
            declaration: Value::Object(d),
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

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn declaration(&self) -> Value {
        self.declaration.clone()
    }

    fn prepare_arguments(&self, raw: &Value) -> Option<HostResult<Value>> {
        get_fn(&self.js, "prepareArguments")?;
        let raw_js = super::js::from_json(raw);
        let out = match call_method(&self.js, "prepareArguments", &[&raw_js]) {
            Ok(out) => out,
            Err(e) => return Some(Err(e)),
        };
        // The very same object back means "unchanged" (L-97).
        if js_sys::Object::is(&out, &raw_js) {
            return None;
        }
        Some(
            to_json(&out, "prepareArguments' result")
                .map(|v| v.unwrap_or(Value::Null))
                .map_err(Thrown::new),
        )
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
        // tool passed, without conversion, and forwarded unchanged (L-105). The table owns
        // the callback (freed with the run); the callback holds the table weakly.
        let callback =
            self.table
                .keep_callback(Closure::<dyn Fn(JsValue)>::new(move |partial: JsValue| {
                    if let Some(table) = table.upgrade() {
                        on_update(table.opaque(partial));
                    }
                }));
        let returned = call_method(
            &self.js,
            "execute",
            &[
                &JsValue::from_str(tool_call_id),
                &args_js,
                &self.signal,
                &callback,
            ],
        );
        Box::pin(async move {
            let value = settle(returned?).await?;
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
                &get(&get(&value, "details"), "trap")
                    .as_string()
                    .unwrap_or_default(),
            );
            self.table
                .to_rust(&value, "a tool result")
                .map_err(Thrown::new)
        })
    }

    fn host_value(&self) -> Option<&dyn std::any::Any> {
        Some(&self.js)
    }
}
