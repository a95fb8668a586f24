//! Program generators: random valid programs for property tests and fuzzing.

pub mod random;
