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

use super::linear::{BodyRef, Linear, PointKind};
use super::support::sort::sort_by_u64;
use super::support::threads::join;
use crate::entity::IdVec;
use crate::ir::{Access, Inst, InstId, InstKind, Mem, Module, Stmt, Tensor, TensorId};
use std::collections::HashSet;

/// One copy to insert: into `body` before statement `pos`; `rank` 0 for a
/// save, 1 for a reload; ties go in creation order, which is `inst` order.
#[derive(Clone, Copy)]
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
pub(crate) struct Namer {
    declared: HashSet<String>,
    counter: u32,
}

impl Namer {
    /// A namer for `m` with the counter at 0.
    pub(crate) fn new(m: &Module) -> Namer {
        Namer {
            declared: (m.tensors.values())
                .filter(|t| t.name.contains("TensorCopy"))
                .map(|t| t.name.clone())
                .collect(),
            counter: 0,
        }
    }

    fn fresh(&mut self, base: &str, what: &str) -> String {
        loop {
            // Built by hand, one allocation: `format!` costs more than the
            // rest of a spill.
            let mut digits = [0u8; 10];
            let mut k = self.counter;
            let mut at = digits.len();
            loop {
                at -= 1;
                digits[at] = b'0' + (k % 10) as u8;
                k /= 10;
                if k == 0 {
                    break;
                }
            }
            let digits = std::str::from_utf8(&digits[at..]).expect("decimal digits");
            let mut name = String::with_capacity(base.len() + 1 + what.len() + digits.len());
            name.push_str(base);
            name.push('_');
            name.push_str(what);
            name.push_str(digits);
            self.counter += 1;
            // Most programs declare no such name: no hashing then.
            if self.declared.is_empty() || !self.declared.contains(&name) {
                return name;
            }
        }
    }
}

/// Makes room in `m` for the tensors and instructions of `copies` spill
/// copies, so that inserting as many later moves neither arena: an
/// allocator that knows a bound on its spill code grows the module while
/// it still chooses what to spill, on the other thread.
pub(crate) fn make_room(m: &mut Module, copies: usize) {
    m.tensors.reserve(copies);
    m.insts.reserve(copies);
}

const SAVE: &str = "SpillTensorCopy";
const RELOAD: &str = "ReloadTensorCopy";

/// Where the spill code of a run of nodes to spill goes (SPEC §3.8), node
/// by node in spill order: each node's tensor, the point its save goes
/// right after, and its reloads, each serving a run of its read groups
/// (closed point ranges, in order): reloaded right before the run's first
/// point, its groups read from the reload. Under §3.8 each group has its
/// own reload; psum's split spilling (§3.11) lets a node keep its first
/// groups on its own tensor and one reload serve several groups. The
/// allocator that chose the nodes works out the places;
/// [`insert_spill_code`] writes the code.
#[derive(Clone, Debug, Default)]
pub(crate) struct SpillPlans {
    /// Per node: its tensor, its save point, the reads of the groups it
    /// keeps on its own tensor, and the end of its reloads in `reloads`.
    nodes: Vec<(TensorId, u32, u32, usize)>,
    /// Per reload: the end of the groups it serves in `groups`.
    reloads: Vec<usize>,
    groups: Vec<(u32, u32)>,
}

impl SpillPlans {
    /// Adds the code of the next node: tensor `t`, saved right after point
    /// `save_after`, reloaded before each of `groups`.
    pub(crate) fn push(
        &mut self,
        t: TensorId,
        save_after: u32,
        groups: impl IntoIterator<Item = (u32, u32)>,
    ) {
        self.push_split(t, save_after, groups.into_iter().map(|g| (g, true)));
    }

