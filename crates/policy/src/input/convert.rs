//! JSON to the interpreter's values ([`Convert`]), sharing each key and
//! short text and each distinct array or object: the one table of shared
//! values both ways of building a resource use (straight from its serde
//! form, by the sibling serializer; from JSON, for the few with a secret).

use rustc_hash::FxHashMap;
use serde_json::Value;

/// JSON to the interpreter's values as `regorus::Value::from` converts
/// it (numbers as serde_json reads them), without the deserializer, with
/// each object key allocated once (100,000 resources share a few dozen
/// keys instead of holding two million copies) and each array or object
/// made once per distinct content (`shared`).
#[derive(Default)]
pub(crate) struct Convert {
    /// Object keys and short texts, each allocated once. Looked up once per
    /// field of every resource: FxHash, not SipHash.
    shared: FxHashMap<String, regorus::Value>,
    /// Arrays and objects already made, by a hash of their content.
    trees: FxHashMap<u64, regorus::Value>,
    /// The keys of the model's structs (texts of the program), by where
    /// their text is: found without hashing or comparing the text.
    static_keys: FxHashMap<(usize, usize), regorus::Value>,
    /// Buffers in which a value's members are collected (one per depth
    /// being built), then copied out at their exact size.
    item_buffers: Vec<Vec<regorus::Value>>,
    entry_buffers: Vec<Vec<(regorus::Value, regorus::Value)>>,
}

/// Short texts (locations, tags, methods, units) repeat across resources:
/// each is allocated once and shared, as keys are. Memory fresh from the
/// system costs more than the lookup (page faults were a third of the
/// input's time): at 100,000 checks the input is 30 MiB smaller and input
/// plus evaluation about a tenth faster. Texts are added only while fewer
/// than `SHARED_TEXTS` are kept, so names and URLs (unique, mostly longer
/// than `SHARED_TEXT_LEN`) cannot grow the table without bound.
const SHARED_TEXTS: usize = 4096;
const SHARED_TEXT_LEN: usize = 32;

/// Arrays and objects repeat across resources even more (a check after
/// its group: the group's locations, its alert channels, tags, retry
/// strategy; an API check's headers and assertions): each distinct one is
/// made once and shared, which took 265 MB of input at 100,000 checks to
/// (see `docs/src/guide/policies.md`). The table is bounded as the texts'
/// is: past `SHARED_TREES` entries it only finds.
const SHARED_TREES: usize = 1 << 16;

impl Convert {
    pub(crate) fn key(&mut self, key: &str) -> regorus::Value {
        self.share(key, usize::MAX)
    }

    /// [`Convert::key`] of a text of the program (a struct's field name).
    pub(crate) fn static_key(&mut self, key: &'static str) -> regorus::Value {
        let at = (key.as_ptr() as usize, key.len());
        if let Some(known) = self.static_keys.get(&at) {
            return known.clone();
        }
        let value = self.key(key);
        self.static_keys.insert(at, value.clone());
        value
    }

    /// A buffer for an array's items (give it back to [`Convert::array`]).
    pub(crate) fn item_buffer(&mut self) -> Vec<regorus::Value> {
        self.item_buffers.pop().unwrap_or_default()
    }

    /// The array of `buffer`'s items, made at its exact size: regorus keeps
    /// an array's vector as it is given, and a vector grown by pushes (or
    /// made for more members than came) would hold up to twice its items'
    /// memory for as long as the input lives (mimalloc does not move a
    /// block shrunk by less than half).
    pub(crate) fn array(&mut self, mut buffer: Vec<regorus::Value>) -> regorus::Value {
        let mut items = Vec::with_capacity(buffer.len());
        items.append(&mut buffer);
        self.item_buffers.push(buffer);
        regorus::Value::from(items)
    }

    /// A buffer for an object's entries (give it back to [`Convert::object`]).
    pub(crate) fn entry_buffer(&mut self) -> Vec<(regorus::Value, regorus::Value)> {
        self.entry_buffers.pop().unwrap_or_default()
    }

    /// The object of `buffer`'s entries (of equal keys the last), made at
    /// its exact size (as [`Convert::array`]).
    pub(crate) fn object(&mut self, mut buffer: Vec<(regorus::Value, regorus::Value)>) -> regorus::Value {
        let mut entries = Vec::with_capacity(buffer.len());
        entries.append(&mut buffer);
        self.entry_buffers.push(buffer);
        regorus::Value::from_entries(entries)
    }

    /// A text of a resource: a short one shared (`SHARED_TEXT_LEN`).
    pub(crate) fn text(&mut self, text: &str) -> regorus::Value {
        match text.len() <= SHARED_TEXT_LEN {
            true => self.share(text, SHARED_TEXTS),
            false => regorus::Value::from(text),
        }
    }

