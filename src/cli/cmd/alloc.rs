//! `psum alloc` (SPEC §3): PSUM allocation only.

use crate::cli::args::{AllocFlags, OutputArgs, Report};
use crate::cli::io::{json_text, load, located, Failure};
use crate::cli::output::Outputs;
use crate::{report, text};
use clap::Args;
use std::io::Write;
use std::time::Instant;

#[derive(Args)]
pub(crate) struct AllocArgs {
    /// Input file (`.psum` text or `.json`); `-` reads stdin.
    pub(crate) file: String,
    #[command(flatten)]
    pub(crate) flags: AllocFlags,
    /// `json`: the JSON report on stdout (the program then goes to -o
    /// only); `json=FILE`: the JSON report to FILE.
    #[arg(long, value_name = "KIND[=FILE]", value_parser = Report::parse)]
    pub(crate) report: Option<Report>,
    #[command(flatten)]
    pub(crate) out: OutputArgs,
}

pub(crate) fn run(a: AllocArgs) -> Result<(), Failure> {
    let opts = a.flags.options()?;
    let report = a.report.as_ref().map(Report::json_file).transpose()?;
    let loaded = load(&a.file)?;
    let t0 = Instant::now();
    let result = crate::alloc::allocate(&loaded.module, &opts);
    let elapsed = t0.elapsed();
    let outcome = result.map_err(|e| located(&loaded, e.loc(), e.to_string()))?;
    a.flags.print_log(&outcome);
    for w in &outcome.warnings {
        eprintln!("warning: {w}");
    }
    let program = |w: &mut dyn Write| text::write(&outcome.module, w);
    let mut out = Outputs::new();
    match report {
        Some(file) => {
            let json = json_text(&report::alloc_report(&outcome.report, elapsed));
            out.add_report(file, a.out.output.as_deref(), json, program)?;
        }
        None => out.stream(a.out.output.as_deref(), program)?,
    }
    out.commit()
}
