//! `psum trace` (SPEC §9): an NKI kernel run under the tracer.

use crate::cli::args::{Emit, OutputArgs};
use crate::cli::io::{print_stdout, usage_error, Failure};
use crate::cli::output::emit;
use crate::trace::{self, Limits, TensorArg, TraceError, TraceRequest};
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args)]
pub(crate) struct TraceArgs {
    /// The kernel's Python file.
    #[arg(required_unless_present = "api")]
    pub(crate) kernel: Option<PathBuf>,
    /// The kernel function.
    #[arg(required_unless_present = "api")]
    pub(crate) function: Option<String>,
    /// A tensor argument: NAME=DTYPE[D0,D1,...] (NKI dtype names, e.g. bfloat16).
    #[arg(long = "arg", value_name = "NAME=DTYPE[D0,...]")]
    pub(crate) args: Vec<String>,
    /// Another argument: NAME=VALUE, VALUE a Python literal.
    #[arg(long = "kwarg", value_name = "NAME=VALUE")]
    pub(crate) kwargs: Vec<String>,
    /// The architecture (default: the kernel's platform_target, else trn1).
    #[arg(long, value_name = "NAME")]
    pub(crate) arch: Option<String>,
    /// The SPMD launch grid: the kernel runs as kernel[D0, D1, ...].
    #[arg(long, value_name = "D0[,D1...]")]
    pub(crate) grid: Option<String>,
    /// The program of the grid traced (default 0,0,...): PSUM is per NeuronCore.
    #[arg(long, value_name = "I0[,I1...]", requires = "grid")]
    pub(crate) program_id: Option<String>,
    /// Stop a kernel that runs longer than SECONDS.
    #[arg(long, value_name = "SECONDS", default_value_t = trace::DEFAULT_TIMEOUT_SECS as f64)]
    pub(crate) timeout: f64,
    /// The tracer's address-space limit, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = trace::DEFAULT_MEMORY_MIB)]
    pub(crate) memory_limit: u64,
    /// Print the tracer's API coverage, one line a public name, and exit.
    #[arg(long, conflicts_with_all = ["kernel", "function"])]
    pub(crate) api: bool,
    /// Show the Python traceback of an internal error of the tracer.
    #[arg(short, long)]
    pub(crate) verbose: bool,
    /// Write to OUT.psum or OUT.json (by extension) instead of stdout.
    #[command(flatten)]
    pub(crate) out: OutputArgs,
}

/// `D0,D1,...`: positive (or, for `zero_ok`, non-negative) integers.
fn dims(flag: &str, s: &str, zero_ok: bool) -> Result<Vec<u64>, Failure> {
    s.split(',')
        .map(|d| d.trim().parse::<u64>().ok().filter(|&n| zero_ok || n > 0))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| {
            usage_error(&format!(
                "--{flag} '{s}': expected comma-separated {} integers",
                if zero_ok { "non-negative" } else { "positive" }
            ))
        })
}

pub(crate) fn run(a: TraceArgs) -> Result<(), Failure> {
    let python = std::env::var("PSUM_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let failed =
        |shown: &str, e: TraceError, verbose: bool| Failure::Input(e.render(shown, verbose));
    if a.api {
        let lines = trace::api_listing(&python).map_err(|e| failed("psum trace", e, a.verbose))?;
        let mut out = String::new();
        for l in lines {
            out.push_str(&l);
            out.push('\n');
        }
        return print_stdout(&out);
    }
    let (Some(kernel), Some(function)) = (a.kernel.clone(), a.function.clone()) else {
        return Err(usage_error("psum trace needs KERNEL and FUNCTION"));
    };
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
        trace::codename(name)?;
    }
    let grid = a
        .grid
        .as_deref()
        .map(|g| dims("grid", g, false))
        .transpose()?
        .unwrap_or_default();
    let program_id = a
        .program_id
        .as_deref()
        .map(|p| dims("program-id", p, true))
        .transpose()?
        .unwrap_or_default();
    if !a.timeout.is_finite() || a.timeout <= 0.0 {
        return Err(usage_error("--timeout takes a positive number of seconds"));
    }
    let req = TraceRequest {
        python,
        kernel: kernel.clone(),
        function,
        args,
        kwargs,
        arch: a.arch.clone(),
        grid,
        program_id,
        limits: Limits {
            timeout: Duration::from_secs_f64(a.timeout),
            memory_mib: a.memory_limit,
        },
    };
    let shown = kernel.display().to_string();
    let traced = trace::trace(&req).map_err(|e| failed(&shown, e, a.verbose))?;
    for w in &traced.warnings {
        match &w.loc {
            Some(loc) => eprintln!("{loc}: warning: {}", w.message),
            None => eprintln!("warning: {}", w.message),
        }
    }
    for l in crate::lint::lint_with(&traced.module, &traced.unrolled_affine) {
        eprintln!("{l}");
    }
    let json = a
        .out
        .output
        .as_ref()
        .is_some_and(|p| p.extension().is_some_and(|e| e == "json"));
    let format = if json { Emit::Json } else { Emit::Text };
    emit(a.out.output.as_deref(), |w| format.write(&traced.module, w))
}