    /// Adds the code of the next node: tensor `t`, saved right after point
    /// `save_after`, with its read groups in order, each flagged when a
    /// reload goes right before it. The groups before the first reload
    /// read `t` itself; every later group reads the latest reload.
    pub(crate) fn push_split(
        &mut self,
        t: TensorId,
        save_after: u32,
        groups: impl IntoIterator<Item = ((u32, u32), bool)>,
    ) {
        let open = self.reloads.len();
        let mut kept = 0;
        for ((lo, hi), reload) in groups {
            if reload {
                self.reloads.push(self.groups.len());
            }
            if self.reloads.len() == open {
                kept += hi - lo + 1;
                continue;
            }
            self.groups.push((lo, hi));
            *self.reloads.last_mut().expect("a reload is open") = self.groups.len();
        }
        self.nodes.push((t, save_after, kept, self.reloads.len()));
    }

    /// Each node with its save point, the reads it keeps and its reloads'
    /// groups, in order.
    fn each(&self) -> impl Iterator<Item = (TensorId, u32, u32, Reloads<'_>)> {
        let ends = self.nodes.iter().map(|n| n.3);
        let starts = std::iter::once(0).chain(ends);
        (self.nodes.iter().zip(starts)).map(move |(&(t, save_after, kept, end), start)| {
            let reloads = Reloads {
                plans: self,
                at: start..end,
            };
            (t, save_after, kept, reloads)
        })
    }

    /// The copies (and new tensors) of the code: a save per node and one
    /// per reload.
    fn copies(&self) -> usize {
        self.nodes.len() + self.reloads.len()
    }

    /// The instructions its reloaded groups hold.
    fn reads(&self) -> usize {
        (self.groups.iter())
            .map(|&(lo, hi)| (hi - lo + 1) as usize)
            .sum()
    }
}

/// The reloads of one node of a [`SpillPlans`]: each the groups it serves.
#[derive(Clone)]
struct Reloads<'a> {
    plans: &'a SpillPlans,
    at: std::ops::Range<usize>,
}

impl<'a> Iterator for Reloads<'a> {
    type Item = &'a [(u32, u32)];

    fn next(&mut self) -> Option<Self::Item> {
        let r = self.at.next()?;
        let start = r.checked_sub(1).map_or(0, |q| self.plans.reloads[q]);
        Some(&self.plans.groups[start..self.plans.reloads[r]])
    }
}
/// Declares the new tensors and adds the copies the `plans` describe, in
/// creation order (node by node, the save and then the reloads), naming
/// the tensors with `namer`.
fn declare(
    tensors: &mut IdVec<TensorId, Tensor>,
    insts: &mut IdVec<InstId, Inst>,
    plans: &[SpillPlans],
    namer: &mut Namer,
) {
    let copies = plans.iter().map(|p| p.copies()).sum();
    tensors.reserve(copies);
    insts.reserve(copies);
    for (t, _, _, reloads) in plans.iter().flat_map(SpillPlans::each) {
        let mut copy = |what, mem, src: TensorId| {
            let like = &tensors[t];
            debug_assert!(like.mem == Mem::Psum, "Expected save from PSUM");
            let name = namer.fresh(&like.name, what);
            let dst = Tensor::new(name, mem, like.partitions, like.bytes, like.dtype);
            let id = TensorId::new(tensors.len());
            insts.push(Inst::new(InstKind::Copy {
                dst: Access::whole(id, &dst),
                src: Access::whole(src, &dst),
            }));
            tensors.push(dst);
            id
        };
        let saved = copy(SAVE, Mem::Sbuf, t);
        for _ in reloads {
            copy(RELOAD, Mem::Psum, saved);
        }
    }
}

/// Where the copies [`declare`] adds go, worked out apart from the module
/// from the ids they will have: the spill description, the reads to
/// rename and the copies to insert.
struct Code {
    shift: SpillShift,
    renames: Vec<(InstId, TensorId, TensorId)>,
    inserts: Vec<Insertion>,
}

