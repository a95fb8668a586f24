//! psum's own allocator, `--allocator mincost` (SPEC §3.11, not the
//! reference's): one sweep over the program points that places every
//! live range in aligned banks and, where one does not fit, lets go the
//! values whose going frees the most points per cycle, under split
//! spilling (SPEC §3.11: §3.8's save, and a reload only where the value
//! was out of PSUM, serving the groups after it) and the costs of SPEC
//! §3.5.
//!
//! A spilled node holds PSUM where its spill code needs it: from its start
//! to its save (its head), over each read group, and from each reload to
//! the next time it goes. The sweep knows a node's pieces in advance
//! (`Pieces`), so it can let a value go at any point where it holds PSUM
//! for nothing and later place the reload where its next group starts, as
//! if the spill code were already there. When a piece starting at point
//! `p` finds no free aligned block, the sweep frees the block whose
//! holders cost least per point freed: a holder whose block can swap
//! its pieces, from some point on, with a free block of its size moves
//! there for nothing, as if the banks had been chosen so (a Kempe
//! interchange over the banks' histories); each other holder that `p`
//! leaves idle
//! costs what its going adds to the spill code (a save, a reload) and
//! frees its banks up to its next read group (furthest next use in the
//! manner of Belady, weighed by cost; the points after that group count
//! an eighth). A block is chosen
//! among the free ones by aligned (buddy) placement: the one whose
//! enclosing block of twice its size is the fullest (then of four times,
//! and so on), so large blocks stay whole; among equals, one-bank pieces
//! take the highest and larger ones the lowest (worked out once per set of
//! busy banks on up to eight banks). A program whose peak demand is
//! within the banks is first swept with nothing spillable, which needs no
//! spill costs; when that places every piece, it is the plain sweep's
//! placement and the result. Otherwise, on programs of at most 4,096
//! nodes, the sweep runs again from its own spill set thinned, and on
//! programs of at most 512 nodes a local search
//! over the ways each node is let go follows from each, with seeded
//! restarts on the smallest. On one-bank programs whose spill code does
//! not depend on loops, the idle ranges to let go are then chosen again
//! by minimum-cost flow (the `reflow` module).
//!
//! The spill code then goes in in one round ([`spill::insert_spill_code`]),
//! into a module grown for it on the other thread while the sweep ran, and
//! the banks of the sweep carry over to the program with it. When the
//! program's own live ranges disagree with the sweep's pieces (a value a
//! loop carries across its save), the program is swept again, as it now
//! is, until it fits; a piece that no spilling can place hands the
//! program as it stands to [`super::Allocator::Briggs`].

use super::analysis::{analyze, Analysis};
use super::costs::{spill_plan, Cost};
use super::linear::Linear;
use super::liveness::{self, Liveness, Node};
use super::log::{hundredths, pct_text, Log};
use super::reflow;
use super::spill::SpillPlans;
use super::support::threads::{self, PARALLEL_MIN_NODES};
use super::{
    outcome, spill, AllocError, AllocOptions, AllocOutcome, AllocReport, Allocator, NodeId,
};
use crate::arch::{self, bank_alignment};
use crate::bound::MaxAddTree;
use crate::gen::random::Rng;
use crate::ir::{InstKind, Mem, Module, Stmt, TensorId};
use std::cell::{Cell, OnceCell, RefCell};
use std::cmp::Reverse;

/// What each node of one iteration holds when it is spilled, and its cost.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Pieces {
    /// Spill cost of each node (SPEC §3.5): its save and a reload per read
    /// group.
    pub cost: Vec<Cost>,
    /// What each spillable node's save costs (0 for the others).
    pub save_cost: Vec<u64>,
    /// The point each spillable node's save goes right after (SPEC §3.8).
    pub save_after: Vec<u32>,
    /// The last point of each spillable node's head (its interval from its
    /// start to its save, loop extension included).
    pub head_end: Vec<u32>,
    /// Node `v`'s read groups are `groups[first[v]..first[v + 1]]`.
    pub first: Vec<u32>,
    /// Read groups, closed point ranges, each node's in order.
    pub groups: Vec<(u32, u32)>,
    /// What a reload right before each read group costs.
    pub reload_cost: Vec<u64>,
    /// The last point of a node's own tensor when it keeps its read groups
    /// up to this one (loop extension included).
    pub kept_end: Vec<u32>,
    /// The last read group a reload right before this one can serve: the
    /// run of the node's groups from here whose innermost loop is this
    /// group's, so that the reload's live range is the run's span.
    pub reach: Vec<u32>,
}

impl Pieces {
    /// The pieces of every node of `live` on `lin`; `pinned` flags by
    /// tensor the nodes that cannot spill again. In `parallel`, the two
    /// halves of the nodes are worked out side by side.
    pub fn of(
        lin: &Linear,
        live: &Liveness,
        pinned: &[bool],
        latency: u64,
        parallel: bool,
    ) -> Pieces {
        let n = live.nodes.len();
        let half = |nodes| Pieces::of_nodes(lin, live, pinned, latency, nodes);
        let (mut pieces, late) = threads::in_halves(parallel, n, half);
        pieces.append(late);
        pieces
    }

    /// The pieces of the nodes `nodes` (their groups numbered from 0).
    fn of_nodes(
        lin: &Linear,
        live: &Liveness,
        pinned: &[bool],
        latency: u64,
        nodes: std::ops::Range<usize>,
    ) -> Pieces {
        let n = nodes.len();
        let mut pieces = Pieces {
            cost: vec![Cost::Inf; n],
            save_cost: vec![0; n],
            save_after: vec![0; n],
            head_end: vec![0; n],
            first: Vec::with_capacity(n + 1),
            groups: Vec::new(),
            reload_cost: Vec::new(),
            kept_end: Vec::new(),
            reach: Vec::new(),
        };
        pieces.first.push(0);
        for (i, node) in live.nodes[nodes.clone()].iter().enumerate() {
            let v = NodeId::new(nodes.start + i);
            let plan = (!pinned[node.tensor.index()])
                .then(|| spill_plan(lin, live, v))
                .flatten();
            if let Some(plan) = plan {
                let per = u64::from(node.banks).saturating_mul(latency);
                let mut weight = lin.weight(plan.save_after);
                pieces.save_cost[i] = per.saturating_mul(weight);
                pieces.save_after[i] = plan.save_after;
                pieces.head_end[i] = liveness::extend(lin, node.def, plan.save_after).1;
                let from = pieces.groups.len();
                (pieces.groups).extend(plan.groups(live.events_of(v, lin)));
                for &(lo, hi) in &pieces.groups[from..] {
                    weight = weight.saturating_add(lin.weight(lo));
                    (pieces.reload_cost).push(per.saturating_mul(lin.weight(lo)));
                    (pieces.kept_end).push(liveness::extend(lin, node.def, hi).1);
                }
                // §3.5's cost, as `costs::find_costs` works it out.
                pieces.cost[i] = Cost::Finite(per.saturating_mul(weight));
                let to = pieces.groups.len();
                let innermost = |g: usize| lin.points[pieces.groups[g].0 as usize].innermost();
                let mut last = to.saturating_sub(1);
                for g in (from..to).rev() {
                    if g + 1 < to && innermost(g) != innermost(g + 1) {
                        last = g;
                    }
                    pieces.reach.push(last as u32);
                }
                pieces.reach[from..].reverse();
            }
            pieces.first.push(pieces.groups.len() as u32);
        }
        pieces
    }

    /// Node `v`'s spans for the split-spilling cost bound (SPEC §3.11,
    /// `bound::min_split_cost_one_bank`): the stretches it holds PSUM over
    /// even when spilled (the whole interval when it cannot spill), its
    /// idle ranges, each with the reload before the group after it, and
    /// its save.
    pub fn split_spans(&self, v: usize, node: &Node) -> SplitSpans {
        let mut spans = SplitSpans {
            held: Vec::new(),
            idle: Vec::new(),
            save: self.save_cost[v],
        };
        for stretch in self.stretches(v, node) {
            match stretch {
                Stretch::Held(span) => spans.held.push(span),
                Stretch::Idle(span, next) => {
                    let reload = next.map_or(0, |g| self.reload_cost[g]);
                    spans.idle.push((span, reload));
                }
            }
        }
        spans
    }

