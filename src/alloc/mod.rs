//! PSUM bank allocation (SPEC §3; seed 000: `PSUM_Allocator::allocate`).
//!
//! Chaitin–Briggs over banks with TensorCopy spill. The driver splits reused
//! tensors once ([`split`]), then iterates the spill fixpoint: number the
//! points ([`linear`]), compute live ranges ([`liveness`]), build the
//! interference graph ([`interference`]) and spill costs ([`costs`]), run
//! [`simplify`] and [`select`] under each heuristic H0..H3 and keep the best
//! (best-of-n); if something did not fit, insert spill code ([`spill`]) and
//! go again, at most [`MAX_ITERATIONS`] times.
//!
//! Both [`Mode`]s produce byte-identical results; reference mode keeps the
//! seed's quadratic data structures, fast mode is near-linear in the number
//! of tensors.
//!
//! Fast mode runs best-of-n only on the components of the interference
//! graph that changed since the previous iteration ([`reuse`]), and runs
//! simplify and select on them a few components at a time, so each run
//! stays in cache: on two threads, each takes half of those parts and
//! runs every heuristic on a part before the next (one large part instead
//! gets two heuristics at once). The runs of one part share their start
//! (simplify's drain of `lo`, which no heuristic decides), and the runs
//! after H0 leave out the components whose selection must be H0's
//! ([`simplify::Budgets::mark_agreement`]) and take H0's. A large part,
//! such as iteration 1's whole graph, falls apart as simplify removes its
//! nodes, and its drain goes on range by range in the same way. None of
//! this applies when the trace is asked for: its `cannot allocate` lines
//! follow the global pop order, which only a run over the whole graph
//! gives.
//!
//! The log is always collected: [`AllocOutcome::log`] holds the `-v` lines of
//! SPEC §3.9 and, when [`AllocOptions::trace`] asks for it,
//! [`AllocOutcome::trace`] the complete `-vv` stream (the same lines with the
//! trace lines interleaved), so a front end prints one or the other.

pub mod costs;
pub mod interference;
pub mod linear;
pub mod liveness;
mod log;
mod reference;
pub mod reuse;
pub mod select;
pub mod simplify;
pub mod spill;
pub mod split;

use crate::arch::{self, ArchError};
use crate::ir::{entity, Mem, Module, TensorId};
use costs::Cost;
use interference::{AdjLists, Interference};
use linear::Linear;
use liveness::{AccessTable, Liveness, Source};
use log::{hundredths, pct_text, Log};
use reuse::{Plan, Reuse};
use select::Selection;
use serde::{Deserialize, Serialize};
use simplify::{Budgets, Heuristic, SlotBuffer};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};

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

/// Allocator settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocOptions {
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

/// The analysis and best-of-n outcome of one fixpoint iteration. The
/// graph, costs and selections cover the dirty nodes of `plan` (indexed
/// by their position in `plan.dirty`); the others are reused.
struct Iteration {
    lin: Linear,
    live: Liveness,
    plan: Plan,
    graph: Interference,
    costs: Vec<Cost>,
    best: Heuristic,
    /// The selection of each heuristic run over the dirty nodes, H0 first.
    sels: Vec<Selection>,
    /// The buffers of the dirty nodes and their budgets, for the next
    /// iteration.
    nodes: Vec<liveness::Node>,
    slots: SlotBuffer,
}

impl Iteration {
    /// The winning heuristic's selection.
    fn sel(&self) -> &Selection {
        &self.sels[self.best.index() as usize]
    }

    /// Whether the winning heuristic placed every node.
    fn placed_all(&self) -> bool {
        self.sel().unplaced.is_empty() && self.plan.unplaced[self.best.index() as usize].is_empty()
    }

    /// The live ranges without their events, dropping the rest.
    fn into_ranges(self) -> Liveness {
        self.live.without_events()
    }

    /// Every node's base bank under the winning heuristic.
    fn banks(&self, reuse: &Reuse) -> Vec<Option<u32>> {
        let sel = self.sel();
        let h = self.best.index() as usize;
        let mut dirty = self.plan.dirty.iter().zip(&sel.bank).peekable();
        (self.live.nodes.iter().enumerate())
            .map(|(v, n)| match dirty.next_if(|(d, _)| d.index() == v) {
                Some((_, &b)) => b.map(u32::from),
                None => reuse.bank(n.tensor, h),
            })
            .collect()
    }
}

