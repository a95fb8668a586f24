//! Simplify (SPEC §3.6; seed: `PSUM_Allocator::simplify`, the additive bank test).
//!
//! `budget(v) = numBanks − liveN(v) − Σ liveN(remaining neighbors)`; a node
//! with a non-negative budget is trivially colorable (`lo`), the others wait
//! in `inf` (unspillable) or `hi`. Nodes are removed lowest-id first from
//! `lo`, else the `hi` node with the smallest heuristic metric (optimistic
//! push), else the lowest-id `inf` node; each removal gives its banks back to
//! its remaining neighbors' budgets. Metrics are exact fractions compared by
//! cross-multiplication. A bitset holds `lo`, a lazily re-keyed queue
//! ordered by metric `hi` and a cursor runs over `inf`, so one simplify
//! costs O((n + E) log n).
//!
//! A run covers one *part* of the graph, a range of node ids closed under
//! adjacency (a union of components, see [`super::reuse`]): the nodes of a
//! component leave in the same order whatever else is simplified with
//! them, so a caller may run the parts one by one, each in cache, with the
//! buffers of a [`Scratch`]. The runs of one part under several heuristics
//! share their prefix up to the first pick from `hi` or `inf`, and may
//! leave out the components that [`Budgets::mark_agreement`] finds would
//! only repeat H0. Removals cut a large part apart as they go, so a
//! drain splits what remains of it into such ranges once a quarter of it
//! is gone, and drains them one by one.

pub(super) mod budgets;
mod heuristic;
mod hi_queue;

pub(super) use budgets::{Budgets, SlotBuffer};
pub(super) use heuristic::Heuristic;

use super::graph::Graph;
use super::interference::{DirtyId, Interference};
use crate::alloc::costs::Cost;
use crate::alloc::liveness::Node;
use crate::alloc::support::idset::IdSet;
use crate::alloc::support::prefetch;
use budgets::{List, Slot};
use hi_queue::{Entry, HiQueue};
use std::ops::Range;

/// Buffers that simplify runs reuse from part to part, so that many small
/// parts cost no allocation. The stack of the last run stays in it.
#[derive(Default)]
pub(crate) struct Scratch {
    slots: Vec<Slot>,
    lo: IdSet,
    infs: Vec<usize>,
    hi: HiQueue,
    stack: Vec<DirtyId>,
    /// The slots and stack where `lo` first ran dry, which every run of
    /// a part goes on from.
    prefix: (Vec<Slot>, Vec<DirtyId>),
}

impl Scratch {
    /// The stack of the last run, bottom first.
    #[cfg(test)]
    pub(crate) fn stack(&self) -> &[DirtyId] {
        &self.stack
    }
}

/// Working state of one simplify run over the part from node `base`.
struct State<'a> {
    /// The dirty nodes and their costs, by position (the index of their
    /// [`DirtyId`]): a run works on the positions of its part.
    nodes: &'a [Node],
    costs: &'a [Cost],
    num_banks: u32,
    h: Heuristic,
    base: usize,
    /// The slots of the part's nodes, from `base`.
    slots: &'a mut [Slot],
}

impl<'a> State<'a> {
    /// The state of a run under `h` of the part from `base`, in `slots`.
    fn new(graph: &Graph<'a>, h: Heuristic, base: usize, slots: &'a mut [Slot]) -> Self {
        State {
            nodes: graph.nodes.as_slice(),
            costs: graph.init.costs.as_slice(),
            num_banks: graph.num_banks,
            h,
            base,
            slots,
        }
    }

    fn slot(&self, u: usize) -> &Slot {
        &self.slots[u - self.base]
    }

    fn list_mut(&mut self, u: usize) -> &mut List {
        &mut self.slots[u - self.base].list
    }

    fn key(&self, u: usize) -> Entry {
        // An unspillable node is never keyed.
        self.key_at(u, self.costs[u].finite().unwrap_or(0))
    }

    /// [`State::key`] with the node's spill cost given (a re-keyed
    /// entry's numerator), which saves a read of the costs.
    fn key_at(&self, u: usize, cost: u64) -> Entry {
        let slot = self.slot(u);
        debug_assert!(slot.list == List::Hi, "only hi nodes are keyed");
        debug_assert_eq!(self.costs[u].finite(), Some(cost));
        let nb = (i64::from(self.num_banks) - i64::from(slot.banks) - slot.budget) as u64;
        let len = || self.nodes[u].interval_len();
        Entry {
            key: self.h.metric(cost, slot.banks, slot.deg, nb, len),
            node: u as u32,
            deg: slot.deg,
        }
    }

    /// Gives `banks` back to the remaining neighbor `u`; returns whether `u`
    /// just became trivially colorable.
    fn relieve(&mut self, u: usize, banks: u32) -> bool {
        let slot = &mut self.slots[u - self.base];
        slot.budget += i64::from(banks);
        slot.deg -= 1;
        slot.budget >= 0 && matches!(slot.list, List::Hi | List::Inf)
    }
}

