//! Values crossing to Python: JSON reports as dicts and lists, and the
//! allocator settings of the keyword arguments.

use psum::alloc::{AllocOptions, Allocator};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use serde_json::Value;

/// A JSON value as the Python value `json.loads` would give.
pub(crate) fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
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
pub(crate) fn alloc_options(
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
