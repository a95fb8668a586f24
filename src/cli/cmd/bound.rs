//! `psum bound`: lower bounds of the allocation problem.

use crate::alloc::AllocOptions;
use crate::cli::args::ReportKind;
use crate::cli::io::{json_text, load, print_stdout, Failure};
use clap::Args;

#[derive(Args)]
pub(crate) struct BoundArgs {
    /// Input file (`.psum` text or `.json`); `-` reads stdin.
    pub(crate) file: String,
    /// Banks the allocator may use (1..=numBanks).
    #[arg(long, value_name = "N")]
    psum_banks: Option<u32>,
    /// Print JSON instead of text.
    #[arg(long, value_enum, value_name = "KIND")]
    pub(crate) report: Option<ReportKind>,
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
    let report = crate::bound::bounds(&alloc_problem(&a.file, a.psum_banks)?);
    match a.report {
        Some(ReportKind::Json) => print_stdout(&json_text(&serde_json::to_value(&report)?)),
        None => print_stdout(&report.render()),
    }
}
