//! A resource of the files as a plan compares it: its canonical JSON
//! written one top-level field at a time, each field kept as its text.
//!
//! A no-op plan compares every field of every resource with the service's
//! text of it (`compare::differences_of`), and equal texts are the same
//! value: no tree of the resource is needed for them. Building one
//! (`Resource::to_json`: a map per object, each key hashed) was most of
//! the desired side of a plan's comparing. The whole value, exactly as
//! before ([`DesiredForm::full`]), is built only for a resource where
//! something differs; the fields the secret rule reads are parsed from
//! their texts ([`DesiredForm::secret_fields`]).

use std::cell::OnceCell;
use std::ops::Range;

use monform_model::facts::{Facts, Step, facts, variant_tag};
use monform_model::resources::common::Lifecycle;
use monform_model::{FieldPath, Kind, Resource, Segment};
use serde::Serialize;
use serde::ser::{self, Impossible};
use serde_json::{Map, Value};

/// A desired resource's top-level fields as their compact JSON texts, in
/// the order its canonical JSON has them.
pub(crate) struct DesiredForm<'r> {
    kind: Kind,
    resource: &'r Resource,
    facts: &'static Facts,
    /// Every field's name and text, one after another.
    text: String,
    fields: Vec<FieldAt>,
    /// The managed form's fields, by index into `fields`, in its order.
    managed: Vec<usize>,
    /// The managed fields by a hash of their names: each slot empty (0)
    /// or a position in `managed` plus one. A plan asks for every field
    /// the state recorded (`has`): scanning was a few percent of it.
    slots: [u8; SLOTS],
    /// The variant's tag value (`checkType`, `type`), as a tiny object:
    /// what the model's rules read to pick the variant's facts.
    variant: Value,
    /// The managed form ([`super::managed`] of [`Resource::to_json`]).
    full: OnceCell<Value>,
}

/// Where a field's name and text are in [`DesiredForm::text`].
struct FieldAt {
    name: Range<usize>,
    value: Range<usize>,
}

impl<'r> DesiredForm<'r> {
    pub fn new(kind: Kind, resource: &'r Resource) -> DesiredForm<'r> {
        let mut bytes = Vec::with_capacity(1024);
        let mut fields = Vec::with_capacity(24);
        let written = resource
            .serialize(TopLevel {
                text: &mut bytes,
                fields: &mut fields,
            })
            .is_ok();
        // serde_json writes UTF-8, and names are written whole.
        let (text, valid) = match String::from_utf8(bytes) {
            Ok(text) => (text, true),
            Err(_) => (String::new(), false),
        };
        let mut form = DesiredForm {
            kind,
            resource,
            facts: &NO_FACTS,
            text,
            fields,
            managed: Vec::new(),
            slots: [0; SLOTS],
            variant: Value::Object(Map::new()),
            full: OnceCell::new(),
        };
        // A key written twice is one field of the JSON form (its last
        // value in the first one's place): read from the JSON form then.
        if !written || !valid || form.has_duplicate_names() {
            form.read_json_form();
        }
        if let Some(tag) = variant_tag(kind)
            && let Some(value) = form.parsed(tag)
        {
            form.variant = Value::Object(Map::from_iter([(tag.to_owned(), value)]));
        }
        form.facts = facts(kind, &form.variant);
        // As `managed` takes them out of the JSON form's map: each as
        // serde_json's `Map::remove` does, the last field moved to its place.
        form.managed = (0..form.fields.len()).collect();
        for meta in meta_fields(form.facts) {
            if let Some(at) = form.managed.iter().position(|&i| form.name(i) == meta) {
                form.managed.swap_remove(at);
            }
        }
        if form.managed.len() < SLOTS / 2 {
            for position in 0..form.managed.len() {
                let mut slot = slot_of(form.name_bytes(form.managed[position]));
                while form.slots[slot] != 0 {
                    slot = (slot + 1) % SLOTS;
                }
                // Fewer than SLOTS / 2 positions: each fits in a byte.
                form.slots[slot] = u8::try_from(position + 1).unwrap_or(u8::MAX);
            }
        }
        form
    }

    /// The fields as the JSON form has them (its texts written from it).
    fn read_json_form(&mut self) {
        let json = self.resource.to_json();
        self.text.clear();
        self.fields.clear();
        for (name, value) in json.as_object().into_iter().flatten() {
            let start = self.text.len();
            self.text.push_str(name);
            let name = start..self.text.len();
            // Writing a `Value` cannot fail.
            self.text.push_str(&serde_json::to_string(value).unwrap_or_default());
            self.fields.push(FieldAt {
                value: name.end..self.text.len(),
                name,
            });
        }
    }

    fn has_duplicate_names(&self) -> bool {
        // Names compared only where a cheap sign of them (length, first
        // and last byte) was seen before: a resource's twenty-odd names
        // each compared with every other was a tenth of the form's cost.
        let mut seen = 0u64;
        (0..self.fields.len()).any(|i| {
            let name = self.name_bytes(i);
            let sign = name.len() * 7
                + usize::from(name.first().copied().unwrap_or(0)) * 3
                + usize::from(name.last().copied().unwrap_or(0));
            let bit = 1u64 << (sign % 64);
            let again = seen & bit != 0 && (0..i).any(|j| self.name_bytes(j) == name);
            seen |= bit;
            again
        })
    }

    fn name(&self, i: usize) -> &str {
        &self.text[self.fields[i].name.clone()]
    }

    fn name_bytes(&self, i: usize) -> &[u8] {
        &self.text.as_bytes()[self.fields[i].name.clone()]
    }

    pub fn facts(&self) -> &'static Facts {
        self.facts
    }

