//! `psum gen KIND …` (SPEC §7): the workload generators.

use crate::cli::args::OutputArgs;
use crate::cli::io::{print_stdout, Failure};
use crate::cli::output::emit;
use crate::text;
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct GenArgs {
    /// The workload.
    pub(crate) kind: String,
    /// List this workload's parameters and defaults, then exit.
    #[arg(long)]
    pub(crate) help_params: bool,
    /// Workload parameters: `--key value`, `--key=value`, flags, or (gemm) `M N K`.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub(crate) params: Vec<String>,
    #[command(flatten)]
    pub(crate) out: OutputArgs,
}

pub(crate) fn run(a: GenArgs) -> Result<(), Failure> {
    use crate::gen::workloads::{generate, Workload, WorkloadKind};
    let kind = WorkloadKind::from_name(&a.kind)?;
    if a.help_params {
        return print_stdout(&Workload::help(kind));
    }
    // The trailing parameters swallow everything after KIND, `-o` included.
    let mut out = a.out;
    let mut params = Vec::with_capacity(a.params.len());
    let mut it = a.params.into_iter();
    while let Some(p) = it.next() {
        match p.as_str() {
            "-o" | "--output" => {
                let path = it
                    .next()
                    .ok_or_else(|| Failure::Input(format!("error: {p} needs a file")))?;
                out.output = Some(PathBuf::from(path));
            }
            _ => match p.strip_prefix("--output=") {
                Some(path) => out.output = Some(PathBuf::from(path)),
                None => params.push(p),
            },
        }
    }
    let w = Workload::from_args(kind, &params)?;
    let m = generate(&w)?;
    emit(out.output.as_deref(), |w| text::write(&m, w))
}