/// The buffers of one iteration's dirty graph (its nodes, their costs,
/// adjacency lists and budgets), handed on to the next iteration: each is
/// as large as the dirty graph, and fresh ones would cost a page fault per
/// 4 KiB every iteration.
#[derive(Default)]
struct Buffers {
    nodes: Vec<liveness::Node>,
    costs: Vec<Cost>,
    lists: AdjLists,
    slots: SlotBuffer,
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
    if opts.mode == Mode::Reference || opts.trace {
        return reference::allocate(m, opts);
    }
    let arch = arch::lookup(&m.arch)?;
    let num_banks = opts.num_banks(&arch)?;
    let mut log = Log::new(opts.trace);
    let reusing = opts.mode == Mode::Fast && !opts.trace;
    let mut reuse = Reuse::default();
    log.v(" allocating PSUM".into());
    // The points and the access table of a large program, side by side.
    let two_threads =
        opts.parallel && opts.mode == Mode::Fast && m.insts.len() >= PARALLEL_MIN_NODES;
    let (first_table, mut lin) = join(two_threads, || AccessTable::new(&m), || Linear::new(&m));
    let (mut work, first) = split::memloc_split_analyzed(m, &lin, first_table, two_threads);
    // Fast mode's iteration 1 reads the split's events when it hands them
    // over; reference mode, the independent check, reads every access.
    let (mut table, mut spent, mut current) = match first {
        split::Accesses::Events(events) if opts.mode == Mode::Fast => {
            (None, Liveness::of_events(events), true)
        }
        split::Accesses::Events(_) => (None, Liveness::default(), false),
        split::Accesses::Table(table) => (Some(table), Liveness::default(), false),
    };
    for t in work.tensors.iter_mut().filter(|t| t.mem == Mem::Psum) {
        t.bank = None;
    }
    let mut pinned = vec![false; work.tensors.len()];
    let mut namer = spill::Namer::new(&work);
    let mut spilled: Vec<TensorId> = Vec::new();
    let mut spill_cost = 0u64;
    let mut warnings = Vec::new();
    let mut demand = 0;
    let mut shift = None;
    let mut buffers = Buffers::default();
    for iteration in 1..=opts.max_iterations {
        let last = std::mem::take(&mut spent);
        // Fast mode reads every instruction's accesses once (or takes the
        // events the split found in them), then follows the spill code
        // (dropped once read); reference mode reads them every iteration.
        let live = match shift.take() {
            Some(shift) => {
                let (m, banks) = (&work, num_banks);
                liveness::live_ranges_after(m, &shift, &mut lin, &arch, banks, last, two_threads)?
            }
            None => {
                let read;
                let source = if std::mem::take(&mut current) {
                    Source::Current
                } else {
                    read = table.take().unwrap_or_else(|| AccessTable::new(&work));
                    Source::Table(&read)
                };
                liveness::live_ranges_with(&work, source, &lin, &arch, num_banks, last)?
            }
        };
        if iteration == 1 {
            warnings = (live.unused.iter())
                .map(|&t| format!("unused PSUM tensor {}", work.tensor(t).name))
                .collect();
            demand = hundredths(liveness::peak_demand(&live.nodes, lin.len()).0, num_banks);
            log.v(format!("{}% PSUM demand before spilling", pct_text(demand)));
        }
        let plan = if reusing {
            reuse.plan(&live.nodes, lin.len(), lin.has_loops())
        } else {
            Plan::all(live.nodes.len())
        };
        let mut it = best_of_n(
            &work,
            std::mem::take(&mut lin),
            live,
            plan,
            std::mem::take(&mut buffers),
            num_banks,
            opts,
            &pinned,
            &mut log,
        );
        log.v(format!("best PSUM heuristic = {}", it.best));
        if it.placed_all() {
            log.v(format!(
                "number of tensors spilled from PSUM = {}",
                spilled.len()
            ));
            let used = liveness::peak_demand(&it.live.nodes, it.lin.len()).0;
            let utilization = hundredths(used, num_banks);
            log.v(format!(
                "{}% PSUM utilization after allocation",
                pct_text(utilization)
            ));
            let report = AllocReport {
                arch: work.arch.clone(),
                num_banks,
                tensors: Vec::new(),
                spilled: spilled
                    .iter()
                    .map(|&t| work.tensor(t).name.clone())
                    .collect(),
                spill_cost_cycles: spill_cost,
                iterations: iteration,
                best_heuristic: it.best.index(),
                demand_pct: demand as f64 / 100.0,
                utilization_pct: utilization as f64 / 100.0,
            };
            let banks = it.banks(&reuse);
            // Only the live ranges outlive the search: the rest of its
            // state goes before the report is built.
            drop((reuse, pinned, namer, shift));
            let live = it.into_ranges();
            let parallel = two_threads && work.tensors.len() >= PARALLEL_MIN_NODES;
            return Ok(finish(
                work, &arch, &live, &banks, &spilled, report, log, warnings, parallel,
            ));
        }
        let (chosen, cycles) = spill_set(&work, &it, &reuse)?;
        log.v(format!("spilling from PSUM cost about {cycles} cycles"));
        spill_cost = spill_cost.saturating_add(cycles);
        spilled.extend(chosen.iter().map(|v| it.live.nodes[v.index()].tensor));
        // A spill set that is a large share of the dirty graph touches
        // most of its components, so the next dirty graph is as large and
        // takes this one's buffers. A small one leaves most of them clean:
        // then the buffers go now, before the spill code grows the program
        // to its largest.
        let keep = chosen.len() >= it.plan.dirty.len() / KEEP_BUFFERS_SPILL_SHARE;
        if !keep {
            it.nodes = Vec::new();
            it.slots = SlotBuffer::default();
        }
        // Recording what to reuse and inserting the spill code touch
        // disjoint state: on a large graph they run side by side.
        let big = opts.parallel && it.plan.dirty.len() >= PARALLEL_MIN_NODES;
        let record = || {
            if reusing {
                let sels = [0, 1, 2, 3].map(|h| &it.sels[h]);
                reuse.record(&it.live.nodes, &it.plan, sels, &it.costs, &chosen);
            }
        };
        let insert = || {
            let plan = |ids: Range<usize>| costs::spill_plans(&it.lin, &it.live, &chosen[ids]);
            let (early, late) = in_halves(big, chosen.len(), plan);
            spill::insert_spill_code(&mut work, &it.lin, &[early, late], &mut namer, big)
        };
        let ((), moved) = join(big && reusing, record, insert);
        pinned.resize(work.tensors.len(), false);
        for &v in &chosen {
            pinned[it.live.nodes[v.index()].tensor.index()] = true;
        }
        for r in &moved.reloads {
            pinned[r.tensor.index()] = true;
        }
        // The next iteration's points and live ranges, in this one's buffers
        // (fast mode renumbers the points as it moves the nodes).
        lin = it.lin;
        buffers = if keep {
            Buffers {
                nodes: it.nodes,
                costs: it.costs,
                lists: it.graph.into_lists(),
                slots: it.slots,
            }
        } else {
            Buffers::default()
        };
        if opts.mode == Mode::Fast {
            shift = Some(moved);
        } else {
            lin.renumber(&work);
        }
        spent = it.live;
    }
    Err(AllocError::NotConverged)
}

