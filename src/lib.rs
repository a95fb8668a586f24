//! psum: PSUM bank allocation, spill, and matmul accumulation-group
//! legalization for Trainium-class accelerators, with an independent checker.
//!
//! The pipeline (SPEC §6 `compile`) is a list of named passes over an
//! [`ir::Module`]: validate → alloc → unroll → order → legalize → verify.
//! This crate is the library; the `psum` binary is a thin shell over it.

pub mod alloc;
pub mod arch;
pub mod bound;
pub mod export;
pub mod gen;
pub mod ir;
pub mod lint;
pub mod matmul;
pub mod peers;
pub mod pipeline;
pub mod placement;
pub mod report;
pub mod source;
pub mod text;
pub mod trace;
pub mod unroll;
pub mod validate;
pub mod verify;
pub mod viz;
