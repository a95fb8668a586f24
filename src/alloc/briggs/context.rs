//! The allocation context: what the fixpoint iterations share, how it
//! starts from the first analysis and how it ends in the outcome.

use super::iteration::{Buffers, Iteration};
use super::reuse::Reuse;
use crate::alloc::analysis::Analysis;
use crate::alloc::liveness;
use crate::alloc::log::{hundredths, pct_text, Log};
use crate::alloc::spill::Namer;
use crate::alloc::support::threads::PARALLEL_MIN_NODES;
use crate::alloc::{outcome, AllocOptions, AllocOutcome};
use crate::ir::{Mem, TensorId};

/// Everything the iterations of one allocation share.
pub struct Context<'o> {
    /// The settings.
    pub opts: &'o AllocOptions,
    /// The program (split, with the spill code so far), its points and
    /// its nodes.
    pub program: Analysis,
    /// Whether the passes over the whole program run on two threads.
    pub two_threads: bool,
    /// The `-v` lines so far.
    pub log: Log,
    /// Warnings of the first iteration.
    pub warnings: Vec<String>,
    /// The first iteration's demand, in hundredths of a percent.
    pub demand: u64,
    /// What the kept components were given.
    pub reuse: Reuse,
    /// The last dirty graph's buffers.
    pub buffers: Buffers,
    /// By tensor: the nodes spilling cannot help (reload temporaries and
    /// tensors spilled already).
    pub pinned: Vec<bool>,
    /// Names the spill code's tensors.
    pub namer: Namer,
    /// The tensors spilled, in spill order.
    pub spilled: Vec<TensorId>,
    /// Σ of the cycles the spill code costs.
    pub spill_cost: u64,
}

impl<'o> Context<'o> {
    /// The context of the first iteration of `first` (every PSUM tensor's
    /// bank cleared), with its log and warnings.
    pub fn new(mut first: Analysis, opts: &'o AllocOptions) -> Self {
        let mut log = Log::new(false);
        log.v(" allocating PSUM".into());
        let work = &mut first.module;
        for t in work.tensors.iter_mut().filter(|t| t.mem == Mem::Psum) {
            t.bank = None;
        }
        let live = &first.live;
        let warnings = (live.unused.iter())
            .map(|&t| format!("unused PSUM tensor {}", work.tensor(t).name))
            .collect();
        let peak = liveness::peak_demand(&live.nodes, first.lin.len()).0;
        let demand = hundredths(peak, first.num_banks);
        log.v(format!("{}% PSUM demand before spilling", pct_text(demand)));
        Context {
            opts,
            pinned: vec![false; work.tensors.len()],
            namer: Namer::new(work),
            two_threads: opts.parallel && work.insts.len() >= PARALLEL_MIN_NODES,
            program: first,
            log,
            warnings,
            demand,
            reuse: Reuse::default(),
            buffers: Buffers::default(),
            spilled: Vec::new(),
            spill_cost: 0,
        }
    }

    /// The outcome of iteration `iteration`, `it`, which placed every
    /// node: the banks written into the program, the log completed, and
    /// the report (on two threads, half its rows on a helper thread).
    pub fn finish(self, it: Iteration, iteration: u32) -> AllocOutcome {
        let Context {
            program:
                Analysis {
                    module: work,
                    arch,
                    num_banks,
                    lin,
                    live,
                },
            two_threads,
            mut log,
            warnings,
            demand,
            reuse,
            buffers,
            pinned,
            namer,
            spilled,
            spill_cost,
            ..
        } = self;
        let utilization =
            outcome::log_closing(&mut log, spilled.len(), &live, lin.len(), num_banks);
        let banks = it.banks(&live, &reuse);
        let best_heuristic = it.best.index();
        // Only the live ranges outlive the search: the rest of its state
        // goes before the report is built.
        drop((it, reuse, buffers, pinned, namer, lin));
        let live = live.without_events();
        let mut report = outcome::report(&work, num_banks, &spilled, spill_cost, iteration, demand);
        report.best_heuristic = best_heuristic;
        report.utilization_pct = utilization as f64 / 100.0;
        // A large program's rows (a name each) are built in two halves at once.
        let parallel = two_threads && work.tensors.len() >= PARALLEL_MIN_NODES;
        outcome::complete(
            work, &arch, &live, &banks, &spilled, report, log, warnings, parallel,
        )
    }
}
