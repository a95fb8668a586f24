//! `--allocator exact` (SPEC §3.11, psum's own): the least-cost allocation
//! of a small program under the spill code of SPEC §3.8, by exhaustive
//! search; the quality oracle of the tests.
//!
//! The search runs over the spill sets of the first iteration, spilled in
//! one round: every subset of the spillable nodes (SPEC §3.5), cheapest
//! cost first by branch and bound, each node kept or spilled in id order.
//! A branch is cut when it costs as much as the best allocation found, or
//! when some point cannot come down to the banks there are: with a
//! spilled node holding PSUM only over its head and its read groups
//! (`mincost::Pieces`), the kept nodes and the spilled nodes' pieces
//! must fit at every point, and the nodes still undecided must be able to
//! free what does not, at the least cost per bank. A spill set that
//! passes goes into a copy of the program, whose live ranges are then
//! placed by trying every aligned base for each range in order of start
//! (SPEC §3.7's bases, any of them, not only the first). Programs of more
//! than [`MAX_NODES`] nodes are refused.

use super::costs::Cost;
use super::linear::Linear;
use super::liveness::{self, Liveness, Node};
use super::log::{pct_text, Log};
use super::mincost::{Ending, First, Pieces};
use super::{costs, outcome, spill, AllocError, AllocOptions, AllocOutcome, NodeId};
use crate::arch::{self, bank_alignment, Arch};
use crate::ir::{Module, TensorId};
use std::collections::HashSet;

/// The most PSUM nodes (after the memloc split) the exact search takes.
pub const MAX_NODES: usize = 24;

/// A program with one round of spill code and a placement of all of it.
struct Realized {
    module: Module,
    lin: Linear,
    live: Liveness,
    bank: Vec<Option<u32>>,
}

/// The cheapest allocation found so far.
struct Best {
    cost: u64,
    ids: Vec<NodeId>,
    realized: Realized,
}

/// What the search reads of the first iteration.
struct Search<'a> {
    first: &'a First,
    arch: &'a Arch,
    num_banks: u32,
    /// The spillable nodes, in id order, and their costs.
    cand: Vec<(NodeId, u64)>,
    /// Per point, the candidates (bits of `cand` positions) idle there:
    /// past their head and in none of their read groups.
    idle: Vec<u32>,
    /// Per candidate, the points where it is idle.
    idle_points: Vec<Vec<u32>>,
    /// Candidate positions by cost per bank, cheapest first.
    by_price: Vec<usize>,
}

impl Search<'_> {
    /// Banks of candidate `i`.
    fn banks(&self, i: usize) -> i64 {
        i64::from(self.first.live.nodes[self.cand[i].0.index()].banks)
    }

    /// The least cost, by fractional cover at the cheapest cost per bank,
    /// of freeing each point's excess of `high` over the banks with the
    /// `undecided` candidates idle there.
    fn bound(&self, high: &[i64], undecided: u32) -> Option<f64> {
        let mut most = 0.0f64;
        for (p, &h) in high.iter().enumerate() {
            let mut need = h - i64::from(self.num_banks);
            if need <= 0 {
                continue;
            }
            let mut cost = 0.0;
            for &i in &self.by_price {
                if need <= 0 {
                    break;
                }
                if undecided & self.idle[p] & (1 << i) == 0 {
                    continue;
                }
                let b = self.banks(i);
                let take = need.min(b);
                cost += self.cand[i].1 as f64 * take as f64 / b as f64;
                need -= take;
            }
            if need > 0 {
                return None;
            }
            most = most.max(cost);
        }
        Some(most)
    }

    /// Branch and bound from candidate `i` on: `low` is the load with the
    /// undecided candidates spilled, `high` with them kept.
    #[allow(clippy::too_many_arguments)]
    fn go(
        &self,
        i: usize,
        low: &mut [i64],
        high: &mut [i64],
        spilled: &mut Vec<NodeId>,
        cost: u64,
        best: &mut Option<Best>,
    ) {
        if best.as_ref().is_some_and(|b| cost >= b.cost) {
            return;
        }
        let undecided = if i >= 32 { 0 } else { u32::MAX << i };
        let Some(more) = self.bound(high, undecided) else {
            return;
        };
        if best
            .as_ref()
            .is_some_and(|b| cost as f64 + more >= b.cost as f64 - 0.5)
        {
            return;
        }
        if i == self.cand.len() {
            if let Some(realized) = realize(self.first, self.arch, self.num_banks, spilled) {
                let ids = spilled.clone();
                *best = Some(Best {
                    cost,
                    ids,
                    realized,
                });
            }
            return;
        }
        let b = self.banks(i);
        let points = &self.idle_points[i];
        // Kept: it holds its banks where it would have been idle.
        for &p in points {
            low[p as usize] += b;
        }
        if points
            .iter()
            .all(|&p| low[p as usize] <= i64::from(self.num_banks))
        {
            self.go(i + 1, low, high, spilled, cost, best);
        }
        for &p in points {
            low[p as usize] -= b;
            high[p as usize] -= b;
        }
        spilled.push(self.cand[i].0);
        let c = cost.saturating_add(self.cand[i].1);
        self.go(i + 1, low, high, spilled, c, best);
        spilled.pop();
        for &p in points {
            high[p as usize] += b;
        }
    }
}

