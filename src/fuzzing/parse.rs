//! The text form on arbitrary bytes (SPEC §2.5, §2.6): text that is not
//! UTF-8, does not parse or does not validate is refused with an error and
//! never a panic; a valid module prints and reads back as the same program.

use crate::{text, validate};

/// Checks the text form on `bytes`. Panics, showing the printed module,
/// when a valid module does not read back as the same program.
pub fn check_text(bytes: &[u8]) {
    let Ok(src) = std::str::from_utf8(bytes) else {
        return;
    };
    let Ok(parsed) = text::parse(src) else {
        return;
    };
    let m = parsed.module;
    if validate::validate(&m).is_err() {
        return;
    }
    let printed = text::print(&m);
    let again = text::parse(&printed)
        .unwrap_or_else(|e| panic!("the printed module does not parse: {e}\n{printed}"))
        .module;
    assert!(
        m.same_program(&again),
        "the round trip changed the program:\n{printed}"
    );
}
