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
use super::spill::SpillPlans;
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

/// How one spilled node is spilled: per read group of it, whether a
/// reload goes right before it.
pub(super) type Spill = (NodeId, Vec<bool>);

/// The cheapest allocation found so far.
struct Best {
    cost: u64,
    spills: Vec<Spill>,
    realized: Realized,
}

/// One way to spill a candidate: its reloads, their cost with the save,
/// and the points of its idle ranges where it still holds PSUM.
struct Way {
    cost: u64,
    reload: Vec<bool>,
    held: Vec<u32>,
}

/// A spillable node and the ways to spill it, cheapest first.
struct Candidate {
    node: NodeId,
    banks: i64,
    /// The least cost of letting it go anywhere: its save and its cheapest
    /// reload.
    least: u64,
    ways: Vec<Way>,
}

/// What the search reads of the first iteration.
struct Search<'a> {
    first: &'a First,
    pieces: &'a Pieces,
    arch: &'a Arch,
    num_banks: u32,
    /// The spillable nodes, in id order.
    cand: Vec<Candidate>,
    /// Per point, the candidates (bits of `cand` positions) idle there:
    /// past their head and in none of their read groups.
    idle: Vec<u32>,
    /// Per candidate, the points where it is idle.
    idle_points: Vec<Vec<u32>>,
    /// Candidate positions by least cost per bank, cheapest first.
    by_price: Vec<usize>,
}

impl Search<'_> {
    /// The least cost, by fractional cover at the least cost per bank,
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
                let b = self.cand[i].banks;
                let take = need.min(b);
                cost += self.cand[i].least as f64 * take as f64 / b as f64;
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
    /// undecided candidates spilled everywhere they are idle, `high` with
    /// them kept.
    fn go(&self, i: usize, low: &mut [i64], high: &mut [i64], spills: &mut Vec<Spill>, cost: u64, best: &mut Option<Best>) {
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
            if let Some(realized) = realize(self.first, self.pieces, self.arch, self.num_banks, spills) {
                *best = Some(Best {
                    cost,
                    spills: spills.clone(),
                    realized,
                });
            }
            return;
        }
        let c = &self.cand[i];
        let fits = |low: &[i64], points: &[u32]| {
            (points.iter()).all(|&p| low[p as usize] <= i64::from(self.num_banks))
        };
        let points = &self.idle_points[i];
        // Kept: it holds its banks where it would have been idle.
        hold(low, points, c.banks);
        if fits(low, points) {
            self.go(i + 1, low, high, spills, cost, best);
        }
        hold(low, points, -c.banks);
        hold(high, points, -c.banks);
        for way in &c.ways {
            hold(low, &way.held, c.banks);
            hold(high, &way.held, c.banks);
            if fits(low, &way.held) {
                spills.push((c.node, way.reload.clone()));
                self.go(i + 1, low, high, spills, cost.saturating_add(way.cost), best);
                spills.pop();
            }
            hold(low, &way.held, -c.banks);
            hold(high, &way.held, -c.banks);
        }
        hold(high, points, c.banks);
    }
}

/// Adds `banks` to `load` at each of `points`.
fn hold(load: &mut [i64], points: &[u32], banks: i64) {
    for &p in points {
        load[p as usize] += banks;
    }
}

/// The ways to spill spillable node `v`: every non-empty set of its read
/// groups to reload before, cheapest first (ties: in the order of the
/// sets as binary numbers, first group lowest), each with the idle points
/// where it still holds PSUM: those of its own tensor up to its first
/// reload, and those of each reload up to the next.
fn ways(pieces: &Pieces, v: usize, node: &Node) -> Vec<Way> {
    let groups = pieces.groups_of(v);
    let k = groups.len();
    assert!(k < 20, "{k} read groups");
    let idle: Vec<(u32, u32)> = pieces.idle(v, node).collect();
    let is_idle = |p: u32| idle.iter().any(|&(lo, hi)| lo <= p && p <= hi);
    let mut ways: Vec<Way> = (1u32..1 << k)
        .map(|mask| {
            let reload: Vec<bool> = (0..k).map(|j| mask & (1 << j) != 0).collect();
            let first = reload.iter().position(|&r| r).expect("a non-empty set");
            let own_end = match first {
                0 => pieces.head_end[v],
                j => pieces.kept_end[groups.start + j - 1],
            };
            let mut held: Vec<u32> = (node.start..=own_end).filter(|&p| is_idle(p)).collect();
            let mut cost = pieces.save_cost[v];
            for j in (0..k).filter(|&j| reload[j]) {
                cost = cost.saturating_add(pieces.reload_cost[groups.start + j]);
                let last = (j + 1..k).find(|&x| reload[x]).unwrap_or(k) - 1;
                let (lo, hi) = (pieces.groups[groups.start + j].0, pieces.groups[groups.start + last].1);
                held.extend((lo..=hi).filter(|&p| is_idle(p)));
            }
            Way { cost, reload, held }
        })
        .collect();
    ways.sort_by_key(|w| w.cost);
    ways
}

