//! `--allocator exact` (SPEC §3.11, psum's own): the least-cost allocation
//! of a small program under split spilling (§3.8's spill code, a reload
//! only where a value was out of PSUM), by exhaustive search; the quality
//! oracle of the tests.
//!
//! The search runs over the split spill code of the first iteration,
//! spilled in one round: for every spillable node (SPEC §3.5), every set of
//! its read groups to reload before, by branch and bound over the groups
//! in node and group order, no reload before a reload. Mincost's choice,
//! where it places, is the best found to begin with. A branch is cut when
//! it costs as much as the best allocation found, or when some point cannot
//! come down to the banks there are: the pieces decided so far and the
//! heads and read groups of the rest must fit at every point, and the
//! groups still undecided must be able to free what does not, at the least
//! cost per bank. What must fit counts aligned blocks as well as banks, as
//! the split LP's rows do (`psum export --split-lp`): a node of more than
//! half a block of 2, 4, … banks keeps whole blocks of that size from the
//! other such nodes, so two 3-bank nodes and a 2-bank one do not fit 8
//! banks. A choice that passes goes into a copy of the program,
//! whose live ranges are then placed by trying every aligned base for each
//! range in order of start (SPEC §3.7's bases, any of them, not only the
//! first). Programs of more than [`MAX_NODES`] nodes are refused.

use super::costs::Cost;
use super::linear::Linear;
use super::liveness::{self, Liveness, Node};
use super::log::{pct_text, Log};
use super::mincost::{self, Ending, First, Pieces};
use super::spill::SpillPlans;
use super::{outcome, spill, AllocError, AllocOptions, AllocOutcome, NodeId};
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

/// One decision of the search: whether a reload goes right before read
/// group `group` (into [`Pieces::groups`]) of candidate `cand`.
struct Decision {
    cand: usize,
    group: usize,
    /// The idle points right before the group (after the previous group
    /// or the head): free with a reload there, held without one.
    points: Vec<u32>,
    /// Of those, the ones the node's own tensor still holds when this is
    /// its first reload (the loop extension of its kept groups).
    own: Vec<u32>,
    /// Whether this is the candidate's last group, whose decision also
    /// settles the idle points after it: held when the node is kept, free
    /// when it spills.
    last: bool,
}

/// A spillable node.
struct Candidate {
    node: NodeId,
    /// What it holds in each [`Measures`] measure.
    weight: Vec<i64>,
    save: u64,
    /// Its idle points after its last read group.
    trailing: Vec<u32>,
}

/// What a point's load is counted in: banks, then aligned blocks of each
/// size 2, 4, … that some node holds more than half of
/// ([`arch::aligned_blocks`]); each with what the banks hold of it.
struct Measures {
    sizes: Vec<u32>,
    cap: Vec<i64>,
}

impl Measures {
    /// The measures of `nodes` on `num_banks` banks.
    fn new(nodes: &[Node], num_banks: u32) -> Measures {
        let held = |&s: &u32| s == 1 || nodes.iter().any(|n| arch::aligned_blocks(n.banks, s) > 0);
        let sizes: Vec<u32> = arch::block_sizes(num_banks).filter(held).collect();
        let cap = (sizes.iter())
            .map(|&s| i64::from(num_banks.div_ceil(s)))
            .collect();
        Measures { sizes, cap }
    }

    /// What a node of `banks` banks holds in each measure.
    fn weight(&self, banks: u32) -> Vec<i64> {
        (self.sizes.iter())
            .map(|&s| i64::from(arch::aligned_blocks(banks, s)))
            .collect()
    }

    /// Whether `load` is within every measure at each of `points`.
    fn fit(&self, load: &[i64], points: impl IntoIterator<Item = u32>) -> bool {
        let width = self.cap.len();
        points.into_iter().all(|p| {
            let at = &load[p as usize * width..][..width];
            at.iter().zip(&self.cap).all(|(l, c)| l <= c)
        })
    }
}

