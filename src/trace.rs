//! Tracing NKI kernels into psum programs (SPEC §9): [`trace`] runs a
//! kernel (a Python function) under the tracer in `python/psum_nki/`, which
//! is embedded in the library and written to a temporary directory for each
//! run, under a time and a memory limit, and reads back the psum program it
//! writes to a reply file there (the kernel's own output goes to stderr).
//! Python is the only other thing needed: no real NKI and no file of the
//! installation.

use crate::arch::{self, CODENAMES};
use crate::ir::{Loc, Module};
use crate::lint::UnrolledAffine;
use crate::text;
use crate::validate::validate;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The tracer's sources, as embedded: (file name in the package, text).
const TRACER: [(&str, &str); 17] = [
    (
        "__init__.py",
        include_str!("../python/psum_nki/__init__.py"),
    ),
    (
        "__main__.py",
        include_str!("../python/psum_nki/__main__.py"),
    ),
    ("access.py", include_str!("../python/psum_nki/access.py")),
    ("api.py", include_str!("../python/psum_nki/api.py")),
    ("core.py", include_str!("../python/psum_nki/core.py")),
    ("driver.py", include_str!("../python/psum_nki/driver.py")),
    ("dtypes.py", include_str!("../python/psum_nki/dtypes.py")),
    ("errors.py", include_str!("../python/psum_nki/errors.py")),
    ("index.py", include_str!("../python/psum_nki/index.py")),
    ("isa.py", include_str!("../python/psum_nki/isa.py")),
    (
        "language.py",
        include_str!("../python/psum_nki/language.py"),
    ),
    ("loader.py", include_str!("../python/psum_nki/loader.py")),
    ("lower.py", include_str!("../python/psum_nki/lower.py")),
    ("ops.py", include_str!("../python/psum_nki/ops.py")),
    ("shim.py", include_str!("../python/psum_nki/shim.py")),
    ("tiles.py", include_str!("../python/psum_nki/tiles.py")),
    (
        "toplevel.py",
        include_str!("../python/psum_nki/toplevel.py"),
    ),
];

/// The tracer package as embedded: (file name in the package, text) of each
/// module; what [`trace`] runs, and what a host Python process may import to
/// put the stand-in NKI modules in place itself.
pub fn tracer_sources() -> &'static [(&'static str, &'static str)] {
    &TRACER
}

/// One kernel argument given as a tensor (`--arg NAME=DTYPE[D0,D1,…]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorArg {
    /// The kernel's parameter name.
    pub name: String,
    /// The NKI dtype name (`bfloat16`).
    pub dtype: String,
    /// The dimensions.
    pub shape: Vec<u64>,
}

impl TensorArg {
    /// Parses `NAME=DTYPE[D0,D1,…]`; the error says what is malformed.
    pub fn parse(s: &str) -> Result<TensorArg, String> {
        let bad = |why: &str| format!("--arg '{s}': {why} (expected NAME=DTYPE[D0,D1,...])");
        let (name, rest) = s.split_once('=').ok_or_else(|| bad("no '='"))?;
        if !is_identifier(name) {
            return Err(bad("the name is not an identifier"));
        }
        let (dtype, dims) = rest
            .strip_suffix(']')
            .and_then(|r| r.split_once('['))
            .ok_or_else(|| bad("no [dimensions]"))?;
        if !is_identifier(dtype) {
            return Err(bad("the dtype is not a name"));
        }
        let shape = dims
            .split(',')
            .map(|d| d.trim().parse::<u64>().ok().filter(|&n| n > 0))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| bad("dimensions must be positive integers"))?;
        Ok(TensorArg {
            name: name.to_string(),
            dtype: dtype.to_string(),
            shape,
        })
    }
}

