//! The Python side of a failure: `psum` exceptions with the command
//! line's message and where it points, and the guard every call into the
//! library runs under (the GIL released, a panic caught).

use psum::alloc::AllocError;
use psum::source::{Diagnostic, Loaded, Noted};
use psum::trace;
use pyo3::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Where an error points: file, 1-based line and column, each when known.
pub(crate) type Position = (Option<String>, Option<usize>, Option<usize>);

/// A `psum` exception of class `class` (defined in `psum._errors`) with the
/// command line's message text and where it points.
pub(crate) fn error(py: Python<'_>, class: &str, message: String, at: Position) -> PyErr {
    let made = (|| -> PyResult<PyErr> {
        let cls = py.import("psum._errors")?.getattr(class)?;
        Ok(PyErr::from_value(cls.call1((message, at.0, at.1, at.2))?))
    })();
    made.unwrap_or_else(|e| e)
}

/// A diagnostic as an exception of class `class`.
pub(crate) fn diagnostic_error(py: Python<'_>, class: &str, d: &Diagnostic) -> PyErr {
    let (line, column) = d.position.unzip();
    error(
        py,
        class,
        d.to_string(),
        (Some(d.file.clone()), line, column),
    )
}

/// A diagnostic with its note as an exception of class `class`.
pub(crate) fn noted_error(py: Python<'_>, class: &str, n: &Noted) -> PyErr {
    let (line, column) = n.diagnostic.position.unzip();
    let at = (Some(n.diagnostic.file.clone()), line, column);
    error(py, class, n.to_string(), at)
}

/// Runs `f` with the GIL released; a panic becomes `psum.InternalError`.
pub(crate) fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
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

/// An allocation error as `psum.AllocationError`, at the tensor it names.
pub(crate) fn alloc_error(py: Python<'_>, loaded: &Loaded, e: &AllocError) -> PyErr {
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
pub(crate) fn kernel_position(loc: &str) -> Position {
    match trace::split_loc(loc) {
        Some((file, line, col)) => (
            Some(file.to_string()),
            Some(line as usize),
            col.map(|c| c as usize),
        ),
        None => (Some(loc.to_string()), None, None),
    }
}
