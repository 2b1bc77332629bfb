//! Addresses name one resource of the project: `<section>.<logical-id>`.

use std::fmt;
use std::str::FromStr;
use std::sync::LazyLock;

use crate::Kind;

/// Logical ids: letters, digits, `-` and `_`, starting with a letter or digit, at most 64 chars.
pub const LOGICAL_ID_PATTERN: &str = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$";

/// Subdomains the service serves status pages and dashboards on
/// (`customUrl`, `url`): lowercase letters, digits and `-`, at most 63 chars.
pub const SUBDOMAIN_PATTERN: &str = r"^[a-z0-9][a-z0-9-]{0,62}$";

static LOGICAL_ID: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(LOGICAL_ID_PATTERN).expect("valid pattern"));

pub fn is_valid_logical_id(id: &str) -> bool {
    LOGICAL_ID.is_match(id)
}

/// The id part of an address: a logical id, or `id[key]` for one item of a
/// `forEach` / `forEachFile` definition (both parts logical ids).
pub fn is_valid_address_id(id: &str) -> bool {
    match id.strip_suffix(']').and_then(|rest| rest.split_once('[')) {
        Some((base, key)) => is_valid_logical_id(base) && is_valid_logical_id(key),
        None => is_valid_logical_id(id),
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Address {
    pub kind: Kind,
    pub id: String,
}

impl Address {
    pub fn new(kind: Kind, id: impl Into<String>) -> Address {
        Address { kind, id: id.into() }
    }

    /// The address of item `key` of the definition `id`: `section.id[key]`.
    pub fn item(kind: Kind, id: &str, key: &str) -> Address {
        Address::new(kind, format!("{id}[{key}]"))
    }
}

/// Written as `section.logical-id`.
impl serde::Serialize for Address {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.kind.section(), self.id)
    }
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum AddressError {
    #[error("address `{0}` is not of the form <section>.<logical-id> or <section>.<logical-id>[<key>]")]
    Shape(String),
    #[error("unknown section `{0}`; sections are {1}")]
    Section(String, String),
    #[error(
        "`{0}` is not a valid logical id (letters, digits, - and _, starting with a letter or digit, at most 64; an item is id[key])"
    )]
    Id(String),
}

impl FromStr for Address {
    type Err = AddressError;

    fn from_str(text: &str) -> Result<Address, AddressError> {
        let (section, id) = text
            .split_once('.')
            .ok_or_else(|| AddressError::Shape(text.to_owned()))?;
        let kind = Kind::from_section(section).ok_or_else(|| {
            AddressError::Section(section.to_owned(), Kind::sections().collect::<Vec<_>>().join(", "))
        })?;
        if !is_valid_address_id(id) {
            return Err(AddressError::Id(id.to_owned()));
        }
        Ok(Address::new(kind, id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints() {
        let a: Address = "checks.homepage-ping".parse().unwrap();
        assert_eq!(a, Address::new(Kind::Check, "homepage-ping"));
        assert_eq!(a.to_string(), "checks.homepage-ping");
        let item: Address = "checks.api[users]".parse().unwrap();
        assert_eq!(item, Address::item(Kind::Check, "api", "users"));
        assert_eq!(item.to_string(), "checks.api[users]");
    }

    #[test]
    fn rejects_bad_addresses() {
        assert!(matches!("checks".parse::<Address>(), Err(AddressError::Shape(_))));
        assert!(matches!("chekcs.a".parse::<Address>(), Err(AddressError::Section(..))));
        assert!(matches!("checks.-a".parse::<Address>(), Err(AddressError::Id(_))));
        for bad in [
            "checks.a[]",
            "checks.a[b",
            "checks.a[b]c",
            "checks.[b]",
            "checks.a[b][c]",
            "checks.a[b.c]",
        ] {
            assert!(bad.parse::<Address>().is_err(), "{bad}");
        }
        let long = format!("checks.{}", "a".repeat(65));
        assert!(matches!(long.parse::<Address>(), Err(AddressError::Id(_))));
    }
}
