//! `psum alloc` (SPEC §3): PSUM allocation only.

use crate::cli::args::{AllocFlags, OutputArgs, ReportKind};
use crate::cli::io::{emit, json_text, load, located, print_stdout, Failure};
use crate::{report, text};
use clap::Args;
use std::time::Instant;

#[derive(Args)]
pub(crate) struct AllocArgs {
    /// Input file (`.psum` text or `.json`); `-` reads stdin.
    pub(crate) file: String,
    #[command(flatten)]
    pub(crate) flags: AllocFlags,
    /// Write the JSON report to stdout (the program then goes to -o only).
    #[arg(long, value_enum, value_name = "KIND")]
    pub(crate) report: Option<ReportKind>,
    #[command(flatten)]
    pub(crate) out: OutputArgs,
}

pub(crate) fn run(a: AllocArgs) -> Result<(), Failure> {
    let opts = a.flags.options().map_err(Failure::Usage)?;
    let loaded = load(&a.file)?;
    let t0 = Instant::now();
    let result = crate::alloc::allocate(&loaded.module, &opts);
    let elapsed = t0.elapsed();
    let outcome = result.map_err(|e| located(&loaded, e.loc(), e.to_string()))?;
    a.flags.print_log(&outcome);
    for w in &outcome.warnings {
        eprintln!("warning: {w}");
    }
    let program = text::print(&outcome.module);
    match a.report {
        Some(ReportKind::Json) => {
            if a.out.output.is_some() {
                emit(&a.out, &program)?;
            }
            print_stdout(&json_text(&report::alloc_report(&outcome.report, elapsed)))
        }
        None => emit(&a.out, &program),
    }
}
