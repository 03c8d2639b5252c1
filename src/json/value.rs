//! The JSON value of the core ([`Value`]), as JS holds one: a number is a double, an
//! object keeps its keys in insertion order (a key set twice keeps its first place).
//!
//! Written here rather than taken from serde_json for size, measured in the `.wasm`:
//! serde_json's `Value` with `preserve_order` is an `IndexMap` over hashbrown with SipHash,
//! and its writer comes through serde's `Serialize`; [`Map`] is a `Vec` of entries with a
//! small hash index once it is large enough to need one, so a lookup stays O(1) on a hostile
//! object of many keys.
//!
//! A value may also be the host's own ([`Host`]): a JS object the core passes along (a tool
//! result's `content`) stays that object, read as JSON only when the core looks into it.

use std::any::Any;
use std::cell::OnceCell;
use std::fmt;
use std::rc::Rc;

/// A JSON value.
#[derive(Clone, Default)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Value>),
    Object(Map),
    /// A value the host owns, passed along unread (see [`Host`]). Never null.
    Host(Host),
}

/// The host's side of a [`Host`] value.
pub trait HostValue {
    /// The value as JSON, as `JSON.stringify` reads it: `Ok(None)` for what JSON leaves out
    /// (a function, a symbol); `Err` says why it cannot be read (a BigInt, a cycle, a getter
    /// that throws).
    fn read(&self) -> Result<Option<Value>, String>;
    /// The host's value itself (the binding's `JsValue`), to give back unchanged.
    fn as_any(&self) -> &dyn Any;
}

/// A value that stays the host's own (one owner per value, CONVENTIONS.md): the core holds
/// a handle and gives the host back the very value it gave. The accessors of [`Value`] and
/// [`Map::get`] read it as JSON the first time they look into it, once ([`HostValue::read`]);
/// what only passes it along ([`Map::get_raw`], clones, the binding's conversion) never does.
#[derive(Clone)]
pub struct Host(Rc<HostCell>);

struct HostCell {
    node: Box<dyn HostValue>,
    read: OnceCell<Result<Option<Value>, String>>,
}

impl Host {
    pub fn new(node: impl HostValue + 'static) -> Host {
        Host(Rc::new(HostCell {
            node: Box::new(node),
            read: OnceCell::new(),
        }))
    }

    fn read(&self) -> &Result<Option<Value>, String> {
        self.0.read.get_or_init(|| self.0.node.read())
    }

    /// The value as JSON (read now when it was not yet); `None` when JSON leaves it out or it
    /// cannot be read ([`Host::error`] says why).
    pub fn value(&self) -> Option<&Value> {
        self.read().as_ref().ok().and_then(Option::as_ref)
    }

    /// Why the value cannot be read as JSON, if it cannot.
    pub fn error(&self) -> Option<&str> {
        self.read().as_ref().err().map(String::as_str)
    }

    /// The host's value itself.
    pub fn node(&self) -> &dyn Any {
        self.0.node.as_any()
    }

    /// The same host value (one handle cloned).
    pub fn same(&self, other: &Host) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

/// A JSON number: a finite double (JSON has no NaN or infinity; [`Value::from`] makes them
/// `null`, as `JSON.stringify` writes them).
#[derive(Clone, Copy, PartialEq)]
pub struct Number(f64);

impl Number {
    /// `f` when it is finite.
    pub fn from_f64(f: f64) -> Option<Number> {
        f.is_finite().then_some(Number(f))
    }

    pub fn as_f64(&self) -> Option<f64> {
        Some(self.0)
    }

    /// The number as a `u64` when it is a whole number in range.
    pub fn as_u64(&self) -> Option<u64> {
        let f = self.0;
        (f >= 0.0 && f.fract() == 0.0 && f < 18_446_744_073_709_551_616.0).then_some(f as u64)
    }

    /// The double.
    pub fn get(self) -> f64 {
        self.0
    }
}

impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::jsnum::to_js_string(self.0))
    }
}

/// What [`Value::get`] looks up: a key of an object or an index of an array.
pub trait Index {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value>;
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value>;
}