fn is_identifier(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A kernel line `FILE:LINE[:COL]` (a `loc=` attribute, a lint's or an
/// error's place) split into file, line and column; `None` without a line.
pub fn split_loc(loc: &str) -> Option<(&str, u32, Option<u32>)> {
    let (rest, last) = loc.rsplit_once(':')?;
    let last: u32 = last.parse().ok()?;
    match rest.rsplit_once(':') {
        Some((file, line)) if line.parse::<u32>().is_ok() => {
            Some((file, line.parse().ok()?, Some(last)))
        }
        _ => Some((rest, last, None)),
    }
}

/// The tracer's limits (SPEC §9.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time the kernel may run.
    pub timeout: Duration,
    /// Address space of the tracer's process, in MiB.
    pub memory_mib: u64,
}

/// The default time limit, in seconds.
pub(crate) const DEFAULT_TIMEOUT_SECS: u64 = 60;
/// The default memory limit, in MiB.
pub(crate) const DEFAULT_MEMORY_MIB: u64 = 4096;

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            timeout: Duration::from_secs(DEFAULT_TIMEOUT_SECS),
            memory_mib: DEFAULT_MEMORY_MIB,
        }
    }
}

/// What to trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceRequest {
    /// The Python interpreter to run (`python3`, or `$PSUM_PYTHON`).
    pub python: String,
    /// The kernel file.
    pub kernel: PathBuf,
    /// The kernel function's name.
    pub function: String,
    /// Tensor arguments.
    pub args: Vec<TensorArg>,
    /// Other arguments: parameter name and a Python literal.
    pub kwargs: Vec<(String, String)>,
    /// The architecture; `None` takes the kernel's `platform_target`, else trn1.
    pub arch: Option<String>,
    /// The SPMD launch grid (`kernel[D0, D1, …]`); empty for none.
    pub grid: Vec<u64>,
    /// The instance of the grid traced (all zeros when empty).
    pub program_id: Vec<u64>,
    /// Time and memory limits.
    pub limits: Limits,
}

/// A warning the tracer found while running the kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceWarning {
    /// `FILE:LINE` of the kernel line.
    pub loc: Option<String>,
    /// What is wrong.
    pub message: String,
}

/// A traced kernel.
#[derive(Clone, Debug)]
pub struct Traced {
    /// The psum program (parsed and validated).
    pub module: Module,
    /// Warnings from the run.
    pub warnings: Vec<TraceWarning>,
    /// The `affine_range` loops the tracer unrolled, which the program no
    /// longer shows (what [`crate::lint::lint_with`] checks them with).
    pub unrolled_affine: Vec<UnrolledAffine>,
}

/// Why a kernel could not be traced.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TraceError {
    /// The interpreter could not be started.
    #[error("cannot run {python}: {error} (set PSUM_PYTHON to a Python 3 interpreter)")]
    Spawn {
        /// The interpreter.
        python: String,
        /// The OS error.
        error: String,
    },
    /// The tracer refused the kernel, or the kernel raised, ran out of time
    /// or memory: the message and the kernel line (`FILE:LINE[:COL]`) when known.
    #[error("{}{message}", loc.as_ref().map(|l| format!("{l}: ")).unwrap_or_default())]
    Kernel {
        /// `FILE:LINE` of the kernel line.
        loc: Option<String>,
        /// What happened.
        message: String,
    },
    /// A failure of the tracer itself: one line, and the Python traceback
    /// when there is one.
    #[error("internal error in the NKI tracer: {message}")]
    Internal {
        /// What failed.
        message: String,
        /// The traceback.
        detail: Option<String>,
    },
}

impl TraceError {
    /// The message `psum trace` prints for the error: `LOC: error: …` at the
    /// kernel line when known, else `SHOWN: error: …` (`shown` names the
    /// kernel file); `verbose` adds the tracer's traceback to an internal error.
    pub fn render(&self, shown: &str, verbose: bool) -> String {
        match self {
            TraceError::Kernel {
                loc: Some(loc),
                message,
            } => format!("{loc}: error: {message}"),
            TraceError::Internal {
                message,
                detail: Some(detail),
            } if verbose => format!(
                "{shown}: error: internal error in the NKI tracer: {message}\n{}",
                detail.trim_end()
            ),
            e => format!("{shown}: error: {e}"),
        }
    }

    fn internal(message: impl std::fmt::Display) -> TraceError {
        TraceError::Internal {
            message: message.to_string(),
            detail: None,
        }
    }
}

