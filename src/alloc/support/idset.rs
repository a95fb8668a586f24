//! A set of small ids with O(log₆₄ n) insert and pop-smallest, simplify's
//! `lo` worklist.

/// A set of node ids with O(log₆₄ n) insert and pop-smallest: a bitset
/// with a summary level per 64 words, up to a single word.
#[derive(Default)]
pub(crate) struct IdSet {
    /// `levels[0]` holds one bit per id; each next level one bit per
    /// non-zero word of the level below.
    levels: Vec<Vec<u64>>,
}

impl IdSet {
    /// Empties the set and makes room for the ids below `n`. A drained
    /// set is all zeros, so only a larger `n` rebuilds it.
    pub(crate) fn reset(&mut self, n: usize) {
        debug_assert!(
            self.levels.last().is_none_or(|top| top[0] == 0),
            "simplify drains lo"
        );
        if self.levels.first().is_some_and(|l| l.len() * 64 >= n) {
            return;
        }
        self.levels.clear();
        let mut len = n.max(1);
        loop {
            let words = len.div_ceil(64);
            self.levels.push(vec![0u64; words]);
            if words == 1 {
                return;
            }
            len = words;
        }
    }

    pub(crate) fn insert(&mut self, mut i: usize) {
        for level in &mut self.levels {
            let word = &mut level[i / 64];
            let was = *word;
            *word |= 1 << (i % 64);
            if was != 0 {
                return;
            }
            i /= 64;
        }
    }

    pub(crate) fn pop_min(&mut self) -> Option<usize> {
        let top = self.levels.len() - 1;
        if self.levels[top][0] == 0 {
            return None;
        }
        let mut i = 0;
        for level in self.levels.iter().rev() {
            i = i * 64 + level[i].trailing_zeros() as usize;
        }
        let mut j = i;
        for level in &mut self.levels {
            let word = &mut level[j / 64];
            *word &= !(1 << (j % 64));
            if *word != 0 {
                break;
            }
            j /= 64;
        }
        Some(i)
    }
}
