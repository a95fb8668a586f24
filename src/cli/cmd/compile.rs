//! `psum compile` (SPEC §6): the main job, the pass list then the verifier.

use crate::alloc::{AllocError, Allocator};
use crate::cli::args::{AllocFlags, Emit, OutputArgs, RotateFlags};
use crate::cli::io::{
    compile_failure, emit, json_text, load, module_text, print_stdout, title, usage_error, Failure,
};
use crate::pipeline::{self, CompileError, CompileOptions, Compiled};
use crate::report;
use crate::viz::{self, Timeline};
use clap::Args;
use std::path::PathBuf;

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
    /// `json`: write the JSON report to stdout (the program then goes to -o
    /// only); `html OUT.html`: write the bank timeline page to OUT.html.
    #[arg(long, num_args = 1..=2, value_names = ["KIND", "FILE"])]
    pub(crate) report: Option<Vec<String>>,
    /// Output format of the program.
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) emit: Emit,
    #[command(flatten)]
    pub(crate) out: OutputArgs,
}

/// What `compile --report` asks for.
pub(crate) enum CompileReport {
    /// `--report json`: the JSON report on stdout.
    Json,
    /// `--report html FILE`: the bank timeline page, written to FILE.
    Html(PathBuf),
}

impl CompileArgs {
    /// The parsed `--report` values; a usage error (exit 2) when malformed.
    pub(crate) fn report(&self) -> Result<Option<CompileReport>, Failure> {
        let Some(values) = self.report.as_ref() else {
            return Ok(None);
        };
        match values.as_slice() {
            [k] if k == "json" => Ok(Some(CompileReport::Json)),
            [k, file] if k == "html" => Ok(Some(CompileReport::Html(PathBuf::from(file)))),
            _ => Err(usage_error(&format!(
                "--report takes `json` or `html FILE`, not `{}`",
                values.join(" ")
            ))),
        }
    }
}

pub(crate) fn run(a: CompileArgs) -> Result<(), Failure> {
    let loaded = load(&a.file)?;
    if crate::lint::is_traced(&loaded.module) {
        for l in crate::lint::lint(&loaded.module) {
            eprintln!("{l}");
        }
    }
    let mut alloc = a.flags.options().map_err(Failure::Usage)?;
    if a.keep_banks {
        alloc.allocator = Allocator::Kept;
    }
    let report = a.report()?;
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
    let program = module_text(&c.module, a.emit);
    match report {
        Some(CompileReport::Json) => {
            if a.out.output.is_some() {
                emit(&a.out, &program)?;
            }
            print_stdout(&json_text(&report::compile_report(&c)))?;
        }
        Some(CompileReport::Html(path)) => {
            let t = Timeline::from_compiled(title(&a.file), &loaded.module, &c);
            emit(&OutputArgs { output: Some(path) }, &viz::html(&t))?;
            emit(&a.out, &program)?;
            eprint!("{}", summary(&c, a.keep_banks));
        }
        None => {
            emit(&a.out, &program)?;
            eprint!("{}", summary(&c, a.keep_banks));
        }
    }
    match c.verify.as_ref().and_then(|v| v.first_error()) {
        Some(e) => Err(Failure::Input(format!("error: verification failed: {e}"))),
        None => Ok(()),
    }
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
