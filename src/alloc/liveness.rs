//! Candidates and live ranges (SPEC §3.2 node numbering, §3.3; seed:
//! `PSUM_Allocator::live_range` in `psum_live_range_with_loop.cpp`).
//!
//! Every PSUM tensor with at least one access is a candidate node. Its def is
//! its first write and its use its last read, in linear order; the interval
//! is stretched to whole loops exactly as the seed's `_with_loop` extension
//! does, then widened over every loop that carries the value around its back
//! edge. Nodes are numbered in order of first definition.
//!
//! After spill code, only the spilled and new tensors' nodes are computed
//! afresh ([`NodeCtx`], for [`super::Analysis::after_spill`]).

use super::events::{Event, Events};
use super::linear::Linear;
use super::support::sort::sort_by_u64;
use super::AllocError;
use crate::arch::Arch;
use crate::entity::{entity_id, IdMap, IdVec};
use crate::ir::{entity, LoopId, Mem, Module, TensorId};

entity!(
    /// A candidate node of the interference graph, numbered in order of first definition.
    NodeId
);
entity_id!(NodeId);

/// A candidate: one PSUM tensor and its live range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Node {
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
    pub(crate) fn interval_len(&self) -> u64 {
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
pub(crate) struct Liveness {
    /// Nodes, numbered in order of first definition.
    pub nodes: IdVec<NodeId, Node>,
    /// PSUM tensors with no access at all, in declaration order.
    pub unused: Vec<TensorId>,
    /// The PSUM accesses, per tensor.
    pub events: Events,
}

impl Liveness {
    /// The same ranges without their events (which are the bulk of it).
    pub(crate) fn without_events(self) -> Liveness {
        Liveness {
            events: Events::default(),
            ..self
        }
    }

    /// The node of each of the first `tensors` tensors (by [`TensorId`]),
    /// `None` for one that is no candidate: an index built on demand (the
    /// allocator itself never looks nodes up by tensor).
    pub(crate) fn node_index(&self, tensors: usize) -> IdMap<TensorId, Option<NodeId>> {
        let mut index = IdMap::with_len(tensors, None);
        for (v, n) in self.nodes.iter() {
            index[n.tensor] = Some(v);
        }
        index
    }

    /// The accesses of node `v`, in point order, with their points in `lin`.
    pub(crate) fn events_of<'a>(
        &'a self,
        v: NodeId,
        lin: &'a Linear,
    ) -> impl DoubleEndedIterator<Item = Event> + ExactSizeIterator + Clone + 'a {
        self.events.of(self.nodes[v].tensor, lin)
    }
}

/// Computes the candidates and their intervals (SPEC §3.3). Errors, checked
/// per tensor in declaration order: no write, no read, too many banks.
pub(crate) fn live_ranges(
    m: &Module,
    lin: &Linear,
    arch: &Arch,
    num_banks: u32,
) -> Result<Liveness, AllocError> {
    live_ranges_of(m, Events::new(m, lin), lin, arch, num_banks)
}

/// [`live_ranges`] from `events`, the PSUM accesses of `m` (such as those
/// the memloc split read).
pub(crate) fn live_ranges_of(
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
        nodes: nodes.into(),
        unused,
        events,
    })
}

/// What computing one tensor's node reads.
pub(super) struct NodeCtx<'a> {
    /// The program.
    pub m: &'a Module,
    /// Its PSUM accesses.
    pub events: &'a Events,
    /// Its points.
    pub lin: &'a Linear,
    /// Its architecture.
    pub arch: &'a Arch,
    /// Banks the allocator may use.
    pub num_banks: u32,
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
            .ok_or_else(|| AllocError::NoFirstDef {
                tensor: id,
                name: t.name.clone(),
            })?
            .point;
        let last_use = (ev.clone().rev().find(|e| e.read))
            .ok_or_else(|| AllocError::NoLastUse {
                tensor: id,
                name: t.name.clone(),
            })?
            .point;
        let banks = (self.arch).aligned_bank_num(self.arch.bank_num(u64::from(t.bytes)));
        if banks > self.num_banks {
            return Err(AllocError::TooBig {
                tensor: id,
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
        for (ti, t) in self.m.tensors.values().enumerate() {
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
    pub(crate) fn fresh_nodes(&self, first: usize) -> Result<Vec<Node>, AllocError> {
        let mut carried = Carried::new(self.m.loops.len());
        let mut fresh = Vec::new();
        for (ti, t) in self.m.tensors.values().enumerate().skip(first) {
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
    pub(crate) fn nodes_at(&self, nodes: &[Node], at: &[usize]) -> Result<Vec<Node>, AllocError> {
        let mut carried = Carried::new(self.m.loops.len());
        (at.iter())
            .map(|&i| {
                let n = self.node(nodes[i].tensor, &mut carried)?;
                Ok(n.expect("a spilled tensor keeps its accesses"))
            })
            .collect()
    }
}

/// The seed's loop extension: with `c` the common nest depth of def and use,
/// a deeper def starts at the header of its loop at depth `c + 1`, a deeper
/// use ends at the end of its loop at depth `c + 1`. Returns `(start, end)`.
pub(crate) fn extend(lin: &Linear, def: u32, last_use: u32) -> (u32, u32) {
    if !lin.has_loops() {
        return (def, last_use);
    }
    let c = lin.common_depth(def, last_use);
    let start = if lin.point_depth(def) > c {
        lin.header[lin.nest_at(def, c + 1)]
    } else {
        def
    };
    let end = if lin.point_depth(last_use) > c {
        lin.end[lin.nest_at(last_use, c + 1)]
    } else {
        last_use
    };
    (start, end)
}

/// Scratch for the loop-carried widening: first read and first write of the
/// current node in each loop, reset lazily by a per-node stamp.
struct Carried {
    stamp: IdMap<LoopId, u32>,
    first_read: IdMap<LoopId, Option<u32>>,
    first_write: IdMap<LoopId, Option<u32>>,
    touched: Vec<LoopId>,
    tag: u32,
}

impl Carried {
    fn new(loops: usize) -> Self {
        Carried {
            stamp: IdMap::with_len(loops, 0),
            first_read: IdMap::with_len(loops, None),
            first_write: IdMap::with_len(loops, None),
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
            while let Some(i) = l {
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
pub(crate) fn peak_demand(nodes: &[Node], num_points: usize) -> (u64, u32) {
    peak_in(nodes, num_points, 0, num_points.saturating_sub(1) as u32)
}

/// The largest demand at one point of `[lo, hi]`, and the first point reaching it.
pub(crate) fn peak_in(nodes: &[Node], num_points: usize, lo: u32, hi: u32) -> (u64, u32) {
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