/// One iteration's analysis and the best of H0..H3 over the dirty nodes of
/// `plan` (ties: lowest; a score of 0 ends the search at once). Each
/// heuristic's score is its dirty nodes' plus the cached cost of the
/// reused components' spill sets (`plan.score`). Fast mode does not rerun
/// simplify and select for a heuristic that orders the nodes exactly as H0
/// does ([`Heuristic::same_order_as_h0`]): its selection is H0's, so it
/// logs the same lines and, tying, cannot be chosen.
#[allow(clippy::too_many_arguments)]
fn best_of_n(
    work: &Module,
    lin: Linear,
    live: Liveness,
    plan: Plan,
    buffers: Buffers,
    num_banks: u32,
    opts: &AllocOptions,
    pinned: &[bool],
    log: &mut Log,
) -> Iteration {
    let Buffers {
        mut nodes,
        costs,
        lists,
        slots,
    } = buffers;
    nodes.clear();
    nodes.extend(plan.dirty.iter().map(|v| live.nodes[v.index()]));
    let parallel = opts.parallel && opts.mode == Mode::Fast && nodes.len() >= PARALLEL_MIN_NODES;
    let (graph, costs) = join(
        parallel,
        || Interference::build_in(&nodes, opts.mode, lists),
        || costs::find_costs_of(&lin, &live, &plan.dirty, pinned, opts.spill_latency, costs),
    );
    let mut init = Budgets::new_in(&graph, &nodes, &costs, num_banks, parallel, slots);
    // A reusing plan knows the components, so the runs after H0 can leave
    // out those that would only repeat it.
    let agreeing =
        opts.mode == Mode::Fast && !plan.comp.is_empty() && init.mark_agreement(&plan.comp);
    let uniform = nodes.windows(2).all(|w| w[0].banks == w[1].banks);
    let shortcut =
        |h: Heuristic| opts.mode == Mode::Fast && h != Heuristic::H0 && h.same_order_as_h0(uniform);
    let todo: Vec<Heuristic> = Heuristic::ALL
        .into_iter()
        .filter(|&h| !shortcut(h))
        .collect();
    let parts = parts(&plan, PART_MIN_NODES);
    let dirty = Graph {
        g: &graph,
        nodes: &nodes,
        init: &init,
        num_banks,
        mode: opts.mode,
        // The trace's `cannot allocate` lines follow the global pop order.
        split_min: if opts.trace {
            usize::MAX
        } else {
            SPLIT_MIN_NODES
        },
    };
    // The whole graph's score: the dirty nodes' plus the reused spill sets'.
    let score_of = |h: Heuristic, sel: &Selection| {
        sel.score.plus(Cost::Finite(plan.score[h.index() as usize]))
    };
    let zero = |h: Heuristic, sel: &Selection| score_of(h, sel) == Cost::ZERO;
    let mut computed = if parallel && parts.len() == 1 {
        let run = |h: Heuristic, scratch: &mut simplify::Scratch| {
            let mut sels = dirty.select_parts(&[h], &parts, None, scratch);
            sels.pop().expect("one selection per heuristic")
        };
        run_heuristics(&todo, run, zero)
    } else {
        dirty.run_parts(&todo, &parts, agreeing, parallel, zero)
    };
    let mut sels: Vec<Selection> = Vec::with_capacity(Heuristic::ALL.len());
    let mut best: Option<(Heuristic, Cost)> = None;
    for h in Heuristic::ALL {
        log.v(format!("best-of-n loop, heuristic = {h}"));
        log.vv(|| format!("            lo = {}", init.lo));
        log.vv(|| format!("            hi = {}", init.hi));
        log.vv(|| format!("            inf = {}", init.inf));
        log.vv(|| format!("            total = {}", live.nodes.len()));
        let sel = match computed[h.index() as usize].take() {
            Some(sel) => sel,
            None => sels[0].clone(),
        };
        for v in &sel.unplaced {
            let t = nodes[v.index()].tensor;
            log.vv(|| format!(" cannot allocate {}", work.tensor(t).name));
        }
        let score = score_of(h, &sel);
        log.v(format!("PSUM score = {score} (lower is better)"));
        if best.is_none_or(|(_, b)| score < b) {
            best = Some((h, score));
        }
        sels.push(sel);
        if score == Cost::ZERO {
            break;
        }
    }
    let (best, _) = best.expect("at least one heuristic ran");
    let slots = init.into_buffer();
    Iteration {
        lin,
        live,
        plan,
        graph,
        costs,
        best,
        sels,
        nodes,
        slots,
    }
}

/// An iteration hands its buffers on when its spill set is at least this
/// fraction (1/N) of its dirty nodes. At 1M tensors the shares are 41%,
/// 10%, 2% and 0.5%, and the next dirty graphs 179%, 116%, 26% and 6% of
/// each one.
const KEEP_BUFFERS_SPILL_SHARE: usize = 16;

/// Dirty graphs smaller than this run their heuristics on one thread.
const PARALLEL_MIN_NODES: usize = 1 << 14;

/// The smallest part simplify and select run on, but for the last one.
const PART_MIN_NODES: usize = 256;

/// Simplify splits what remains of a part this large as nodes leave
/// ([`simplify`]'s drain), into ranges of 1/16 of it or more. A smaller
/// graph is in cache already: at 100k nodes splitting gained nothing,
/// at 1M it saves a tenth of iteration 1's simplify and select.
const SPLIT_MIN_NODES: usize = 1 << 17;

