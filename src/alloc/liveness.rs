//! Candidates and live ranges (SPEC §3.2 node numbering, §3.3; seed:
//! `PSUM_Allocator::live_range` in `psum_live_range_with_loop.cpp`).
//!
//! Every PSUM tensor with at least one access is a candidate node. Its def is
//! its first write and its use its last read, in linear order; the interval
//! is stretched to whole loops exactly as the seed's `_with_loop` extension
//! does, then widened over every loop that carries the value around its back
//! edge. Nodes are numbered in order of first definition.
//!
//! After spill code, the nodes the code left alone move to their new
//! points, while the points are renumbered, and only the spilled and new
//! tensors, whose events alone change as the spill code describes them,
//! are computed afresh ([`live_ranges_after`], [`Events::update`]).

use super::analysis::Analysis;
use super::linear::{Linear, PointKind};
use super::spill::SpillShift;
use super::support::sort::sort_by_u64;
use super::support::threads;
use super::{AllocError, NodeId};
use crate::arch::Arch;
use crate::ir::{InstId, InstKind, Mem, Module, TensorId};

/// One instruction's access to a PSUM tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// The instruction's point.
    pub point: u32,
    /// The instruction.
    pub inst: InstId,
    /// It reads the tensor.
    pub read: bool,
    /// It writes the tensor.
    pub write: bool,
}

/// One instruction's access to one PSUM tensor, as the access table keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PsumAccess {
    tensor: TensorId,
    read: bool,
    write: bool,
}

/// The PSUM tensors each instruction reads and writes (by [`InstId`]), one
/// entry per tensor: the instructions boiled down to what liveness needs
/// when the events are collected afresh.
#[derive(Clone, Debug, Default)]
pub struct AccessTable {
    offsets: Vec<u32>,
    entries: Vec<PsumAccess>,
}

impl AccessTable {
    /// The table of every instruction of `m`, row `i` for [`InstId`] `i`.
    pub fn new(m: &Module) -> AccessTable {
        let is_psum: Vec<bool> = m.tensors.iter().map(|t| t.mem == Mem::Psum).collect();
        let mut table = AccessTable {
            offsets: Vec::with_capacity(m.insts.len() + 1),
            entries: Vec::with_capacity(m.insts.len() * 2),
        };
        table.offsets.push(0);
        for inst in &m.insts {
            table.push(&inst.kind, &is_psum);
        }
        table
    }

    /// Appends the entries of the next instruction (sources in operand
    /// order, then the destination; a tensor met again is merged), of the
    /// tensors `psum` flags.
    fn push(&mut self, kind: &InstKind, psum: &[bool]) {
        let first = self.entries.len();
        let mut note = |t: TensorId, read: bool, write: bool| {
            if !psum[t.index()] {
                return;
            }
            match self.entries[first..].iter_mut().find(|e| e.tensor == t) {
                Some(e) => {
                    e.read |= read;
                    e.write |= write;
                }
                None => self.entries.push(PsumAccess {
                    tensor: t,
                    read,
                    write,
                }),
            }
        };
        kind.for_each_src(|s| note(s.tensor, true, false));
        note(kind.dst().tensor, false, true);
        self.offsets.push(self.entries.len() as u32);
    }

    /// The entries of row `k`.
    fn row(&self, k: usize) -> &[PsumAccess] {
        &self.entries[self.offsets[k] as usize..self.offsets[k + 1] as usize]
    }
}

/// How [`Events`] keeps one access: the instruction, not its point, so
/// that the record stays true when spill code renumbers the points. Packed
/// in 32 bits (a large program has tens of millions): the instruction's
/// index below [`Touch::READ`], then the read and write bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Touch(u32);

impl Touch {
    /// The read bit; instruction indices are below it.
    const READ: u32 = 1 << 30;
    /// The write bit.
    const WRITE: u32 = 1 << 31;

    fn new(inst: InstId, read: bool, write: bool) -> Touch {
        assert!(
            inst.0 < Touch::READ,
            "instruction {inst} is beyond the 2^30 that liveness records"
        );
        let bit = |on: bool, b: u32| if on { b } else { 0 };
        Touch(inst.0 | bit(read, Touch::READ) | bit(write, Touch::WRITE))
    }

    fn inst(self) -> InstId {
        InstId(self.0 & (Touch::READ - 1))
    }

    fn read(self) -> bool {
        self.0 & Touch::READ != 0
    }

