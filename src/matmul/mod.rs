//! Matmul passes (SPEC §4, seed 004 "Matmul Tile Ordering and
//! Accumulation-Group Legalization").
//!
//! - `first`: `set_first_matmults`, the provisional start marker (§4.1).
//! - [`order`]: `order_column_tiled_mms`, ordered edges between column tiles (§4.2).
//! - `groups`: accumulation runs, the `MatmulAccGrp` geometry, the five
//!   overlap predicates and the union-find clustering (§4.3.1–3).
//! - [`legalize`]: the START/STOP/ACCUMULATE flags, inserted memsets and
//!   zero-region widths (§4.3.4–5), and [`legalize_program`], which runs §4.2
//!   and §4.3 on an allocated loop-free program.
//!
//! The legalizer reasons about physical PSUM: a tensor with `bank=B` occupies
//! the cells `B·2048 + offset` of every partition it has (SPEC §4.4).

mod cells;
pub(crate) mod first;
pub(crate) mod groups;
pub mod legalize;
pub mod order;

pub use first::set_first_matmults;
pub use groups::{analyze, AccGroup, Analysis, PartitionMode};
pub use legalize::{legalize_program, Cluster, MatmulReport};
pub use order::order_column_tiled_mms;

use crate::arch::PSUM_BANK_SIZE;
use crate::ir::{InstId, Mem, Module, Region, TensorId};
use cells::Rect;

/// Why a matmul pass could not run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MatmulError {
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

/// A PSUM access of one instruction, evaluated and placed physically.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PsumAccess {
    /// The tensor accessed.
    pub tensor: TensorId,
    /// The tensor-relative region.
    pub region: Region,
    /// The physical cells.
    pub rect: Rect,
}

/// A loop-free program in program order (ordinal = position), with every
/// instruction's PSUM reads and write evaluated.
pub(crate) struct Trace {
    /// Instruction at each ordinal.
    pub insts: Vec<InstId>,
    /// PSUM reads of each ordinal, in operand order.
    pub reads: Vec<Vec<PsumAccess>>,
    /// PSUM write of each ordinal, if its destination is PSUM.
    pub writes: Vec<Option<PsumAccess>>,
}

impl Trace {
    /// Builds the trace; fails on loops and on accessed PSUM tensors without a bank.
    pub fn new(m: &Module) -> Result<Trace, MatmulError> {
        if m.has_loops() {
            return Err(MatmulError::HasLoops);
        }
        let place = |a: &crate::ir::Access| -> Result<Option<PsumAccess>, MatmulError> {
            let t = m.tensor(a.tensor);
            if t.mem != Mem::Psum {
                return Ok(None);
            }
            let bank = t.bank.ok_or_else(|| MatmulError::Unallocated {
                tensor: t.name.clone(),
            })?;
            let region = a.region(|_| 0);
            let base = i64::from(bank) * i64::from(PSUM_BANK_SIZE);
            Ok(Some(PsumAccess {
                tensor: a.tensor,
                region,
                rect: Rect {
                    p0: region.p0,
                    p1: region.p1,
                    x0: base + region.b0,
                    x1: base + region.b1,
                },
            }))
        };
        let insts = m.insts_in_order();
        let mut reads = Vec::with_capacity(insts.len());
        let mut writes = Vec::with_capacity(insts.len());
        for &i in &insts {
            let kind = &m.inst(i).kind;
            let mut r = Vec::new();
            for s in kind.srcs() {
                r.extend(place(s)?);
            }
            reads.push(r);
            writes.push(place(kind.dst())?);
        }
        Ok(Trace {
            insts,
            reads,
            writes,
        })
    }

    /// Number of instructions.
    pub fn len(&self) -> usize {
        self.insts.len()
    }

    /// How diagnostics name the instruction at `ord`: `%label`, or `%ord`.
    pub fn name(&self, m: &Module, ord: usize) -> String {
        match m.inst(self.insts[ord]).label() {
            Some(l) => format!("%{l}"),
            None => format!("%{ord}"),
        }
    }
}