/// What the search reads of the first iteration.
struct Search<'a> {
    first: &'a First,
    pieces: &'a Pieces,
    arch: &'a Arch,
    num_banks: u32,
    measures: Measures,
    /// The spillable nodes, in id order.
    cand: Vec<Candidate>,
    /// Every candidate's groups, candidate by candidate, in order.
    decisions: Vec<Decision>,
    /// Per point, the decisions whose idle points hold it, and the
    /// candidates whose trailing points do (as `decisions.len() + cand`).
    idle: Vec<Vec<u32>>,
}

/// Where the search is: the reloads chosen so far for the candidate being
/// decided, and the nodes decided to spill.
struct State {
    reload: Vec<bool>,
    spills: Vec<Spill>,
    cost: u64,
}

impl Search<'_> {
    /// A lower bound on what freeing each point's excess of `high` over the
    /// banks costs from decision `d` on (`state` being the search's), by
    /// fractional cover at each point: an undecided group's idle points
    /// are freed by its reload (and the node's save, if it has none yet),
    /// the trailing points of a node not yet settled by its save. Only
    /// the banks measure counts here: weighing the blocks as well found
    /// the same allocations more slowly on the programs tried.
    fn bound(&self, high: &[i64], d: usize, state: &State) -> Option<f64> {
        let current = self.decisions.get(d).map(|x| x.cand);
        let spilled_here = state.reload.contains(&true);
        let save = |c: usize| match (current == Some(c), spilled_here) {
            (true, true) => 0,
            _ => self.cand[c].save,
        };
        let mut most = 0.0f64;
        let mut offers: Vec<(f64, i64)> = Vec::new();
        let width = self.measures.cap.len();
        for (p, at) in high.chunks(width).enumerate() {
            let mut need = at[0] - self.measures.cap[0];
            if need <= 0 {
                continue;
            }
            offers.clear();
            for &x in &self.idle[p] {
                let x = x as usize;
                let (c, cost) = match self.decisions.get(x) {
                    Some(dec) if x >= d => (dec.cand, self.pieces.reload_cost[dec.group]),
                    Some(_) => continue,
                    None => {
                        let c = x - self.decisions.len();
                        if current.is_none_or(|cur| c < cur) {
                            continue;
                        }
                        (c, 0)
                    }
                };
                let b = self.cand[c].weight[0];
                offers.push((cost.saturating_add(save(c)) as f64 / b as f64, b));
            }
            offers.sort_by(|a, b| a.0.total_cmp(&b.0));
            let mut cost = 0.0;
            for &(per_bank, b) in &offers {
                if need <= 0 {
                    break;
                }
                let take = need.min(b);
                cost += per_bank * take as f64;
                need -= take;
            }
            if need > 0 {
                return None;
            }
            most = most.max(cost);
        }
        Some(most)
    }

    /// Branch and bound from decision `d` on: `low` is the load with the
    /// undecided points free, `high` with them held; no reload before
    /// reload, for each group.
    fn go(
        &self,
        d: usize,
        low: &mut [i64],
        high: &mut [i64],
        state: &mut State,
        best: &mut Option<Best>,
    ) {
        if best.as_ref().is_some_and(|b| state.cost >= b.cost) {
            return;
        }
        let Some(more) = self.bound(high, d, state) else {
            return;
        };
        if best
            .as_ref()
            .is_some_and(|b| state.cost as f64 + more >= b.cost as f64 - 0.5)
        {
            return;
        }
        let Some(dec) = self.decisions.get(d) else {
            if let Some(realized) = realize(
                self.first,
                self.pieces,
                self.arch,
                self.num_banks,
                &state.spills,
            ) {
                *best = Some(Best {
                    cost: state.cost,
                    spills: state.spills.clone(),
                    realized,
                });
            }
            return;
        };
        let c = &self.cand[dec.cand];
        let b = &c.weight;
        let fits = |low: &[i64], points: &[u32]| self.measures.fit(low, points.iter().copied());
        let spilled_here = state.reload.contains(&true);
        // No reload: the value stays in PSUM over the points before the group.
        hold(low, &dec.points, b, 1);
        let trailing: &[u32] = if dec.last { &c.trailing } else { &[] };
        let kept = dec.last && !spilled_here;
        if kept {
            hold(low, trailing, b, 1);
        } else {
            hold(high, trailing, b, -1);
        }
        if fits(low, &dec.points) && fits(low, trailing) {
            self.next(d, false, low, high, state, best);
        }
        hold(low, &dec.points, b, -1);
        if kept {
            hold(low, trailing, b, -1);
        } else {
            hold(high, trailing, b, 1);
        }
        // A reload: the points before the group are free, but for what the
        // node's own tensor still holds when this is its first reload.
        let own: &[u32] = if spilled_here { &[] } else { &dec.own };
        let paid = self.pieces.reload_cost[dec.group].saturating_add(if spilled_here {
            0
        } else {
            c.save
        });
        hold(high, &dec.points, b, -1);
        hold(high, own, b, 1);
        hold(low, own, b, 1);
        hold(high, trailing, b, -1);
        if fits(low, own) {
            state.cost = state.cost.saturating_add(paid);
            self.next(d, true, low, high, state, best);
            state.cost -= paid;
        }
        hold(high, &dec.points, b, 1);
        hold(high, own, b, -1);
        hold(low, own, b, -1);
        hold(high, trailing, b, 1);
    }

    /// Takes decision `d` as `reload` says and searches on; after a
    /// candidate's last group, records it as spilled when it reloads.
    fn next(
        &self,
        d: usize,
        reload: bool,
        low: &mut [i64],
        high: &mut [i64],
        state: &mut State,
        best: &mut Option<Best>,
    ) {
        let dec = &self.decisions[d];
        state.reload.push(reload);
        if !dec.last {
            self.go(d + 1, low, high, state, best);
            state.reload.pop();
            return;
        }
        let flags = std::mem::take(&mut state.reload);
        let spilled = flags.contains(&true);
        if spilled {
            state.spills.push((self.cand[dec.cand].node, flags.clone()));
        }
        self.go(d + 1, low, high, state, best);
        if spilled {
            state.spills.pop();
        }
        state.reload = flags;
        state.reload.pop();
    }
}

