//! The transcript model (spec §3) and `declareToolChanges` (§7): the transcript's system
//! messages declare the tools the model may call; `context.tools` is what can run.
//!
//! Declarations are compared by their serialized JSON, as pi compares
//! `JSON.stringify(toToolDeclaration(x))` (L-26): key order counts. Pure: depends on the
//! rest of `message` only; the loop and the request builders both read it.

use crate::json::Put;
use crate::text::Joined;
use std::rc::Rc;

use crate::json::Value;

use super::{content_text, is_role, num, AgentMessage, Object};

/// L-23: the leading system message for a prompt and tool declarations, or `None` when the
/// prompt is empty and there are no tools. Key order: role, content, toolsAdded, timestamp.
pub fn create_initial_system_message(
    system_prompt: Option<&str>,
    tools: &[Value],
) -> Option<Value> {
    let has_prompt = system_prompt.is_some_and(|p| !p.is_empty());
    if !has_prompt && tools.is_empty() {
        return None;
    }
    let mut o = Object::new();
    o.put("role", "system".into());
    o.put("content", system_prompt.unwrap_or("").into());
    if !tools.is_empty() {
        o.put("toolsAdded", Value::Array(tools.to_vec()));
    }
    o.put("timestamp", num(0.0));
    Some(Value::Object(o))
}

fn list<'a>(m: &'a Value, key: &str) -> &'a [Value] {
    m.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn name_of(v: &Value) -> &str {
    v.get("name").and_then(Value::as_str).unwrap_or("")
}

/// L-25: replay every system message's removals then additions over a name-keyed map that
/// keeps first-insertion position. Returns the declarations in map order.
pub fn get_current_tools<'a>(messages: impl IntoIterator<Item = &'a Value>) -> Vec<Value> {
    let mut tools = Object::new();
    for m in messages {
        if !is_role(m, "system") {
            continue;
        }
        for t in list(m, "toolsRemoved") {
            // `shift_remove` keeps the others in place, like `Map.delete`.
            tools.shift_remove(name_of(t));
        }
        for t in list(m, "toolsAdded") {
            // An existing name keeps its position, like `Map.set`.
            tools.insert(name_of(t).to_string(), t.clone());
        }
    }
    tools.into_iter().map(|(_, v)| v).collect()
}

/// L-26 applied to a declaration that is already JSON: the same four keys in pi's order.
pub fn to_tool_declaration(decl: &Value) -> Value {
    let mut o = Object::new();
    o.insert(
        "name".into(),
        decl.get("name").cloned().unwrap_or(Value::Null),
    );
    if let Some(d) = decl.get("description") {
        o.put("description", d.clone());
    }
    o.insert(
        "parameters".into(),
        decl.get("parameters").cloned().unwrap_or(Value::Null),
    );
    if let Some(c) = decl.get("constrainedSampling") {
        o.put("constrainedSampling", c.clone());
    }
    Value::Object(o)
}

/// `declarationsEqual`: equal serialized declarations (key order included).
pub fn declarations_equal(a: &Value, b: &Value) -> bool {
    // Strings, not `Value`s: map equality ignores key order, `JSON.stringify` does not.
    let text = |v: &Value| crate::json::json_stringify(&to_tool_declaration(v));
    text(a) == text(b)
}

/// L-27 result.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolChanges {
    pub tools_added: Vec<Value>,
    pub tools_removed: Vec<Value>,
}

impl ToolChanges {
    pub fn is_empty(&self) -> bool {
        self.tools_added.is_empty() && self.tools_removed.is_empty()
    }
}

/// L-27: added = current tools new or changed (current order); removed = previous tools gone
/// or changed (previous order), as `{ name }`.
pub fn get_tool_state_changes(previous: &[Value], current: &[Value]) -> ToolChanges {
    // `new Map(list.map(t => [t.name, t]))`: the last entry of a duplicated name wins.
    let last = |list: &[Value], name: &str| list.iter().rev().find(|t| name_of(t) == name).cloned();
    let tools_added = current
        .iter()
        .filter(|t| match last(previous, name_of(t)) {
            None => true,
            Some(p) => !declarations_equal(&p, t),
        })
        .map(to_tool_declaration)
        .collect();
    let tools_removed = previous
        .iter()
        .filter(|t| match last(current, name_of(t)) {
            None => true,
            Some(c) => !declarations_equal(t, &c),
        })
        .map(|t| {
            let mut o = Object::new();
            o.put("name", name_of(t).into());
            Value::Object(o)
        })
        .collect();
    ToolChanges {
        tools_added,
        tools_removed,
    }
}