impl Index for str {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        v.as_object()?.get(self)
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        v.as_object_mut()?.get_mut(self)
    }
}

impl Index for String {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        self.as_str().index_into(v)
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        self.as_str().index_into_mut(v)
    }
}

impl Index for usize {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        v.as_array()?.get(*self)?.resolved()
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        v.as_array_mut()?.get_mut(*self)
    }
}

impl<T: Index + ?Sized> Index for &T {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        (**self).index_into(v)
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        (**self).index_into_mut(v)
    }
}

impl Value {
    /// The value itself, or for a [`Host`] value its JSON reading (`None` when it has none).
    pub fn resolved(&self) -> Option<&Value> {
        match self {
            Value::Host(h) => h.value(),
            v => Some(v),
        }
    }

    /// Whether the value holds a [`Host`] value anywhere (a walk of its containers).
    pub fn has_host(&self) -> bool {
        self.find_host(&|_| true).is_some()
    }

    /// The first [`Host`] value within that cannot be read as JSON, and why.
    pub fn host_error(&self) -> Option<&str> {
        self.find_host(&|h| h.error().is_some())?.error()
    }

    /// The first [`Host`] value within for which `wanted` holds.
    fn find_host(&self, wanted: &dyn Fn(&Host) -> bool) -> Option<&Host> {
        match self {
            Value::Host(h) => wanted(h).then_some(h),
            Value::Array(a) => a.iter().find_map(|v| v.find_host(wanted)),
            Value::Object(o) => o.values().find_map(|v| v.find_host(wanted)),
            _ => None,
        }
    }

    /// The member `i` of an object or the item `i` of an array.
    pub fn get<I: Index>(&self, i: I) -> Option<&Value> {
        i.index_into(self)
    }

    /// The member `key` of an object as it is held ([`Map::get_raw`]): a host value unread.
    pub fn get_raw(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(o) => o.get_raw(key),
            _ => None,
        }
    }

    pub fn get_mut<I: Index>(&mut self, i: I) -> Option<&mut Value> {
        i.index_into_mut(self)
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
    pub fn is_boolean(&self) -> bool {
        matches!(self.resolved(), Some(Value::Bool(_)))
    }
    pub fn is_number(&self) -> bool {
        matches!(self.resolved(), Some(Value::Number(_)))
    }
    pub fn is_string(&self) -> bool {
        matches!(self.resolved(), Some(Value::String(_)))
    }
    pub fn is_array(&self) -> bool {
        matches!(self.resolved(), Some(Value::Array(_)))
    }
    pub fn is_object(&self) -> bool {
        matches!(self.resolved(), Some(Value::Object(_)))
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self.resolved()? {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }
    pub fn as_f64(&self) -> Option<f64> {
        match self.resolved()? {
            Value::Number(n) => Some(n.0),
            _ => None,
        }
    }
    pub fn as_u64(&self) -> Option<u64> {
        match self.resolved()? {
            Value::Number(n) => n.as_u64(),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self.resolved()? {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self.resolved()? {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
    pub fn as_object(&self) -> Option<&Map> {
        match self.resolved()? {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }
    pub fn as_object_mut(&mut self) -> Option<&mut Map> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The value, leaving `null` in its place.
    pub fn take(&mut self) -> Value {
        std::mem::take(self)
    }
}

/// `value[i]` as serde_json reads it: `null` for a missing key or item (never a panic).
impl<I: Index> std::ops::Index<I> for Value {
    type Output = Value;
    fn index(&self, i: I) -> &Value {
        const NULL: &Value = &Value::Null;
        i.index_into(self).unwrap_or(NULL)
    }
}

/// `value[key] = …` and `value[i] = …` (the tests' shorthand; the core does not use them).
/// Never a panic: a key of `null` makes it an object and a missing key is added as `null`;
/// the index just past an array's end adds a `null` item. Anything else (a key of a string,
/// an index far past the end) gives a fresh `null` that nothing holds.
impl std::ops::IndexMut<&str> for Value {
    fn index_mut(&mut self, key: &str) -> &mut Value {
        if self.is_null() {
            *self = Value::Object(Map::new());
        }
        if let Value::Object(o) = self {
            if !o.contains_key(key) {
                o.insert(key.to_owned(), Value::Null);
            }
        }
        self.get_mut(key)
            .unwrap_or_else(|| Box::leak(Box::default()))
    }
}

impl std::ops::IndexMut<usize> for Value {
    fn index_mut(&mut self, i: usize) -> &mut Value {
        if let Value::Array(a) = self {
            if i == a.len() {
                a.push(Value::Null);
            }
        }
        self.get_mut(i).unwrap_or_else(|| Box::leak(Box::default()))
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("Null"),
            Value::Bool(b) => f.debug_tuple("Bool").field(b).finish(),
            Value::Number(n) => f.debug_tuple("Number").field(n).finish(),
            Value::String(s) => f.debug_tuple("String").field(s).finish(),
            Value::Array(a) => f.debug_tuple("Array").field(a).finish(),
            Value::Object(o) => f.debug_tuple("Object").field(o).finish(),
            Value::Host(h) => f.debug_tuple("Host").field(&h.value()).finish(),
        }
    }
}

/// Equal as JSON; a [`Host`] value compares by its JSON reading (the same handle is equal
/// without reading it).
impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Host(a), Value::Host(b)) if a.same(b) => true,
            (Value::Host(h), v) | (v, Value::Host(h)) => h.value().is_some_and(|r| r == v),
            (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Number(a), Value::Number(b)) => a == b,
            (Value::String(a), Value::String(b)) => a == b,
            (Value::Array(a), Value::Array(b)) => a == b,
            (Value::Object(a), Value::Object(b)) => a == b,
            _ => false,
        }
    }
}

/// `JSON.stringify(value)`.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&super::stringify(self))
    }
}

