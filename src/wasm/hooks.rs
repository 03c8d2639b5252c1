//! The hooks of a JS `AgentLoopConfig` (or `runToolCall` options) as the core's `Hooks`.
//! Each may be sync or async and may return anything: values are read with the policy of
//! `agent::hook_values`, and a hook that throws rejects the run with its own thrown value.

use std::rc::Rc;

use crate::json::Value;
use js_sys::{Array, Function, Object};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::error::{rejected, rejected_unreadable};
use super::js::{call_with, describe, is_array, key, read, set, settle, thrown, to_json};
use super::table::Table;
use super::tools::JsTool;
use crate::agent::hook_values;
use crate::error::{Error, Thrown};
use crate::io::*;
use crate::message::AgentMessage;

pub struct JsHooks {
    pub config: JsValue,
    pub signal: JsValue,
    pub table: Rc<Table>,
    /// For `runToolCall`: the context object its hooks receive, passed through as given.
    pub fixed_context: Option<JsValue>,
    /// The run's stream function reads `convertToLlm`'s messages (a built-in provider):
    /// they are read when returned. A JS one gets the returned list itself.
    pub read_llm: bool,
}

/// The items of a caller's array, read by the glue (a throwing trap or getter is `Err` with
/// what it threw); `None` for a value that is no array.
fn items(table: &Table, v: &JsValue, what: &str) -> Result<Option<Array>, Thrown> {
    // The glue's own fresh array, or `undefined`: reading it runs no caller code.
    Ok(table
        .glue()
        .items(v, &JsValue::from_str(what))
        .map_err(thrown)?
        .dyn_into::<Array>()
        .ok())
}

/// A JS array of messages, each converted once (identity kept), per the hook policy. A
/// throwing getter or Proxy trap rejects with what it threw, as in pi.
pub fn js_messages(table: &Table, hook: &str, v: &JsValue) -> Result<Vec<AgentMessage>, Thrown> {
    let Some(arr) = items(table, v, hook)? else {
        return Err(rejected(hook_values::not_an_array(hook, describe(v))));
    };
    // The transcript a hook hands back, turn after turn: the start it shares with the list
    // it was given is known at once (those are the core's messages already).
    let mut out = table.known_start(&arr);
    for i in out.len()..arr.length() as usize {
        out.push(message_at(table, hook, &arr, i)?);
    }
    Ok(out)
}

/// The JS list of a request's messages: the very list `convertToLlm` returned (pi's
/// `context.messages`), or the core's own messages as one.
pub fn llm_messages_js(table: &Table, context: &LlmContext) -> JsValue {
    match context
        .host
        .as_ref()
        .and_then(|h| h.downcast_ref::<JsValue>())
    {
        Some(v) => v.clone(),
        None => table.array(&context.messages).into(),
    }
}

/// Item `i` of `arr`, a list of messages `hook` gave: a message seen before is looked up,
/// not read again; a new one is read here.
fn message_at(table: &Table, hook: &str, arr: &Array, i: usize) -> Result<AgentMessage, Thrown> {
    let m = arr.get(i as u32);
    let rc = match table.known(&m) {
        Some(rc) => rc,
        None => new_message(table, hook, i, m)?,
    };
    if !rc.get("role").is_some_and(Value::is_string) {
        return Err(rejected(hook_values::not_a_message(hook, i)));
    }
    Ok(rc)
}

