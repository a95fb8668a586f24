//! `psum arch` (SPEC §1): the hardware geometry.

use crate::arch;
use crate::cli::io::{to_json_line, Failure};
use clap::Args;
use std::io::Write;

#[derive(Args)]
pub(crate) struct ArchArgs {
    /// A codename (`trn1`, `core_v4`, …); omit to list the generations.
    pub(crate) name: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn run(a: ArchArgs) -> Result<(), Failure> {
    let out = match (&a.name, a.json) {
        (Some(name), false) => arch::describe(&arch::lookup(name)?),
        (Some(name), true) => to_json_line(&arch::lookup(name)?)?,
        (None, false) => arch::describe_all(),
        (None, true) => {
            let all: Vec<_> = arch::Generation::ALL
                .iter()
                .map(|&g| GenerationInfo {
                    generation: g,
                    arch_level: g.arch_level(),
                    codenames: g.codenames(),
                    board: arch::board(g),
                })
                .collect();
            to_json_line(&all)?
        }
    };
    std::io::stdout().write_all(out.as_bytes())?;
    Ok(())
}

/// One generation in `psum arch --json`.
#[derive(serde::Serialize)]
pub(crate) struct GenerationInfo {
    pub(crate) generation: arch::Generation,
    pub(crate) arch_level: u32,
    pub(crate) codenames: &'static [&'static str],
    pub(crate) board: arch::Board,
}
