//! `psum compile` (SPEC §6): the main job, the pass list then the verifier.

use crate::alloc::{AllocError, Allocator};
use crate::cli::args::{AllocFlags, Emit, OutputArgs, Report, ReportKind, RotateFlags};
use crate::cli::io::{compile_failure, json_text, load, title, usage_error, Failure};
use crate::cli::output::Outputs;
use crate::pipeline::{self, CompileError, CompileOptions, Compiled};
use crate::report;
use crate::viz::{self, Timeline};
use clap::Args;

#[derive(Args)]
pub(crate) struct CompileArgs {
    /// Input file (`.psum` text or `.json`); `-` reads stdin.
    pub(crate) file: String,
    #[command(flatten)]
    pub(crate) flags: AllocFlags,
    #[command(flatten)]
    pub(crate) rotation: RotateFlags,
    /// Skip the verifier.
    #[arg(long)]
    pub(crate) no_verify: bool,
    /// Verify after every pass and name the first whose output fails.
    #[arg(long)]
    pub(crate) verify_each: bool,
    /// Keep the program's own `bank=` placement (direct allocation) and check
    /// it instead of allocating (SPEC §9.5).
    #[arg(long, conflicts_with_all = ["allocator", "reference", "rotate"])]
    pub(crate) keep_banks: bool,
    /// `json`: the JSON report on stdout (the program then goes to -o
    /// only); `json=FILE`: the JSON report to FILE; `html=FILE`: the bank
    /// timeline page to FILE.
    #[arg(long, value_name = "KIND[=FILE]", value_parser = Report::parse)]
    pub(crate) report: Option<Report>,
    /// Arguments beyond FILE: refused, naming the `--report html=FILE` spelling.
    #[arg(hide = true)]
    pub(crate) stray: Vec<String>,
    /// Output format of the program.
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) emit: Emit,
    #[command(flatten)]
    pub(crate) out: OutputArgs,
}

impl CompileArgs {
    /// The `--report` asked for; a usage error (exit 2) for `html` without
    /// its file or for arguments beyond FILE.
    fn report(&self) -> Result<Option<&Report>, Failure> {
        let report = self.report.as_ref();
        if report.is_some_and(|r| r.kind == ReportKind::Html && r.file.is_none()) {
            return Err(usage_error(
                "--report html needs its file: write --report html=FILE",
            ));
        }
        match self.stray.first() {
            Some(extra) => Err(usage_error(&format!("unexpected argument '{extra}'"))),
            None => Ok(report),
        }
    }
}

pub(crate) fn run(a: CompileArgs) -> Result<(), Failure> {
    let report = a.report()?;
    let loaded = load(&a.file)?;
    if crate::lint::is_traced(&loaded.module) {
        for l in crate::lint::lint(&loaded.module) {
            eprintln!("{l}");
        }
    }
    let mut alloc = a.flags.options()?;
    if a.keep_banks {
        alloc.allocator = Allocator::Kept;
    }
    let opts = CompileOptions {
        alloc,
        rotate: a.rotation.rotation(),
        verify: !a.no_verify,
        verify_each: a.verify_each,
    };
    let c = pipeline::compile(&loaded.module, &opts).map_err(|e| match e {
        // Each problem of a kept placement on a line of its own.
        CompileError::Alloc(AllocError::Kept(kept)) => Failure::Input(kept.rendered()),
        e => compile_failure(&loaded, &e),
    })?;
    a.flags.print_log(&c.alloc);
    // The JSON report on stdout holds the summary's numbers.
    if report.is_none_or(|r| r.file.is_some()) {
        eprint!("{}", summary(&c, a.keep_banks));
    }
    if let Some(e) = c.verify.as_ref().and_then(|v| v.first_error()) {
        return Err(Failure::Input(format!("error: verification failed: {e}")));
    }
    let program = |w: &mut dyn std::io::Write| a.emit.write(&c.module, w);
    let program_to = a.out.output.as_deref();
    let mut out = Outputs::new();
    match report {
        Some(r) => {
            let text = match r.kind {
                ReportKind::Json => json_text(&report::compile_report(&c)),
                ReportKind::Html => {
                    viz::html(&Timeline::from_compiled(title(&a.file), &loaded.module, &c))
                }
            };
            out.add_report(r.file.as_deref(), program_to, text, program)?;
        }
        None => out.stream(program_to, program)?,
    }
    out.commit()
}

/// What `compile` prints on stderr: the summary, or with `--keep-banks`
/// that the placement holds and, when the verifier ran and agrees, that.
fn summary(c: &Compiled, kept: bool) -> String {
    if !kept {
        return report::compile_summary(c);
    }
    let mut s = "psum compile --keep-banks: placement ok\n".to_string();
    if c.verify.as_ref().is_some_and(|v| v.first_error().is_none()) {
        s.push_str("  verify    ok\n");
    }
    s
}