/// L-28: all system messages replayed into one, or `None` when there is none.
pub fn get_current_system_message<'a>(
    messages: impl IntoIterator<Item = &'a Value> + Clone,
) -> Option<Value> {
    let mut content: Vec<String> = Vec::new();
    let mut sections = Object::new();
    let mut timestamp: Option<Value> = None;
    for m in messages.clone() {
        if !is_role(m, "system") {
            continue;
        }
        if timestamp.is_none() {
            timestamp = Some(m.get("timestamp").cloned().unwrap_or(Value::Null));
        }
        let text = content_text(m.get("content"), "\n");
        if !text.is_empty() {
            content.push(text);
        }
        if let Some(Value::Object(patch)) = m.get("sections") {
            for (name, value) in patch {
                if value.is_null() {
                    sections.shift_remove(name);
                } else {
                    sections.insert(name.clone(), value.clone());
                }
            }
        }
    }
    let tools = get_current_tools(messages);
    if timestamp.is_none() && tools.is_empty() {
        return None;
    }
    let mut o = Object::new();
    o.put("role", "system".into());
    o.put("content", content.joined("\n\n").into());
    if !sections.is_empty() {
        o.put("sections", Value::Object(sections));
    }
    if !tools.is_empty() {
        o.put("toolsAdded", Value::Array(tools));
    }
    o.put("timestamp", timestamp.unwrap_or_else(|| num(0.0)));
    Some(Value::Object(o))
}

/// L-29: the replayed prompt text: content, then every non-null section, empty parts
/// dropped, joined with a blank line.
pub fn get_current_system_prompt<'a>(
    messages: impl IntoIterator<Item = &'a Value> + Clone,
) -> String {
    let Some(m) = get_current_system_message(messages) else {
        return String::new();
    };
    let mut parts = vec![content_text(m.get("content"), "\n")];
    if let Some(Value::Object(sections)) = m.get("sections") {
        for v in sections.values() {
            if let Some(s) = v.as_str() {
                parts.push(s.to_string());
            }
        }
    }
    parts.retain(|p| !p.is_empty());
    parts.joined("\n\n")
}

/// A copy of a system message with its tool fields replaced by `changes` (empty lists omit
/// the key); every other key keeps its place.
fn with_tool_changes(message: &Value, changes: &ToolChanges) -> Value {
    let mut o = message.as_object().cloned().unwrap_or_default();
    o.shift_remove("toolsAdded");
    o.shift_remove("toolsRemoved");
    if !changes.tools_added.is_empty() {
        o.insert(
            "toolsAdded".into(),
            Value::Array(changes.tools_added.clone()),
        );
    }
    if !changes.tools_removed.is_empty() {
        o.insert(
            "toolsRemoved".into(),
            Value::Array(changes.tools_removed.clone()),
        );
    }
    Value::Object(o)
}

/// §7 `declareToolChanges(context, pending)`: reconciles the transcript's declared tools with
/// `current`, the declarations of the context's tools (L-26), for the messages about to be
/// appended. Returns the input list itself (the same `Rc`s, L-70) when nothing changes.
pub fn declare_tool_changes(
    context_messages: &[AgentMessage],
    current: &[Value],
    pending: &[AgentMessage],
    now: f64,
) -> Vec<AgentMessage> {
    // L-67: the last pending system message.
    let system_index = pending.iter().rposition(|m| is_role(m, "system"));
    // L-68: its tool fields are intent only; the baseline ignores them.
    let baseline: Vec<AgentMessage> = match system_index {
        Some(i) => pending
            .iter()
            .enumerate()
            .map(|(j, m)| {
                if j == i {
                    Rc::new(with_tool_changes(m, &ToolChanges::default()))
                } else {
                    m.clone()
                }
            })
            .collect(),
        None => pending.to_vec(),
    };
    // L-69.
    let previous = get_current_tools(context_messages.iter().chain(baseline.iter()).map(|m| &**m));
    let changes = get_tool_state_changes(&previous, current);
    match system_index.and_then(|i| pending.get(i).map(|s| (i, s))) {
        // L-70.
        Some((i, s)) => {
            let declares = !list(s, "toolsAdded").is_empty() || !list(s, "toolsRemoved").is_empty();
            if changes.is_empty() && !declares {
                return pending.to_vec();
            }
            let mut out = baseline;
            if let Some(slot) = out.get_mut(i) {
                *slot = Rc::new(with_tool_changes(s, &changes));
            }
            out
        }
        // L-71.
        None => {
            if changes.is_empty() {
                return pending.to_vec();
            }
            let mut o = Object::new();
            o.put("role", "system".into());
            o.put("content", "".into());
            o.put("timestamp", num(now));
            let update = Rc::new(with_tool_changes(&Value::Object(o), &changes));
            let at = pending
                .iter()
                .position(|m| !is_role(m, "system"))
                .unwrap_or(pending.len());
            let mut out = pending.to_vec();
            out.insert(at, update);
            out
        }
    }
}