    /// An object holding the variant's tag alone (empty for an untagged
    /// kind): enough for the model's rules that read the variant.
    pub fn variant_object(&self) -> &Value {
        &self.variant
    }

    /// The variant, as `facts::variant_of` reads it.
    pub fn variant(&self) -> &str {
        variant_tag(self.kind)
            .and_then(|tag| self.variant.get(tag)?.as_str())
            .unwrap_or_default()
    }

    /// The managed fields (monform-only ones left out): name and text.
    pub fn fields(&self) -> impl Iterator<Item = (&str, &str)> {
        self.managed
            .iter()
            .map(|&i| (self.name(i), &self.text[self.fields[i].value.clone()]))
    }

    /// How many fields the managed form has.
    pub fn len(&self) -> usize {
        self.managed.len()
    }

    /// Whether the managed form has the field `name`.
    pub fn has(&self, name: &str) -> bool {
        let name = name.as_bytes();
        if self.managed.len() >= SLOTS / 2 {
            return self.managed.iter().any(|&i| self.name_bytes(i) == name);
        }
        let mut slot = slot_of(name);
        loop {
            match self.slots[slot] {
                0 => return false,
                position if self.name_bytes(self.managed[usize::from(position) - 1]) == name => return true,
                _ => slot = (slot + 1) % SLOTS,
            }
        }
    }

    /// The text of field `name`, managed or not.
    fn text_of(&self, name: &str) -> Option<&str> {
        (0..self.fields.len())
            .find(|&i| self.name_bytes(i) == name.as_bytes())
            .map(|i| &self.text[self.fields[i].value.clone()])
    }

    /// Field `name` parsed from its text: the value the JSON form holds
    /// there (the text is that value written out, and serde_json reads a
    /// value it wrote as that very value).
    fn parsed(&self, name: &str) -> Option<Value> {
        self.text_of(name).and_then(|text| serde_json::from_str(text).ok())
    }

    /// The resource's `lifecycle` (read by the model's rule from the field alone).
    pub fn lifecycle(&self) -> Lifecycle {
        match self.parsed("lifecycle") {
            Some(value) => {
                monform_model::lifecycle::of(&Value::Object(Map::from_iter([("lifecycle".to_owned(), value)])))
            }
            None => Lifecycle::default(),
        }
    }

    /// The managed form as a value, as `managed(kind, resource.to_json())`
    /// (built when first asked: only a resource where something differs).
    pub fn full(&self) -> &Value {
        self.full
            .get_or_init(|| super::managed(self.kind, self.resource.to_json()))
    }

    /// The managed form's fields the model's secret rule can read (those
    /// its sensitive patterns start at, a top-level pattern's sibling
    /// flag or name, and those `extra` paths name) and the variant's tag:
    /// for that rule, and for the values at the paths it finds, the same
    /// as [`DesiredForm::full`].
    pub fn secret_fields(&self, extra: &[FieldPath]) -> Value {
        let facts = self.facts;
        let first = |pattern: &'static [Step]| match pattern.first() {
            Some(Step::Key(key)) => Some(key.as_str()),
            _ => None,
        };
        // A flag or name is read beside the field: at the top level for a
        // pattern of one key.
        let sibling = |(pattern, sibling): &'static (Vec<Step>, String)| {
            [first(pattern), (pattern.len() == 1).then_some(sibling.as_str())]
        };
        let roots = facts
            .sensitive
            .iter()
            .filter_map(|pattern| first(pattern))
            .chain(facts.sensitive_if.iter().flat_map(sibling).flatten())
            .chain(facts.sensitive_named.iter().flat_map(sibling).flatten())
            .chain(extra.iter().filter_map(|path| match path.segments().first() {
                Some(Segment::Key(key)) => Some(key.as_str()),
                _ => None,
            }));
        let roots: Vec<&str> = roots.collect();
        // In the managed form's order, as a rule walking it meets them.
        let mut object = Map::new();
        let tag = variant_tag(self.kind);
        for (name, text) in self.fields() {
            if Some(name) == tag
                && let Some(value) = self.variant.get(name)
            {
                object.insert(name.to_owned(), value.clone());
            } else if roots.contains(&name)
                && let Ok(value) = serde_json::from_str(text)
            {
                object.insert(name.to_owned(), value);
            }
        }
        Value::Object(object)
    }
}

/// How many slots [`DesiredForm::has`] hashes names into: at most half
/// of them are used (a resource with more fields is scanned).
const SLOTS: usize = 64;

