//! Checkpoint and restore: where a run stands, as plain data, at every event boundary.
//!
//! A run's state is its transcript plus a small [`Position`]. The transcript is what the
//! caller keeps anyway: its context's messages, then each message of the run in
//! `message_end` order (an `Agent`'s `state.messages`). The position refers to the
//! transcript's tail and holds what is not in it yet: messages taken from a queue but not
//! announced, tool results that ended but have no message yet, the turn's decision.
//!
//! The loop keeps the position in a [`Tracker`] as it goes: [`Tracker::observe`] sees each
//! event before the sink does, and the loop states the rest (what a poll returned, how a turn
//! ends) before the event that makes it visible. So at any moment between two steps of the
//! run, the position and the transcript the sink has seen describe the same point.
//!
//! [`resume_agent_loop`](super::run::resume_agent_loop) finishes a run from a position, with
//! the tools, hooks and stream function supplied again:
//! - a response cut while streaming is requested again; its partial is gone;
//! - tool calls that ended keep their results and never run again;
//! - a call whose tool was running when the run was cut off runs again only when the tool
//!   says that is safe (pi's `replay: "safe"`, [`Tool::replay_safe`](crate::io::Tool::replay_safe));
//!   otherwise it gets an error result saying it was interrupted ([`interrupted_call_text`]).
//!   A call that had started but whose tool had not been called yet runs normally;
//! - no event already delivered is delivered again, apart from the cut response's.
//!
//! A context or model that a hook returned for the rest of the run is not kept; the hooks
//! run again at their next call. Depends on `io`, `event`, `message`.

use std::cell::RefCell;
use std::rc::Rc;

use crate::json::Value;

use crate::error::{Error, Result};
use crate::event::AgentEvent;
use crate::message::{num, AgentMessage, ThinkingLevel};

/// The format's version, the `v` of its JSON.
pub const VERSION: u64 = 1;

/// A tool call that ended (`tool_execution_end` was delivered).
#[derive(Clone, Debug, PartialEq)]
pub struct Ended {
    pub id: String,
    pub result: Rc<Value>,
    pub is_error: bool,
    pub duration_ms: Option<f64>,
}

/// What comes before a turn's request. First `turn_start` (when `turn_start`), then
/// `inject`: messages to announce and append (after the declaration pass of §7 when
/// `declare`; the first one's `message_start` already delivered when `announced`), then,
/// when `poll`, the run's first steering poll (L-40) and its messages, then the request.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Opening {
    pub turn_start: bool,
    pub inject: Vec<AgentMessage>,
    pub declare: bool,
    pub announced: bool,
    pub poll: bool,
}

/// Where in the loop a run is.
#[derive(Clone, Debug, PartialEq)]
pub enum Stage {
    /// Before the turn's request. A response being streamed is here too: it is requested
    /// again.
    Request(Opening),
    /// The turn's response is the transcript's message before its last `results` (the
    /// turn's tool results so far). `ended`: the calls that ended, in the order they did;
    /// `started`: the calls that started and have not ended, of which `executing` had their
    /// tool's `execute` called; `announced`: the next tool result's `message_start` was
    /// delivered.
    Tools {
        results: usize,
        ended: Vec<Ended>,
        started: Vec<String>,
        executing: Vec<String>,
        announced: bool,
    },
    /// `turn_end` was delivered: the turn's response and its `results` tool results end
    /// the transcript. `has_more`: its tool calls keep the run going (L-41); `explicit`:
    /// `finishTurn` said continue (L-53); `end`: `agent_end` is next.
    Next {
        results: usize,
        has_more: bool,
        explicit: bool,
        end: bool,
    },
    /// `agent_end` was delivered.
    Done,
}

/// A run's position: its stage, how many of the transcript's last messages the run added,
/// and the model and thinking level its next request uses.
#[derive(Clone, Debug, PartialEq)]
pub struct Position {
    pub stage: Stage,
    pub new: usize,
    pub model: Rc<Value>,
    pub reasoning: Option<ThinkingLevel>,
}

/// The error text of a call that started and did not end before the run was interrupted,
/// when its tool does not say `replay: "safe"`.
pub fn interrupted_call_text(name: &str) -> String {
    format!(
        "Tool call \"{name}\" was interrupted before completion and was not run again, because its tool does not declare replay: \"safe\". Its effects, if any, are unknown."
    )
}

/// The position of a running loop, kept current as it goes (see the module docs).
#[derive(Default)]
pub struct Tracker(RefCell<Option<Position>>);

impl Tracker {
    pub fn new() -> Tracker {
        Tracker::default()
    }

    /// Notes that a call's tool is about to `execute`: cut off after this, the call may have
    /// had effects.
    pub(crate) fn executing(&self, id: &str) {
        self.edit(|p| {
            // A call run again after a resumption is listed already.
            if let Stage::Tools { executing, .. } = &mut p.stage {
                if !executing.iter().any(|e| e == id) {
                    executing.push(id.to_string());
                }
            }
        });
    }

    /// The position now; `None` before a run started.
    pub fn position(&self) -> Option<Position> {
        self.0.borrow().clone()
    }

