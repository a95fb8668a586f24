//! Fuzzes the text form: a thin wrapper over
//! [`psum::fuzzing::parse::check_text`], which says what is checked.
//!
//! Run: `cargo fuzz run parse --sanitizer none` (from the crate root).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| psum::fuzzing::parse::check_text(data));
