//! Incremental, tolerant parsing of JSON text that arrives in pieces: streamed tool-call
//! arguments. Each piece is read once (O(piece)); `append` returns the changes the piece made
//! to the value as edit records (set a value at a path, append text to the string at a
//! path), so a writer that keeps its own copy of the value (the JS glue's partial message)
//! applies them instead of receiving the whole value again on every delta
//! (shared/design/streaming-boundary.md, point 5).
//!
//! The reading rules are pi-ai 1.6.0's `StreamingJsonParser`, checked against it on recorded
//! fixtures (tests/streaming_json.rs):
//! - an unterminated string shows the characters read so far; an unfinished escape is held
//!   back until complete; an invalid escape stays literal text;
//! - an unterminated container shows what it holds so far; a member whose key or value has
//!   not started is omitted;
//! - an unterminated literal shows once it is a prefix of `true`/`false`/`null`, a number
//!   once its digits form one (an exponent without digits is ignored);
//! - missing commas and colons are tolerated, values in invalid positions and unknown words
//!   are dropped, text after the root value is ignored, and nothing ever fails.
//!
//! Changes are reported down to depth 32; a deeper container is reported as one `set` of
//! its whole value when it closes. Unterminated scalars are not reported until they end.
//!
//! Beyond pi: a string keeps a lone surrogate escape (`\ud83d`) as a JS string would, in
//! crate::json's form, and halves escaped in two pieces join; and a container nested deeper
//! than `json::MAX_DEPTH` stops the reading (the value keeps what came before it; the strict
//! parse at the end reports the limit), so no value here is deeper than the stack holds.
//! Depends on serde_json, `json` and `jsnum` only.

use crate::json::{Map, Value};

use crate::jsnum::from_js_string;
use crate::json::{push_lone, push_str, MAX_DEPTH};
use crate::message::num;

const MAX_REPORTED_DEPTH: usize = 32;
/// An unterminated token longer than this is not shown until it ends.
const MAX_PENDING_SCALAR_LENGTH: usize = 64;

/// One step of a path into the value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathSeg {
    Key(String),
    Index(usize),
}

/// An edit to the value, in the order they happened.
#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    /// A key, element or finished value appeared (a new string with its first text, a
    /// container empty).
    Set { path: Vec<PathSeg>, value: Value },
    /// The open string at `path` grew by `text`.
    Append { path: Vec<PathSeg>, text: String },
}

#[derive(Clone, Debug, PartialEq)]
enum Slot {
    Root,
    Member(String),
    Element(usize),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    Key,
    Colon,
    Value,
    Comma,
}

/// An open container. Containers are owned by their frame while open and moved into their
/// parent when they close.
struct Frame {
    container: Value,
    slot: Option<Slot>,
    path: Option<Vec<PathSeg>>,
    reports_inside: bool,
    key: Option<String>,
    phase: Phase,
}

impl Frame {
    fn is_array(&self) -> bool {
        self.container.is_array()
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Target {
    Key,
    Value,
}

struct OpenString {
    target: Target,
    slot: Option<Slot>,
    text: String,
    /// An unfinished escape: `\` or `\u` plus the hex digits read so far.
    escape: String,
    path: Option<Vec<PathSeg>>,
    /// Index in `changes` of this string's newest change in the current piece.
    change: Option<usize>,
}

/// See the module docs.
#[derive(Default)]
pub struct StreamingJsonParser {
    /// The root value once placed; a root container is placed when it closes (until then
    /// it lives in `stack[0]`).
    root: Option<Value>,
    done: bool,
    stack: Vec<Frame>,
    string: Option<OpenString>,
    scalar: String,
    scalar_slot: Option<Slot>,
    changes: Vec<Change>,
}

fn is_delimiter(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '\n' | '\r' | ',' | ':' | '{' | '}' | '[' | ']' | '"'
    )
}

/// `-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?`, the whole token.
fn is_json_number(t: &str) -> bool {
    let b = t.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'-'));
    let digits = |i: &mut usize| {
        let s = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - s
    };
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            digits(&mut i);
        }
        _ => return false,
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