/// Spills `spilled` in a copy of the first iteration's program in one
/// round and places every live range of the result, if it can be.
fn realize(first: &First, arch: &Arch, num_banks: u32, spilled: &[NodeId]) -> Option<Realized> {
    let mut module = first.work.clone();
    if !spilled.is_empty() {
        let mut namer = spill::Namer::new(&module);
        let live = &first.live;
        let plans = [costs::spill_plans(&first.lin, live, spilled)];
        spill::insert_spill_code(&mut module, &first.lin, &plans, &mut namer, false);
    }
    let lin = Linear::new(&module);
    let live = liveness::live_ranges(&module, &lin, arch, num_banks).ok()?;
    let bank = place_all(&live.nodes, num_banks)?;
    Some(Realized {
        module,
        lin,
        live,
        bank,
    })
}

/// A placement of every node of `nodes` in aligned banks, trying every
/// base for each node in order of start, or `None` when there is none.
/// A state known to fail (the next node, and when each bank is free
/// again) is not tried twice.
pub fn place_all(nodes: &[Node], num_banks: u32) -> Option<Vec<Option<u32>>> {
    let mut order: Vec<usize> = (0..nodes.len()).collect();
    order.sort_by_key(|&v| (nodes[v].start, v));
    let mut p = Placer {
        order,
        nodes,
        num_banks,
        busy: vec![None; num_banks as usize],
        bank: vec![None; nodes.len()],
        failed: HashSet::new(),
    };
    p.place_from(0).then_some(p.bank)
}

/// The state of [`place_all`]'s search.
struct Placer<'a> {
    order: Vec<usize>,
    nodes: &'a [Node],
    num_banks: u32,
    /// The last point of each bank's current holder.
    busy: Vec<Option<u32>>,
    bank: Vec<Option<u32>>,
    /// States from which no placement exists: the next node's position
    /// and each bank's holder's last point (`None`: free at its start).
    failed: HashSet<(usize, Vec<Option<u32>>)>,
}

impl Placer<'_> {
    fn place_from(&mut self, i: usize) -> bool {
        let Some(&v) = self.order.get(i) else {
            return true;
        };
        let n = self.nodes[v];
        if n.banks > self.num_banks {
            return false;
        }
        let state: Vec<Option<u32>> = (self.busy.iter())
            .map(|e| e.filter(|&e| e >= n.start))
            .collect();
        if self.failed.contains(&(i, state.clone())) {
            return false;
        }
        let step = bank_alignment(n.banks) as usize;
        for b in (0..=self.num_banks - n.banks).step_by(step) {
            let block = b as usize..(b + n.banks) as usize;
            if state[block.clone()].iter().any(Option::is_some) {
                continue;
            }
            let saved: Vec<Option<u32>> = self.busy[block.clone()].to_vec();
            self.busy[block.clone()].fill(Some(n.end));
            self.bank[v] = Some(b);
            if self.place_from(i + 1) {
                return true;
            }
            self.busy[block].copy_from_slice(&saved);
        }
        self.bank[v] = None;
        self.failed.insert((i, state));
        false
    }
}

/// The spillable nodes of a validated module's first iteration (SPEC
/// §3.5), in id order, with their costs: what the exact search chooses
/// among.
pub fn candidates(m: &Module, opts: &AllocOptions) -> Result<Vec<(String, u64)>, AllocError> {
    let first = First::of(m.clone(), opts)?;
    let pinned = vec![false; first.work.tensors.len()];
    let pieces = Pieces::of(&first.lin, &first.live, &pinned, opts.spill_latency);
    Ok((first.live.nodes.iter().zip(&pieces.cost))
        .filter_map(|(n, c)| Some((first.work.tensor(n.tensor).name.clone(), c.finite()?)))
        .collect())
}

/// The allocation that spills exactly the nodes named `spill` (of
/// [`candidates`]) in one round and places everything else by trying
/// every aligned base, or `None` when nothing fits so.
pub fn with_spills(
    m: &Module,
    opts: &AllocOptions,
    spill: &[String],
) -> Result<Option<AllocOutcome>, AllocError> {
    let arch = arch::lookup(&m.arch)?;
    let num_banks = opts.num_banks(&arch)?;
    let first = First::of(m.clone(), opts)?;
    let pinned = vec![false; first.work.tensors.len()];
    let pieces = Pieces::of(&first.lin, &first.live, &pinned, opts.spill_latency);
    let chosen: Vec<(NodeId, u64)> = (0..first.live.nodes.len())
        .map(NodeId::new)
        .filter(|v| spill.contains(&first.work.tensor(first.live.nodes[v.index()].tensor).name))
        .filter_map(|v| Some((v, pieces.cost[v.index()].finite()?)))
        .collect();
    if chosen.len() != spill.len() {
        return Ok(None);
    }
    let ids: Vec<NodeId> = chosen.iter().map(|c| c.0).collect();
    let cost = chosen.iter().map(|c| c.1).sum();
    Ok(realize(&first, &arch, num_banks, &ids).map(|r| outcome(first, &arch, opts, &ids, cost, r)))
}

