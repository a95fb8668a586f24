//! `psum lint` (SPEC §9.4): the PSUM hazards of a program.

use crate::cli::io::{print_stdout, read, Failure};
use clap::Args;

#[derive(Args)]
pub(crate) struct LintArgs {
    /// Input file (`.psum` text or `.json`); `-` reads stdin.
    pub(crate) file: String,
}

pub(crate) fn run(a: LintArgs) -> Result<(), Failure> {
    let loaded = read(&a.file)?;
    let valid = || loaded.validate().map_err(|d| Failure::Input(d.to_string()));
    // Text input is linted before validation, which rejects some hazards
    // outright; JSON input may be structurally unsound, so it is validated first.
    if loaded.json {
        valid()?;
    }
    let mut out = String::new();
    for l in crate::lint::lint(&loaded.module) {
        out.push_str(&format!("{l}\n"));
    }
    print_stdout(&out)?;
    valid()
}
