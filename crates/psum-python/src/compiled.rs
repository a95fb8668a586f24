//! `psum.Compiled` and `psum.Allocation`: the results of `Program.compile`
//! (SPEC §6) and `Program.alloc` (SPEC §3).

use crate::convert::to_py;
use crate::errors::detached;
use crate::hazard::{hazards, Hazard};
use crate::timeline::{title, Timeline};
use psum::alloc::AllocOutcome;
use psum::lint::UnrolledAffine;
use psum::pipeline;
use psum::source::Loaded;
use psum::viz;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// A compiled program (`Program.compile`).
#[pyclass(frozen, module = "psum")]
pub(crate) struct Compiled {
    pub(crate) input: Arc<Loaded>,
    pub(crate) unrolled: Arc<Vec<UnrolledAffine>>,
    pub(crate) compiled: pipeline::Compiled,
    pub(crate) report: OnceLock<Value>,
}

impl Compiled {
    fn report_json(&self) -> &Value {
        self.report
            .get_or_init(|| psum::report::compile_report(&self.compiled))
    }
}

#[pymethods]
impl Compiled {
    /// The allocated, unrolled and legalized program in psum's text form
    /// (what `psum compile` prints on stdout).
    #[getter]
    fn text(&self, py: Python<'_>) -> PyResult<String> {
        detached(py, || psum::text::print(&self.compiled.module))
    }

    /// The JSON report of SPEC §6 (`psum compile --report json`) as a dict.
    #[getter]
    fn report<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let report = detached(py, || self.report_json().clone())?;
        to_py(py, &report)
    }

    /// The summary `psum compile` prints on stderr.
    #[getter]
    fn summary(&self, py: Python<'_>) -> PyResult<String> {
        detached(py, || psum::report::compile_summary(&self.compiled))
    }

    /// The first bank of every PSUM tensor of the result, by name (`None`
    /// for a tensor nothing uses).
    #[getter]
    fn banks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        banks(py, &self.compiled.alloc)
    }

    /// The spilled tensors, in spill order.
    #[getter]
    fn spills(&self) -> Vec<String> {
        self.compiled.alloc.report.spilled.clone()
    }

    /// The input's PSUM hazards (SPEC §9.4), as [`Program::lint`] gives them.
    #[getter]
    fn hazards(&self, py: Python<'_>) -> PyResult<Vec<Hazard>> {
        detached(py, || hazards(&self.input, &self.unrolled))
    }

    /// Whether the verifier ran and proved the result (`False` after
    /// `verify=False`; a failed proof raises `VerifyError` instead).
    #[getter]
    fn verified(&self) -> bool {
        self.compiled
            .verify
            .as_ref()
            .is_some_and(|v| v.first_error().is_none())
    }

    /// The bank timeline (SPEC §8): renders inline in Jupyter, and
    /// `.save(path)` writes it as `.svg` or `.html`.
    fn timeline(&self, py: Python<'_>) -> PyResult<Timeline> {
        let (input, c) = (&self.input, &self.compiled);
        let t = detached(py, || {
            viz::Timeline::from_compiled(title(&input.file), &input.module, c)
        })?;
        Ok(Timeline {
            timeline: t,
            svg: OnceLock::new(),
            html: OnceLock::new(),
        })
    }

    fn __repr__(&self) -> String {
        let r = &self.compiled.alloc.report;
        format!(
            "<psum.Compiled {} (arch {}, {} PSUM banks, {} spilled, verify {})>",
            self.input.file,
            r.arch,
            r.num_banks,
            r.spilled.len(),
            if self.verified() { "ok" } else { "skipped" }
        )
    }
}

/// `{name: first bank}` of the PSUM tensors of an allocation's report.
fn banks<'py>(py: Python<'py>, outcome: &AllocOutcome) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for t in &outcome.report.tensors {
        dict.set_item(&t.name, t.bank)?;
    }
    Ok(dict)
}

/// An allocated program (`Program.alloc`), before unrolling and legalization.
#[pyclass(frozen, module = "psum")]
pub(crate) struct Allocation {
    pub(crate) outcome: AllocOutcome,
    pub(crate) elapsed: Duration,
}

#[pymethods]
impl Allocation {
    /// The allocated program in psum's text form (what `psum alloc` prints).
    #[getter]
    fn text(&self, py: Python<'_>) -> PyResult<String> {
        detached(py, || psum::text::print(&self.outcome.module))
    }

    /// The allocator's JSON report (`psum alloc --report json`) as a dict.
    #[getter]
    fn report<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let report = detached(py, || {
            psum::report::alloc_report(&self.outcome.report, self.elapsed)
        })?;
        to_py(py, &report)
    }

    /// The first bank of every PSUM tensor, by name.
    #[getter]
    fn banks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        banks(py, &self.outcome)
    }

    /// The spilled tensors, in spill order.
    #[getter]
    fn spills(&self) -> Vec<String> {
        self.outcome.report.spilled.clone()
    }

    /// The allocator's log (`psum alloc -v`, SPEC §3.9), one line an item.
    #[getter]
    fn log(&self) -> Vec<String> {
        self.outcome.log.clone()
    }

    /// The allocator's warnings.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.outcome
            .warnings
            .iter()
            .map(|w| w.to_string())
            .collect()
    }

    fn __repr__(&self) -> String {
        let r = &self.outcome.report;
        format!(
            "<psum.Allocation (arch {}, {} PSUM banks, {} spilled)>",
            r.arch,
            r.num_banks,
            r.spilled.len()
        )
    }
}
