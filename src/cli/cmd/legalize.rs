//! `psum legalize` (SPEC §4.2, §4.3) on an allocated, loop-free program.

use crate::cli::args::{OutputArgs, Report};
use crate::cli::io::{json_text, load, located, Failure};
use crate::cli::output::Outputs;
use crate::{arch, matmul, report, text};
use clap::Args;
use std::io::Write;
use std::time::Instant;

#[derive(Args)]
pub(crate) struct LegalizeArgs {
    /// An allocated, loop-free program; `-` reads stdin.
    pub(crate) file: String,
    /// `json`: the JSON report on stdout (the program then goes to -o
    /// only); `json=FILE`: the JSON report to FILE.
    #[arg(long, value_name = "KIND[=FILE]", value_parser = Report::parse)]
    pub(crate) report: Option<Report>,
    #[command(flatten)]
    pub(crate) out: OutputArgs,
}

pub(crate) fn run(a: LegalizeArgs) -> Result<(), Failure> {
    let report = a.report.as_ref().map(Report::json_file).transpose()?;
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
    let program = |w: &mut dyn Write| text::write(&m, w);
    let mut out = Outputs::new();
    match report {
        Some(file) => {
            let v = report::legalize_report(&m.arch, arch.num_banks(), &r, elapsed);
            out.add_report(file, a.out.output.as_deref(), json_text(&v), program)?;
        }
        None => out.stream(a.out.output.as_deref(), program)?,
    }
    out.commit()
}