/// The parts of `plan`'s dirty nodes (by their position in `plan.dirty`)
/// that simplify and select run on one by one: runs of whole components,
/// each of at least `min` nodes but the last; all of them at once when the
/// plan has no components ([`Plan::all`]).
fn parts(plan: &Plan, min: usize) -> Vec<Range<usize>> {
    let n = plan.dirty.len();
    if plan.comp.is_empty() {
        return std::iter::once(0..n).collect();
    }
    let comp = |i: usize| plan.comp[i];
    let mut parts = Vec::new();
    let mut start = 0;
    for i in 1..=n {
        if i == n || (i - start >= min && comp(i) != comp(i - 1)) {
            parts.push(start..i);
            start = i;
        }
    }
    parts
}

/// What simplify and select read of one iteration's dirty graph.
#[derive(Clone, Copy)]
struct Graph<'a> {
    g: &'a Interference,
    nodes: &'a [liveness::Node],
    init: &'a Budgets<'a>,
    num_banks: u32,
    mode: Mode,
    /// Fast mode's drain splits what remains of a part of this many nodes
    /// or more into ranges it drains one by one (`usize::MAX`: never, so
    /// the stack keeps the order of one drain).
    split_min: usize,
}

impl Graph<'_> {
    /// Simplify and select under each of `hs`, part by part (each part
    /// closed under adjacency, and read once for all of `hs`), into one
    /// selection of every node per heuristic, in the buffers of `scratch`.
    /// Given `h0`, H0's selection, a heuristic takes H0's banks of the
    /// nodes that agree with it ([`Budgets::agrees`]) and runs on the
    /// others. The nodes outside `parts` stay unselected.
    fn select_parts(
        &self,
        hs: &[Heuristic],
        parts: &[Range<usize>],
        h0: Option<&Selection>,
        scratch: &mut simplify::Scratch,
    ) -> Vec<Selection> {
        let mut sels: Vec<Selection> = hs
            .iter()
            .map(|_| Selection::new(self.nodes.len()))
            .collect();
        let mut held = Vec::new();
        for part in parts {
            let each = |i: usize, stack: &[NodeId]| {
                let sel = &mut sels[i];
                select::select(self, stack, part.clone(), &mut held, sel);
                if let Some(h0) = h0 {
                    let agrees = |u| self.init.agrees(u, hs[i]);
                    sel.take_from(h0, part.clone(), agrees, self.init.costs());
                }
            };
            simplify::simplify_each(self, hs, part.clone(), h0.is_some(), scratch, each);
        }
        sels
    }

    /// Runs the heuristics of `todo` (H0 first) over `parts`: H0 first,
    /// then, unless it scores `zero`, the others part by part, so each
    /// part is read in cache once for all of them. With `agreeing`, the
    /// others take H0's selection of the nodes that agree with it. In
    /// `parallel`, given two parts or more, two threads each take whole
    /// parts, about half the nodes. Each selection is the one
    /// [`Graph::select_parts`] makes of the heuristic alone over all the
    /// parts.
    fn run_parts(
        &self,
        todo: &[Heuristic],
        parts: &[Range<usize>],
        agreeing: bool,
        parallel: bool,
        zero: impl Fn(Heuristic, &Selection) -> bool,
    ) -> [Option<Selection>; 4] {
        let n = self.nodes.len();
        let halves = |hs: &[Heuristic], h0: Option<&Selection>| {
            let run = |parts| self.select_parts(hs, parts, h0, &mut simplify::Scratch::default());
            if !parallel || parts.len() < 2 {
                return run(parts);
            }
            let cut = parts
                .partition_point(|p| p.end <= n / 2)
                .clamp(1, parts.len() - 1);
            let (first, second) = parts.split_at(cut);
            let mid = second[0].start;
            let (theirs, mine) = join(true, || run(second), || run(first));
            (mine.into_iter().zip(theirs))
                .map(|(mut sel, other)| {
                    sel.bank[mid..].copy_from_slice(&other.bank[mid..]);
                    sel.unplaced.extend(other.unplaced);
                    sel.score = sel.score.plus(other.score);
                    sel
                })
                .collect::<Vec<_>>()
        };
        let mut out: [Option<Selection>; 4] = Default::default();
        let (h0, rest) = todo.split_first().expect("H0 always runs");
        let sel = halves(&[*h0], None)
            .pop()
            .expect("one selection per heuristic");
        if !zero(*h0, &sel) {
            for (h, other) in rest.iter().zip(halves(rest, agreeing.then_some(&sel))) {
                out[h.index() as usize] = Some(other);
            }
        }
        out[h0.index() as usize] = Some(sel);
        out
    }
}

/// Runs `f` on the two halves of `0..n`, the later on a scoped helper
/// thread when `parallel`; on one thread, on `0..n` and then on the empty
/// `n..n`. Returns the results for the earlier half and the later one.
fn in_halves<T: Send>(parallel: bool, n: usize, f: impl Fn(Range<usize>) -> T + Sync) -> (T, T) {
    let mid = if parallel { n / 2 } else { n };
    let (late, early) = join(parallel, || f(mid..n), || f(0..mid));
    (early, late)
}

/// Runs `f` on the two halves of `items`, each with the index of its first
/// item, the later on a scoped helper thread when `parallel`; on one
/// thread, on all of `items` and then on none. Returns the results for the
/// earlier half and the later one.
fn in_halves_mut<T: Send, R: Send>(
    parallel: bool,
    items: &mut [T],
    f: impl Fn(usize, &mut [T]) -> R + Sync,
) -> (R, R) {
    let mid = if parallel {
        items.len() / 2
    } else {
        items.len()
    };
    let (early, late) = items.split_at_mut(mid);
    let (late, early) = join(parallel, || f(mid, late), || f(0, early));
    (early, late)
}