impl PartialEq<str> for Value {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == Some(other)
    }
}
impl PartialEq<&str> for Value {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == Some(*other)
    }
}
impl PartialEq<bool> for Value {
    fn eq(&self, other: &bool) -> bool {
        self.as_bool() == Some(*other)
    }
}
impl PartialEq<String> for Value {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == Some(other.as_str())
    }
}
/// A number equal to `other` (as doubles, as JS compares them).
macro_rules! eq_number {
    ($($t:ty),*) => {$(
        impl PartialEq<$t> for Value {
            fn eq(&self, other: &$t) -> bool {
                self.as_f64() == Some(*other as f64)
            }
        }
    )*};
}
eq_number!(f64, i32, i64, u32, u64, usize);

impl From<f64> for Value {
    /// `null` when `f` is not finite.
    fn from(f: f64) -> Value {
        Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}
/// Whole numbers (as doubles, as JS has them).
macro_rules! from_integer {
    ($($t:ty),*) => {$(
        impl From<$t> for Value {
            fn from(n: $t) -> Value {
                Value::Number(Number(n as f64))
            }
        }
    )*};
}
from_integer!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}
impl From<Number> for Value {
    fn from(n: Number) -> Value {
        Value::Number(n)
    }
}
impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_owned())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}
impl From<&String> for Value {
    fn from(s: &String) -> Value {
        Value::String(s.clone())
    }
}
impl From<std::borrow::Cow<'_, str>> for Value {
    fn from(s: std::borrow::Cow<'_, str>) -> Value {
        Value::String(s.into_owned())
    }
}
impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(items: Vec<T>) -> Value {
        Value::Array(items.into_iter().map(Into::into).collect())
    }
}
impl From<Map> for Value {
    fn from(o: Map) -> Value {
        Value::Object(o)
    }
}
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(o: Option<T>) -> Value {
        o.map_or(Value::Null, Into::into)
    }
}
impl<T: Into<Value>> FromIterator<T> for Value {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Value {
        Value::Array(items.into_iter().map(Into::into).collect())
    }
}

/// Fewer entries than this are found by a scan; from this many on, through the index.
const INDEXED_FROM: usize = 12;
/// An empty slot of the index.
const EMPTY: u32 = u32::MAX;

