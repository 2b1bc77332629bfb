// Copyright (c) Microsoft Corporation.
// Licensed under the MIT License.

//! Opaque iterator types for [`Set`].
//!
//! These newtypes wrap the storage backend's iterators so the backend can be
//! swapped without changing any iterator type signatures observed by callers.

use alloc::collections::btree_set;
use alloc::vec;
use core::slice;
use core::iter::FusedIterator;

use super::Set;
use crate::value::Value;

/// Owned iterator over `Value` elements.
#[derive(Debug)]
pub struct IntoIter {
    pub(super) inner: IntoIterInner,
}

/// The backend's owned iterator (see `Set`'s storage).
#[derive(Debug)]
pub(super) enum IntoIterInner {
    Sorted(vec::IntoIter<Value>),
    Tree(btree_set::IntoIter<Value>),
}

/// Calls one method of whichever backend iterator `$inner` holds.
macro_rules! either {
    ($inner:expr, $it:ident => $call:expr) => {
        match $inner {
            IntoIterInner::Sorted(ref mut $it) => $call,
            IntoIterInner::Tree(ref mut $it) => $call,
        }
    };
}

/// As `either!`, for the borrowed iterator.
macro_rules! either_ref {
    ($inner:expr, $it:ident => $call:expr) => {
        match $inner {
            IterInner::Sorted(ref mut $it) => $call,
            IterInner::Tree(ref mut $it) => $call,
        }
    };
}

impl Iterator for IntoIter {
    type Item = Value;
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        either!(self.inner, it => it.next())
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        match self.inner {
            IntoIterInner::Sorted(ref it) => it.size_hint(),
            IntoIterInner::Tree(ref it) => it.size_hint(),
        }
    }
}

impl DoubleEndedIterator for IntoIter {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        either!(self.inner, it => it.next_back())
    }
}

impl ExactSizeIterator for IntoIter {
    #[inline]
    fn len(&self) -> usize {
        match self.inner {
            IntoIterInner::Sorted(ref it) => it.len(),
            IntoIterInner::Tree(ref it) => it.len(),
        }
    }
}

impl FusedIterator for IntoIter {}

/// Borrowed iterator over `&Value` elements.
#[derive(Debug, Clone)]
pub struct Iter<'a> {
    pub(super) inner: IterInner<'a>,
}

/// The backend's borrowed iterator (see `Set`'s storage).
#[derive(Debug, Clone)]
pub(super) enum IterInner<'a> {
    Sorted(slice::Iter<'a, Value>),
    Tree(btree_set::Iter<'a, Value>),
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a Value;
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        either_ref!(self.inner, it => it.next())
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        match self.inner {
            IterInner::Sorted(ref it) => it.size_hint(),
            IterInner::Tree(ref it) => it.size_hint(),
        }
    }
}

impl<'a> DoubleEndedIterator for Iter<'a> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        either_ref!(self.inner, it => it.next_back())
    }
}

impl<'a> ExactSizeIterator for Iter<'a> {
    #[inline]
    fn len(&self) -> usize {
        match self.inner {
            IterInner::Sorted(ref it) => it.len(),
            IterInner::Tree(ref it) => it.len(),
        }
    }
}

impl<'a> FusedIterator for Iter<'a> {}

impl IntoIterator for Set {
    type Item = Value;
    type IntoIter = IntoIter;
    #[inline]
    fn into_iter(self) -> Self::IntoIter {
        IntoIter {
            inner: match self.repr {
                super::Repr::Sorted(items) => IntoIterInner::Sorted(items.into_iter()),
                super::Repr::Tree(tree) => IntoIterInner::Tree(tree.into_iter()),
            },
        }
    }
}

impl<'a> IntoIterator for &'a Set {
    type Item = &'a Value;
    type IntoIter = Iter<'a>;
    #[inline]
    fn into_iter(self) -> Self::IntoIter {
        self.iter_sorted()
    }
}
