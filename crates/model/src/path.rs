//! Paths to a field inside a resource, such as `request.assertions[0].source`.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Segment {
    Key(String),
    Index(usize),
}

/// A path from a resource's root to one of its fields.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FieldPath(pub Vec<Segment>);

impl FieldPath {
    pub fn root() -> FieldPath {
        FieldPath(Vec::new())
    }

    pub fn key(&self, key: &str) -> FieldPath {
        let mut segments = self.0.clone();
        segments.push(Segment::Key(key.to_owned()));
        FieldPath(segments)
    }

    pub fn index(&self, index: usize) -> FieldPath {
        let mut segments = self.0.clone();
        segments.push(Segment::Index(index));
        FieldPath(segments)
    }

    pub fn segments(&self) -> &[Segment] {
        &self.0
    }

    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `prefix` is this path or one of its ancestors.
    pub fn starts_with(&self, prefix: &FieldPath) -> bool {
        self.0.starts_with(&prefix.0)
    }

    /// The last key of the path: the field's own name.
    pub fn field_name(&self) -> Option<&str> {
        self.0.iter().rev().find_map(|s| match s {
            Segment::Key(k) => Some(k.as_str()),
            Segment::Index(_) => None,
        })
    }

    /// The value at this path inside `value`, if there is one.
    pub fn get<'v>(&self, value: &'v serde_json::Value) -> Option<&'v serde_json::Value> {
        self.0.iter().try_fold(value, |current, segment| match segment {
            Segment::Key(k) => current.get(k),
            Segment::Index(i) => current.get(*i),
        })
    }

    /// Parses the dotted form written by `Display` (`a.b[2].c`).
    pub fn parse(text: &str) -> FieldPath {
        let mut segments = Vec::new();
        for part in text.split('.').filter(|p| !p.is_empty()) {
            let (name, mut rest) = match part.find('[') {
                Some(i) => (&part[..i], &part[i..]),
                None => (part, ""),
            };
            if !name.is_empty() {
                segments.push(Segment::Key(name.to_owned()));
            }
            while let Some(end) = rest.find(']') {
                if let Ok(i) = rest[1..end].parse() {
                    segments.push(Segment::Index(i));
                }
                rest = &rest[end + 1..];
            }
        }
        FieldPath(segments)
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.0.iter().enumerate() {
            match segment {
                Segment::Key(k) if i == 0 => write!(f, "{k}")?,
                Segment::Key(k) => write!(f, ".{k}")?,
                Segment::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_and_parse_round_trip() {
        let path = FieldPath::root()
            .key("request")
            .key("assertions")
            .index(2)
            .key("source");
        assert_eq!(path.to_string(), "request.assertions[2].source");
        assert_eq!(FieldPath::parse("request.assertions[2].source"), path);
        assert_eq!(path.field_name(), Some("source"));
    }
}
