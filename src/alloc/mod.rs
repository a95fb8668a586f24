//! PSUM bank allocation (SPEC §3; seed 000: `PSUM_Allocator::allocate`).
//!
//! Chaitin–Briggs over banks with TensorCopy spill. [`analyze`] splits
//! reused tensors (`split`), numbers the points ([`linear`]) and computes
//! the live ranges ([`liveness`]); the allocator then iterates the spill
//! fixpoint: costs ([`costs`]), interference, simplify and select under
//! each heuristic H0..H3, keeping the best (best-of-n); if something did
//! not fit, it inserts spill code ([`spill`]) and goes again, at most
//! [`MAX_ITERATIONS`] times.
//!
//! Two implementations produce byte-identical results ([`Mode`]): fast
//! mode (`briggs`), near-linear in the number of tensors, and reference
//! mode (`reference`), the seed's quadratic data structures written
//! plainly from the SPEC, which shares with fast mode only the IR, the
//! linearization and the spill-code writer.
//!
//! The log is always collected: [`AllocOutcome::log`] holds the `-v` lines of
//! SPEC §3.9 and, when [`AllocOptions::trace`] asks for it,
//! [`AllocOutcome::trace`] the complete `-vv` stream (the same lines with the
//! trace lines interleaved), so a front end prints one or the other.
//! Reference mode writes the trace: its `cannot allocate` lines follow one
//! select over the whole graph.

mod analysis;
mod blocks;
mod briggs;
pub mod costs;
mod events;
pub mod exact;
pub mod linear;
pub mod liveness;
mod log;
mod memloc_split;
mod mincost;
mod outcome;
mod problem;
mod reference;
mod setup;
pub mod spill;
mod split_cost;
pub(crate) mod support;

pub use analysis::{analyze, Analysis};
pub use problem::{problem, AllocProblem, Buffer, Interval};
pub use split_cost::SplitSpans;

use crate::arch::{self, ArchError};
use crate::ir::{entity, Module};
use serde::Deserialize;
use serde::Serialize;

entity!(
    /// A candidate node of the interference graph, numbered in order of first definition.
    NodeId
);

/// Default limit on fixpoint iterations (SPEC §3.8: at most 32).
pub const MAX_ITERATIONS: u32 = 32;

/// Which data structures the allocator uses (SPEC §3.10).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Near-linear: sweep-built adjacency lists, heap-driven simplify.
    #[default]
    Fast,
    /// The seed's structures: lower-triangular bit-matrix, linear scans.
    Reference,
}

/// Which allocator runs (`--allocator`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Allocator {
    /// The reference's Chaitin–Briggs allocator (SPEC §3.1–3.10).
    #[default]
    Briggs,
    /// psum's own least-spill-cost sweep ([`mincost`], SPEC §3.11).
    Mincost,
    /// The least-cost allocation by exhaustive search ([`exact`], SPEC §3.11).
    Exact,
}

/// Allocator settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocOptions {
    /// Which allocator runs (Briggs by default).
    pub allocator: Allocator,
    /// Fast or reference data structures.
    pub mode: Mode,
    /// Cycles per bank moved by one TensorCopy (`--spill-latency`).
    pub spill_latency: u64,
    /// Banks the allocator may use (`--psum-banks`, 1..=numBanks); `None` for all.
    pub psum_banks: Option<u32>,
    /// Fixpoint iterations allowed before [`AllocError::NotConverged`]
    /// ([`MAX_ITERATIONS`] by default).
    pub max_iterations: u32,
    /// Collect the `-vv` trace ([`AllocOutcome::trace`]); off by default.
    /// Reference mode writes it, whatever `mode` says (same result).
    pub trace: bool,
    /// Let fast mode use one scoped helper thread on large programs: half
    /// the components, or two heuristics at once, and the passes that
    /// split in two (on by default; the output is the same either way).
    pub parallel: bool,
}

impl AllocOptions {
    /// The banks the allocator may use on `arch`: all of them, or
    /// `--psum-banks N` when `1 ≤ N ≤ numBanks`.
    pub fn num_banks(&self, arch: &arch::Arch) -> Result<u32, AllocError> {
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
            mode: Mode::Fast,
            spill_latency: arch::DEFAULT_SPILL_LATENCY,
            psum_banks: None,
            max_iterations: MAX_ITERATIONS,
            trace: false,
            parallel: true,
        }
    }
}

/// Why allocation failed (the reference's diagnostics, reported as user errors).
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
        /// The tensor.
        name: String,
        /// Its aligned bank count.
        banks: u32,
        /// The number of banks available.
        size: u32,
    },
    /// A PSUM tensor is read but never written.
    #[error("no first def find: {0}")]
    NoFirstDef(String),
    /// A PSUM tensor is written but never read.
    #[error("no last use find: {0}")]
    NoLastUse(String),
    /// An unspillable node cannot be placed and no spillable neighbor is left.
    #[error("too many reloads required: cannot place {name}; PSUM pressure peaks at {pressure} banks at point {point}")]
    TooManyReloads {
        /// The node's tensor.
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
    /// The program: split, spill code inserted, every used PSUM tensor with `bank=`.
    pub module: Module,
    /// The report.
    pub report: AllocReport,
    /// The `-v` log lines (SPEC §3.9).
    pub log: Vec<String>,
    /// The `-vv` stream: the log lines with the trace lines interleaved
    /// (empty unless [`AllocOptions::trace`]).
    pub trace: Vec<String>,
    /// Warnings (`unused PSUM tensor NAME`).
    pub warnings: Vec<String>,
}

/// Allocates the PSUM tensors of a validated module (SPEC §3), leaving `m`
/// as it is (see [`allocate_owned`]).
pub fn allocate(m: &Module, opts: &AllocOptions) -> Result<AllocOutcome, AllocError> {
    allocate_owned(m.clone(), opts)
}

/// Allocates the PSUM tensors of a validated module (SPEC §3), taking it
/// over: the result program is `m` itself, split and with spill code
/// inserted, so a caller that no longer needs the input saves a copy.
pub fn allocate_owned(m: Module, opts: &AllocOptions) -> Result<AllocOutcome, AllocError> {
    match opts.allocator {
        Allocator::Briggs => briggs_or_reference(m, opts),
        Allocator::Mincost => match mincost::allocate(m, opts) {
            Ok(out) => Ok(out),
            Err(mincost::Fallback::Error(e)) => Err(e),
            Err(mincost::Fallback::Briggs {
                work,
                why,
                warnings,
            }) => {
                let mut out = briggs_or_reference(*work, opts)?;
                out.log.insert(2.min(out.log.len()), why.clone());
                if opts.trace {
                    out.trace.insert(2.min(out.trace.len()), why);
                }
                out.warnings = warnings;
                Ok(out)
            }
        },
        Allocator::Exact => exact::allocate(m, opts),
    }
}

/// The Briggs allocator in the mode `opts` asks for: reference mode writes
/// the trace.
fn briggs_or_reference(m: Module, opts: &AllocOptions) -> Result<AllocOutcome, AllocError> {
    if opts.mode == Mode::Reference || opts.trace {
        reference::allocate(m, opts)
    } else {
        briggs::allocate(m, opts)
    }
}
