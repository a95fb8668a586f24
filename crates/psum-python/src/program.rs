//! `psum.Program`: a parsed and validated program (SPEC §2), and what runs
//! on it: compile (SPEC §6), alloc (SPEC §3), lint (SPEC §9.4), bound and
//! verify (SPEC §5).

use crate::compiled::{Allocation, Compiled};
use crate::convert::{alloc_options, to_py};
use crate::errors::{alloc_error, detached, diagnostic_error, error, kernel_position, noted_error};
use crate::hazard::{hazards, Hazard};
use psum::alloc::{self, AllocError, AllocOptions};
use psum::ir::Loc;
use psum::lint::UnrolledAffine;
use psum::pipeline::{self, CompileError, CompileOptions, Rotation};
use psum::source::{self, Loaded};
use pyo3::prelude::*;
use serde_json::Value;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// A psum program: parsed and validated (SPEC §2), from text, a file or a
/// traced kernel.
#[pyclass(frozen, module = "psum")]
pub(crate) struct Program {
    pub(crate) loaded: Arc<Loaded>,
    /// The `affine_range` loops the tracer unrolled (for the lints).
    pub(crate) unrolled: Arc<Vec<UnrolledAffine>>,
    /// The tracer's warnings, as `psum trace` prints them.
    pub(crate) warnings: Vec<String>,
}

impl Program {
    /// Parses and validates `bytes` read from `file`; the error is
    /// `ParseError` or `ValidationError` at its place in the input.
    pub(crate) fn read(py: Python<'_>, file: &str, bytes: Vec<u8>) -> PyResult<Program> {
        let read = detached(py, || {
            let loaded = source::parse(file, bytes).map_err(|d| ("ParseError", Box::new(d)))?;
            loaded
                .validate()
                .map_err(|d| ("ValidationError", Box::new(d)))?;
            Ok(loaded)
        })?;
        let loaded = read.map_err(|(class, d)| diagnostic_error(py, class, &d))?;
        Ok(Program {
            loaded: Arc::new(loaded),
            unrolled: Arc::default(),
            warnings: Vec::new(),
        })
    }
}

#[pymethods]
impl Program {
    /// The program in psum's canonical text form (what `psum fmt` and
    /// `psum trace` print).
    #[getter]
    fn text(&self, py: Python<'_>) -> PyResult<String> {
        detached(py, || psum::text::print(&self.loaded.module))
    }

    /// The file the program was read from (`<string>` for `psum.parse`,
    /// `<trace of FUNCTION>` for a traced kernel).
    #[getter]
    fn file(&self) -> String {
        self.loaded.file.clone()
    }

    /// The architecture codename of the program's `arch` line.
    #[getter]
    fn arch(&self) -> String {
        self.loaded.module.arch.clone()
    }

    /// The tracer's warnings (`FILE:LINE: warning: …`), empty unless traced.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    /// The program as JSON text (what `psum fmt --emit json` prints).
    fn to_json(&self, py: Python<'_>) -> PyResult<String> {
        detached(py, || psum::text::to_json(&self.loaded.module))
    }

    /// Runs `psum compile` on the program: validate, allocate, rebank,
    /// unroll, legalize and verify (SPEC §6).
    ///
    /// `allocator` is `briggs`, `briggs-reference`, `mincost`, `exact` or
    /// `kept` (the program's own placement, `--keep-banks`); `rotate` is
    /// `None` (the allocator's default), `True` or `False`; `banks` limits
    /// the PSUM banks used; `verify=False` skips the verifier. Raises
    /// `AllocationError` or `VerifyError`.
    #[pyo3(signature = (allocator="briggs", rotate=None, banks=None, verify=true, spill_latency=None))]
    fn compile(
        &self,
        py: Python<'_>,
        allocator: &str,
        rotate: Option<bool>,
        banks: Option<u32>,
        verify: bool,
        spill_latency: Option<u64>,
    ) -> PyResult<Compiled> {
        let opts = CompileOptions {
            alloc: alloc_options(allocator, banks, spill_latency)?,
            rotate: match rotate {
                None => Rotation::Auto,
                Some(true) => Rotation::On,
                Some(false) => Rotation::Off,
            },
            verify,
            verify_each: false,
        };
        let loaded = &self.loaded;
        let compiled = detached(py, || pipeline::compile(&loaded.module, &opts))?;
        let c = compiled.map_err(|e| match &e {
            CompileError::Alloc(a) => alloc_error(py, loaded, a),
            CompileError::Invalid(_) | CompileError::Arch(_) => noted_error(
                py,
                "ValidationError",
                &loaded.located(e.loc(), e.to_string()),
            ),
            CompileError::VerifyAfter { .. } => {
                error(py, "VerifyError", format!("error: {e}"), (None, None, None))
            }
            CompileError::Unroll(_) | CompileError::Matmul { .. } => noted_error(
                py,
                "AllocationError",
                &loaded.located(e.loc(), e.to_string()),
            ),
        })?;
        if let Some(v) = &c.verify {
            if let Some(message) = v.first_error() {
                let at = v.first_loc(&c.module);
                let kernel = match at {
                    Loc::Inst(i) => c.module.inst(i).loc(),
                    Loc::Tensor(t) => c.module.tensor(t).loc.as_deref(),
                    _ => None,
                };
                let at = kernel.map_or((None, None, None), kernel_position);
                let message = format!("error: verification failed: {message}");
                return Err(error(py, "VerifyError", message, at));
            }
        }
        Ok(Compiled {
            input: Arc::clone(&self.loaded),
            unrolled: Arc::clone(&self.unrolled),
            compiled: c,
            report: OnceLock::new(),
        })
    }

