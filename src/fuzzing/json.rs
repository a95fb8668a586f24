//! The JSON form on arbitrary bytes (SPEC §2.5, §2.6): a located error,
//! or a module that prints and reads back as the same program.

use crate::source;
use crate::text;

/// Checks the JSON form on arbitrary bytes, read as the file `m.json`:
/// they either fail with a diagnostic naming the file, or give a module
/// that prints as text and JSON without panicking; a module that also
/// validates parses back from both printed forms to the same program.
/// Panics, naming the input, when a property fails.
pub fn check_json(bytes: &[u8]) {
    let loaded = match source::parse("m.json", bytes.to_vec()) {
        Ok(loaded) => loaded,
        Err(d) => {
            let shown = d.to_string();
            assert!(
                shown.starts_with("m.json:") && shown.contains(": error: "),
                "a diagnostic that does not name the input: {shown}"
            );
            return;
        }
    };
    let printed = text::print(&loaded.module);
    let json = text::to_json(&loaded.module);
    if loaded.validate().is_err() {
        return;
    }
    let input = String::from_utf8_lossy(bytes);
    let again = text::parse(&printed)
        .unwrap_or_else(|e| panic!("printed module does not parse: {e}\n{printed}\nfrom {input}"))
        .module;
    assert!(
        loaded.module.same_program(&again),
        "the text round trip changed the program:\n{printed}\nfrom {input}"
    );
    let again = source::load("m.json", json.as_bytes())
        .unwrap_or_else(|e| panic!("printed JSON does not load: {e}\n{json}"))
        .module;
    assert!(
        loaded.module.same_program(&again),
        "the JSON round trip changed the program:\n{json}"
    );
}
