//! The start and the finish of an allocation, shared by briggs, mincost
//! and exact (the reference writes its own, SPEC §3.10): [`Start::of`]
//! analyzes the program ([`super::analyze`]), drops its input banks,
//! collects the `unused PSUM tensor` warnings and the peak demand and logs
//! the two opening lines of SPEC §3.9; [`Finish::finish`] logs the closing
//! lines, writes the banks into the program and completes the outcome with
//! the report's rows ([`super::outcome`]).

use super::analysis::{analyze, Analysis};
use super::liveness::{self, Liveness};
use super::log::{hundredths, pct_text, Log};
use super::outcome;
use super::support::threads::PARALLEL_MIN_NODES;
use super::{AllocError, AllocOptions, AllocOutcome, AllocReport};
use crate::arch::Arch;
use crate::ir::{Mem, Module, TensorId};

/// The first iteration of an allocation.
pub(super) struct Start {
    /// The first analysis, every PSUM tensor's bank cleared.
    pub analysis: Analysis,
    /// Its peak demand, in banks.
    pub peak: u64,
    /// The same in hundredths of the banks.
    pub demand: u64,
    /// Warnings of the first iteration.
    pub warnings: Vec<String>,
    /// The log: the two opening lines.
    pub log: Log,
    /// Whether the passes over the whole program may take two threads
    /// (`opts.parallel` on a large program).
    pub parallel: bool,
}

impl Start {
    /// The start of allocating `m` under `opts`.
    pub(crate) fn of(m: Module, opts: &AllocOptions) -> Result<Start, AllocError> {
        let parallel = opts.parallel && m.insts.len() >= PARALLEL_MIN_NODES;
        let mut analysis = analyze(m, opts)?;
        let work = &mut analysis.module;
        for t in work.tensors.values_mut().filter(|t| t.mem == Mem::Psum) {
            t.bank = None;
        }
        let warnings = unused_warnings(&analysis);
        let peak = liveness::peak_demand(analysis.live.nodes.as_slice(), analysis.lin.len()).0;
        let demand = hundredths(peak, analysis.num_banks);
        let mut log = Log::new(opts.log);
        log.v(" allocating PSUM".into());
        log.v(format!("{}% PSUM demand before spilling", pct_text(demand)));
        Ok(Start {
            analysis,
            peak,
            demand,
            warnings,
            log,
            parallel,
        })
    }
}

/// The warnings of a first analysis: `unused PSUM tensor NAME`.
pub(super) fn unused_warnings(a: &Analysis) -> Vec<String> {
    (a.live.unused.iter())
        .map(|&t| format!("unused PSUM tensor {}", a.module.tensor(t).name))
        .collect()
}

/// Everything an allocation that placed every node ends with.
pub(super) struct Finish<'a> {
    /// The program: split, with its spill code, banks not yet written.
    pub work: Module,
    /// Its architecture.
    pub arch: &'a Arch,
    /// Banks the allocator used.
    pub num_banks: u32,
    /// The final iteration's nodes.
    pub live: &'a Liveness,
    /// Points of the final program.
    pub points: usize,
    /// Each node's base bank.
    pub banks: &'a [Option<u32>],
    /// The tensors spilled, in spill order.
    pub spilled: &'a [TensorId],
    /// Σ of the cycles the spill code costs.
    pub spill_cost: u64,
    /// Fixpoint iterations run.
    pub iterations: u32,
    /// Best heuristic of the final iteration (0 where there is none).
    pub best_heuristic: u32,
    /// The first iteration's demand, in hundredths of the banks.
    pub demand: u64,
    /// The log so far.
    pub log: Log,
    /// Warnings of the first iteration.
    pub warnings: Vec<String>,
    /// Whether a large program's rows may be built on two threads.
    pub parallel: bool,
}

impl Finish<'_> {
    /// Logs the closing lines of SPEC §3.9 (the spill count and the
    /// utilization), writes the banks into the program and completes the
    /// outcome with its report.
    pub(crate) fn finish(self) -> AllocOutcome {
        let Finish {
            mut work,
            arch,
            num_banks,
            live,
            points,
            banks,
            spilled,
            spill_cost,
            iterations,
            best_heuristic,
            demand,
            mut log,
            warnings,
            parallel,
        } = self;
        let utilization = outcome::log_closing(&mut log, spilled.len(), live, points, num_banks);
        for (n, b) in live.nodes.values().zip(banks) {
            work.tensors[n.tensor].bank = *b;
        }
        // A large program's rows (a name each) are built in two halves at once.
        let parallel = parallel && work.tensors.len() >= PARALLEL_MIN_NODES;
        let report = AllocReport {
            arch: work.arch.clone(),
            num_banks,
            tensors: outcome::rows(&work, arch, live, spilled, parallel),
            spilled: (spilled.iter())
                .map(|&t| work.tensor(t).name.clone())
                .collect(),
            spill_cost_cycles: spill_cost,
            iterations,
            best_heuristic,
            demand_pct: demand as f64 / 100.0,
            utilization_pct: utilization as f64 / 100.0,
        };
        AllocOutcome {
            module: work,
            report,
            log: log.log,
            trace: log.trace,
            warnings,
        }
    }
}
