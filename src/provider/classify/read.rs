//! Reading the values a profile points at straight from an answer's bytes,
//! without building the whole body as a `serde_json::Value` first: one
//! pass that keeps only what lies at the profile's pointers and skips the
//! rest without allocating.
//!
//! The result is exactly what parsing the body into a `Value` and then
//! following each pointer (`Value::pointer`) gives, including which bodies
//! are JSON at all: the pass goes through the same parser entry points as
//! `Value`'s own deserialisation (`deserialize_any` at every level, object
//! keys through `deserialize_str`, the same depth limit, the same check of
//! what follows the value), so every number, string, escape and nesting
//! that `Value` refuses is refused here too; a key that appears twice
//! counts with its last value, as in a `Value`; and a pointed-at value is
//! itself built as a `Value`. The one construct `Value` treats specially
//! (an object whose first key is serde_json's private raw-value marker)
//! sends the body to the `Value` path ([`values_of`]), which is also what
//! the tests compare this pass with.

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;

/// The first key by which `Value` recognises a raw value.
const RAW_VALUE_KEY: &str = "$serde_json::private::RawValue";

/// The pointers to read, as a tree of tokens. Slot `i` receives the value
/// at pointer `i`. Built once per profile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Fields {
    root: Node,
    slots: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Node {
    /// Slots whose pointer ends here.
    here: Vec<usize>,
    /// Slots of pointers that go further, with their tokens below this
    /// node (for a value taken whole here: walked in it).
    below: Vec<(usize, Vec<String>)>,
    children: Vec<(String, Node)>,
}

impl Node {
    fn child(&self, token: &str) -> Option<&Node> {
        self.children
            .iter()
            .find(|(t, _)| t == token)
            .map(|(_, n)| n)
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
                self.children.push((first.clone(), Node::default()));
                self.children.len() - 1
            }
        };
        self.children[at].1.add(slot, rest);
    }

    /// Every slot at or below this node.
    fn clear(&self, slots: &mut [Option<Value>]) {
        for &s in self.here.iter().chain(self.below.iter().map(|(s, _)| s)) {
            slots[s] = None;
        }
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
    /// Slot `i` for `pointers[i]`; a `None` pointer fills no slot.
    pub fn new(pointers: &[Option<&str>]) -> Fields {
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

/// The body is not JSON (as `serde_json::from_slice::<Value>` would say).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NotJson;

/// The value at each pointer of `fields`, or `NotJson`.
pub(crate) fn read(body: &[u8], fields: &Fields) -> Result<Vec<Option<Value>>, NotJson> {
    match one_pass(body, fields) {
        Pass::Read(slots) => Ok(slots),
        Pass::NotJson => Err(NotJson),
        Pass::RawValueKey => match serde_json::from_slice(body) {
            Ok(v) => Ok(values_of(&v, fields)),
            Err(_) => Err(NotJson),
        },
    }
}

/// What the one pass made of a body.
#[derive(Debug, PartialEq)]
enum Pass {
    Read(Vec<Option<Value>>),
    NotJson,
    /// An object whose first key is [`RAW_VALUE_KEY`]: for the `Value`
    /// path.
    RawValueKey,
}

fn one_pass(body: &[u8], fields: &Fields) -> Pass {
    // JSON that `Value` accepts is UTF-8 throughout (outside its strings
    // only ASCII is allowed, and each string is checked), so checking the
    // whole body once and reading it as text refuses the same bodies while
    // sparing the check of every string.
    let Ok(text) = std::str::from_utf8(body) else {
        return Pass::NotJson;
    };
    let mut slots = vec![None; fields.slots];
    let mut de = serde_json::Deserializer::from_str(text);
    let walked = At {
        node: &fields.root,
        slots: &mut slots,
    }
    .deserialize(&mut de)
    .and_then(|()| de.end());
    match walked {
        Ok(()) => Pass::Read(slots),
        Err(e) if e.to_string().starts_with(RAW_VALUE_KEY) => Pass::RawValueKey,
        Err(_) => Pass::NotJson,
    }
}

/// The value at each pointer of `fields` in a parsed body.
pub(crate) fn values_of(json: &Value, fields: &Fields) -> Vec<Option<Value>> {
    let mut slots = vec![None; fields.slots];
    take_whole(json.clone(), &fields.root, &mut slots);
    slots
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

/// Reads the value at `node` into its slots.
struct At<'n, 's> {
    node: &'n Node,
    slots: &'s mut [Option<Value>],
}

impl<'de> DeserializeSeed<'de> for At<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        if !self.node.here.is_empty() {
            // Pointed at: the value whole, and what lies below in it.
            let v = Value::deserialize(d)?;
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
                Some(node) => seq
                    .next_element_seed(At {
                        node,
                        slots: &mut *self.slots,
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
        let mut first = true;
        while let Some(Key(key)) = map.next_key()? {
            if first && key == RAW_VALUE_KEY {
                return Err(de::Error::custom(RAW_VALUE_KEY));
            }
            first = false;
            match self.node.child(&key) {
                Some(node) => {
                    // A repeated key: its last value counts, whole.
                    node.clear(self.slots);
                    map.next_value_seed(At {
                        node,
                        slots: &mut *self.slots,
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
        let mut first = true;
        while let Some(Key(key)) = map.next_key()? {
            if first && key == RAW_VALUE_KEY {
                return Err(de::Error::custom(RAW_VALUE_KEY));
            }
            first = false;
            map.next_value::<Skip>()?;
        }
        Ok(Skip)
    }
}

#[cfg(test)]
mod tests;
