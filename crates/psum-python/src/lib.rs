//! `psum._psum`: the native half of the `psum` Python package (built by
//! `pip install .` through maturin). It wraps the library: programs
//! ([`Program`]) parsed, loaded or traced (SPEC §2, §9), compiled
//! ([`Compiled`], SPEC §6), allocated ([`Allocation`], SPEC §3), linted
//! ([`Hazard`], SPEC §9.4), bounded and verified (SPEC §5), and their bank
//! timelines ([`Timeline`], SPEC §8); and [`main`], the `psum` command line
//! itself for the console script. The pure-Python half (`python/psum/`)
//! holds the exception classes these raise, `psum.trace` (which calls
//! [`_trace`]) and the stand-in NKI modules of `psum.nki()`.
//!
//! Every call into the library runs with the GIL released and under
//! `catch_unwind`: a panic becomes `psum.InternalError` with its message,
//! never a Python-side crash.

mod compiled;
mod convert;
mod errors;
mod hazard;
mod program;
mod timeline;

use compiled::{Allocation, Compiled};
use errors::{detached, diagnostic_error, error, kernel_position};
use hazard::Hazard;
use program::Program;
use psum::source;
use psum::trace::{self, Limits, TensorArg, TraceRequest};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::ffi::OsString;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use timeline::Timeline;

/// The allocator of the `psum` binary: the passes allocate and free
/// millions of small objects, which mimalloc serves several times faster
/// than the system allocator (the same choice as `src/main.rs`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Parses and validates a program from its text form (JSON when `file`
/// ends in `.json`); `file` names it in diagnostics. Raises `ParseError` or `ValidationError`.
#[pyfunction]
#[pyo3(signature = (text, file="<string>"))]
fn parse(py: Python<'_>, text: &str, file: &str) -> PyResult<Program> {
    Program::read(py, file, text.as_bytes().to_vec())
}

/// Reads, parses and validates the program in the file `path` (`.json` for
/// JSON). Raises `ParseError`, `ValidationError`, or `Error` when the file
/// cannot be read.
#[pyfunction]
fn load(py: Python<'_>, path: PathBuf) -> PyResult<Program> {
    let file = path.to_string_lossy().into_owned();
    let bytes = detached(py, || std::fs::read(&path))?.map_err(|e| {
        error(
            py,
            "Error",
            format!("{file}: error: {e}"),
            (Some(file.clone()), None, None),
        )
    })?;
    Program::read(py, &file, bytes)
}

/// Traces a kernel under the tracer (SPEC §9) with the interpreter
/// `python`; `kernel` is the kernel file as the program's `loc=`
/// attributes name it. `psum.trace` is the documented entry point.
#[pyfunction]
#[pyo3(signature = (python, kernel, function, args, kwargs, arch, grid, program_id, timeout, memory_mib))]
#[allow(clippy::too_many_arguments)]
fn _trace(
    py: Python<'_>,
    python: String,
    kernel: PathBuf,
    function: String,
    args: Vec<(String, String, Vec<u64>)>,
    kwargs: Vec<(String, String)>,
    arch: Option<String>,
    grid: Vec<u64>,
    program_id: Vec<u64>,
    timeout: f64,
    memory_mib: u64,
) -> PyResult<Program> {
    let shown = kernel.display().to_string();
    let no_position = (None, None, None);
    if let Some(name) = &arch {
        trace::codename(name)
            .map_err(|e| error(py, "TraceError", format!("error: {e}"), no_position.clone()))?;
    }
    if !timeout.is_finite() || timeout <= 0.0 {
        return Err(PyValueError::new_err(
            "timeout takes a positive number of seconds",
        ));
    }
    let req = TraceRequest {
        python,
        kernel,
        args: (args.into_iter())
            .map(|(name, dtype, shape)| TensorArg { name, dtype, shape })
            .collect(),
        kwargs,
        function: function.clone(),
        arch,
        grid,
        program_id,
        limits: Limits {
            timeout: Duration::from_secs_f64(timeout),
            memory_mib,
        },
    };
    let traced = detached(py, || {
        let traced = trace::trace(&req)?;
        let text = psum::text::print(&traced.module);
        let loaded = source::parse(&format!("<trace of {function}>"), text.into_bytes());
        Ok((traced, loaded))
    })?;
    let (traced, loaded) = traced.map_err(|e: trace::TraceError| {
        let at = match &e {
            trace::TraceError::Kernel { loc: Some(loc), .. } => kernel_position(loc),
            _ => no_position.clone(),
        };
        error(py, "TraceError", e.render(&shown, false), at)
    })?;
    let loaded = loaded.map_err(|d| diagnostic_error(py, "InternalError", &d))?;
    let warnings = (traced.warnings.iter())
        .map(|w| match &w.loc {
            Some(loc) => format!("{loc}: warning: {}", w.message),
            None => format!("warning: {}", w.message),
        })
        .collect();
    Ok(Program {
        loaded: Arc::new(loaded),
        unrolled: Arc::new(traced.unrolled_affine),
        warnings,
    })
}

/// The embedded tracer package: (module file name, source) pairs, which
/// `psum.nki()` imports as `psum._nki`.
#[pyfunction]
fn _tracer_sources() -> Vec<(&'static str, &'static str)> {
    trace::tracer_sources().to_vec()
}

/// Runs a Rust panic with `message` through the guard every entry point
/// uses, so that the tests can see it arrive as `psum.InternalError`.
#[pyfunction]
fn _panic(py: Python<'_>, message: String) -> PyResult<()> {
    detached(py, || std::panic::panic_any(message))
}

/// Runs the `psum` command line on `argv` (program name first) with the
/// GIL released, printing to the process's stdout and stderr, and returns
/// its exit code.
#[pyfunction]
fn main(py: Python<'_>, argv: Vec<OsString>) -> PyResult<u8> {
    detached(py, || {
        let code = psum::cli::status(argv);
        // The host process exits through Python, which does not flush
        // Rust's stdout; a closed stdout leaves nothing to report it on.
        let _ = std::io::stdout().flush();
        code
    })
}

/// The native module `psum._psum`.
#[pymodule]
fn _psum(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Program>()?;
    m.add_class::<Compiled>()?;
    m.add_class::<Allocation>()?;
    m.add_class::<Hazard>()?;
    m.add_class::<Timeline>()?;
    m.add_function(wrap_pyfunction!(parse, m)?)?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(_trace, m)?)?;
    m.add_function(wrap_pyfunction!(_tracer_sources, m)?)?;
    m.add_function(wrap_pyfunction!(_panic, m)?)?;
    m.add_function(wrap_pyfunction!(main, m)?)?;
    Ok(())
}