    fn write(self) -> bool {
        self.0 & Touch::WRITE != 0
    }
}

/// The accesses of every PSUM tensor, in point order: one flat vector of
/// per-instruction records, a span of it per tensor. Points are looked up
/// in the current [`Linear`] when read ([`Events::of`]), so after spill
/// code only the tensors it touched need new spans ([`Events::update`]).
#[derive(Clone, Debug, Default)]
pub struct Events {
    spans: Vec<(u32, u32)>,
    touches: Vec<Touch>,
}

impl Events {
    /// Collects the PSUM accesses of the reachable instructions of `m`.
    pub fn new(m: &Module, lin: &Linear) -> Events {
        Events::from_table(&AccessTable::new(m), m.tensors.len(), lin)
    }

    /// Collects the accesses of `table`'s reachable instructions (`tensors`
    /// tensors) in point order: one pass over the points to count per
    /// tensor, one to place (a counting sort, so each span comes out sorted).
    pub fn from_table(table: &AccessTable, tensors: usize, lin: &Linear) -> Events {
        let rows = lin.points.iter().filter_map(|p| match p.kind() {
            PointKind::Inst(i) => Some((i, table.row(i.index()))),
            _ => None,
        });
        let mut spans = vec![(0, 0); tensors];
        let mut counted = 0;
        for (_, row) in rows.clone() {
            for e in row {
                spans[e.tensor.index()].1 += 1;
                counted += 1;
            }
        }
        let mut at = 0;
        for span in &mut spans {
            let n = span.1;
            *span = (at, at);
            at += n;
        }
        let mut touches = vec![Touch(0); counted];
        for (i, row) in rows {
            for e in row {
                let end = &mut spans[e.tensor.index()].1;
                touches[*end as usize] = Touch::new(i, e.read, e.write);
                *end += 1;
            }
        }
        Events { spans, touches }
    }

    /// The events after the spill code `shift` describes, from those
    /// before it (the same as [`Events::new`] on the module
    /// with the code, of `tensors` tensors). The code renames reads of the
    /// spilled tensors only and adds copies that touch only spilled and new
    /// tensors, so every other tensor keeps its events. A spilled tensor
    /// keeps its events up to its last write, is then read by its save and
    /// keeps the reads before its first reload; a reload temporary is
    /// written by its copy and read by the groups it serves.
    /// Both get new spans at the end of the records, which the spill code
    /// describes without a look at the instructions.
    pub fn update(&mut self, tensors: usize, shift: &SpillShift) {
        self.spans.resize(tensors, (0, 0));
        let spilled = shift.spilled.iter().zip(&shift.saves).zip(&shift.kept);
        for ((&t, &save), &reads) in spilled {
            let at = self.touches.len() as u32;
            let (from, to) = self.spans[t.index()];
            let (from, to) = (from as usize, to as usize);
            let kept = self.touches[from..to].iter().rposition(|x| x.write());
            let kept = kept.expect("a spilled tensor is written");
            self.touches.extend_from_within(from..=from + kept);
            self.touches.push(Touch::new(save, true, false));
            let reads = from + kept + 1..from + kept + 1 + reads as usize;
            self.touches.extend_from_within(reads);
            self.spans[t.index()] = (at, self.touches.len() as u32);
        }
        for r in &shift.reloads {
            let at = self.touches.len() as u32;
            self.touches.push(Touch::new(r.copy, false, true));
            let reads = &shift.reads[r.reads.start as usize..r.reads.end as usize];
            (self.touches).extend(reads.iter().map(|&i| Touch::new(i, true, false)));
            self.spans[r.tensor.index()] = (at, self.touches.len() as u32);
        }
    }

    /// The accesses of tensor `t`, in point order, with their points in `lin`.
    pub fn of<'a>(
        &'a self,
        t: TensorId,
        lin: &'a Linear,
    ) -> impl DoubleEndedIterator<Item = Event> + ExactSizeIterator + Clone + 'a {
        let (a, b) = self.spans[t.index()];
        self.touches[a as usize..b as usize].iter().map(|&x| Event {
            point: lin
                .point_of(x.inst())
                .expect("events are of reachable instructions"),
            inst: x.inst(),
            read: x.read(),
            write: x.write(),
        })
    }
}

