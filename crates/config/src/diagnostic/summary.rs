//! Many findings of one rule, summarised: the first in full, the next few
//! by place, then a count. The terminal's diagnostics, the Markdown plan's
//! policy list and the reconciler's log all write this shape, so a rule
//! that finds something in each of 100,000 checks costs what a few do.

use std::collections::HashMap;
use std::hash::Hash;

use super::Diagnostic;

/// How many of one rule's findings are named before the rest are only
/// counted: the first in full, the next by place.
pub const SHOWN: usize = 3;

/// One thing to write: an item in full, or the summary of its rule.
#[derive(Debug, PartialEq)]
pub enum Item<'d, T> {
    Full(&'d T),
    /// Written after the first of a rule (written in full): the next few
    /// of it and how many there are in all.
    Summary {
        first: &'d T,
        next: Vec<&'d T>,
        total: usize,
    },
}

/// What to write for `items`, in their order: every one that
/// `summarised` leaves alone or whose rule (`key`) has at most [`SHOWN`];
/// else each rule's first in full, then its summary, and nothing per item
/// past that.
pub fn summarise<'d, T, K: Hash + Eq>(
    items: &'d [T],
    key: impl Fn(&T) -> K,
    summarised: impl Fn(&T) -> bool,
) -> Vec<Item<'d, T>> {
    let mut rules: HashMap<K, (usize, Vec<&'d T>)> = HashMap::new();
    for item in items.iter().filter(|i| summarised(i)) {
        let (total, named) = rules.entry(key(item)).or_default();
        *total += 1;
        if named.len() < SHOWN {
            named.push(item);
        }
    }
    let mut out = Vec::new();
    for item in items {
        let rule = summarised(item).then(|| &rules[&key(item)]);
        match rule {
            Some((total, named)) if *total > SHOWN => {
                if std::ptr::eq(named[0], item) {
                    out.push(Item::Full(item));
                    out.push(Item::Summary {
                        first: item,
                        next: named[1..].to_vec(),
                        total: *total,
                    });
                }
            }
            _ => out.push(Item::Full(item)),
        }
    }
    out
}

/// [`summarise`] of diagnostics, a rule being a code at one severity (a
/// code that warns here and errs there is two rules).
pub fn diagnostics<'d>(items: &'d [Diagnostic], summarised: impl Fn(&Diagnostic) -> bool) -> Vec<Item<'d, Diagnostic>> {
    summarise(items, |d| (d.code, d.severity), summarised)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_past_the_limit_is_its_first_and_a_summary() {
        let items = ["a1", "a2", "b1", "a3", "a4", "b2", "c1"];
        let rule = |i: &&str| i.as_bytes()[0];
        let shown = summarise(&items, rule, |i| !i.starts_with('c'));
        assert_eq!(
            shown,
            vec![
                Item::Full(&"a1"),
                Item::Summary {
                    first: &"a1",
                    next: vec![&"a2", &"a3"],
                    total: 4
                },
                Item::Full(&"b1"),
                Item::Full(&"b2"),
                Item::Full(&"c1"),
            ]
        );
        // Left alone, a rule is written whole however many it finds.
        assert_eq!(summarise(&items, rule, |_| false).len(), items.len());
    }
}
