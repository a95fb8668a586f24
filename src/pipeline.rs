//! The compile pipeline (SPEC §6 `psum compile`): a list of named passes,
//! each a plain function over a [`Module`]:
//!
//! validate → alloc (§3) → unroll (§4.3) → order + legalize (§4.2, §4.3) → verify (§5).
//!
//! [`compile`] runs them in order, timing each, and returns the result
//! program with everything the passes reported. The verifier checks the
//! final program against the input; [`verify_after`] runs it after any prefix
//! of the pipeline, which is how the tests prove each pass on its own.

use crate::alloc::{self, AllocError, AllocOptions, AllocOutcome};
use crate::arch::{self, ArchError};
use crate::ir::{InstId, Module};
use crate::matmul::{self, MatmulError, MatmulReport};
use crate::unroll::{self, UnrollError};
use crate::validate::{self, ValidateError};
use crate::verify::{self, VerifyReport};
use std::time::{Duration, Instant};

/// The passes of [`compile`], in order (their names in timings and summaries).
pub const PASSES: [&str; 5] = ["validate", "alloc", "unroll", "legalize", "verify"];

/// Settings of [`compile`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompileOptions {
    /// Allocator settings.
    pub alloc: AllocOptions,
    /// Run the verifier on the result (`--no-verify` turns it off).
    pub verify: bool,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            alloc: AllocOptions::default(),
            verify: true,
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
    /// Ordering or legalization failed.
    #[error(transparent)]
    Matmul(#[from] MatmulError),
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

/// Compiles `input`: validate → alloc → unroll → order → legalize → verify.
pub fn compile(input: &Module, opts: &CompileOptions) -> Result<Compiled, CompileError> {
    let mut timings = Vec::with_capacity(PASSES.len());
    timed(&mut timings, "validate", || validate::validate(input))?;
    let arch = arch::lookup(&input.arch)?;
    let alloc = timed(&mut timings, "alloc", || {
        alloc::allocate(input, &opts.alloc)
    })?;
    let (mut module, origins) = timed(&mut timings, "unroll", || {
        unroll::unroll_with_origins(&alloc.module)
    })?;
    let matmul = timed(&mut timings, "legalize", || {
        matmul::legalize_program(&mut module, &arch)
    })?;
    let verify = opts
        .verify
        .then(|| timed(&mut timings, "verify", || verify::verify(input, &module)));
    Ok(Compiled {
        module,
        alloc,
        origins,
        matmul,
        verify,
        timings,
    })
}

/// The pipeline stages after which [`verify_after`] can check the program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// After allocation (loops and `auto` flags still present).
    Alloc,
    /// After unrolling.
    Unroll,
    /// After ordering and legalization (the full pipeline).
    Legalize,
}

/// Runs the pipeline up to and including `stage` and verifies the program
/// at that point against `input`.
pub fn verify_after(
    input: &Module,
    stage: Stage,
    opts: &AllocOptions,
) -> Result<(Module, VerifyReport), CompileError> {
    validate::validate(input)?;
    let arch = arch::lookup(&input.arch)?;
    let mut m = alloc::allocate(input, opts)?.module;
    if stage != Stage::Alloc {
        m = unroll::unroll(&m)?;
    }
    if stage == Stage::Legalize {
        matmul::legalize_program(&mut m, &arch)?;
    }
    let report = verify::verify(input, &m);
    Ok((m, report))
}