    pub(crate) fn set(&self, position: Position) {
        *self.0.borrow_mut() = Some(position);
    }

    pub(crate) fn edit(&self, f: impl FnOnce(&mut Position)) {
        if let Some(p) = self.0.borrow_mut().as_mut() {
            f(p);
        }
    }

    pub(crate) fn stage(&self, stage: Stage) {
        self.edit(|p| p.stage = stage);
    }

    /// Updates the position for `event`, before the sink gets it.
    pub fn observe(&self, event: &AgentEvent) {
        self.edit(|p| match (&mut p.stage, event) {
            (Stage::Request(o), AgentEvent::TurnStart) => o.turn_start = false,
            (Stage::Request(o), AgentEvent::MessageStart { message })
                if o.inject.first().is_some_and(|m| Rc::ptr_eq(m, message)) =>
            {
                o.announced = true
            }
            (Stage::Request(o), AgentEvent::MessageEnd { message }) => {
                p.new += 1;
                if o.inject.first().is_some_and(|m| Rc::ptr_eq(m, message)) {
                    o.inject.remove(0);
                    o.announced = false;
                } else {
                    // The response: its tool calls are next.
                    p.stage = Stage::Tools {
                        results: 0,
                        ended: Vec::new(),
                        started: Vec::new(),
                        executing: Vec::new(),
                        announced: false,
                    };
                }
            }
            (Stage::Tools { started, .. }, AgentEvent::ToolExecutionStart { tool_call_id, .. }) => {
                started.push(tool_call_id.clone());
            }
            (
                Stage::Tools {
                    started,
                    ended,
                    executing,
                    ..
                },
                AgentEvent::ToolExecutionEnd {
                    tool_call_id,
                    result,
                    is_error,
                    duration_ms,
                    ..
                },
            ) => {
                started.retain(|s| s != tool_call_id);
                executing.retain(|s| s != tool_call_id);
                ended.push(Ended {
                    id: tool_call_id.clone(),
                    result: result.clone(),
                    is_error: *is_error,
                    duration_ms: *duration_ms,
                });
            }
            (Stage::Tools { announced, .. }, AgentEvent::MessageStart { .. }) => {
                *announced = true;
            }
            (
                Stage::Tools {
                    results, announced, ..
                },
                AgentEvent::MessageEnd { .. },
            ) => {
                *results += 1;
                *announced = false;
                p.new += 1;
            }
            (_, AgentEvent::AgentEnd { .. }) => p.stage = Stage::Done,
            _ => {}
        });
    }
}

impl Position {
    /// The position as JSON (`v`, `at`, `new`, `model`, `reasoning`, and the stage's fields;
    /// a host value as its JSON reading).
    pub fn to_json(&self) -> Value {
        crate::json::parse(&self.to_text()).unwrap_or_default()
    }

