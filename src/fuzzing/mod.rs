//! Checks behind the fuzz targets (`fuzz/fuzz_targets/`), in the manner of
//! regalloc2's `fuzzing` module: each target is a thin wrapper that hands
//! its input bytes to a function here, so the same checks also run as
//! seeded tests under `cargo test` and can be called from a debugger.
//!
//! - [`compile`]: a random valid program (SPEC §7 `gen::random`) compiled
//!   under every allocator (§3, §3.11) must verify (§5), and a corrupted
//!   result must be reported, never crash the verifier or legalization.

pub mod compile;
