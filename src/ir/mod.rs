//! The IR data model (SPEC §2): a [`Module`] of tensors, loop variables,
//! instructions and loops, all held in flat vectors and referred to by typed
//! indices ([`TensorId`], [`VarId`], [`InstId`], [`LoopId`]).
//!
//! Control structure is a tree of [`Stmt`] lists (block bodies and loop bodies)
//! whose leaves are indices into the instruction arena, in the manner of
//! Cranelift's layout over its instruction arena. Source positions are kept out
//! of the model (see [`crate::text::SourceMap`]) so that two modules compare
//! equal exactly when they mean the same program.
//!
//! The files: `ids` (the arena ids), `types` (memories, dtypes, tensor and
//! variable declarations), `affine` (affine expressions), `access` (access
//! patterns and regions), `inst` (instructions), `module` (loops, blocks and
//! the module), `loc` (places diagnostics point at).

mod access;
mod affine;
mod ids;
mod inst;
mod loc;
mod module;
mod types;

pub use access::*;
pub use affine::*;
#[allow(unused_imports)]
pub(crate) use ids::entity;
pub use ids::*;
pub use inst::*;
pub use loc::*;
pub use module::*;
pub use types::*;

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue #6: a 1M-tensor program has ~7M instructions.
    #[test]
    fn ir_sizes() {
        use std::mem::size_of;
        assert_eq!(size_of::<Affine>(), 16);
        assert_eq!(size_of::<Access>(), 32);
        assert_eq!(size_of::<InstKind>(), 72);
        assert_eq!(size_of::<Inst>(), 80);
    }
}
