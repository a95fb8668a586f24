//! `psum bound`: lower bounds of the allocation problem.

use crate::alloc::AllocOptions;
use crate::cli::args::Report;
use crate::cli::io::{json_text, load, Failure};
use crate::cli::output::Outputs;
use clap::Args;

#[derive(Args)]
pub(crate) struct BoundArgs {
    /// Input file (`.psum` text or `.json`); `-` reads stdin.
    pub(crate) file: String,
    /// Banks the allocator may use (1..=numBanks).
    #[arg(long, value_name = "N")]
    psum_banks: Option<u32>,
    /// `json`: print JSON instead of text; `json=FILE`: write JSON to FILE
    /// (the text still on stdout).
    #[arg(long, value_name = "KIND[=FILE]", value_parser = Report::parse)]
    pub(crate) report: Option<Report>,
}

/// The first iteration's allocation problem of FILE (after the memloc split).
pub(crate) fn alloc_problem(
    file: &str,
    psum_banks: Option<u32>,
) -> Result<crate::alloc::AllocProblem, Failure> {
    let loaded = load(file)?;
    let opts = AllocOptions {
        psum_banks,
        ..AllocOptions::default()
    };
    crate::alloc::problem(&loaded.module, &opts)
        .map_err(|e| Failure::Input(loaded.diagnostic(e.loc(), e.to_string()).to_string()))
}

pub(crate) fn run(a: BoundArgs) -> Result<(), Failure> {
    let file = a.report.as_ref().map(Report::json_file).transpose()?;
    let bounds = crate::bound::bounds(&alloc_problem(&a.file, a.psum_banks)?);
    let mut out = Outputs::new();
    match file {
        Some(file) => {
            let json = json_text(&serde_json::to_value(&bounds)?);
            let text = bounds.render();
            out.add_report(file, None, json, move |w| w.write_all(text.as_bytes()))?;
        }
        None => out.add(None, bounds.render())?,
    }
    out.commit()
}
