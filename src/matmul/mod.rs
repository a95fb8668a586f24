//! Matmul passes (SPEC §4, seed 004 "Matmul Tile Ordering and
//! Accumulation-Group Legalization").
//!
//! - `first`: `set_first_matmults`, the provisional start marker (§4.1).
//! - [`order`]: `order_column_tiled_mms`, ordered edges between column tiles (§4.2).
//! - `groups`: accumulation runs, the `MatmulAccGrp` geometry, the five
//!   overlap predicates and the union-find clustering (§4.3.1–3).
//! - `legalize`: the START/STOP/ACCUMULATE flags, inserted memsets and
//!   zero-region widths (§4.3.4–5), and [`legalize_program`], which runs §4.2
//!   and §4.3 on an allocated loop-free program.
//!
//! Its tables are flat: per-ordinal and per-group lists are [`Lists`], and
//! ordinals and groups are indices into vectors.
//!
//! The legalizer reasons about physical PSUM: a tensor with `bank=B` occupies
//! the cells `B·2048 + offset` of every partition it has (SPEC §4.4).

mod cells;
pub(crate) mod first;
pub(crate) mod groups;
pub(crate) mod legalize;
pub mod order;

pub use first::set_first_matmults;
pub use groups::{analyze, AccGroup, Analysis, PartitionMode};
pub use legalize::{legalize_program, Cluster, MatmulReport};
pub use order::order_column_tiled_mms;

use crate::arch::{Arch, PSUM_BANK_SIZE};
use crate::entity::IdMap;
use crate::ir::{Access, Flags, InstId, InstKind, Loc, Mem, Module, TensorId};
use crate::verify::StaticError;
use cells::Rect;
use order::is_column_tiled;

/// Why a matmul pass could not run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MatmulError {
    /// The input is not what allocation produces, or keeps an explicit
    /// cluster that is not legal ([`crate::verify::statics::check_allocated`]).
    #[error("{0}")]
    Input(StaticError),
    /// The pass needs a loop-free program.
    #[error("the matmul passes need a loop-free program (unroll it first)")]
    HasLoops,
    /// A PSUM tensor is accessed but has no `bank=`.
    #[error("PSUM tensor {tensor} has no bank (allocate it first)")]
    Unallocated {
        /// The tensor's name.
        tensor: String,
    },
    /// A group's banks are not coverable by a 1, 2, 4 or 8 bank window.
    #[error("{inst}: the PSUM zero region for banks {lo}..={hi} would need a 16-bank window")]
    ZeroRegionTooWide {
        /// The group's head (`%label`, or `%N` for the N-th instruction).
        inst: String,
        /// First bank of the group.
        lo: i64,
        /// Last bank of the group.
        hi: i64,
    },
}

impl MatmulError {
    /// Where the error points in the module `m` it is about: the
    /// instruction or the tensor declaration it names.
    pub fn loc(&self, m: &Module) -> Loc {
        let tensor = |name: &str| m.tensor_by_name(name).map(Loc::Tensor);
        let found = match self {
            MatmulError::Input(e) => e
                .inst()
                .map(Loc::Inst)
                .or_else(|| e.tensor().and_then(tensor)),
            MatmulError::Unallocated { tensor: t } => tensor(t),
            MatmulError::HasLoops | MatmulError::ZeroRegionTooWide { .. } => None,
        };
        found.unwrap_or(Loc::Module)
    }
}

/// A PSUM access of one instruction, placed physically. Within one tensor
/// its cells are the tensor-relative region shifted by the bank's base, so
/// comparing the cells of two accesses of a tensor compares their regions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PsumAccess {
    /// The tensor accessed.
    pub tensor: TensorId,
    /// The physical cells.
    pub rect: Rect,
}

/// Lists stored back to back in one vector: list `i` is
/// `items[start[i]..start[i + 1]]` (per-list data without a heap
/// allocation per list).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lists<T> {
    items: Vec<T>,
    start: Vec<u32>,
}

impl<T: Copy> Lists<T> {
    /// No lists.
    pub(crate) fn new() -> Self {
        Lists {
            items: Vec::new(),
            start: vec![0],
        }
    }

    /// Reserves room for `lists` more lists of `items` more items in all.
    pub(crate) fn reserve(&mut self, lists: usize, items: usize) {
        self.start.reserve(lists);
        self.items.reserve(items);
    }

