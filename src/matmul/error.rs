//! Why a matmul pass could not run, and where the error points.

use crate::ir::{Loc, Module};
use crate::verify::StaticError;

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