/// A candidate: one PSUM tensor and its live range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Node {
    /// The tensor.
    pub tensor: TensorId,
    /// Point of its first write.
    pub def: u32,
    /// Point of its last read.
    pub last_use: u32,
    /// First point of the interval (after the loop extension).
    pub start: u32,
    /// Last point of the interval (closed).
    pub end: u32,
    /// `liveN`: aligned bank count.
    pub banks: u32,
}

impl Node {
    /// `len = end − start + 1`.
    pub fn interval_len(&self) -> u64 {
        u64::from(self.end - self.start) + 1
    }

    /// A test node of tensor `t`, defined at `start` and last read at
    /// `end`, with no loop extension.
    #[cfg(test)]
    pub(crate) fn spanning(t: usize, start: u32, end: u32, banks: u32) -> Node {
        Node {
            tensor: TensorId::new(t),
            def: start,
            last_use: end,
            start,
            end,
            banks,
        }
    }
}

/// The candidates of one iteration.
#[derive(Clone, Debug, Default)]
pub struct Liveness {
    /// Nodes, numbered in order of first definition.
    pub nodes: Vec<Node>,
    /// PSUM tensors with no access at all, in declaration order.
    pub unused: Vec<TensorId>,
    /// The PSUM accesses, per tensor.
    pub events: Events,
}

impl Liveness {
    /// The same ranges without their events (which are the bulk of it).
    pub fn without_events(self) -> Liveness {
        Liveness {
            events: Events::default(),
            ..self
        }
    }

    /// The node of each of the first `tensors` tensors (by [`TensorId`]),
    /// `None` for one that is no candidate: an index built on demand (the
    /// allocator itself never looks nodes up by tensor).
    pub fn node_index(&self, tensors: usize) -> Vec<Option<NodeId>> {
        let mut index = vec![None; tensors];
        for (v, n) in self.nodes.iter().enumerate() {
            index[n.tensor.index()] = Some(NodeId::new(v));
        }
        index
    }

    /// The accesses of node `v`, in point order, with their points in `lin`.
    pub fn events_of<'a>(
        &'a self,
        v: NodeId,
        lin: &'a Linear,
    ) -> impl DoubleEndedIterator<Item = Event> + ExactSizeIterator + Clone + 'a {
        self.events.of(self.nodes[v.index()].tensor, lin)
    }
}

/// Computes the candidates and their intervals (SPEC §3.3). Errors, checked
/// per tensor in declaration order: no write, no read, too many banks.
pub fn live_ranges(
    m: &Module,
    lin: &Linear,
    arch: &Arch,
    num_banks: u32,
) -> Result<Liveness, AllocError> {
    live_ranges_of(m, Events::new(m, lin), lin, arch, num_banks)
}

/// [`live_ranges`] from `events`, the PSUM accesses of `m` (such as those
/// the memloc split read).
pub fn live_ranges_of(
    m: &Module,
    events: Events,
    lin: &Linear,
    arch: &Arch,
    num_banks: u32,
) -> Result<Liveness, AllocError> {
    let ctx = NodeCtx {
        m,
        events: &events,
        lin,
        arch,
        num_banks,
    };
    let mut unused = Vec::new();
    let nodes = ctx.all_nodes(&mut unused)?;
    Ok(Liveness {
        nodes,
        unused,
        events,
    })
}

/// Brings `a` up to date with the spill code `shift` describes, just
/// inserted into `a.module`: its points renumbered and its live ranges the
/// same as [`live_ranges`] computes afresh, from those before the code.
/// Spill code adds instructions and renames reads of the spilled tensors
/// only, so every other node keeps its instructions: its four points move
/// to their new numbers (which keeps their order), its events and loops
/// stay. Moving needs only the shift, so on `parallel` it runs beside the
/// renumbering. The spilled tensors' nodes and the new tensors' are then
/// computed afresh (side by side too), and the new ones merged in by def
/// (the unused tensors stay unused: every new tensor is accessed).
pub fn live_ranges_after(
    a: &mut Analysis,
    shift: &SpillShift,
    parallel: bool,
) -> Result<(), AllocError> {
    let Analysis {
        module: m,
        arch,
        num_banks,
        lin,
        live,
    } = a;
    let Liveness {
        mut nodes,
        unused,
        mut events,
    } = std::mem::take(live);
    let ((), spilled) = threads::join(
        parallel,
        || lin.renumber(m),
        || {
            events.update(m.tensors.len(), shift);
            shift.move_nodes(&mut nodes)
        },
    );
    let ctx = NodeCtx {
        m,
        events: &events,
        lin,
        arch,
        num_banks: *num_banks,
    };
    let (fresh, redone) = threads::join(
        parallel,
        || ctx.fresh_nodes(shift.tensors),
        || ctx.nodes_at(&nodes, &spilled),
    );
    let (fresh, redone) = (fresh?, redone?);
    for (i, n) in spilled.into_iter().zip(redone) {
        nodes[i] = n;
    }
    merge_by_def(&mut nodes, &fresh);
    *live = Liveness {
        nodes,
        unused,
        events,
    };
    Ok(())
}