    /// Appends `item` to the list being built.
    pub(crate) fn push(&mut self, item: T) {
        self.items.push(item);
    }

    /// Ends the list being built; the next item starts a new one.
    pub(crate) fn end_list(&mut self) {
        self.start.push(flat_index(self.items.len()));
    }

    /// `n` lists holding the pairs `(list, item)` that `pairs` passes to
    /// its argument, each list in the order passed (a counting sort;
    /// `pairs` runs twice and must pass the same pairs both times).
    pub(crate) fn grouped(n: usize, pairs: impl Fn(&mut dyn FnMut(usize, T))) -> Self
    where
        T: Default,
    {
        let mut start = vec![0u32; n + 1];
        pairs(&mut |l, _| start[l + 1] += 1);
        for l in 0..n {
            start[l + 1] += start[l];
        }
        let mut next = start.clone();
        let mut items = vec![T::default(); start[n] as usize];
        pairs(&mut |l, item| {
            items[next[l] as usize] = item;
            next[l] += 1;
        });
        Lists { items, start }
    }

    /// List `i`.
    pub(crate) fn get(&self, i: usize) -> &[T] {
        &self.items[self.range(i)]
    }

    /// The positions in [`Lists::items`] of list `i`.
    pub(crate) fn range(&self, i: usize) -> std::ops::Range<usize> {
        self.start[i] as usize..self.start[i + 1] as usize
    }

    /// The lists in order.
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = &[T]> {
        self.start
            .windows(2)
            .map(|w| &self.items[w[0] as usize..w[1] as usize])
    }

    /// Every item, list after list.
    pub(crate) fn items(&self) -> &[T] {
        &self.items
    }
}

/// An index into one of the legalizer's flat vectors, stored as `u32`: a
/// program holding 2³² instructions (80 bytes each) would not fit in memory.
pub(crate) fn flat_index(i: usize) -> u32 {
    u32::try_from(i).expect("fewer than 2^32 entries")
}

/// What the legalizer reads of the instruction at an ordinal, so that its
/// sweeps need not visit the instruction itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct InstFacts {
    /// A matmul-family instruction.
    pub matmul: bool,
    /// A column-tiled matmul (SPEC §4.2).
    pub column_tiled: bool,
    /// A matmul with explicit flags (`flags=…`, not `auto`).
    pub explicit: bool,
    /// A matmul with an explicit `zr=`.
    pub has_zr: bool,
}

impl InstFacts {
    fn of(kind: &InstKind, arch: &Arch) -> Self {
        match kind.as_matmul() {
            None => InstFacts::default(),
            Some(mm) => InstFacts {
                matmul: true,
                column_tiled: is_column_tiled(mm, arch),
                explicit: matches!(mm.flags, Flags::Set(_)),
                has_zr: mm.zr.is_some(),
            },
        }
    }
}

/// Where a tensor's cells start in physical PSUM.
#[derive(Clone, Copy)]
enum Base {
    /// Not a PSUM tensor.
    NotPsum,
    /// A PSUM tensor without a bank.
    Unallocated,
    /// A PSUM tensor at byte `bank·2048`.
    Psum(i64),
}

/// A loop-free program in program order (ordinal = position), with every
/// instruction's PSUM reads and write evaluated.
pub(crate) struct Trace {
    /// Instruction at each ordinal.
    pub insts: Vec<InstId>,
    /// Facts of the instruction at each ordinal.
    pub facts: Vec<InstFacts>,
    /// PSUM reads of each ordinal, in operand order.
    pub reads: Lists<PsumAccess>,
    /// PSUM write of each ordinal (one, if its destination is PSUM).
    pub writes: Lists<PsumAccess>,
}

impl Trace {
    /// Builds the trace; fails on loops and on accessed PSUM tensors without a bank.
    pub(crate) fn new(m: &Module, arch: &Arch) -> Result<Trace, MatmulError> {
        Trace::build(m, arch, false)
    }

    /// Builds the trace of a program that need not be allocated: a PSUM
    /// tensor without a bank is placed at bank 0. Accesses of one tensor
    /// compare as in [`Trace::new`], which is all a per-tensor sweep reads.
    pub(crate) fn unallocated(m: &Module, arch: &Arch) -> Result<Trace, MatmulError> {
        Trace::build(m, arch, true)
    }