    /// Node `v`'s interval cut into the stretches it holds PSUM over even
    /// when spilled and its idle ranges, in order (the whole interval held
    /// when it cannot spill).
    pub fn stretches<'a>(
        &'a self,
        v: usize,
        node: &Node,
    ) -> impl Iterator<Item = Stretch> + use<'a> {
        let spillable = self.cost[v] != Cost::Inf;
        let mut idle = self.idle_ranges(v, node).filter(move |_| spillable);
        let (mut from, end) = (node.start, node.end);
        let mut gap = None;
        std::iter::from_fn(move || {
            if let Some((span, next)) = gap.take() {
                return Some(Stretch::Idle(span, next));
            }
            match idle.next() {
                Some(((lo, hi), next)) => {
                    let held = (from, lo - 1);
                    from = hi + 1;
                    if lo > held.0 {
                        gap = Some(((lo, hi), next));
                        Some(Stretch::Held(held))
                    } else {
                        Some(Stretch::Idle((lo, hi), next))
                    }
                }
                None if from <= end => {
                    let held = (from, end);
                    from = end + 1;
                    Some(Stretch::Held(held))
                }
                None => None,
            }
        })
    }

    /// Whether no node's spill code depends on loops: every read group's
    /// kept end is its own last point and its reload serves every later
    /// group of its node, so a spilled node holds PSUM exactly over its
    /// held [`Stretch`]es and the idle ranges it keeps.
    pub fn unextended(&self) -> bool {
        (0..self.first.len() - 1).all(|v| {
            let groups = self.groups_of(v);
            let last = groups.end.saturating_sub(1) as u32;
            groups
                .into_iter()
                .all(|g| self.kept_end[g] == self.groups[g].1 && self.reach[g] == last)
        })
    }

    /// Appends the pieces of the nodes after these (`late`, whose groups
    /// are numbered from 0).
    fn append(&mut self, late: Pieces) {
        let g = self.groups.len() as u32;
        self.cost.extend(late.cost);
        self.save_cost.extend(late.save_cost);
        self.save_after.extend(late.save_after);
        self.head_end.extend(late.head_end);
        self.first.extend(late.first[1..].iter().map(|&f| f + g));
        self.groups.extend(late.groups);
        self.reload_cost.extend(late.reload_cost);
        self.kept_end.extend(late.kept_end);
        self.reach.extend(late.reach.iter().map(|&r| r + g));
    }

    /// The pieces of `n` nodes none of which can spill.
    fn unspillable(n: usize) -> Pieces {
        Pieces {
            cost: vec![Cost::Inf; n],
            save_cost: vec![0; n],
            save_after: vec![0; n],
            head_end: vec![0; n],
            first: vec![0; n + 1],
            groups: Vec::new(),
            reload_cost: Vec::new(),
            kept_end: Vec::new(),
            reach: Vec::new(),
        }
    }

    /// The most copies the spill code of any of these nodes can take: a
    /// save for each spillable node and a reload before each read group.
    pub fn copies_at_most(&self) -> usize {
        self.cost.iter().filter(|c| **c != Cost::Inf).count() + self.groups.len()
    }

    /// Where node `v`'s read groups are in `groups`.
    pub fn groups_of(&self, v: usize) -> std::ops::Range<usize> {
        self.first[v] as usize..self.first[v + 1] as usize
    }

    /// The closed point ranges where spillable node `v` (`node`) would
    /// hold no PSUM once spilled: between its head, its read groups and
    /// its end.
    pub fn idle<'a>(&'a self, v: usize, node: &Node) -> impl Iterator<Item = (u32, u32)> + use<'a> {
        self.idle_ranges(v, node).map(|(span, _)| span)
    }

    /// [`Pieces::idle`], each range with the read group right after it
    /// (`None`: the range after the last).
    fn idle_ranges<'a>(
        &'a self,
        v: usize,
        node: &Node,
    ) -> impl Iterator<Item = ((u32, u32), Option<usize>)> + use<'a> {
        let groups = self.groups_of(v);
        let ends =
            (groups.map(|g| (self.groups[g], Some(g)))).chain([((node.end + 1, node.end), None)]);
        let mut from = self.head_end[v] + 1;
        ends.filter_map(move |((lo, hi), g)| {
            let gap = (lo > from).then(|| ((from, lo - 1), g));
            from = hi + 1;
            gap
        })
    }

    /// The banks in use at each of `points` points when the nodes that
    /// `spilled` flags hold PSUM only over their heads and read groups.
    fn load(&self, nodes: &[Node], spilled: &[bool], points: usize) -> Vec<i64> {
        let mut delta = vec![0i64; points + 1];
        for (v, n) in nodes.iter().enumerate() {
            let b = i64::from(n.banks);
            delta[n.start as usize] += b;
            delta[n.end as usize + 1] -= b;
            if spilled[v] {
                for (lo, hi) in self.idle(v, n) {
                    delta[lo as usize] -= b;
                    delta[hi as usize + 1] += b;
                }
            }
        }
        let mut at = 0;
        delta.truncate(points);
        for d in &mut delta {
            at += *d;
            *d = at;
        }
        delta
    }
}

/// A stretch of a node's interval ([`Pieces::stretches`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stretch {
    /// Held even when the node is spilled: its head, a read group, what
    /// lies between adjacent groups.
    Held((u32, u32)),
    /// Idle once spilled, with the read group right after it (`None`:
    /// after its last).
    Idle((u32, u32), Option<usize>),
}

/// One node's spans for the split-spilling cost bound (`psum bound`'s
/// `min_split_cost_cycles`, SPEC §3.11).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitSpans {
    /// Where it holds PSUM even when spilled.
    pub held: Vec<(u32, u32)>,
    /// Its idle ranges, each with the reload its going there costs.
    pub idle: Vec<((u32, u32), u64)>,
    /// What its save costs, paid once for all its ranges that go.
    pub save: u64,
}

/// The split-spilling spans of every node of a validated module's first
/// iteration (for `psum bound` and `psum export --split-lp`), and whether
/// they describe its split spill code exactly: whether no node's spill code
/// depends on loops (every read group kept on its own tensor up to its
/// last point, and a reload serving every later group of its node).
pub fn split_spans(first: &Analysis, latency: u64) -> (Vec<SplitSpans>, bool) {
    let pinned = vec![false; first.module.tensors.len()];
    let pieces = Pieces::of(&first.lin, &first.live, &pinned, latency, false);
    let spans = (first.live.nodes.iter().enumerate())
        .map(|(v, n)| pieces.split_spans(v, n))
        .collect();
    (spans, pieces.unextended())
}

/// A free bank in [`Sweep`]'s bank table.
const FREE: u32 = u32::MAX;

/// How many pieces back [`Sweep::swap_point`] looks for a point two
/// blocks can swap from.
const SWAP_ROUNDS: usize = 8;

/// The most pieces of one bank [`Sweep::swap_point`] lets a swap move.
const SWAP_PIECES: usize = 32;

/// Where the pieces of bank history `h` placed from point `at` on begin,
/// when there are at most [`SWAP_PIECES`] of them (found from the end).
fn recent_from(h: &[(u32, u32)], at: u32) -> Option<usize> {
    let lo = h.len().saturating_sub(SWAP_PIECES + 1);
    match h[lo..].iter().rposition(|&(s, _)| s < at) {
        Some(i) => Some(lo + i + 1),
        None => (lo == 0).then_some(0),
    }
}

/// Two blocks of `size` banks, from banks `from` and `to`, that swap the
/// pieces placed in them from point `at` on.
#[derive(Clone, Copy, Debug)]
struct Move {
    from: u32,
    to: u32,
    size: u32,
    at: u32,
}

/// The placement one sweep found: the spilled nodes, where they are
/// reloaded, and every piece's base bank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Placement {
    /// The nodes to spill, ascending.
    pub spilled: Vec<NodeId>,
    /// Base bank of each node (over its whole interval, or up to where it
    /// goes when spilled).
    pub bank: Vec<u8>,
    /// Per read group of [`Pieces::groups`], whether a reload goes right
    /// before it.
    pub reload: Vec<bool>,
    /// Base bank of the reload before each read group (meaningful where
    /// `reload` is set).
    pub group_bank: Vec<u8>,
}

/// A piece that no spilling could place: its node and first point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Stuck {
    /// The node.
    pub node: NodeId,
    /// Where it starts.
    pub point: u32,
}

/// No segment, in [`Sweep`]'s lists.
const NONE: u32 = u32::MAX;

/// The aligned block of `banks` banks from bank `base`, as a bit mask.
fn block(base: u32, banks: u32) -> u64 {
    (u64::MAX >> (64 - banks)) << base
}

