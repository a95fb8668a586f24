//! Spill code (SPEC §3.8; seed: `PSUM_Allocator::insert_spill_code`,
//! TensorCopy spill in `psum_spill_with_loop.cpp`).
//!
//! PSUM has no PSUM-side spill space: a spilled value is saved by
//! `copy NAME_SpillTensorCopyK <- NAME` into a new SBUF tensor after its last
//! write, and reloaded by `copy NAME_ReloadTensorCopyJ <- NAME_SpillTensorCopyK`
//! into a new PSUM tensor right before each read group, whose reads are
//! rewritten to the reload. Reloads are never hoisted out of loops. `K` and
//! `J` share one module-wide counter; nodes go in id order, each node's save
//! before its reloads; where code lands in the same gap, saves come first.

use super::costs::spill_plan;
use super::linear::{BodyRef, Linear, PointKind};
use super::liveness::{Liveness, ReloadEvents, SpillShift};
use super::NodeId;
use crate::ir::{Access, Inst, InstId, InstKind, Mem, Module, Stmt, Tensor, TensorId};
use std::collections::HashSet;

/// One copy to insert: into `body` before statement `pos`; `rank` 0 for a
/// save, 1 for a reload; ties go in creation order, which is `inst` order.
struct Insertion {
    body: BodyRef,
    pos: u32,
    rank: u8,
    inst: InstId,
}

/// Mints spill and reload tensor names `BASE_WHATK` from the module-wide
/// counter `K`, skipping names already declared. Two minted names never
/// clash (each ends in `TensorCopy` and then the digits of a distinct `K`),
/// so only the names the program declared before allocation that contain
/// `TensorCopy` need remembering; built once per allocation and kept across
/// the fixpoint iterations.
pub struct Namer {
    declared: HashSet<String>,
    counter: u32,
}

impl Namer {
    /// A namer for `m` with the counter at 0.
    pub fn new(m: &Module) -> Namer {
        Namer {
            declared: (m.tensors.iter())
                .filter(|t| t.name.contains("TensorCopy"))
                .map(|t| t.name.clone())
                .collect(),
            counter: 0,
        }
    }

    fn fresh(&mut self, base: &str, what: &str) -> String {
        loop {
            // Built by hand: `format!` costs more than the rest of a spill.
            let digits = self.counter.to_string();
            let mut name = String::with_capacity(base.len() + 1 + what.len() + digits.len());
            name.push_str(base);
            name.push('_');
            name.push_str(what);
            name.push_str(&digits);
            self.counter += 1;
            if !self.declared.contains(&name) {
                return name;
            }
        }
    }
}

