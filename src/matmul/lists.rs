//! The legalizer's flat tables: lists stored back to back in one vector,
//! indexed by ordinal or by group.

/// Lists stored back to back in one vector: list `i` is
/// `items[start[i]..start[i + 1]]` (per-list data without a heap
/// allocation per list).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lists<T> {
    items: Vec<T>,
    start: Vec<u32>,
}

impl<T: Copy> Lists<T> {
    /// No lists.
    pub(crate) fn new() -> Self {
        Lists {
            items: Vec::new(),
            start: vec![0],
        }
    }

    /// Reserves room for `lists` more lists of `items` more items in all.
    pub(crate) fn reserve(&mut self, lists: usize, items: usize) {
        self.start.reserve(lists);
        self.items.reserve(items);
    }

    /// Appends `item` to the list being built.
    pub(crate) fn push(&mut self, item: T) {
        self.items.push(item);
    }

    /// Ends the list being built; the next item starts a new one.
    pub(crate) fn end_list(&mut self) {
        self.start.push(flat_index(self.items.len()));
    }

    /// `n` lists holding the pairs `(list, item)` that `pairs` passes to
    /// its argument, each list in the order passed (a counting sort;
    /// `pairs` runs twice and must pass the same pairs both times).
    pub(crate) fn grouped(n: usize, pairs: impl Fn(&mut dyn FnMut(usize, T))) -> Self
    where
        T: Default,
    {
        let mut start = vec![0u32; n + 1];
        pairs(&mut |l, _| start[l + 1] += 1);
        for l in 0..n {
            start[l + 1] += start[l];
        }
        let mut next = start.clone();
        let mut items = vec![T::default(); start[n] as usize];
        pairs(&mut |l, item| {
            items[next[l] as usize] = item;
            next[l] += 1;
        });
        Lists { items, start }
    }

    /// List `i`.
    pub(crate) fn get(&self, i: usize) -> &[T] {
        &self.items[self.range(i)]
    }

    /// The positions in [`Lists::items`] of list `i`.
    pub(crate) fn range(&self, i: usize) -> std::ops::Range<usize> {
        self.start[i] as usize..self.start[i + 1] as usize
    }

    /// The lists in order.
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = &[T]> {
        self.start
            .windows(2)
            .map(|w| &self.items[w[0] as usize..w[1] as usize])
    }

    /// Every item, list after list.
    pub(crate) fn items(&self) -> &[T] {
        &self.items
    }
}

/// An index into one of the legalizer's flat vectors, stored as `u32`: a
/// program holding 2³² instructions (80 bytes each) would not fit in memory.
pub(crate) fn flat_index(i: usize) -> u32 {
    u32::try_from(i).expect("fewer than 2^32 entries")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_built_in_order_and_by_counting_sort() {
        let mut l: Lists<u8> = Lists::new();
        assert_eq!(l.iter().count(), 0);
        for list in [&[1u8, 2][..], &[], &[3]] {
            list.iter().for_each(|&x| l.push(x));
            l.end_list();
        }
        assert_eq!(l.iter().count(), 3);
        assert_eq!(
            (l.get(0), l.get(1), l.get(2)),
            (&[1, 2][..], &[][..], &[3][..])
        );
        assert_eq!(l.range(2), 2..3);
        assert_eq!(l.iter().map(<[u8]>::len).collect::<Vec<_>>(), [2, 0, 1]);
        let pairs = [(2, 10u8), (0, 11), (2, 12), (0, 13)];
        let g = Lists::grouped(4, |emit| pairs.iter().for_each(|&(k, x)| emit(k, x)));
        let lists: Vec<&[u8]> = g.iter().collect();
        assert_eq!(lists, [&[11, 13][..], &[], &[10, 12], &[]]);
        assert_eq!(g.items(), [11, 13, 10, 12]);
    }
}