/// A JSON object: its members in insertion order.
#[derive(Clone, Default)]
pub struct Map {
    entries: Vec<(String, Value)>,
    /// Open addressing over `entries` (each slot an entry's position, or [`EMPTY`]): empty
    /// below [`INDEXED_FROM`] entries, else a power of two at least twice their number.
    slots: Vec<u32>,
}

/// A key's hash (FxHash's multiply-rotate over the bytes, eight at a time, then mixed).
fn hash(key: &str) -> usize {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h = 0u64;
    let mut chunks = key.as_bytes().chunks_exact(8);
    for c in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(c);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(K);
    }
    for &b in chunks.remainder() {
        h = (h.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
    }
    // A finishing mix (murmur3's), so that the low bits the index uses depend on every byte.
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    (h ^ (h >> 33)) as usize
}

impl Map {
    pub const fn new() -> Map {
        Map {
            entries: Vec::new(),
            slots: Vec::new(),
        }
    }

    pub fn with_capacity(n: usize) -> Map {
        Map {
            entries: Vec::with_capacity(n),
            slots: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn clear(&mut self) {
        self.entries.clear();
        self.slots.clear();
    }

    /// Where `key` is among the entries.
    fn position(&self, key: &str) -> Option<usize> {
        if self.slots.is_empty() {
            return self.entries.iter().position(|(k, _)| k == key);
        }
        let mask = self.slots.len() - 1;
        let mut at = hash(key) & mask;
        loop {
            let slot = *self.slots.get(at)?;
            if slot == EMPTY {
                return None;
            }
            let i = slot as usize;
            #[cfg(test)]
            tests::PROBES.with(|p| p.set(p.get() + 1));
            if self.entries.get(i).is_some_and(|(k, _)| k == key) {
                return Some(i);
            }
            at = (at + 1) & mask;
        }
    }

    /// Rebuilds the index for the entries as they are now.
    fn reindex(&mut self) {
        self.slots.clear();
        if self.entries.len() < INDEXED_FROM {
            return;
        }
        let size = (self.entries.len() * 2).next_power_of_two();
        self.slots.resize(size, EMPTY);
        for (i, (k, _)) in self.entries.iter().enumerate() {
            place(&mut self.slots, hash(k), i);
        }
    }

    /// The member `key`; a [`Host`] member as its JSON reading (read now when it was not
    /// yet), absent when it has none.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.get_raw(key)?.resolved()
    }

    /// The member `key` as it is held: a [`Host`] member unread, for passing it along.
    pub fn get_raw(&self, key: &str) -> Option<&Value> {
        let i = self.position(key)?;
        self.entries.get(i).map(|(_, v)| v)
    }

    /// The value of the member at `i` (insertion order).
    pub fn value_at_mut(&mut self, i: usize) -> Option<&mut Value> {
        self.entries.get_mut(i).map(|(_, v)| v)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        let i = self.position(key)?;
        self.entries.get_mut(i).map(|(_, v)| v)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_some()
    }

    /// Sets `key` to `value`: in its place when it is there (the old value returned), else
    /// as the last member.
    pub fn insert(&mut self, key: String, value: Value) -> Option<Value> {
        if let Some(i) = self.position(&key) {
            return self
                .entries
                .get_mut(i)
                .map(|(_, v)| std::mem::replace(v, value));
        }
        let h = (!self.slots.is_empty()).then(|| hash(&key));
        self.entries.push((key, value));
        let n = self.entries.len();
        match h {
            Some(h) if n * 2 <= self.slots.len() => place(&mut self.slots, h, n - 1),
            _ if n >= INDEXED_FROM => self.reindex(),
            _ => {}
        }
        None
    }

    /// The value of `key`, set to `make()` first when `key` is not there.
    pub fn get_or_insert_with(
        &mut self,
        key: &str,
        make: impl FnOnce() -> Value,
    ) -> Option<&mut Value> {
        if !self.contains_key(key) {
            self.insert(key.to_owned(), make());
        }
        self.get_mut(key)
    }

    /// Removes `key`, the members after it moving up (`delete o[key]` in JS).
    pub fn shift_remove(&mut self, key: &str) -> Option<Value> {
        let i = self.position(key)?;
        let (_, v) = self.entries.remove(i);
        self.reindex();
        Some(v)
    }

    /// Keeps the members for which `keep` holds, in their order.
    pub fn retain(&mut self, mut keep: impl FnMut(&String, &mut Value) -> bool) {
        self.entries.retain_mut(|(k, v)| keep(k, v));
        self.reindex();
    }

    pub fn iter(&self) -> Iter<'_> {
        self.into_iter()
    }

