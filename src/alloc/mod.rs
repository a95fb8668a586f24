//! PSUM bank allocation (SPEC §3; seed 000: `PSUM_Allocator::allocate`).
//!
//! [`allocate`] runs the allocator [`AllocOptions::allocator`] names:
//!
//! - [`Allocator::Briggs`], Chaitin–Briggs over banks with TensorCopy
//!   spill (SPEC §3.1–3.10). The first analysis splits reused tensors
//!   (`memloc_split`), numbers the points (`linear`) and computes the
//!   live ranges (`liveness`); the allocator then iterates the spill
//!   fixpoint: costs (`costs`), interference, simplify and select under
//!   each heuristic H0..H3, keeping the best (best-of-n); if something did
//!   not fit, it inserts spill code (`spill`) and goes again, at most
//!   [`MAX_ITERATIONS`] times. Fast mode (`briggs`) is near-linear in the
//!   number of tensors; [`Allocator::BriggsReference`] (`reference`) is the
//!   seed's quadratic data structures written plainly from the SPEC, which
//!   shares with fast mode only the IR, the linearization and the
//!   spill-code writer, and produces byte-identical results.
//! - [`Allocator::Mincost`] and [`Allocator::Exact`], psum's own (SPEC
//!   §3.11): the least spill cost a sweep finds under split spilling
//!   (`mincost/`), and the least there is, by search (`exact/`), sharing
//!   the split-spilling cost model (`split_cost`), the aligned-block
//!   placement (`blocks`) and briggs' start and finish (`setup`).
//! - [`Allocator::Kept`], the program's own `bank=` placement, checked
//!   (SPEC §9.5, `kept`).
//!
//! [`AllocOptions::log`] says what is collected: [`AllocOutcome::log`]
//! holds the `-v` lines of SPEC §3.9 and, at [`LogLevel::Trace`],
//! [`AllocOutcome::trace`] the complete `-vv` stream (the same lines with
//! the trace lines interleaved), so a front end prints one or the other.
//! Briggs' reference implementation writes the trace, so tracing briggs
//! runs it: its `cannot allocate` lines follow one select over the whole
//! graph.

mod analysis;
mod blocks;
mod briggs;
pub(crate) mod costs;
mod events;
pub mod exact;
mod kept;
pub(crate) mod linear;
pub(crate) mod liveness;
mod log;
mod memloc_split;
mod mincost;
mod outcome;
mod problem;
mod reference;
mod setup;
pub(crate) mod spill;
mod split_cost;
pub(crate) mod support;

pub(crate) use analysis::{analyze, Analysis};
pub use costs::Cost;
pub(crate) use kept::KeptErrors;
pub(crate) use liveness::NodeId;
pub use problem::{problem, AllocProblem, Buffer, Interval};
pub(crate) use split_cost::SplitSpans;

use crate::arch::{self, ArchError};
use crate::ir::{InstKind, Loc, Module, TensorId};
use serde::Serialize;

/// Default limit on fixpoint iterations (SPEC §3.8: at most 32).
pub const MAX_ITERATIONS: u32 = 32;

/// Which allocator runs (`--allocator`, `--keep-banks`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Allocator {
    /// The reference's Chaitin–Briggs allocator (SPEC §3.1–3.10), fast
    /// mode: near-linear in the number of tensors.
    #[default]
    Briggs,
    /// The same allocator with the seed's data structures (SPEC §3.10):
    /// same output, quadratic.
    BriggsReference,
    /// psum's own least-spill-cost sweep (SPEC §3.11).
    Mincost,
    /// The least-cost allocation by exhaustive search (SPEC §3.11), on at
    /// most [`exact::MAX_NODES`] nodes.
    Exact,
    /// No allocation: the program's own `bank=` placement, checked (SPEC
    /// §9.5).
    Kept,
}

impl Allocator {
    /// The allocator's name on the command line (`--allocator NAME`;
    /// `kept` is `--keep-banks`).
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Allocator::Briggs => "briggs",
            Allocator::BriggsReference => "briggs-reference",
            Allocator::Mincost => "mincost",
            Allocator::Exact => "exact",
            Allocator::Kept => "kept",
        }
    }
}

