//! The compile pipeline (SPEC §6 `psum compile`): one list of named passes,
//! [`Pass::ALL`], each a plain function over a [`Module`]:
//!
//! validate → alloc (§3) → rebank (§3.12) → unroll (§4.3) → legalize (§4.2
//! order + §4.3) → verify (§5).
//!
//! [`compile`] runs the list in order, timing each pass, and returns the
//! result program with everything the passes reported. The verifier (§5)
//! checks the final program against the input; with
//! [`CompileOptions::verify_each`] it runs after every pass that changes the
//! program and names the first pass whose output fails. [`verify_after`]
//! runs the same list up to a given pass and verifies there, which is how the
//! tests prove each pass on its own.

use crate::alloc::{self, AllocError, AllocOptions, AllocOutcome, Allocator};
use crate::arch::{self, Arch, ArchError};
use crate::ir::{InstId, Loc, Module};
use crate::matmul::{self, MatmulError, MatmulReport};
use crate::rebank;
use crate::unroll::{self, UnrollError};
use crate::validate::{self, ValidateError};
use crate::verify::{self, VerifyReport};
use std::fmt;
use std::time::{Duration, Instant};

/// A pass of the pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Pass {
    /// Validation of the input (SPEC §2); changes nothing.
    Validate,
    /// PSUM allocation and spill code (SPEC §3).
    Alloc,
    /// Rotation of the placement (SPEC §3.12), when [`CompileOptions::rotate`]
    /// asks for it; otherwise it changes nothing.
    Rebank,
    /// Loop unrolling (SPEC §4.3).
    Unroll,
    /// Column-tile ordering and accumulation-group legalization (SPEC §4.2, §4.3).
    Legalize,
}

impl Pass {
    /// The pass list of [`compile`], in order.
    pub const ALL: [Pass; 5] = [
        Pass::Validate,
        Pass::Alloc,
        Pass::Rebank,
        Pass::Unroll,
        Pass::Legalize,
    ];

    /// The pass's name in timings, summaries and diagnostics.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Pass::Validate => "validate",
            Pass::Alloc => "alloc",
            Pass::Rebank => "rebank",
            Pass::Unroll => "unroll",
            Pass::Legalize => "legalize",
        }
    }
}

impl fmt::Display for Pass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The name of the verifier's entry in [`Compiled::timings`].
pub const VERIFY: &str = "verify";

/// The names in [`Compiled::timings`], in order: [`Pass::ALL`], then [`VERIFY`].
pub const PASSES: [&str; Pass::ALL.len() + 1] = {
    let mut names = [VERIFY; Pass::ALL.len() + 1];
    let mut i = 0;
    while i < Pass::ALL.len() {
        names[i] = Pass::ALL[i].name();
        i += 1;
    }
    names
};

/// Whether [`Pass::Rebank`] rotates the placement (SPEC §3.12).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Rotation {
    /// The allocator's default: on for `mincost`, off otherwise.
    #[default]
    Auto,
    /// Rotate after any allocator but `Kept` (`--rotate`).
    On,
    /// Keep the allocator's placement (`--no-rotate`).
    Off,
}

impl Rotation {
    /// Whether the placement of `allocator` is rotated; a kept placement
    /// (SPEC §9.5) never is.
    pub(crate) fn rotates(self, allocator: Allocator) -> bool {
        match (self, allocator) {
            (_, Allocator::Kept) | (Rotation::Off, _) => false,
            (Rotation::Auto, a) => a == Allocator::Mincost,
            (Rotation::On, _) => true,
        }
    }
}

/// Settings of [`compile`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompileOptions {
    /// Allocator settings.
    pub alloc: AllocOptions,
    /// Whether the placement is rotated (SPEC §3.12).
    pub rotate: Rotation,
    /// Run the verifier on the result (`--no-verify` turns it off).
    pub verify: bool,
    /// Verify after every pass that changes the program, and stop at the
    /// first whose output fails (`--verify-each`).
    pub verify_each: bool,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            alloc: AllocOptions::default(),
            rotate: Rotation::Auto,
            verify: true,
            verify_each: false,
        }
    }
}

