//! `psum compile` (SPEC §6): the main job, the pass list then the verifier.

use crate::cli::args::{AllocFlags, Emit, OutputArgs};
use crate::cli::io::{
    compile_failure, emit, json_text, load, module_text, print_stdout, title, usage_error, Failure,
};
use crate::pipeline::{self, CompileOptions};
use crate::source::Loaded;
use crate::viz::{self, Timeline};
use crate::{arch, matmul, report, verify};
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct CompileArgs {
    /// Input file (`.psum` text or `.json`); `-` reads stdin.
    pub(crate) file: String,
    #[command(flatten)]
    pub(crate) flags: AllocFlags,
    /// Skip the verifier.
    #[arg(long)]
    pub(crate) no_verify: bool,
    /// Verify after every pass and name the first whose output fails.
    #[arg(long)]
    pub(crate) verify_each: bool,
    /// Keep the program's own `bank=` placement (direct allocation) and check
    /// it instead of allocating (SPEC §9.5).
    #[arg(long, conflicts_with_all = ["report", "reference"])]
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
    if a.keep_banks {
        return compile_kept(&a, &loaded);
    }
    let opts = CompileOptions {
        alloc: a.flags.options(),
        verify: !a.no_verify,
        verify_each: a.verify_each,
    };
    let report = a.report()?;
    let c = pipeline::compile(&loaded.module, &opts).map_err(|e| compile_failure(&loaded, &e))?;
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
            eprint!("{}", report::compile_summary(&c));
        }
        None => {
            emit(&a.out, &program)?;
            eprint!("{}", report::compile_summary(&c));
        }
    }
    match c.verify.as_ref().and_then(|v| v.first_error()) {
        Some(e) => Err(Failure::Input(format!("error: verification failed: {e}"))),
        None => Ok(()),
    }
}

/// `compile --keep-banks`: check the program's placement, then unroll,
/// legalize and verify with it.
fn compile_kept(a: &CompileArgs, loaded: &Loaded) -> Result<(), Failure> {
    let problems = crate::placement::check(&loaded.module, &a.flags.options());
    if !problems.is_empty() {
        let lines: Vec<String> = problems.iter().map(|p| format!("error: {p}")).collect();
        return Err(Failure::Input(lines.join("\n")));
    }
    let arch = arch::lookup(&loaded.module.arch)?;
    let mut m = crate::unroll::unroll(&loaded.module)?;
    matmul::legalize_program(&mut m, &arch)?;
    emit(&a.out, &module_text(&m, a.emit))?;
    eprintln!("psum compile --keep-banks: placement ok");
    if a.no_verify {
        return Ok(());
    }
    match verify::verify(&loaded.module, &m).first_error() {
        Some(e) => Err(Failure::Input(format!("error: verification failed: {e}"))),
        None => {
            eprintln!("  verify    ok");
            Ok(())
        }
    }
}
