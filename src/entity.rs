//! Typed storage over the ids `entity!` defines (SPEC §2's tensors,
//! instructions, loops and variables, and the allocator's nodes): [`IdVec`],
//! a vector that hands out the id of each element it holds, and [`IdMap`], a
//! side table with one value for every id of a vector held elsewhere. Both
//! are indexed only by their key type, as Cranelift's `PrimaryMap` and
//! `SecondaryMap` are, so a table of loops cannot be read with a tensor.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::marker::PhantomData;
use std::ops::{Index, IndexMut};

/// An id made by `entity!`: a dense index into the vector that owns it.
pub trait EntityId: Copy {
    /// The id of position `i`.
    fn new(i: usize) -> Self;
    /// The position of this id.
    fn index(self) -> usize;
}

/// Implements [`EntityId`] for ids made by `entity!` (they have inherent
/// `new` and `index`).
macro_rules! entity_id {
    ($($id:ty),* $(,)?) => {$(
        impl $crate::entity::EntityId for $id {
            #[inline]
            fn new(i: usize) -> Self {
                <$id>::new(i)
            }
            #[inline]
            fn index(self) -> usize {
                <$id>::index(self)
            }
        }
    )*};
}
pub(crate) use entity_id;

entity_id!(
    crate::ir::TensorId,
    crate::ir::VarId,
    crate::ir::InstId,
    crate::ir::LoopId
);

/// The ids `0..n`.
fn ids<K: EntityId>(n: usize) -> impl DoubleEndedIterator<Item = K> + ExactSizeIterator {
    (0..n).map(K::new)
}

/// A vector of `V`s that owns the ids `K` of its elements: [`IdVec::push`]
/// returns the new element's id. It serializes as the plain vector.
#[derive(Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct IdVec<K, V> {
    elems: Vec<V>,
    #[serde(skip)]
    key: PhantomData<fn(K) -> K>,
}

impl<K: EntityId, V> IdVec<K, V> {
    /// An empty vector.
    pub fn new() -> Self {
        Self::from(Vec::new())
    }

    /// An empty vector with room for `n` elements.
    pub fn with_capacity(n: usize) -> Self {
        Self::from(Vec::with_capacity(n))
    }

    /// Appends `v` and returns its id.
    #[inline]
    pub fn push(&mut self, v: V) -> K {
        let k = K::new(self.elems.len());
        self.elems.push(v);
        k
    }

    /// Every id, in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = K> + ExactSizeIterator {
        ids(self.elems.len())
    }

    /// Every element with its id, in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (K, &V)> + ExactSizeIterator {
        self.keys().zip(&self.elems)
    }

    /// Every element, in order.
    pub fn values(&self) -> std::slice::Iter<'_, V> {
        self.elems.iter()
    }

    /// Every element, mutably, in order.
    pub fn values_mut(&mut self) -> std::slice::IterMut<'_, V> {
        self.elems.iter_mut()
    }

    /// Removes every element, keeping the buffer.
    pub fn clear(&mut self) {
        self.elems.clear();
    }

    /// Keeps the first `n` elements (the ids `0..n`).
    pub fn truncate(&mut self, n: usize) {
        self.elems.truncate(n);
    }

    /// Makes room for `n` more elements.
    pub fn reserve(&mut self, n: usize) {
        self.elems.reserve(n);
    }

    /// Moves every element of `other` to the end of this vector.
    pub fn append(&mut self, other: &mut Self) {
        self.elems.append(&mut other.elems);
    }

    /// The elements as a plain vector, for work on positions (a merge in
    /// place); `IdVec::from` gives them back their ids.
    pub fn into_vec(self) -> Vec<V> {
        self.elems
    }
}

impl<K: EntityId, V> Default for IdVec<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K, V> From<Vec<V>> for IdVec<K, V> {
    /// The vector whose element `i` has the id of position `i`.
    fn from(elems: Vec<V>) -> Self {
        IdVec {
            elems,
            key: PhantomData,
        }
    }
}

impl<K: EntityId, V> FromIterator<V> for IdVec<K, V> {
    fn from_iter<I: IntoIterator<Item = V>>(iter: I) -> Self {
        Self::from(iter.into_iter().collect::<Vec<V>>())
    }
}

impl<K: EntityId, V> Extend<V> for IdVec<K, V> {
    fn extend<I: IntoIterator<Item = V>>(&mut self, iter: I) {
        self.elems.extend(iter);
    }
}

impl<'a, K, V> IntoIterator for &'a IdVec<K, V> {
    type Item = &'a V;
    type IntoIter = std::slice::Iter<'a, V>;
    /// Every element, in order, as a vector iterates.
    fn into_iter(self) -> Self::IntoIter {
        self.elems.iter()
    }
}

impl<'a, K, V> IntoIterator for &'a mut IdVec<K, V> {
    type Item = &'a mut V;
    type IntoIter = std::slice::IterMut<'a, V>;
    /// Every element, mutably, in order, as a vector iterates.
    fn into_iter(self) -> Self::IntoIter {
        self.elems.iter_mut()
    }
}