/// What computing one tensor's node reads.
struct NodeCtx<'a> {
    m: &'a Module,
    events: &'a Events,
    lin: &'a Linear,
    arch: &'a Arch,
    num_banks: u32,
}

impl NodeCtx<'_> {
    /// The node of PSUM tensor `id`, or `None` when it has no access.
    fn node(&self, id: TensorId, carried: &mut Carried) -> Result<Option<Node>, AllocError> {
        let t = self.m.tensor(id);
        let ev = self.events.of(id, self.lin);
        if ev.len() == 0 {
            return Ok(None);
        }
        let def = (ev.clone().find(|e| e.write))
            .ok_or_else(|| AllocError::NoFirstDef(t.name.clone()))?
            .point;
        let last_use = (ev.clone().rev().find(|e| e.read))
            .ok_or_else(|| AllocError::NoLastUse(t.name.clone()))?
            .point;
        let banks = (self.arch).aligned_bank_num(self.arch.bank_num(u64::from(t.bytes)));
        if banks > self.num_banks {
            return Err(AllocError::TooBig {
                name: t.name.clone(),
                banks,
                size: self.num_banks,
            });
        }
        let (start, end) = carried.widen(self.lin, ev, extend(self.lin, def, last_use));
        Ok(Some(Node {
            tensor: id,
            def,
            last_use,
            start,
            end,
            banks,
        }))
    }

    /// Every PSUM tensor's node, in order of first definition; the
    /// tensors with no access go to `unused`. Errors, checked per tensor
    /// in declaration order: no write, no read, too many banks.
    fn all_nodes(&self, unused: &mut Vec<TensorId>) -> Result<Vec<Node>, AllocError> {
        let mut nodes = Vec::new();
        let mut carried = Carried::new(self.m.loops.len());
        for (ti, t) in self.m.tensors.iter().enumerate() {
            if t.mem != Mem::Psum {
                continue;
            }
            let id = TensorId::new(ti);
            match self.node(id, &mut carried)? {
                Some(n) => nodes.push(n),
                None => unused.push(id),
            }
        }
        // In order of first definition (every instruction writes one
        // tensor, so the defs are distinct points), often the declaration
        // order already.
        sort_by_u64(&mut nodes, |n| u64::from(n.def));
        debug_assert!(
            nodes.windows(2).all(|w| w[0].def < w[1].def),
            "one def per point"
        );
        Ok(nodes)
    }

    /// The nodes of the PSUM tensors declared from `first` on (the spill
    /// code's temporaries, every one accessed), in order of def.
    fn fresh_nodes(&self, first: usize) -> Result<Vec<Node>, AllocError> {
        let mut carried = Carried::new(self.m.loops.len());
        let mut fresh = Vec::new();
        for (ti, t) in self.m.tensors.iter().enumerate().skip(first) {
            if t.mem == Mem::Psum {
                let n = self.node(TensorId::new(ti), &mut carried)?;
                fresh.extend(n);
            }
        }
        fresh.sort_unstable_by_key(|n| n.def);
        Ok(fresh)
    }

    /// The nodes of the tensors of `nodes` at positions `at`, computed
    /// afresh (each keeps an access).
    fn nodes_at(&self, nodes: &[Node], at: &[usize]) -> Result<Vec<Node>, AllocError> {
        let mut carried = Carried::new(self.m.loops.len());
        (at.iter())
            .map(|&i| {
                let n = self.node(nodes[i].tensor, &mut carried)?;
                Ok(n.expect("a spilled tensor keeps its accesses"))
            })
            .collect()
    }
}