/// What the allocator's log collects (`-v`, `-vv`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LogLevel {
    /// Nothing.
    Quiet,
    /// The `-v` lines of SPEC §3.9 ([`AllocOutcome::log`]).
    #[default]
    Log,
    /// The `-v` lines and the `-vv` stream ([`AllocOutcome::trace`]);
    /// briggs runs its reference implementation, which writes it (same
    /// result).
    Trace,
}

/// Allocator settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocOptions {
    /// Which allocator runs (Briggs by default).
    pub allocator: Allocator,
    /// What the log collects ([`LogLevel::Log`] by default).
    pub log: LogLevel,
    /// Cycles per bank moved by one TensorCopy (`--spill-latency`).
    pub spill_latency: u64,
    /// Banks the allocator may use (`--psum-banks`, 1..=numBanks); `None` for all.
    pub psum_banks: Option<u32>,
    /// Fixpoint iterations allowed before [`AllocError::NotConverged`]
    /// ([`MAX_ITERATIONS`] by default).
    pub max_iterations: u32,
    /// Let fast mode use one scoped helper thread on large programs: half
    /// the components, or two heuristics at once, and the passes that
    /// split in two (on by default; the output is the same either way).
    pub parallel: bool,
}

impl AllocOptions {
    /// The banks the allocator may use on `arch`: all of them, or
    /// `--psum-banks N` when `1 ≤ N ≤ numBanks`.
    pub(crate) fn num_banks(&self, arch: &arch::Arch) -> Result<u32, AllocError> {
        let max = arch.num_banks();
        match self.psum_banks {
            None => Ok(max),
            Some(n) if (1..=max).contains(&n) => Ok(n),
            Some(requested) => Err(AllocError::PsumBanks { requested, max }),
        }
    }
}

impl Default for AllocOptions {
    fn default() -> Self {
        AllocOptions {
            allocator: Allocator::Briggs,
            log: LogLevel::Log,
            spill_latency: arch::DEFAULT_SPILL_LATENCY,
            psum_banks: None,
            max_iterations: MAX_ITERATIONS,
            parallel: true,
        }
    }
}

