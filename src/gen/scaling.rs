//! The scaling workload of the allocator benchmarks (SPEC §3.10,
//! §7): `random` programs of a given size with the default pressure (1.5 ×
//! the bank count) and mixed 1–4-bank tensors, shared by `psum bench` and
//! `benches/alloc.rs` so both measure the same programs.

use super::workloads::RandomParams;

/// Sizes (PSUM tensors) on which reference and fast mode are compared.
pub const COMPARE_SIZES: [u32; 3] = [1_000, 5_000, 20_000];

/// Sizes on which fast mode alone is measured.
pub const FAST_SIZES: [u32; 3] = [100_000, 300_000, 1_000_000];

/// The benchmark program of `tensors` PSUM tensors (seed 0, trn1).
pub fn params(tensors: u32) -> RandomParams {
    RandomParams {
        tensors,
        multi_bank: true,
        ..RandomParams::default()
    }
}
