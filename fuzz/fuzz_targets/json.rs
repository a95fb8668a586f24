//! Fuzzes the JSON form: arbitrary bytes read as `m.json` must fail with a
//! diagnostic or give a module that prints, and a valid one must re-parse
//! to the same program ([`psum::fuzzing::json::check_json`], SPEC §2.5, §2.6).
//!
//! Run: `cargo fuzz run json --sanitizer none` (from the crate root).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    psum::fuzzing::json::check_json(data);
});
