//! The parse cache's form of a check (`.monform/cache`, monform-config):
//! `[checkType, {"c": its shared fields, "s": its type's own}]`, read
//! straight into its parts. serde reads a check's JSON form (tagged by
//! `checkType`, two flattened structs) by buffering all of it and then each
//! part again: that was most of a cached load of 100,000 checks.

use serde::de::{self, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;

use super::check::{Check, CheckCommon, CheckType, Typed};

#[derive(Serialize)]
struct PartsRef<'a, T> {
    c: &'a CheckCommon,
    s: &'a T,
}

#[derive(Deserialize)]
struct Parts<T> {
    c: CheckCommon,
    s: T,
}

/// `check` in the stored form.
pub fn check_to_raw(check: &Check) -> Box<RawValue> {
    fn text<T: Serialize>(check_type: CheckType, typed: &Typed<T>) -> Box<RawValue> {
        let parts = PartsRef {
            c: &typed.common,
            s: &typed.spec,
        };
        // Plain data: serializing cannot fail (and null reads back as no check).
        serde_json::value::to_raw_value(&(check_type, parts)).unwrap_or_else(|_| RawValue::NULL.to_owned())
    }
    let check_type = check.check_type();
    match check {
        Check::Agentic(c) => text(check_type, c),
        Check::Api(c) => text(check_type, c),
        Check::Browser(c) => text(check_type, c),
        Check::Heartbeat(c) => text(check_type, c),
        Check::Icmp(c) => text(check_type, c),
        Check::MultiStep(c) => text(check_type, c),
        Check::Tcp(c) => text(check_type, c),
        Check::Playwright(c) => text(check_type, c),
        Check::Url(c) => text(check_type, c),
        Check::Dns(c) => text(check_type, c),
    }
}

/// A check from its stored form.
pub fn check_from_str(text: &str) -> Result<Check, serde_json::Error> {
    serde_json::from_str::<Stored>(text).map(|stored| stored.0)
}

struct Stored(Check);

impl<'de> Deserialize<'de> for Stored {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Stored, D::Error> {
        deserializer.deserialize_seq(StoredVisitor)
    }
}

const EXPECTING: &str = "a stored check: [checkType, {c, s}]";

struct StoredVisitor;

impl<'de> Visitor<'de> for StoredVisitor {
    type Value = Stored;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(EXPECTING)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Stored, A::Error> {
        fn typed<'de, A: SeqAccess<'de>, T: Deserialize<'de>>(seq: &mut A) -> Result<Typed<T>, A::Error> {
            let parts: Parts<T> = seq
                .next_element()?
                .ok_or_else(|| de::Error::invalid_length(1, &EXPECTING))?;
            Ok(Typed {
                common: parts.c,
                spec: parts.s,
            })
        }
        let check_type: CheckType = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(0, &EXPECTING))?;
        let seq = &mut seq;
        Ok(Stored(match check_type {
            CheckType::Agentic => Check::Agentic(typed(seq)?),
            CheckType::Api => Check::Api(typed(seq)?),
            CheckType::Browser => Check::Browser(typed(seq)?),
            CheckType::Heartbeat => Check::Heartbeat(typed(seq)?),
            CheckType::Icmp => Check::Icmp(typed(seq)?),
            CheckType::MultiStep => Check::MultiStep(typed(seq)?),
            CheckType::Tcp => Check::Tcp(typed(seq)?),
            CheckType::Playwright => Check::Playwright(typed(seq)?),
            CheckType::Url => Check::Url(typed(seq)?),
            CheckType::Dns => Check::Dns(typed(seq)?),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every check type's sample, with every field it can hold, reads back
    /// equal from its stored form; a wrong form is an error, not a panic.
    #[test]
    fn every_check_type_round_trips_through_its_stored_form() {
        for &check_type in CheckType::ALL {
            let mut sample = crate::samples::check_spec(check_type, 7);
            let common = serde_json::json!({
                "checkType": check_type, "name": "Shop", "activated": false, "tags": ["a", "b"],
                "locations": ["eu-west-1"], "group": "g", "groupOrder": 2, "frequency": 10,
            });
            for (key, value) in common.as_object().unwrap() {
                sample[key] = value.clone();
            }
            let check: Check = serde_json::from_value(sample).unwrap();
            let raw = check_to_raw(&check);
            let text = raw.get();
            assert_eq!(check_from_str(text).unwrap(), check, "{text}");
            let longer = format!("{},1]", &text[..text.len() - 1]);
            assert!(check_from_str(&longer).is_err(), "{longer}");
        }
        for wrong in ["[]", "[\"API\"]", "[\"NOPE\", {}]", "{\"checkType\": \"API\"}"] {
            assert!(check_from_str(wrong).is_err(), "{wrong}");
        }
    }
}