    /// [`to_json`](Self::to_json) as text, written from the position itself (nothing copied),
    /// with a line break after each member's comma: a recording compares it a member at a
    /// time (tape.js), and JSON reads it as it is.
    pub fn to_text(&self) -> String {
        use crate::json::{write, write_str, Style};
        let style = Style {
            negative_zero: false,
            pretty: false,
            unread_hosts: false,
        };
        let mut out = Vec::with_capacity(512);
        let key = |out: &mut Vec<u8>, k: &str| {
            out.extend_from_slice(if out.is_empty() { b"{\"" } else { b",\n\"" });
            out.extend_from_slice(k.as_bytes());
            out.extend_from_slice(b"\":");
        };
        let flag = |out: &mut Vec<u8>, k: &str, b: bool| {
            key(out, k);
            out.extend_from_slice(if b { b"true" } else { b"false" });
        };
        let number = |out: &mut Vec<u8>, n: f64| {
            out.extend_from_slice(crate::jsnum::to_js_string(n).as_bytes())
        };
        let count = |out: &mut Vec<u8>, k: &str, n: usize| {
            key(out, k);
            number(out, n as f64);
        };
        // A list: `[`, each item written by `item` after a comma but the first, `]`.
        fn list<T>(out: &mut Vec<u8>, items: &[T], item: impl Fn(&mut Vec<u8>, &T)) {
            out.push(b'[');
            for (i, t) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                item(out, t);
            }
            out.push(b']');
        }
        count(&mut out, "v", VERSION as usize);
        key(&mut out, "at");
        write_str(
            &mut out,
            match &self.stage {
                Stage::Request(_) => "request",
                Stage::Tools { .. } => "tools",
                Stage::Next { .. } => "next",
                Stage::Done => "done",
            },
        );
        count(&mut out, "new", self.new);
        key(&mut out, "model");
        write(&mut out, &self.model, style);
        if let Some(r) = self.reasoning {
            key(&mut out, "reasoning");
            write_str(&mut out, r.as_str());
        }
        let ids = |out: &mut Vec<u8>, k: &str, l: &[String]| {
            key(out, k);
            list(out, l, |out, id| write_str(out, id));
        };
        match &self.stage {
            Stage::Request(o) => {
                flag(&mut out, "turnStart", o.turn_start);
                key(&mut out, "inject");
                list(&mut out, &o.inject, |out, m| write(out, m, style));
                flag(&mut out, "declare", o.declare);
                flag(&mut out, "announced", o.announced);
                flag(&mut out, "poll", o.poll);
            }
            Stage::Tools {
                results,
                ended,
                started,
                executing,
                announced,
            } => {
                count(&mut out, "results", *results);
                key(&mut out, "ended");
                list(&mut out, ended, |out, e| {
                    out.extend_from_slice(b"{\"id\":");
                    write_str(out, &e.id);
                    out.extend_from_slice(b",\"result\":");
                    write(out, &e.result, style);
                    out.extend_from_slice(b",\"isError\":");
                    out.extend_from_slice(if e.is_error { b"true" } else { b"false" });
                    if let Some(d) = e.duration_ms {
                        out.extend_from_slice(b",\"durationMs\":");
                        write(out, &num(d), style);
                    }
                    out.push(b'}');
                });
                ids(&mut out, "started", started);
                ids(&mut out, "executing", executing);
                flag(&mut out, "announced", *announced);
            }
            Stage::Next {
                results,
                has_more,
                explicit,
                end,
            } => {
                count(&mut out, "results", *results);
                flag(&mut out, "hasMore", *has_more);
                flag(&mut out, "explicit", *explicit);
                flag(&mut out, "end", *end);
            }
            Stage::Done => {}
        }
        out.push(b'}');
        crate::json::text_from(out)
    }

    /// Reads a position written by [`to_json`](Self::to_json); names the first field that
    /// is wrong.
    pub fn from_json(v: &Value) -> Result<Position> {
        let bad = bad_checkpoint;
        if !v.is_object() {
            return Err(bad("the position is not an object"));
        }
        if v.get("v").and_then(Value::as_u64) != Some(VERSION) {
            return Err(bad(&format!("version is not {VERSION}")));
        }
        let count = |key: &str| {
            v.get(key)
                .and_then(Value::as_u64)
                .map(|n| n as usize)
                .ok_or_else(|| bad(&format!("{key} is not a count")))
        };
        let flag = |key: &str| {
            v.get(key)
                .and_then(Value::as_bool)
                .ok_or_else(|| bad(&format!("{key} is not a boolean")))
        };
        let ids = |key: &str| -> Result<Vec<String>> {
            match v.get(key) {
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|s| {
                        s.as_str()
                            .map(String::from)
                            .ok_or_else(|| bad(&format!("{key} holds a non-string id")))
                    })
                    .collect(),
                _ => Err(bad(&format!("{key} is not a list"))),
            }
        };
        let model = match v.get("model") {
            Some(m @ Value::Object(_)) => Rc::new(m.clone()),
            _ => return Err(bad("model is not an object")),
        };
        let reasoning = match v.get("reasoning") {
            None | Some(Value::Null) => None,
            Some(r) => Some(
                r.as_str()
                    .and_then(ThinkingLevel::parse)
                    .ok_or_else(|| bad("reasoning is not a thinking level"))?,
            ),
        };
        let stage = match v.get("at").and_then(Value::as_str) {
            Some("request") => Stage::Request(Opening {
                turn_start: flag("turnStart")?,
                inject: match v.get("inject") {
                    Some(Value::Array(a)) if a.iter().all(Value::is_object) => {
                        a.iter().map(|m| Rc::new(m.clone())).collect()
                    }
                    _ => return Err(bad("inject is not a list of messages")),
                },
                declare: flag("declare")?,
                announced: flag("announced")?,
                poll: flag("poll")?,
            }),
            Some("tools") => Stage::Tools {
                results: count("results")?,
                ended: match v.get("ended") {
                    Some(Value::Array(a)) => a
                        .iter()
                        .map(|e| {
                            ended_from(e).ok_or_else(|| bad("an ended tool call is malformed"))
                        })
                        .collect::<Result<_>>()?,
                    _ => return Err(bad("ended is not a list")),
                },
                started: ids("started")?,
                executing: ids("executing")?,
                announced: flag("announced")?,
            },
            Some("next") => Stage::Next {
                results: count("results")?,
                has_more: flag("hasMore")?,
                explicit: flag("explicit")?,
                end: flag("end")?,
            },
            Some("done") => Stage::Done,
            _ => return Err(bad("at is not request, tools, next or done")),
        };
        Ok(Position {
            stage,
            new: count("new")?,
            model,
            reasoning: reasoning.filter(|r| *r != ThinkingLevel::Off),
        })
    }
}

fn ended_from(v: &Value) -> Option<Ended> {
    Some(Ended {
        id: v.get("id")?.as_str()?.to_string(),
        result: Rc::new(v.get("result").filter(|r| r.is_object())?.clone()),
        is_error: v.get("isError")?.as_bool()?,
        duration_ms: match v.get("durationMs") {
            None => None,
            Some(d) => Some(d.as_f64()?),
        },
    })
}

/// The error for a checkpoint that cannot be read or does not fit its transcript.
pub fn bad_checkpoint(what: &str) -> Error {
    Error::InvalidInput(format!("checkpoint: {what}"))
}