/// Why [`compile`] stopped.
#[derive(Clone, Debug, thiserror::Error)]
pub enum CompileError {
    /// The input is not a valid program.
    #[error(transparent)]
    Invalid(#[from] ValidateError),
    /// The arch line names no known architecture.
    #[error(transparent)]
    Arch(#[from] ArchError),
    /// PSUM allocation failed.
    #[error(transparent)]
    Alloc(#[from] AllocError),
    /// Unrolling failed (too many instructions).
    #[error(transparent)]
    Unroll(#[from] UnrollError),
    /// Ordering or legalization failed (or refused its input, §4.3).
    #[error("{error}")]
    Matmul {
        /// What failed.
        #[source]
        error: Box<MatmulError>,
        /// Where it points in the input: the instruction the unrolled one
        /// is a copy of, or the tensor, when the input has it.
        at: Loc,
    },
    /// With [`CompileOptions::verify_each`]: the output of `pass` does not
    /// compute what the input computes.
    #[error("verification failed after pass {pass}: {}", report.first_error().unwrap_or_default())]
    VerifyAfter {
        /// The first pass whose output failed.
        pass: Pass,
        /// The verifier's verdict on that output.
        report: Box<VerifyReport>,
    },
}

impl CompileError {
    /// Where the error points in the input: the entity validation names,
    /// the tensor allocation names, else the module.
    pub fn loc(&self) -> Loc {
        match self {
            CompileError::Invalid(v) => v.loc,
            CompileError::Alloc(a) => a.loc(),
            CompileError::Matmul { at, .. } => *at,
            _ => Loc::Module,
        }
    }
}

/// What [`compile`] produced.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The final program: allocated, unrolled, ordered and legalized.
    pub module: Module,
    /// The allocator's outcome (its `module` is the allocated program before unrolling).
    pub alloc: AllocOutcome,
    /// For every unrolled instruction (ids `0..origins.len()` of `module`;
    /// memsets inserted by legalization come after), the instruction of
    /// `alloc.module` it is a copy of.
    pub origins: Vec<InstId>,
    /// What ordering and legalization did.
    pub matmul: MatmulReport,
    /// The verifier's verdict, unless verification was turned off.
    pub verify: Option<VerifyReport>,
    /// Wall time per pass, in [`PASSES`] order (verify absent when skipped).
    pub timings: Vec<(&'static str, Duration)>,
}

/// The program as the passes leave it: the input until allocation, then
/// each pass's output.
struct Run<'a> {
    input: &'a Module,
    rotate: bool,
    arch: Option<Arch>,
    alloc: Option<AllocOutcome>,
    unrolled: Option<(Module, Vec<InstId>)>,
    matmul: Option<MatmulReport>,
}

impl<'a> Run<'a> {
    fn new(input: &'a Module, rotate: bool) -> Self {
        Run {
            input,
            rotate,
            arch: None,
            alloc: None,
            unrolled: None,
            matmul: None,
        }
    }

    /// The program after the passes run so far.
    fn current(&self) -> &Module {
        match (&self.unrolled, &self.alloc) {
            (Some((m, _)), _) => m,
            (None, Some(a)) => &a.module,
            (None, None) => self.input,
        }
    }

    /// Runs one pass over the current program.
    fn pass(&mut self, pass: Pass, opts: &AllocOptions) -> Result<(), CompileError> {
        match pass {
            Pass::Validate => {
                validate::validate(self.input)?;
                self.arch = Some(arch::lookup(&self.input.arch)?);
            }
            Pass::Alloc => self.alloc = Some(alloc::allocate(self.input, opts)?),
            Pass::Rebank => {
                let outcome = self.alloc.as_mut().expect("alloc runs before rebank");
                if self.rotate {
                    rebank::rotate(self.input, outcome, opts);
                }
            }
            Pass::Unroll => {
                let allocated = &self
                    .alloc
                    .as_ref()
                    .expect("alloc runs before unroll")
                    .module;
                self.unrolled = Some(unroll::unroll_with_origins(allocated)?);
            }
            Pass::Legalize => {
                let arch = self.arch.as_ref().expect("validate runs first");
                let (m, origins) = self.unrolled.as_mut().expect("unroll runs before legalize");
                let report = matmul::legalize_program(m, arch).map_err(|error| {
                    let at = input_loc(error.loc(m), origins, self.input);
                    let error = Box::new(error);
                    CompileError::Matmul { error, at }
                })?;
                self.matmul = Some(report);
            }
        }
        Ok(())
    }

    /// Runs [`Pass::ALL`] up to and including `last`, timing each pass and,
    /// when `verify_each`, verifying after each that changes the program.
    fn passes_through(
        &mut self,
        last: Pass,
        opts: &AllocOptions,
        verify_each: bool,
        timings: &mut Vec<(&'static str, Duration)>,
    ) -> Result<(), CompileError> {
        for pass in Pass::ALL.into_iter().take_while(|&p| p <= last) {
            timed(timings, pass.name(), || self.pass(pass, opts))?;
            if verify_each && pass != Pass::Validate && pass != last {
                self.check_after(pass)?;
            }
        }
        Ok(())
    }

    /// Verifies the current program, the output of `pass`, against the input.
    fn check_after(&self, pass: Pass) -> Result<(), CompileError> {
        let current = self.current();
        verify::admit_instances(self.input)?;
        verify::admit_instances(current)?;
        let report = verify::verify(self.input, current);
        match report.first_error() {
            None => Ok(()),
            Some(_) => {
                let report = Box::new(report);
                Err(CompileError::VerifyAfter { pass, report })
            }
        }
    }
}

/// The entity of `input` that `loc`, in the unrolled program whose
/// instructions are copies of `origins`, stands for: the allocator appends
/// its spill tensors and copies after the input's, so an id within the
/// input's arenas is the input's own.
fn input_loc(loc: Loc, origins: &[InstId], input: &Module) -> Loc {
    let inst = |i: InstId| {
        origins
            .get(i.index())
            .copied()
            .filter(|o| o.index() < input.insts.len())
    };
    let found = match loc {
        Loc::Inst(i) => inst(i).map(Loc::Inst),
        Loc::Operand(i, k) => inst(i).map(|o| Loc::Operand(o, k)),
        Loc::Bound(i, k, b) => inst(i).map(|o| Loc::Bound(o, k, b)),
        Loc::Attr(i, a) => inst(i).map(|o| Loc::Attr(o, a)),
        Loc::Tensor(t) => (t.index() < input.tensors.len()).then_some(loc),
        Loc::Module | Loc::Arch | Loc::Loop(_) | Loc::LoopRange(_) => None,
    };
    found.unwrap_or(Loc::Module)
}

/// Runs `f`, recording its wall time under `name`.
fn timed<T>(
    timings: &mut Vec<(&'static str, Duration)>,
    name: &'static str,
    f: impl FnOnce() -> T,
) -> T {
    let t0 = Instant::now();
    let out = f();
    timings.push((name, t0.elapsed()));
    out
}

/// Compiles `input`: runs [`Pass::ALL`], then the verifier.
pub fn compile(input: &Module, opts: &CompileOptions) -> Result<Compiled, CompileError> {
    compile_partial(input, opts).map_err(|stopped| stopped.error)
}

/// Where [`compile_partial`] stopped: why, and the allocation when the
/// allocator ran before the pass that failed.
#[derive(Clone, Debug)]
pub struct Stopped {
    /// Why the pipeline stopped.
    pub error: CompileError,
    /// The allocator's outcome, when it ran.
    pub alloc: Option<Box<AllocOutcome>>,
}

/// [`compile`], which keeps the allocation when a later pass fails (the
/// bank pictures draw it without the accumulation clusters).
pub fn compile_partial(input: &Module, opts: &CompileOptions) -> Result<Compiled, Stopped> {
    let mut timings = Vec::with_capacity(PASSES.len());
    let mut run = Run::new(input, opts.rotate.rotates(opts.alloc.allocator));
    if let Err(error) =
        run.passes_through(Pass::Legalize, &opts.alloc, opts.verify_each, &mut timings)
    {
        let alloc = run.alloc.map(Box::new);
        return Err(Stopped { error, alloc });
    }
    let verify = (opts.verify || opts.verify_each).then(|| {
        timed(&mut timings, VERIFY, || {
            verify::verify(input, run.current())
        })
    });
    let verify = match verify {
        Some(report) if opts.verify_each && report.first_error().is_some() => {
            let report = Box::new(report);
            let pass = Pass::Legalize;
            let error = CompileError::VerifyAfter { pass, report };
            let alloc = run.alloc.map(Box::new);
            return Err(Stopped { error, alloc });
        }
        verify => verify,
    };
    let (module, origins) = run.unrolled.expect("the pass list ends after unroll");
    Ok(Compiled {
        module,
        alloc: run.alloc.expect("the pass list allocates"),
        origins,
        matmul: run.matmul.expect("the pass list legalizes"),
        verify,
        timings,
    })
}

/// Runs [`Pass::ALL`] up to and including `last` (at least [`Pass::Alloc`];
/// rotation as [`Rotation::Auto`] decides) and verifies the program at that
/// point against `input`.
pub fn verify_after(
    input: &Module,
    last: Pass,
    opts: &AllocOptions,
) -> Result<(Module, VerifyReport), CompileError> {
    let mut run = Run::new(input, Rotation::Auto.rotates(opts.allocator));
    run.passes_through(last.max(Pass::Alloc), opts, false, &mut Vec::new())?;
    let report = verify::verify(input, run.current());
    let module = match run.unrolled {
        Some((m, _)) => m,
        None => run.alloc.expect("the list ran through alloc").module,
    };
    Ok((module, report))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_TENSORS: &str = "arch trn1\n\npsum a [128, 2048]\npsum b [128, 2048]\n\
        sbuf w [128, 256] bf16\nsbuf x [128, 2048] bf16\nsbuf y [128, 2048]\n\
        dram out [128, 2048]\n\nblock main {\n  matmul a <- w, x[0:128, 0:1024]\n  \
        matmul b <- w, x[0:128, 1024:2048]\n  act y <- a, b\n  dma out <- y\n}\n";

    #[test]
    fn the_pass_list_and_the_timing_names_agree() {
        assert_eq!(
            PASSES,
            ["validate", "alloc", "rebank", "unroll", "legalize", "verify"]
        );
        let m = crate::text::parse(TWO_TENSORS).unwrap().module;
        let opts = CompileOptions {
            verify_each: true,
            ..CompileOptions::default()
        };
        let c = compile(&m, &opts).unwrap();
        let names: Vec<_> = c.timings.iter().map(|t| t.0).collect();
        assert_eq!(names, PASSES);
        assert_eq!(c.verify.unwrap().first_error(), None);
    }

    #[test]
    fn a_pass_whose_output_fails_is_named() {
        let m = crate::text::parse(TWO_TENSORS).unwrap().module;
        let mut run = Run::new(&m, false);
        run.passes_through(Pass::Alloc, &AllocOptions::default(), true, &mut Vec::new())
            .unwrap();
        let out = &mut run.alloc.as_mut().unwrap().module;
        let (a, b) = (
            out.tensor_by_name("a").unwrap(),
            out.tensor_by_name("b").unwrap(),
        );
        out.tensors[b].bank = out.tensor(a).bank;
        let err = run.check_after(Pass::Alloc).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("verification failed after pass alloc: checker: "),
            "{text}"
        );
        assert!(matches!(
            err,
            CompileError::VerifyAfter {
                pass: Pass::Alloc,
                ..
            }
        ));
    }

    /// A pass after allocation that fails leaves the allocation with the
    /// error: the unrolled program would be too large.
    #[test]
    fn a_failure_after_allocation_keeps_the_allocation() {
        let src = TWO_TENSORS.replace(
            "  act y <- a, b\n",
            "  loop i 0..100000 {\n    loop j 0..1000 {\n      act y <- a, b\n    }\n  }\n",
        );
        let m = crate::text::parse(&src).unwrap().module;
        let stopped = compile_partial(&m, &CompileOptions::default()).unwrap_err();
        assert!(
            matches!(stopped.error, CompileError::Unroll(_)),
            "{}",
            stopped.error
        );
        let kept = stopped.alloc.expect("alloc ran");
        let alone = alloc::allocate(&m, &AllocOptions::default()).unwrap();
        assert_eq!((kept.module, kept.report), (alone.module, alone.report));
    }
}
