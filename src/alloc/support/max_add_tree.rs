//! A range-add, range-max segment tree: the load over stretches of points
//! that `bound`'s greedy and mincost's thinning of a spill set keep while
//! they add intervals one at a time.

/// A segment tree over `n` slots with range add and range maximum,
/// iterative: slot `i` is leaf `size + i`, every node holds the maximum of
/// its subtree with the adds of its own and its descendants' pending
/// amounts, and a query first pushes the pending adds down the two paths
/// it starts from.
pub(crate) struct MaxAddTree {
    /// Leaves: a power of two, at least `n`.
    size: usize,
    /// Max of each subtree (leaves from `size`; padding is far below any value).
    max: Vec<i64>,
    /// Amount added to the whole subtree of each inner node, not yet pushed.
    add: Vec<i64>,
}

/// The value of a padding leaf: below every value a tree holds.
const PAD: i64 = i64::MIN / 4;

impl MaxAddTree {
    /// A tree whose slot `i` holds `values[i]`.
    pub(crate) fn from_values(values: &[i64]) -> Self {
        let size = values.len().next_power_of_two().max(1);
        let mut max = vec![PAD; 2 * size];
        max[size..size + values.len()].copy_from_slice(values);
        for p in (1..size).rev() {
            max[p] = max[2 * p].max(max[2 * p + 1]);
        }
        MaxAddTree {
            size,
            max,
            add: vec![0; size],
        }
    }

    /// A tree of `n` slots holding 0.
    pub(crate) fn new(n: usize) -> Self {
        MaxAddTree::from_values(&vec![0; n])
    }

    fn apply(&mut self, p: usize, v: i64) {
        self.max[p] += v;
        if p < self.size {
            self.add[p] += v;
        }
    }

    /// Recomputes the ancestors of node `p`.
    fn rebuild(&mut self, mut p: usize) {
        while p > 1 {
            p >>= 1;
            self.max[p] = self.max[2 * p].max(self.max[2 * p + 1]) + self.add[p];
        }
    }

    /// Pushes the pending adds of the ancestors of node `p` down to it.
    fn push(&mut self, p: usize) {
        for s in (1..=self.size.trailing_zeros()).rev() {
            let i = p >> s;
            let a = self.add[i];
            if a != 0 {
                self.apply(2 * i, a);
                self.apply(2 * i + 1, a);
                self.add[i] = 0;
            }
        }
    }

    /// Adds `v` to every slot in `[lo, hi)`.
    pub(crate) fn add(&mut self, lo: usize, hi: usize, v: i64) {
        if lo >= hi {
            return;
        }
        let (mut l, mut r) = (lo + self.size, hi + self.size);
        let (l0, r0) = (l, r - 1);
        while l < r {
            if l & 1 == 1 {
                self.apply(l, v);
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                self.apply(r, v);
            }
            l >>= 1;
            r >>= 1;
        }
        self.rebuild(l0);
        self.rebuild(r0);
    }

    /// The maximum over `[lo, hi)`; 0 for an empty range.
    pub(crate) fn max(&mut self, lo: usize, hi: usize) -> i64 {
        if lo >= hi {
            return 0;
        }
        let (mut l, mut r) = (lo + self.size, hi + self.size);
        self.push(l);
        self.push(r - 1);
        let mut best = i64::MIN;
        while l < r {
            if l & 1 == 1 {
                best = best.max(self.max[l]);
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                best = best.max(self.max[r]);
            }
            l >>= 1;
            r >>= 1;
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::MaxAddTree;
    use crate::alloc::support::rng::Rng;

    /// Range adds and range maxima agree with a plain vector on random
    /// operations over trees of every size up to 40 slots.
    #[test]
    fn max_add_tree_matches_a_vector() {
        let mut rng = Rng::new(5);
        for n in 1..=40usize {
            let mut plain: Vec<i64> = (0..n).map(|_| rng.below(9) as i64 - 4).collect();
            let mut tree = MaxAddTree::from_values(&plain);
            for _ in 0..200 {
                let lo = rng.below(n as u64 + 1) as usize;
                let hi = lo + rng.below((n - lo) as u64 + 1) as usize;
                if rng.below(2) == 0 {
                    let v = rng.below(11) as i64 - 5;
                    tree.add(lo, hi, v);
                    plain[lo..hi].iter_mut().for_each(|x| *x += v);
                } else {
                    let want = plain[lo..hi].iter().copied().max().unwrap_or(0);
                    assert_eq!(tree.max(lo, hi), want, "n={n} [{lo}, {hi})");
                }
            }
        }
    }
}