/// Runs `a` and `b`, `a` on a scoped helper thread when `parallel`, and
/// returns both results.
fn join<A: Send, B>(parallel: bool, a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B) -> (A, B) {
    if !parallel {
        return (a(), b());
    }
    std::thread::scope(|s| {
        let helper = s.spawn(a);
        let b = b();
        (helper.join().expect("a helper thread panicked"), b)
    })
}

/// Runs `run` for each heuristic of `todo` (H0 first, ascending) on two
/// threads, until one ascending run scores `zero` and ends best-of-n: a
/// second thread takes the later half from the last one down while this
/// thread takes the first half; it stops at its next heuristic once this
/// one has seen a zero (its later heuristics are then never logged).
/// Each thread's runs share one set of simplify buffers. Returns the
/// selections by heuristic index.
fn run_heuristics(
    todo: &[Heuristic],
    run: impl Fn(Heuristic, &mut simplify::Scratch) -> Selection + Sync,
    zero: impl Fn(Heuristic, &Selection) -> bool,
) -> [Option<Selection>; 4] {
    let mut out: [Option<Selection>; 4] = Default::default();
    let (mine, theirs) = todo.split_at(todo.len().div_ceil(2));
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let helper = (!theirs.is_empty()).then(|| {
            s.spawn(|| {
                let mut scratch = simplify::Scratch::default();
                (theirs.iter().rev())
                    .take_while(|_| !stop.load(AtomicOrdering::Relaxed))
                    .map(|&h| (h, run(h, &mut scratch)))
                    .collect::<Vec<_>>()
            })
        });
        let mut scratch = simplify::Scratch::default();
        for &h in mine {
            let sel = run(h, &mut scratch);
            let done = zero(h, &sel);
            out[h.index() as usize] = Some(sel);
            if done {
                stop.store(true, AtomicOrdering::Relaxed);
                break;
            }
        }
        if let Some(helper) = helper {
            let theirs = helper.join().expect("a heuristic thread panicked");
            for (h, sel) in theirs {
                out[h.index() as usize] = Some(sel);
            }
        }
    });
    out
}

/// The nodes to spill, ascending, and what spilling them costs: every
/// finite-cost node of the spill set, and the finite-cost neighbors of
/// each unspillable one (SPEC §3.8 **\[decision\]**); an unspillable node
/// with none is fatal (the first such by id, which does not depend on the
/// order the parts were selected in). The reused part of the spill set is
/// all finite.
fn spill_set(
    work: &Module,
    it: &Iteration,
    reuse: &Reuse,
) -> Result<(Vec<NodeId>, u64), AllocError> {
    let mut chosen = vec![false; it.plan.dirty.len()];
    let mut stuck: Option<NodeId> = None;
    for &v in &it.sel().unplaced {
        if it.costs[v.index()] != Cost::Inf {
            chosen[v.index()] = true;
            continue;
        }
        let mut any = false;
        it.graph.for_each_neighbor(v, |u| {
            if it.costs[u.index()] != Cost::Inf {
                chosen[u.index()] = true;
                any = true;
            }
        });
        if !any {
            stuck = Some(stuck.map_or(v, |s| s.min(v)));
        }
    }
    if let Some(v) = stuck {
        let n = &it.live.nodes[it.plan.dirty[v.index()].index()];
        let (pressure, point) = liveness::peak_in(&it.live.nodes, it.lin.len(), n.start, n.end);
        return Err(AllocError::TooManyReloads {
            name: work.tensor(n.tensor).name.clone(),
            pressure,
            point,
        });
    }
    let reused = &it.plan.unplaced[it.best.index() as usize];
    let picked = || (0..chosen.len()).filter(|&i| chosen[i]);
    let cycles = (picked().filter_map(|i| it.costs[i].finite()))
        .chain(
            reused
                .iter()
                .map(|v| reuse.cost(it.live.nodes[v.index()].tensor)),
        )
        .fold(0u64, u64::saturating_add);
    let mut all: Vec<NodeId> = picked().map(|i| it.plan.dirty[i]).collect();
    all.extend(reused);
    all.sort_unstable();
    Ok((all, cycles))
}

/// Writes the banks into the module and completes the report (in
/// `parallel`, half its rows on a helper thread).
#[allow(clippy::too_many_arguments)]
fn finish(
    mut work: Module,
    arch: &arch::Arch,
    live: &Liveness,
    banks: &[Option<u32>],
    spilled: &[TensorId],
    mut report: AllocReport,
    log: Log,
    warnings: Vec<String>,
    parallel: bool,
) -> AllocOutcome {
    for (n, b) in live.nodes.iter().zip(banks) {
        work.tensors[n.tensor.index()].bank = *b;
    }
    let node_of = live.node_index(work.tensors.len());
    let mut was_spilled = vec![false; work.tensors.len()];
    for t in spilled {
        was_spilled[t.index()] = true;
    }
    let rows = |range: Range<usize>| {
        let psum = range.filter(|&i| work.tensors[i].mem == Mem::Psum);
        psum.map(|i| {
            let t = &work.tensors[i];
            TensorReport {
                name: t.name.clone(),
                bank: t.bank,
                banks: arch.aligned_bank_num(arch.bank_num(u64::from(t.bytes))),
                interval: node_of[i].map(|v| {
                    let n = &live.nodes[v.index()];
                    [n.start, n.end]
                }),
                spilled: was_spilled[i],
            }
        })
        .collect::<Vec<_>>()
    };
    // A large program's rows (a name each) are built in two halves at once.
    let (mut tensors, rest) = in_halves(parallel, work.tensors.len(), rows);
    tensors.extend(rest);
    report.tensors = tensors;
    AllocOutcome {
        module: work,
        report,
        log: log.log,
        trace: log.trace,
        warnings,
    }
}

/// Sorts smaller than this go by comparison.
const RADIX_MIN: usize = 1 << 14;

