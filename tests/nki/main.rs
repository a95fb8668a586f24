//! Integration tests of NKI kernels traced, compiled and linted (SPEC §9).

mod fuzz;
mod ir;
mod kernels;
mod lints;
mod trace;