/// Merges `fresh` into `nodes`, both in order of def (all defs distinct),
/// in place from the back: the old nodes between two new ones move once,
/// as a block, found by a search outward from the end of the block before
/// (late iterations add a few nodes to millions).
fn merge_by_def(nodes: &mut Vec<Node>, fresh: &[Node]) {
    // The old nodes before `end` are not placed yet.
    let mut end = nodes.len();
    nodes.extend_from_slice(fresh);
    for (j, f) in fresh.iter().enumerate().rev() {
        // The old nodes from `start` on have later defs than `f`: bracket
        // `start` by steps doubling back from `end`, then bisect.
        let (mut lo, mut hi, mut step) = (end, end, 1);
        while lo > 0 && nodes[lo - 1].def > f.def {
            hi = lo - 1;
            lo = lo.saturating_sub(step);
            step *= 2;
        }
        let start = lo + nodes[lo..hi].partition_point(|n| n.def < f.def);
        nodes.copy_within(start..end, start + j + 1);
        nodes[start + j] = *f;
        end = start;
    }
}

impl SpillShift {
    /// Moves the nodes of `nodes` that this code left alone to their new
    /// points; returns the positions of the others, the spilled tensors'.
    fn move_nodes(&self, nodes: &mut [Node]) -> Vec<usize> {
        let mut spilled = vec![false; self.tensors];
        for t in &self.spilled {
            spilled[t.index()] = true;
        }
        let mut at = Vec::with_capacity(self.spilled.len());
        // Each point moves by the insertions before it, counted from those
        // before the def, which only grows from node to node.
        let mut hint = 0;
        for (i, n) in nodes.iter_mut().enumerate() {
            if spilled[n.tensor.index()] {
                at.push(i);
            } else {
                (*n, hint) = self.move_node(n, hint);
            }
        }
        at
    }

    /// Node `n`, which the spill code left alone, at its new points, with
    /// the count of insertions before its def (`hint`: the count for a
    /// nearby point, such as the previous node's def).
    fn move_node(&self, n: &Node, hint: usize) -> (Node, usize) {
        let at = self.inserted_up_to(n.def, hint);
        // With no insertion inside the interval (the common case when the
        // code is sparse), every point moves by `at`.
        let b = &self.before;
        let inside = (at > 0 && b[at - 1] > n.start) || b.get(at).is_some_and(|&q| q <= n.end);
        let to = |p: u32| {
            let k = if inside {
                self.inserted_up_to(p, at)
            } else {
                at
            };
            p + k as u32
        };
        let moved = Node {
            def: n.def + at as u32,
            last_use: to(n.last_use),
            start: to(n.start),
            end: to(n.end),
            ..*n
        };
        (moved, at)
    }

    /// The number of instructions inserted before old point `p`, searched
    /// outward from `hint` (the count for a nearby point): O(log d) for a
    /// count d away from the hint.
    fn inserted_up_to(&self, p: u32, hint: usize) -> usize {
        let b = &self.before;
        let hint = hint.min(b.len());
        // Bracket the count in [lo, hi] by probes doubling away from the hint.
        let mut step = 1;
        let (lo, hi) = if b.get(hint).is_some_and(|&q| q <= p) {
            let (mut lo, mut hi) = (hint + 1, b.len());
            while let Some(&q) = b.get(lo - 1 + step) {
                if q > p {
                    hi = lo - 1 + step;
                    break;
                }
                lo += step;
                step *= 2;
            }
            (lo, hi)
        } else {
            let (mut lo, mut hi) = (0, hint);
            while step <= hi {
                if b[hi - step] <= p {
                    lo = hi - step + 1;
                    break;
                }
                hi -= step;
                step *= 2;
            }
            (lo, hi)
        };
        lo + b[lo..hi].partition_point(|&q| q <= p)
    }
}

/// The seed's loop extension: with `c` the common nest depth of def and use,
/// a deeper def starts at the header of its loop at depth `c + 1`, a deeper
/// use ends at the end of its loop at depth `c + 1`. Returns `(start, end)`.
pub fn extend(lin: &Linear, def: u32, last_use: u32) -> (u32, u32) {
    if !lin.has_loops() {
        return (def, last_use);
    }
    let c = lin.common_depth(def, last_use);
    let start = if lin.point_depth(def) > c {
        lin.header[lin.nest_at(def, c + 1).index()]
    } else {
        def
    };
    let end = if lin.point_depth(last_use) > c {
        lin.end[lin.nest_at(last_use, c + 1).index()]
    } else {
        last_use
    };
    (start, end)
}

