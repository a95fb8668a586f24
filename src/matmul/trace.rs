//! The program the legalizer reads (SPEC §4.4): a loop-free program in
//! program order, every instruction's PSUM reads and write placed in
//! physical PSUM ([`Rect`]s of partitions × bytes).

use super::error::MatmulError;
use super::lists::Lists;
use super::order::is_column_tiled;
use crate::arch::{Arch, PSUM_BANK_SIZE};
use crate::entity::IdMap;
use crate::ir::{Access, Flags, InstId, InstKind, Mem, Module, TensorId};

/// A physical PSUM rectangle: partitions `[p0, p1)` × bytes `[x0, x1)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rect {
    /// First partition.
    pub p0: i64,
    /// One past the last partition.
    pub p1: i64,
    /// First physical byte (`bank·2048 + offset`).
    pub x0: i64,
    /// One past the last physical byte.
    pub x1: i64,
}

impl Rect {
    /// Whether every cell of `o` is in `self`.
    pub(crate) fn contains(&self, o: &Rect) -> bool {
        self.p0 <= o.p0 && o.p1 <= self.p1 && self.x0 <= o.x0 && o.x1 <= self.x1
    }

    /// Whether the two rectangles share at least one cell.
    pub(crate) fn overlaps(&self, o: &Rect) -> bool {
        self.p0 < o.p1 && o.p0 < self.p1 && self.x0 < o.x1 && o.x0 < self.x1
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
