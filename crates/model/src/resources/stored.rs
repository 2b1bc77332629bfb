//! The parse cache's form of a check (`.monform/cache`, monform-config):
//! `[checkType, {"c": its shared fields, "s": its type's own}]`, read
//! straight into its parts. serde reads a check's JSON form (tagged by
//! `checkType`, two flattened structs) by buffering all of it and then each
//! part again: that was most of a cached load of 100,000 checks. The JSON
//! form itself, as a `Value` the loader built, is also read straight into
//! its parts ([`check_from_value`]): each part from the one map.

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

/// A check from its JSON form (what `Check`'s derived `Deserialize`
/// reads, with the same result): its `checkType`, then the shared fields
/// and the type's own each read from the same map, which each ignores the
/// other's keys as flattening does. Without the buffering the derived form
/// does, a validated check is read in a fraction of the time (it was 7% of
/// a 100,000-check `validate`).
pub fn check_from_value(value: &serde_json::Value) -> Result<Check, serde_json::Error> {
    fn typed<'v, T: Deserialize<'v>>(value: &'v serde_json::Value) -> Result<Typed<T>, serde_json::Error> {
        Ok(Typed {
            common: CheckCommon::deserialize(value)?,
            spec: T::deserialize(value)?,
        })
    }
    if !value.is_object() {
        // The derived form's own error for what is not a check at all.
        return serde_json::from_value(value.clone());
    }
    let Some(check_type) = value.get("checkType") else {
        return Err(de::Error::missing_field("checkType"));
    };
    Ok(match CheckType::deserialize(check_type)? {
        CheckType::Agentic => Check::Agentic(typed(value)?),
        CheckType::Api => Check::Api(typed(value)?),
        CheckType::Browser => Check::Browser(typed(value)?),
        CheckType::Heartbeat => Check::Heartbeat(typed(value)?),
        CheckType::Icmp => Check::Icmp(typed(value)?),
        CheckType::MultiStep => Check::MultiStep(typed(value)?),
        CheckType::Tcp => Check::Tcp(typed(value)?),
        CheckType::Playwright => Check::Playwright(typed(value)?),
        CheckType::Url => Check::Url(typed(value)?),
        CheckType::Dns => Check::Dns(typed(value)?),
    })
}

/// A check from its stored form, from any deserializer.
pub fn check_from_stored<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Check, D::Error> {
    Stored::deserialize(deserializer).map(|stored| stored.0)
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
        let check_from_str = |text: &str| crate::Resource::from_stored_str(crate::Kind::Check, text);
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
            assert_eq!(check_from_str(text).unwrap(), crate::Resource::Check(check), "{text}");
            let longer = format!("{},1]", &text[..text.len() - 1]);
            assert!(check_from_str(&longer).is_err(), "{longer}");
        }
        for wrong in ["[]", "[\"API\"]", "[\"NOPE\", {}]", "{\"checkType\": \"API\"}"] {
            assert!(check_from_str(wrong).is_err(), "{wrong}");
        }
    }

    /// `check_from_value` reads what the derived form reads, and refuses
    /// what it refuses.
    #[test]
    fn the_json_form_read_in_parts_is_the_derived_form() {
        use serde_json::json;
        let derived = |v: &serde_json::Value| serde_json::from_value::<Check>(v.clone());
        let mut cases = Vec::new();
        for &check_type in CheckType::ALL {
            let mut sample = crate::samples::check_spec(check_type, 3);
            let common = json!({
                "checkType": check_type, "name": "Shop", "activated": false, "tags": ["a", "b"],
                "locations": ["eu-west-1"], "group": "g", "groupOrder": 2, "frequency": 10,
                "unknownField": {"ignored": true},
            });
            for (key, value) in common.as_object().unwrap() {
                sample[key] = value.clone();
            }
            cases.push(sample.clone());
            // Without the optional shared fields, and with a wrong type in one.
            for key in ["tags", "locations", "group", "groupOrder", "activated"] {
                let mut without = sample.clone();
                without.as_object_mut().unwrap().remove(key);
                cases.push(without);
            }
            let mut wrong = sample.clone();
            wrong["frequency"] = json!("often");
            cases.push(wrong);
        }
        cases.extend([
            json!(null),
            json!([]),
            json!({}),
            json!({"checkType": "NOPE"}),
            json!({"checkType": 3}),
        ]);
        for case in &cases {
            match (check_from_value(case), derived(case)) {
                (Ok(fast), Ok(slow)) => assert_eq!(fast, slow, "{case}"),
                (Err(_), Err(_)) => {}
                (fast, slow) => panic!("{case}: {fast:?} against {slow:?}"),
            }
        }
        assert!(cases.iter().filter(|c| derived(c).is_ok()).count() >= 10);
    }
}
