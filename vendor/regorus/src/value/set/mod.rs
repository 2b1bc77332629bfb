// Copyright (c) Microsoft Corporation.
// Licensed under the MIT License.

//! See [`Set`].

mod iter;
mod serde;

use alloc::collections::BTreeSet;
use core::cmp::Ordering;
use core::fmt;
use core::ops::Bound;

use alloc::vec::Vec;

use crate::value::Value;

#[allow(unused_imports)] // surface for downstream PRs
pub use iter::{IntoIter, Iter};
use iter::IterInner;

/// Opaque, ordered set of [`Value`]s.
///
/// The backing storage is a sorted vector while every element arrived
/// greater than the ones before it (a rule's results over a sorted
/// collection: one comparison an insert), else a `BTreeSet<Value>`. The
/// inner field is private so the representation can change (hash-backed,
/// lazy, bloom-fronted, FFI-backed) without touching call sites.
///
/// # Iteration
///
/// - [`Set::iter`] — implementation-defined order; non-resumable.
/// - [`Set::iter_sorted`] — sorted by `Value::Ord`; non-resumable.
/// - [`Set::cursor`] / [`Set::next`] — implementation-defined order,
///   resumable; cheapest per-step cost. Used by interpreter/RVM when iteration
///   must yield mid-flight.
#[derive(Clone)]
pub struct Set {
    repr: Repr,
}

#[derive(Clone)]
pub(super) enum Repr {
    /// Strictly increasing (by `Value::Ord`): built by inserting each
    /// element after the last. Becomes `Tree` on the first insert that is
    /// not (or a removal), so no insert costs more than a B-tree's.
    Sorted(Vec<Value>),
    Tree(BTreeSet<Value>),
}

impl Default for Set {
    #[inline]
    fn default() -> Self {
        Self::new()
    }
}

impl PartialEq for Set {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter_sorted().eq(other.iter_sorted())
    }
}

impl Eq for Set {}

impl Set {
    /// Create an empty `Set`.
    #[inline]
    pub const fn new() -> Self {
        Self {
            repr: Repr::Sorted(Vec::new()),
        }
    }

