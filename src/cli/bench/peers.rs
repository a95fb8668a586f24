//! `psum bench --peers`: psum against regalloc2 (Ion and fastalloc) on the
//! same problems. regalloc2 is a dependency of the `benches/` crate, not of
//! this binary, so the mode runs that crate's bench.

use crate::cli::io::Failure;
use std::process::Command;

/// `psum bench --peers`: the regalloc2 table of `benches/benches/peers.rs`,
/// built and run by cargo in the checkout this binary was built from.
pub(super) fn run_peers() -> Result<(), Failure> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/benches");
    let status = Command::new(option_env!("CARGO").unwrap_or("cargo"))
        .args(["bench", "--bench", "peers"])
        .current_dir(dir)
        .status()
        .map_err(|e| {
            Failure::Input(format!(
                "error: cannot run `cargo bench --bench peers` in {dir}: {e}"
            ))
        })?;
    if status.success() {
        Ok(())
    } else {
        Err(Failure::Input(format!(
            "error: `cargo bench --bench peers` failed ({status})"
        )))
    }
}