/// The outcome of spilling `ids` for `cost` cycles as `r` realizes it.
fn outcome(
    first: First,
    arch: &Arch,
    opts: &AllocOptions,
    ids: &[NodeId],
    cost: u64,
    r: Realized,
) -> AllocOutcome {
    let num_banks = opts.num_banks(arch).expect("checked before the search");
    let mut log = Log::new(opts.trace);
    log.v(" allocating PSUM".into());
    log.v(format!(
        "{}% PSUM demand before spilling",
        pct_text(first.demand)
    ));
    if !ids.is_empty() {
        log.v(format!("spilling from PSUM cost about {cost} cycles"));
    }
    let spilled: Vec<TensorId> = (ids.iter())
        .map(|v| first.live.nodes[v.index()].tensor)
        .collect();
    let iterations = 1 + u32::from(!ids.is_empty());
    let report = outcome::report(
        &r.module,
        num_banks,
        &spilled,
        cost,
        iterations,
        first.demand,
    );
    let end = Ending {
        arch,
        points: r.lin.len(),
        log,
        warnings: first.warnings,
    };
    end.finish(r.module, &r.live, &r.bank, &spilled, report)
}

/// Allocates a validated module of at most [`MAX_NODES`] PSUM nodes at
/// the least spill cost under SPEC §3.8 (SPEC §3.11), taking it over.
pub fn allocate(m: Module, opts: &AllocOptions) -> Result<AllocOutcome, AllocError> {
    let arch = arch::lookup(&m.arch)?;
    let num_banks = opts.num_banks(&arch)?;
    let first = First::of(m, opts)?;
    let n = first.live.nodes.len();
    if n > MAX_NODES {
        return Err(AllocError::ExactTooLarge {
            nodes: n,
            limit: MAX_NODES,
        });
    }
    let pinned = vec![false; first.work.tensors.len()];
    let pieces = Pieces::of(&first.lin, &first.live, &pinned, opts.spill_latency);
    let points = first.lin.len();
    let nodes = &first.live.nodes;
    let cand: Vec<(NodeId, u64)> = (0..n)
        .filter_map(|v| Some((NodeId::new(v), pieces.cost[v].finite()?)))
        .collect();
    let mut idle = vec![0u32; points];
    let mut idle_points = Vec::with_capacity(cand.len());
    let mut low = vec![0i64; points];
    let mut high = vec![0i64; points];
    let hold = |load: &mut [i64], lo: u32, hi: u32, banks: u32| {
        for p in lo..=hi {
            load[p as usize] += i64::from(banks);
        }
    };
    for (v, node) in nodes.iter().enumerate() {
        hold(&mut high, node.start, node.end, node.banks);
        if pieces.cost[v] == Cost::Inf {
            hold(&mut low, node.start, node.end, node.banks);
        }
    }
    for (i, &(v, _)) in cand.iter().enumerate() {
        let node = &nodes[v.index()];
        let mut held = vec![false; points];
        let head_end = pieces.head_end[v.index()];
        let groups = pieces.first[v.index()] as usize..pieces.first[v.index() + 1] as usize;
        for p in node.start..=head_end {
            held[p as usize] = true;
        }
        for &(lo, hi) in &pieces.groups[groups] {
            for p in lo..=hi {
                held[p as usize] = true;
            }
        }
        let mut mine = Vec::new();
        for p in node.start..=node.end {
            if held[p as usize] {
                low[p as usize] += i64::from(node.banks);
            } else {
                idle[p as usize] |= 1 << i;
                mine.push(p);
            }
        }
        idle_points.push(mine);
    }
    let mut by_price: Vec<usize> = (0..cand.len()).collect();
    let price = |i: usize| cand[i].1 as f64 / f64::from(nodes[cand[i].0.index()].banks);
    by_price.sort_by(|&a, &b| price(a).total_cmp(&price(b)));
    let search = Search {
        first: &first,
        arch: &arch,
        num_banks,
        cand,
        idle,
        idle_points,
        by_price,
    };
    let mut best = None;
    if low.iter().all(|&l| l <= i64::from(num_banks)) {
        search.go(0, &mut low, &mut high, &mut Vec::new(), 0, &mut best);
    }
    let Some(Best {
        cost,
        ids,
        realized,
    }) = best
    else {
        let (pressure, point) = liveness::peak_demand(nodes, points);
        let at = |n: &&Node| n.start <= point && point <= n.end;
        let stuck = nodes.iter().find(at).expect("a node is live at the peak");
        return Err(AllocError::TooManyReloads {
            name: first.work.tensor(stuck.tensor).name.clone(),
            pressure,
            point,
        });
    };
    Ok(outcome(first, &arch, opts, &ids, cost, realized))
}