fn literal(t: &str) -> Option<Value> {
    match t {
        "true" => Some(Value::Bool(true)),
        "false" => Some(Value::Bool(false)),
        "null" => Some(Value::Null),
        _ => None,
    }
}

/// The value of a finished number or literal token; `None` drops it.
fn scalar_value(t: &str) -> Option<Value> {
    literal(t).or_else(|| is_json_number(t).then(|| num(from_js_string(t))))
}

/// The value an unfinished token shows.
fn pending_scalar_value(t: &str) -> Option<Value> {
    for (word, value) in [
        ("true", Value::Bool(true)),
        ("false", Value::Bool(false)),
        ("null", Value::Null),
    ] {
        if word.starts_with(t) {
            return Some(value);
        }
    }
    if is_json_number(t) {
        return Some(num(from_js_string(t)));
    }
    // A number whose exponent has no digits yet shows its mantissa.
    let cut = t.find(['e', 'E'])?;
    let (mantissa, exponent) = t.split_at(cut);
    let exponent = exponent.get(1..).unwrap_or("");
    (matches!(exponent, "" | "+" | "-") && is_json_number(mantissa))
        .then(|| num(from_js_string(mantissa)))
}

fn simple_escape(c: char) -> Option<char> {
    Some(match c {
        '"' => '"',
        '\\' => '\\',
        '/' => '/',
        'b' => '\u{8}',
        'f' => '\u{c}',
        'n' => '\n',
        'r' => '\r',
        't' => '\t',
        _ => return None,
    })
}

/// Sets `value` at `slot` in `container`; nothing for a slot that does not fit.
fn put(container: &mut Value, slot: &Slot, value: Value) {
    match (container, slot) {
        (Value::Array(a), Slot::Element(i)) => {
            if let Some(e) = a.get_mut(*i) {
                *e = value;
            } else if *i == a.len() {
                a.push(value);
            }
        }
        (Value::Object(o), Slot::Member(k)) => {
            o.insert(k.clone(), value);
        }
        _ => {}
    }
}

fn get_mut<'a>(container: &'a mut Value, slot: &Slot) -> Option<&'a mut Value> {
    match (container, slot) {
        (Value::Array(a), Slot::Element(i)) => a.get_mut(*i),
        (Value::Object(o), Slot::Member(k)) => o.get_mut(k),
        _ => None,
    }
}