/// The free aligned block of `banks` banks (of `num_banks`, `busy` held)
/// a piece takes, by its base: the one whose enclosing block of twice its
/// size is the fullest, then of four times, and so on; among equals, the
/// highest when `high`, else the lowest. `None` when none is free.
fn free_block(busy: u64, banks: u32, high: bool, num_banks: u32) -> Option<u32> {
    if banks > num_banks {
        return None;
    }
    let align = bank_alignment(banks);
    let mut best: Option<([u8; 8], u32)> = None;
    for b in (0..=num_banks.saturating_sub(banks)).step_by(align as usize) {
        if busy & block(b, banks) != 0 {
            continue;
        }
        let mut held = [0u8; 8];
        let mut size = 2 * align;
        for h in &mut held {
            if size / 2 >= num_banks {
                break;
            }
            let lo = b - b % size;
            let hi = (lo + size).min(num_banks);
            *h = (busy & block(lo, hi - lo)).count_ones() as u8;
            size *= 2;
        }
        if best.is_none_or(|(h, _)| held > h || (held == h && high)) {
            best = Some((held, b));
        }
    }
    best.map(|(_, b)| b)
}

/// Banks up to which [`Problem`] keeps [`free_block`]'s answers in a table.
const TABLE_BANKS: u32 = 8;

/// A [`free_block`] answer not yet in the table.
const UNKNOWN: u8 = u8::MAX - 1;

/// No free block, in the table.
const NO_BLOCK: u8 = u8::MAX;

/// The state of one sweep. Segment `v < n` is node `v`'s own tensor (its
/// interval, cut where it goes when spilled); segment `n + g` is the
/// reload right before read group `g`, which holds its node's value from
/// there over the groups it serves until it goes in turn.
struct Sweep<'a> {
    problem: &'a Problem<'a>,
    /// How each node may be let go.
    chosen: &'a [Let],
    /// The nodes whose pieces take the other end among equal blocks (none
    /// when empty).
    flipped: &'a [bool],
    /// Per node, the base bank its own tensor takes when that block is
    /// free, plus 1 (0: none; none at all when empty).
    prefer: &'a [u8],
    /// The segment holding each bank.
    owner: Vec<u32>,
    /// The banks held, bit `x` for bank `x`.
    busy: u64,
    /// Per bank, the segments placed in it with their starts, in order of
    /// start.
    history: Vec<Vec<(u32, u32)>>,
    /// Room for [`Sweep::free_cheapest`]'s moves: those of the block it
    /// weighs, and those of the best block so far.
    moves: [Vec<Move>; 2],
    /// Each segment's base bank and current last point.
    base: Vec<u8>,
    end: Vec<u32>,
    spilled: Vec<bool>,
    /// Per read group, whether a reload goes right before it.
    reload: Vec<bool>,
    /// Per node, its first read group not yet behind the sweep.
    cursor: Vec<u32>,
    /// Per point, the first of a list (through `link`) of the segments
    /// placed to end there; a node spilled since is skipped.
    ending: Vec<u32>,
    /// Per point, the first of a list through `link` of the read groups of
    /// spilled nodes that start there, still to place.
    pending: Vec<u32>,
    /// The next segment of the list each segment is in.
    link: Vec<u32>,
}

/// What every sweep of one iteration shares.
pub(super) struct Problem<'a> {
    nodes: &'a [Node],
    pieces: &'a Pieces,
    num_banks: u32,
    /// Points of the program: one past the last end.
    points: usize,
    /// `over[p]`: the points before `p` where the program, nothing
    /// spilled, needs more banks than there are; worked out on first use
    /// (a sweep that frees no block never asks).
    over: OnceCell<Vec<u32>>,
    /// The nodes by start (ties: by id).
    order: Vec<u32>,
    /// The node of each read group.
    group_node: Vec<u32>,
    /// [`free_block`]'s answers on at most [`TABLE_BANKS`] banks, filled
    /// as they are asked for: entry `((banks - 1) * 2 + high) << num_banks
    /// | busy`.
    blocks: Vec<Cell<u8>>,
    /// Whether some node holds more than one bank: only then can a block
    /// be fragmented, and the sweeps keep the history of their banks.
    multi_bank: bool,
    /// The bank histories of the last sweep that finished, emptied, for
    /// the next to fill.
    histories: RefCell<Vec<Vec<(u32, u32)>>>,
}

impl<'a> Problem<'a> {
    /// The sweeps of `nodes`, with `pieces`, on `num_banks` banks (at most 64).
    pub fn new(nodes: &'a [Node], pieces: &'a Pieces, num_banks: u32) -> Self {
        assert!(num_banks <= 64, "a sweep holds at most 64 banks");
        let n = nodes.len();
        let points = nodes.iter().map(|v| v.end as usize + 1).max().unwrap_or(0);
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_by_key(|&v| (nodes[v as usize].start, v));
        let mut group_node = Vec::with_capacity(pieces.groups.len());
        for v in 0..n {
            group_node.extend(pieces.groups_of(v).map(|_| v as u32));
        }
        let table = if num_banks <= TABLE_BANKS {
            (2 * num_banks as usize) << num_banks
        } else {
            0
        };
        Problem {
            nodes,
            pieces,
            num_banks,
            points,
            over: OnceCell::new(),
            order,
            group_node,
            blocks: vec![Cell::new(UNKNOWN); table],
            multi_bank: nodes.iter().any(|v| v.banks > 1),
            histories: RefCell::new(vec![Vec::new(); num_banks as usize]),
        }
    }

    /// The field `over`, worked out on first use.
    fn over(&self) -> &[u32] {
        self.over.get_or_init(|| {
            let load = (self.pieces).load(self.nodes, &vec![false; self.nodes.len()], self.points);
            let mut over = Vec::with_capacity(self.points + 1);
            over.push(0);
            for &l in &load {
                let last = *over.last().expect("starts with 0");
                over.push(last + u32::from(l > i64::from(self.num_banks)));
            }
            over
        })
    }

    /// [`free_block`] of `busy`, from the table where it has one.
    fn free_block(&self, busy: u64, banks: u32, high: bool) -> Option<u32> {
        if self.blocks.is_empty() || banks > self.num_banks {
            return free_block(busy, banks, high, self.num_banks);
        }
        let key = ((banks as usize - 1) * 2 + usize::from(high)) << self.num_banks | busy as usize;
        let entry = &self.blocks[key];
        if entry.get() == UNKNOWN {
            let base = free_block(busy, banks, high, self.num_banks);
            entry.set(base.map_or(NO_BLOCK, |b| b as u8));
        }
        (entry.get() != NO_BLOCK).then(|| u32::from(entry.get()))
    }

    /// Sweeps the nodes, letting them go as `chosen` says; the pieces of
    /// the nodes `flipped` flags (none when it is empty) take the other
    /// end among equally good blocks.
    pub fn sweep(&self, chosen: &[Let], flipped: &[bool]) -> Result<Placement, Stuck> {
        Sweep::new(self, chosen, flipped, &[]).run()
    }

    /// [`Problem::sweep`], each node's own tensor taking the base bank
    /// `prefer` gives it (plus 1; 0: none) when that block is free.
    fn sweep_preferring(
        &self,
        chosen: &[Let],
        flipped: &[bool],
        prefer: &[u8],
    ) -> Result<Placement, Stuck> {
        Sweep::new(self, chosen, flipped, prefer).run()
    }
}

impl<'a> Sweep<'a> {
    fn new(
        problem: &'a Problem<'a>,
        chosen: &'a [Let],
        flipped: &'a [bool],
        prefer: &'a [u8],
    ) -> Self {
        let Problem { nodes, pieces, .. } = *problem;
        let n = nodes.len();
        let segs = n + pieces.groups.len();
        let mut end: Vec<u32> = nodes.iter().map(|v| v.end).collect();
        // The histories a stuck sweep kept are made afresh.
        let mut history = problem.histories.take();
        history.resize(problem.num_banks as usize, Vec::new());
        end.extend(pieces.reach.iter().map(|&r| pieces.groups[r as usize].1));
        Sweep {
            problem,
            chosen,
            flipped,
            prefer,
            owner: vec![FREE; problem.num_banks as usize],
            busy: 0,
            history,
            moves: [Vec::new(), Vec::new()],
            base: vec![0; segs],
            end,
            spilled: vec![false; n],
            reload: vec![false; pieces.groups.len()],
            cursor: pieces.first[..n].to_vec(),
            ending: vec![NONE; problem.points],
            pending: vec![NONE; problem.points],
            link: vec![NONE; segs],
        }
    }

    fn banks(&self, seg: usize) -> u32 {
        self.problem.nodes[self.node_of(seg)].banks
    }

    /// The node of segment `seg`.
    fn node_of(&self, seg: usize) -> usize {
        let n = self.problem.nodes.len();
        if seg < n {
            seg
        } else {
            self.problem.group_node[seg - n] as usize
        }
    }