    /// The elements as a B-tree (a sorted vector converted once, in O(n)).
    fn tree_mut(&mut self) -> &mut BTreeSet<Value> {
        if let Repr::Sorted(ref mut items) = self.repr {
            // Strictly increasing: `from_iter`'s sort is one pass, no
            // duplicates to drop.
            let tree: BTreeSet<Value> = core::mem::take(items).into_iter().collect();
            self.repr = Repr::Tree(tree);
        }
        match self.repr {
            Repr::Tree(ref mut tree) => tree,
            Repr::Sorted(_) => unreachable!("converted above"),
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        match self.repr {
            Repr::Sorted(ref items) => items.len(),
            Repr::Tree(ref tree) => tree.len(),
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    pub fn contains(&self, value: &Value) -> bool {
        self.get(value).is_some()
    }

    #[inline]
    pub fn get(&self, value: &Value) -> Option<&Value> {
        match self.repr {
            Repr::Sorted(ref items) => items.binary_search(value).ok().and_then(|i| items.get(i)),
            Repr::Tree(ref tree) => tree.get(value),
        }
    }

    /// First element in sorted order (by `Value::Ord`).
    #[inline]
    pub fn first(&self) -> Option<&Value> {
        self.iter_sorted().next()
    }

    /// Last element in sorted order (by `Value::Ord`).
    #[inline]
    pub fn last(&self) -> Option<&Value> {
        self.iter_sorted().next_back()
    }

    /// Iteration in implementation-defined order. Non-resumable.
    ///
    /// For the current BTree-backed storage this happens to be sorted, but
    /// callers MUST NOT depend on that. Use [`Set::iter_sorted`] when
    /// deterministic order is required, or [`Set::cursor`] when iteration
    /// must yield and resume.
    #[inline]
    pub fn iter(&self) -> Iter<'_> {
        self.iter_sorted()
    }

    /// Iteration in sorted order (by `Value::Ord`). Non-resumable.
    ///
    /// Use this for serialization, snapshots, hashing, `Debug`, etc.
    #[inline]
    pub fn iter_sorted(&self) -> Iter<'_> {
        // Both backends iterate sorted natively.
        Iter {
            inner: match self.repr {
                Repr::Sorted(ref items) => IterInner::Sorted(items.iter()),
                Repr::Tree(ref tree) => IterInner::Tree(tree.iter()),
            },
        }
    }

    /// Insert `value`. Returns `true` if the value was newly inserted.
    #[inline]
    pub fn insert(&mut self, value: Value) -> bool {
        if let Repr::Sorted(ref mut items) = self.repr {
            match items.last().map(|last| value.cmp(last)) {
                None | Some(Ordering::Greater) => {
                    items.push(value);
                    return true;
                }
                // Present: kept, as `BTreeSet::insert` keeps it.
                Some(Ordering::Equal) => return false,
                Some(Ordering::Less) => {}
            }
        }
        self.tree_mut().insert(value)
    }

    #[inline]
    pub fn remove(&mut self, value: &Value) -> bool {
        self.tree_mut().remove(value)
    }

    #[inline]
    pub fn retain<F>(&mut self, f: F)
    where
        F: FnMut(&Value) -> bool,
    {
        match self.repr {
            Repr::Sorted(ref mut items) => items.retain(f),
            Repr::Tree(ref mut tree) => tree.retain(f),
        }
    }

    #[inline]
    pub fn clear(&mut self) {
        self.repr = Repr::Sorted(Vec::new());
    }

    #[inline]
    pub fn append(&mut self, other: &mut Set) {
        let mut taken = core::mem::take(other);
        self.tree_mut().append(taken.tree_mut());
    }

    /// Set intersection. Returns a new `Set` containing the elements
    /// present in both `self` and `other`.
    pub fn intersection(&self, other: &Set) -> Set {
        self.merged(other, false, true, false)
    }

    /// Set union. Returns a new `Set` containing the elements present in
    /// either `self` or `other`.
    pub fn union(&self, other: &Set) -> Set {
        self.merged(other, true, true, true)
    }

    /// Set difference. Returns a new `Set` containing the elements present
    /// in `self` but not in `other`.
    pub fn difference(&self, other: &Set) -> Set {
        self.merged(other, true, false, false)
    }

    /// The elements of one sorted walk over both sets: those only in
    /// `self`, in both (`self`'s, as `BTreeSet`'s operations give them),
    /// only in `other`, each kept when its flag says so. In order, so the
    /// result is a sorted vector.
    fn merged(&self, other: &Set, only_self: bool, both: bool, only_other: bool) -> Set {
        let (mut a, mut b) = (self.iter_sorted().peekable(), other.iter_sorted().peekable());
        let mut out = Vec::new();
        loop {
            let order = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) => x.cmp(y),
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (None, None) => break,
            };
            match order {
                Ordering::Less => {
                    if let Some(x) = a.next() {
                        if only_self {
                            out.push(x.clone());
                        }
                    }
                }
                Ordering::Greater => {
                    if let Some(y) = b.next() {
                        if only_other {
                            out.push(y.clone());
                        }
                    }
                }
                Ordering::Equal => {
                    b.next();
                    if let Some(x) = a.next() {
                        if both {
                            out.push(x.clone());
                        }
                    }
                }
            }
        }
        Set {
            repr: Repr::Sorted(out),
        }
    }

    #[inline]
    pub fn is_subset(&self, other: &Set) -> bool {
        self.len() <= other.len() && self.iter_sorted().all(|v| other.contains(v))
    }

    /// Wrap into a `Value::Set`.
    #[inline]
    pub fn into_value(self) -> Value {
        Value::Set(crate::Rc::new(self))
    }

    /// Create a resumable cursor over elements in implementation-defined
    /// order. Stable for the lifetime of `&self`. O(1).
    ///
    /// The cursor is fully self-owned (it stores a clone of the last-seen
    /// element, not a reference) so it can be stored as a field of a
    /// long-lived state struct — e.g. an RVM iteration frame that persists
    /// across instruction dispatches. As a consequence, mutating the `Set`
    /// between `next()` calls is not rejected by the borrow checker; the
    /// resulting iteration order in that case is unspecified.
    #[inline]
    pub const fn cursor(&self) -> SetCursor {
        SetCursor {
            inner: SetCursorInner::BTree(None),
        }
    }

    /// Advance `cursor` and yield the next element. O(log n) for the BTree
    /// backend (range probe); future hash/inline variants may be O(1).
    pub fn next<'a>(&'a self, cursor: &mut SetCursor) -> Option<&'a Value> {
        let SetCursorInner::BTree(ref mut last) = cursor.inner;
        let next = match self.repr {
            Repr::Sorted(ref items) => match last.as_ref() {
                None => items.first(),
                Some(prev) => items.get(items.partition_point(|v| v <= prev)),
            },
            Repr::Tree(ref tree) => last.as_ref().map_or_else(
                || tree.iter().next(),
                |prev| {
                    // `(Bound<&T>, Bound<&T>)` impls `RangeBounds<T>` — no clone
                    // needed to build the resume bound.
                    tree.range((Bound::Excluded(prev), Bound::Unbounded))
                        .next()
                },
            ),
        };
        let v = next?;
        *last = Some(v.clone());
        Some(v)
    }
}

