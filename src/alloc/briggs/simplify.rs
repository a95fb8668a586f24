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

use super::best_of_n::Graph;
use super::interference::Interference;
use crate::alloc::costs::Cost;
use crate::alloc::liveness::Node;
use crate::alloc::support::sort::{radix_sort, RADIX_MIN};
use crate::alloc::support::{prefetch, resize_to_overwrite, threads};
use crate::alloc::NodeId;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::fmt;
use std::ops::Range;

/// The four spill-choice heuristics (SPEC §3.6 **\[decision\]**).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Heuristic {
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
    pub const ALL: [Heuristic; 4] = [Heuristic::H0, Heuristic::H1, Heuristic::H2, Heuristic::H3];

    /// The number printed in the log and report.
    pub fn index(self) -> u32 {
        self as u32
    }

    /// Whether this heuristic picks the `hi` nodes in exactly H0's order when
    /// `uniform` (every node has the same `liveN = b`). Then H1's
    /// denominator is `b·deg` and H2's `nb = b·deg` too, a constant multiple
    /// of H0's `deg`, so every cross-multiplied comparison, ties included,
    /// comes out the same. (A `hi` node always has `deg ≥ 1`: with no
    /// remaining neighbor its budget is `numBanks − b ≥ 0`, which is `lo`.)
    pub fn same_order_as_h0(self, uniform: bool) -> bool {
        match self {
            Heuristic::H1 | Heuristic::H2 => uniform,
            Heuristic::H0 => true,
            Heuristic::H3 => false,
        }
    }

    /// Whether a removal can change a `hi` node's metric: all but H3's
    /// (`cost / len`) can.
    fn rekeys(self) -> bool {
        self != Heuristic::H3
    }

    /// The metric of a `hi` node: `cost` over the heuristic's denominator
    /// (clamped to 1, so a zero-bank node cannot divide by zero); `len`
    /// gives the interval length, which only H3 reads.
    fn metric(self, cost: u64, banks: u8, deg: u32, nb: u64, len: impl FnOnce() -> u64) -> Ratio {
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
struct Ratio {
    num: u64,
    den: u64,
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

/// Worklist membership of a node during simplify.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    Lo,
    Hi,
    Inf,
    Removed,
}

/// A node's simplify state, kept together so a removal touches one place
/// per neighbor. Each run copies every slot, so the spill cost, which no
/// run changes, is read from the shared costs instead (16 bytes, not 24).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Slot {
    budget: i64,
    deg: u32,
    /// `liveN` (at most 64: banks are bits of a `u64`).
    banks: u8,
    list: List,
    /// Bit `h` set when the node's component leaves simplify in the same
    /// order under heuristic `h` as under H0 (see [`Budgets::mark_agreement`]).
    agree: u8,
}

const _: () = assert!(std::mem::size_of::<Slot>() == 16);

impl Slot {
    /// A placeholder that [`fill_slots`] overwrites.
    const UNSET: Slot = Slot {
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
pub struct Budgets<'a> {
    slots: Vec<Slot>,
    costs: &'a [Cost],
    /// Initial size of `lo`.
    pub lo: usize,
    /// Initial size of `hi`.
    pub hi: usize,
    /// Initial size of `inf`.
    pub inf: usize,
}

/// Buffers that simplify runs reuse from part to part, so that many small
/// parts cost no allocation. The stack of the last run stays in it.
#[derive(Default)]
pub struct Scratch {
    slots: Vec<Slot>,
    lo: IdSet,
    infs: Vec<usize>,
    hi: HiQueue,
    stack: Vec<NodeId>,
    /// The slots and stack where `lo` first ran dry, which every run of
    /// a part goes on from.
    prefix: (Vec<Slot>, Vec<NodeId>),
}

impl Scratch {
    /// The stack of the last run, bottom first.
    #[cfg(test)]
    pub fn stack(&self) -> &[NodeId] {
        &self.stack
    }
}

/// The buffer of a [`Budgets`], handed on from one iteration's budgets to
/// the next's ([`Budgets::new_in`]); empty by default.
#[derive(Default)]
pub struct SlotBuffer(Vec<Slot>);

impl<'a> Budgets<'a> {
    /// Computes every node's budget and degree and sorts it into a
    /// worklist; on `parallel`, half the nodes on a helper thread.
    #[cfg(test)]
    pub fn new(
        g: &Interference,
        nodes: &[Node],
        costs: &'a [Cost],
        num_banks: u32,
        parallel: bool,
    ) -> Self {
        Self::new_in(g, nodes, costs, num_banks, parallel, SlotBuffer::default())
    }