    /// Runs the sweep: every piece placed, or the first that cannot be.
    fn run(mut self) -> Result<Placement, Stuck> {
        let Problem { nodes, order, .. } = self.problem;
        let n = nodes.len();
        let mut next = order.iter().peekable();
        let mut starting: Vec<(u32, u32)> = Vec::new();
        for p in 0..self.problem.points as u32 {
            if p > 0 {
                self.release_at(p - 1);
            }
            starting.clear();
            while let Some(&&v) = next.peek() {
                if nodes[v as usize].start != p {
                    break;
                }
                starting.push((nodes[v as usize].banks, v));
                next.next();
            }
            let mut seg = std::mem::replace(&mut self.pending[p as usize], NONE);
            while seg != NONE {
                starting.push((self.banks(seg as usize), seg));
                seg = self.link[seg as usize];
            }
            // The largest pieces first: they have the fewest blocks to go to.
            starting.sort_unstable_by_key(|&(b, s)| (Reverse(b), s));
            for &(banks, seg) in &starting {
                self.place(seg as usize, banks, p)?;
            }
        }
        for h in &mut self.history {
            h.clear();
        }
        self.problem
            .histories
            .replace(std::mem::take(&mut self.history));
        let spilled: Vec<NodeId> = (0..n)
            .filter(|&v| self.spilled[v])
            .map(NodeId::new)
            .collect();
        let group_bank = self.base.split_off(n);
        Ok(Placement {
            spilled,
            bank: self.base,
            reload: self.reload,
            group_bank,
        })
    }

    /// Frees the banks of the segments that end at `q`. A reload that
    /// ends short of its node's last group, because the next group is in
    /// another loop, is followed by a reload before that group.
    fn release_at(&mut self, q: u32) {
        let n = self.problem.nodes.len();
        let mut seg = std::mem::replace(&mut self.ending[q as usize], NONE);
        while seg != NONE {
            let next = self.link[seg as usize];
            if self.end[seg as usize] == q {
                self.free(seg as usize);
                if let Some(g) = (seg as usize).checked_sub(n) {
                    let u = self.problem.group_node[g] as usize;
                    let r = self.problem.pieces.reach[g] as usize + 1;
                    if r < self.problem.pieces.first[u + 1] as usize {
                        self.reload_at(r);
                    }
                }
            }
            seg = next;
        }
    }

    /// Puts a reload right before read group `g`, to be placed where the
    /// group starts.
    fn reload_at(&mut self, g: usize) {
        let lo = self.problem.pieces.groups[g].0 as usize;
        let seg = self.problem.nodes.len() + g;
        self.reload[g] = true;
        self.link[seg] = std::mem::replace(&mut self.pending[lo], seg as u32);
    }

    fn free(&mut self, seg: usize) {
        let base = u32::from(self.base[seg]);
        for x in base..base + self.banks(seg) {
            if self.owner[x as usize] == seg as u32 {
                self.owner[x as usize] = FREE;
                self.busy &= !(1 << x);
            }
        }
    }

    /// Adds placed segment `seg` to the history of its banks, in order of
    /// start (a reload behind the sweep goes in before later pieces).
    fn record(&mut self, seg: usize) {
        if !self.problem.multi_bank {
            return;
        }
        let (base, start) = (u32::from(self.base[seg]), self.start_of(seg));
        let (entry, end) = ((start, seg as u32), base + self.banks(seg));
        for h in &mut self.history[base as usize..end as usize] {
            if h.last().is_none_or(|&(s, _)| s <= start) {
                h.push(entry);
            } else {
                let k = h.partition_point(|&(s, _)| s <= start);
                h.insert(k, entry);
            }
        }
    }

    /// The point segment `seg` was placed at: its node's start, or its
    /// read group's for a reload.
    fn start_of(&self, seg: usize) -> u32 {
        let n = self.problem.nodes.len();
        match seg.checked_sub(n) {
            None => self.problem.nodes[seg].start,
            Some(g) => self.problem.pieces.groups[g].0,
        }
    }

    /// How holder `seg` can leave its block for another of its size,
    /// outside the banks `reserved` and free now, as if the two blocks had
    /// been swapped from some point on: the latest point, at most where
    /// `seg` was placed, that no piece in either block is held across and
    /// from which every piece placed in them lies within one of the two.
    /// Of the target blocks, the lowest that has such a point within
    /// [`SWAP_ROUNDS`] steps back.
    fn plan_swap(&self, seg: usize, reserved: u64) -> Option<Move> {
        let free = !(self.busy | reserved) & block(0, self.problem.num_banks);
        if free == 0 {
            return None;
        }
        let size = self.banks(seg);
        let from = u32::from(self.base[seg]);
        let step = bank_alignment(size) as usize;
        let targets = (0..=self.problem.num_banks - size).step_by(step);
        let mut targets = targets.filter(|&t| free & block(t, size) == block(t, size));
        targets.find_map(|to| {
            let at = self.swap_point(from, to, size, self.start_of(seg))?;
            Some(Move { from, to, size, at })
        })
    }

    /// The latest point at most `at` from which the blocks of `size` banks
    /// from `x` and from `y` can swap their pieces (see
    /// [`Sweep::plan_swap`]).
    fn swap_point(&self, x: u32, y: u32, size: u32, mut at: u32) -> Option<u32> {
        let banks = || (x..x + size).chain(y..y + size);
        let mut settled = false;
        for _ in 0..SWAP_ROUNDS {
            settled = true;
            for b in banks() {
                let h = &self.history[b as usize];
                let k = recent_from(h, at)?;
                if let Some(&(start, g)) = k.checked_sub(1).map(|k| &h[k]) {
                    if self.end[g as usize] >= at {
                        at = start;
                        settled = false;
                    }
                }
            }
            if settled {
                break;
            }
        }
        let within = |g: u32| {
            let piece = block(u32::from(self.base[g as usize]), self.banks(g as usize));
            piece & !block(x, size) == 0 || piece & !block(y, size) == 0
        };
        let contained = banks().all(|b| {
            let h = &self.history[b as usize];
            recent_from(h, at).is_some_and(|k| h[k..].iter().all(|&(_, g)| within(g)))
        });
        (settled && contained).then_some(at)
    }

    /// Swaps the pieces placed in the two blocks of `m` from its point on.
    fn swap(&mut self, m: Move) {
        let delta = |b: u32, from: u32, to: u32| b + to - from;
        for o in 0..m.size {
            let (bx, by) = ((m.from + o) as usize, (m.to + o) as usize);
            let mut hx = std::mem::take(&mut self.history[bx]);
            let mut hy = std::mem::take(&mut self.history[by]);
            let kx = recent_from(&hx, m.at).expect("a planned swap");
            let ky = recent_from(&hy, m.at).expect("a planned swap");
            let (tx, ty) = (hx.split_off(kx), hy.split_off(ky));
            for &(_, g) in &tx {
                if u32::from(self.base[g as usize]) == bx as u32 {
                    self.base[g as usize] = delta(bx as u32, m.from, m.to) as u8;
                }
            }
            for &(_, g) in &ty {
                if u32::from(self.base[g as usize]) == by as u32 {
                    self.base[g as usize] = delta(by as u32, m.to, m.from) as u8;
                }
            }
            hx.extend(ty);
            hy.extend(tx);
            self.history[bx] = hx;
            self.history[by] = hy;
            self.owner.swap(bx, by);
        }
        let (bx, by) = (block(m.from, m.size), block(m.to, m.size));
        let (held_x, held_y) = (self.busy & bx != 0, self.busy & by != 0);
        self.busy &= !(bx | by);
        if held_x {
            self.busy |= by;
        }
        if held_y {
            self.busy |= bx;
        }
    }

    /// Whether segment `seg`, holding banks at `p`, holds them for
    /// nothing there: its node spillable, `p` past its head and in no read
    /// group, and, for a reload, past the first group it serves. Moves the
    /// node's cursor to its first group not behind `p`.
    fn idle_at(&mut self, seg: usize, p: u32) -> bool {
        let pieces = self.problem.pieces;
        let u = self.node_of(seg);
        if pieces.cost[u] == Cost::Inf || p <= pieces.head_end[u] {
            return false;
        }
        let end = pieces.first[u + 1];
        let mut c = self.cursor[u];
        while c < end && pieces.groups[c as usize].1 < p {
            c += 1;
        }
        self.cursor[u] = c;
        if c < end && pieces.groups[c as usize].0 <= p {
            return false;
        }
        seg.checked_sub(self.problem.nodes.len())
            .is_none_or(|g| c as usize > g)
    }

