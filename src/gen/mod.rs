//! Program generators: the named workloads of SPEC §7 ([`workloads`]),
//! the one generator of random valid programs behind the `random` workload,
//! the property tests and fuzzing ([`random`]), and the benchmark programs
//! ([`scaling`]).

mod build;
pub mod random;
pub mod scaling;
pub mod workloads;
