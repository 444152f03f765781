//! Reading the values a profile points at straight from an answer's bytes,
//! without building the whole body as a `serde_json::Value` first: one
//! pass that keeps only what lies at the profile's pointers and skips the
//! rest without allocating.
//!
//! The values read are exactly what parsing the body into a `Value` and
//! then following each pointer (`Value::pointer`) gives, and the bodies
//! refused as not JSON are the ones `Value` refuses: the pass goes through
//! the same parser entry points as `Value`'s own deserialisation
//! (`deserialize_any` at every level, object keys through
//! `deserialize_str`, the same depth limit, the same check of what follows
//! the value), and a pointed-at value is built as `Value` builds it. Two
//! differences, both refusals of answers that cannot be trusted:
//!
//! - A key given twice on the way to a pointed-at value, or anywhere
//!   inside one (`{"data":{"status":"FAILED","status":"SUCCESS"}}`, two
//!   `data` objects), makes the answer contradictory: `Value` would keep
//!   the last one, a provider's own parser maybe the first. The body is
//!   refused with the pointer of the first such key
//!   ([`Unread::Duplicate`]); keys nothing points at or into may repeat.
//! - serde_json's private raw-value key is an ordinary key here (`Value`
//!   would read the string under it as JSON of its own).

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;

/// The pointers to read, as a tree of tokens. Slot `i` receives the value
/// at pointer `i`. Built once per profile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Fields {
    root: Node,
    slots: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Node {
    /// This node's own pointer (`/data`), to name a key given twice.
    path: String,
    /// Slots whose pointer ends here.
    here: Vec<usize>,
    /// Slots of pointers that go further, with their tokens below this
    /// node (for a value taken whole here: walked in it).
    below: Vec<(usize, Vec<String>)>,
    children: Vec<(String, Node)>,
}

/// Most pointers a [`Fields`] holds: each node's children are told apart
/// by one bit of a `u64` while an object is read.
const MAX_POINTERS: usize = 64;

impl Node {
    /// The child for `token` and its index among the children.
    fn child(&self, token: &str) -> Option<(usize, &Node)> {
        self.children
            .iter()
            .enumerate()
            .find(|(_, (t, _))| t == token)
            .map(|(i, (_, n))| (i, n))
    }

    fn add(&mut self, slot: usize, tokens: &[String]) {
        let Some((first, rest)) = tokens.split_first() else {
            self.here.push(slot);
            return;
        };
        self.below.push((slot, tokens.to_vec()));
        let at = match self.children.iter().position(|(t, _)| t == first) {
            Some(i) => i,
            None => {
                let child = Node {
                    path: format!("{}/{}", self.path, escape(first)),
                    ..Node::default()
                };
                self.children.push((first.clone(), child));
                self.children.len() - 1
            }
        };
        self.children[at].1.add(slot, rest);
    }
}

/// A token as a JSON pointer writes it (`~` is `~0`, `/` is `~1`).
fn escape(token: &str) -> Cow<'_, str> {
    if token.contains(['~', '/']) {
        Cow::Owned(token.replace('~', "~0").replace('/', "~1"))
    } else {
        Cow::Borrowed(token)
    }
}

/// A pointer's tokens as `Value::pointer` reads them (`~1` is `/`, `~0` is
/// `~`); `None` for a pointer that points nowhere (not starting with `/`).
fn tokens(pointer: &str) -> Option<Vec<String>> {
    if pointer.is_empty() {
        return Some(Vec::new());
    }
    let rest = pointer.strip_prefix('/')?;
    Some(
        rest.split('/')
            .map(|t| t.replace("~1", "/").replace("~0", "~"))
            .collect(),
    )
}

impl Fields {
    /// Slot `i` for `pointers[i]`; a `None` pointer fills no slot. At most
    /// [`MAX_POINTERS`] pointers (a profile has ten).
    pub fn new(pointers: &[Option<&str>]) -> Fields {
        assert!(pointers.len() <= MAX_POINTERS, "too many pointers");
        let mut root = Node::default();
        for (slot, p) in pointers.iter().enumerate() {
            if let Some(tokens) = p.and_then(tokens) {
                root.add(slot, &tokens);
            }
        }
        Fields {
            root,
            slots: pointers.len(),
        }
    }
}

/// Why a body gives no values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unread {
    /// Not JSON (as `serde_json::from_slice::<Value>` would say).
    NotJson,
    /// A key given twice on the way to a pointed-at value or inside one:
    /// the pointer of the first such key.
    Duplicate(String),
}

/// The value at each pointer of `fields`, or why there is none. A body
/// that is not JSON is `NotJson` even when a key repeats before the fault.
pub(crate) fn read(body: &[u8], fields: &Fields) -> Result<Vec<Option<Value>>, Unread> {
    // JSON that `Value` accepts is UTF-8 throughout (outside its strings
    // only ASCII is allowed, and each string is checked), so checking the
    // whole body once and reading it as text refuses the same bodies while
    // sparing the check of every string.
    let Ok(text) = std::str::from_utf8(body) else {
        return Err(Unread::NotJson);
    };
    let mut slots = vec![None; fields.slots];
    let mut twice = None;
    let mut de = serde_json::Deserializer::from_str(text);
    let walked = At {
        node: &fields.root,
        slots: &mut slots,
        twice: &mut twice,
    }
    .deserialize(&mut de)
    .and_then(|()| de.end());
    match (walked, twice) {
        (Err(_), _) => Err(Unread::NotJson),
        (Ok(()), Some(key)) => Err(Unread::Duplicate(key)),
        (Ok(()), None) => Ok(slots),
    }
}