    /// How many of idle node `u`'s read groups behind `p` its own tensor
    /// can keep when it goes at `p`: the most whose loop extension ends
    /// before `p`. The groups after those take reloads as well.
    fn kept_at(&self, u: usize, p: u32) -> usize {
        let pieces = self.problem.pieces;
        let first = pieces.first[u] as usize;
        let mut j = self.cursor[u] as usize;
        while j > first && pieces.kept_end[j - 1] >= p {
            j -= 1;
        }
        j
    }

    /// The read groups from `from` up to `to` (exclusive) that take a
    /// reload when each reload serves the groups it can reach.
    fn reloads_over(&self, from: usize, to: usize) -> impl Iterator<Item = usize> + '_ {
        let reach = &self.problem.pieces.reach;
        std::iter::successors((from < to).then_some(from), move |&g| {
            Some(reach[g] as usize + 1).filter(|&r| r < to)
        })
    }

    /// What letting idle segment `seg` go at `p` costs (its node's save,
    /// if it has none yet, the reloads behind `p` its own tensor needs to
    /// end before `p`, and the reload before its next group) and is worth:
    /// the points from `p` to that group at which the program, nothing
    /// spilled, needs more banks than there are (at least 1: `p` needs it).
    fn price(&self, seg: usize, p: u32) -> (u64, u64) {
        let pieces = self.problem.pieces;
        let u = self.node_of(seg);
        let c = self.cursor[u] as usize;
        let mut save = if self.spilled[u] {
            0
        } else {
            pieces.save_cost[u]
        };
        if seg < self.problem.nodes.len() {
            let behind = self.reloads_over(self.kept_at(u, p), c);
            save = behind
                .map(|g| pieces.reload_cost[g])
                .fold(save, u64::saturating_add);
        }
        let (reload, until) = if c < pieces.first[u + 1] as usize {
            (pieces.reload_cost[c], pieces.groups[c].0 - 1)
        } else {
            (0, self.problem.nodes[u].end)
        };
        let over = self.problem.over();
        let freed = over[until as usize + 1] - over[p as usize];
        let end = self.problem.nodes[u].end;
        // Later points count an eighth: letting go now spares the save
        // next time.
        let later = over[end as usize + 1] - over[until as usize + 1];
        let worth = 8 * u64::from(freed.max(1)) + u64::from(later);
        (save.saturating_add(reload), worth)
    }

    /// Places segment `seg` of `banks` banks starting at `p`, spilling the
    /// idle holders of the cheapest block when no block is free.
    fn place(&mut self, seg: usize, banks: u32, p: u32) -> Result<(), Stuck> {
        // Ties: one-bank pieces from the top, larger ones from the bottom,
        // so that small pieces do not split large blocks.
        let high = (banks == 1) != (!self.flipped.is_empty() && self.flipped[self.node_of(seg)]);
        let preferred = (self.prefer.get(seg).copied())
            .and_then(|b| b.checked_sub(1))
            .map(u32::from)
            .filter(|&b| b + banks <= self.problem.num_banks && self.busy & block(b, banks) == 0);
        let base = match preferred.or_else(|| self.problem.free_block(self.busy, banks, high)) {
            Some(b) => b,
            None => {
                let last = self.problem.num_banks.saturating_sub(banks);
                let bases = (0..=last).step_by(bank_alignment(banks) as usize);
                self.free_cheapest(bases, banks, p).ok_or_else(|| Stuck {
                    node: NodeId::new(self.node_of(seg)),
                    point: p,
                })?
            }
        };
        for x in base..base + banks {
            self.owner[x as usize] = seg as u32;
        }
        self.busy |= block(base, banks);
        self.base[seg] = base as u8;
        self.record(seg);
        let end = self.end[seg] as usize;
        self.link[seg] = std::mem::replace(&mut self.ending[end], seg as u32);
        Ok(())
    }

    /// Frees the aligned block (of `bases`) that costs least per point
    /// freed and returns its base: each holder either moves out by a swap
    /// of two blocks ([`Sweep::plan_swap`]), for nothing, or, when idle,
    /// is spilled at its price. Among equal
    /// prices, the block that moves the fewest holders, then the first;
    /// `None` when every block has a holder that can do neither.
    fn free_cheapest(
        &mut self,
        bases: impl Iterator<Item = u32>,
        banks: u32,
        p: u32,
    ) -> Option<u32> {
        let mut best: Option<(f64, usize, u32)> = None;
        let [mut moves, mut best_moves] = std::mem::take(&mut self.moves);
        best_moves.clear();
        for b in bases {
            self.plan_moves(b, banks, &mut moves);
            let mut price = 0.0;
            let mut ok = true;
            for x in b..b + banks {
                let o = self.owner[x as usize];
                let again = x > b && self.owner[x as usize - 1] == o;
                if o == FREE || again {
                    continue;
                }
                if moves
                    .iter()
                    .any(|m| m.from == u32::from(self.base[o as usize]))
                {
                    continue;
                }
                let u = self.node_of(o as usize);
                if !self.idle_at(o as usize, p) || self.chosen[u] == Let::Never {
                    ok = false;
                    break;
                }
                if self.chosen[u] == Let::AtPrice {
                    let (cost, freed) = self.price(o as usize, p);
                    price += cost as f64 / freed as f64;
                }
            }
            let moved = moves.len();
            if ok && best.is_none_or(|(q, m, _)| price < q || (price == q && moved < m)) {
                best = Some((price, moved, b));
                std::mem::swap(&mut moves, &mut best_moves);
            }
        }
        let chosen = best.map(|(_, _, base)| {
            for &m in &best_moves {
                self.swap(m);
            }
            for x in base..base + banks {
                let o = self.owner[x as usize];
                if o != FREE {
                    self.spill(o as usize, p);
                }
            }
            base
        });
        self.moves = [moves, best_moves];
        chosen
    }

    /// Into `moves`, the holders of the block of `banks` banks from `b`
    /// (each once: a holder's banks are consecutive) that can move out of
    /// it ([`Sweep::plan_swap`]), each with its swap, in bank order.
    fn plan_moves(&self, b: u32, banks: u32, moves: &mut Vec<Move>) {
        moves.clear();
        // With every bank held, or no histories kept, no holder can move.
        if !self.problem.multi_bank || !self.busy & block(0, self.problem.num_banks) == 0 {
            return;
        }
        let mut reserved = block(b, banks);
        for x in b..b + banks {
            let o = self.owner[x as usize];
            if o == FREE || (x > b && self.owner[x as usize - 1] == o) {
                continue;
            }
            if let Some(m) = self.plan_swap(o as usize, reserved) {
                reserved |= block(m.to, m.size);
                moves.push(m);
            }
        }
    }

    /// Lets idle segment `seg` go at `p`: its node is spilled, its banks
    /// go free now, and its next read group, if any, gets a reload, placed
    /// when the sweep reaches it. The node's own tensor keeps the groups
    /// behind `p` it can ([`Sweep::kept_at`]); reloads in its banks serve
    /// the others, so that it and they end before `p`.
    fn spill(&mut self, seg: usize, p: u32) {
        let pieces = self.problem.pieces;
        let u = self.node_of(seg);
        self.spilled[u] = true;
        let c = self.cursor[u] as usize;
        let n = self.problem.nodes.len();
        self.end[seg] = if seg < n {
            let kept = self.kept_at(u, p);
            let behind: Vec<usize> = self.reloads_over(kept, c).collect();
            for &g in &behind {
                self.reload[g] = true;
                self.base[n + g] = self.base[seg];
                let last = (pieces.reach[g] as usize).min(c - 1);
                self.end[n + g] = pieces.groups[last].1;
                self.record(n + g);
            }
            match kept.checked_sub(1) {
                Some(j) if j >= pieces.first[u] as usize => pieces.kept_end[j],
                _ => pieces.head_end[u],
            }
        } else {
            pieces.groups[c - 1].1
        };
        debug_assert!(self.end[seg] < p, "a segment goes only where it has ended");
        self.free(seg);
        if c < pieces.first[u + 1] as usize {
            self.reload_at(c);
        }
    }
}

/// How a sweep may let a node go where it is idle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Let {
    /// At its price: its cost per point freed.
    AtPrice,
    /// First, at no price: chosen beforehand to spill.
    First,
    /// Never.
    Never,
}

/// [`Let::First`] for the nodes `spilled` flags, [`Let::AtPrice`] for the others.
fn first(spilled: &[bool]) -> Vec<Let> {
    (spilled.iter())
        .map(|&s| if s { Let::First } else { Let::AtPrice })
        .collect()
}

