//! Reference mode (SPEC §3.10): the allocator of SPEC §3.2–3.9 written
//! plainly, with the seed's data structures and a full rebuild every
//! iteration.
//!
//! The memloc split ([`split`]) runs once; then each iteration numbers the
//! points, reads every access for the live ranges ([`liveness`]), builds
//! the lower-triangular interference bit-matrix ([`graph`]) and the spill
//! costs ([`costs`]), and runs simplify and select ([`color`]) under H0..H3,
//! keeping the best; if something did not fit, the spill code goes in and
//! the next iteration starts from the program. Reference mode shares with
//! fast mode only the IR, the linearization ([`crate::alloc::linear`]), the
//! spill-code writer ([`crate::alloc::spill`]) and the log format, so the
//! tests that compare the two modes compare two implementations. It also
//! writes the `-vv` trace, whose `cannot allocate` lines follow one
//! select over the whole graph.

mod color;
mod costs;
mod graph;
mod liveness;
mod split;

use super::linear::Linear;
use super::log::{hundredths, pct_text, Log};
use super::spill::{self, Namer, SpillPlans};
use super::{AllocError, AllocOptions, AllocOutcome, AllocReport, TensorReport};
use crate::arch::{self, Arch};
use crate::entity::IdMap;
use crate::ir::{Mem, Module, TensorId};
use graph::BitMatrix;
use liveness::Liveness;

/// Allocates the PSUM tensors of a validated module (SPEC §3).
pub(super) fn allocate(m: Module, opts: &AllocOptions) -> Result<AllocOutcome, AllocError> {
    let arch = arch::lookup(&m.arch)?;
    let num_banks = opts.num_banks(&arch)?;
    let mut log = Log::new(opts.log);
    log.v(" allocating PSUM".into());
    let (mut work, input) = split::memloc_split(m);
    // Errors name the input's tensors.
    let in_input = |e: AllocError, work: &Module| e.in_input(|t| input.of(work, t));
    for t in work.tensors.values_mut().filter(|t| t.mem == Mem::Psum) {
        t.bank = None;
    }
    let mut namer = Namer::new(&work);
    // By tensor: spill temporaries and tensors spilled already.
    let mut pinned = IdMap::with_len(work.tensors.len(), false);
    let mut spilled: Vec<TensorId> = Vec::new();
    let mut spill_cost = 0u64;
    // Iteration 1's points and nodes; each spill gives the next ones.
    let mut lin = Linear::new(&work);
    let mut live =
        liveness::live_ranges(&work, &lin, &arch, num_banks).map_err(|e| in_input(e, &work))?;
    let warnings = (live.unused.iter())
        .map(|&t| format!("unused PSUM tensor {}", work.tensor(t).name))
        .collect();
    let peak = liveness::peak_demand(&liveness::demand(&live.nodes, lin.len()));
    let demand = hundredths(peak, num_banks);
    log.v(format!("{}% PSUM demand before spilling", pct_text(demand)));
    for iteration in 1..=opts.max_iterations {
        let nodes = &live.nodes;
        let g = BitMatrix::build(nodes);
        let costs: Vec<Option<u64>> = (nodes.iter())
            .map(|n| {
                let (acc, pinned) = (&live.accesses[n.tensor], pinned[n.tensor]);
                costs::cost(&lin, n, acc, pinned, opts.spill_latency)
            })
            .collect();
        let (best, sel) = best_of_n(&work, &live, &g, &costs, num_banks, &mut log);
        log.v(format!("best PSUM heuristic = {best}"));
        if sel.unplaced.is_empty() {
            log.v(format!(
                "number of tensors spilled from PSUM = {}",
                spilled.len()
            ));
            let used = liveness::peak_demand(&liveness::demand(nodes, lin.len()));
            let utilization = hundredths(used, num_banks);
            log.v(format!(
                "{}% PSUM utilization after allocation",
                pct_text(utilization)
            ));
            for (n, b) in nodes.iter().zip(&sel.bank) {
                work.tensors[n.tensor].bank = *b;
            }
            let report = AllocReport {
                arch: work.arch.clone(),
                num_banks,
                tensors: tensor_rows(&work, &arch, &live, &spilled),
                spilled: (spilled.iter())
                    .map(|&t| work.tensor(t).name.clone())
                    .collect(),
                spill_cost_cycles: spill_cost,
                iterations: iteration,
                best_heuristic: best,
                demand_pct: demand as f64 / 100.0,
                utilization_pct: utilization as f64 / 100.0,
            };
            return Ok(AllocOutcome {
                module: work,
                report,
                log: log.log,
                trace: log.trace,
                warnings,
            });
        }
        let chosen = spill_set(&work, &lin, &live, &g, &costs, &sel.unplaced)
            .map_err(|e| in_input(e, &work))?;
        let cycles = (chosen.iter())
            .filter_map(|&v| costs[v])
            .fold(0, u64::saturating_add);
        log.v(format!("spilling from PSUM cost about {cycles} cycles"));
        spill_cost = spill_cost.saturating_add(cycles);
        let mut plans = SpillPlans::default();
        for &v in &chosen {
            let n = &nodes[v];
            let acc = &live.accesses[n.tensor];
            let code = costs::spill_code(&lin, n, acc).expect("a finite cost has spill code");
            plans.push(n.tensor, code.save_after, code.groups);
            spilled.push(n.tensor);
            pinned[n.tensor] = true;
        }
        spill::insert_spill_code(&mut work, &lin, &[plans], &mut namer, false);
        pinned.resize(work.tensors.len(), true);
        lin = Linear::new(&work);
        live =
            liveness::live_ranges(&work, &lin, &arch, num_banks).map_err(|e| in_input(e, &work))?;
    }
    Err(AllocError::NotConverged)
}

