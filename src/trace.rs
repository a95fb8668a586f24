//! Tracing NKI kernels into psum programs (SPEC §9): [`trace`] runs a
//! kernel (a Python function) under the tracer in `python/psum_nki/`, which
//! is embedded in the library and written to a temporary directory for each
//! run, and reads back the psum program it prints. Python is the only other
//! thing needed: no real NKI and no file of the installation.

use crate::arch::{self, CODENAMES};
use crate::ir::Module;
use crate::lint::UnrolledAffine;
use crate::text;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The tracer's sources, as embedded: (path under the package, text).
const TRACER: [(&str, &str); 7] = [
    (
        "__init__.py",
        include_str!("../python/psum_nki/__init__.py"),
    ),
    (
        "__main__.py",
        include_str!("../python/psum_nki/__main__.py"),
    ),
    ("core.py", include_str!("../python/psum_nki/core.py")),
    ("tiles.py", include_str!("../python/psum_nki/tiles.py")),
    (
        "language.py",
        include_str!("../python/psum_nki/language.py"),
    ),
    ("isa.py", include_str!("../python/psum_nki/isa.py")),
    ("shim.py", include_str!("../python/psum_nki/shim.py")),
];

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
    /// The psum program (parsed, not yet validated).
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
    /// The tracer refused the kernel, or the kernel raised: the message and
    /// the kernel line (`FILE:LINE`) when known.
    #[error("{}{message}", loc.as_ref().map(|l| format!("{l}: ")).unwrap_or_default())]
    Kernel {
        /// `FILE:LINE` of the kernel line.
        loc: Option<String>,
        /// What happened.
        message: String,
    },
    /// The tracer's output is not what psum expects (a tracer bug).
    #[error("the NKI tracer failed: {0}")]
    Internal(String),
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

/// Runs the kernel under the tracer and returns its psum program.
pub fn trace(req: &TraceRequest) -> Result<Traced, TraceError> {
    let internal = |e: &dyn std::fmt::Display| TraceError::Internal(e.to_string());
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
        "archs": arch_table(),
    });
    let dir = TracerDir::create().map_err(|e| internal(&e))?;
    let out = Command::new(&req.python)
        .arg("-m")
        .arg("psum_nki")
        .arg(request.to_string())
        .env("PYTHONPATH", &dir.0)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .map_err(|e| TraceError::Spawn {
            python: req.python.clone(),
            error: e.to_string(),
        })?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let reply: serde_json::Value = serde_json::from_str(stdout.trim()).map_err(|_| {
        TraceError::Internal(format!(
            "{} exited with {}: {}",
            req.python,
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    })?;
    if let Some(err) = reply.get("error") {
        return Err(TraceError::Kernel {
            loc: err["loc"].as_str().map(str::to_string),
            message: err["message"].as_str().unwrap_or("").to_string(),
        });
    }
    let program = reply["program"]
        .as_str()
        .ok_or_else(|| internal(&"no program in the reply"))?;
    let module = text::parse(program)
        .map_err(|e| internal(&format!("{e} in\n{program}")))?
        .module;
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
        internal(&format!(
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
    fn the_arch_table_maps_product_names_to_codenames() {
        let t = arch_table();
        assert_eq!(t["trn2"]["codename"], "cayman");
        assert_eq!(t["trn3"]["level"], 40);
        assert_eq!(t["trn1"]["sbuf_bytes"], 196608);
        assert_eq!(t.as_object().unwrap().len(), 12);
    }
}