/// The cycles the spill code of `placed` costs: a save per spilled node
/// and a reload per reloaded group.
pub(super) fn cost_of(pieces: &Pieces, placed: &Placement) -> u64 {
    let saves = placed.spilled.iter().map(|v| pieces.save_cost[v.index()]);
    let reloads =
        (pieces.reload_cost.iter().zip(&placed.reload)).filter_map(|(&c, &r)| r.then_some(c));
    saves.chain(reloads).fold(0, u64::saturating_add)
}

/// The best placement of one iteration. The starts are the plain sweep's
/// placement and, on programs of at most [`THIN_NODES`] nodes where
/// [`keep_back`] thins its spill set, the sweep's that first lets go of
/// what is left of it; each start, the cheapest
/// first, is searched from ([`improve`]), and the cheapest result (ties:
/// the earlier) gets [`perturb`]'s restarts, then [`reflow::reflow`]'s
/// flow. A plain sweep that spills nothing cannot be beaten and is kept
/// at once.
pub(super) fn best_placement(
    nodes: &[Node],
    pieces: &Pieces,
    num_banks: u32,
    points: usize,
) -> Result<Placement, Stuck> {
    let n = nodes.len();
    let problem = Problem::new(nodes, pieces, num_banks);
    let plain = problem.sweep(&vec![Let::AtPrice; n], &[])?;
    if plain.spilled.is_empty() {
        return Ok(plain);
    }
    let mut own = vec![false; n];
    for v in &plain.spilled {
        own[v.index()] = true;
    }
    let mut starts = vec![(cost_of(pieces, &plain), plain)];
    // The plain sweep's own set, none of it taken back, would only be
    // swept again.
    if n <= THIN_NODES && keep_back(nodes, pieces, &mut own, num_banks, points) {
        if let Ok(placed) = problem.sweep(&first(&own), &[]) {
            if (&placed.spilled, &placed.reload) != (&starts[0].1.spilled, &starts[0].1.reload) {
                starts.push((cost_of(pieces, &placed), placed));
            }
        }
    }
    starts.sort_by_key(|s| s.0);
    let mut sweeps = SEARCH_WORK / n;
    let mut best: Option<(u64, Placement)> = None;
    for start in starts {
        let found = improve(&problem, start, &mut sweeps);
        if best.as_ref().is_none_or(|b| found.0 < b.0) {
            best = Some(found);
        }
    }
    let best = best.expect("the plain sweep is a start");
    let best = perturb(&problem, best, &mut sweeps).1;
    Ok(reflow::reflow(nodes, pieces, num_banks, best))
}

/// Programs of at most this many nodes get the thinned start of
/// [`best_placement`]. On larger ones (10k to 1M nodes in `psum bench
/// --quality`) it never spilled less than the plain sweep.
const THIN_NODES: usize = 4096;

/// Programs of at most this many nodes get [`perturb`]'s restarts.
const PERTURB_NODES: usize = 64;

/// Restarts [`perturb`] tries.
const PERTURB_ROUNDS: usize = 128;

/// Iterated local search on small programs: up to [`PERTURB_ROUNDS`]
/// times, the best placement's spill set is let go first, two random
/// spillable nodes each a random way ([`Let`]), that sweep's placement
/// is searched from ([`improve`]), and a cheaper result becomes the best.
/// Deterministic: the random choices are seeded by the program's size.
fn perturb(problem: &Problem, mut best: (u64, Placement), sweeps: &mut usize) -> (u64, Placement) {
    let (n, pieces) = (problem.nodes.len(), problem.pieces);
    let spillable: Vec<usize> = (0..n).filter(|&v| pieces.cost[v] != Cost::Inf).collect();
    if n > PERTURB_NODES || best.0 == 0 || spillable.is_empty() {
        return best;
    }
    let mut rng = Rng::new(n as u64);
    let lets = [Let::AtPrice, Let::First, Let::Never];
    for _ in 0..PERTURB_ROUNDS {
        if *sweeps == 0 {
            break;
        }
        *sweeps -= 1;
        let mut chosen = vec![Let::AtPrice; n];
        for v in &best.1.spilled {
            chosen[v.index()] = Let::First;
        }
        for _ in 0..2 {
            let v = spillable[rng.index(spillable.len())];
            chosen[v] = lets[rng.index(lets.len())];
        }
        let Ok(placed) = problem.sweep(&chosen, &[]) else {
            continue;
        };
        let found = improve(problem, (cost_of(pieces, &placed), placed), sweeps);
        if found.0 < best.0 {
            best = found;
        }
    }
    best
}

/// Programs of at most this many nodes get [`improve`]'s local search.
const SEARCH_NODES: usize = 512;

/// What [`improve`]'s searches of one placement may spend together:
/// sweeps times nodes.
const SEARCH_WORK: usize = 1 << 18;

/// Sets how node `v` is let go and, where flips are kept, whether it is flipped.
fn take(chosen: &mut [Let], flipped: &mut [bool], v: usize, (go, flip): (Let, Option<bool>)) {
    chosen[v] = go;
    if let Some(f) = flip {
        flipped[v] = f;
    }
}

/// Local search from a placement: its spill set is let go first and every
/// other node at its price; then, one spillable node at a time in node
/// order, each other way of letting it go ([`Let`]) is swept, and the
/// first that spills at less cost is kept, until a pass over the nodes
/// changes nothing. On multi-bank programs a second phase also tries
/// flipping each node's end among equally good blocks, and on small ones a
/// third tries every base for each node ([`try_bases`]). Each sweep spends
/// one of `sweeps`; none left, the search stops. Only on programs of at
/// most [`SEARCH_NODES`] nodes.
fn improve(problem: &Problem, mut best: (u64, Placement), sweeps: &mut usize) -> (u64, Placement) {
    let (n, pieces) = (problem.nodes.len(), problem.pieces);
    if n > SEARCH_NODES || best.0 == 0 {
        return best;
    }
    let mut chosen = vec![Let::AtPrice; n];
    for v in &best.1.spilled {
        chosen[v.index()] = Let::First;
    }
    let multi_bank = problem.nodes.iter().any(|v| v.banks > 1);
    let mut flipped = vec![false; if multi_bank { n } else { 0 }];
    let phases: &[bool] = if multi_bank { &[false, true] } else { &[false] };
    for &flips in phases {
        loop {
            let mut changed = false;
            for v in 0..n {
                let was = (chosen[v], flipped.get(v).copied());
                let lets = [Let::AtPrice, Let::First, Let::Never];
                let spillable = pieces.cost[v] != Cost::Inf;
                let ways = (lets.into_iter().filter(|_| spillable))
                    .map(|l| (l, was.1))
                    .chain(was.1.filter(|_| flips).map(|f| (was.0, Some(!f))));
                for way in ways {
                    if way == was {
                        continue;
                    }
                    if *sweeps == 0 {
                        return best;
                    }
                    *sweeps -= 1;
                    take(&mut chosen, &mut flipped, v, way);
                    let swept = problem.sweep(&chosen, &flipped).ok();
                    match swept.map(|p| (cost_of(pieces, &p), p)) {
                        Some(better) if better.0 < best.0 => {
                            best = better;
                            changed = true;
                            break;
                        }
                        _ => take(&mut chosen, &mut flipped, v, was),
                    }
                }
            }
            if !changed {
                break;
            }
        }
    }
    if n <= PERTURB_NODES && multi_bank {
        best = try_bases(problem, best, &chosen, &flipped, sweeps);
    }
    best
}

/// The last phase of [`improve`] on small multi-bank programs: one node at
/// a time in node order, its own tensor is swept at each other aligned
/// base in turn (where that block is free when it starts), and every base
/// that spills at less cost is kept; passes repeat until one changes
/// nothing. Each sweep spends one of `sweeps`.
fn try_bases(
    problem: &Problem,
    mut best: (u64, Placement),
    chosen: &[Let],
    flipped: &[bool],
    sweeps: &mut usize,
) -> (u64, Placement) {
    let nodes = problem.nodes;
    let mut prefer = vec![0u8; nodes.len()];
    loop {
        let mut changed = false;
        for v in 0..nodes.len() {
            let b = nodes[v].banks;
            let bases =
                (0..=problem.num_banks.saturating_sub(b)).step_by(bank_alignment(b) as usize);
            for base in bases.map(|x| x as u8 + 1) {
                if prefer[v] == base {
                    continue;
                }
                if *sweeps == 0 {
                    return best;
                }
                *sweeps -= 1;
                let was = std::mem::replace(&mut prefer[v], base);
                let swept = problem.sweep_preferring(chosen, flipped, &prefer).ok();
                match swept.map(|p| (cost_of(problem.pieces, &p), p)) {
                    Some(better) if better.0 < best.0 => {
                        best = better;
                        changed = true;
                    }
                    _ => prefer[v] = was,
                }
            }
        }
        if !changed {
            return best;
        }
    }
}