/// Length, lookup and indexing by the key, and `Debug` as the element
/// vector, for a storage type holding its elements in `elems`.
macro_rules! keyed_storage {
    ($t:ident) => {
        impl<K: EntityId, V> $t<K, V> {
            /// Number of ids the storage covers.
            #[inline]
            pub fn len(&self) -> usize {
                self.elems.len()
            }

            /// Whether the storage covers no id.
            #[inline]
            pub fn is_empty(&self) -> bool {
                self.elems.is_empty()
            }

            /// The value of `k`, `None` past the ids the storage covers.
            #[inline]
            pub fn get(&self, k: K) -> Option<&V> {
                self.elems.get(k.index())
            }

            /// Exchanges the values of `a` and `b`.
            pub fn swap(&mut self, a: K, b: K) {
                self.elems.swap(a.index(), b.index());
            }

            /// The values as a slice, in id order, for work on positions
            /// (a copy of a range, a prefetch).
            #[inline]
            pub fn as_slice(&self) -> &[V] {
                &self.elems
            }

            /// The values as a mutable slice, in id order, for work on
            /// positions.
            #[inline]
            pub fn as_mut_slice(&mut self) -> &mut [V] {
                &mut self.elems
            }
        }

        impl<K: EntityId, V> Index<K> for $t<K, V> {
            type Output = V;
            #[inline]
            fn index(&self, k: K) -> &V {
                &self.elems[k.index()]
            }
        }

        impl<K: EntityId, V> IndexMut<K> for $t<K, V> {
            #[inline]
            fn index_mut(&mut self, k: K) -> &mut V {
                &mut self.elems[k.index()]
            }
        }

        impl<K, V: fmt::Debug> fmt::Debug for $t<K, V> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.elems.fmt(f)
            }
        }
    };
}

keyed_storage!(IdVec);
keyed_storage!(IdMap);

/// A side table: one `V` for each id `K` of a vector held elsewhere, all
/// set at once ([`IdMap::with_len`], [`IdMap::reset`]).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct IdMap<K, V> {
    elems: Vec<V>,
    key: PhantomData<fn(K) -> K>,
}

impl<K: EntityId, V: Clone> IdMap<K, V> {
    /// The table of the ids `0..n`, each holding `default`.
    pub fn with_len(n: usize, default: V) -> Self {
        IdMap {
            elems: vec![default; n],
            key: PhantomData,
        }
    }

    /// Makes this the table of the ids `0..n`, each holding `default`,
    /// in the buffer it already has.
    pub fn reset(&mut self, n: usize, default: V) {
        self.elems.clear();
        self.elems.reserve_exact(n);
        self.elems.resize(n, default);
    }

    /// Makes this the table of the ids `0..n`: the ids it already covers
    /// keep their values, new ones hold `default`.
    pub fn resize(&mut self, n: usize, default: V) {
        self.elems.resize(n, default);
    }
}

impl<K: EntityId, V> IdMap<K, V> {
    /// Every id with its value, in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (K, &V)> + ExactSizeIterator {
        ids(self.elems.len()).zip(&self.elems)
    }

    /// Every value, in id order.
    pub fn values(&self) -> std::slice::Iter<'_, V> {
        self.elems.iter()
    }

    /// Every value, mutably, in id order.
    pub fn values_mut(&mut self) -> std::slice::IterMut<'_, V> {
        self.elems.iter_mut()
    }

    /// The values as a plain vector, a buffer for the next table
    /// (`IdMap::from` gives them back their ids).
    pub fn into_vec(self) -> Vec<V> {
        self.elems
    }
}

impl<K, V> From<Vec<V>> for IdMap<K, V> {
    /// The table whose value of id `i` is element `i`.
    fn from(elems: Vec<V>) -> Self {
        IdMap {
            elems,
            key: PhantomData,
        }
    }
}

impl<K: EntityId, V> FromIterator<V> for IdMap<K, V> {
    /// The table whose value of id `i` is the iterator's item `i`.
    fn from_iter<I: IntoIterator<Item = V>>(iter: I) -> Self {
        IdMap {
            elems: iter.into_iter().collect(),
            key: PhantomData,
        }
    }
}

impl<K, V> Default for IdMap<K, V> {
    fn default() -> Self {
        IdMap {
            elems: Vec::new(),
            key: PhantomData,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{LoopId, TensorId};

    #[test]
    fn id_vec_hands_out_ids_in_order_and_serializes_as_a_vector() {
        let mut v: IdVec<TensorId, &str> = IdVec::new();
        assert_eq!(v.push("a"), TensorId(0));
        assert_eq!(v.push("b"), TensorId(1));
        v[TensorId(0)] = "c";
        assert_eq!(v[TensorId(1)], "b");
        assert_eq!(v.keys().collect::<Vec<_>>(), [TensorId(0), TensorId(1)]);
        assert_eq!(
            v.iter().collect::<Vec<_>>(),
            [(TensorId(0), &"c"), (TensorId(1), &"b")]
        );
        assert_eq!((v.len(), v.get(TensorId(2))), (2, None));
        assert_eq!(serde_json::to_string(&v).unwrap(), r#"["c","b"]"#);
        let back: IdVec<TensorId, String> = serde_json::from_str(r#"["c","b"]"#).unwrap();
        assert_eq!(back.as_slice(), ["c", "b"]);
        assert_eq!(format!("{v:?}"), r#"["c", "b"]"#);
    }

    #[test]
    fn id_map_holds_one_value_per_id_and_resets_in_place() {
        let mut m: IdMap<LoopId, u32> = IdMap::with_len(3, 7);
        m[LoopId(1)] = 9;
        assert_eq!(m.values().copied().collect::<Vec<_>>(), [7, 9, 7]);
        assert_eq!(m.iter().nth(1), Some((LoopId(1), &9)));
        m.reset(2, 0);
        assert_eq!((m.len(), m[LoopId(1)], m.get(LoopId(2))), (2, 0, None));
    }
}
