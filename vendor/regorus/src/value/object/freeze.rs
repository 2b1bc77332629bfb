// Copyright (c) Microsoft Corporation.
// Licensed under the MIT License.

//! Freeze/thaw transitions between mutable `BTree` storage and compact
//! read-mostly `Frozen` boxed-slice storage.

use alloc::boxed::Box;
use alloc::vec::Vec;

use super::{Object, Repr};
use crate::value::Value;

impl Object {
    /// Convert to the immutable boxed-slice representation.
    pub(crate) fn freeze(mut self) -> Self {
        self.freeze_in_place();
        self
    }

    /// An object of `entries` made directly in compact storage: sorted by
    /// key, the last of equal keys kept (as collecting them into a
    /// `BTreeMap` keeps it), without the B-tree that `From<BTreeMap>` takes
    /// and `freeze` then copies into a slice.
    pub(crate) fn from_entries(mut entries: Vec<(Value, Value)>) -> Self {
        // Stable: of equal keys, the later stays after the earlier.
        entries.sort_by(|a, b| super::key_order(&a.0, &b.0));
        entries.dedup_by(|later, earlier| {
            let equal = later.0 == earlier.0;
            if equal {
                core::mem::swap(&mut later.1, &mut earlier.1);
            }
            equal
        });
        Self {
            repr: Repr::Frozen(entries.into_boxed_slice()),
        }
    }

    /// Wrap into a `Value::Object`.
    #[inline]
    pub fn into_value(self) -> Value {
        Value::Object(crate::Rc::new(self.freeze()))
    }

    #[cfg(test)]
    #[doc(hidden)]
    pub(crate) const fn storage_variant_for_memory_diagnostics(&self) -> &'static str {
        match &self.repr {
            Repr::Empty => "Empty",
            Repr::Frozen(_) => "Frozen",
            Repr::BTree(_) => "BTree",
        }
    }

    fn freeze_in_place(&mut self) {
        match core::mem::take(&mut self.repr) {
            Repr::Empty => {
                self.repr = Repr::Frozen(Box::new([]));
            }
            Repr::Frozen(v) => {
                debug_assert_sorted_dedup(&v);
                self.repr = Repr::Frozen(v);
            }
            Repr::BTree(m) => {
                let boxed = m.into_iter().collect::<Vec<_>>().into_boxed_slice();
                // Release-critical invariant: BTreeMap iteration is sorted and deduplicated
                // before Frozen binary-search storage is constructed.
                debug_assert_sorted_dedup(&boxed);
                self.repr = Repr::Frozen(boxed);
            }
        }
    }

    pub(super) fn thawed_repr(v: Box<[(Value, Value)]>) -> Repr {
        debug_assert_sorted_dedup(&v);
        if v.is_empty() {
            Repr::Empty
        } else {
            Repr::BTree(Vec::from(v).into_iter().collect())
        }
    }

    pub(super) fn thaw(&mut self) {
        let repr = core::mem::take(&mut self.repr);
        self.repr = match repr {
            Repr::Frozen(v) => Self::thawed_repr(v),
            other => other,
        };
    }
}

#[cfg(debug_assertions)]
fn debug_assert_sorted_dedup(v: &[(Value, Value)]) {
    // This debug-only check documents a release-critical invariant: Frozen storage is
    // always sorted and deduplicated by construction, and release binary searches depend on it.
    for pair in v.windows(2) {
        debug_assert!(
            pair[0].0.cmp(&pair[1].0).is_lt(),
            "Object Frozen entries must be strictly sorted and deduplicated; \
             TODO(Number): revisit NaN ordering/equality semantics in src/number.rs:290-316"
        );
    }
}

#[cfg(not(debug_assertions))]
#[inline]
fn debug_assert_sorted_dedup(_: &[(Value, Value)]) {}
