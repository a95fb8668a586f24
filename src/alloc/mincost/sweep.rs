//! The sweep (SPEC §3.11): one pass over the program points that places
//! every piece of every node in an aligned block ([`crate::alloc::blocks`])
//! and, where a piece finds none free, frees the block whose holders cost
//! least per point freed: a holder moves out by a Kempe swap ([`moves`])
//! for nothing, or, where it holds its banks for nothing, is let go at
//! its price (its save and reloads, [`crate::alloc::split_cost::Pieces`]).
//! [`Let`] says how the search ([`super::search`]) lets each node go.

mod moves;

use crate::alloc::blocks::{block, free_block};
use crate::alloc::costs::Cost;
use crate::alloc::liveness::Node;
use crate::alloc::split_cost::{GroupId, Pieces, Placement};
use crate::alloc::NodeId;
use crate::arch::bank_alignment;
use crate::entity::{IdMap, IdVec};
use std::cell::{Cell, OnceCell, RefCell};
use std::cmp::Reverse;

/// Two blocks of `size` banks, from banks `from` and `to`, that swap the
/// pieces placed in them from point `at` on.
#[derive(Clone, Copy, Debug)]
struct Move {
    from: u32,
    to: u32,
    size: u32,
    at: u32,
}

/// A free bank in [`Sweep`]'s bank table.
const FREE: u32 = u32::MAX;

/// No segment, in [`Sweep`]'s lists.
const NONE: u32 = u32::MAX;

/// A piece that no spilling could place: its node and first point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::alloc) struct Stuck {
    /// The node.
    pub node: NodeId,
    /// Where it starts.
    pub point: u32,
}

/// Banks up to which [`Problem`] keeps [`free_block`]'s answers in a table.
const TABLE_BANKS: u32 = 8;

/// A [`free_block`] answer not yet in the table.
const UNKNOWN: u8 = u8::MAX - 1;

/// No free block, in the table.
const NO_BLOCK: u8 = u8::MAX;