/// Opaque resumable cursor over a [`Set`]'s elements in
/// implementation-defined order.
///
/// Self-owned: holds no borrow on the `Set`, so it can be stored as a
/// field of a long-lived state struct (e.g. an RVM iteration frame).
#[derive(Debug, Clone)]
pub struct SetCursor {
    inner: SetCursorInner,
}

#[derive(Debug, Clone)]
enum SetCursorInner {
    /// BTree backend cursor: tracks last-seen element. `None` means "before start".
    BTree(Option<Value>),
}

// ---- Hand-written Ord/PartialOrd ----------------------------------------
//
// Implemented in terms of `iter_sorted()` so ordering is consistent with the
// canonical (sorted) view of the elements and is therefore independent of
// the storage variant.

impl Ord for Set {
    fn cmp(&self, other: &Self) -> Ordering {
        self.iter_sorted().cmp(other.iter_sorted())
    }
}

impl PartialOrd for Set {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Debug for Set {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Use sorted iteration so Debug output is stable across storage
        // variants.
        f.debug_set().entries(self.iter_sorted()).finish()
    }
}

impl Extend<Value> for Set {
    fn extend<I: IntoIterator<Item = Value>>(&mut self, iter: I) {
        for value in iter {
            self.insert(value);
        }
    }
}

impl FromIterator<Value> for Set {
    fn from_iter<I: IntoIterator<Item = Value>>(iter: I) -> Self {
        let items: Vec<Value> = iter.into_iter().collect();
        if items.windows(2).all(|w| w[0] < w[1]) {
            return Self {
                repr: Repr::Sorted(items),
            };
        }
        // `BTreeSet`'s own: sorted once, built in bulk, its choice among
        // equal elements.
        Self {
            repr: Repr::Tree(BTreeSet::from_iter(items)),
        }
    }
}

impl From<BTreeSet<Value>> for Set {
    #[inline]
    fn from(set: BTreeSet<Value>) -> Self {
        // An empty one (`Value::new_set`, a rule's results before the
        // first) starts as a sorted vector.
        if set.is_empty() {
            return Self::new();
        }
        Self {
            repr: Repr::Tree(set),
        }
    }
}

impl From<Set> for Value {
    #[inline]
    fn from(s: Set) -> Self {
        s.into_value()
    }
}