/// Inserts the spill code of the spillable nodes `spill` (ascending ids),
/// planned on `lin`/`live` (the analysis of `m` before this call), naming
/// the new tensors with `namer`. Returns where the code went and what it
/// accesses (its reloads are the new PSUM tensors).
pub fn insert_spill_code(
    m: &mut Module,
    lin: &Linear,
    live: &Liveness,
    spill: &[NodeId],
    namer: &mut Namer,
) -> SpillShift {
    let mut inserts = Vec::new();
    let mut renames = Vec::new();
    let mut shift = SpillShift {
        points: lin.len(),
        tensors: m.tensors.len(),
        before: Vec::new(),
        spilled: Vec::with_capacity(spill.len()),
        saves: Vec::with_capacity(spill.len()),
        reloads: Vec::new(),
        reads: Vec::new(),
    };
    for &v in spill {
        let plan = spill_plan(lin, live, v).expect("only spillable nodes are spilled");
        let t = live.nodes[v.index()].tensor;
        let orig = m.tensor(t);
        debug_assert!(orig.mem == Mem::Psum, "Expected save from PSUM");
        let (base, partitions, bytes, dtype) =
            (orig.name.clone(), orig.partitions, orig.bytes, orig.dtype);
        let declare = |m: &mut Module, namer: &mut Namer, what, mem| {
            m.add_tensor(Tensor::new(
                namer.fresh(&base, what),
                mem,
                partitions,
                bytes,
                dtype,
            ))
        };
        let saved = declare(m, namer, "SpillTensorCopy", Mem::Sbuf);
        shift.spilled.push(t);
        shift.before.push(plan.save_after + 1);
        let at = lin.points[plan.save_after as usize];
        let inst = copy(m, saved, t);
        shift.saves.push((plan.first_read() as u32, inst));
        inserts.push(Insertion {
            body: at.body(),
            pos: at.index() + 1,
            rank: 0,
            inst,
        });
        for (lo, hi) in plan.groups(live.events_of(v, lin)) {
            let reload = declare(m, namer, "ReloadTensorCopy", Mem::Psum);
            debug_assert!(m.tensor(reload).mem == Mem::Psum, "Expected reload to PSUM");
            shift.before.push(lo);
            let at = lin.points[lo as usize];
            let inst = copy(m, reload, saved);
            inserts.push(Insertion {
                body: at.body(),
                pos: at.index(),
                rank: 1,
                inst,
            });
            let first = shift.reads.len();
            shift
                .reads
                .extend((lo..=hi).map(|p| match lin.points[p as usize].kind() {
                    PointKind::Inst(i) => i,
                    _ => unreachable!("read groups hold instructions only"),
                }));
            renames.extend(shift.reads[first..].iter().map(|&i| (i, t, reload)));
            shift.reloads.push(ReloadEvents {
                tensor: reload,
                copy: inst,
                reads: first as u32..shift.reads.len() as u32,
            });
        }
    }
    // The reads renamed in instruction order, which is nearly memory order.
    renames.sort_unstable_by_key(|r| r.0);
    for (i, from, to) in renames {
        m.insts[i.index()].kind.for_each_src_mut(|a| {
            if a.tensor == from {
                a.tensor = to;
            }
        });
    }
    inserts.sort_unstable_by_key(|x| (x.body, x.pos, x.rank, x.inst));
    for chunk in inserts.chunk_by(|a, b| a.body == b.body) {
        let body = match chunk[0].body {
            BodyRef::Block(b) => &mut m.blocks[b as usize].body,
            BodyRef::Loop(l) => &mut m.loops[l.index()].body,
        };
        // In place, from the back: each statement moves once.
        let mut end = body.len();
        body.resize(end + chunk.len(), Stmt::Inst(InstId(0)));
        let mut to = body.len();
        for x in chunk.iter().rev() {
            let pos = x.pos as usize;
            body.copy_within(pos..end, to - (end - pos));
            to -= end - pos + 1;
            body[to] = Stmt::Inst(x.inst);
            end = pos;
        }
    }
    shift.before.sort_unstable();
    shift
}

/// Adds the unlabelled instruction `copy dst <- src` (whole tensors).
fn copy(m: &mut Module, dst: TensorId, src: TensorId) -> InstId {
    let kind = InstKind::Copy {
        dst: Access::whole(dst, m.tensor(dst)),
        src: Access::whole(src, m.tensor(src)),
    };
    m.add_inst(Inst::new(kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names end in the counter's decimal digits, and skip declared names.
    #[test]
    fn fresh_names_count_in_decimal_and_skip_declared_ones() {
        for n in [0, 7, 10, 99, 100, 40_213, 4_294_967_294] {
            let mut namer = Namer {
                declared: HashSet::new(),
                counter: n,
            };
            assert_eq!(
                namer.fresh("t", "SpillTensorCopy"),
                format!("t_SpillTensorCopy{n}")
            );
        }
        let mut namer = Namer {
            declared: ["a_ReloadTensorCopy0".to_string()].into(),
            counter: 0,
        };
        assert_eq!(namer.fresh("a", "ReloadTensorCopy"), "a_ReloadTensorCopy1");
        assert_eq!(namer.fresh("a", "SpillTensorCopy"), "a_SpillTensorCopy2");
    }
}
