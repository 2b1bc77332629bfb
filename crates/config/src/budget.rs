//! How much one file may expand to. A YAML alias repeats a whole value, a
//! `forEach` copies its definition once per item and a substitution copies
//! a variable into every string naming it: a 100 KB file could ask for
//! gigabytes. Every copy is charged, at its size in memory, to the budget
//! of the file it is made for; past the limit the load reports the file
//! and line that asked for more, and stops expanding it.

use std::cell::Cell;

use crate::tree::{Entry, Node, NodeValue};

/// The most one resource file may expand to, in bytes of values: its
/// strings and keys by their length, every value and key by the size of
/// its slot (`VALUE_BYTES`, `ENTRY_BYTES`), an alias, a `forEach` item or a
/// substitution by all it repeats. A file of 20,000 API checks (9 MB of
/// YAML) takes 69 MB of it (measured); the limit stops expansion bombs,
/// not real projects.
pub const MAX_EXPANDED_BYTES: usize = 128 << 20;

/// The slot of a value (a list item, a map's value, the document).
pub const VALUE_BYTES: usize = std::mem::size_of::<Node>();

/// The slot of a map entry beyond its value: the key and its span.
pub const ENTRY_BYTES: usize = std::mem::size_of::<Entry>() - std::mem::size_of::<Node>();

/// The bytes one file has expanded to so far. Used by one task (a file is
/// loaded by one thread), hence a `Cell`.
#[derive(Debug)]
pub struct Budget {
    used: Cell<usize>,
    limit: usize,
}

/// A file expanded past its budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exceeded {
    pub limit: usize,
}

/// How `Exceeded::message` begins.
pub const EXCEEDED: &str = "the file expands to more than";

impl Exceeded {
    pub fn message(&self) -> String {
        format!(
            "{EXCEEDED} {} MiB of values (aliases, forEach items and substitutions counted by what they repeat)",
            self.limit >> 20
        )
    }
}

impl Default for Budget {
    fn default() -> Budget {
        Budget::new(MAX_EXPANDED_BYTES)
    }
}

impl Budget {
    pub fn new(limit: usize) -> Budget {
        Budget {
            used: Cell::new(0),
            limit,
        }
    }

    /// Adds `bytes`; an error once the total passes the limit (and every
    /// time after: a file past its budget stays past it).
    pub fn charge(&self, bytes: usize) -> Result<(), Exceeded> {
        let used = self.used.get().saturating_add(bytes);
        self.used.set(used);
        if used > self.limit {
            return Err(Exceeded { limit: self.limit });
        }
        Ok(())
    }

    pub fn used(&self) -> usize {
        self.used.get()
    }

    /// Whether the file went past its budget: it was reported, and
    /// nothing more of it is expanded.
    pub fn is_spent(&self) -> bool {
        self.used.get() > self.limit
    }

    pub fn remaining(&self) -> usize {
        self.limit.saturating_sub(self.used.get())
    }

    pub fn limit(&self) -> usize {
        self.limit
    }
}

/// What `node` takes, as the budget counts it. Iterative: a value may be
/// deep (its depth is bounded where it is parsed, but not here).
pub fn weight(node: &Node) -> usize {
    let mut total = 0usize;
    let mut stack = vec![node];
    while let Some(node) = stack.pop() {
        total = total.saturating_add(VALUE_BYTES);
        match &node.value {
            NodeValue::Str(s) => total = total.saturating_add(s.len()),
            NodeValue::Seq(items) => stack.extend(items),
            NodeValue::Map(entries) => {
                for entry in entries {
                    total = total.saturating_add(ENTRY_BYTES + entry.key.len());
                    stack.push(&entry.value);
                }
            }
            NodeValue::Null | NodeValue::Bool(_) | NodeValue::Int(_) | NodeValue::Float(_) => {}
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::parse_yaml;

    #[test]
    fn charges_add_up_to_the_limit_and_no_further() {
        let budget = Budget::new(100);
        assert_eq!(budget.charge(60), Ok(()));
        assert_eq!(budget.charge(40), Ok(()));
        assert_eq!(budget.charge(1), Err(Exceeded { limit: 100 }));
        assert_eq!(budget.charge(0), Err(Exceeded { limit: 100 }));
    }

    #[test]
    fn weight_counts_slots_keys_and_text() {
        let node = parse_yaml(0, "ab: xyz\nc: [1, 2]\n").unwrap();
        let expected = VALUE_BYTES // the map
            + ENTRY_BYTES + 2 + VALUE_BYTES + 3 // ab: xyz
            + ENTRY_BYTES + 1 + 3 * VALUE_BYTES; // c: [1, 2]
        assert_eq!(weight(&node), expected);
    }
}
