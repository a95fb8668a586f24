//! Fuzzes the compile-and-verify property under every allocator, and the
//! verifier's and legalization's robustness on corrupted results: a thin
//! wrapper over [`psum::fuzzing::compile::check_bytes`], which says what the
//! input bytes mean.
//!
//! Run: `cargo fuzz run compile --sanitizer none` (from the crate root).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = psum::fuzzing::compile::check_bytes(data) {
        panic!("{e}");
    }
});
