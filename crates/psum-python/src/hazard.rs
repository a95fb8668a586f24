//! `psum.Hazard`: the PSUM hazards of a program (SPEC §9.4), at the
//! kernel's lines for a traced kernel.

use crate::errors::kernel_position;
use psum::lint::{Hazard as LintHazard, UnrolledAffine};
use psum::source::Loaded;
use pyo3::prelude::*;

/// The hazards of a program (SPEC §9.4) as [`Hazard`]s.
pub(crate) fn hazards(loaded: &Loaded, unrolled: &[UnrolledAffine]) -> Vec<Hazard> {
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

/// A PSUM hazard (SPEC §9.4): a hardware rule the program breaks.
#[pyclass(frozen, module = "psum")]
pub(crate) struct Hazard {
    pub(crate) kind: &'static str,
    pub(crate) file: Option<String>,
    pub(crate) line: Option<usize>,
    pub(crate) message: String,
    pub(crate) text: String,
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
