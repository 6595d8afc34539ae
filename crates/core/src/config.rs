//! Typed, validating access to a raw `config.json` object.
//!
//! Every accessor takes the default that the family's `transformers` config class uses, so an
//! absent field means exactly what it means there, and every error names the file and the field.

use crate::error::{Error, Result};
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::ops::Bound;
use std::rc::Rc;

/// Upper bounds on structural counts. They bound what anatomy allocates for one model (a per-layer
/// plan, one manifest entry per expert) by what any real model needs, with room to spare.
pub const MAX_LAYERS: u64 = 100_000;
pub const MAX_EXPERTS: u64 = 1_000_000;
/// Upper bound on any one size (hidden, vocabulary, heads, context …): 2^28, far above any real
/// model's. It keeps every product of two sizes well inside 64 bits; larger products are checked.
pub const MAX_SIZE: u64 = 1 << 28;

pub struct Config<'a> {
    pub file: &'a str,
    /// JSON path prefix of this object (`text_config.`), for error messages.
    pub prefix: String,
    pub map: &'a Map<String, Value>,
    /// JSON paths of every key a loader looked at, shared by an object and its sub-objects: what
    /// no loader read is accounted for afterwards (`families::account`).
    read: Rc<RefCell<BTreeSet<String>>>,
    /// The config class's `attribute_map`: (name in the file, attribute it sets). A file's
    /// `num_layers` is read as `num_hidden_layers` where the class says so, and wins over it when
    /// both are present, as in transformers.
    renames: &'static [(&'static str, &'static str)],
}

impl<'a> Config<'a> {
    pub fn new(file: &'a str, value: &'a Value) -> Result<Self> {
        match value {
            Value::Object(map) => Ok(Config {
                file,
                prefix: String::new(),
                map,
                read: Rc::default(),
                renames: &[],
            }),
            _ => Err(Error::file(
                file,
                "expected a JSON object at the top level (a Hugging Face config.json)",
            )),
        }
    }

