//! A resource straight from its serde form into the interpreter's values,
//! without the JSON value between (at 100,000 checks that stage, every
//! object an insertion-ordered map hashed with SipHash, was most of the
//! input's time). It gives what `serde_json::to_value` and then
//! [`Convert`] give: numbers by serde_json's rules (integers as integers,
//! a finite float as a float, a non-finite one as null), keys and short
//! texts shared, and each array or object shared by content unless it
//! holds a float (as [`Convert`] shares). What serde_json would render in
//! a way of its own (a raw JSON value, a map key that is not a text) is
//! refused: the caller builds that resource through JSON instead.

use std::fmt;

use serde::Serialize;
use serde::ser::{self, Impossible};

use super::convert::Convert;

/// `value` in the interpreter's values (the top level not shared: a
/// resource's fields are its own), or why not.
pub(crate) fn to_regorus<T: Serialize + ?Sized>(convert: &mut Convert, value: &T) -> Result<regorus::Value, Refused> {
    value.serialize(Build(convert)).map(|(value, _)| value)
}

/// What the serializer does not render as serde_json would.
#[derive(Debug)]
pub(crate) struct Refused(String);

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

impl ser::Error for Refused {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Refused(message.to_string())
    }
}

/// A value made, and whether it may be shared (not when it holds a float:
/// see [`Convert`]).
type Made = (regorus::Value, bool);

/// serde_json's marker of a raw JSON text (rendered verbatim, not as the
/// struct it is serialized as).
const RAW_VALUE: &str = "$serde_json::private::RawValue";

struct Build<'c>(&'c mut Convert);

impl<'c> ser::Serializer for Build<'c> {
    type Ok = Made;
    type Error = Refused;
    type SerializeSeq = Seq<'c>;
    type SerializeTuple = Seq<'c>;
    type SerializeTupleStruct = Seq<'c>;
    type SerializeTupleVariant = Variant<Seq<'c>>;
    type SerializeMap = Map<'c>;
    type SerializeStruct = Map<'c>;
    type SerializeStructVariant = Variant<Map<'c>>;