/// Spills `spills` in a copy of the first iteration's program in one
/// round and places every live range of the result, if it can be.
fn realize(first: &First, pieces: &Pieces, arch: &Arch, num_banks: u32, spills: &[Spill]) -> Option<Realized> {
    let mut module = first.work.clone();
    if !spills.is_empty() {
        let mut namer = spill::Namer::new(&module);
        let (lin, live) = (&first.lin, &first.live);
        let mut plans = SpillPlans::default();
        for (v, reload) in spills {
            let plan = costs::spill_plan(lin, live, *v).expect("only spillable nodes are spilled");
            let groups = pieces.groups_of(v.index()).map(|g| pieces.groups[g]);
            plans.push_split(live.nodes[v.index()].tensor, plan.save_after, groups.zip(reload.iter().copied()));
        }
        spill::insert_spill_code(&mut module, lin, &[plans], &mut namer, false);
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

/// A spillable node of a validated module's first iteration (SPEC §3.5):
/// its tensor's name, what its save costs and what a reload before each of
/// its read groups costs.
pub type SpillCandidate = (String, u64, Vec<u64>);

/// The spillable nodes of a validated module's first iteration, in id
/// order: what the exact search chooses among.
pub fn candidates(m: &Module, opts: &AllocOptions) -> Result<Vec<SpillCandidate>, AllocError> {
    let first = First::of(m.clone(), opts)?;
    let pinned = vec![false; first.work.tensors.len()];
    let pieces = Pieces::of(&first.lin, &first.live, &pinned, opts.spill_latency);
    Ok((0..first.live.nodes.len())
        .filter(|&v| pieces.cost[v] != Cost::Inf)
        .map(|v| {
            let name = first.work.tensor(first.live.nodes[v].tensor).name.clone();
            let reloads = pieces.groups_of(v).map(|g| pieces.reload_cost[g]).collect();
            (name, pieces.save_cost[v], reloads)
        })
        .collect())
}

/// The allocation that spills exactly the nodes named in `spill` (of
/// [`candidates`]) in one round, each reloaded before the read groups its
/// flags mark, and places everything else by trying every aligned base,
/// or `None` when nothing fits so.
pub fn with_spills(
    m: &Module,
    opts: &AllocOptions,
    spill: &[(String, Vec<bool>)],
) -> Result<Option<AllocOutcome>, AllocError> {
    let arch = arch::lookup(&m.arch)?;
    let num_banks = opts.num_banks(&arch)?;
    let first = First::of(m.clone(), opts)?;
    let pinned = vec![false; first.work.tensors.len()];
    let pieces = Pieces::of(&first.lin, &first.live, &pinned, opts.spill_latency);
    let mut spills: Vec<Spill> = Vec::new();
    let mut cost = 0u64;
    for v in 0..first.live.nodes.len() {
        let name = &first.work.tensor(first.live.nodes[v].tensor).name;
        let Some((_, reload)) = spill.iter().find(|s| &s.0 == name) else {
            continue;
        };
        let groups = pieces.groups_of(v);
        if pieces.cost[v] == Cost::Inf || reload.len() != groups.len() || !reload.contains(&true) {
            return Ok(None);
        }
        let reloads = groups.zip(reload).filter(|&(_, &r)| r).map(|(g, _)| pieces.reload_cost[g]);
        cost = reloads.fold(cost.saturating_add(pieces.save_cost[v]), u64::saturating_add);
        spills.push((NodeId::new(v), reload.clone()));
    }
    if spills.len() != spill.len() {
        return Ok(None);
    }
    let realized = realize(&first, &pieces, &arch, num_banks, &spills);
    Ok(realized.map(|r| outcome(first, &arch, opts, &spills, cost, r)))
}

/// The outcome of spilling `spills` for `cost` cycles as `r` realizes it.
fn outcome(
    first: First,
    arch: &Arch,
    opts: &AllocOptions,
    spills: &[Spill],
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
    if !spills.is_empty() {
        log.v(format!("spilling from PSUM cost about {cost} cycles"));
    }
    let spilled: Vec<TensorId> = (spills.iter())
        .map(|(v, _)| first.live.nodes[v.index()].tensor)
        .collect();
    let iterations = 1 + u32::from(!spills.is_empty());
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
    let mut cand = Vec::new();
    let mut idle = vec![0u32; points];
    let mut idle_points = Vec::new();
    let mut low = vec![0i64; points];
    let mut high = vec![0i64; points];
    for (v, node) in nodes.iter().enumerate() {
        let span: Vec<u32> = (node.start..=node.end).collect();
        hold(&mut high, &span, i64::from(node.banks));
        if pieces.cost[v] == Cost::Inf {
            hold(&mut low, &span, i64::from(node.banks));
            continue;
        }
        let i = cand.len();
        let mine: Vec<u32> = pieces.idle(v, node).flat_map(|(lo, hi)| lo..=hi).collect();
        let busy: Vec<u32> = span.into_iter().filter(|p| mine.binary_search(p).is_err()).collect();
        hold(&mut low, &busy, i64::from(node.banks));
        for &p in &mine {
            idle[p as usize] |= 1 << i;
        }
        idle_points.push(mine);
        let cheapest = pieces.groups_of(v).map(|g| pieces.reload_cost[g]).min();
        cand.push(Candidate {
            node: NodeId::new(v),
            banks: i64::from(node.banks),
            least: pieces.save_cost[v].saturating_add(cheapest.unwrap_or(0)),
            ways: ways(&pieces, v, node),
        });
    }
    let mut by_price: Vec<usize> = (0..cand.len()).collect();
    let price = |i: usize| cand[i].least as f64 / cand[i].banks as f64;
    by_price.sort_by(|&a, &b| price(a).total_cmp(&price(b)));
    let search = Search {
        first: &first,
        pieces: &pieces,
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
        spills,
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
    Ok(outcome(first, &arch, opts, &spills, cost, realized))
}