    /// The nested object `key` (such as `text_config`), if present and an object.
    pub fn sub(&self, key: &str) -> Result<Option<Config<'a>>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Object(map)) => Ok(Some(Config {
                file: self.file,
                prefix: format!("{}{}.", self.prefix, key),
                map,
                read: self.read.clone(),
                renames: &[],
            })),
            Some(other) => Err(self.err(key, format!("must be an object, found {}", kind(other)))),
        }
    }

    /// The nested object `key` read apart from the key accounting: for figures outside the
    /// language model (a tower's sizes), whose keys its row lists as inert as a whole.
    pub fn detached(&self, key: &str) -> Result<Option<Config<'a>>> {
        Ok(self.sub(key)?.map(|c| Config {
            read: Rc::default(),
            ..c
        }))
    }

    pub fn err(&self, key: &str, message: impl Into<String>) -> Error {
        let key = self.file_key(key);
        Error::new(self.file, format!("{}{}", self.prefix, key), message)
    }

    pub fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Is `key` in the object at all, even as `null` (an explicit null can mean "off", where
    /// absence means the class default)?
    pub fn present(&self, key: &str) -> bool {
        let key = self.resolve(key);
        self.map.contains_key(key)
    }

    pub fn get(&self, key: &str) -> Option<&'a Value> {
        let key = self.resolve(key);
        match self.map.get(key) {
            None | Some(Value::Null) => None,
            Some(v) => Some(v),
        }
    }

    /// The same object read through a config class's `attribute_map`.
    pub fn renamed(mut self, renames: &'static [(&'static str, &'static str)]) -> Self {
        self.renames = renames;
        self
    }

    /// The key in the file that sets attribute `key`: a renamed one present in the file, else
    /// `key` itself. Reading an attribute marks both names as read.
    fn resolve<'k>(&self, key: &'k str) -> &'k str {
        self.mark(key);
        let in_file = self.file_key(key);
        if in_file != key {
            self.mark(in_file);
        }
        in_file
    }

    fn file_key<'k>(&self, key: &'k str) -> &'k str {
        self.renames
            .iter()
            .find(|(from, to)| *to == key && self.map.contains_key(*from))
            .map_or(key, |(from, _)| from)
    }

    fn mark(&self, key: &str) {
        if self.map.contains_key(key) {
            let mut read = self.read.borrow_mut();
            // A loader reads most keys more than once: the top level's are not built again.
            if self.prefix.is_empty() {
                if !read.contains(key) {
                    read.insert(key.to_string());
                }
            } else {
                let mut path = self.prefix.clone();
                path.push_str(key);
                read.insert(path);
            }
        }
    }

    /// The same object seen from its enclosing prefix (a multimodal wrapper's top level as the
    /// text model's config), sharing what has been read.
    pub fn view(&self) -> Config<'a> {
        Config {
            file: self.file,
            prefix: self.prefix.clone(),
            map: self.map,
            read: self.read.clone(),
            renames: self.renames,
        }
    }

    /// Count as read each key of this object that `rewritten` read: a config a loader made from
    /// this one (Dory's halved counts, Ergo's and Kolibri 1.1's keys put in Llama's terms), where
    /// `renames` gives a key's name there (the key of that name here, replaced, has none).
    pub fn read_through(&self, rewritten: &Config, renames: &[(&str, &str)]) {
        let unread: BTreeSet<String> = rewritten.unread().into_iter().map(|(k, _)| k).collect();
        for key in self.map.keys() {
            let there = match renames.iter().find(|(from, _)| from == key) {
                Some((_, to)) => to,
                None if renames.iter().any(|(_, to)| to == key) => continue,
                None => key.as_str(),
            };
            if rewritten.map.contains_key(there) && !unread.contains(there) {
                self.get(key);
            }
        }
    }

    /// Every key of this object and of the objects a loader entered (`sub`) that no loader read,
    /// as (JSON path, value), in file order.
    pub fn unread(&self) -> Vec<(String, &'a Value)> {
        let read = self.read.borrow();
        let mut out = Vec::new();
        fn walk<'v>(
            prefix: &str,
            map: &'v Map<String, Value>,
            read: &BTreeSet<String>,
            out: &mut Vec<(String, &'v Value)>,
        ) {
            let mut path = prefix.to_string();
            for (k, v) in map {
                path.truncate(prefix.len());
                path.push_str(k);
                if !read.contains(&path) {
                    out.push((path.clone(), v));
                } else if let Value::Object(inner) = v {
                    // An object a loader entered: its keys are accounted one by one. One it only
                    // looked at (present or not) is whole. The read keys are sorted: the first
                    // at or after `path.` says whether any starts with it.
                    let inner_prefix = format!("{path}.");
                    let entered = read
                        .range::<str, _>((Bound::Included(inner_prefix.as_str()), Bound::Unbounded))
                        .next()
                        .is_some_and(|r| r.starts_with(&inner_prefix));
                    if entered {
                        walk(&inner_prefix, inner, read, out);
                    }
                }
            }
        }
        walk(&self.prefix, self.map, &read, &mut out);
        out
    }

    /// A size that must be a positive integer; `default` is the config class's default.
    pub fn size(&self, key: &str, default: Option<u64>) -> Result<u64> {
        match self.get(key) {
            None => {
                default.ok_or_else(|| self.err(key, "is missing; it must be a positive integer"))
            }
            Some(v) => self.positive(key, v),
        }
    }

    /// The first of several spellings of one size that is present (GPT-2's `n_embd` is `hidden_size`).
    pub fn size_any(&self, keys: &[&str], default: Option<u64>) -> Result<u64> {
        for key in keys {
            if self.has(key) {
                return self.size(key, None);
            }
        }
        self.size(keys[0], default)
    }

    pub fn opt_size(&self, key: &str) -> Result<Option<u64>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => self.positive(key, v).map(Some),
        }
    }

    /// A count that may be zero (`first_k_dense_replace`, `n_shared_experts`).
    pub fn count(&self, key: &str, default: u64) -> Result<u64> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => self.integer(key, v),
        }
    }

    pub(crate) fn positive(&self, key: &str, v: &Value) -> Result<u64> {
        let n = self.integer(key, v)?;
        if n == 0 {
            return Err(self.err(key, "is 0; it must be a positive integer"));
        }
        Ok(n)
    }

    fn integer(&self, key: &str, v: &Value) -> Result<u64> {
        let n = self.any_integer(key, v)?;
        if n > MAX_SIZE {
            return Err(self.err(
                key,
                format!("is {n}; anatomy supports sizes up to {MAX_SIZE} (2^28)"),
            ));
        }
        Ok(n)
    }

    fn any_integer(&self, key: &str, v: &Value) -> Result<u64> {
        let valid = "it must be a non-negative integer";
        match v {
            Value::Number(n) => {
                if let Some(u) = n.as_u64() {
                    Ok(u)
                } else if let Some(i) = n.as_i64() {
                    Err(self.err(key, format!("is negative ({i}); {valid}")))
                } else {
                    let f = n.as_f64().unwrap_or(f64::NAN);
                    if f < 0.0 {
                        Err(self.err(key, format!("is negative ({n}); {valid}")))
                    } else if f.fract() == 0.0 && f <= 9_007_199_254_740_992.0 {
                        Ok(f as u64)
                    } else {
                        Err(self.err(key, format!("is {n}, not an integer; {valid}")))
                    }
                }
            }
            other => Err(self.err(key, format!("is {}; {valid}", kind(other)))),
        }
    }

    pub fn float(&self, key: &str, default: f64) -> Result<f64> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => self.float_value(key, v),
        }
    }

    pub fn opt_float(&self, key: &str) -> Result<Option<f64>> {
        self.get(key).map(|v| self.float_value(key, v)).transpose()
    }

    pub fn float_value(&self, key: &str, v: &Value) -> Result<f64> {
        match v.as_f64() {
            Some(f) if f.is_finite() => Ok(f),
            _ => Err(self.err(key, format!("is {}; it must be a number", kind(v)))),
        }
    }

    /// A number that may be infinite, as Python's `json` writes one (`Infinity`, `-Infinity`;
    /// see `families::load_json`). NaN is refused.
    pub fn extended_float_value(&self, key: &str, v: &Value) -> Result<f64> {
        match v.as_str() {
            Some("Infinity") => Ok(f64::INFINITY),
            Some("-Infinity") => Ok(f64::NEG_INFINITY),
            _ => self.float_value(key, v),
        }
    }

    pub fn flag(&self, key: &str, default: bool) -> Result<bool> {
        match self.get(key) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => {
                Err(self.err(key, format!("is {}; it must be true or false", kind(other))))
            }
        }
    }

    pub fn string(&self, key: &str, default: &str) -> Result<String> {
        match self.get(key) {
            None => Ok(default.to_string()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(other) => Err(self.err(key, format!("is {}; it must be a string", kind(other)))),
        }
    }

    pub fn opt_string(&self, key: &str) -> Result<Option<String>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.err(key, format!("is {}; it must be a string", kind(other)))),
        }
    }

    /// An array of exactly `n` items (one per layer), each read by `item`; absent gives `None`.
    pub fn list<T>(
        &self,
        key: &str,
        n: u64,
        item: impl Fn(&Value) -> Option<T>,
        expect: &str,
    ) -> Result<Option<Vec<T>>> {
        let Some(items) = self.list_any(key, item, expect)? else {
            return Ok(None);
        };
        if items.len() as u64 != n {
            return Err(self.err(
                key,
                format!(
                    "has {} entries; it must have one per layer ({n}), each {expect}",
                    items.len()
                ),
            ));
        }
        Ok(Some(items))
    }

    /// An array of any length (bounded by the file it came from), each item read by `item`.
    pub fn list_any<T>(
        &self,
        key: &str,
        item: impl Fn(&Value) -> Option<T>,
        expect: &str,
    ) -> Result<Option<Vec<T>>> {
        let Some(v) = self.get(key) else {
            return Ok(None);
        };
        let Value::Array(items) = v else {
            return Err(self.err(
                key,
                format!("is {}; it must be an array, each item {expect}", kind(v)),
            ));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, x)| {
                item(x).ok_or_else(|| {
                    self.err(&format!("{key}[{i}]"), format!("is {x}; expected {expect}"))
                })
            })
            .collect::<Result<Vec<T>>>()
            .map(Some)
    }

    /// A structural count with an upper bound, so a hostile file cannot make anatomy allocate without limit.
    pub fn bounded(&self, key: &str, n: u64, max: u64) -> Result<u64> {
        if n > max {
            return Err(self.err(key, format!("is {n}; anatomy supports at most {max}")));
        }
        Ok(n)
    }
}

pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