/// Reorders `items` stably by `key`, a radix sort of (key, index) pairs
/// ([`radix_sort`]) and one gather; returns those pairs, sorted. Large
/// sorts by comparison miss a branch per comparison.
fn radix_sort_by<T: Copy>(items: &mut Vec<T>, key: impl Fn(&T) -> u64) -> Vec<(u64, u32)> {
    let mut keys: Vec<(u64, u32)> = (items.iter().enumerate())
        .map(|(i, x)| (key(x), i as u32))
        .collect();
    radix_sort(&mut keys);
    *items = keys.iter().map(|&(_, i)| items[i as usize]).collect();
    keys
}

/// Sorts `items` stably by `key`: by [`radix_sort_by`] when there are
/// many and they are not in order already.
fn sort_by_u64<T: Copy>(items: &mut Vec<T>, key: impl Fn(&T) -> u64) {
    if items.is_sorted_by_key(&key) {
        return;
    }
    if items.len() < RADIX_MIN {
        items.sort_by_key(key);
    } else {
        radix_sort_by(items, key);
    }
}

/// A stable least-significant-digit radix sort of `keys` by their first
/// field, 16 bits a pass; a pass whose digit is the same everywhere is
/// skipped. Keys of a few distinct values go by [`sort_few`] instead.
fn radix_sort(keys: &mut Vec<(u64, u32)>) {
    if sort_few(keys) {
        return;
    }
    let mut other = vec![(0, 0); keys.len()];
    let mut count = vec![0usize; 1 << 16];
    for shift in (0..64).step_by(16) {
        let digit = |k: &(u64, u32)| ((k.0 >> shift) & 0xffff) as usize;
        count.fill(0);
        for k in keys.iter() {
            count[digit(k)] += 1;
        }
        if count.contains(&keys.len()) {
            continue;
        }
        let mut at = 0;
        for c in count.iter_mut() {
            let n = *c;
            *c = at;
            at += n;
        }
        for k in keys.iter() {
            let d = digit(k);
            other[count[d]] = *k;
            count[d] += 1;
        }
        std::mem::swap(keys, &mut other);
    }
}

/// Slots of [`sort_few`]'s table of distinct keys, a power of two; it
/// gives up at half full.
const FEW_SLOTS: usize = 1 << 12;

/// Sorts `keys` stably by their first field when it takes at most
/// `FEW_SLOTS / 2` distinct values (simplify's initial `hi` keys take a
/// few hundred among a million nodes): each key is counted in an
/// open-addressed table, the distinct ones are sorted, and one pass
/// places every pair. Returns false, `keys` untouched, on more values.
fn sort_few(keys: &mut Vec<(u64, u32)>) -> bool {
    const FREE: (u64, u32) = (0, 0);
    // (key, count); a count of 0 marks a free slot.
    let mut table = vec![FREE; FEW_SLOTS];
    let mut slot_of: Vec<u16> = Vec::with_capacity(keys.len());
    let mut distinct = 0;
    for &(k, _) in keys.iter() {
        let mut h =
            (k.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - FEW_SLOTS.trailing_zeros())) as usize;
        loop {
            let e = &mut table[h];
            if e.1 == 0 {
                distinct += 1;
                if distinct > FEW_SLOTS / 2 {
                    return false;
                }
                *e = (k, 1);
                break;
            }
            if e.0 == k {
                e.1 += 1;
                break;
            }
            h = (h + 1) % FEW_SLOTS;
        }
        slot_of.push(h as u16);
    }
    let mut used: Vec<usize> = (0..FEW_SLOTS).filter(|&h| table[h].1 > 0).collect();
    used.sort_unstable_by_key(|&h| table[h].0);
    // Each slot's count becomes where its next pair goes.
    let mut at = 0;
    for &h in &used {
        let n = table[h].1;
        table[h].1 = at;
        at += n;
    }
    let mut sorted = vec![(0, 0); keys.len()];
    for (&k, &h) in keys.iter().zip(&slot_of) {
        let next = &mut table[usize::from(h)].1;
        sorted[*next as usize] = k;
        *next += 1;
    }
    *keys = sorted;
    true
}