/// Runs simplify on the nodes of `part` (closed under adjacency) of
/// `graph`, from its budgets, under each heuristic of `hs` in turn, in the
/// buffers of `scratch`, and hands each run's stack (bottom first) to
/// `each` with the heuristic's position in `hs`. With `skip_agreeing`,
/// the nodes that [`Budgets::agrees`] under a heuristic are left out of
/// its run, as if removed already.
///
/// Until `lo` first runs dry simplify removes its lowest node, whatever
/// the heuristic, so it drains that prefix once and each run goes
/// on from a copy of the state it leaves (a removal from the prefix of a
/// node left out of some run only touches its own component, left out
/// too).
pub(in crate::alloc::briggs) fn simplify_each(
    graph: &Graph,
    hs: &[Heuristic],
    part: Range<usize>,
    skip_agreeing: bool,
    scratch: &mut Scratch,
    mut each: impl FnMut(usize, &[DirtyId]),
) {
    let Graph { g, init, .. } = *graph;
    let Some(&first) = hs.first() else {
        return;
    };
    let Scratch {
        slots,
        lo,
        infs,
        hi,
        stack,
        prefix,
    } = scratch;
    let base = part.start;
    // Bits of the heuristics a node agrees under and is left out for.
    let all = hs.iter().fold(0u8, |bits, h| bits | 1 << h.index());
    let left_out = |agree: u8, bits: u8| skip_agreeing && agree & bits == bits;
    let from_budgets = |slots: &mut Vec<Slot>, bits: u8| {
        slots.clear();
        slots.extend_from_slice(&init.slots.as_slice()[part.clone()]);
        for s in slots.iter_mut().filter(|s| left_out(s.agree, bits)) {
            s.list = List::Removed;
        }
    };
    from_budgets(slots, all);
    stack.clear();
    lo.reset(part.len());
    infs.clear();
    for (u, s) in part.clone().zip(slots.iter()) {
        match s.list {
            List::Lo => lo.insert(u - base),
            List::Inf => infs.push(u),
            List::Hi | List::Removed => {}
        }
    }
    let mut st = State::new(graph, first, base, slots);
    while let Some(v) = lo.pop_min() {
        remove(g, &mut st, v + base, lo, stack);
    }
    if hs.len() > 1 {
        prefix.0.clone_from(slots);
        prefix.1.clone_from(stack);
    }
    for (i, &h) in hs.iter().enumerate() {
        if i > 0 {
            slots.clone_from(&prefix.0);
            stack.clone_from(&prefix.1);
        }
        // Left out of this run, not of all: gone from the prefix too.
        let bit = 1 << h.index();
        let only_here = |agree: u8| left_out(agree, bit) && !left_out(agree, all);
        let mut any = false;
        for s in slots.iter_mut().filter(|s| only_here(s.agree)) {
            s.list = List::Removed;
            any = true;
        }
        if any {
            stack.retain(|&v| !only_here(init.slots[v].agree));
        }
        let mut st = State::new(graph, h, base, slots);
        let mut run = Run {
            g,
            lo,
            hi,
            stack,
            split_min: graph.split_min,
        };
        run.drain(&mut st, part.clone(), infs);
        each(i, stack);
    }
}

/// Removes node `v`: onto the stack, its banks given back to its remaining
/// neighbors, those that become trivially colorable into `lo` (less `base`).
fn remove(g: &Interference, st: &mut State, v: usize, lo: &mut IdSet, stack: &mut Vec<DirtyId>) {
    *st.list_mut(v) = List::Removed;
    stack.push(DirtyId::new(v));
    let banks = u32::from(st.slot(v).banks);
    g.for_each_neighbor(DirtyId::new(v), |u| {
        let u = u.index();
        if st.slot(u).list != List::Removed && st.relieve(u, banks) {
            *st.list_mut(u) = List::Lo;
            lo.insert(u - st.base);
        }
    });
}

/// The buffers and graph of one drain ([`Run::drain`]).
struct Run<'r> {
    g: &'r Interference,
    lo: &'r mut IdSet,
    hi: &'r mut HiQueue,
    stack: &'r mut Vec<DirtyId>,
    /// See [`Graph::split_min`].
    split_min: usize,
}