    fn serialize_bool(self, v: bool) -> Result<Made, Refused> {
        Ok((regorus::Value::from(v), true))
    }
    fn serialize_i8(self, v: i8) -> Result<Made, Refused> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i16(self, v: i16) -> Result<Made, Refused> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i32(self, v: i32) -> Result<Made, Refused> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i64(self, v: i64) -> Result<Made, Refused> {
        // serde_json keeps a non-negative integer as unsigned.
        Ok(match u64::try_from(v) {
            Ok(u) => (regorus::Value::from(u), true),
            Err(_) => (regorus::Value::from(v), true),
        })
    }
    fn serialize_i128(self, v: i128) -> Result<Made, Refused> {
        match i64::try_from(v) {
            Ok(v) => self.serialize_i64(v),
            Err(_) => self.serialize_u128(u128::try_from(v).map_err(|_| Refused("number out of range".into()))?),
        }
    }
    fn serialize_u8(self, v: u8) -> Result<Made, Refused> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u16(self, v: u16) -> Result<Made, Refused> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u32(self, v: u32) -> Result<Made, Refused> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u64(self, v: u64) -> Result<Made, Refused> {
        Ok((regorus::Value::from(v), true))
    }
    fn serialize_u128(self, v: u128) -> Result<Made, Refused> {
        let v = u64::try_from(v).map_err(|_| Refused("number out of range".into()))?;
        self.serialize_u64(v)
    }
    fn serialize_f32(self, v: f32) -> Result<Made, Refused> {
        self.serialize_f64(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<Made, Refused> {
        // serde_json has no non-finite number: it makes null of one.
        Ok(match v.is_finite() {
            true => (regorus::Value::from(v), false),
            false => (regorus::Value::Null, true),
        })
    }
    fn serialize_char(self, v: char) -> Result<Made, Refused> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<Made, Refused> {
        Ok((self.0.text(v), true))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Made, Refused> {
        let items = v
            .iter()
            .map(|b| regorus::Value::from(u64::from(*b)))
            .collect::<Vec<_>>();
        Ok((regorus::Value::from(items), true))
    }
    fn serialize_none(self) -> Result<Made, Refused> {
        Ok((regorus::Value::Null, true))
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Made, Refused> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Made, Refused> {
        Ok((regorus::Value::Null, true))
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Made, Refused> {
        Ok((regorus::Value::Null, true))
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<Made, Refused> {
        // A text of the program (`GET`, `STATUS_CODE`): shared as keys are.
        Ok((self.0.static_key(variant), true))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, value: &T) -> Result<Made, Refused> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Made, Refused> {
        let made = value.serialize(Build(&mut *self.0))?;
        Ok(single(self.0, variant, made))
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Seq<'c>, Refused> {
        Ok(Seq {
            items: self.0.item_buffer(),
            convert: self.0,
            shareable: true,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq<'c>, Refused> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Seq<'c>, Refused> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Variant<Seq<'c>>, Refused> {
        Ok(Variant {
            name: variant,
            inner: self.serialize_seq(Some(len))?,
        })
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Map<'c>, Refused> {
        Ok(Map {
            entries: self.0.entry_buffer(),
            convert: self.0,
            key: None,
            shareable: true,
        })
    }
    fn serialize_struct(self, name: &'static str, _: usize) -> Result<Map<'c>, Refused> {
        if name == RAW_VALUE {
            return Err(Refused("a raw JSON value".into()));
        }
        self.serialize_map(None)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Variant<Map<'c>>, Refused> {
        Ok(Variant {
            name: variant,
            inner: self.serialize_map(Some(len))?,
        })
    }
}

/// A member as [`Convert`] keeps it: shared when it may be.
fn member(convert: &mut Convert, (value, shareable): Made) -> regorus::Value {
    match shareable {
        true => convert.shared(value),
        false => value,
    }
}

/// `{key: made}` (serde_json's form of an enum's variant with data).
fn single(convert: &mut Convert, key: &'static str, made: Made) -> Made {
    let shareable = made.1;
    let mut entries = convert.entry_buffer();
    entries.push((convert.static_key(key), member(convert, made)));
    (convert.object(entries), shareable)
}

struct Seq<'c> {
    convert: &'c mut Convert,
    items: Vec<regorus::Value>,
    shareable: bool,
}

impl Seq<'_> {
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Refused> {
        let made = value.serialize(Build(&mut *self.convert))?;
        self.shareable &= made.1;
        let item = member(self.convert, made);
        self.items.push(item);
        Ok(())
    }
}

impl<'c> Finish<'c> for Seq<'c> {
    fn finish(self) -> (Made, &'c mut Convert) {
        ((self.convert.array(self.items), self.shareable), self.convert)
    }
}

impl ser::SerializeSeq for Seq<'_> {
    type Ok = Made;
    type Error = Refused;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Refused> {
        self.push(value)
    }
    fn end(self) -> Result<Made, Refused> {
        Ok(self.finish().0)
    }
}

impl ser::SerializeTuple for Seq<'_> {
    type Ok = Made;
    type Error = Refused;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Refused> {
        self.push(value)
    }
    fn end(self) -> Result<Made, Refused> {
        Ok(self.finish().0)
    }
}

impl ser::SerializeTupleStruct for Seq<'_> {
    type Ok = Made;
    type Error = Refused;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Refused> {
        self.push(value)
    }
    fn end(self) -> Result<Made, Refused> {
        Ok(self.finish().0)
    }
}

struct Map<'c> {
    convert: &'c mut Convert,
    entries: Vec<(regorus::Value, regorus::Value)>,
    key: Option<regorus::Value>,
    shareable: bool,
}

impl Map<'_> {
    fn entry<T: Serialize + ?Sized>(&mut self, key: regorus::Value, value: &T) -> Result<(), Refused> {
        let made = value.serialize(Build(&mut *self.convert))?;
        self.shareable &= made.1;
        let value = member(self.convert, made);
        self.entries.push((key, value));
        Ok(())
    }
}

impl<'c> Finish<'c> for Map<'c> {
    fn finish(self) -> (Made, &'c mut Convert) {
        // Of equal keys the last, as serde_json's map keeps it.
        ((self.convert.object(self.entries), self.shareable), self.convert)
    }
}

impl ser::SerializeMap for Map<'_> {
    type Ok = Made;
    type Error = Refused;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Refused> {
        self.key = Some(key.serialize(Key(&mut *self.convert))?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Refused> {
        let key = self
            .key
            .take()
            .ok_or_else(|| Refused("a map value without its key".into()))?;
        self.entry(key, value)
    }
    fn end(self) -> Result<Made, Refused> {
        Ok(self.finish().0)
    }
}

impl ser::SerializeStruct for Map<'_> {
    type Ok = Made;
    type Error = Refused;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Refused> {
        let key = self.convert.static_key(key);
        self.entry(key, value)
    }
    fn end(self) -> Result<Made, Refused> {
        Ok(self.finish().0)
    }
}