/// Takes back from `spilled` every node the banks can hold over its idle
/// ranges as well, the costliest first (each taken back holds its banks
/// for the rest); returns whether it took any back.
fn keep_back(
    nodes: &[Node],
    pieces: &Pieces,
    spilled: &mut [bool],
    num_banks: u32,
    points: usize,
) -> bool {
    let load = pieces.load(nodes, spilled, points);
    let limit = |v: usize| i64::from(num_banks) - i64::from(nodes[v].banks);
    // Loads only grow, so a node without room now never has it.
    let room_now = |v: usize| {
        (pieces.idle(v, &nodes[v])).all(|(lo, hi)| {
            load[lo as usize..=hi as usize]
                .iter()
                .all(|&l| l <= limit(v))
        })
    };
    let mut order: Vec<usize> = (0..nodes.len())
        .filter(|&v| spilled[v] && room_now(v))
        .collect();
    if order.is_empty() {
        return false;
    }
    order.sort_by_key(|&v| (Reverse(pieces.cost[v]), v));
    // The tree holds the highest load of each stretch between the ends of
    // the candidates' idle ranges.
    let mut cuts: Vec<u32> = (order.iter())
        .flat_map(|&v| pieces.idle(v, &nodes[v]))
        .flat_map(|(lo, hi)| [lo, hi + 1])
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    let highest: Vec<i64> = (cuts.windows(2))
        .map(|w| load[w[0] as usize..w[1] as usize].iter().copied().max())
        .map(|m| m.expect("cuts are distinct"))
        .collect();
    let mut tree = MaxAddTree::from_values(&highest);
    let at = |p: u32| cuts.partition_point(|&c| c < p);
    let mut took = false;
    for v in order {
        let room = |(lo, hi): (u32, u32)| tree.max(at(lo), at(hi + 1)) <= limit(v);
        if pieces.idle(v, &nodes[v]).all(room) {
            for (lo, hi) in pieces.idle(v, &nodes[v]) {
                tree.add(at(lo), at(hi + 1), i64::from(nodes[v].banks));
            }
            spilled[v] = false;
            took = true;
        }
    }
    took
}

/// The banks of a sweep that spills nothing, when one places every node
/// of `nodes` (it is the plain sweep of [`best_placement`] then, found
/// without the spill costs); `None` when aligned blocks run out.
fn place_as_is(nodes: &[Node], num_banks: u32) -> Option<Vec<Option<u32>>> {
    let pieces = Pieces::unspillable(nodes.len());
    let problem = Problem::new(nodes, &pieces, num_banks);
    let placed = problem.sweep(&vec![Let::Never; nodes.len()], &[]).ok()?;
    Some(placed.bank.iter().map(|&b| Some(u32::from(b))).collect())
}

/// Whether giving `nodes` the base banks `bank` puts no two live ranges
/// that meet on a common bank.
pub(super) fn fits(nodes: &[Node], bank: &[Option<u32>], num_banks: u32) -> bool {
    let mut order: Vec<usize> = (0..nodes.len()).collect();
    order.sort_by_key(|&v| nodes[v].start);
    let mut busy_until: Vec<Option<u32>> = vec![None; num_banks as usize];
    for v in order {
        let (n, Some(b)) = (&nodes[v], bank[v]) else {
            return false;
        };
        if b % bank_alignment(n.banks) != 0 || b + n.banks > num_banks {
            return false;
        }
        for x in b..b + n.banks {
            let slot = &mut busy_until[x as usize];
            if slot.is_some_and(|e| e >= n.start) {
                return false;
            }
            *slot = Some(slot.map_or(n.end, |e| e.max(n.end)));
        }
    }
    true
}

/// The spill code of `placed`: each spilled node's save, its first read
/// groups kept on its own tensor, and a reload before each group the sweep
/// reloads, serving the groups after it up to the next.
fn spill_plans(live: &Liveness, pieces: &Pieces, placed: &Placement) -> SpillPlans {
    let mut plans = SpillPlans::default();
    for &v in &placed.spilled {
        let groups = pieces.groups_of(v.index());
        let reloads = groups.map(|g| (pieces.groups[g], placed.reload[g]));
        plans.push_split(
            live.nodes[v.index()].tensor,
            pieces.save_after[v.index()],
            reloads,
        );
    }
    plans
}

/// The base banks of the program after spilling `placed.spilled` in one
/// round, by tensor: each node keeps the sweep's bank (a spilled one up to
/// where it goes) and each reload temporary takes the bank of its first
/// group's reload.
fn banks_by_tensor(
    tensors: usize,
    live: &Liveness,
    pieces: &Pieces,
    placed: &Placement,
    shift: &spill::SpillShift,
) -> Vec<Option<u32>> {
    let mut by = vec![None; tensors];
    for (n, &b) in live.nodes.iter().zip(&placed.bank) {
        by[n.tensor.index()] = Some(u32::from(b));
    }
    let groups = (placed.spilled.iter()).flat_map(|v| pieces.groups_of(v.index()));
    for (g, r) in groups.filter(|&g| placed.reload[g]).zip(&shift.reloads) {
        by[r.tensor.index()] = Some(u32::from(placed.group_bank[g]));
    }
    by
}

/// The first iteration of an allocation: the split program, its points
/// and live ranges, its peak demand (in banks, and in hundredths of the
/// banks) and warnings.
pub(super) struct First {
    pub work: Module,
    pub lin: Linear,
    pub live: Liveness,
    pub peak: u64,
    pub demand: u64,
    pub warnings: Vec<String>,
}

impl First {
    /// The first analysis of `m` ([`analyze`]), the input banks dropped,
    /// with its demand and warnings.
    pub fn of(m: Module, opts: &AllocOptions) -> Result<First, AllocError> {
        let Analysis {
            module: mut work,
            num_banks,
            lin,
            live,
            ..
        } = analyze(m, opts)?;
        for t in work.tensors.iter_mut().filter(|t| t.mem == Mem::Psum) {
            t.bank = None;
        }
        let warnings = (live.unused.iter())
            .map(|&t| format!("unused PSUM tensor {}", work.tensor(t).name))
            .collect();
        let peak = liveness::peak_demand(&live.nodes, lin.len()).0;
        Ok(First {
            work,
            lin,
            live,
            peak,
            demand: hundredths(peak, num_banks),
            warnings,
        })
    }
}

