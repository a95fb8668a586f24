//! Candidates and live ranges, read straight from the program (SPEC §3.3).
//!
//! Every PSUM tensor with an access is a node: `def` its first write,
//! `use` its last read, the interval stretched by the loop extension and
//! widened over the loops that carry the value. Nodes are numbered in
//! order of first definition.

use crate::alloc::linear::{Linear, PointKind};
use crate::alloc::AllocError;
use crate::arch::Arch;
use crate::entity::IdMap;
use crate::ir::{InstId, LoopId, Mem, Module, TensorId};

/// One instruction's access to one PSUM tensor.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Access {
    /// The instruction's point.
    pub point: u32,
    /// The instruction.
    pub inst: InstId,
    /// It reads the tensor.
    pub read: bool,
    /// It writes the tensor.
    pub write: bool,
}

/// The accesses of every tensor (by [`TensorId`]; empty for a non-PSUM
/// tensor), each list in point order.
pub(crate) fn accesses(m: &Module, lin: &Linear) -> IdMap<TensorId, Vec<Access>> {
    let mut by_tensor = IdMap::with_len(m.tensors.len(), Vec::new());
    for (p, point) in lin.points.iter().enumerate() {
        let PointKind::Inst(inst) = point.kind() else {
            continue;
        };
        let kind = &m.inst(inst).kind;
        let mut note = |t: TensorId, read: bool, write: bool| {
            if m.tensor(t).mem != Mem::Psum {
                return;
            }
            let list: &mut Vec<Access> = &mut by_tensor[t];
            match list.last_mut().filter(|a| a.inst == inst) {
                Some(a) => {
                    a.read |= read;
                    a.write |= write;
                }
                None => list.push(Access {
                    point: p as u32,
                    inst,
                    read,
                    write,
                }),
            }
        };
        kind.for_each_src(|s| note(s.tensor, true, false));
        note(kind.dst().tensor, false, true);
    }
    by_tensor
}

/// A node: one PSUM tensor and its live range.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node {
    /// The tensor.
    pub tensor: TensorId,
    /// Point of its first write.
    pub def: u32,
    /// First point of its interval.
    pub start: u32,
    /// Last point of its interval (closed).
    pub end: u32,
    /// `liveN`: aligned bank count.
    pub banks: u32,
}

/// The candidates of one iteration.
pub(crate) struct Liveness {
    /// The nodes, in order of first definition.
    pub nodes: Vec<Node>,
    /// The PSUM tensors with no access, in declaration order.
    pub unused: Vec<TensorId>,
    /// The accesses of every tensor (see [`accesses`]).
    pub accesses: IdMap<TensorId, Vec<Access>>,
}

/// The nodes of `m` (points `lin`) on `num_banks` banks. Errors, checked
/// tensor by tensor in declaration order: no write, no read, too many
/// banks.
pub(crate) fn live_ranges(
    m: &Module,
    lin: &Linear,
    arch: &Arch,
    num_banks: u32,
) -> Result<Liveness, AllocError> {
    let accesses = accesses(m, lin);
    let mut nodes = Vec::new();
    let mut unused = Vec::new();
    for (tensor, t) in m.tensors.iter() {
        let acc = &accesses[tensor];
        if t.mem != Mem::Psum {
            continue;
        }
        if acc.is_empty() {
            unused.push(tensor);
            continue;
        }
        let def = (acc.iter().find(|a| a.write))
            .ok_or_else(|| AllocError::NoFirstDef {
                tensor,
                name: t.name.clone(),
            })?
            .point;
        let last_use = (acc.iter().rev().find(|a| a.read))
            .ok_or_else(|| AllocError::NoLastUse {
                tensor,
                name: t.name.clone(),
            })?
            .point;
        let banks = arch.aligned_bank_num(arch.bank_num(u64::from(t.bytes)));
        if banks > num_banks {
            return Err(AllocError::TooBig {
                tensor,
                name: t.name.clone(),
                banks,
                size: num_banks,
            });
        }
        let (mut start, mut end) = extend(lin, def, last_use);
        for l in carrying_loops(lin, acc) {
            start = start.min(lin.header[l]);
            end = end.max(lin.end[l]);
        }
        nodes.push(Node {
            tensor,
            def,
            start,
            end,
            banks,
        });
    }
    nodes.sort_by_key(|n| n.def);
    Ok(Liveness {
        nodes,
        unused,
        accesses,
    })
}

/// The seed's loop extension of `[def, last_use]`: with `Ld`, `Lu` the
/// nests of the two points and `c` the length of their common prefix, a
/// deeper def starts at the header of `Ld[c]`, a deeper use ends at the
/// end of `Lu[c]`.
pub(crate) fn extend(lin: &Linear, def: u32, last_use: u32) -> (u32, u32) {
    let ld = lin.nest(def);
    let lu = lin.nest(last_use);
    let c = ld.iter().zip(&lu).take_while(|(a, b)| a == b).count();
    let start = ld.get(c).map_or(def, |&l| lin.header[l]);
    let end = lu.get(c).map_or(last_use, |&l| lin.end[l]);
    (start, end)
}

/// The loops that carry the value of a tensor with accesses `acc` around
/// their back edge: those holding a write, in which some read comes before
/// every write (an instruction that reads and writes reads first).
fn carrying_loops(lin: &Linear, acc: &[Access]) -> Vec<LoopId> {
    let mut loops: Vec<LoopId> = acc.iter().flat_map(|a| lin.nest(a.point)).collect();
    loops.sort_unstable();
    loops.dedup();
    loops.retain(|&l| {
        let mut inside = acc.iter().filter(|a| lin.inside(l, a.point));
        let first_read = inside.clone().find(|a| a.read).map(|a| a.point);
        let first_write = inside.find(|a| a.write).map(|a| a.point);
        matches!((first_read, first_write), (Some(r), Some(w)) if r <= w)
    });
    loops
}

/// The banks live at each point of a program of `points` points.
pub(crate) fn demand(nodes: &[Node], points: usize) -> Vec<u64> {
    let mut live = vec![0; points];
    for n in nodes {
        for p in n.start..=n.end {
            live[p as usize] += u64::from(n.banks);
        }
    }
    live
}

/// The most banks live at one point of `[lo, hi]` (`demand`, by point),
/// and the first point with that many (`(0, lo)` when none is live).
pub(crate) fn peak_in(demand: &[u64], lo: u32, hi: u32) -> (u64, u32) {
    let mut best = (0, lo);
    for p in lo..=hi {
        if demand[p as usize] > best.0 {
            best = (demand[p as usize], p);
        }
    }
    best
}

/// `peak_demand` (SPEC §3.4): the most banks live at one point.
pub(crate) fn peak_demand(demand: &[u64]) -> u64 {
    demand.iter().copied().max().unwrap_or(0)
}