/// A compound value ends, giving back the converter it borrowed.
trait Finish<'c> {
    fn finish(self) -> (Made, &'c mut Convert);
}

/// An enum's variant with fields: `{variant: fields}`.
struct Variant<I> {
    name: &'static str,
    inner: I,
}

impl<'c, I: Finish<'c>> Variant<I> {
    fn end(self) -> Made {
        let (made, convert) = self.inner.finish();
        single(convert, self.name, made)
    }
}

impl<'c> ser::SerializeTupleVariant for Variant<Seq<'c>> {
    type Ok = Made;
    type Error = Refused;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Refused> {
        self.inner.push(value)
    }
    fn end(self) -> Result<Made, Refused> {
        Ok(Variant::end(self))
    }
}

impl<'c> ser::SerializeStructVariant for Variant<Map<'c>> {
    type Ok = Made;
    type Error = Refused;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Refused> {
        let key = self.inner.convert.static_key(key);
        self.inner.entry(key, value)
    }
    fn end(self) -> Result<Made, Refused> {
        Ok(Variant::end(self))
    }
}

/// A map's key: a text, as serde_json takes it (an enum's unit variant by
/// its name); anything else is refused (serde_json's own rules for number
/// or boolean keys are left to it).
struct Key<'c>(&'c mut Convert);

impl Key<'_> {
    fn refuse<T>(&self) -> Result<T, Refused> {
        Err(Refused("a map key that is not a text".into()))
    }
}

type NoKey = Impossible<regorus::Value, Refused>;

impl ser::Serializer for Key<'_> {
    type Ok = regorus::Value;
    type Error = Refused;
    type SerializeSeq = NoKey;
    type SerializeTuple = NoKey;
    type SerializeTupleStruct = NoKey;
    type SerializeTupleVariant = NoKey;
    type SerializeMap = NoKey;
    type SerializeStruct = NoKey;
    type SerializeStructVariant = NoKey;

    fn serialize_str(self, v: &str) -> Result<regorus::Value, Refused> {
        Ok(self.0.key(v))
    }
    fn serialize_char(self, v: char) -> Result<regorus::Value, Refused> {
        Ok(self.0.key(v.encode_utf8(&mut [0; 4])))
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<regorus::Value, Refused> {
        Ok(self.0.static_key(variant))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<regorus::Value, Refused> {
        value.serialize(self)
    }
    fn serialize_bool(self, _: bool) -> Result<regorus::Value, Refused> {
        self.refuse()
    }
    fn serialize_i8(self, _: i8) -> Result<regorus::Value, Refused> {
        self.refuse()
    }
    fn serialize_i16(self, _: i16) -> Result<regorus::Value, Refused> {
        self.refuse()
    }
    fn serialize_i32(self, _: i32) -> Result<regorus::Value, Refused> {
        self.refuse()
    }
    fn serialize_i64(self, _: i64) -> Result<regorus::Value, Refused> {
        self.refuse()
    }
    fn serialize_u8(self, _: u8) -> Result<regorus::Value, Refused> {
        self.refuse()
    }
    fn serialize_u16(self, _: u16) -> Result<regorus::Value, Refused> {
        self.refuse()
    }
    fn serialize_u32(self, _: u32) -> Result<regorus::Value, Refused> {
        self.refuse()
    }
    fn serialize_u64(self, _: u64) -> Result<regorus::Value, Refused> {
        self.refuse()
    }
    fn serialize_f32(self, _: f32) -> Result<regorus::Value, Refused> {
        self.refuse()
    }
    fn serialize_f64(self, _: f64) -> Result<regorus::Value, Refused> {
        self.refuse()
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<regorus::Value, Refused> {
        self.refuse()
    }
    fn serialize_none(self) -> Result<regorus::Value, Refused> {
        self.refuse()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<regorus::Value, Refused> {
        self.refuse()
    }
    fn serialize_unit(self) -> Result<regorus::Value, Refused> {
        self.refuse()
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<regorus::Value, Refused> {
        self.refuse()
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<regorus::Value, Refused> {
        self.refuse()
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<NoKey, Refused> {
        self.refuse()
    }
    fn serialize_tuple(self, _: usize) -> Result<NoKey, Refused> {
        self.refuse()
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<NoKey, Refused> {
        self.refuse()
    }
    fn serialize_tuple_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<NoKey, Refused> {
        self.refuse()
    }
    fn serialize_map(self, _: Option<usize>) -> Result<NoKey, Refused> {
        self.refuse()
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<NoKey, Refused> {
        self.refuse()
    }
    fn serialize_struct_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<NoKey, Refused> {
        self.refuse()
    }
}