/// A message `hook` gave that the run has not seen. Its members that are no JSON primitive
/// (`content`, `details`, `usage`, an app's own fields) stay the caller's objects, unread
/// until the core looks into them (one owner per value): a value JSON cannot hold there
/// passes through, as in pi. In a checkpointed run (its checkpoints are JSON) a message is
/// read whole; one that cannot be (a getter that throws, a BigInt) is an `invalid_input`
/// error naming it.
fn new_message(table: &Table, hook: &str, i: usize, m: JsValue) -> Result<AgentMessage, Thrown> {
    if !m.is_object() {
        return Err(rejected(hook_values::not_a_message(hook, i)));
    }
    // pi reads the `role` of every message of the transcript (its tool declarations do): a
    // getter or trap that throws there rejects with what it threw, as in pi. What the two
    // conversion hooks return goes to the stream function unread by pi.
    let role = match read(&m, "role") {
        Err(e) if !matches!(hook, "convertToLlm" | "transformContext") => return Err(e),
        r => r.unwrap_or_default(),
    };
    if !table.json_results() && !is_array(&m) {
        let what = if role == key("toolResult") {
            "a tool result"
        } else {
            "a message"
        };
        if let Ok(rc) = table.split(&m, what) {
            table.register_pair(rc.clone(), m);
            return Ok(rc);
        }
    }
    let what = format!("{hook}: message {i}");
    table.to_rust(&m, &what).map_err(rejected_unreadable)
}

/// The context object the hooks of a run get (glue `liveContext`), as pi's `currentContext`,
/// with what the core last knew its `messages` to hold. The core's transcript is appended
/// to it before a hook gets it, and what a hook changed in it is read back after
/// ([`Hooks::sync_context`]).
pub struct LiveContext {
    live: JsValue,
    /// The messages of the live array at the last sync.
    mirror: std::cell::RefCell<Vec<AgentMessage>>,
    /// A hook got the context: code may hold it from then on.
    handed_out: std::cell::Cell<bool>,
}

impl LiveContext {
    /// Brings the live array up to `messages` (the start it shares with the last sync stays)
    /// and gives the context object.
    fn push(&self, table: &Table, messages: &[AgentMessage]) -> Result<JsValue, Thrown> {
        let keep = self
            .mirror
            .borrow()
            .iter()
            .zip(messages)
            .take_while(|(a, b)| Rc::ptr_eq(a, b))
            .count();
        let places = table
            .places(messages.get(keep..).unwrap_or_default())
            .ok_or_else(|| Thrown::new("a message of the context is no object"))?;
        let js = table
            .glue()
            .live_push(&self.live, keep as u32, table.objects(), &places)
            .map_err(thrown)?;
        let mut mirror = self.mirror.borrow_mut();
        mirror.truncate(keep);
        mirror.extend_from_slice(messages.get(keep..).unwrap_or_default());
        self.handed_out.set(true);
        Ok(js)
    }

    fn of(c: &Context) -> Option<Rc<LiveContext>> {
        c.host.clone()?.downcast::<LiveContext>().ok()
    }
}

/// `{ messages, tools, ...other keys }` from JS. At a run's start (`copy`) the object is
/// copied once, as pi's `{ ...context }` does (getters run now), and that copy is the live
/// context the hooks see; a context a hook returned becomes the live one itself.
pub fn context_from_js(
    table: &Rc<Table>,
    signal: &JsValue,
    hook: &str,
    js: &JsValue,
    copy: bool,
) -> Result<Context, Thrown> {
    if !js.is_object() {
        return Err(rejected(Error::InvalidInput(format!(
            "{hook}: context must be an object with a messages array, got {}",
            describe(js)
        ))));
    }
    let what = match hook {
        "context" => "context.messages".to_string(),
        _ => format!("{hook}: context.messages"),
    };
    let messages = js_messages(table, &what, &read(js, "messages")?)?;
    let tools_js = read(js, "tools")?;
    let mut tools: Vec<Rc<dyn Tool>> = Vec::new();
    match items(table, &tools_js, "context.tools")? {
        Some(list) => tools = tools_from(table, signal, &list)?,
        None if tools_js.is_undefined() || tools_js.is_null() => {}
        None => {
            return Err(rejected(Error::InvalidInput(format!(
                "{hook}: context.tools must be an array, got {}",
                describe(&tools_js)
            ))))
        }
    }
    let live = LiveContext {
        live: table.glue().live_context(js, copy).map_err(thrown)?,
        mirror: std::cell::RefCell::new(if copy { Vec::new() } else { messages.clone() }),
        // A context a hook returned is held by the hook's code already.
        handed_out: std::cell::Cell::new(!copy),
    };
    Ok(Context {
        messages,
        tools,
        host: Some(Rc::new(live)),
    })
}

