//! `--exclude` patterns (issue 30): an address in which `*` stands for any
//! characters, such as `checks.api[*]` (every item of a `forEach`),
//! `checks.*` or `*.legacy-*`. Only `*` is special: `[` and `]` are the
//! address's own brackets, not a glob's character classes.

use std::fmt;
use std::str::FromStr;

use crate::{Address, Kind};

/// A pattern over addresses.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AddressPattern {
    text: String,
}

impl AddressPattern {
    pub fn matches(&self, address: &Address) -> bool {
        glob(self.text.as_bytes(), address.to_string().as_bytes())
    }
}

/// `*` matches any run of bytes (iterative, with one backtrack point: linear
/// in practice, never exponential).
fn glob(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && pattern[p] == b'*' {
            star = Some((p, t));
            p += 1;
        } else if p < pattern.len() && pattern[p] == text[t] {
            p += 1;
            t += 1;
        } else if let Some((star_p, star_t)) = star {
            p = star_p + 1;
            t = star_t + 1;
            star = Some((star_p, star_t + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&b| b == b'*')
}

impl fmt::Display for AddressPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Why a pattern is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    #[error("`{0}` is not of the form <section>.<logical-id>, where `*` stands for any characters")]
    Shape(String),
    #[error("unknown section `{0}`; sections are {1}")]
    Section(String, String),
}

impl FromStr for AddressPattern {
    type Err = PatternError;

    fn from_str(text: &str) -> Result<AddressPattern, PatternError> {
        let Some((section, id)) = text.split_once('.') else {
            return Err(PatternError::Shape(text.to_owned()));
        };
        if id.is_empty() || text.chars().any(char::is_whitespace) {
            return Err(PatternError::Shape(text.to_owned()));
        }
        if !section.contains('*') && Kind::from_section(section).is_none() {
            let sections = Kind::sections().collect::<Vec<_>>().join(", ");
            return Err(PatternError::Section(section.to_owned(), sections));
        }
        Ok(AddressPattern { text: text.to_owned() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, address: &str) -> bool {
        let pattern: AddressPattern = pattern.parse().unwrap();
        pattern.matches(&address.parse().unwrap())
    }

    #[test]
    fn stars_match_any_characters_and_brackets_are_literal() {
        assert!(matches("checks.api[*]", "checks.api[orders]"));
        assert!(!matches("checks.api[*]", "checks.api"));
        assert!(!matches("checks.api[*]", "checks.apix[orders]"));
        assert!(matches("checks.*", "checks.api[orders]"));
        assert!(matches("*.legacy-*", "groups.legacy-eu"));
        assert!(!matches("*.legacy-*", "groups.new-legacy"));
        assert!(matches("checks.home", "checks.home"));
        assert!(!matches("checks.home", "checks.homepage"));
        assert!(matches("checks.*-ping", "checks.a-ping-b-ping"));
    }

    #[test]
    fn malformed_patterns_are_refused() {
        assert!(matches!(
            "checks".parse::<AddressPattern>(),
            Err(PatternError::Shape(_))
        ));
        assert!(matches!(
            "checks.".parse::<AddressPattern>(),
            Err(PatternError::Shape(_))
        ));
        assert!(matches!(
            "chekcs.a".parse::<AddressPattern>(),
            Err(PatternError::Section(..))
        ));
    }
}
