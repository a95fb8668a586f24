//! `psum.Timeline`: a program's bank timeline (SPEC §8), drawn inline in
//! Jupyter or saved as SVG or HTML.

use crate::errors::{detached, error};
use psum::viz;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The heading of a program's timeline: its file name.
pub(crate) fn title(file: &str) -> String {
    Path::new(file)
        .file_name()
        .map_or_else(|| file.to_string(), |n| n.to_string_lossy().into_owned())
}

/// A bank timeline (SPEC §8): `_repr_svg_` and `_repr_html_` draw it
/// inline in Jupyter, `save` writes it to a file.
#[pyclass(frozen, module = "psum")]
pub(crate) struct Timeline {
    pub(crate) timeline: viz::Timeline,
    pub(crate) svg: OnceLock<String>,
    pub(crate) html: OnceLock<String>,
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