/// The geometry of every architecture name the tracer may meet (the ten
/// codenames and the product names `trn2`, `trn3`), as the tracer reads it.
fn arch_table() -> serde_json::Value {
    let mut table = serde_json::Map::new();
    let names = CODENAMES.iter().copied().chain(["trn2", "trn3"]);
    for name in names {
        let codename = arch::lookup(name)
            .map(|_| name)
            .unwrap_or_else(|_| arch::suggestion(name).unwrap_or(name));
        let Ok(a) = arch::lookup(codename) else {
            continue;
        };
        table.insert(
            name.to_string(),
            serde_json::json!({
                "codename": codename,
                "level": a.arch_level(),
                "sbuf_bytes": a.sbuf().partition_size,
                "reserved": a.sbuf().reserved_size,
                "banks": a.num_banks(),
            }),
        );
    }
    serde_json::Value::Object(table)
}

/// The codename of an architecture name `psum trace --arch` takes: a
/// codename, or a product name (`trn2` is `cayman`, `trn3` is `core_v4`).
pub fn codename(name: &str) -> Result<&'static str, arch::ArchError> {
    let product = match name {
        "trn2" => "cayman",
        "trn3" => "core_v4",
        _ => name,
    };
    arch::lookup(product)?;
    Ok(CODENAMES
        .iter()
        .copied()
        .find(|&c| c == product)
        .unwrap_or("trn1"))
}

/// A directory holding the tracer package, removed when dropped.
struct TracerDir(PathBuf);

impl TracerDir {
    fn create() -> std::io::Result<TracerDir> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!("psum-nki-{}-{nanos}", std::process::id()));
        let pkg = dir.join("psum_nki");
        std::fs::create_dir_all(&pkg)?;
        let dir = TracerDir(dir);
        for (name, text) in TRACER {
            std::fs::write(pkg.join(name), text)?;
        }
        Ok(dir)
    }
}