    fn build(m: &Module, arch: &Arch, unallocated: bool) -> Result<Trace, MatmulError> {
        if m.has_loops() {
            return Err(MatmulError::HasLoops);
        }
        let bank = i64::from(PSUM_BANK_SIZE);
        let bases: IdMap<TensorId, Base> = (m.tensors.values())
            .map(|t| match (t.mem, t.bank) {
                (Mem::Psum, Some(b)) => Base::Psum(i64::from(b) * bank),
                (Mem::Psum, None) if unallocated => Base::Psum(0),
                (Mem::Psum, None) => Base::Unallocated,
                _ => Base::NotPsum,
            })
            .collect();
        let place = |a: &Access| -> Result<Option<PsumAccess>, MatmulError> {
            let base = match bases[a.tensor] {
                Base::NotPsum => return Ok(None),
                Base::Psum(base) => base,
                Base::Unallocated => {
                    let tensor = m.tensor(a.tensor).name.clone();
                    return Err(MatmulError::Unallocated { tensor });
                }
            };
            let region = a.region(|_| 0);
            Ok(Some(PsumAccess {
                tensor: a.tensor,
                rect: Rect {
                    p0: region.p0,
                    p1: region.p1,
                    x0: base + region.b0,
                    x1: base + region.b1,
                },
            }))
        };
        let insts = m.insts_in_order();
        let mut facts = Vec::with_capacity(insts.len());
        // At most one write per instruction; about as many PSUM reads.
        let mut reads = Lists::new();
        reads.reserve(insts.len(), insts.len());
        let mut writes = Lists::new();
        writes.reserve(insts.len(), insts.len());
        let mut failed = None;
        for &i in &insts {
            let kind = &m.inst(i).kind;
            kind.for_each_src(|s| match place(s) {
                Ok(Some(r)) => reads.push(r),
                Ok(None) => {}
                Err(e) => {
                    failed.get_or_insert(e);
                }
            });
            if let Some(e) = failed {
                return Err(e);
            }
            reads.end_list();
            facts.push(InstFacts::of(kind, arch));
            if let Some(w) = place(kind.dst())? {
                writes.push(w);
            }
            writes.end_list();
        }
        Ok(Trace {
            insts,
            facts,
            reads,
            writes,
        })
    }

    /// Number of instructions.
    pub(crate) fn len(&self) -> usize {
        self.insts.len()
    }

    /// The PSUM write of the ordinal `ord`, if any.
    pub(crate) fn write(&self, ord: usize) -> Option<&PsumAccess> {
        self.writes.get(ord).first()
    }

    /// Every PSUM access of the program: all reads, then all writes.
    pub(crate) fn accesses(&self) -> impl Iterator<Item = &PsumAccess> + Clone {
        self.reads.items().iter().chain(self.writes.items())
    }

    /// How diagnostics name the instruction at `ord`: `%label`, or `%ord`.
    pub(crate) fn name(&self, m: &Module, ord: usize) -> String {
        match m.inst(self.insts[ord]).label() {
            Some(l) => format!("%{l}"),
            None => format!("%{ord}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_built_in_order_and_by_counting_sort() {
        let mut l: Lists<u8> = Lists::new();
        assert_eq!(l.iter().count(), 0);
        for list in [&[1u8, 2][..], &[], &[3]] {
            list.iter().for_each(|&x| l.push(x));
            l.end_list();
        }
        assert_eq!(l.iter().count(), 3);
        assert_eq!(
            (l.get(0), l.get(1), l.get(2)),
            (&[1, 2][..], &[][..], &[3][..])
        );
        assert_eq!(l.range(2), 2..3);
        assert_eq!(l.iter().map(<[u8]>::len).collect::<Vec<_>>(), [2, 0, 1]);
        let pairs = [(2, 10u8), (0, 11), (2, 12), (0, 13)];
        let g = Lists::grouped(4, |emit| pairs.iter().for_each(|&(k, x)| emit(k, x)));
        let lists: Vec<&[u8]> = g.iter().collect();
        assert_eq!(lists, [&[11, 13][..], &[], &[10, 12], &[]]);
        assert_eq!(g.items(), [11, 13, 10, 12]);
    }
}