/// Scratch for the loop-carried widening: first read and first write of the
/// current node in each loop, reset lazily by a per-node stamp.
struct Carried {
    stamp: Vec<u32>,
    first_read: Vec<Option<u32>>,
    first_write: Vec<Option<u32>>,
    touched: Vec<usize>,
    tag: u32,
}

impl Carried {
    fn new(loops: usize) -> Self {
        Carried {
            stamp: vec![0; loops],
            first_read: vec![None; loops],
            first_write: vec![None; loops],
            touched: Vec::new(),
            tag: 0,
        }
    }

    /// Widens `(start, end)` over every loop in which some read of the node
    /// comes before every write and which contains a write (an instruction
    /// that reads and writes counts as reading first).
    fn widen(
        &mut self,
        lin: &Linear,
        ev: impl Iterator<Item = Event>,
        (mut start, mut end): (u32, u32),
    ) -> (u32, u32) {
        if !lin.has_loops() {
            return (start, end);
        }
        self.tag += 1;
        self.touched.clear();
        for e in ev {
            let mut l = lin.points[e.point as usize].innermost();
            while let Some(x) = l {
                let i = x.index();
                if self.stamp[i] != self.tag {
                    self.stamp[i] = self.tag;
                    self.first_read[i] = None;
                    self.first_write[i] = None;
                    self.touched.push(i);
                }
                if e.read && self.first_read[i].is_none() {
                    self.first_read[i] = Some(e.point);
                }
                if e.write && self.first_write[i].is_none() {
                    self.first_write[i] = Some(e.point);
                }
                l = lin.parent[i];
            }
        }
        for &i in &self.touched {
            if let (Some(r), Some(w)) = (self.first_read[i], self.first_write[i]) {
                if r <= w {
                    start = start.min(lin.header[i]);
                    end = end.max(lin.end[i]);
                }
            }
        }
        (start, end)
    }
}

/// `peak_demand` (SPEC §3.4): the largest Σ liveN over the nodes live at one
/// point, and the first point where it occurs (0 when there are no nodes).
pub fn peak_demand(nodes: &[Node], num_points: usize) -> (u64, u32) {
    peak_in(nodes, num_points, 0, num_points.saturating_sub(1) as u32)
}

/// The largest demand at one point of `[lo, hi]`, and the first point reaching it.
pub fn peak_in(nodes: &[Node], num_points: usize, lo: u32, hi: u32) -> (u64, u32) {
    let mut delta = vec![0i64; num_points + 1];
    for n in nodes {
        delta[n.start as usize] += i64::from(n.banks);
        delta[n.end as usize + 1] -= i64::from(n.banks);
    }
    let mut cur = 0i64;
    let mut best = (0u64, lo);
    for (p, d) in delta.iter().enumerate().take(num_points) {
        cur += d;
        let p = p as u32;
        if p >= lo && p <= hi && cur as u64 > best.0 {
            best = (cur as u64, p);
        }
    }
    best
}