/// The state of one sweep. Its pieces are segments, numbered: segment
/// `v < n` is node `v`'s own tensor (its interval, cut where it goes when
/// spilled); segment `n + g` is the reload right before read group `g`,
/// which holds its node's value from there over the groups it serves
/// until it goes in turn.
struct Sweep<'a> {
    problem: &'a Problem<'a>,
    /// How each node may be let go.
    chosen: &'a IdMap<NodeId, Let>,
    /// The nodes whose pieces take the other end among equal blocks (none
    /// when empty).
    flipped: &'a IdMap<NodeId, bool>,
    /// Per node, the base bank its own tensor takes when that block is
    /// free, plus 1 (0: none; none at all when empty).
    prefer: &'a IdMap<NodeId, u8>,
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
    spilled: IdMap<NodeId, bool>,
    /// Per read group, whether a reload goes right before it.
    reload: IdMap<GroupId, bool>,
    /// Per node, its first read group not yet behind the sweep.
    cursor: IdMap<NodeId, GroupId>,
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
    pub(super) nodes: &'a IdVec<NodeId, Node>,
    pub(super) pieces: &'a Pieces,
    pub(super) num_banks: u32,
    /// Points of the program: one past the last end.
    points: usize,
    /// `over[p]`: the points before `p` where the program, nothing
    /// spilled, needs more banks than there are; worked out on first use
    /// (a sweep that frees no block never asks).
    over: OnceCell<Vec<u32>>,
    /// The nodes by start (ties: by id).
    order: Vec<NodeId>,
    /// The node of each read group.
    group_node: IdMap<GroupId, NodeId>,
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
    pub(crate) fn new(nodes: &'a IdVec<NodeId, Node>, pieces: &'a Pieces, num_banks: u32) -> Self {
        assert!(num_banks <= 64, "a sweep holds at most 64 banks");
        let points = nodes
            .values()
            .map(|v| v.end as usize + 1)
            .max()
            .unwrap_or(0);
        let mut order: Vec<NodeId> = nodes.keys().collect();
        order.sort_by_key(|&v| (nodes[v].start, v));
        let mut group_node = IdMap::with_len(pieces.groups.len(), NodeId(0));
        for v in nodes.keys() {
            for g in pieces.groups_of(v) {
                group_node[g] = v;
            }
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
            multi_bank: nodes.values().any(|v| v.banks > 1),
            histories: RefCell::new(vec![Vec::new(); num_banks as usize]),
        }
    }

    /// The field `over`, worked out on first use.
    fn over(&self) -> &[u32] {
        self.over.get_or_init(|| {
            let none = IdMap::with_len(self.nodes.len(), false);
            let load = self.pieces.load(self.nodes, &none, self.points);
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
    pub(crate) fn sweep(
        &self,
        chosen: &IdMap<NodeId, Let>,
        flipped: &IdMap<NodeId, bool>,
    ) -> Result<Placement, Stuck> {
        Sweep::new(self, chosen, flipped, &IdMap::default()).run()
    }

    /// [`Problem::sweep`], each node's own tensor taking the base bank
    /// `prefer` gives it (plus 1; 0: none) when that block is free.
    pub(super) fn sweep_preferring(
        &self,
        chosen: &IdMap<NodeId, Let>,
        flipped: &IdMap<NodeId, bool>,
        prefer: &IdMap<NodeId, u8>,
    ) -> Result<Placement, Stuck> {
        Sweep::new(self, chosen, flipped, prefer).run()
    }
}

impl<'a> Sweep<'a> {
    fn new(
        problem: &'a Problem<'a>,
        chosen: &'a IdMap<NodeId, Let>,
        flipped: &'a IdMap<NodeId, bool>,
        prefer: &'a IdMap<NodeId, u8>,
    ) -> Self {
        let Problem { nodes, pieces, .. } = *problem;
        let n = nodes.len();
        let segs = n + pieces.groups.len();
        let mut end: Vec<u32> = nodes.values().map(|v| v.end).collect();
        // The histories a stuck sweep kept are made afresh.
        let mut history = problem.histories.take();
        history.resize(problem.num_banks as usize, Vec::new());
        end.extend(pieces.reach.values().map(|&r| pieces.groups[r].1));
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
            spilled: IdMap::with_len(n, false),
            reload: IdMap::with_len(pieces.groups.len(), false),
            cursor: nodes.keys().map(|v| pieces.group_range(v).start).collect(),
            ending: vec![NONE; problem.points],
            pending: vec![NONE; problem.points],
            link: vec![NONE; segs],
        }
    }

    fn banks(&self, seg: usize) -> u32 {
        self.problem.nodes[self.node_of(seg)].banks
    }

    /// The node of segment `seg`.
    fn node_of(&self, seg: usize) -> NodeId {
        match self.group_of(seg) {
            None => NodeId::new(seg),
            Some(g) => self.problem.group_node[g],
        }
    }

    /// The read group segment `seg` reloads before (`None`: it is a
    /// node's own tensor).
    fn group_of(&self, seg: usize) -> Option<GroupId> {
        seg.checked_sub(self.problem.nodes.len()).map(GroupId::new)
    }

    /// The segment of the reload right before read group `g`.
    fn reload_seg(&self, g: GroupId) -> usize {
        self.problem.nodes.len() + g.index()
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
                if nodes[v].start != p {
                    break;
                }
                starting.push((nodes[v].banks, v.0));
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
        let spilled: Vec<NodeId> = (self.spilled.iter())
            .filter_map(|(v, &s)| s.then_some(v))
            .collect();
        // The segments' banks, split into the nodes' and the reloads'
        // tables in their own buffers.
        let group_bank = self.base.split_off(n).into_iter().collect();
        Ok(Placement {
            spilled,
            bank: self.base.into_iter().collect(),
            reload: self.reload,
            group_bank,
        })
    }

    /// Frees the banks of the segments that end at `q`. A reload that
    /// ends short of its node's last group, because the next group is in
    /// another loop, is followed by a reload before that group.
    fn release_at(&mut self, q: u32) {
        let mut seg = std::mem::replace(&mut self.ending[q as usize], NONE);
        while seg != NONE {
            let next = self.link[seg as usize];
            if self.end[seg as usize] == q {
                self.free(seg as usize);
                if let Some(g) = self.group_of(seg as usize) {
                    let u = self.problem.group_node[g];
                    let r = self.problem.pieces.reach[g].next();
                    if r < self.problem.pieces.group_range(u).end {
                        self.reload_at(r);
                    }
                }
            }
            seg = next;
        }
    }

    /// Puts a reload right before read group `g`, to be placed where the
    /// group starts.
    fn reload_at(&mut self, g: GroupId) {
        let lo = self.problem.pieces.groups[g].0 as usize;
        let seg = self.reload_seg(g);
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
        match self.group_of(seg) {
            None => self.problem.nodes[NodeId::new(seg)].start,
            Some(g) => self.problem.pieces.groups[g].0,
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
        let end = pieces.group_range(u).end;
        let mut c = self.cursor[u];
        while c < end && pieces.groups[c].1 < p {
            c = c.next();
        }
        self.cursor[u] = c;
        if c < end && pieces.groups[c].0 <= p {
            return false;
        }
        self.group_of(seg).is_none_or(|g| c > g)
    }

    /// The first of idle node `u`'s read groups behind `p` that its own
    /// tensor cannot keep when it goes at `p`: it keeps the most whose loop
    /// extension ends before `p`. The groups from there take reloads as
    /// well.
    fn kept_at(&self, u: NodeId, p: u32) -> GroupId {
        let pieces = self.problem.pieces;
        let first = pieces.group_range(u).start;
        let mut j = self.cursor[u];
        while let Some(i) = j.prev().filter(|&i| i >= first && pieces.kept_end[i] >= p) {
            j = i;
        }
        j
    }

    /// The read groups from `from` up to `to` (exclusive) that take a
    /// reload when each reload serves the groups it can reach.
    fn reloads_over(&self, from: GroupId, to: GroupId) -> impl Iterator<Item = GroupId> + '_ {
        let reach = &self.problem.pieces.reach;
        std::iter::successors((from < to).then_some(from), move |&g| {
            Some(reach[g].next()).filter(|&r| r < to)
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
        let c = self.cursor[u];
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
        let (reload, until) = if c < pieces.group_range(u).end {
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
        let own = self.group_of(seg).is_none().then(|| NodeId::new(seg));
        let preferred = (own.and_then(|v| self.prefer.get(v)).copied())
            .and_then(|b| b.checked_sub(1))
            .map(u32::from)
            .filter(|&b| b + banks <= self.problem.num_banks && self.busy & block(b, banks) == 0);
        let base = match preferred.or_else(|| self.problem.free_block(self.busy, banks, high)) {
            Some(b) => b,
            None => {
                let last = self.problem.num_banks.saturating_sub(banks);
                let bases = (0..=last).step_by(bank_alignment(banks) as usize);
                self.free_cheapest(bases, banks, p).ok_or_else(|| Stuck {
                    node: self.node_of(seg),
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

    /// Lets idle segment `seg` go at `p`: its node is spilled, its banks
    /// go free now, and its next read group, if any, gets a reload, placed
    /// when the sweep reaches it. The node's own tensor keeps the groups
    /// behind `p` it can ([`Sweep::kept_at`]); reloads in its banks serve
    /// the others, so that it and they end before `p`.
    fn spill(&mut self, seg: usize, p: u32) {
        let pieces = self.problem.pieces;
        let u = self.node_of(seg);
        self.spilled[u] = true;
        let c = self.cursor[u];
        let range = pieces.group_range(u);
        // Where this is called, the cursor is past a group of `u`.
        let behind_cursor = || c.prev().expect("the cursor is past a group");
        self.end[seg] = match self.group_of(seg) {
            None => {
                let kept = self.kept_at(u, p);
                let behind: Vec<GroupId> = self.reloads_over(kept, c).collect();
                for &g in &behind {
                    self.reload[g] = true;
                    let r = self.reload_seg(g);
                    self.base[r] = self.base[seg];
                    let last = pieces.reach[g].min(behind_cursor());
                    self.end[r] = pieces.groups[last].1;
                    self.record(r);
                }
                match kept.prev() {
                    Some(j) if j >= range.start => pieces.kept_end[j],
                    _ => pieces.head_end[u],
                }
            }
            Some(_) => pieces.groups[behind_cursor()].1,
        };
        debug_assert!(self.end[seg] < p, "a segment goes only where it has ended");
        self.free(seg);
        if c < range.end {
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
pub(super) fn first(spilled: &IdMap<NodeId, bool>) -> IdMap<NodeId, Let> {
    (spilled.values())
        .map(|&s| if s { Let::First } else { Let::AtPrice })
        .collect()
}