/// Why allocation failed (the reference's diagnostics, reported as user
/// errors). The payloads name the input's tensors: a memloc-split piece
/// and a spill temporary name the tensor whose value they hold.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AllocError {
    /// The module's arch line names no known architecture.
    #[error(transparent)]
    Arch(#[from] ArchError),
    /// `--psum-banks` outside `1..=numBanks`.
    #[error("--psum-banks {requested} is out of range 1..={max}")]
    PsumBanks {
        /// What was asked for.
        requested: u32,
        /// The architecture's bank count.
        max: u32,
    },
    /// A tensor needs more banks than there are.
    #[error("{name} is too big for PSUM, requires {banks} banks with PSUM size {size}")]
    TooBig {
        /// The input's tensor.
        tensor: TensorId,
        /// The name of the node's tensor (a memloc-split piece is `NAME.K`).
        name: String,
        /// Its aligned bank count.
        banks: u32,
        /// The number of banks available.
        size: u32,
    },
    /// A PSUM tensor is read but never written.
    #[error("no first def find: {name}")]
    NoFirstDef {
        /// The input's tensor.
        tensor: TensorId,
        /// The name of the node's tensor.
        name: String,
    },
    /// A PSUM tensor is written but never read.
    #[error("no last use find: {name}")]
    NoLastUse {
        /// The input's tensor.
        tensor: TensorId,
        /// The name of the node's tensor.
        name: String,
    },
    /// An unspillable node cannot be placed and no spillable neighbor is left.
    #[error("too many reloads required: cannot place {name}; PSUM pressure peaks at {pressure} banks at point {point}")]
    TooManyReloads {
        /// The input's tensor whose value the node holds.
        tensor: TensorId,
        /// The name of the node's tensor.
        name: String,
        /// The highest demand within its interval.
        pressure: u64,
        /// The first point of its interval with that demand.
        point: u32,
    },
    /// The spill fixpoint did not finish within the iteration limit.
    #[error("PSUM allocation did not converge")]
    NotConverged,
    /// `--allocator exact` on more nodes than its search takes.
    #[error("--allocator exact takes at most {limit} PSUM nodes; this program has {nodes}")]
    ExactTooLarge {
        /// Nodes of the program (after the memloc split).
        nodes: usize,
        /// [`exact::MAX_NODES`].
        limit: usize,
    },
    /// [`Allocator::Kept`]: the program's own placement is unsound.
    #[error(transparent)]
    Kept(#[from] KeptErrors),
}

impl AllocError {
    /// The input's tensor the error names, if any.
    pub fn tensor(&self) -> Option<TensorId> {
        match self {
            AllocError::TooBig { tensor, .. }
            | AllocError::NoFirstDef { tensor, .. }
            | AllocError::NoLastUse { tensor, .. }
            | AllocError::TooManyReloads { tensor, .. } => Some(*tensor),
            _ => None,
        }
    }

    /// Where the error points in the input: the tensor it names.
    pub fn loc(&self) -> Loc {
        self.tensor().map_or(Loc::Module, Loc::Tensor)
    }

    /// The error with its tensor, one of the program being allocated,
    /// replaced by the input's that `input` gives.
    pub(crate) fn in_input(mut self, input: impl FnOnce(TensorId) -> TensorId) -> AllocError {
        if let AllocError::TooBig { tensor, .. }
        | AllocError::NoFirstDef { tensor, .. }
        | AllocError::NoLastUse { tensor, .. }
        | AllocError::TooManyReloads { tensor, .. } = &mut self
        {
            *tensor = input(*tensor);
        }
        self
    }
}

/// One PSUM tensor of the result (SPEC §6 `tensors`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TensorReport {
    /// Its name.
    pub name: String,
    /// Base bank (`null` for an unused tensor).
    pub bank: Option<u32>,
    /// Banks occupied (`aligned_bank_num`).
    pub banks: u32,
    /// `[start, end]` points of the final iteration (`null` when unused).
    pub interval: Option<[u32; 2]>,
    /// Whether it was spilled (it keeps its bank for its shortened range).
    pub spilled: bool,
}

/// What the allocator did (SPEC §6 `--report json`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AllocReport {
    /// The arch codename of the module.
    pub arch: String,
    /// Banks the allocator used (after `--psum-banks`).
    pub num_banks: u32,
    /// Every PSUM tensor of the result, in declaration order.
    pub tensors: Vec<TensorReport>,
    /// Names of the spilled tensors, in spill order.
    pub spilled: Vec<String>,
    /// Σ over iterations of the cost of the nodes spilled.
    pub spill_cost_cycles: u64,
    /// Fixpoint iterations run.
    pub iterations: u32,
    /// Best heuristic of the final iteration.
    pub best_heuristic: u32,
    /// `100 × peak_demand / numBanks` of the first iteration, two decimals.
    pub demand_pct: f64,
    /// `100 × peak banks in use / numBanks` after allocation, two decimals.
    pub utilization_pct: f64,
}

/// The allocated program and what happened.
#[derive(Clone, Debug)]
pub struct AllocOutcome {
    /// The program: split, spill code inserted, every used PSUM tensor with
    /// `bank=` (the input as it is for [`Allocator::Kept`]).
    pub module: Module,
    /// The report.
    pub report: AllocReport,
    /// The `-v` log lines (SPEC §3.9; empty at [`LogLevel::Quiet`]).
    pub log: Vec<String>,
    /// The `-vv` stream: the log lines with the trace lines interleaved
    /// (empty unless [`LogLevel::Trace`]).
    pub trace: Vec<String>,
    /// Warnings (`unused PSUM tensor NAME`).
    pub warnings: Vec<String>,
}

