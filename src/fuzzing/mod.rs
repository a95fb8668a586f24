//! Checks behind the fuzz targets (`fuzz/fuzz_targets/`), in the manner of
//! regalloc2's `fuzzing` module: each target is a thin wrapper that hands
//! its input bytes to a function here, so the same checks also run as
//! seeded tests under `cargo test` and can be called from a debugger.
//!
//! - [`compile`]: a random valid program (SPEC §7 `gen::random`) compiled
//!   under every allocator (§3, §3.11) must verify (§5), and a corrupted
//!   result must be reported, never crash the verifier or legalization.
//! - [`json`]: arbitrary bytes read as the JSON form (SPEC §2.5, §2.6) give
//!   a located error or a module that prints and parses back unchanged.
//! - [`parse`]: the same for the text form.

pub mod compile;
pub mod json;
pub mod parse;