/// Adds `sign` times `weight` (a node's [`Measures`] weight) to `load` at
/// each of `points`.
fn hold(load: &mut [i64], points: &[u32], weight: &[i64], sign: i64) {
    let width = weight.len();
    for &p in points {
        let at = &mut load[p as usize * width..][..width];
        for (l, w) in at.iter_mut().zip(weight) {
            *l += sign * w;
        }
    }
}

/// Spills `spills` in a copy of the first iteration's program in one
/// round and places every live range of the result, if it can be.
fn realize(
    first: &First,
    pieces: &Pieces,
    arch: &Arch,
    num_banks: u32,
    spills: &[Spill],
) -> Option<Realized> {
    let mut module = first.work.clone();
    if !spills.is_empty() {
        let mut namer = spill::Namer::new(&module);
        let (lin, live) = (&first.lin, &first.live);
        let mut plans = SpillPlans::default();
        for (v, reload) in spills {
            let groups = pieces.groups_of(v.index()).map(|g| pieces.groups[g]);
            plans.push_split(
                live.nodes[v.index()].tensor,
                pieces.save_after[v.index()],
                groups.zip(reload.iter().copied()),
            );
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
    let pieces = Pieces::of(&first.lin, &first.live, &pinned, opts.spill_latency, false);
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
    let pieces = Pieces::of(&first.lin, &first.live, &pinned, opts.spill_latency, false);
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
        let reloads = groups
            .zip(reload)
            .filter(|&(_, &r)| r)
            .map(|(g, _)| pieces.reload_cost[g]);
        cost = reloads.fold(
            cost.saturating_add(pieces.save_cost[v]),
            u64::saturating_add,
        );
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
    let pieces = Pieces::of(&first.lin, &first.live, &pinned, opts.spill_latency, false);
    let points = first.lin.len();
    let nodes = &first.live.nodes;
    let measures = Measures::new(nodes, num_banks);
    let width = measures.cap.len();
    let mut cand = Vec::new();
    let mut decisions = Vec::new();
    let mut low = vec![0i64; points * width];
    let mut high = vec![0i64; points * width];
    for (v, node) in nodes.iter().enumerate() {
        let span: Vec<u32> = (node.start..=node.end).collect();
        let weight = measures.weight(node.banks);
        hold(&mut high, &span, &weight, 1);
        if pieces.cost[v] == Cost::Inf {
            hold(&mut low, &span, &weight, 1);
            continue;
        }
        let i = cand.len();
        let mine: Vec<u32> = pieces.idle(v, node).flat_map(|(lo, hi)| lo..=hi).collect();
        let busy: Vec<u32> = span
            .into_iter()
            .filter(|p| mine.binary_search(p).is_err())
            .collect();
        hold(&mut low, &busy, &weight, 1);
        let groups = pieces.groups_of(v);
        let mut from = 0;
        for g in groups.clone() {
            let lo = pieces.groups[g].0;
            let before = mine.partition_point(|&p| p < lo);
            let own_end = match g.checked_sub(1).filter(|&q| q >= groups.start) {
                Some(q) => pieces.kept_end[q],
                None => pieces.head_end[v],
            };
            let points = mine[from..before].to_vec();
            let own = points.iter().copied().filter(|&p| p <= own_end).collect();
            decisions.push(Decision {
                cand: i,
                group: g,
                points,
                own,
                last: g + 1 == groups.end,
            });
            from = before;
        }
        cand.push(Candidate {
            node: NodeId::new(v),
            weight,
            save: pieces.save_cost[v],
            trailing: mine[from..].to_vec(),
        });
    }
    let mut idle = vec![Vec::new(); points];
    for (x, dec) in decisions.iter().enumerate() {
        for &p in &dec.points {
            idle[p as usize].push(x as u32);
        }
    }
    for (i, c) in cand.iter().enumerate() {
        for &p in &c.trailing {
            idle[p as usize].push((decisions.len() + i) as u32);
        }
    }
    let search = Search {
        first: &first,
        pieces: &pieces,
        arch: &arch,
        num_banks,
        measures,
        cand,
        decisions,
        idle,
    };
    // The mincost sweep's placement, where it realizes, is the best found
    // to begin with: it cuts most of the search at once.
    let mut best = mincost::best_placement(nodes, &pieces, num_banks, points)
        .ok()
        .and_then(|placed| {
            let spills: Vec<Spill> = (placed.spilled.iter())
                .map(|&v| {
                    (
                        v,
                        pieces
                            .groups_of(v.index())
                            .map(|g| placed.reload[g])
                            .collect(),
                    )
                })
                .collect();
            let realized = realize(&first, &pieces, &arch, num_banks, &spills)?;
            let cost = mincost::cost_of(&pieces, &placed);
            Some(Best {
                cost,
                spills,
                realized,
            })
        });
    if search.measures.fit(&low, 0..points as u32) {
        let mut state = State {
            reload: Vec::new(),
            spills: Vec::new(),
            cost: 0,
        };
        search.go(0, &mut low, &mut high, &mut state, &mut best);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Two 3-bank nodes and a 2-bank one fit 8 banks by count, but the
    /// 3-bank nodes take both aligned blocks of four and leave no aligned
    /// pair: the pairs measure is over.
    #[test]
    fn measures_count_aligned_blocks() {
        let nodes = [3, 3, 2].map(|b| Node::spanning(0, 0, 0, b));
        let m = Measures::new(&nodes, 8);
        assert_eq!(
            (m.sizes.as_slice(), m.cap.as_slice()),
            (&[1, 2, 4][..], &[8, 4, 2][..])
        );
        assert_eq!(
            (m.weight(3), m.weight(2), m.weight(1)),
            (vec![3, 2, 1], vec![2, 1, 0], vec![1, 0, 0])
        );
        let mut load = vec![0; 3];
        for n in &nodes {
            hold(&mut load, &[0], &m.weight(n.banks), 1);
        }
        assert_eq!(load, [8, 5, 2]);
        assert!(!m.fit(&load, [0]));
        hold(&mut load, &[0], &m.weight(2), -1);
        assert!(m.fit(&load, [0]));
    }

    /// One-bank nodes are counted in banks alone.
    #[test]
    fn one_bank_nodes_have_one_measure() {
        let nodes = [Node::spanning(0, 0, 3, 1), Node::spanning(1, 2, 5, 1)];
        let m = Measures::new(&nodes, 8);
        assert_eq!((m.sizes, m.cap), (vec![1], vec![8]));
    }
}
