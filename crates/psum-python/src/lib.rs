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

use psum::alloc::{self, AllocError, AllocOptions, AllocOutcome, Allocator};
use psum::ir::Loc;
use psum::lint::{Hazard as LintHazard, UnrolledAffine};
use psum::pipeline::{self, CompileError, CompileOptions, Rotation};
use psum::source::{self, Diagnostic, Loaded, Noted};
use psum::trace::{self, Limits, TensorArg, TraceRequest};
use psum::viz;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use serde_json::Value;
use std::ffi::OsString;
use std::io::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// The allocator of the `psum` binary: the passes allocate and free
/// millions of small objects, which mimalloc serves several times faster
/// than the system allocator (the same choice as `src/main.rs`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Where an error points: file, 1-based line and column, each when known.
type Position = (Option<String>, Option<usize>, Option<usize>);

/// A `psum` exception of class `class` (defined in `psum._errors`) with the
/// command line's message text and where it points.
fn error(py: Python<'_>, class: &str, message: String, at: Position) -> PyErr {
    let made = (|| -> PyResult<PyErr> {
        let cls = py.import("psum._errors")?.getattr(class)?;
        Ok(PyErr::from_value(cls.call1((message, at.0, at.1, at.2))?))
    })();
    made.unwrap_or_else(|e| e)
}

/// A diagnostic as an exception of class `class`.
fn diagnostic_error(py: Python<'_>, class: &str, d: &Diagnostic) -> PyErr {
    let (line, column) = d.position.unzip();
    error(
        py,
        class,
        d.to_string(),
        (Some(d.file.clone()), line, column),
    )
}

/// A diagnostic with its note as an exception of class `class`.
fn noted_error(py: Python<'_>, class: &str, n: &Noted) -> PyErr {
    let (line, column) = n.diagnostic.position.unzip();
    let at = (Some(n.diagnostic.file.clone()), line, column);
    error(py, class, n.to_string(), at)
}

/// Runs `f` with the GIL released; a panic becomes `psum.InternalError`.
fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    py.detach(|| catch_unwind(AssertUnwindSafe(f)))
        .map_err(|payload| {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".to_string());
            error(
                py,
                "InternalError",
                format!("internal error: {message}"),
                (None, None, None),
            )
        })
}

/// A JSON value as the Python value `json.loads` would give.
fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_pyobject(py)?.into_any(),
            (None, Some(u)) => u.into_pyobject(py)?.into_any(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for x in items {
                list.append(to_py(py, x)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, x) in map {
                dict.set_item(k, to_py(py, x)?)?;
            }
            dict.into_any()
        }
    })
}

/// The allocator an `allocator=` argument names.
fn allocator(name: &str) -> PyResult<Allocator> {
    Ok(match name {
        "briggs" => Allocator::Briggs,
        "briggs-reference" => Allocator::BriggsReference,
        "mincost" => Allocator::Mincost,
        "exact" => Allocator::Exact,
        "kept" => Allocator::Kept,
        other => {
            return Err(PyValueError::new_err(format!(
                "allocator='{other}': expected one of 'briggs', 'briggs-reference', 'mincost', \
                 'exact', 'kept'"
            )))
        }
    })
}

/// Allocator settings from the keyword arguments of `compile` and `alloc`.
fn alloc_options(
    name: &str,
    banks: Option<u32>,
    spill_latency: Option<u64>,
) -> PyResult<AllocOptions> {
    let defaults = AllocOptions::default();
    Ok(AllocOptions {
        allocator: allocator(name)?,
        psum_banks: banks,
        spill_latency: spill_latency.unwrap_or(defaults.spill_latency),
        ..defaults
    })
}

/// An allocation error as `psum.AllocationError`, at the tensor it names.
fn alloc_error(py: Python<'_>, loaded: &Loaded, e: &AllocError) -> PyErr {
    match e {
        AllocError::Kept(kept) => error(py, "AllocationError", kept.rendered(), (None, None, None)),
        e => noted_error(
            py,
            "AllocationError",
            &loaded.located(e.loc(), e.to_string()),
        ),
    }
}

/// A kernel line `FILE:LINE[:COL]` as a position.
fn kernel_position(loc: &str) -> Position {
    match trace::split_loc(loc) {
        Some((file, line, col)) => (
            Some(file.to_string()),
            Some(line as usize),
            col.map(|c| c as usize),
        ),
        None => (Some(loc.to_string()), None, None),
    }
}

/// The heading of a program's timeline: its file name.
fn title(file: &str) -> String {
    Path::new(file)
        .file_name()
        .map_or_else(|| file.to_string(), |n| n.to_string_lossy().into_owned())
}

/// A psum program: parsed and validated (SPEC §2), from text, a file or a
/// traced kernel.
#[pyclass(frozen, module = "psum")]
struct Program {
    loaded: Arc<Loaded>,
    /// The `affine_range` loops the tracer unrolled (for the lints).
    unrolled: Arc<Vec<UnrolledAffine>>,
    /// The tracer's warnings, as `psum trace` prints them.
    warnings: Vec<String>,
}