    pub fn iter_mut(&mut self) -> IterMut<'_> {
        self.into_iter()
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &String> + ExactSizeIterator {
        self.entries.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Value> + ExactSizeIterator {
        self.entries.iter().map(|(_, v)| v)
    }
}

/// Puts entry `i` of hash `h` in the first free slot from its own.
fn place(slots: &mut [u32], h: usize, i: usize) {
    let mask = slots.len().wrapping_sub(1);
    let mut at = h & mask;
    while let Some(slot) = slots.get_mut(at) {
        if *slot == EMPTY {
            *slot = i as u32;
            return;
        }
        at = (at + 1) & mask;
    }
}

/// Equal when both have the same keys with equal values, in any order (as JSON Schema and
/// serde_json compare objects).
impl PartialEq for Map {
    fn eq(&self, other: &Map) -> bool {
        self.len() == other.len() && self.iter().all(|(k, v)| other.get_raw(k) == Some(v))
    }
}

impl fmt::Debug for Map {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

pub type Iter<'a> = std::iter::Map<
    std::slice::Iter<'a, (String, Value)>,
    fn(&'a (String, Value)) -> (&'a String, &'a Value),
>;
pub type IterMut<'a> = std::iter::Map<
    std::slice::IterMut<'a, (String, Value)>,
    fn(&'a mut (String, Value)) -> (&'a String, &'a mut Value),
>;

impl<'a> IntoIterator for &'a Map {
    type Item = (&'a String, &'a Value);
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.entries.iter().map(|(k, v)| (k, v))
    }
}

impl<'a> IntoIterator for &'a mut Map {
    type Item = (&'a String, &'a mut Value);
    type IntoIter = IterMut<'a>;
    fn into_iter(self) -> IterMut<'a> {
        self.entries.iter_mut().map(|(k, v)| (&*k, v))
    }
}

impl IntoIterator for Map {
    type Item = (String, Value);
    type IntoIter = std::vec::IntoIter<(String, Value)>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl FromIterator<(String, Value)> for Map {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(items: I) -> Map {
        let mut map = Map::new();
        map.extend(items);
        map
    }
}

impl Extend<(String, Value)> for Map {
    fn extend<I: IntoIterator<Item = (String, Value)>>(&mut self, items: I) {
        for (k, v) in items {
            self.insert(k, v);
        }
    }
}

/// serde for the native build only (the tests and fuzz targets read pi's fixtures into typed
/// forms through serde_json); nothing of it is in the `.wasm`.
#[cfg(not(target_arch = "wasm32"))]
mod serde_impls {
    use super::{Map, Number, Value};
    use serde::de::{MapAccess, SeqAccess, Visitor};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::fmt;

    impl Serialize for Number {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            // A whole number as an integer (serde_json would print `1.0`); `-0` as a float.
            let f = self.0;
            let whole = f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0;
            if whole && !(f == 0.0 && f.is_sign_negative()) {
                s.serialize_i64(f as i64)
            } else {
                s.serialize_f64(f)
            }
        }
    }

    impl Serialize for Value {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            match self {
                Value::Null => s.serialize_unit(),
                Value::Bool(b) => s.serialize_bool(*b),
                Value::Number(n) => n.serialize(s),
                Value::String(t) => s.serialize_str(t),
                Value::Array(a) => s.collect_seq(a),
                Value::Object(o) => o.serialize(s),
                Value::Host(h) => match h.value() {
                    Some(v) => v.serialize(s),
                    None => s.serialize_unit(),
                },
            }
        }
    }

    impl Serialize for Map {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_map(self.iter())
        }
    }

    struct ValueVisitor;

