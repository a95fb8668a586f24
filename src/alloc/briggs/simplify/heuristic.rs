//! The four spill-choice heuristics of simplify (SPEC §3.6
//! **\[decision\]**) and the exact fractions their metrics compare.

use std::cmp::Ordering;
use std::fmt;

/// The four spill-choice heuristics (SPEC §3.6 **\[decision\]**).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Heuristic {
    /// H0: `cost / deg`.
    H0,
    /// H1: `cost / (liveN · deg)`.
    H1,
    /// H2: `cost / nb`.
    H2,
    /// H3: `cost / len`.
    H3,
}

impl Heuristic {
    /// H0..H3 in the order best-of-n tries them.
    pub(crate) const ALL: [Heuristic; 4] =
        [Heuristic::H0, Heuristic::H1, Heuristic::H2, Heuristic::H3];

    /// The number printed in the log and report.
    pub(crate) fn index(self) -> u32 {
        self as u32
    }

    /// Whether this heuristic picks the `hi` nodes in exactly H0's order when
    /// `uniform` (every node has the same `liveN = b`). Then H1's
    /// denominator is `b·deg` and H2's `nb = b·deg` too, a constant multiple
    /// of H0's `deg`, so every cross-multiplied comparison, ties included,
    /// comes out the same. (A `hi` node always has `deg ≥ 1`: with no
    /// remaining neighbor its budget is `numBanks − b ≥ 0`, which is `lo`.)
    pub(crate) fn same_order_as_h0(self, uniform: bool) -> bool {
        match self {
            Heuristic::H1 | Heuristic::H2 => uniform,
            Heuristic::H0 => true,
            Heuristic::H3 => false,
        }
    }

    /// Whether a removal can change a `hi` node's metric: all but H3's
    /// (`cost / len`) can.
    pub(super) fn rekeys(self) -> bool {
        self != Heuristic::H3
    }

    /// The metric of a `hi` node: `cost` over the heuristic's denominator
    /// (clamped to 1, so a zero-bank node cannot divide by zero); `len`
    /// gives the interval length, which only H3 reads.
    pub(super) fn metric(
        self,
        cost: u64,
        banks: u8,
        deg: u32,
        nb: u64,
        len: impl FnOnce() -> u64,
    ) -> Ratio {
        let den = match self {
            Heuristic::H0 => u64::from(deg),
            Heuristic::H1 => u64::from(banks) * u64::from(deg),
            Heuristic::H2 => nb,
            Heuristic::H3 => len(),
        };
        Ratio {
            num: cost,
            den: den.max(1),
        }
    }
}

impl fmt::Display for Heuristic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.index())
    }
}

/// An exact non-negative fraction, ordered by cross-multiplication.
#[derive(Clone, Copy, Debug)]
pub(super) struct Ratio {
    pub(super) num: u64,
    pub(super) den: u64,
}

impl Ord for Ratio {
    fn cmp(&self, o: &Self) -> Ordering {
        (u128::from(self.num) * u128::from(o.den)).cmp(&(u128::from(o.num) * u128::from(self.den)))
    }
}

impl PartialOrd for Ratio {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl PartialEq for Ratio {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}

impl Eq for Ratio {}
