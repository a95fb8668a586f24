//! The state of one fixpoint iteration: best-of-n's outcome over the dirty
//! nodes, and the buffers handed on to the next iteration.

use super::interference::{DirtyId, Interference};
use super::reuse::{Plan, Reuse};
use super::select::Selection;
use super::simplify::{Heuristic, SlotBuffer};
use crate::alloc::costs::Cost;
use crate::alloc::liveness::{Liveness, Node};
use crate::entity::{IdMap, IdVec};

/// The best-of-n outcome of one fixpoint iteration. The graph, costs and
/// selections cover the dirty nodes of `plan`; the others are reused.
pub(crate) struct Iteration {
    /// The dirty nodes and what is reused.
    pub plan: Plan,
    /// The dirty nodes' interference graph.
    pub graph: Interference,
    /// The dirty nodes' spill costs.
    pub costs: IdMap<DirtyId, Cost>,
    /// The winning heuristic.
    pub best: Heuristic,
    /// The selection of each heuristic run over the dirty nodes, H0 first.
    pub sels: Vec<Selection>,
    /// The buffers of the dirty nodes and their budgets, for the next
    /// iteration.
    pub nodes: IdVec<DirtyId, Node>,
    /// See `nodes`.
    pub slots: SlotBuffer,
}

impl Iteration {
    /// The winning heuristic's selection.
    pub(crate) fn sel(&self) -> &Selection {
        &self.sels[self.best.index() as usize]
    }

    /// Whether the winning heuristic placed every node.
    pub(crate) fn placed_all(&self) -> bool {
        self.sel().unplaced.is_empty() && self.plan.unplaced[self.best.index() as usize].is_empty()
    }

    /// Every node of `live` (this iteration's) its base bank under the
    /// winning heuristic.
    pub(crate) fn banks(&self, live: &Liveness, reuse: &Reuse) -> Vec<Option<u32>> {
        let sel = self.sel();
        let h = self.best.index() as usize;
        let mut dirty = self.plan.dirty.values().zip(sel.bank.values()).peekable();
        (live.nodes.values().enumerate())
            .map(|(v, n)| match dirty.next_if(|(d, _)| d.index() == v) {
                Some((_, &b)) => b.map(u32::from),
                None => reuse.bank(n.tensor, h),
            })
            .collect()
    }
}

/// The buffers of one iteration's dirty graph (its nodes, their costs,
/// adjacency lists and budgets), handed on to the next iteration: each is
/// as large as the dirty graph, and fresh ones would cost a page fault per
/// 4 KiB every iteration.
#[derive(Default)]
pub(crate) struct Buffers {
    /// The dirty nodes.
    pub nodes: IdVec<DirtyId, Node>,
    /// Their costs.
    pub costs: IdMap<DirtyId, Cost>,
    /// Their interference graph.
    pub graph: Interference,
    /// Their budgets.
    pub slots: SlotBuffer,
}