/// A `random` program of `tensors` mixed-bank tensors (with loops for an
/// odd `seed`), analyzed on all banks (no memloc split): the fixture of
/// the spill-code tests.
#[cfg(test)]
pub(crate) fn random_analyzed(tensors: u32, seed: u64) -> Analysis {
    use crate::gen::workloads::{random, RandomParams};
    let p = RandomParams {
        tensors,
        seed,
        loops: seed % 2 == 1,
        multi_bank: true,
        ..RandomParams::default()
    };
    let module = random(&p).unwrap();
    let arch = crate::arch::lookup(&module.arch).unwrap();
    let lin = Linear::new(&module);
    let live = live_ranges(&module, &lin, &arch, arch.num_banks()).unwrap();
    Analysis {
        module,
        arch,
        num_banks: arch.num_banks(),
        lin,
        live,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc::costs::{spill_plan, spill_plans};
    use crate::alloc::spill::{insert_spill_code, Namer};
    use crate::gen::random::Rng;

    /// A touch gives back its instruction and both bits, at the largest
    /// instruction it can hold too.
    #[test]
    fn touch_packs_instruction_and_bits() {
        for inst in [InstId(0), InstId(7), InstId(Touch::READ - 1)] {
            for (read, write) in [(false, false), (true, false), (false, true), (true, true)] {
                let t = Touch::new(inst, read, write);
                assert_eq!((t.inst(), t.read(), t.write()), (inst, read, write));
            }
        }
        assert_eq!(std::mem::size_of::<Touch>(), 4);
    }

    /// The galloping count equals a plain binary search from any hint,
    /// with repeated insertion points and points past the last.
    #[test]
    fn inserted_up_to_counts_from_any_hint() {
        let mut rng = Rng::new(11);
        for _ in 0..300 {
            let mut before: Vec<u32> = (0..rng.index(40)).map(|_| rng.range(0, 100)).collect();
            before.sort_unstable();
            let shift = SpillShift {
                before,
                ..SpillShift::default()
            };
            for p in 0..=101 {
                let want = shift.before.partition_point(|&q| q <= p);
                for hint in 0..=shift.before.len() + 1 {
                    assert_eq!(
                        shift.inserted_up_to(p, hint),
                        want,
                        "{:?} {p} {hint}",
                        shift.before
                    );
                }
            }
        }
    }

    /// A node moves by the insertions before each of its points, whether
    /// or not one falls inside its interval (before the def, after a
    /// loop-extended start, or after it), from any hint.
    #[test]
    fn nodes_move_by_the_insertions_before_each_point() {
        let mut rng = crate::gen::random::Rng::new(13);
        let mut rnd = move |n: u32| rng.below(u64::from(n)) as u32;
        let mut split = [0; 2];
        for _ in 0..2000 {
            let mut before: Vec<u32> = (0..rnd(6)).map(|_| rnd(40)).collect();
            before.sort_unstable();
            let start = rnd(30);
            let def = start + rnd(4);
            let last_use = def + rnd(6);
            let n = Node {
                tensor: TensorId::new(0),
                def,
                last_use,
                start,
                end: last_use + rnd(4),
                banks: 1,
            };
            let shift = SpillShift {
                before,
                ..SpillShift::default()
            };
            let count = |p: u32| shift.before.partition_point(|&q| q <= p);
            let to = |p: u32| p + count(p) as u32;
            let hint = rnd(8) as usize;
            let (moved, at) = shift.move_node(&n, hint);
            assert_eq!(at, count(def));
            let want = (to(n.def), to(n.last_use), to(n.start), to(n.end));
            assert_eq!((moved.def, moved.last_use, moved.start, moved.end), want);
            split[usize::from(count(n.start) != count(n.def))] += 1;
        }
        assert!(split[1] > 100, "{split:?}: insertions after a start");
    }

    /// After two rounds of spill code (a third of the nodes, then two), the
    /// moved nodes and the updated events equal those computed afresh,
    /// with and without loops; in a program large enough that the nodes
    /// computed afresh, the temporaries declared last, are radix-sorted.
    #[test]
    fn moved_and_updated_equal_recomputed_after_spill_code() {
        for (seed, tensors) in (0..6).map(|s| (s, 300)).chain([(6, 12_000)]) {
            let mut a = random_analyzed(tensors, seed);
            let mut namer = Namer::new(&a.module);
            for round in 0..2 {
                let (lin, live) = (&a.lin, &a.live);
                let spill: Vec<NodeId> = (0..live.nodes.len())
                    .map(NodeId::new)
                    .filter(|&v| round == 1 || v.index() % 3 == 0)
                    .filter(|&v| spill_plan(lin, live, v).is_some())
                    .take(if round == 0 { usize::MAX } else { 2 })
                    .collect();
                assert!(spill.len() >= 2, "seed {seed}: {} spilled", spill.len());
                let plans = [spill_plans(lin, live, &spill)];
                let parallel = round == 1;
                let shift = insert_spill_code(&mut a.module, lin, &plans, &mut namer, parallel);
                live_ranges_after(&mut a, &shift, parallel).unwrap();
                let Analysis {
                    module: m,
                    lin,
                    live,
                    ..
                } = &a;
                assert_eq!(*lin, Linear::new(m), "seed {seed}, round {round}");
                let fresh = live_ranges(m, lin, &a.arch, a.num_banks).unwrap();
                assert_eq!(live.nodes, fresh.nodes, "seed {seed}, round {round}");
                for t in (0..m.tensors.len()).map(TensorId::new) {
                    let (x, y) = (live.events.of(t, lin), fresh.events.of(t, lin));
                    assert!(x.eq(y), "seed {seed}, round {round}: events of {t}");
                }
            }
        }
    }
}
