//! The initial budgets and worklists of simplify (SPEC §3.6): every node's
//! budget `numBanks − liveN(v) − Σ liveN(neighbors)`, degree and worklist
//! (`lo`, `hi`, `inf`), shared by the four heuristics of one iteration.

use super::heuristic::Heuristic;
use crate::alloc::briggs::interference::{DirtyId, Interference};
use crate::alloc::costs::Cost;
use crate::alloc::liveness::Node;
use crate::alloc::support::{resize_to_overwrite, threads};
use crate::entity::{IdMap, IdVec};

/// Worklist membership of a node during simplify.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum List {
    Lo,
    Hi,
    Inf,
    Removed,
}

/// A node's simplify state, kept together so a removal touches one place
/// per neighbor. Each run copies every slot, so the spill cost, which no
/// run changes, is read from the shared costs instead (16 bytes, not 24).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Slot {
    pub(super) budget: i64,
    pub(super) deg: u32,
    /// `liveN` (at most 64: banks are bits of a `u64`).
    pub(super) banks: u8,
    pub(super) list: List,
    /// Bit `h` set when the node's component leaves simplify in the same
    /// order under heuristic `h` as under H0 (see [`Budgets::mark_agreement`]).
    pub(super) agree: u8,
}

const _: () = assert!(std::mem::size_of::<Slot>() == 16);

impl Slot {
    /// A placeholder that [`fill_slots`] overwrites.
    pub(super) const UNSET: Slot = Slot {
        budget: 0,
        deg: 0,
        banks: 0,
        list: List::Removed,
        agree: 0,
    };
}

/// The initial budgets and worklists, shared by the four heuristics of one
/// iteration, with the spill costs they were sorted by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Budgets<'a> {
    pub(super) slots: IdMap<DirtyId, Slot>,
    pub(super) costs: &'a IdMap<DirtyId, Cost>,
    /// Initial size of `lo`.
    pub lo: usize,
    /// Initial size of `hi`.
    pub hi: usize,
    /// Initial size of `inf`.
    pub inf: usize,
}

/// The buffer of a [`Budgets`], handed on from one iteration's budgets to
/// the next's ([`Budgets::new_in`]); empty by default.
#[derive(Default)]
pub(crate) struct SlotBuffer(Vec<Slot>);

impl<'a> Budgets<'a> {
    /// Computes every node's budget and degree and sorts it into a
    /// worklist; on `parallel`, half the nodes on a helper thread.
    #[cfg(test)]
    pub(crate) fn new(
        g: &Interference,
        nodes: &IdVec<DirtyId, Node>,
        costs: &'a IdMap<DirtyId, Cost>,
        num_banks: u32,
        parallel: bool,
    ) -> Self {
        Self::new_in(g, nodes, costs, num_banks, parallel, SlotBuffer::default())
    }

    /// The budgets of `nodes` in `g`, built in the buffer of earlier
    /// budgets: an allocator iteration's budgets are as large as the
    /// program, and a fresh buffer would cost a page fault per 4 KiB every
    /// iteration.
    pub(crate) fn new_in(
        g: &Interference,
        nodes: &IdVec<DirtyId, Node>,
        costs: &'a IdMap<DirtyId, Cost>,
        num_banks: u32,
        parallel: bool,
        buffer: SlotBuffer,
    ) -> Self {
        let mut slots = buffer.0;
        resize_to_overwrite(&mut slots, nodes.len(), Slot::UNSET);
        let fill =
            |base: usize, out: &mut [Slot]| fill_slots(g, nodes, costs, num_banks, base, out);
        let (early, late) = threads::in_halves_mut(parallel, &mut slots, fill);
        let [lo, hi, inf] = [0, 1, 2].map(|i| early[i] + late[i]);
        Budgets {
            slots: IdMap::from(slots),
            costs,
            lo,
            hi,
            inf,
        }
    }

    /// The buffer, for [`Budgets::new_in`].
    pub(crate) fn into_buffer(self) -> SlotBuffer {
        SlotBuffer(self.slots.into_vec())
    }

    /// The spill costs, by node.
    pub(crate) fn costs(&self) -> &'a IdMap<DirtyId, Cost> {
        self.costs
    }

    /// Marks the nodes whose component every heuristic, or H1 and H2,
    /// simplifies in H0's order; `comp` gives each node's component, the
    /// components in runs. Simplify only consults a heuristic to pick among
    /// `hi` nodes, and a removal never makes a node `hi`: a component with
    /// at most one `hi` node leaves in one order under all four. In a
    /// component whose nodes all have the same `liveN`, H1 and H2 order as
    /// H0 does ([`Heuristic::same_order_as_h0`]). A component's order does
    /// not depend on what is simplified with it, so a run may leave the
    /// agreeing nodes out and take H0's selection of them. Returns whether
    /// any node agrees beyond H0.
    pub(crate) fn mark_agreement(&mut self, comp: &[u32]) -> bool {
        let mut any = false;
        let mut start = 0;
        for run in comp.chunk_by(|a, b| a == b) {
            let slots = &mut self.slots.as_mut_slice()[start..start + run.len()];
            start += run.len();
            let hi = slots.iter().filter(|s| s.list == List::Hi).take(2).count();
            let uniform = slots.iter().all(|s| s.banks == slots[0].banks);
            let agree = Heuristic::ALL
                .iter()
                .filter(|&&h| hi <= 1 || h.same_order_as_h0(uniform))
                .fold(0u8, |bits, &h| bits | 1 << h.index());
            any |= agree != 1 << Heuristic::H0.index();
            for s in slots {
                s.agree = agree;
            }
        }
        any
    }

    /// Whether node `u`'s component simplifies in H0's order under `h`
    /// (always, for H0 itself; never before [`Budgets::mark_agreement`]
    /// but for H0).
    pub(crate) fn agrees(&self, u: DirtyId, h: Heuristic) -> bool {
        h == Heuristic::H0 || self.slots[u].agree & 1 << h.index() != 0
    }
}

/// Sets the slots `out` of the nodes from `base` on, and returns how many
/// of them start in `lo`, `hi` and `inf`.
fn fill_slots(
    g: &Interference,
    nodes: &IdVec<DirtyId, Node>,
    costs: &IdMap<DirtyId, Cost>,
    num_banks: u32,
    base: usize,
    out: &mut [Slot],
) -> [usize; 3] {
    let mut counts = [0; 3];
    for (v, slot) in (base..).map(DirtyId::new).zip(out) {
        let n = &nodes[v];
        let mut budget = i64::from(num_banks) - i64::from(n.banks);
        let mut deg = 0;
        g.for_each_neighbor(v, |u| {
            budget -= i64::from(nodes[u].banks);
            deg += 1;
        });
        let (list, count) = if budget >= 0 {
            (List::Lo, 0)
        } else if costs[v] == Cost::Inf {
            (List::Inf, 2)
        } else {
            (List::Hi, 1)
        };
        counts[count] += 1;
        *slot = Slot {
            budget,
            deg,
            banks: u8::try_from(n.banks).expect("a node's banks fit the 64-bit bank mask"),
            list,
            agree: 0,
        };
    }
    counts
}
