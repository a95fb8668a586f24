//! Fuzzes the parser: arbitrary text must parse or fail with an error (never
//! panic); whatever parses must validate or fail cleanly, and a valid module
//! must print and re-parse to the same program (SPEC §2.5).
//!
//! Run: `cargo fuzz run parse --sanitizer none` (from the crate root).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(parsed) = psum::text::parse(src) else {
        return;
    };
    let m = parsed.module;
    if psum::validate::validate(&m).is_err() {
        return;
    }
    let printed = psum::text::print(&m);
    let again = psum::text::parse(&printed)
        .unwrap_or_else(|e| panic!("printed module does not parse: {e}\n{printed}"))
        .module;
    assert!(m.same_program(&again), "round trip changed the program:\n{printed}");
});