/// The tools of a list the glue read (`context.tools` after a hook changed it).
fn tools_from(
    table: &Rc<Table>,
    signal: &JsValue,
    list: &Array,
) -> Result<Vec<Rc<dyn Tool>>, Thrown> {
    let mut tools: Vec<Rc<dyn Tool>> = Vec::new();
    for t in list.iter() {
        tools.push(Rc::new(JsTool::new(t, signal.clone(), table.clone())?));
    }
    Ok(tools)
}

fn json_of(v: &JsValue, what: &str) -> Result<Value, Thrown> {
    to_json(v, what)
        .map(|v| v.unwrap_or(Value::Null))
        .map_err(rejected_unreadable)
}

/// The `context`, `model` and `thinkingLevel` of a `prepareNextTurn`/`prepareRequest` result.
type UpdateFields = (
    Option<Context>,
    Option<Rc<Value>>,
    Option<crate::message::ThinkingLevel>,
);

impl JsHooks {
    /// The live context object, the core's transcript appended (a throwing trap of an array
    /// a hook put there is `Err`, as pi's push would throw).
    fn context_js(&self, c: &Context) -> Result<JsValue, Thrown> {
        if let Some(f) = &self.fixed_context {
            return Ok(f.clone());
        }
        match LiveContext::of(c) {
            Some(live) => live.push(&self.table, &c.messages),
            // (Every context of a run is a live one.)
            None => Ok(JsValue::UNDEFINED),
        }
    }

    /// Calls the tool hook `name` (when configured) with `{ assistantMessage, toolCall, args,
    /// context }` (L-99, L-107), to which `extra` adds its own fields, and the signal.
    fn tool_hook<'a>(
        &'a self,
        name: &'static str,
        call: &ToolCallContext,
        after: Option<(&Rc<Value>, bool)>,
    ) -> Option<HostFuture<'a, JsValue>> {
        if !self.has(name) {
            return None;
        }
        let args = self.context_js(call.context).map(|c| {
            let (result, is_error) = after
                .map_or((JsValue::UNDEFINED, JsValue::UNDEFINED), |(r, e)| {
                    (self.table.to_js(r), JsValue::from_bool(e))
                });
            let o = self.table.glue().tool_hook_context(
                &self.table.to_js(call.assistant_message),
                &self.table.to_js(call.tool_call),
                &self.table.to_js(call.args),
                &c,
                &result,
                &is_error,
            );
            vec![o, self.signal.clone()]
        });
        self.hook(name, args)
    }

    fn turn_js(&self, t: &TurnContext) -> Result<JsValue, Thrown> {
        let o = Object::new();
        set(&o, "message", &self.table.to_js(t.message));
        set(&o, "toolResults", &self.table.array(t.tool_results));
        set(&o, "context", &self.context_js(t.context)?);
        set(&o, "newMessages", &self.table.array(t.new_messages));
        Ok(o.into())
    }

    /// Whether the hook is configured. Checked before its arguments are built: building a
    /// context object costs O(transcript), and most hooks are usually absent. A hook whose
    /// read throws, or that is no function, counts as configured: calling it fails.
    fn has(&self, name: &'static str) -> bool {
        !matches!(self.hook_fn(name), Ok(None))
    }

    /// `config[name]` as pi calls it, read by the glue's `hook`: `None` when absent; a
    /// throwing read, or a value that is no function, is `Err`.
    fn hook_fn(&self, name: &'static str) -> Result<Option<Function>, Thrown> {
        self.table
            .glue()
            .hook(&self.config, &key(name))
            .map_err(thrown)
    }

    /// `config[name](...args)` awaited, or `None` when the hook is not configured. A
    /// throwing read of the hook is the hook throwing.
    /// Arguments that could not be built (a throwing trap of the live context) reject as
    /// the hook would.
    fn hook<'a>(
        &'a self,
        name: &'static str,
        args: Result<Vec<JsValue>, Thrown>,
    ) -> Option<HostFuture<'a, JsValue>> {
        let returned = match args.map(|args| (args, self.hook_fn(name))) {
            Ok((args, Ok(f))) => {
                let refs: Vec<&JsValue> = args.iter().collect();
                call_with(&f?, &self.config, &refs)
            }
            Ok((_, Err(e))) | Err(e) => Err(e),
        };
        // As pi's `await hook(…)`: a value that is no thenable settles a task-queue turn later.
        Some(Box::pin(async move { super::js::awaited(returned).await }))
    }

    fn update_fields(&self, hook: &'static str, v: &JsValue) -> Result<UpdateFields, Thrown> {
        let f = self.table.fields(v, "context,model,thinkingLevel")?;
        let context = match f.get(0) {
            c if c.is_undefined() || c.is_null() => None,
            c => Some(context_from_js(&self.table, &self.signal, hook, &c, false)?),
        };
        let model = match f.get(1) {
            m if m.is_undefined() || m.is_null() => None,
            m => Some(
                self.table
                    .to_rust(&m, "model")
                    .map_err(rejected_unreadable)?,
            ),
        };
        let level = json_of(&f.get(2), "thinkingLevel")?;
        let level = hook_values::thinking_level(hook, Some(&level)).map_err(rejected)?;
        Ok((context, model, level))
    }
}

