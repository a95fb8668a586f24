//! Select (SPEC §3.7; seed: `PSUM_Allocator::select`, 1-D bank-bitmap first-fit).
//!
//! Nodes are popped off the simplify stack; each gets the lowest base bank
//! `b = 0, a, 2a, …` (`a = bank_alignment(liveN)`) whose `liveN` banks no
//! already-placed neighbor holds. A node that fits nowhere joins the spill
//! set. The score is the summed cost of the spill set. Like simplify, select
//! runs part by part (each part closed under adjacency) into one
//! [`Selection`].

use super::graph::Graph;
use super::interference::DirtyId;
use crate::alloc::costs::Cost;
use crate::alloc::support::prefetch;
use crate::arch::bank_alignment;
use crate::entity::IdMap;
use std::ops::Range;

/// The outcome of one select.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Selection {
    /// Base bank of each node; `None` for the spill set. A byte, since
    /// banks number at most 64 (the held-bank mask): four selections of
    /// two million nodes are kept at once.
    pub bank: IdMap<DirtyId, Option<u8>>,
    /// The spill set: in pop order within each part, the parts in the
    /// order they were selected.
    pub unplaced: Vec<DirtyId>,
    /// Σ cost of the spill set (0 when empty, +∞ if any is unspillable).
    pub score: Cost,
}

/// The bitmap of `banks` banks from `base`.
fn mask(base: u32, banks: u32) -> u64 {
    ((1u64 << banks) - 1) << base
}

impl Selection {
    /// A selection of `n` nodes with nothing selected yet.
    pub(crate) fn new(n: usize) -> Selection {
        Selection {
            bank: IdMap::with_len(n, None),
            unplaced: Vec::new(),
            score: Cost::ZERO,
        }
    }

    /// Takes `from`'s banks of the nodes of `part` that `take` picks, and
    /// adds those it left unplaced to the spill set (in id order, after
    /// the ones already there).
    pub(super) fn take_from(
        &mut self,
        from: &Selection,
        part: Range<usize>,
        take: impl Fn(DirtyId) -> bool,
        costs: &IdMap<DirtyId, Cost>,
    ) {
        for u in part.map(DirtyId::new).filter(|&u| take(u)) {
            self.bank[u] = from.bank[u];
            if from.bank[u].is_none() {
                self.unplaced.push(u);
                self.score = self.score.plus(costs[u]);
            }
        }
    }
}

/// Colors the nodes of `part` (closed under adjacency) of `graph` in the
/// reverse of `stack`, their simplify stack, into `sel`. `held` is a
/// buffer reused from part to part.
pub(super) fn select(
    graph: &Graph,
    stack: &[DirtyId],
    part: Range<usize>,
    held: &mut Vec<u64>,
    sel: &mut Selection,
) {
    let Graph {
        g,
        nodes,
        num_banks,
        ..
    } = *graph;
    let costs = graph.init.costs();
    let base = part.start;
    // The banks each node of the part holds (0 until placed): one read
    // per neighbor.
    held.clear();
    held.resize(part.len(), 0);
    for (i, &v) in stack.iter().enumerate().rev() {
        if let Some(&far) = i.checked_sub(16).and_then(|j| stack.get(j)) {
            g.prefetch(far, true);
            prefetch(held, far.index() - base);
            prefetch(nodes.as_slice(), far.index());
        }
        if let Some(&near) = i.checked_sub(8).and_then(|j| stack.get(j)) {
            g.prefetch(near, false);
        }
        let mut used = 0u64;
        g.for_each_neighbor(v, |u| used |= held[u.index() - base]);
        let need = nodes[v].banks;
        let align = bank_alignment(need) as usize;
        let fit = (0..num_banks)
            .step_by(align)
            .take_while(|&b| b + need <= num_banks)
            .find(|&b| used & mask(b, need) == 0);
        match fit {
            Some(b) => {
                debug_assert!(b + need <= num_banks, "bad PSUM address during select");
                sel.bank[v] = Some(u8::try_from(b).expect("banks fit the 64-bit mask"));
                held[v.index() - base] = mask(b, need);
            }
            None => {
                sel.unplaced.push(v);
                sel.score = sel.score.plus(costs[v]);
            }
        }
    }
}