    impl<'de> Visitor<'de> for ValueVisitor {
        type Value = Value;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
            Ok(Value::Bool(b))
        }
        fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
            Ok(Value::from(n))
        }
        fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
            Ok(Value::from(n))
        }
        fn visit_f64<E>(self, n: f64) -> Result<Value, E> {
            Ok(Value::from(n))
        }
        fn visit_str<E>(self, s: &str) -> Result<Value, E> {
            Ok(Value::from(s))
        }
        fn visit_string<E>(self, s: String) -> Result<Value, E> {
            Ok(Value::String(s))
        }
        fn visit_unit<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_none<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
            Value::deserialize(d)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
            let mut items = Vec::new();
            while let Some(v) = seq.next_element()? {
                items.push(v);
            }
            Ok(Value::Array(items))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
            let mut map = Map::new();
            while let Some((k, v)) = access.next_entry::<String, Value>()? {
                map.insert(k, v);
            }
            Ok(Value::Object(map))
        }
    }

    impl<'de> Deserialize<'de> for Value {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
            d.deserialize_any(ValueVisitor)
        }
    }

    impl<'de> Deserialize<'de> for Map {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Map, D::Error> {
            match Value::deserialize(d)? {
                Value::Object(o) => Ok(o),
                _ => Err(serde::de::Error::custom("expected a JSON object")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A host value that counts its reads.
    struct Counted(Rc<Cell<u32>>, Result<Option<Value>, String>);

    impl HostValue for Counted {
        fn read(&self) -> Result<Option<Value>, String> {
            self.0.set(self.0.get() + 1);
            self.1.clone()
        }
        fn as_any(&self) -> &dyn Any {
            self
        }
    }

    fn host(reads: &Rc<Cell<u32>>, read: Result<Option<Value>, String>) -> Value {
        Value::Host(Host::new(Counted(reads.clone(), read)))
    }

    /// One owner per value (issue 32): a host value passes along unread, and is read once,
    /// when the core first looks into it.
    #[test]
    fn a_host_value_is_read_once_and_only_when_looked_into() {
        let reads = Rc::new(Cell::new(0));
        let content = host(&reads, Ok(Some(Value::from(vec!["a", "b"]))));
        let mut o = Map::new();
        o.insert("role".into(), "toolResult".into());
        o.insert("content".into(), content.clone());
        let message = Value::Object(o);
        // Passing along: a raw get, a clone, a skeleton for the binding.
        let raw = message.get_raw("content").cloned();
        assert!(
            matches!(&raw, Some(Value::Host(h)) if matches!(&content, Value::Host(c) if c.same(h)))
        );
        let copy = message.clone();
        let skeleton = crate::json::json_skeleton_for_js(&copy);
        assert_eq!(skeleton, r#"{"role":"toolResult","content":null}"#);
        assert!(message.has_host());
        let fresh = host(&reads, Ok(Some(Value::from(vec!["a", "b"]))));
        let mut o = Map::new();
        o.insert("content".into(), fresh);
        let message = Value::Object(o);
        assert_eq!(
            crate::json::json_skeleton_for_js(&message),
            r#"{"content":null}"#
        );
        assert_eq!(reads.get(), 0, "nothing read while passing along");
        // Looking into it reads it, once.
        assert_eq!(
            message
                .get("content")
                .and_then(Value::as_array)
                .map(Vec::len),
            Some(2)
        );
        assert_eq!(message["content"][1], "b");
        assert_eq!(crate::json::stringify(&message), r#"{"content":["a","b"]}"#);
        assert_eq!(reads.get(), 1);
    }

    /// A host value JSON leaves out, or one that cannot be read: absent to the core's reads,
    /// left out of a written object (as JSON.stringify leaves out `undefined`), and named by
    /// `host_error`, which a request builder checks first.
    #[test]
    fn a_host_value_without_json_is_absent_and_its_error_named() {
        let reads = Rc::new(Cell::new(0));
        let mut o = Map::new();
        o.insert("f".into(), host(&reads, Ok(None)));
        o.insert("big".into(), host(&reads, Err("a BigInt".into())));
        o.insert("n".into(), 1.into());
        let v = Value::Object(o);
        assert!(v.get("f").is_none() && v.get("big").is_none());
        assert!(v.get_raw("f").is_some_and(|f| !f.is_null()));
        assert_eq!(crate::json::stringify(&v), r#"{"n":1}"#);
        assert_eq!(
            crate::json::stringify(&Value::Array(vec![host(&reads, Ok(None))])),
            "[null]"
        );
        assert_eq!(v.host_error(), Some("a BigInt"));
        assert_eq!(v, v.clone());
        assert_ne!(v, crate::value!({"n": 1}));
    }

    /// The map against a plain list of pairs, over random inserts (keys given again),
    /// removals, retains and lookups, small and past the index's threshold.
    #[test]
    fn map_agrees_with_a_list_of_pairs() -> Result<(), String> {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for round in 0..200 {
            let keys = 1 + next(if round % 2 == 0 { 20 } else { 400 });
            let mut map = Map::new();
            let mut list: Vec<(String, Value)> = Vec::new();
            for step in 0..600 {
                let k = format!("k{}", next(keys));
                match next(10) {
                    0 => {
                        let removed = map.shift_remove(&k);
                        let at = list.iter().position(|(lk, _)| *lk == k);
                        let expected = at.map(|i| list.remove(i).1);
                        if removed != expected {
                            return Err(format!("round {round} step {step}: shift_remove {k}"));
                        }
                    }
                    1 if step % 50 == 0 => {
                        let m = next(3) + 2;
                        let keep = |v: &Value| v.as_u64().is_some_and(|n| n % m != 0);
                        map.retain(|_, v| keep(v));
                        list.retain(|(_, v)| keep(v));
                    }
                    _ => {
                        let v = Value::from(step);
                        let old = map.insert(k.clone(), v.clone());
                        let expected = match list.iter_mut().find(|(lk, _)| *lk == k) {
                            Some((_, lv)) => Some(std::mem::replace(lv, v)),
                            None => {
                                list.push((k, v));
                                None
                            }
                        };
                        if old != expected {
                            return Err(format!("round {round} step {step}: insert"));
                        }
                    }
                }
                let probe = format!("k{}", next(keys + 3));
                let expected = list.iter().find(|(lk, _)| *lk == probe).map(|(_, v)| v);
                if map.get(&probe) != expected || map.contains_key(&probe) != expected.is_some() {
                    return Err(format!("round {round} step {step}: get {probe}"));
                }
            }
            let pairs: Vec<(&String, &Value)> = map.iter().collect();
            let expected: Vec<(&String, &Value)> = list.iter().map(|(k, v)| (k, v)).collect();
            if pairs != expected {
                return Err(format!("round {round}: order"));
            }
        }
        Ok(())
    }

    thread_local! {
        /// Keys compared through the index (counted in test builds only).
        pub static PROBES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// A hostile object of many keys is read and looked up in linear work (an index, not a
    /// scan per key): 200,000 keys sharing a long prefix, each looked up, with a few key
    /// comparisons per key.
    #[test]
    fn many_keys_stay_linear() -> Result<(), crate::json::Error> {
        let n = 200_000;
        let mut text = String::from("{");
        for i in 0..n {
            if i > 0 {
                text.push(',');
            }
            text.push_str(&format!("\"same-long-prefix-of-a-key-{i}\":{i}"));
        }
        text.push_str(",\"same-long-prefix-of-a-key-7\":\"again\"}");
        PROBES.with(|p| p.set(0));
        let v = crate::json::parse(&text)?;
        let o = v.as_object().ok_or(crate::json::Error::TooDeep)?;
        assert_eq!(o.len(), n);
        for i in 0..n {
            assert!(o.contains_key(&format!("same-long-prefix-of-a-key-{i}")));
        }
        // The key given twice kept its first place and took the last value.
        assert_eq!(
            o.iter().nth(7).map(|(_, v)| v.clone()),
            Some(Value::from("again"))
        );
        let probes = PROBES.with(std::cell::Cell::get);
        assert!(probes < 4 * 2 * n, "{probes} key comparisons for {n} keys");
        Ok(())
    }
}