/// Fills the slots of `node` and below from `v`, the value at `node`
/// (moved into the last slot that wants it whole, copied into the others).
fn take_whole(v: Value, node: &Node, slots: &mut [Option<Value>]) {
    for (slot, tokens) in &node.below {
        slots[*slot] = walk(&v, tokens).cloned();
    }
    if let Some((&last, others)) = node.here.split_last() {
        for &slot in others {
            slots[slot] = Some(v.clone());
        }
        slots[last] = Some(v);
    }
}

/// `Value::pointer` by tokens.
fn walk<'v>(v: &'v Value, tokens: &[String]) -> Option<&'v Value> {
    tokens.iter().try_fold(v, |target, token| match target {
        Value::Object(map) => map.get(token.as_str()),
        Value::Array(list) => index(token).and_then(|i| list.get(i)),
        _ => None,
    })
}

/// An array index as JSON pointers write it: digits, no sign, no leading
/// zero.
pub(super) fn index(token: &str) -> Option<usize> {
    if token.starts_with('+') || (token.starts_with('0') && token.len() != 1) {
        return None;
    }
    token.parse().ok()
}

/// Notes `key` as given twice, unless an earlier one was.
fn note_twice(twice: &mut Option<String>, key: impl FnOnce() -> String) {
    if twice.is_none() {
        *twice = Some(key());
    }
}

/// Reads the value at `node` into its slots.
struct At<'n, 's> {
    node: &'n Node,
    slots: &'s mut [Option<Value>],
    twice: &'s mut Option<String>,
}

impl<'de> DeserializeSeed<'de> for At<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        if !self.node.here.is_empty() {
            // Pointed at: the value whole, and what lies below in it.
            let v = Whole {
                at: Trail::Node(&self.node.path),
                twice: self.twice,
            }
            .deserialize(d)?;
            take_whole(v, self.node, self.slots);
            return Ok(());
        }
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for At<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0usize;
        loop {
            let more = match self.node.child(&i.to_string()) {
                Some((_, node)) => seq
                    .next_element_seed(At {
                        node,
                        slots: &mut *self.slots,
                        twice: &mut *self.twice,
                    })?
                    .is_some(),
                None => seq.next_element::<Skip>()?.is_some(),
            };
            if !more {
                return Ok(());
            }
            i += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        // The children met so far, one bit each.
        let mut met = 0u64;
        while let Some(Key(key)) = map.next_key()? {
            match self.node.child(&key) {
                Some((i, node)) => {
                    if met & (1 << i) != 0 {
                        note_twice(self.twice, || node.path.clone());
                    }
                    met |= 1 << i;
                    map.next_value_seed(At {
                        node,
                        slots: &mut *self.slots,
                        twice: &mut *self.twice,
                    })?;
                }
                None => {
                    map.next_value::<Skip>()?;
                }
            }
        }
        Ok(())
    }
}

/// Where a value taken whole is, to name a key given twice inside it.
#[derive(Clone, Copy)]
enum Trail<'a> {
    /// A pointed-at node's own pointer.
    Node(&'a str),
    Key(&'a Trail<'a>, &'a str),
    Index(&'a Trail<'a>, usize),
}

impl Trail<'_> {
    fn pointer(&self) -> String {
        match self {
            Trail::Node(path) => path.to_string(),
            Trail::Key(up, key) => format!("{}/{}", up.pointer(), escape(key)),
            Trail::Index(up, i) => format!("{}/{i}", up.pointer()),
        }
    }
}

/// A pointed-at value, built as `Value` builds it, noting a key given
/// twice at any depth inside it.
struct Whole<'a, 's> {
    at: Trail<'a>,
    twice: &'s mut Option<String>,
}

impl<'de> DeserializeSeed<'de> for Whole<'_, '_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Whole<'_, '_> {
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
        Ok(Value::String(s.to_owned()))
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

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut list = Vec::new();
        loop {
            let at = Trail::Index(&self.at, list.len());
            match seq.next_element_seed(Whole {
                at,
                twice: &mut *self.twice,
            })? {
                Some(v) => list.push(v),
                None => return Ok(Value::Array(list)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(Key(key)) = map.next_key()? {
            let v = map.next_value_seed(Whole {
                at: Trail::Key(&self.at, &key),
                twice: &mut *self.twice,
            })?;
            if object.insert(key.clone().into_owned(), v).is_some() {
                note_twice(self.twice, || Trail::Key(&self.at, &key).pointer());
            }
        }
        Ok(Value::Object(object))
    }
}

/// An object key, borrowed from the body unless it held an escape.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_owned())))
            }
        }
        d.deserialize_str(V)
    }
}

/// Any JSON value, checked as `Value` checks it and then dropped.
struct Skip;

impl<'de> Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Skip)
    }
}

impl<'de> Visitor<'de> for Skip {
    type Value = Skip;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_str<E>(self, _: &str) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_unit<E>(self) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_none<E>(self) -> Result<Skip, E> {
        Ok(Skip)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Skip, A::Error> {
        while seq.next_element::<Skip>()?.is_some() {}
        Ok(Skip)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Skip, A::Error> {
        while map.next_key::<Key>()?.is_some() {
            map.next_value::<Skip>()?;
        }
        Ok(Skip)
    }
}

#[cfg(test)]
mod tests;