    /// Runs `psum alloc` on the program: PSUM allocation and spill code
    /// only (SPEC §3), with the same `allocator`, `banks` and
    /// `spill_latency` as [`compile`](Program::compile). Raises
    /// `AllocationError`.
    #[pyo3(signature = (allocator="briggs", banks=None, spill_latency=None))]
    fn alloc(
        &self,
        py: Python<'_>,
        allocator: &str,
        banks: Option<u32>,
        spill_latency: Option<u64>,
    ) -> PyResult<Allocation> {
        let opts = alloc_options(allocator, banks, spill_latency)?;
        let loaded = &self.loaded;
        let (result, elapsed) = detached(py, || {
            let t0 = Instant::now();
            let result = alloc::allocate(&loaded.module, &opts);
            (result, t0.elapsed())
        })?;
        let outcome = result.map_err(|e| alloc_error(py, loaded, &e))?;
        Ok(Allocation { outcome, elapsed })
    }

    /// The program's PSUM hazards (SPEC §9.4), in program order: what
    /// `psum lint` reports, at the kernel's lines for a traced kernel.
    fn lint(&self, py: Python<'_>) -> PyResult<Vec<Hazard>> {
        detached(py, || hazards(&self.loaded, &self.unrolled))
    }

    /// Lower bounds of the allocation problem (`psum bound --report json`
    /// as a dict): peak demand and, when every PSUM tensor is one bank, the
    /// fewest spills and the least spill cost. Raises `AllocationError`.
    #[pyo3(signature = (banks=None))]
    fn bound<'py>(&self, py: Python<'py>, banks: Option<u32>) -> PyResult<Bound<'py, PyAny>> {
        let opts = AllocOptions {
            psum_banks: banks,
            ..AllocOptions::default()
        };
        let loaded = &self.loaded;
        let report = detached(py, || {
            let p = alloc::problem(&loaded.module, &opts)?;
            Ok(serde_json::to_value(psum::bound::bounds(&p)).unwrap_or(Value::Null))
        })?;
        let report = report.map_err(|e: AllocError| alloc_error(py, loaded, &e))?;
        to_py(py, &report)
    }

    /// Checks that `result` computes what this program computes (`psum
    /// verify ORIGINAL RESULT`, SPEC §5) and returns `True`; raises
    /// `VerifyError` at the first violation in `result`. `exact=True` runs
    /// the f64 simulator instead of the symbolic one.
    #[pyo3(signature = (result, exact=false))]
    fn verify(&self, py: Python<'_>, result: &Program, exact: bool) -> PyResult<bool> {
        let simulator = if exact {
            psum::verify::Simulator::Exact
        } else {
            psum::verify::Simulator::Symbolic
        };
        let (original, result) = (&self.loaded, &result.loaded);
        let failure = detached(py, || {
            let r = psum::verify::verify_with(&original.module, &result.module, simulator);
            r.first_error()
                .map(|e| result.diagnostic(r.first_loc(&result.module), e))
        })?;
        match failure {
            Some(d) => Err(diagnostic_error(py, "VerifyError", &d)),
            None => Ok(true),
        }
    }

    fn __repr__(&self) -> String {
        let m = &self.loaded.module;
        format!(
            "<psum.Program {} (arch {}, {} tensors, {} instructions)>",
            self.loaded.file,
            m.arch,
            m.tensors.len(),
            m.insts.len()
        )
    }

    fn __str__(&self, py: Python<'_>) -> PyResult<String> {
        self.text(py)
    }
}