    /// `text` as the value already made for it, or a new one, kept for the
    /// next time while fewer than `limit` are kept.
    fn share(&mut self, text: &str, limit: usize) -> regorus::Value {
        if let Some(known) = self.shared.get(text) {
            return known.clone();
        }
        let value = regorus::Value::from(text);
        if self.shared.len() < limit {
            self.shared.insert(text.to_owned(), value.clone());
        }
        value
    }

    /// `value` (an array or an object) as the one already made with the
    /// same content, else `value` itself, kept for the next time. Sharing
    /// is invisible to a policy: values are immutable (regorus copies on
    /// write).
    pub(crate) fn shared(&mut self, value: regorus::Value) -> regorus::Value {
        if !matches!(value, regorus::Value::Array(_) | regorus::Value::Object(_)) {
            return value;
        }
        let mut hasher = rustc_hash::FxHasher::default();
        fingerprint(&value, &mut hasher);
        let hash = std::hash::Hasher::finish(&hasher);
        match self.trees.get(&hash) {
            Some(known) if *known == value => known.clone(),
            Some(_) => value,
            None => {
                if self.trees.len() < SHARED_TREES {
                    self.trees.insert(hash, value.clone());
                }
                value
            }
        }
    }

    /// `value` converted, what it holds shared; `value` itself not (a
    /// resource's fields: its name at least is its own).
    pub(crate) fn fields(&mut self, value: Value) -> regorus::Value {
        self.convert(value).0
    }

    /// `value` converted, and whether it may be shared: not when it holds
    /// a number with a fraction part or exponent (1.0 and 1 are equal in
    /// Rego, so a shared value could print one as the other in a
    /// finding's message).
    fn convert(&mut self, value: Value) -> (regorus::Value, bool) {
        match value {
            Value::Null => (regorus::Value::Null, true),
            Value::Bool(b) => (regorus::Value::from(b), true),
            Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => (regorus::Value::from(u), true),
                (None, Some(i), _) => (regorus::Value::from(i), true),
                (None, None, Some(f)) if f.is_finite() => (regorus::Value::from(f), false),
                // serde_json holds no other number; as `from`, undefined.
                _ => (regorus::Value::Undefined, false),
            },
            Value::String(text) => (self.text(&text), true),
            Value::Array(items) => {
                let mut shareable = true;
                let items: Vec<regorus::Value> = items
                    .into_iter()
                    .map(|v| {
                        let (item, ok) = self.convert(v);
                        shareable &= ok;
                        if ok { self.shared(item) } else { item }
                    })
                    .collect();
                (regorus::Value::from(items), shareable)
            }
            Value::Object(map) => {
                let mut shareable = true;
                // Sorted into regorus's compact storage at once: a B-tree
                // first (`From<BTreeMap>`) was copied into it again.
                let entries: Vec<(regorus::Value, regorus::Value)> = map
                    .into_iter()
                    .map(|(k, v)| {
                        let (item, ok) = self.convert(v);
                        shareable &= ok;
                        (self.key(&k), if ok { self.shared(item) } else { item })
                    })
                    .collect();
                (regorus::Value::from_entries(entries), shareable)
            }
        }
    }
}

/// A hash of `value`'s content. What it holds was shared before it
/// (`Convert::shared`), so an array or object inside is hashed by its
/// address: two equal values whose parts were shared hash alike (two whose
/// parts were not may not, and are then not shared: never wrong), and a
/// value is hashed in one pass over its own members, not its whole depth.
fn fingerprint(value: &regorus::Value, hasher: &mut rustc_hash::FxHasher) {
    use regorus::Value as R;
    use std::hash::Hash;
    match value {
        R::Null => 0u8.hash(hasher),
        R::Undefined => 1u8.hash(hasher),
        R::Bool(b) => (2u8, b).hash(hasher),
        R::Number(n) => (3u8, n.as_u64(), n.as_i64()).hash(hasher),
        R::String(text) => (4u8, text.as_ref()).hash(hasher),
        R::Array(items) => {
            5u8.hash(hasher);
            items.iter().for_each(|item| member(item, hasher));
        }
        R::Set(items) => {
            6u8.hash(hasher);
            items.iter().for_each(|item| member(item, hasher));
        }
        R::Object(object) => {
            7u8.hash(hasher);
            for (key, item) in object.iter() {
                member(key, hasher);
                member(item, hasher);
            }
        }
    }
}

fn member(value: &regorus::Value, hasher: &mut rustc_hash::FxHasher) {
    use regorus::Value as R;
    use std::hash::Hash;
    match value {
        R::Array(items) => (8u8, regorus::Rc::as_ptr(items) as usize).hash(hasher),
        R::Object(object) => (9u8, regorus::Rc::as_ptr(object) as usize).hash(hasher),
        other => fingerprint(other, hasher),
    }
}
