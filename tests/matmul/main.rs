//! Integration tests of unrolling and the matmul passes (SPEC §4).

mod legalize;
mod matmul_common;
mod order;
mod random;
mod unroll;