impl Program {
    /// Parses and validates `bytes` read from `file`; the error is
    /// `ParseError` or `ValidationError` at its place in the input.
    fn read(py: Python<'_>, file: &str, bytes: Vec<u8>) -> PyResult<Program> {
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

/// The hazards of a program (SPEC §9.4) as [`Hazard`]s.
fn hazards(loaded: &Loaded, unrolled: &[UnrolledAffine]) -> Vec<Hazard> {
    let m = &loaded.module;
    psum::lint::lint_with(m, unrolled)
        .into_iter()
        .map(|l| {
            let (file, line) = match &l.loc {
                Some(loc) => {
                    let (file, line, _) = kernel_position(loc);
                    (file, line)
                }
                None => {
                    let inst = loaded.source_map().and_then(|s| s.inst(l.hazard.inst()));
                    let line = inst.map(|span| psum::text::line_col(&loaded.text, span.start).0);
                    (line.map(|_| loaded.file.clone()), line)
                }
            };
            Hazard {
                kind: hazard_kind(&l.hazard),
                file,
                line,
                text: l.to_string(),
                message: l.message,
            }
        })
        .collect()
}

/// The name of a hazard's rule.
fn hazard_kind(h: &LintHazard) -> &'static str {
    match h {
        LintHazard::AccumulateOntoInit { .. } => "accumulate_onto_init",
        LintHazard::AccumulateOntoUninit { .. } => "accumulate_onto_uninit",
        LintHazard::DstDtype { .. } => "dst_dtype",
        LintHazard::MatmulWiderThanBank { .. } => "matmul_wider_than_bank",
        LintHazard::AffineSameLocation { .. } => "affine_same_location",
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

/// A compiled program (`Program.compile`).
#[pyclass(frozen, module = "psum")]
struct Compiled {
    input: Arc<Loaded>,
    unrolled: Arc<Vec<UnrolledAffine>>,
    compiled: pipeline::Compiled,
    report: OnceLock<Value>,
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
struct Allocation {
    outcome: AllocOutcome,
    elapsed: Duration,
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

/// A PSUM hazard (SPEC §9.4): a hardware rule the program breaks.
#[pyclass(frozen, module = "psum")]
struct Hazard {
    kind: &'static str,
    file: Option<String>,
    line: Option<usize>,
    message: String,
    text: String,
}

#[pymethods]
impl Hazard {
    /// The rule (`accumulate_onto_init`, `accumulate_onto_uninit`,
    /// `dst_dtype`, `matmul_wider_than_bank`, `affine_same_location`).
    #[getter]
    fn kind(&self) -> &'static str {
        self.kind
    }

    /// The kernel file of a traced program, else the program's file.
    #[getter]
    fn file(&self) -> Option<String> {
        self.file.clone()
    }

    /// The kernel line of a traced program, else the program's line.
    #[getter]
    fn line(&self) -> Option<usize> {
        self.line
    }

    /// The one-line message.
    #[getter]
    fn message(&self) -> String {
        self.message.clone()
    }

    /// The line `psum lint` prints (`FILE:LINE: warning: …`).
    fn __str__(&self) -> String {
        self.text.clone()
    }

    fn __repr__(&self) -> String {
        format!("<psum.Hazard {}: {}>", self.kind, self.text)
    }
}

/// A bank timeline (SPEC §8): `_repr_svg_` and `_repr_html_` draw it
/// inline in Jupyter, `save` writes it to a file.
#[pyclass(frozen, module = "psum")]
struct Timeline {
    timeline: viz::Timeline,
    svg: OnceLock<String>,
    html: OnceLock<String>,
}

impl Timeline {
    fn svg_text(&self) -> &str {
        self.svg.get_or_init(|| viz::svg(&self.timeline))
    }

    fn html_text(&self) -> &str {
        self.html.get_or_init(|| viz::html(&self.timeline))
    }
}

#[pymethods]
impl Timeline {
    /// The picture as SVG (what `psum viz -o OUT.svg` writes).
    #[getter]
    fn svg(&self, py: Python<'_>) -> PyResult<String> {
        detached(py, || self.svg_text().to_string())
    }

    /// The page as HTML, with the legend, summary and tensor table (what
    /// `psum viz -o OUT.html` writes).
    #[getter]
    fn html(&self, py: Python<'_>) -> PyResult<String> {
        detached(py, || self.html_text().to_string())
    }

    /// The SVG picture, for Jupyter's inline display.
    fn _repr_svg_(&self, py: Python<'_>) -> PyResult<String> {
        self.svg(py)
    }

    /// The HTML page, for Jupyter's inline display.
    fn _repr_html_(&self, py: Python<'_>) -> PyResult<String> {
        self.html(py)
    }

    /// Writes the timeline to `path`: SVG for `.svg`, the HTML page for
    /// `.html` or `.htm`.
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let html = match path.extension().and_then(|e| e.to_str()) {
            Some("svg") => false,
            Some("html" | "htm") => true,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "{}: a timeline is saved as .svg or .html",
                    path.display()
                )))
            }
        };
        let written = detached(py, || {
            let text = if html {
                self.html_text()
            } else {
                self.svg_text()
            };
            std::fs::write(&path, text)
        })?;
        written.map_err(|e| {
            let message = format!("{}: error: {e}", path.display());
            error(
                py,
                "Error",
                message,
                (Some(path.display().to_string()), None, None),
            )
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "<psum.Timeline {} ({} banks, {} points)>",
            self.timeline.title, self.timeline.num_banks, self.timeline.num_points
        )
    }
}

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