/// A name's first slot: its length and a few of its bytes, mixed.
fn slot_of(name: &[u8]) -> usize {
    let byte = |i: usize| usize::from(name.get(i).copied().unwrap_or(0));
    (name.len() * 37 + byte(0) * 11 + byte(name.len() / 2) * 5 + byte(name.len().wrapping_sub(1))) % SLOTS
}

/// The facts of a form before its variant is known.
static NO_FACTS: std::sync::LazyLock<Facts> = std::sync::LazyLock::new(Facts::default);

/// The top-level fields the managed form leaves out: the kind's
/// monform-only patterns of one key (what [`super::managed`] removes).
pub(crate) fn meta_fields(facts: &Facts) -> impl Iterator<Item = &str> {
    facts.meta.iter().filter_map(|pattern| match pattern.as_slice() {
        [Step::Key(key)] => Some(key.as_str()),
        _ => None,
    })
}

/// The serializer of a resource's top level: a struct or a map (a tagged
/// or flattened struct is written as one), each field's value written by
/// serde_json's compact writer on its own. Anything else is an error (the
/// caller reads the JSON form instead).
struct TopLevel<'a> {
    text: &'a mut Vec<u8>,
    fields: &'a mut Vec<FieldAt>,
}

fn not_an_object() -> serde_json::Error {
    ser::Error::custom("a resource's top level is not an object")
}

impl TopLevel<'_> {
    fn name(&mut self, name: &str) -> Range<usize> {
        let start = self.text.len();
        self.text.extend_from_slice(name.as_bytes());
        start..self.text.len()
    }

    fn value<T: Serialize + ?Sized>(&mut self, name: Range<usize>, value: &T) -> Result<(), serde_json::Error> {
        let start = self.text.len();
        value.serialize(&mut serde_json::Serializer::new(&mut *self.text))?;
        self.fields.push(FieldAt {
            name,
            value: start..self.text.len(),
        });
        Ok(())
    }
}

impl<'a> ser::Serializer for TopLevel<'a> {
    type Ok = ();
    type Error = serde_json::Error;
    type SerializeSeq = Impossible<(), serde_json::Error>;
    type SerializeTuple = Impossible<(), serde_json::Error>;
    type SerializeTupleStruct = Impossible<(), serde_json::Error>;
    type SerializeTupleVariant = Impossible<(), serde_json::Error>;
    type SerializeMap = TopLevelMap<'a>;
    type SerializeStruct = TopLevelMap<'a>;
    type SerializeStructVariant = Impossible<(), serde_json::Error>;

    fn serialize_map(self, _len: Option<usize>) -> Result<TopLevelMap<'a>, serde_json::Error> {
        Ok(TopLevelMap { top: self, key: None })
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<TopLevelMap<'a>, serde_json::Error> {
        Ok(TopLevelMap { top: self, key: None })
    }

    fn serialize_bool(self, _: bool) -> Result<(), serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_i8(self, _: i8) -> Result<(), serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_i16(self, _: i16) -> Result<(), serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_i32(self, _: i32) -> Result<(), serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_i64(self, _: i64) -> Result<(), serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_u8(self, _: u8) -> Result<(), serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_u16(self, _: u16) -> Result<(), serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_u32(self, _: u32) -> Result<(), serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_u64(self, _: u64) -> Result<(), serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_f32(self, _: f32) -> Result<(), serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_f64(self, _: f64) -> Result<(), serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_char(self, _: char) -> Result<(), serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_str(self, _: &str) -> Result<(), serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_none(self) -> Result<(), serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<(), serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_unit(self) -> Result<(), serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), serde_json::Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, serde_json::Error> {
        Err(not_an_object())
    }
}

/// The fields of a resource's top level, each written as it comes.
struct TopLevelMap<'a> {
    top: TopLevel<'a>,
    /// The name of a map entry whose value comes next.
    key: Option<Range<usize>>,
}

impl ser::SerializeMap for TopLevelMap<'_> {
    type Ok = ();
    type Error = serde_json::Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), serde_json::Error> {
        // Written as JSON text (`"name"`): the name is inside the quotes
        // when it needs no escape, else read back from the text.
        let start = self.top.text.len();
        key.serialize(&mut serde_json::Serializer::new(&mut *self.top.text))?;
        let quoted = &self.top.text[start..];
        let name = match quoted {
            [b'"', inner @ .., b'"'] if !inner.contains(&b'\\') => start + 1..self.top.text.len() - 1,
            _ => {
                let name: String = serde_json::from_slice(quoted).map_err(|_| not_an_object())?;
                self.top.name(&name)
            }
        };
        self.key = Some(name);
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), serde_json::Error> {
        let name = self.key.take().ok_or_else(not_an_object)?;
        self.top.value(name, value)
    }

    fn end(self) -> Result<(), serde_json::Error> {
        Ok(())
    }
}

impl ser::SerializeStruct for TopLevelMap<'_> {
    type Ok = ();
    type Error = serde_json::Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), serde_json::Error> {
        let name = self.top.name(key);
        self.top.value(name, value)
    }

    fn end(self) -> Result<(), serde_json::Error> {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