impl Hooks for JsHooks {
    fn convert_to_llm<'a>(&'a self, messages: &'a [AgentMessage]) -> HostFuture<'a, LlmContext> {
        let arr = self.table.array(messages);
        // Required: pi calls it unchecked, so a missing one is its TypeError.
        let returned = super::js::read(&self.config, "convertToLlm").and_then(|f| {
            match f.dyn_into::<js_sys::Function>() {
                Ok(f) => call_with(&f, &self.config, &[&arr]),
                Err(_) => Err(super::js::thrown(
                    js_sys::TypeError::new("config.convertToLlm is not a function").into(),
                )),
            }
        });
        Box::pin(async move {
            let v = settle(returned?).await?;
            // pi hands the list to the stream function unread: it stays the caller's, read
            // only by a built-in provider, which builds its request from the messages.
            if self.read_llm || !is_array(&v) {
                return js_messages(&self.table, "convertToLlm", &v).map(LlmContext::from);
            }
            Ok(LlmContext {
                messages: Vec::new(),
                host: Some(Rc::new(v)),
            })
        })
    }

    fn transform_context<'a>(
        &'a self,
        context: &'a Context,
    ) -> Option<HostFuture<'a, Vec<AgentMessage>>> {
        if !self.has("transformContext") {
            return None;
        }
        // pi's `transformContext(context.messages)`: the live array itself.
        let live = LiveContext::of(context).filter(|_| self.fixed_context.is_none());
        let messages = match &live {
            Some(l) => l
                .push(&self.table, &context.messages)
                .map(|_| super::js::get(&l.live, "messages")),
            None => Ok(self.table.array(&context.messages).into()),
        };
        let args = messages.map(|m| vec![m, self.signal.clone()]);
        let f = self.hook("transformContext", args)?;
        Some(Box::pin(async move {
            let v = f.await?;
            // The live array given back as it was: the transcript the core holds.
            if let Some(l) = &live {
                if self.table.glue().live_same(&l.live, &v).unwrap_or(false) {
                    return Ok(l.mirror.borrow().clone());
                }
            }
            js_messages(&self.table, "transformContext", &v)
        }))
    }

    fn get_api_key<'a>(&'a self, provider: &'a str) -> Option<HostFuture<'a, Option<String>>> {
        let f = self.hook("getApiKey", Ok(vec![JsValue::from_str(provider)]))?;
        Some(Box::pin(async move {
            let v = f.await?;
            Ok(v.as_string().filter(|s| !s.is_empty()))
        }))
    }

    fn prepare_next_turn<'a>(
        &'a self,
        turn: TurnContext<'a>,
    ) -> Option<HostFuture<'a, Option<NextTurn>>> {
        if !self.has("prepareNextTurn") {
            return None;
        }
        let f = self.hook("prepareNextTurn", self.turn_js(&turn).map(|t| vec![t]))?;
        Some(Box::pin(async move {
            let v = f.await?;
            if !v.is_object() {
                return Ok(None);
            }
            let (context, model, thinking_level) = self.update_fields("prepareNextTurn", &v)?;
            let messages = match read(&v, "messages")? {
                m if m.is_undefined() || m.is_null() => None,
                m => Some(js_messages(&self.table, "prepareNextTurn", &m)?),
            };
            Ok(Some(NextTurn {
                context,
                messages,
                model,
                thinking_level,
            }))
        }))
    }

    fn prepare_request<'a>(
        &'a self,
        request: RequestContext<'a>,
    ) -> Option<HostFuture<'a, Option<RequestUpdate>>> {
        if !self.has("prepareRequest") {
            return None;
        }
        let args = self.context_js(request.context).map(|c| {
            let o = Object::new();
            set(&o, "context", &c);
            set(&o, "model", &self.table.to_js(request.model));
            set(
                &o,
                "thinkingLevel",
                &JsValue::from_str(request.thinking_level.as_str()),
            );
            vec![o.into(), self.signal.clone()]
        });
        let f = self.hook("prepareRequest", args)?;
        Some(Box::pin(async move {
            let v = f.await?;
            if !v.is_object() {
                return Ok(None);
            }
            let (context, model, thinking_level) = self.update_fields("prepareRequest", &v)?;
            Ok(Some(RequestUpdate {
                context,
                model,
                thinking_level,
            }))
        }))
    }

    fn finish_turn<'a>(
        &'a self,
        turn: TurnContext<'a>,
    ) -> Option<HostFuture<'a, Option<TurnDecision>>> {
        if !self.has("finishTurn") {
            return None;
        }
        let args = self.turn_js(&turn).map(|t| vec![t, self.signal.clone()]);
        let f = self.hook("finishTurn", args)?;
        Some(Box::pin(async move {
            let v = f.await?;
            let action = read(&v, "action")?.as_string();
            Ok(hook_values::turn_decision(
                &crate::value!({ "action": action }),
            ))
        }))
    }

    fn before_tool_call<'a>(
        &'a self,
        call: ToolCallContext<'a>,
    ) -> Option<HostFuture<'a, Option<BeforeToolCallResult>>> {
        let f = self.tool_hook("beforeToolCall", &call, None)?;
        Some(Box::pin(async move {
            let v = self.table.view(&f.await?, "block,reason,terminate")?;
            let json = json_of(&v, "beforeToolCall's result")?;
            Ok(hook_values::before_tool_call(&json))
        }))
    }

    fn interrupted_tool_call<'a>(
        &'a self,
        call: ToolCallContext<'a>,
    ) -> Option<HostFuture<'a, Option<crate::io::Interrupted>>> {
        let f = self.tool_hook("onInterruptedToolCall", &call, None)?;
        Some(Box::pin(async move {
            let v = f.await?;
            use crate::io::Interrupted;
            if v.is_undefined() || v.is_null() {
                return Ok(None);
            }
            if v.is_function() || v.is_symbol() {
                return Ok(Some(Interrupted::Invalid(if v.is_function() {
                    "a function".into()
                } else {
                    "a symbol".into()
                })));
            }
            if let Some(s) = v.as_string() {
                return Ok(Some(if s == "rerun" {
                    Interrupted::Rerun
                } else {
                    Interrupted::Invalid(format!(
                        "the string {}",
                        crate::json::json_stringify(&Value::String(s))
                    ))
                }));
            }
            let v = self.table.view(&v, super::tools::RESULT_FIELDS)?;
            let json = json_of(&v, "onInterruptedToolCall's result")?;
            Ok(Some(match &json {
                Value::Object(o) if o.get("content").is_none_or(Value::is_array) => {
                    Interrupted::Result(json)
                }
                Value::Object(_) => {
                    Interrupted::Invalid("a result whose content is not an array".into())
                }
                Value::Array(_) => Interrupted::Invalid("an array".into()),
                other => Interrupted::Invalid(crate::json::json_stringify(other)),
            }))
        }))
    }

    fn after_tool_call<'a>(
        &'a self,
        call: AfterToolCallContext<'a>,
    ) -> Option<HostFuture<'a, Option<AfterToolCallResult>>> {
        let call_context = ToolCallContext {
            assistant_message: call.assistant_message,
            tool_call: call.tool_call,
            args: call.args,
            context: call.context,
        };
        let f = self.tool_hook(
            "afterToolCall",
            &call_context,
            Some((call.result, call.is_error)),
        )?;
        Some(Box::pin(async move {
            let v = self.table.view(&f.await?, super::tools::RESULT_FIELDS)?;
            // The hook's `content` and `details` stay its own objects, unread (one owner per
            // value), except in a checkpointed run, whose checkpoints are JSON.
            let read = if !self.table.json_results() && v.is_object() && !is_array(&v) {
                self.table.split(&v, "afterToolCall's result")?
            } else {
                Rc::new(json_of(&v, "afterToolCall's result")?)
            };
            Ok(hook_values::after_tool_call(&read))
        }))
    }

    /// Reads back what hooks changed in the live context: one crossing when they changed
    /// nothing, none when no hook got it since the last sync.
    fn sync_context(&self, c: &mut Context) -> Result<(), Thrown> {
        if self.fixed_context.is_some() {
            return Ok(());
        }
        let Some(live) = LiveContext::of(c) else {
            return Ok(());
        };
        if !live.handed_out.get() {
            return Ok(());
        }
        let pulled = self.table.glue().live_pull(&live.live).map_err(thrown)?;
        if let Some(parts) = pulled.dyn_ref::<Array>() {
            let list: Array = parts.get(1).unchecked_into();
            let known = live.mirror.borrow().len();
            let k = (parts.get(0).as_f64().unwrap_or(0.0) as usize).min(known);
            if k < known || list.length() as usize != known {
                // What the loop appended since the last sync stays after what code holding
                // the object left.
                let appended = c.messages.split_off(known.min(c.messages.len()));
                c.messages.truncate(k);
                for i in k..list.length() as usize {
                    c.messages
                        .push(message_at(&self.table, "context.messages", &list, i)?);
                }
                *live.mirror.borrow_mut() = c.messages.clone();
                c.messages.extend(appended);
            }
            if let Some(tools) = parts.get(2).dyn_ref::<Array>() {
                c.tools = tools_from(&self.table, &self.signal, tools)?;
            }
        }
        // What the loop appended shows in the object now (a frozen array throws, as pi's push).
        if live.mirror.borrow().len() != c.messages.len() {
            live.push(&self.table, &c.messages)?;
        }
        Ok(())
    }

    fn get_steering_messages(&self) -> Option<HostFuture<'_, Vec<AgentMessage>>> {
        let f = self.hook("getSteeringMessages", Ok(Vec::new()))?;
        Some(Box::pin(async move {
            queued(&self.table, "getSteeringMessages", f.await?)
        }))
    }

    fn get_follow_up_messages(&self) -> Option<HostFuture<'_, Vec<AgentMessage>>> {
        let f = self.hook("getFollowUpMessages", Ok(Vec::new()))?;
        Some(Box::pin(async move {
            queued(&self.table, "getFollowUpMessages", f.await?)
        }))
    }
}

/// `(await poll()) || []`, then an array of messages.
fn queued(table: &Table, hook: &str, v: JsValue) -> Result<Vec<AgentMessage>, Thrown> {
    if !v.is_truthy() {
        return Ok(Vec::new());
    }
    js_messages(table, hook, &v)
}
