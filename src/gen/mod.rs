//! Program generators: the named workloads of SPEC §7 ([`workloads`]),
//! random valid programs for property tests and fuzzing ([`random`]), and
//! the benchmark programs ([`scaling`]).

pub mod random;
pub mod scaling;
pub mod workloads;
