//! The allocation context: what the fixpoint iterations share, how it
//! starts from the first analysis and how it ends in the outcome.

use super::iteration::{Buffers, Iteration};
use super::reuse::Reuse;
use crate::alloc::analysis::Analysis;
use crate::alloc::log::Log;
use crate::alloc::setup::{Finish, Start};
use crate::alloc::spill::Namer;
use crate::alloc::{AllocOptions, AllocOutcome};
use crate::entity::IdMap;
use crate::ir::TensorId;

/// Everything the iterations of one allocation share.
pub(crate) struct Context<'o> {
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
    pub pinned: IdMap<TensorId, bool>,
    /// Names the spill code's tensors.
    pub namer: Namer,
    /// The tensors spilled, in spill order.
    pub spilled: Vec<TensorId>,
    /// Σ of the cycles the spill code costs.
    pub spill_cost: u64,
}

impl<'o> Context<'o> {
    /// The context of the first iteration, from the shared `start` (every
    /// PSUM tensor's bank cleared, its log and warnings).
    pub(crate) fn new(start: Start, opts: &'o AllocOptions) -> Self {
        let Start {
            analysis: first,
            demand,
            warnings,
            log,
            parallel,
            ..
        } = start;
        let work = &first.module;
        Context {
            opts,
            pinned: IdMap::with_len(work.tensors.len(), false),
            namer: Namer::new(work),
            two_threads: parallel,
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
    pub(crate) fn finish(self, it: Iteration, iteration: u32) -> AllocOutcome {
        let Context {
            program:
                Analysis {
                    module: work,
                    arch,
                    num_banks,
                    lin,
                    live,
                    ..
                },
            two_threads,
            log,
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
        let banks = it.banks(&live, &reuse);
        let best_heuristic = it.best.index();
        let points = lin.len();
        // Only the live ranges outlive the search: the rest of its state
        // goes before the report is built.
        drop((it, reuse, buffers, pinned, namer, lin));
        let live = live.without_events();
        let finish = Finish {
            work,
            arch: &arch,
            num_banks,
            live: &live,
            points,
            banks: &banks,
            spilled: &spilled,
            spill_cost,
            iterations: iteration,
            best_heuristic,
            demand,
            log,
            warnings,
            parallel: two_threads,
        };
        finish.finish()
    }
}
