//! Interference (SPEC §3.4) in the seed's lower-triangular bit-matrix:
//! nodes `i > j` interfere when bit `i(i−1)/2 + j` is set, which it is
//! when their closed intervals intersect. Rebuilt every iteration.

use super::liveness::Node;

/// The interference graph of one iteration.
pub(crate) struct BitMatrix {
    n: usize,
    bits: Vec<u64>,
}

impl BitMatrix {
    /// The graph of `nodes`: every pair whose intervals intersect.
    pub(crate) fn build(nodes: &[Node]) -> BitMatrix {
        let n = nodes.len();
        let mut g = BitMatrix {
            n,
            bits: vec![0; (n * n.saturating_sub(1) / 2).div_ceil(64)],
        };
        for (i, a) in nodes.iter().enumerate() {
            for (j, b) in nodes[..i].iter().enumerate() {
                if a.start <= b.end && b.start <= a.end {
                    let bit = Self::bit(i, j);
                    g.bits[bit / 64] |= 1 << (bit % 64);
                }
            }
        }
        g
    }

    /// The bit of the pair `{i, j}`, `i ≠ j`.
    fn bit(i: usize, j: usize) -> usize {
        let (hi, lo) = (i.max(j), i.min(j));
        hi * (hi - 1) / 2 + lo
    }

    /// Whether `u` and `v` interfere.
    pub(crate) fn interferes(&self, u: usize, v: usize) -> bool {
        u != v && {
            let bit = Self::bit(u, v);
            self.bits[bit / 64] >> (bit % 64) & 1 == 1
        }
    }

    /// The neighbors of `v`, ascending: a scan of its row and column.
    pub(crate) fn neighbors(&self, v: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.n).filter(move |&u| self.interferes(u, v))
    }
}