impl Run<'_> {
    /// The drain of `part` after the prefix (`lo` empty, `infs` every node
    /// of the part that started in `inf`), with an [`IdSet`] for `lo`, a lazy [`HiQueue`] keyed
    /// by metric for `hi` and a cursor over `inf`. A removal only ever
    /// raises the metric of a remaining neighbor (its degree and neighbor
    /// banks shrink; the cost and length stay), so a `hi` entry's key is a
    /// lower bound of the node's current key: when an entry surfaces with
    /// an outdated key it is pushed again with the current one, and an
    /// entry that surfaces up to date is the true minimum.
    ///
    /// Removals cut the remaining graph apart (a large graph has fallen
    /// into thousands of components by the time a quarter of it is gone),
    /// and each component leaves in the same order whatever else is
    /// drained with it. So once a part of at least `split_min` nodes has
    /// lost `1/SPLIT_SHARE` of them, with `lo` empty, its remaining nodes
    /// are cut into id ranges closed under adjacency ([`closed_ranges`])
    /// and each is drained alone, in cache: their stacks follow one
    /// another, where one drain would interleave them by metric, and no
    /// two nodes that interfere change places.
    fn drain(&mut self, st: &mut State, part: Range<usize>, infs: &[usize]) {
        let mut inf_cursor = 0;
        self.hi.refill(|entries| {
            entries.extend(
                (part.clone())
                    .filter(|&u| st.slot(u).list == List::Hi)
                    .map(|u| st.key(u)),
            );
        });
        // Only a part this large can have that many nodes left to count.
        let mut split_at = (part.len() >= self.split_min)
            .then(|| (part.clone()).filter(|&u| st.slot(u).list != List::Removed))
            .map(Iterator::count)
            .filter(|&left| left >= self.split_min)
            .map(|left| self.stack.len() + left / SPLIT_SHARE);
        loop {
            let v = if let Some(v) = self.lo.pop_min() {
                v + st.base
            } else if split_at.is_some_and(|at| self.stack.len() >= at) {
                split_at = None;
                let group = (self.split_min / SPLIT_SHARE.pow(2)).max(1);
                let ranges = closed_ranges(self.g, st, part.clone(), group);
                if ranges.len() > 1 {
                    for range in ranges {
                        let first = |end: usize| infs.partition_point(|&u| u < end);
                        let infs = &infs[first(range.start)..first(range.end)];
                        self.drain(st, range, infs);
                    }
                    return;
                }
                continue;
            } else if let Some(v) = pop_hi(self.hi, st) {
                for far in self.hi.ahead(16).into_iter().flatten() {
                    self.g.prefetch(far, true);
                    prefetch(st.slots, far.index() - st.base);
                }
                for near in self.hi.ahead(8).into_iter().flatten() {
                    self.g.prefetch(near, false);
                }
                v
            } else {
                while inf_cursor < infs.len() && st.slot(infs[inf_cursor]).list != List::Inf {
                    inf_cursor += 1;
                }
                match infs.get(inf_cursor) {
                    Some(&v) => v,
                    None => break,
                }
            };
            remove(self.g, st, v, self.lo, self.stack);
        }
    }
}

/// Pops the `hi` node with the smallest current key (see [`Run::drain`]).
/// An entry whose degree is current has its node's key; an outdated entry
/// whose current key still comes before every other entry (each a lower
/// bound of its node's key) is the minimum as it is.
fn pop_hi(hi: &mut HiQueue, st: &State) -> Option<usize> {
    while let Some(old) = hi.pop() {
        if let Some(c) = hi.coming() {
            prefetch(st.slots, c as usize - st.base);
        }
        let u = old.node as usize;
        let slot = st.slot(u);
        if slot.list != List::Hi {
            continue;
        }
        if slot.deg == old.deg || !st.h.rekeys() {
            return Some(u);
        }
        // Every metric's numerator is the cost.
        let cur = st.key_at(u, old.key.num);
        debug_assert!(old.key <= cur.key, "simplify metrics only grow");
        if cur.key == old.key || hi.peek().is_none_or(|next| cur < next) {
            return Some(u);
        }
        hi.push(cur);
    }
    None
}

/// A drain splits its part once this fraction (1/N) of its remaining
/// nodes is gone, and the ranges it splits into hold at least
/// `split_min / N²` remaining nodes each (but the last).
const SPLIT_SHARE: usize = 4;

/// The remaining nodes of `part` (closed under adjacency), cut into id
/// ranges closed under adjacency among them, each of at least `group`
/// remaining nodes but the last. A range ends
/// where no remaining node in it has a remaining neighbor beyond it.
fn closed_ranges(
    g: &Interference,
    st: &State,
    part: Range<usize>,
    group: usize,
) -> Vec<Range<usize>> {
    let mut ranges = Vec::new();
    let (mut start, mut count, mut reach) = (part.start, 0, 0);
    for u in part.clone() {
        if st.slot(u).list == List::Removed {
            continue;
        }
        count += 1;
        reach = reach.max(u);
        g.for_each_neighbor(DirtyId::new(u), |w| {
            if st.slot(w.index()).list != List::Removed {
                reach = reach.max(w.index());
            }
        });
        if reach == u && count >= group {
            ranges.push(start..u + 1);
            (start, count) = (u + 1, 0);
        }
    }
    match ranges.last_mut() {
        Some(last) if count == 0 => last.end = part.end,
        _ => ranges.push(start..part.end),
    }
    ranges
}
