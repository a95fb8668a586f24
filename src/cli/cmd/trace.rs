//! `psum trace` (SPEC §9): an NKI kernel run under the tracer.

use crate::arch;
use crate::cli::args::{Emit, OutputArgs};
use crate::cli::io::{emit, module_text, usage_error, Failure};
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct TraceArgs {
    /// The kernel's Python file.
    pub(crate) kernel: PathBuf,
    /// The kernel function.
    pub(crate) function: String,
    /// A tensor argument: NAME=DTYPE[D0,D1,...] (NKI dtype names, e.g. bfloat16).
    #[arg(long = "arg", value_name = "NAME=DTYPE[D0,...]")]
    pub(crate) args: Vec<String>,
    /// Another argument: NAME=VALUE, VALUE a Python literal.
    #[arg(long = "kwarg", value_name = "NAME=VALUE")]
    pub(crate) kwargs: Vec<String>,
    /// The architecture (default: the kernel's platform_target, else trn1).
    #[arg(long, value_name = "NAME")]
    pub(crate) arch: Option<String>,
    /// Write to OUT.psum or OUT.json (by extension; atomically) instead of stdout.
    #[command(flatten)]
    pub(crate) out: OutputArgs,
}

pub(crate) fn run(a: TraceArgs) -> Result<(), Failure> {
    use crate::trace::{self, TensorArg, TraceError, TraceRequest};
    let args = a
        .args
        .iter()
        .map(|s| TensorArg::parse(s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| usage_error(&e))?;
    let kwargs = a
        .kwargs
        .iter()
        .map(|s| match s.split_once('=') {
            Some((n, v)) if !n.is_empty() => Ok((n.to_string(), v.to_string())),
            _ => Err(usage_error(&format!("--kwarg '{s}': expected NAME=VALUE"))),
        })
        .collect::<Result<_, _>>()?;
    if let Some(name) = &a.arch {
        arch::lookup(name)?;
    }
    let req = TraceRequest {
        python: std::env::var("PSUM_PYTHON").unwrap_or_else(|_| "python3".to_string()),
        kernel: a.kernel.clone(),
        function: a.function.clone(),
        args,
        kwargs,
        arch: a.arch.clone(),
    };
    let traced = trace::trace(&req).map_err(|e| match e {
        TraceError::Kernel {
            loc: Some(loc),
            message,
        } => Failure::Input(format!("{loc}: error: {message}")),
        e => Failure::Input(format!("{}: error: {e}", a.kernel.display())),
    })?;
    for w in &traced.warnings {
        match &w.loc {
            Some(loc) => eprintln!("{loc}: warning: {}", w.message),
            None => eprintln!("warning: {}", w.message),
        }
    }
    for l in crate::lint::lint(&traced.module) {
        eprintln!("{l}");
    }
    let json = a
        .out
        .output
        .as_ref()
        .is_some_and(|p| p.extension().is_some_and(|e| e == "json"));
    let format = if json { Emit::Json } else { Emit::Text };
    emit(&a.out, &module_text(&traced.module, format))
}