/// Allocates the PSUM tensors of a validated module (SPEC §3), leaving `m`
/// as it is (see [`allocate_owned`]).
///
/// ```
/// use psum::alloc::{allocate, AllocOptions};
///
/// let src = "arch trn1
///
/// psum a [128, 2048]
/// psum b [128, 2048]
/// sbuf w [128, 256] bf16
/// sbuf x [128, 1024] bf16
/// sbuf y [128, 2048]
///
/// block main {
///   matmul a <- w, x
///   act y <- a
///   matmul b <- w, x
///   act y <- b
/// }
/// ";
/// let m = psum::text::parse(src)?.module;
/// let out = allocate(&m, &AllocOptions::default())?;
/// // `a` is dead when `b` is written: both fit in bank 0, nothing spills.
/// let banks: Vec<_> = out.report.tensors.iter().map(|t| t.bank).collect();
/// assert_eq!(banks, [Some(0), Some(0)]);
/// assert!(out.report.spilled.is_empty());
/// assert!(psum::text::print(&out.module).contains("psum b [128, 2048] bank=0"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn allocate(m: &Module, opts: &AllocOptions) -> Result<AllocOutcome, AllocError> {
    allocate_owned(m.clone(), opts)
}

/// Allocates the PSUM tensors of a validated module (SPEC §3), taking it
/// over: the result program is `m` itself, split and with spill code
/// inserted (kept as it is by [`Allocator::Kept`]), so a caller that no
/// longer needs the input saves a copy.
pub fn allocate_owned(m: Module, opts: &AllocOptions) -> Result<AllocOutcome, AllocError> {
    let tracing = opts.log == LogLevel::Trace;
    match opts.allocator {
        Allocator::Briggs => briggs(m, opts, tracing),
        Allocator::BriggsReference => briggs(m, opts, true),
        Allocator::Mincost => match mincost::allocate(m, opts) {
            Ok(out) => Ok(out),
            Err(mincost::Fallback::Error(e)) => Err(e),
            Err(mincost::Fallback::Briggs {
                work,
                why,
                warnings,
            }) => {
                let mut out = briggs(*work, opts, tracing)?;
                // Why, after briggs' two opening lines.
                if opts.log != LogLevel::Quiet {
                    out.log.insert(2.min(out.log.len()), why.clone());
                }
                if tracing {
                    out.trace.insert(2.min(out.trace.len()), why);
                }
                out.warnings = warnings;
                Ok(out)
            }
        },
        Allocator::Exact => exact::allocate(m, opts),
        Allocator::Kept => kept::allocate(m, opts),
    }
}

/// The Briggs allocator: its reference implementation when `reference`.
fn briggs(m: Module, opts: &AllocOptions, reference: bool) -> Result<AllocOutcome, AllocError> {
    if reference {
        reference::allocate(m, opts)
    } else {
        briggs::allocate(m, opts)
    }
}

/// The tensor of the input each tensor of a program being allocated holds
/// the value of: a memloc-split piece, the tensor it was cut from; a spill
/// temporary, the one whose value it copies.
#[derive(Clone, Debug, Default)]
pub(crate) struct InputTensors {
    /// The input's tensor of each tensor of the split program (empty when
    /// nothing was cut: each is its own).
    pieces: Vec<TensorId>,
    /// Tensors of the split program; those after are spill temporaries.
    split: usize,
}

impl InputTensors {
    /// The input tensors of a split program of `split` tensors, `pieces`
    /// giving each one's (empty: each its own).
    pub(crate) fn new(pieces: Vec<TensorId>, split: usize) -> Self {
        InputTensors { pieces, split }
    }

    /// The input's tensor that tensor `t` of `m` (the split program, with
    /// any spill code) holds the value of.
    pub(crate) fn of(&self, m: &Module, mut t: TensorId) -> TensorId {
        // A spill temporary is written once, by the copy of what it holds.
        while t.index() >= self.split {
            let copied = m.insts.values().find_map(|i| match &i.kind {
                InstKind::Copy { dst, src } if dst.tensor == t => Some(src.tensor),
                _ => None,
            });
            match copied {
                Some(src) => t = src,
                None => break,
            }
        }
        self.pieces.get(t.index()).copied().unwrap_or(t)
    }
}