impl StreamingJsonParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads the next piece; returns the changes it made, in order. O(piece).
    pub fn append(&mut self, text: &str) -> Vec<Change> {
        self.changes.clear();
        if let Some(open) = self.string.as_mut() {
            open.change = None;
        }
        let mut rest = text;
        while !rest.is_empty() && !self.done {
            rest = if self.string.is_some() {
                self.read_string(rest)
            } else if !self.scalar.is_empty() {
                self.read_scalar(rest)
            } else {
                let mut chars = rest.chars();
                if let Some(c) = chars.next() {
                    self.structural(c);
                }
                chars.as_str()
            };
        }
        std::mem::take(&mut self.changes)
    }

    /// The value of the text read so far (`None` before a value starts), including an
    /// unterminated scalar that shows. O(open path + shown values): for the end of a stream
    /// and for tests; streaming writers apply the changes instead.
    pub fn value(&self) -> Option<Value> {
        let pending = self.pending_scalar();
        if self.stack.is_empty() {
            return match pending {
                Some((Slot::Root, v)) => Some(v),
                _ => self.root.clone(),
            };
        }
        let mut child: Option<(Option<Slot>, Value)> = None;
        for (depth, frame) in self.stack.iter().enumerate().rev() {
            let mut copy = frame.container.clone();
            if depth + 1 == self.stack.len() {
                if let Some((slot, v)) = &pending {
                    put(&mut copy, slot, v.clone());
                }
            }
            if let Some((Some(slot), v)) = child.take() {
                put(&mut copy, &slot, v);
            }
            child = Some((frame.slot.clone(), copy));
        }
        match child {
            Some((Some(Slot::Root), v)) => Some(v),
            _ => self.root.clone(),
        }
    }

    fn pending_scalar(&self) -> Option<(Slot, Value)> {
        let slot = self.scalar_slot.clone()?;
        if self.scalar.is_empty() || self.scalar.len() > MAX_PENDING_SCALAR_LENGTH {
            return None;
        }
        pending_scalar_value(&self.scalar).map(|v| (slot, v))
    }

    /// Reads string text up to the closing quote: runs without `"` or `\\` are found by a
    /// byte scan (both are ASCII, so never inside a multi-byte character) and appended whole.
    fn read_string<'t>(&mut self, text: &'t str) -> &'t str {
        let mut rest = text;
        loop {
            if self.string.as_ref().is_some_and(|o| !o.escape.is_empty()) {
                let Some(c) = rest.chars().next() else {
                    return "";
                };
                if self.continue_escape(c) {
                    rest = rest.get(c.len_utf8()..).unwrap_or("");
                    continue;
                }
                // Not part of the escape: `c` is read below as a normal character.
            }
            let Some(i) = rest.bytes().position(|b| b == b'"' || b == b'\\') else {
                if !rest.is_empty() {
                    self.push_text(rest);
                }
                return "";
            };
            if i > 0 {
                self.push_text(rest.get(..i).unwrap_or(""));
            }
            let after = rest.get(i + 1..).unwrap_or("");
            if rest.as_bytes().get(i) == Some(&b'"') {
                self.end_string();
                return after;
            }
            if let Some(o) = self.string.as_mut() {
                o.escape.push('\\');
            }
            rest = after;
        }
    }

    /// Continues an escape with `c`; `false` when `c` is not part of it.
    fn continue_escape(&mut self, c: char) -> bool {
        let Some(open) = self.string.as_mut() else {
            return false;
        };
        if open.escape == "\\" {
            if let Some(decoded) = simple_escape(c) {
                open.escape.clear();
                self.push_text(decoded.encode_utf8(&mut [0; 4]));
                return true;
            }
            if c == 'u' {
                open.escape.push('u');
                return true;
            }
            // An invalid escape keeps its backslash as text.
            open.escape.clear();
            self.push_text("\\");
            return false;
        }
        if c.is_ascii_hexdigit() {
            open.escape.push(c);
            if open.escape.len() < 6 {
                return true;
            }
            let code =
                u16::from_str_radix(open.escape.get(2..).unwrap_or(""), 16).unwrap_or(0xFFFD);
            open.escape.clear();
            // A surrogate escape is one UTF-16 unit, appended as JS appends it: a lone half
            // in crate::json's form, which joins the other half when it follows.
            let mut unit = String::new();
            match char::from_u32(u32::from(code)) {
                Some(c) => unit.push(c),
                None => push_lone(&mut unit, code),
            }
            self.push_text(&unit);
            return true;
        }
        // `\u` without four hex digits stays text.
        let literal = std::mem::take(&mut open.escape);
        self.push_text(&literal);
        false
    }

    fn push_text(&mut self, text: &str) {
        let Some(open) = self.string.as_mut() else {
            return;
        };
        push_str(&mut open.text, text);
        if open.target == Target::Key {
            return;
        }
        // Grow the placed string in place: O(text).
        let slot = open.slot.clone();
        let path = open.path.clone();
        let change = open.change;
        match (slot, self.stack.last_mut()) {
            (Some(Slot::Root), _) => {
                if let Some(Value::String(s)) = self.root.as_mut() {
                    push_str(s, text);
                }
            }
            (Some(slot), Some(frame)) => {
                if let Some(Value::String(s)) = get_mut(&mut frame.container, &slot) {
                    push_str(s, text);
                }
            }
            _ => {}
        }
        let Some(path) = path else { return };
        // Extend this string's newest change while nothing came after it.
        if let Some(i) = change.filter(|i| i + 1 == self.changes.len()) {
            match self.changes.get_mut(i) {
                Some(Change::Set {
                    value: Value::String(s),
                    ..
                }) => push_str(s, text),
                Some(Change::Append { text: t, .. }) => push_str(t, text),
                _ => {}
            }
            return;
        }
        self.changes.push(Change::Append {
            path,
            text: text.to_string(),
        });
        if let Some(o) = self.string.as_mut() {
            o.change = Some(self.changes.len() - 1);
        }
    }

    fn end_string(&mut self) {
        let Some(open) = self.string.take() else {
            return;
        };
        if open.target == Target::Key {
            if let Some(frame) = self.stack.last_mut() {
                frame.key = Some(open.text);
                frame.phase = Phase::Colon;
            }
            return;
        }
        self.value_ended();
    }

    fn read_scalar<'t>(&mut self, text: &'t str) -> &'t str {
        let end = text.find(is_delimiter).unwrap_or(text.len());
        self.scalar.push_str(text.get(..end).unwrap_or(""));
        if end < text.len() {
            self.end_scalar();
        }
        text.get(end..).unwrap_or("")
    }

    fn end_scalar(&mut self) {
        let token = std::mem::take(&mut self.scalar);
        let slot = self.scalar_slot.take();
        if let Some(value) = scalar_value(&token) {
            let path = self.reported_path(slot.as_ref());
            self.place(slot.as_ref(), value.clone());
            if let Some(path) = path {
                self.changes.push(Change::Set { path, value });
            }
        }
        self.value_ended();
    }

    fn structural(&mut self, c: char) {
        match c {
            ' ' | '\t' | '\n' | '\r' => {}
            '"' => self.start_string(),
            '{' => self.open_container(Value::Object(Map::new())),
            '[' => self.open_container(Value::Array(Vec::new())),
            '}' | ']' => self.close_container(),
            ':' => {
                if let Some(f) = self.stack.last_mut() {
                    if !f.is_array() && f.phase == Phase::Colon {
                        f.phase = Phase::Value;
                    }
                }
            }
            ',' => {
                if let Some(f) = self.stack.last_mut() {
                    f.phase = if f.is_array() {
                        Phase::Value
                    } else {
                        Phase::Key
                    };
                }
            }
            other => {
                self.scalar.push(other);
                self.scalar_slot = self.value_slot();
            }
        }
    }

    /// Where a value starting now goes, or `None` when this position takes no value.
    fn value_slot(&self) -> Option<Slot> {
        let Some(frame) = self.stack.last() else {
            return self.root.is_none().then_some(Slot::Root);
        };
        match &frame.container {
            Value::Array(a) => Some(Slot::Element(a.len())),
            // A missing colon is tolerated: `{"a" 1}` reads as `{"a": 1}`.
            _ => match (&frame.key, frame.phase) {
                (Some(k), Phase::Value | Phase::Colon) => Some(Slot::Member(k.clone())),
                _ => None,
            },
        }
    }

    /// The reported path of a value at `slot` in the innermost open container.
    fn reported_path(&self, slot: Option<&Slot>) -> Option<Vec<PathSeg>> {
        match slot? {
            Slot::Root => Some(Vec::new()),
            slot => {
                let frame = self.stack.last()?;
                if !frame.reports_inside {
                    return None;
                }
                let mut path = frame.path.clone()?;
                path.push(match slot {
                    Slot::Member(k) => PathSeg::Key(k.clone()),
                    Slot::Element(i) => PathSeg::Index(*i),
                    Slot::Root => return None,
                });
                Some(path)
            }
        }
    }

    fn place(&mut self, slot: Option<&Slot>, value: Value) {
        match slot {
            None => {}
            Some(Slot::Root) => self.root = Some(value),
            Some(slot) => {
                if let Some(frame) = self.stack.last_mut() {
                    put(&mut frame.container, slot, value);
                }
            }
        }
    }

    fn start_string(&mut self) {
        let key_position = self
            .stack
            .last()
            .is_some_and(|f| !f.is_array() && matches!(f.phase, Phase::Key | Phase::Comma));
        if key_position {
            self.string = Some(OpenString {
                target: Target::Key,
                slot: None,
                text: String::new(),
                escape: String::new(),
                path: None,
                change: None,
            });
            return;
        }
        let slot = self.value_slot();
        let path = self.reported_path(slot.as_ref());
        self.place(slot.as_ref(), Value::String(String::new()));
        let mut change = None;
        if let Some(p) = &path {
            self.changes.push(Change::Set {
                path: p.clone(),
                value: Value::String(String::new()),
            });
            change = Some(self.changes.len() - 1);
        }
        self.string = Some(OpenString {
            target: Target::Value,
            slot,
            text: String::new(),
            escape: String::new(),
            path,
            change,
        });
    }

    fn open_container(&mut self, container: Value) {
        if self.stack.len() >= MAX_DEPTH {
            // Deeper than any value may be: nothing more is read.
            self.done = true;
            return;
        }
        let slot = self.value_slot();
        let path = self.reported_path(slot.as_ref());
        if let Some(p) = &path {
            self.changes.push(Change::Set {
                path: p.clone(),
                value: if container.is_array() {
                    Value::Array(Vec::new())
                } else {
                    Value::Object(Map::new())
                },
            });
        }
        let phase = if container.is_array() {
            Phase::Value
        } else {
            Phase::Key
        };
        self.stack.push(Frame {
            reports_inside: path.as_ref().is_some_and(|p| p.len() < MAX_REPORTED_DEPTH),
            container,
            slot,
            path,
            key: None,
            phase,
        });
    }

    fn close_container(&mut self) {
        // A stray closer outside any container is ignored.
        let Some(frame) = self.stack.pop() else {
            return;
        };
        if let (Some(path), false) = (&frame.path, frame.reports_inside) {
            self.changes.push(Change::Set {
                path: path.clone(),
                value: frame.container.clone(),
            });
        }
        self.place(frame.slot.as_ref(), frame.container);
        self.value_ended();
    }

    /// A value in the innermost frame, or the root value, has ended.
    fn value_ended(&mut self) {
        match self.stack.last_mut() {
            Some(frame) => frame.phase = Phase::Comma,
            None => {
                // Text after the root value is ignored, once a root value exists.
                if self.root.is_some() {
                    self.done = true;
                }
            }
        }
    }
}