/// Hints the CPU to bring `s[i]` into the cache (no-op when `i` is out of
/// range or off x86-64). The allocator's picks jump across million-node
/// arrays in an order it knows a few steps ahead.
#[inline]
fn prefetch<T>(s: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(x) = s.get(i) {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch reads nothing and cannot fault; the address
        // is that of a live element.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((x as *const T).cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (s, i);
}

#[cfg(test)]
mod tests {
    use super::*;
    use liveness::Node;

    /// Random intervals in order of start, with gaps between some, and
    /// random costs (one in eight unspillable).
    fn random_graph(rng: &mut crate::gen::random::Rng) -> (Vec<Node>, Vec<Cost>) {
        let n = 1 + rng.below(120) as usize;
        let mut start = 0;
        let nodes: Vec<Node> = (0..n)
            .map(|i| {
                start += rng.below(3) as u32;
                let end = start + rng.below(6) as u32;
                Node::spanning(i, start, end, [1, 1, 2, 4][rng.below(4) as usize])
            })
            .collect();
        let costs = (0..n)
            .map(|_| match rng.below(8) {
                0 => Cost::Inf,
                _ => Cost::Finite(rng.below(50)),
            })
            .collect();
        (nodes, costs)
    }

    /// The radix sort orders (key, index) pairs as a stable sort does,
    /// with keys of a few values (counted), of as many values as the
    /// counting table takes, of one more (a radix sort), and of all kinds.
    #[test]
    fn radix_sort_is_a_stable_sort() {
        let mut rng = crate::gen::random::Rng::new(13);
        for values in [1, 7, FEW_SLOTS / 2, FEW_SLOTS / 2 + 1, usize::MAX] {
            let n = 3 * FEW_SLOTS + rng.below(100) as usize;
            let pool: Vec<u64> = (0..values.min(n)).map(|_| rng.next_u64()).collect();
            let mut keys: Vec<(u64, u32)> = (0..n as u32)
                .map(|i| match values {
                    usize::MAX => (rng.next_u64() >> rng.below(64), i),
                    _ => (pool[i as usize % pool.len()], i),
                })
                .collect();
            let few = sort_few(&mut keys.clone());
            assert_eq!(few, values <= FEW_SLOTS / 2, "{values} values");
            let mut want = keys.clone();
            want.sort_by_key(|k| k.0);
            radix_sort(&mut keys);
            assert_eq!(keys, want, "{values} values");
        }
    }

    /// A selection's spill set in id order (its order depends on the parts).
    fn sorted_spill_set(s: &Selection) -> Vec<NodeId> {
        let mut v = s.unplaced.clone();
        v.sort_unstable();
        v
    }

    /// A plan of every node dirty, with its components.
    fn plan_of_components(nodes: &[Node]) -> Plan {
        let points = nodes.iter().map(|v| v.end as usize + 1).max().unwrap_or(0);
        Plan {
            comp: reuse::components(nodes, points),
            ..Plan::all(nodes.len())
        }
    }

    /// What simplify and select read of a graph, on 8 banks.
    fn on_8_banks<'a>(
        g: &'a Interference,
        nodes: &'a [Node],
        init: &'a Budgets<'a>,
        mode: Mode,
    ) -> Graph<'a> {
        Graph {
            g,
            nodes,
            init,
            num_banks: 8,
            mode,
            split_min: usize::MAX,
        }
    }

    /// Simplify and select give every node the same bank, and the same
    /// spill set and score, on the whole graph at once as on its
    /// components one by one or in groups, in both modes.
    #[test]
    fn parts_select_as_the_whole_graph_does() {
        let mut rng = crate::gen::random::Rng::new(5);
        let (mut split, mut split_with_hi) = (0, 0);
        for _ in 0..200 {
            let (nodes, costs) = random_graph(&mut rng);
            let n = nodes.len();
            let plan = plan_of_components(&nodes);
            let components = plan.comp.chunk_by(|a, b| a == b).count();
            let everything = 0..n;
            let all = std::slice::from_ref(&everything);
            assert_eq!(parts(&Plan::all(n), 1), all);
            assert_eq!(parts(&plan, 1).len(), components);
            assert_eq!(parts(&plan, n + 1), all);
            for mode in [Mode::Fast, Mode::Reference] {
                let g = Interference::build(&nodes, mode);
                let init = Budgets::new(&g, &nodes, &costs, 8, false);
                if components > 1 && mode == Mode::Fast {
                    split += 1;
                    split_with_hi += usize::from(init.hi > 0);
                }
                let graph = on_8_banks(&g, &nodes, &init, mode);
                // One set of buffers for every run, as a thread has.
                let mut scratch = simplify::Scratch::default();
                for h in Heuristic::ALL {
                    let whole = graph.select_parts(&[h], all, None, &mut scratch).remove(0);
                    for min in [1, 3, 40] {
                        let parts = parts(&plan, min);
                        let sel = graph
                            .select_parts(&[h], &parts, None, &mut scratch)
                            .remove(0);
                        assert_eq!(sel.bank, whole.bank);
                        assert_eq!(sel.score, whole.score);
                        assert_eq!(sorted_spill_set(&sel), sorted_spill_set(&whole));
                    }
                }
            }
        }
        assert!(split > 100, "{split} graphs of several components");
        assert!(split_with_hi > 50, "{split_with_hi} with hi nodes");
    }

    /// A drain that splits what remains of its part into ranges as nodes
    /// leave moves no node past one it interferes with: its stack orders
    /// every interfering pair as one drain does, so select gives the same
    /// banks, score and spill set. Every other graph has its ids shuffled
    /// out of order of start (as loops pull starts back), so a range's
    /// remaining nodes may reach far past it.
    #[test]
    fn split_drains_keep_every_interfering_pair_in_order() {
        let mut rng = crate::gen::random::Rng::new(17);
        let mut reordered = 0;
        for round in 0..200 {
            let (mut nodes, mut costs) = random_graph(&mut rng);
            let n = nodes.len();
            if round % 2 == 1 {
                for i in (1..n).rev() {
                    let j = rng.below(i as u64 + 1) as usize;
                    nodes.swap(i, j);
                    costs.swap(i, j);
                }
            }
            let g = Interference::build(&nodes, Mode::Fast);
            let init = Budgets::new(&g, &nodes, &costs, 8, false);
            let whole = on_8_banks(&g, &nodes, &init, Mode::Fast);
            let everything = 0..n;
            let all = std::slice::from_ref(&everything);
            let position = |stack: &[NodeId]| {
                let mut at = vec![usize::MAX; n];
                for (i, v) in stack.iter().enumerate() {
                    at[v.index()] = i;
                }
                at
            };
            let mut scratch = simplify::Scratch::default();
            for h in Heuristic::ALL {
                let one = whole.select_parts(&[h], all, None, &mut scratch).remove(0);
                let want = position(scratch.stack());
                for split_min in [1, 4, 16] {
                    let graph = Graph { split_min, ..whole };
                    let sel = graph.select_parts(&[h], all, None, &mut scratch).remove(0);
                    assert_eq!(sel.bank, one.bank, "H{h}, split from {split_min}");
                    assert_eq!(sel.score, one.score);
                    assert_eq!(sorted_spill_set(&sel), sorted_spill_set(&one));
                    let got = position(scratch.stack());
                    assert!(got.iter().all(|&i| i < n), "every node once");
                    for v in (0..n).map(NodeId::new) {
                        g.for_each_neighbor(v, |u| {
                            let (u, v) = (u.index(), v.index());
                            assert_eq!(got[u] < got[v], want[u] < want[v], "{u} and {v}");
                        });
                    }
                    reordered += usize::from(got != want);
                }
            }
        }
        assert!(reordered > 300, "{reordered} stacks reordered");
    }

    /// Two threads taking half the parts each, all heuristics per part,
    /// make the selections one thread makes heuristic by heuristic, spill
    /// sets in the same order; a zero under H0 ends the run after it. The
    /// budgets come out the same on two threads too.
    #[test]
    fn halves_select_as_one_thread_does() {
        let mut rng = crate::gen::random::Rng::new(9);
        let mut spilling = 0;
        for _ in 0..200 {
            let (nodes, costs) = random_graph(&mut rng);
            let plan = plan_of_components(&nodes);
            let parts = parts(&plan, 3);
            if parts.len() < 2 {
                continue;
            }
            let g = Interference::build(&nodes, Mode::Fast);
            let init = Budgets::new(&g, &nodes, &costs, 8, false);
            assert_eq!(Budgets::new(&g, &nodes, &costs, 8, true), init);
            let graph = on_8_banks(&g, &nodes, &init, Mode::Fast);
            let all = Heuristic::ALL;
            let none = graph.select_parts(&[], &parts, None, &mut Default::default());
            assert!(none.is_empty());
            let one = graph.select_parts(&all, &parts, None, &mut Default::default());
            let halves = graph.run_parts(&all, &parts, false, true, |_, _| false);
            for (h, sel) in one.iter().enumerate() {
                assert_eq!(halves[h].as_ref(), Some(sel), "H{h}");
            }
            spilling += usize::from(!one[0].unplaced.is_empty());
            let zero = |h: Heuristic, _: &Selection| h == Heuristic::H0;
            let stopped = graph.run_parts(&all, &parts, false, true, zero);
            assert_eq!(stopped[0].as_ref(), Some(&one[0]));
            assert!(stopped[1..].iter().all(Option::is_none));
        }
        assert!(spilling > 50, "{spilling} graphs spill");
    }

    /// A graph and its budgets built in the buffers of the graph before
    /// (larger or smaller, as the iterations' graphs are) equal fresh
    /// ones, on one thread and on two.
    #[test]
    fn buffers_handed_on_build_what_fresh_ones_do() {
        let mut rng = crate::gen::random::Rng::new(13);
        let (mut lists, mut slots) = (AdjLists::default(), SlotBuffer::default());
        let (mut grew, mut shrank, mut last) = (0, 0, 0);
        for round in 0..200 {
            let (nodes, costs) = random_graph(&mut rng);
            let fresh = Interference::build(&nodes, Mode::Fast);
            let g = Interference::build_in(&nodes, Mode::Fast, lists);
            for v in (0..nodes.len()).map(NodeId::new) {
                let neighbors = |g: &Interference| {
                    let mut of = Vec::new();
                    g.for_each_neighbor(v, |u| of.push(u));
                    of
                };
                assert_eq!(neighbors(&g), neighbors(&fresh), "round {round}, {v:?}");
            }
            let parallel = round % 2 == 0;
            let init = Budgets::new_in(&g, &nodes, &costs, 8, parallel, slots);
            assert_eq!(init, Budgets::new(&fresh, &nodes, &costs, 8, false));
            grew += usize::from(nodes.len() > last);
            shrank += usize::from(nodes.len() < last);
            last = nodes.len();
            slots = init.into_buffer();
            lists = g.into_lists();
        }
        assert!(grew > 50 && shrank > 50, "{grew} grew, {shrank} shrank");
    }

    /// Leaving out the components that agree with H0 and taking H0's
    /// selection of them gives each heuristic the banks, score and spill
    /// set of its own full run, on one thread and on two. Every third
    /// graph has one bank size, where H1 and H2 agree with H0 and H3 not.
    #[test]
    fn agreeing_components_select_as_their_own_runs_do() {
        let mut rng = crate::gen::random::Rng::new(11);
        let (mut all_agree, mut some_agree, mut h3_differs) = (0, 0, 0);
        for round in 0..300 {
            let (mut nodes, costs) = random_graph(&mut rng);
            if round % 3 == 0 {
                nodes.iter_mut().for_each(|v| v.banks = 2);
            }
            let plan = plan_of_components(&nodes);
            let g = Interference::build(&nodes, Mode::Fast);
            let mut init = Budgets::new(&g, &nodes, &costs, 8, false);
            let agreeing = init.mark_agreement(&plan.comp);
            let graph = on_8_banks(&g, &nodes, &init, Mode::Fast);
            let n = nodes.len();
            all_agree += usize::from((0..n).all(|u| init.agrees(u, Heuristic::H3)));
            some_agree += usize::from((0..n).any(|u| init.agrees(u, Heuristic::H1)));
            let parts = parts(&plan, 3);
            let all = Heuristic::ALL;
            let own = graph.select_parts(&all, &parts, None, &mut Default::default());
            h3_differs += usize::from(own[3] != own[0]);
            for parallel in [false, true] {
                let runs = graph.run_parts(&all, &parts, agreeing, parallel, |_, _| false);
                for (h, sel) in own.iter().enumerate() {
                    let run = runs[h].as_ref().expect("every heuristic runs");
                    assert_eq!(run.bank, sel.bank, "H{h}");
                    assert_eq!(run.score, sel.score, "H{h}");
                    assert_eq!(sorted_spill_set(run), sorted_spill_set(sel), "H{h}");
                }
            }
        }
        assert!(all_agree > 10, "{all_agree} graphs agree throughout");
        assert!(some_agree > 150, "{some_agree} graphs agree in part");
        assert!(h3_differs > 20, "{h3_differs} graphs where H3 is not H0");
    }
}
