//! `psum legalize` (SPEC §4.2, §4.3) on an allocated, loop-free program.

use crate::cli::args::{OutputArgs, ReportKind};
use crate::cli::io::{emit, json_text, load, located, print_stdout, Failure};
use crate::{arch, matmul, report, text};
use clap::Args;
use std::time::Instant;

#[derive(Args)]
pub(crate) struct LegalizeArgs {
    /// An allocated, loop-free program; `-` reads stdin.
    pub(crate) file: String,
    /// Write the JSON report to stdout (the program then goes to -o only).
    #[arg(long, value_enum, value_name = "KIND")]
    pub(crate) report: Option<ReportKind>,
    #[command(flatten)]
    pub(crate) out: OutputArgs,
}

pub(crate) fn run(a: LegalizeArgs) -> Result<(), Failure> {
    let loaded = load(&a.file)?;
    let arch = arch::lookup(&loaded.module.arch)?;
    let mut m = loaded.module.clone();
    let t0 = Instant::now();
    let r = matmul::legalize_program(&mut m, &arch)
        .map_err(|e| located(&loaded, e.loc(&loaded.module), e.to_string()))?;
    let elapsed = t0.elapsed();
    for w in &r.warnings {
        eprintln!("warning: {w}");
    }
    let program = text::print(&m);
    match a.report {
        Some(ReportKind::Json) => {
            if a.out.output.is_some() {
                emit(&a.out, &program)?;
            }
            let v = report::legalize_report(&m.arch, arch.num_banks(), &r, elapsed);
            print_stdout(&json_text(&v))
        }
        None => emit(&a.out, &program),
    }
}