/// Applies one edit record to a value built from the earlier ones (a writer's own copy).
/// A record whose path does not fit the value is skipped.
pub fn apply_change(target: &mut Value, change: &Change) {
    let (path, last) = match change {
        Change::Set { path, .. } | Change::Append { path, .. } => match path.split_last() {
            Some((last, parents)) => (parents, Some(last)),
            None => (&[][..], None),
        },
    };
    let mut node = target;
    for seg in path {
        let next = match (node, seg) {
            (Value::Object(o), PathSeg::Key(k)) => o.get_mut(k),
            (Value::Array(a), PathSeg::Index(i)) => a.get_mut(*i),
            _ => None,
        };
        match next {
            Some(n) => node = n,
            None => return,
        }
    }
    match (change, last) {
        (Change::Set { value, .. }, None) => *node = value.clone(),
        (Change::Set { value, .. }, Some(PathSeg::Key(k))) => {
            if let Value::Object(o) = node {
                o.insert(k.clone(), value.clone());
            }
        }
        (Change::Set { value, .. }, Some(PathSeg::Index(i))) => {
            put(node, &Slot::Element(*i), value.clone())
        }
        (Change::Append { text, .. }, last) => {
            let target = match last {
                None => Some(node),
                Some(PathSeg::Key(k)) => node.get_mut(k.as_str()),
                Some(PathSeg::Index(i)) => node.get_mut(*i),
            };
            if let Some(Value::String(s)) = target {
                push_str(s, text);
            }
        }
    }
}