    /// The budgets of `nodes` in `g`, built in the buffer of earlier
    /// budgets: an allocator iteration's budgets are as large as the
    /// program, and a fresh buffer would cost a page fault per 4 KiB every
    /// iteration.
    pub fn new_in(
        g: &Interference,
        nodes: &[Node],
        costs: &'a [Cost],
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
            slots,
            costs,
            lo,
            hi,
            inf,
        }
    }

    /// The buffer, for [`Budgets::new_in`].
    pub fn into_buffer(self) -> SlotBuffer {
        SlotBuffer(self.slots)
    }

    /// The spill costs, by node.
    pub fn costs(&self) -> &'a [Cost] {
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
    pub fn mark_agreement(&mut self, comp: &[u32]) -> bool {
        let mut any = false;
        let mut start = 0;
        for run in comp.chunk_by(|a, b| a == b) {
            let slots = &mut self.slots[start..start + run.len()];
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
    pub fn agrees(&self, u: usize, h: Heuristic) -> bool {
        h == Heuristic::H0 || self.slots[u].agree & 1 << h.index() != 0
    }
}

/// Sets the slots `out` of the nodes from `base` on, and returns how many
/// of them start in `lo`, `hi` and `inf`.
fn fill_slots(
    g: &Interference,
    nodes: &[Node],
    costs: &[Cost],
    num_banks: u32,
    base: usize,
    out: &mut [Slot],
) -> [usize; 3] {
    let mut counts = [0; 3];
    for (i, slot) in (base..).zip(out) {
        let n = &nodes[i];
        let mut budget = i64::from(num_banks) - i64::from(n.banks);
        let mut deg = 0;
        g.for_each_neighbor(NodeId::new(i), |u| {
            budget -= i64::from(nodes[u.index()].banks);
            deg += 1;
        });
        let (list, count) = if budget >= 0 {
            (List::Lo, 0)
        } else if costs[i] == Cost::Inf {
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

/// Working state of one simplify run over the part from node `base`.
struct State<'a> {
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
            nodes: graph.nodes,
            costs: graph.init.costs,
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
pub(super) fn simplify_each(
    graph: &Graph,
    hs: &[Heuristic],
    part: Range<usize>,
    skip_agreeing: bool,
    scratch: &mut Scratch,
    mut each: impl FnMut(usize, &[NodeId]),
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
        slots.extend_from_slice(&init.slots[part.clone()]);
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
            stack.retain(|v| !only_here(init.slots[v.index()].agree));
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
fn remove(g: &Interference, st: &mut State, v: usize, lo: &mut IdSet, stack: &mut Vec<NodeId>) {
    *st.list_mut(v) = List::Removed;
    stack.push(NodeId::new(v));
    let banks = u32::from(st.slot(v).banks);
    g.for_each_neighbor(NodeId::new(v), |u| {
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
    stack: &'r mut Vec<NodeId>,
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
        g.for_each_neighbor(NodeId::new(u), |w| {
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

/// A set of node ids with O(log₆₄ n) insert and pop-smallest: a bitset
/// with a summary level per 64 words, up to a single word.
#[derive(Default)]
struct IdSet {
    /// `levels[0]` holds one bit per id; each next level one bit per
    /// non-zero word of the level below.
    levels: Vec<Vec<u64>>,
}

impl IdSet {
    /// Empties the set and makes room for the ids below `n`. A drained
    /// set is all zeros, so only a larger `n` rebuilds it.
    fn reset(&mut self, n: usize) {
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

    fn insert(&mut self, mut i: usize) {
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

    fn pop_min(&mut self) -> Option<usize> {
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

/// A `hi` entry: the node's key when queued, the node, and its degree
/// then. Every key change comes with a degree change (a removal lowers
/// both the degree and the neighbor banks; the rest of a key is fixed), so
/// an entry whose degree is still the node's has its current key. Ordered
/// by key, then node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    key: Ratio,
    node: u32,
    deg: u32,
}

impl Entry {
    /// The bits of the `f64` nearest the key when its numerator and
    /// denominator are below 2^53. Both convert exactly and the quotient is
    /// correctly rounded, so `a/b ≤ c/d` gives `approx(a/b) ≤ approx(c/d)`
    /// (the bits of a non-negative `f64` order as the `f64` does): a
    /// smaller approximation means a smaller key.
    fn approx(&self) -> Option<u64> {
        const EXACT: u64 = 1 << 53;
        let Ratio { num, den } = self.key;
        (num < EXACT && den < EXACT).then(|| (num as f64 / den as f64).to_bits())
    }
}

/// The `hi` entries: the initial ones as one sorted run read through a
/// cursor, and the re-keyed ones in a [`RadixHeap`]. A pop compares the
/// two fronts once, and a push costs an append to a bucket, where a single
/// heap of up to n entries would miss the cache at every level of each
/// pop.
#[derive(Default)]
struct HiQueue {
    /// The initial entries, ascending, consumed from `next` on.
    first: Vec<Entry>,
    next: usize,
    /// Buffers of the initial sort, kept from run to run.
    sorting: Sorting,
    /// The re-keyed entries.
    fresh: RadixHeap,
    /// The node [`COMING`] entries down the initial run after the last pop
    /// from it: likely popped soon, and a pop reads its node's slot.
    coming: Option<u32>,
}

/// How far down the initial run [`HiQueue::coming`] looks.
const COMING: usize = 8;

impl HiQueue {
    /// Empties the queue and refills it with the entries `fill` adds.
    fn refill(&mut self, fill: impl FnOnce(&mut Vec<Entry>)) {
        self.first.clear();
        self.next = 0;
        fill(&mut self.first);
        let exact = self.sorting.sort(&mut self.first);
        self.fresh.reset(exact);
        self.coming = None;
    }

    fn push(&mut self, entry: Entry) {
        self.fresh.push(entry);
    }

    /// The nodes `k` places further down the initial run and down the
    /// batch of re-keyed entries being served, if any: each front is read
    /// in order, so these are likely popped soon.
    fn ahead(&self, k: usize) -> [Option<NodeId>; 2] {
        let first = self.first.get(self.next + k).map(|e| NodeId(e.node));
        let tied = &self.fresh.tied;
        let batch = (tied.len().checked_sub(k + 1)).map(|i| NodeId(tied[i].node));
        [first, batch]
    }

    /// The smallest entry, if any.
    fn peek(&mut self) -> Option<Entry> {
        let head = self.first.get(self.next).copied();
        match (head, self.fresh.peek()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Removes and returns the smallest entry.
    fn pop(&mut self) -> Option<Entry> {
        let head = self.first.get(self.next).copied();
        match (head, self.fresh.peek()) {
            (Some(a), fresh) if fresh.is_none_or(|b| a < b) => {
                self.next += 1;
                self.coming = self.first.get(self.next + COMING).map(|e| e.node);
                Some(a)
            }
            _ => {
                self.coming = None;
                self.fresh.pop()
            }
        }
    }
}

/// A radix heap (after Ahuja, Mehlhorn, Orlin and Tarjan) on the entries'
/// [`Entry::approx`], exact where approximations tie. An entry whose
/// approximation exceeds `last` waits in the bucket of the highest bit
/// where the two differ; the others are smaller than every bucketed one
/// and wait in `tied` or `low`, whose smaller front is the minimum. When
/// both run dry, the lowest non-empty bucket is spread out again around
/// its smallest approximation, which becomes `last`: the entries that have
/// it go to `tied`, sorted once, and the others to lower buckets; the
/// higher buckets stay as they are. Simplify's keys only grow, so an entry
/// moves down a few times; equal keys are common (many nodes share a cost
/// and a degree), and a sorted batch serves them faster than a heap. An
/// entry pushed at or below `last` goes to `low`. When some key has no
/// approximation, every entry goes to `low`.
#[derive(Default)]
struct RadixHeap {
    /// The last spread's entries whose approximation is `last`, in
    /// descending order (the minimum last).
    tied: Vec<Entry>,
    /// Entries pushed with an approximation of at most `last`.
    low: BinaryHeap<Reverse<Entry>>,
    /// By highest differing bit from `last`.
    buckets: Vec<Vec<Entry>>,
    /// Bit `i` set when `buckets[i]` is not empty.
    full: u64,
    last: u64,
    /// Whether entries are placed by approximation.
    exact: bool,
}

impl RadixHeap {
    /// Empties the heap; `exact` says every key to come has an
    /// approximation.
    fn reset(&mut self, exact: bool) {
        self.tied.clear();
        self.low.clear();
        self.buckets.resize_with(64, Vec::new);
        for b in &mut self.buckets {
            b.clear();
        }
        self.full = 0;
        self.last = 0;
        self.exact = exact;
    }

    fn push(&mut self, e: Entry) {
        let approx = if self.exact {
            // A re-keyed entry keeps its node's cost and has a smaller
            // denominator, so it fits where the initial entries did.
            e.approx()
                .expect("a re-keyed key fits where the initial ones did")
        } else {
            0
        };
        if approx <= self.last {
            self.low.push(Reverse(e));
        } else {
            self.bucket(approx, e);
        }
    }

    /// Puts an entry whose approximation exceeds `last` in its bucket.
    fn bucket(&mut self, approx: u64, e: Entry) {
        let bit = 63 - (approx ^ self.last).leading_zeros() as usize;
        self.buckets[bit].push(e);
        self.full |= 1 << bit;
    }

    /// The smallest entry, if any, spreading out a bucket if `tied` and
    /// `low` are empty.
    fn peek(&mut self) -> Option<Entry> {
        if self.tied.is_empty() && self.low.is_empty() && self.full != 0 {
            let bit = self.full.trailing_zeros() as usize;
            self.full &= !(1 << bit);
            let mut bucket = std::mem::take(&mut self.buckets[bit]);
            // Bucketed entries have approximations (see `push`).
            let approx = |e: &Entry| e.approx().unwrap_or_default();
            self.last = (bucket.iter().map(approx).min()).expect("a full bucket has entries");
            // Every entry lands in `tied` or below `bit`.
            for e in bucket.drain(..) {
                let a = approx(&e);
                if a == self.last {
                    self.tied.push(e);
                } else {
                    self.bucket(a, e);
                }
            }
            sort_descending(&mut self.tied);
            self.buckets[bit] = bucket;
        }
        match (self.tied.last(), self.low.peek()) {
            (Some(&t), Some(l)) => Some(t.min(l.0)),
            (t, l) => t.copied().or(l.map(|l| l.0)),
        }
    }

    fn pop(&mut self) -> Option<Entry> {
        let e = self.peek()?;
        if self.tied.last() == Some(&e) {
            self.tied.pop()
        } else {
            self.low.pop().map(|r| r.0)
        }
    }
}

/// The buffers of [`Sorting::sort`].
#[derive(Default)]
struct Sorting {
    keys: Vec<(u64, u32)>,
    spare: Vec<Entry>,
}

impl Sorting {
    /// Sorts `entries` as `sort_unstable` does (key, then node); returns
    /// whether every key has an approximation ([`Entry::approx`]). Then
    /// the entries are ordered by it first (a radix sort for a large
    /// batch, a sort of integer pairs for a small one), stably, and only
    /// runs of equal approximations out of order are sorted exactly: exact
    /// comparisons multiply, and the first batch holds every `hi` node.
    /// Otherwise they are sorted exactly.
    fn sort(&mut self, entries: &mut Vec<Entry>) -> bool {
        let Sorting { keys, spare } = self;
        keys.clear();
        for (i, e) in entries.iter().enumerate() {
            let Some(approx) = e.approx() else {
                entries.sort_unstable();
                return false;
            };
            keys.push((approx, i as u32));
        }
        if keys.len() < RADIX_MIN {
            keys.sort_unstable();
        } else {
            radix_sort(keys);
        }
        spare.clear();
        spare.extend(keys.iter().map(|&(_, i)| entries[i as usize]));
        std::mem::swap(entries, spare);
        let mut start = 0;
        for run in keys.chunk_by(|a, b| a.0 == b.0) {
            let run = &mut entries[start..start + run.len()];
            start += run.len();
            if !run.is_sorted() {
                run.sort_unstable();
            }
        }
        true
    }
}

/// Sorts `entries` in descending order. Entries tied on their
/// approximation mostly share their exact key too, and then node and
/// degree order them: one integer per entry to compare, where the full
/// order cross-multiplies keys at every comparison.
fn sort_descending(entries: &mut [Entry]) {
    let Some(first) = entries.first().map(|e| e.key) else {
        return;
    };
    let same = |k: &Ratio| (k.num == first.num && k.den == first.den) || *k == first;
    if entries.iter().all(|e| same(&e.key)) {
        entries.sort_unstable_by_key(|e| Reverse(u64::from(e.node) << 32 | u64::from(e.deg)));
    } else {
        entries.sort_unstable_by(|a, b| b.cmp(a));
    }
}

/// Pops the `hi` node with the smallest current key (see [`Run::drain`]).
/// An entry whose degree is current has its node's key; an outdated entry
/// whose current key still comes before every other entry (each a lower
/// bound of its node's key) is the minimum as it is.
fn pop_hi(hi: &mut HiQueue, st: &State) -> Option<usize> {
    while let Some(old) = hi.pop() {
        if let Some(c) = hi.coming {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(node: u32, num: u64, den: u64) -> Entry {
        Entry {
            key: Ratio { num, den },
            node,
            deg: 0,
        }
    }

    /// Entries sort exactly as by comparison, large batches (radix) and
    /// small ones, of many keys or of a few (counted), in buffers reused
    /// from batch to batch: with exact ties (`2/4` and `1/2`), distinct
    /// ratios too close for an `f64` to tell apart, zero costs, and
    /// numerators too wide for it.
    #[test]
    fn entries_sort_as_by_comparison() {
        let mut rng = crate::gen::random::Rng::new(9);
        let mut rnd = move |n: u64| rng.below(n);
        let mut close = 0;
        let mut sorting = Sorting::default();
        for round in 0..12 {
            let n = match round % 3 {
                0 => 1 + rnd(300) as usize,
                _ => RADIX_MIN + rnd(1000) as usize,
            };
            // A few values: every key from a pool of 40.
            let few = round % 3 == 2;
            let entries: Vec<Entry> = (0..n as u32)
                .map(|i| {
                    let x = if few { rnd(40) } else { rnd(1 << 20) };
                    match rnd(5) {
                        // A third, or a hair below: `m / (3m + 1)`.
                        0 => {
                            let m = (1 << 51) - x;
                            entry(i, m, 3 * m + rnd(2))
                        }
                        1 => entry(i, x, 3),
                        2 => entry(i, 2 * x, 6),
                        3 => entry(i, 0, 1 + rnd(9)),
                        _ if round == 5 => entry(i, u64::MAX - rnd(9), 1 + rnd(9)),
                        _ if few => entry(i, x << 30, 1 + x % 7),
                        _ => entry(i, rnd(1 << 40), 1 + rnd(1 << 40)),
                    }
                })
                .collect();
            let mut want = entries.clone();
            want.sort_unstable();
            let mut got = entries;
            let exact = got.iter().all(|e| e.approx().is_some());
            assert_eq!(sorting.sort(&mut got), exact);
            assert_eq!(got, want, "round {round}");
            let f = |e: &Entry| e.key.num as f64 / e.key.den as f64;
            close += (want.windows(2))
                .filter(|w| w[0].key < w[1].key && f(&w[0]) == f(&w[1]))
                .count();
        }
        assert!(close > 10, "{close} distinct keys with one f64");
    }

    /// A tied batch sorts descending as by comparison, on node and degree
    /// when its keys are all one (`2/4` and `1/2` are), exactly when two of
    /// them only share an `f64`.
    #[test]
    fn tied_entries_sort_descending() {
        let mut rng = crate::gen::random::Rng::new(4);
        // `m / (3m + 1)` and `(m + 1) / (3m + 4)` differ by less than the
        // `f64` spacing there.
        let m = (1u64 << 51) - 6;
        for close in [false, true] {
            let mut entries: Vec<Entry> = (0..200)
                .map(|_| {
                    let node = rng.below(50) as u32;
                    let e = match (rng.below(2), close) {
                        (0, false) => entry(node, 1, 2),
                        (_, false) => entry(node, 2, 4),
                        (0, true) => entry(node, m, 3 * m + 1),
                        (_, true) => entry(node, m + 1, 3 * m + 4),
                    };
                    Entry {
                        deg: rng.below(3) as u32,
                        ..e
                    }
                })
                .collect();
            let mut want = entries.clone();
            want.sort_unstable_by(|a, b| b.cmp(a));
            let approx = entries[0].approx();
            assert!(entries.iter().all(|e| e.approx() == approx));
            sort_descending(&mut entries);
            assert_eq!(entries, want, "close: {close}");
        }
    }

    /// The queue pops exactly what one binary heap of the same entries
    /// pops, while re-keyed entries spread through the buckets, some of
    /// them pushed below the heap's `last`; with keys too wide for an
    /// `f64`, every re-keyed entry waits in `low`.
    #[test]
    fn hi_queue_pops_in_key_order() {
        let mut rng = crate::gen::random::Rng::new(7);
        let mut rnd = move || rng.next_u64();
        for wide in [false, true] {
            let n = 1 << 16;
            let init: Vec<Entry> = (0..n as u32)
                .map(|i| {
                    let num = if wide && i % 100 == 0 {
                        u64::MAX / 2
                    } else {
                        rnd() % 1000
                    };
                    entry(i, num, 1 + rnd() % 7)
                })
                .collect();
            let mut model: BinaryHeap<Reverse<Entry>> = init.iter().map(|&e| Reverse(e)).collect();
            let mut q = HiQueue::default();
            q.refill(|entries| entries.extend_from_slice(&init));
            let (mut pops, mut pushes, mut below, mut most_full) = (0, 0, 0, 0);
            while let Some(e) = q.pop() {
                assert_eq!(Some(e), model.pop().map(|r| r.0));
                pops += 1;
                if pushes < 8 * n && rnd() % 4 != 0 {
                    // Simplify only raises keys, often far past the others.
                    let raise = [0, 1, rnd() % 100, rnd() % 100_000][(rnd() % 4) as usize];
                    let cur = entry(e.node, e.key.num.saturating_add(raise), e.key.den);
                    below += usize::from(cur.approx().is_some_and(|a| a < q.fresh.last));
                    q.push(cur);
                    model.push(Reverse(cur));
                    pushes += 1;
                }
                assert_eq!(q.peek(), model.peek().map(|r| r.0));
                most_full = most_full.max(q.fresh.full.count_ones());
            }
            assert!(model.is_empty());
            assert_eq!(pops, n + pushes);
            assert!(pushes > 2 * n, "{pushes} pushes");
            if wide {
                assert_eq!(most_full, 0, "wide keys all wait in low");
            } else {
                assert!(most_full >= 8, "{most_full} buckets in use at once");
                assert!(below > 100, "{below} pushes below last");
            }
        }
    }
}
