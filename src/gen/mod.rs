//! Program generators: the named workloads of SPEC §7 ([`workloads`]) and
//! random valid programs for property tests and fuzzing ([`random`]).

pub mod random;
pub mod workloads;