/// Allocates the PSUM tensors of a validated module with the mincost
/// allocator (SPEC §3.11), taking it over.
pub fn allocate(m: Module, opts: &AllocOptions) -> Result<AllocOutcome, AllocError> {
    let arch = arch::lookup(&m.arch)?;
    let num_banks = opts.num_banks(&arch)?;
    let mut log = Log::new(opts.trace);
    log.v(" allocating PSUM".into());
    let parallel = opts.parallel && m.insts.len() >= PARALLEL_MIN_NODES;
    let First {
        work,
        lin,
        live,
        peak,
        demand,
        warnings,
    } = First::of(m, opts)?;
    let mut a = Analysis {
        module: work,
        arch,
        num_banks,
        lin,
        live,
    };
    log.v(format!("{}% PSUM demand before spilling", pct_text(demand)));
    let mut pinned = vec![false; a.module.tensors.len()];
    let mut namer = None;
    let before = (a.module.tensors.len(), a.module.insts.len());
    let mut spilled: Vec<TensorId> = Vec::new();
    let mut spill_cost = 0u64;
    let placed_all = 'rounds: {
        if peak <= u64::from(num_banks) {
            if let Some(bank) = place_as_is(&a.live.nodes, num_banks) {
                break 'rounds Some((bank, 1));
            }
        }
        for iteration in 1..=opts.max_iterations {
            let (lin, live) = (&a.lin, &a.live);
            let pieces = Pieces::of(lin, live, &pinned, opts.spill_latency, parallel);
            let place = || best_placement(&live.nodes, &pieces, num_banks, lin.len());
            // A large program over the banks spills: while the sweep
            // chooses what, the other thread grows the module for the
            // spill code and makes the namer, which would otherwise each
            // take their turn after it.
            let placed = if parallel && peak > u64::from(num_banks) {
                let module = &mut a.module;
                let room = || {
                    spill::make_room(module, pieces.copies_at_most());
                    namer.get_or_insert_with(|| spill::Namer::new(module));
                };
                threads::join(true, room, place).1
            } else {
                place()
            };
            let placed = match placed {
                Ok(placed) => placed,
                Err(stuck) => {
                    let name = &a.module.tensor(live.nodes[stuck.node.index()].tensor).name;
                    let line = format!(
                        "mincost cannot place {name} at point {}: briggs allocates the program",
                        stuck.point
                    );
                    let work = without_spill_code(a.module, before);
                    return hand_over(work, opts, line, warnings);
                }
            };
            if placed.spilled.is_empty() {
                let bank: Vec<Option<u32>> =
                    placed.bank.iter().map(|&b| Some(u32::from(b))).collect();
                break 'rounds Some((bank, iteration));
            }
            let cycles = cost_of(&pieces, &placed);
            log.v(format!("spilling from PSUM cost about {cycles} cycles"));
            spill_cost = spill_cost.saturating_add(cycles);
            spilled.extend(placed.spilled.iter().map(|v| live.nodes[v.index()].tensor));
            let big = parallel && placed.spilled.len() >= PARALLEL_MIN_NODES;
            let plans = [spill_plans(live, &pieces, &placed)];
            let namer = namer.get_or_insert_with(|| spill::Namer::new(&a.module));
            let shift = spill::insert_spill_code(&mut a.module, lin, &plans, namer, big);
            pinned.resize(a.module.tensors.len(), false);
            for &v in &placed.spilled {
                pinned[live.nodes[v.index()].tensor.index()] = true;
            }
            for r in &shift.reloads {
                pinned[r.tensor.index()] = true;
            }
            let by_tensor = banks_by_tensor(a.module.tensors.len(), live, &pieces, &placed, &shift);
            liveness::live_ranges_after(&mut a, &shift, parallel)?;
            let bank: Vec<Option<u32>> = (a.live.nodes.iter())
                .map(|n| by_tensor[n.tensor.index()])
                .collect();
            if fits(&a.live.nodes, &bank, num_banks) {
                break 'rounds Some((bank, iteration + 1));
            }
        }
        None
    };
    let Some((bank, iterations)) = placed_all else {
        return Err(AllocError::NotConverged);
    };
    let r = outcome::report(
        &a.module, num_banks, &spilled, spill_cost, iterations, demand,
    );
    let end = Ending {
        arch: &a.arch,
        points: a.lin.len(),
        log,
        warnings,
    };
    Ok(end.finish(a.module, &a.live, &bank, &spilled, r))
}

/// What completing an outcome needs besides the program and its banks.
pub(super) struct Ending<'a> {
    /// The module's architecture.
    pub arch: &'a arch::Arch,
    /// Points of the final program.
    pub points: usize,
    /// The log so far.
    pub log: Log,
    /// Warnings of the first iteration.
    pub warnings: Vec<String>,
}

impl Ending<'_> {
    /// Logs the closing lines of SPEC §3.9 that apply (the spill count and
    /// the utilization), sets the utilization and completes the outcome.
    pub fn finish(
        mut self,
        work: Module,
        live: &Liveness,
        bank: &[Option<u32>],
        spilled: &[TensorId],
        mut report: AllocReport,
    ) -> AllocOutcome {
        let utilization = outcome::log_closing(
            &mut self.log,
            spilled.len(),
            live,
            self.points,
            report.num_banks,
        );
        report.utilization_pct = utilization as f64 / 100.0;
        let parallel = work.tensors.len() >= PARALLEL_MIN_NODES;
        outcome::complete(
            work,
            self.arch,
            live,
            bank,
            spilled,
            report,
            self.log,
            self.warnings,
            parallel,
        )
    }
}

/// `m` as it was before any spill code: the copies from instruction
/// `before.1` on and the tensors from `before.0` on removed, and the reads
/// of each reload temporary given back to the tensor it reloads.
fn without_spill_code(mut m: Module, (tensors, insts): (usize, usize)) -> Module {
    // What each new tensor holds: a save copies a tensor of the program,
    // a reload copies a save (created after it).
    let mut holds: Vec<TensorId> = (0..m.tensors.len()).map(TensorId::new).collect();
    for inst in &m.insts[insts..] {
        if let InstKind::Copy { dst, src } = &inst.kind {
            holds[dst.tensor.index()] = holds[src.tensor.index()];
        }
    }
    for inst in &mut m.insts[..insts] {
        inst.kind
            .for_each_src_mut(|a| a.tensor = holds[a.tensor.index()]);
    }
    let keep = |s: &Stmt| !matches!(s, Stmt::Inst(i) if i.index() >= insts);
    for b in &mut m.blocks {
        b.body.retain(keep);
    }
    for l in &mut m.loops {
        l.body.retain(keep);
    }
    m.insts.truncate(insts);
    m.tensors.truncate(tensors);
    m
}

/// Hands `work` (split, without spill code) to the Briggs allocator: its
/// outcome, with `line` (why) logged after its opening two lines.
fn hand_over(
    work: Module,
    opts: &AllocOptions,
    line: String,
    warnings: Vec<String>,
) -> Result<AllocOutcome, AllocError> {
    let briggs = AllocOptions {
        allocator: Allocator::Briggs,
        ..*opts
    };
    let mut out = super::allocate_owned(work, &briggs)?;
    out.log.insert(2.min(out.log.len()), line.clone());
    if opts.trace {
        out.trace.insert(2.min(out.trace.len()), line);
    }
    out.warnings = warnings;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::random::{program, RandomConfig};

    /// The pieces' costs are §3.5's, each spillable node's is its save and
    /// a reload per read group, and the pieces worked out in two halves are
    /// the ones worked out in one.
    #[test]
    fn pieces_cost_what_find_costs_does() {
        for seed in 0..4 {
            let a = crate::alloc::liveness::random_analyzed(200, seed);
            let pinned: Vec<bool> = (0..a.module.tensors.len()).map(|t| t % 7 == 0).collect();
            let pieces = Pieces::of(&a.lin, &a.live, &pinned, 64, false);
            assert_eq!(
                pieces,
                Pieces::of(&a.lin, &a.live, &pinned, 64, true),
                "seed {seed}"
            );
            let want = crate::alloc::costs::find_costs(&a.lin, &a.live, &pinned, 64);
            assert_eq!(pieces.cost, want, "seed {seed}");
            for (v, c) in pieces.cost.iter().enumerate() {
                let reloads = pieces.groups_of(v).map(|g| pieces.reload_cost[g]);
                let parts = Cost::Finite(pieces.save_cost[v] + reloads.sum::<u64>());
                assert!(*c == Cost::Inf || *c == parts, "seed {seed}, node {v}");
            }
            assert!(pieces.cost.iter().filter(|c| **c != Cost::Inf).count() > 20);
        }
    }

    /// The local search and its restarts never hand back a costlier
    /// placement than they were given, and on small multi-bank programs
    /// under pressure each finds cheaper ones than what came before it.
    #[test]
    fn local_search_only_improves() {
        let opts = AllocOptions::default();
        let (mut cheaper, mut restarted) = (0, 0);
        for seed in 0..40 {
            let cfg = RandomConfig {
                tensors: 16,
                max_banks: 4,
                pressure: Some(12.0),
                ..RandomConfig::default()
            };
            let first = First::of(program(seed, &cfg).unwrap(), &opts).unwrap();
            let arch = arch::lookup(&first.work.arch).unwrap();
            let num_banks = opts.num_banks(&arch).unwrap();
            let pinned = vec![false; first.work.tensors.len()];
            let pieces = Pieces::of(&first.lin, &first.live, &pinned, opts.spill_latency, false);
            let problem = Problem::new(&first.live.nodes, &pieces, num_banks);
            let plain = problem
                .sweep(&vec![Let::AtPrice; problem.nodes.len()], &[])
                .unwrap();
            let given = cost_of(&pieces, &plain);
            let mut sweeps = SEARCH_WORK / problem.nodes.len();
            let (cost, placed) = improve(&problem, (given, plain), &mut sweeps);
            assert!(cost <= given, "seed {seed}: {cost} > {given}");
            assert_eq!(cost, cost_of(&pieces, &placed));
            cheaper += usize::from(cost < given);
            let (again, placed) = perturb(&problem, (cost, placed), &mut sweeps);
            assert!(again <= cost, "seed {seed}: restarts {again} > {cost}");
            assert_eq!(again, cost_of(&pieces, &placed));
            restarted += usize::from(again < cost);
        }
        assert!(cheaper >= 10, "cheaper on {cheaper} of 40");
        assert!(restarted >= 4, "restarts cheaper on {restarted} of 40");
    }
}
