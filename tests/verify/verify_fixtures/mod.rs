//! The verification fixtures shared by `tests/verify_oracle.rs` and
//! `tests/verify_mutations.rs`: the shipped examples (`EX*`, and `O05`),
//! their hand-compiled results (`C*`), and a parser for them.

#![allow(dead_code)] // each test binary uses its own subset

use psum::ir::Module;

/// Parses `src`, panicking with the parse error.
pub fn module(src: &str) -> Module {
    psum::text::parse(src)
        .unwrap_or_else(|e| panic!("{e}"))
        .module
}

/// `examples/01_three_tensors.psum`.
pub const EX01: &str = include_str!("../../../examples/01_three_tensors.psum");
/// `examples/02_one_spill.psum`.
pub const EX02: &str = include_str!("../../../examples/02_one_spill.psum");
/// `examples/03_column_tiles.psum`.
pub const EX03: &str = include_str!("../../../examples/03_column_tiles.psum");
/// `examples/04_gemm_k_loop.psum`.
pub const EX04: &str = include_str!("../../../examples/04_gemm_k_loop.psum");
/// Two clustered groups, one accumulating onto a memset init.
pub const O05: &str = include_str!("05_memset.psum");
/// [`EX01`] compiled.
pub const C01: &str = include_str!("01_compiled.psum");
/// [`EX02`] compiled.
pub const C02: &str = include_str!("02_compiled.psum");
/// [`EX03`] compiled.
pub const C03: &str = include_str!("03_compiled.psum");
/// [`EX04`] compiled.
pub const C04: &str = include_str!("04_compiled.psum");
/// [`EX04`] allocated only: banks assigned, loop kept, flags auto.
pub const C04_ALLOC: &str = include_str!("04_alloc.psum");
/// [`O05`] compiled.
pub const C05: &str = include_str!("05_compiled.psum");