impl Code {
    /// The code of `plans`, whose copies declare the tensors from `tensor`
    /// on and are the instructions from `inst` on.
    fn describe(lin: &Linear, plans: &[SpillPlans], tensor: usize, inst: usize) -> Code {
        let copies: usize = plans.iter().map(|p| p.copies()).sum();
        let nodes: usize = plans.iter().map(|p| p.nodes.len()).sum();
        let reads: usize = plans.iter().map(|p| p.reads()).sum();
        let mut code = Code {
            shift: SpillShift {
                tensors: tensor,
                before: Vec::with_capacity(copies),
                spilled: Vec::with_capacity(nodes),
                kept: Vec::with_capacity(nodes),
                saves: Vec::with_capacity(nodes),
                reloads: Vec::with_capacity(copies - nodes),
                reads: Vec::with_capacity(reads),
            },
            renames: Vec::with_capacity(reads),
            inserts: Vec::with_capacity(copies),
        };
        // Copy `j` declares tensor `tensor + j` and is instruction `inst + j`.
        let mut ids = (0..).map(|j| (TensorId::new(tensor + j), InstId::new(inst + j)));
        let mut next = || ids.next().expect("ids never run out");
        let Code {
            shift,
            renames,
            inserts,
        } = &mut code;
        for (t, save_after, kept, reloads) in plans.iter().flat_map(SpillPlans::each) {
            let (_, inst) = next();
            shift.spilled.push(t);
            shift.kept.push(kept);
            shift.before.push(save_after + 1);
            shift.saves.push(inst);
            let at = lin.points[save_after as usize];
            inserts.push(Insertion {
                body: at.body(),
                pos: at.index() + 1,
                rank: 0,
                inst,
            });
            for groups in reloads {
                let (reload, inst) = next();
                let lo = groups[0].0;
                shift.before.push(lo);
                let at = lin.points[lo as usize];
                inserts.push(Insertion {
                    body: at.body(),
                    pos: at.index(),
                    rank: 1,
                    inst,
                });
                let first = shift.reads.len();
                let points = groups.iter().flat_map(|&(lo, hi)| lo..=hi);
                shift
                    .reads
                    .extend(points.map(|p| match lin.points[p as usize].kind() {
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
        code
    }
}

/// Where one run of spill code went and what it accesses: what the fast
/// analysis needs to follow the code without reading the program again
/// ([`super::Analysis::after_spill`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct SpillShift {
    /// Tensors declared before the spill code.
    pub tensors: usize,
    /// For each inserted instruction, the old point it went right before
    /// (one past the last when at the very end), ascending.
    pub before: Vec<u32>,
    /// The tensors spilled.
    pub spilled: Vec<TensorId>,
    /// For each spilled tensor, the reads after its save that still read
    /// it (its first read groups, before its first reload).
    pub kept: Vec<u32>,
    /// For each spilled tensor, the save that reads it after its last write.
    pub saves: Vec<InstId>,
    /// The reload temporaries, in order of creation.
    pub reloads: Vec<ReloadEvents>,
    /// The instructions of every read group, reload by reload, each in
    /// point order.
    pub reads: Vec<InstId>,
}

/// What accesses one reload temporary.
#[derive(Clone, Debug)]
pub(crate) struct ReloadEvents {
    /// The temporary.
    pub tensor: TensorId,
    /// The reload copy that writes it.
    pub copy: InstId,
    /// Where the instructions of the read groups it serves are in
    /// [`SpillShift::reads`].
    pub reads: std::ops::Range<u32>,
}

/// Inserts the spill code `plans` describe (the runs in order), whose
/// points are those of `lin`, the numbering of `m` before this call,
/// naming the new tensors with `namer`. Returns where the code went and
/// what it accesses (its reloads are the new PSUM tensors). In `parallel`,
/// one thread declares the tensors and copies while the other describes
/// where they go, then one renames the reads while the other inserts the
/// copies.
pub(crate) fn insert_spill_code(
    m: &mut Module,
    lin: &Linear,
    plans: &[SpillPlans],
    namer: &mut Namer,
    parallel: bool,
) -> SpillShift {
    let Module {
        tensors,
        insts,
        blocks,
        loops,
        ..
    } = m;
    let (tensor, inst) = (tensors.len(), insts.len());
    let (code, ()) = join(
        parallel,
        || Code::describe(lin, plans, tensor, inst),
        || declare(tensors, insts, plans, namer),
    );
    let Code {
        mut shift,
        mut renames,
        mut inserts,
    } = code;
    let num_blocks = blocks.len();
    // Each side sorts what it needs (of similar size); the inserting
    // side, the lighter, also the insertion points.
    let rename = || {
        // The reads renamed in instruction order, which is nearly memory
        // order.
        renames.sort_unstable_by_key(|r| r.0);
        for (i, from, to) in renames {
            insts[i].kind.for_each_src_mut(|a| {
                if a.tensor == from {
                    a.tensor = to;
                }
            });
        }
    };
    let insert = || {
        shift.before.sort_unstable();
        sort_inserts(&mut inserts, num_blocks);
        for chunk in inserts.chunk_by(|a, b| a.body == b.body) {
            let body = match chunk[0].body {
                BodyRef::Block(b) => &mut blocks[b as usize].body,
                BodyRef::Loop(l) => &mut loops[l].body,
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
    };
    join(parallel, rename, insert);
    shift
}

/// Sorts `inserts` (in creation order) by body, position, rank and
/// creation: by the first three packed in one word (the bodies numbered
/// blocks first, of `blocks`), stably, which keeps creation order among
/// ties.
fn sort_inserts(inserts: &mut Vec<Insertion>, blocks: usize) {
    debug_assert!(inserts.is_sorted_by_key(|x| x.inst), "in creation order");
    let body = |x: &Insertion| match x.body {
        BodyRef::Block(b) => b as usize,
        BodyRef::Loop(l) => blocks + l.index(),
    };
    if inserts.iter().any(|x| body(x) >= 1 << 31) {
        inserts.sort_unstable_by_key(|x| (x.body, x.pos, x.rank, x.inst));
        return;
    }
    sort_by_u64(inserts, |x| {
        (body(x) as u64) << 33 | u64::from(x.pos) << 1 | u64::from(x.rank)
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Insertions sort by body, position, rank and creation, a large batch
    /// (packed keys, radix) as a small one (comparisons).
    #[test]
    fn insertions_sort_by_body_position_rank_and_creation() {
        let mut rng = crate::alloc::support::rng::Rng::new(3);
        let key = |x: &Insertion| (x.body, x.pos, x.rank, x.inst);
        for n in [100, crate::alloc::support::sort::RADIX_MIN + 100] {
            let mut xs: Vec<Insertion> = (0..n)
                .map(|i| Insertion {
                    body: match rng.below(2) {
                        0 => BodyRef::Block(rng.below(3) as u32),
                        _ => BodyRef::Loop(crate::ir::LoopId::new(rng.below(3) as usize)),
                    },
                    pos: rng.below(50) as u32,
                    rank: rng.below(2) as u8,
                    inst: InstId::new(i),
                })
                .collect();
            let mut want: Vec<_> = xs.iter().map(key).collect();
            want.sort_unstable();
            sort_inserts(&mut xs, 3);
            assert!(xs.iter().map(key).eq(want), "{n} insertions");
        }
    }

    /// Names end in the counter's decimal digits, and skip declared names.
    #[test]
    fn fresh_names_count_in_decimal_and_skip_declared_ones() {
        for n in [0, 7, 10, 99, 100, 40_213, 4_294_967_294] {
            let mut namer = Namer {
                declared: HashSet::new(),
                counter: n,
            };
            assert_eq!(namer.fresh("t", SAVE), format!("t_SpillTensorCopy{n}"));
        }
        let mut namer = Namer {
            declared: ["a_ReloadTensorCopy0".to_string()].into(),
            counter: 0,
        };
        assert_eq!(namer.fresh("a", RELOAD), "a_ReloadTensorCopy1");
        assert_eq!(namer.fresh("a", SAVE), "a_SpillTensorCopy2");
    }
}