/// Best-of-n (SPEC §3.8): simplify, select and score under H0..H3, logging
/// each; the lowest score wins (ties: the lower heuristic), and a score of
/// 0 ends the search. Returns the winner and its selection.
fn best_of_n(
    work: &Module,
    live: &Liveness,
    g: &BitMatrix,
    costs: &[Option<u64>],
    num_banks: u32,
    log: &mut Log,
) -> (u32, color::Selection) {
    let nodes = &live.nodes;
    let worklists = color::Worklists::new(g, nodes, costs, num_banks);
    let [lo, hi, inf] = worklists.sizes();
    let mut best: Option<(u32, Option<u64>, color::Selection)> = None;
    for h in 0..4 {
        log.v(format!("best-of-n loop, heuristic = {h}"));
        log.vv(|| format!("            lo = {lo}"));
        log.vv(|| format!("            hi = {hi}"));
        log.vv(|| format!("            inf = {inf}"));
        log.vv(|| format!("            total = {}", nodes.len()));
        let stack = worklists.simplify(g, h);
        let sel = color::select(g, nodes, &stack, num_banks);
        for &v in &sel.unplaced {
            log.vv(|| format!(" cannot allocate {}", work.tensor(nodes[v].tensor).name));
        }
        // The sum of the spill set's costs; `None` when one is +∞.
        let score = (sel.unplaced.iter()).try_fold(0u64, |s, &v| Some(s.saturating_add(costs[v]?)));
        let shown = score.map_or("inf".to_string(), |s| s.to_string());
        log.v(format!("PSUM score = {shown} (lower is better)"));
        let rank = |s: Option<u64>| (s.is_none(), s.unwrap_or(0));
        if best.as_ref().is_none_or(|b| rank(score) < rank(b.1)) {
            best = Some((h, score, sel));
        }
        if score == Some(0) {
            break;
        }
    }
    let (h, _, sel) = best.expect("H0 always runs");
    (h, sel)
}

/// The nodes to spill, ascending: every finite-cost node of the spill set
/// `unplaced`, and the finite-cost neighbors of each unspillable one (SPEC
/// §3.8 **\[decision\]**). An unspillable node with none is fatal (the
/// lowest such node), naming the highest pressure within its interval.
fn spill_set(
    work: &Module,
    lin: &Linear,
    live: &Liveness,
    g: &BitMatrix,
    costs: &[Option<u64>],
    unplaced: &[usize],
) -> Result<Vec<usize>, AllocError> {
    let mut chosen = vec![false; costs.len()];
    let mut stuck = Vec::new();
    for &v in unplaced {
        if costs[v].is_some() {
            chosen[v] = true;
            continue;
        }
        let spillable: Vec<usize> = g.neighbors(v).filter(|&u| costs[u].is_some()).collect();
        if spillable.is_empty() {
            stuck.push(v);
        }
        for u in spillable {
            chosen[u] = true;
        }
    }
    if let Some(&v) = stuck.iter().min() {
        let n = &live.nodes[v];
        let demand = liveness::demand(&live.nodes, lin.len());
        let (pressure, point) = liveness::peak_in(&demand, n.start, n.end);
        return Err(AllocError::TooManyReloads {
            tensor: n.tensor,
            name: work.tensor(n.tensor).name.clone(),
            pressure,
            point,
        });
    }
    Ok((0..chosen.len()).filter(|&v| chosen[v]).collect())
}

/// The report's row of every PSUM tensor of `work`, in declaration order.
fn tensor_rows(
    work: &Module,
    arch: &Arch,
    live: &Liveness,
    spilled: &[TensorId],
) -> Vec<TensorReport> {
    let mut interval = IdMap::with_len(work.tensors.len(), None);
    for n in &live.nodes {
        interval[n.tensor] = Some([n.start, n.end]);
    }
    let mut was_spilled = IdMap::with_len(work.tensors.len(), false);
    for &t in spilled {
        was_spilled[t] = true;
    }
    (work.tensors.iter())
        .filter(|(_, t)| t.mem == Mem::Psum)
        .map(|(i, t)| TensorReport {
            name: t.name.clone(),
            bank: t.bank,
            banks: arch.aligned_bank_num(arch.bank_num(u64::from(t.bytes))),
            interval: interval[i],
            spilled: was_spilled[i],
        })
        .collect()
}