impl Drop for TracerDir {
    fn drop(&mut self) {
        // Best effort: a leftover temp directory is harmless.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// How long past its own time limit the tracer may take before it is killed.
const GRACE: Duration = Duration::from_secs(5);

/// Runs the tracer package on one request and returns its reply.
fn run_tracer(
    python: &str,
    request: &serde_json::Value,
    timeout: Duration,
) -> Result<serde_json::Value, TraceError> {
    let dir = TracerDir::create().map_err(TraceError::internal)?;
    let (req_path, reply_path) = (dir.0.join("request.json"), dir.0.join("reply.json"));
    std::fs::write(&req_path, request.to_string()).map_err(TraceError::internal)?;
    let mut child = Command::new(python)
        .arg("-m")
        .arg("psum_nki")
        .arg(&req_path)
        .arg(&reply_path)
        .env("PYTHONPATH", &dir.0)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .stdout(kernel_stdout())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| TraceError::Spawn {
            python: python.to_string(),
            error: e.to_string(),
        })?;
    let deadline = Instant::now() + timeout + GRACE;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(TraceError::internal)? {
            break status;
        }
        if Instant::now() > deadline {
            // Best effort: the process may have ended meanwhile.
            let _ = child.kill();
            let _ = child.wait();
            return Err(TraceError::Kernel {
                loc: None,
                message: format!(
                    "the kernel did not finish within {} s and was stopped (psum trace --timeout)",
                    timeout.as_secs_f64()
                ),
            });
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let text = std::fs::read_to_string(&reply_path).map_err(|_| {
        TraceError::internal(format!("{python} exited with {status} without a reply"))
    })?;
    serde_json::from_str(&text).map_err(|e| TraceError::internal(format!("unreadable reply: {e}")))
}

/// Where the kernel's own stdout goes: psum's stderr, so that psum's stdout
/// holds the program alone.
fn kernel_stdout() -> Stdio {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        if let Ok(fd) = std::io::stderr().as_fd().try_clone_to_owned() {
            return Stdio::from(fd);
        }
    }
    Stdio::inherit()
}

fn reply_error(err: &serde_json::Value) -> TraceError {
    let message = err["message"].as_str().unwrap_or("").to_string();
    if err["kind"] == "internal" {
        let at = err["loc"]
            .as_str()
            .map(|l| format!(" (running {l})"))
            .unwrap_or_default();
        return TraceError::Internal {
            message: format!("{message}{at}"),
            detail: err["detail"].as_str().map(str::to_string),
        };
    }
    TraceError::Kernel {
        loc: err["loc"].as_str().map(str::to_string),
        message,
    }
}

/// Runs the kernel under the tracer and returns its psum program, which is
/// validated: a program that would not validate is refused at the kernel
/// line of the instruction or tile it names.
///
/// ```no_run
/// use psum::trace::{trace, TensorArg, TraceRequest};
///
/// let req = TraceRequest {
///     python: "python3".into(),
///     kernel: "kernel.py".into(),
///     function: "matmul_kernel".into(),
///     args: vec![
///         TensorArg { name: "a".into(), dtype: "bfloat16".into(), shape: vec![128, 128] },
///         TensorArg { name: "b".into(), dtype: "bfloat16".into(), shape: vec![128, 512] },
///     ],
///     kwargs: Vec::new(),
///     arch: Some("trn2".into()),
///     grid: Vec::new(),
///     program_id: Vec::new(),
///     limits: Default::default(),
/// };
/// let traced = trace(&req)?;
/// psum::validate::validate(&traced.module)?;
/// for lint in psum::lint::lint_with(&traced.module, &traced.unrolled_affine) {
///     eprintln!("warning: {lint}");
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn trace(req: &TraceRequest) -> Result<Traced, TraceError> {
    let kernel = std::fs::canonicalize(&req.kernel).map_err(|e| TraceError::Kernel {
        loc: None,
        message: format!("{}: {e}", req.kernel.display()),
    })?;
    let request = serde_json::json!({
        "kernel": kernel,
        "display": display(&req.kernel),
        "function": req.function,
        "args": req.args.iter().map(|a| serde_json::json!({
            "name": a.name, "dtype": a.dtype, "shape": a.shape,
        })).collect::<Vec<_>>(),
        "kwargs": req.kwargs.iter().map(|(n, v)| serde_json::json!({"name": n, "value": v})).collect::<Vec<_>>(),
        "arch": req.arch,
        "grid": req.grid,
        "program_id": req.program_id,
        "timeout": req.limits.timeout.as_secs_f64(),
        "memory_mib": req.limits.memory_mib,
        "archs": arch_table(),
    });
    let reply = run_tracer(&req.python, &request, req.limits.timeout)?;
    if let Some(err) = reply.get("error") {
        return Err(reply_error(err));
    }
    let program = reply["program"]
        .as_str()
        .ok_or_else(|| TraceError::internal("no program in the reply"))?;
    let module = text::parse(program)
        .map_err(|e| TraceError::Internal {
            message: format!("the traced program does not parse: {e}"),
            detail: Some(program.to_string()),
        })?
        .module;
    validate(&module).map_err(|e| TraceError::Kernel {
        loc: loc_of(&module, &e.loc),
        message: format!("the traced program is not valid: {}", e.kind),
    })?;
    let warnings = reply["warnings"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|w| TraceWarning {
            loc: w[0].as_str().map(str::to_string),
            message: w[1].as_str().unwrap_or("").to_string(),
        })
        .collect();
    let unrolled_affine = unrolled_affine(&module, &reply["affine"]).ok_or_else(|| {
        TraceError::internal(format!(
            "malformed affine loops in the reply: {}",
            reply["affine"]
        ))
    })?;
    Ok(Traced {
        module,
        warnings,
        unrolled_affine,
    })
}

/// The reply's unrolled loops (`[{"loc", "iterations": [[POSITION, …], …]}]`,
/// positions in printed order), or `None` when malformed.
fn unrolled_affine(m: &Module, loops: &serde_json::Value) -> Option<Vec<UnrolledAffine>> {
    let order = m.insts_in_order();
    (loops.as_array()?.iter())
        .map(|l| {
            let iterations = (l["iterations"].as_array()?.iter())
                .map(|it| {
                    (it.as_array()?.iter())
                        .map(|p| order.get(usize::try_from(p.as_u64()?).ok()?).copied())
                        .collect::<Option<Vec<_>>>()
                })
                .collect::<Option<Vec<_>>>()?;
            Some(UnrolledAffine {
                loc: l["loc"].as_str().map(str::to_string),
                iterations,
            })
        })
        .collect()
}

/// The kernel line of the IR entity a validation error points at.
fn loc_of(m: &Module, loc: &Loc) -> Option<String> {
    let inst = match loc {
        Loc::Tensor(t) => return m.tensor(*t).loc.clone(),
        Loc::Inst(i) | Loc::Operand(i, _) | Loc::Bound(i, _, _) | Loc::Attr(i, _) => *i,
        _ => return None,
    };
    m.inst(inst).loc().map(str::to_string)
}

/// The tracer's API listing (`psum trace --api`): one line a public name,
/// `MODULE.NAME<TAB>implemented` or `MODULE.NAME<TAB>refused<TAB>REASON`.
pub fn api_listing(python: &str) -> Result<Vec<String>, TraceError> {
    let reply = run_tracer(
        python,
        &serde_json::json!({"api": true}),
        Duration::from_secs(DEFAULT_TIMEOUT_SECS),
    )?;
    if let Some(err) = reply.get("error") {
        return Err(reply_error(err));
    }
    Ok(reply["api"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|l| l.as_str().map(str::to_string))
        .collect())
}

/// How a kernel path is written in `loc=` attributes: as given, with `/`.
fn display(p: &Path) -> String {
    p.to_string_lossy().replace('\\', "/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tensor_args_parse_or_say_why_not() {
        assert_eq!(
            TensorArg::parse("lhsT=bfloat16[512, 256]"),
            Ok(TensorArg {
                name: "lhsT".into(),
                dtype: "bfloat16".into(),
                shape: vec![512, 256]
            })
        );
        for (bad, why) in [
            ("x", "no '='"),
            ("x=float32", "no [dimensions]"),
            ("x=float32[0]", "positive integers"),
            ("x=float32[4,a]", "positive integers"),
            ("1x=float32[4]", "not an identifier"),
            ("x=f-32[4]", "not a name"),
        ] {
            let e = TensorArg::parse(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn a_kernel_error_renders_at_its_line_which_splits_into_a_position() {
        let at = |loc: &str| TraceError::Kernel {
            loc: Some(loc.to_string()),
            message: "ValueError: no".to_string(),
        };
        let e = at("k/m.py:12");
        assert_eq!(
            e.render("k/m.py", false),
            "k/m.py:12: error: ValueError: no"
        );
        assert_eq!(split_loc("k/m.py:12"), Some(("k/m.py", 12, None)));
        assert_eq!(split_loc("k/m.py:12:5"), Some(("k/m.py", 12, Some(5))));
        assert_eq!(split_loc("k/m.py"), None);
        let bare = TraceError::Kernel {
            loc: None,
            message: "no function 'f' in k.py".to_string(),
        };
        assert_eq!(
            bare.render("k.py", true),
            "k.py: error: no function 'f' in k.py"
        );
        let internal = TraceError::Internal {
            message: "KeyError: 'x'".to_string(),
            detail: Some("Traceback …\n".to_string()),
        };
        assert_eq!(
            internal.render("k.py", false),
            "k.py: error: internal error in the NKI tracer: KeyError: 'x'"
        );
        assert_eq!(
            internal.render("k.py", true),
            "k.py: error: internal error in the NKI tracer: KeyError: 'x'\nTraceback …"
        );
    }

    #[test]
    fn the_arch_table_maps_product_names_to_codenames() {
        let t = arch_table();
        assert_eq!(t["trn2"]["codename"], "cayman");
        assert_eq!(t["trn3"]["level"], 40);
        assert_eq!(t["trn1"]["sbuf_bytes"], 196608);
        assert_eq!(t.as_object().unwrap().len(), 12);
    }
}
