//! The search (SPEC §3.11): the best placement of one iteration, from the
//! plain sweep and the sweep of its spill set thinned ([`keep_back`]), by
//! local search over the ways each node is let go ([`improve`]), seeded
//! restarts on the smallest programs ([`perturb`]) and, last, the flow of
//! [`super::reflow`].

use super::reflow;
use super::sweep::{first, Let, Problem, Stuck};
use crate::alloc::costs::Cost;
use crate::alloc::liveness::Node;
use crate::alloc::split_cost::{cost_of, Pieces, Placement};
use crate::alloc::support::max_add_tree::MaxAddTree;
use crate::alloc::support::rng::Rng;
use crate::alloc::NodeId;
use crate::arch::bank_alignment;
use crate::entity::{IdMap, IdVec};
use std::cmp::Reverse;

/// The best placement of one iteration. The starts are the plain sweep's
/// placement and, on programs of at most [`THIN_NODES`] nodes where
/// [`keep_back`] thins its spill set, the sweep's that first lets go of
/// what is left of it; each start, the cheapest
/// first, is searched from ([`improve`]), and the cheapest result (ties:
/// the earlier) gets [`perturb`]'s restarts, then [`reflow::reflow`]'s
/// flow. A plain sweep that spills nothing cannot be beaten and is kept
/// at once.
pub(in crate::alloc) fn best_placement(
    nodes: &IdVec<NodeId, Node>,
    pieces: &Pieces,
    num_banks: u32,
    points: usize,
) -> Result<Placement, Stuck> {
    let n = nodes.len();
    let problem = Problem::new(nodes, pieces, num_banks);
    let plain = problem.sweep(&IdMap::with_len(n, Let::AtPrice), &IdMap::default())?;
    if plain.spilled.is_empty() {
        return Ok(plain);
    }
    let mut own = IdMap::with_len(n, false);
    for &v in &plain.spilled {
        own[v] = true;
    }
    let mut starts = vec![(cost_of(pieces, &plain), plain)];
    // The plain sweep's own set, none of it taken back, would only be
    // swept again.
    if n <= THIN_NODES && keep_back(nodes, pieces, &mut own, num_banks, points) {
        if let Ok(placed) = problem.sweep(&first(&own), &IdMap::default()) {
            if (&placed.spilled, &placed.reload) != (&starts[0].1.spilled, &starts[0].1.reload) {
                starts.push((cost_of(pieces, &placed), placed));
            }
        }
    }
    starts.sort_by_key(|s| s.0);
    let mut sweeps = SEARCH_WORK / n;
    let mut best: Option<(u64, Placement)> = None;
    for start in starts {
        let found = improve(&problem, start, &mut sweeps);
        if best.as_ref().is_none_or(|b| found.0 < b.0) {
            best = Some(found);
        }
    }
    let best = best.expect("the plain sweep is a start");
    let best = perturb(&problem, best, &mut sweeps).1;
    Ok(reflow::reflow(nodes, pieces, num_banks, best))
}

/// Programs of at most this many nodes get the thinned start of
/// [`best_placement`]. On larger ones (10k to 1M nodes in `psum bench
/// --quality`) it never spilled less than the plain sweep.
const THIN_NODES: usize = 4096;

/// Programs of at most this many nodes get [`perturb`]'s restarts.
const PERTURB_NODES: usize = 64;

/// Restarts [`perturb`] tries.
const PERTURB_ROUNDS: usize = 128;

/// Iterated local search on small programs: up to [`PERTURB_ROUNDS`]
/// times, the best placement's spill set is let go first, two random
/// spillable nodes each a random way ([`Let`]), that sweep's placement
/// is searched from ([`improve`]), and a cheaper result becomes the best.
/// Deterministic: the random choices are seeded by the program's size.
fn perturb(problem: &Problem, mut best: (u64, Placement), sweeps: &mut usize) -> (u64, Placement) {
    let (n, pieces) = (problem.nodes.len(), problem.pieces);
    let spillable: Vec<NodeId> = (pieces.cost.iter())
        .filter_map(|(v, &c)| (c != Cost::Inf).then_some(v))
        .collect();
    if n > PERTURB_NODES || best.0 == 0 || spillable.is_empty() {
        return best;
    }
    let mut rng = Rng::new(n as u64);
    let lets = [Let::AtPrice, Let::First, Let::Never];
    for _ in 0..PERTURB_ROUNDS {
        if *sweeps == 0 {
            break;
        }
        *sweeps -= 1;
        let mut chosen = IdMap::with_len(n, Let::AtPrice);
        for &v in &best.1.spilled {
            chosen[v] = Let::First;
        }
        for _ in 0..2 {
            let v = spillable[rng.index(spillable.len())];
            chosen[v] = lets[rng.index(lets.len())];
        }
        let Ok(placed) = problem.sweep(&chosen, &IdMap::default()) else {
            continue;
        };
        let found = improve(problem, (cost_of(pieces, &placed), placed), sweeps);
        if found.0 < best.0 {
            best = found;
        }
    }
    best
}

/// Programs of at most this many nodes get [`improve`]'s local search.
const SEARCH_NODES: usize = 512;

/// What [`improve`]'s searches of one placement may spend together:
/// sweeps times nodes.
const SEARCH_WORK: usize = 1 << 18;

/// Sets how node `v` is let go and, where flips are kept, whether it is flipped.
fn take(
    chosen: &mut IdMap<NodeId, Let>,
    flipped: &mut IdMap<NodeId, bool>,
    v: NodeId,
    (go, flip): (Let, Option<bool>),
) {
    chosen[v] = go;
    if let Some(f) = flip {
        flipped[v] = f;
    }
}

/// Local search from a placement: its spill set is let go first and every
/// other node at its price; then, one spillable node at a time in node
/// order, each other way of letting it go ([`Let`]) is swept, and the
/// first that spills at less cost is kept, until a pass over the nodes
/// changes nothing. On multi-bank programs a second phase also tries
/// flipping each node's end among equally good blocks, and on small ones a
/// third tries every base for each node ([`try_bases`]). Each sweep spends
/// one of `sweeps`; none left, the search stops. Only on programs of at
/// most [`SEARCH_NODES`] nodes.
fn improve(problem: &Problem, mut best: (u64, Placement), sweeps: &mut usize) -> (u64, Placement) {
    let (n, pieces) = (problem.nodes.len(), problem.pieces);
    if n > SEARCH_NODES || best.0 == 0 {
        return best;
    }
    let mut chosen = IdMap::with_len(n, Let::AtPrice);
    for &v in &best.1.spilled {
        chosen[v] = Let::First;
    }
    let multi_bank = problem.nodes.values().any(|v| v.banks > 1);
    let mut flipped = IdMap::with_len(if multi_bank { n } else { 0 }, false);
    let phases: &[bool] = if multi_bank { &[false, true] } else { &[false] };
    for &flips in phases {
        loop {
            let mut changed = false;
            for v in problem.nodes.keys() {
                let was = (chosen[v], flipped.get(v).copied());
                let lets = [Let::AtPrice, Let::First, Let::Never];
                let spillable = pieces.cost[v] != Cost::Inf;
                let ways = (lets.into_iter().filter(|_| spillable))
                    .map(|l| (l, was.1))
                    .chain(was.1.filter(|_| flips).map(|f| (was.0, Some(!f))));
                for way in ways {
                    if way == was {
                        continue;
                    }
                    if *sweeps == 0 {
                        return best;
                    }
                    *sweeps -= 1;
                    take(&mut chosen, &mut flipped, v, way);
                    let swept = problem.sweep(&chosen, &flipped).ok();
                    match swept.map(|p| (cost_of(pieces, &p), p)) {
                        Some(better) if better.0 < best.0 => {
                            best = better;
                            changed = true;
                            break;
                        }
                        _ => take(&mut chosen, &mut flipped, v, was),
                    }
                }
            }
            if !changed {
                break;
            }
        }
    }
    if n <= PERTURB_NODES && multi_bank {
        best = try_bases(problem, best, &chosen, &flipped, sweeps);
    }
    best
}

/// The last phase of [`improve`] on small multi-bank programs: one node at
/// a time in node order, its own tensor is swept at each other aligned
/// base in turn (where that block is free when it starts), and every base
/// that spills at less cost is kept; passes repeat until one changes
/// nothing. Each sweep spends one of `sweeps`.
fn try_bases(
    problem: &Problem,
    mut best: (u64, Placement),
    chosen: &IdMap<NodeId, Let>,
    flipped: &IdMap<NodeId, bool>,
    sweeps: &mut usize,
) -> (u64, Placement) {
    let nodes = problem.nodes;
    let mut prefer = IdMap::with_len(nodes.len(), 0u8);
    loop {
        let mut changed = false;
        for v in nodes.keys() {
            let b = nodes[v].banks;
            let bases =
                (0..=problem.num_banks.saturating_sub(b)).step_by(bank_alignment(b) as usize);
            for base in bases.map(|x| x as u8 + 1) {
                if prefer[v] == base {
                    continue;
                }
                if *sweeps == 0 {
                    return best;
                }
                *sweeps -= 1;
                let was = std::mem::replace(&mut prefer[v], base);
                let swept = problem.sweep_preferring(chosen, flipped, &prefer).ok();
                match swept.map(|p| (cost_of(problem.pieces, &p), p)) {
                    Some(better) if better.0 < best.0 => {
                        best = better;
                        changed = true;
                    }
                    _ => prefer[v] = was,
                }
            }
        }
        if !changed {
            return best;
        }
    }
}

/// Takes back from `spilled` every node the banks can hold over its idle
/// ranges as well, the costliest first (each taken back holds its banks
/// for the rest); returns whether it took any back.
fn keep_back(
    nodes: &IdVec<NodeId, Node>,
    pieces: &Pieces,
    spilled: &mut IdMap<NodeId, bool>,
    num_banks: u32,
    points: usize,
) -> bool {
    let load = pieces.load(nodes, spilled, points);
    let limit = |v: NodeId| i64::from(num_banks) - i64::from(nodes[v].banks);
    // Loads only grow, so a node without room now never has it.
    let room_now = |v: NodeId| {
        (pieces.idle(v, &nodes[v])).all(|(lo, hi)| {
            load[lo as usize..=hi as usize]
                .iter()
                .all(|&l| l <= limit(v))
        })
    };
    let mut order: Vec<NodeId> = (nodes.keys())
        .filter(|&v| spilled[v] && room_now(v))
        .collect();
    if order.is_empty() {
        return false;
    }
    order.sort_by_key(|&v| (Reverse(pieces.cost[v]), v));
    // The tree holds the highest load of each stretch between the ends of
    // the candidates' idle ranges.
    let mut cuts: Vec<u32> = (order.iter())
        .flat_map(|&v| pieces.idle(v, &nodes[v]))
        .flat_map(|(lo, hi)| [lo, hi + 1])
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    let highest: Vec<i64> = (cuts.windows(2))
        .map(|w| load[w[0] as usize..w[1] as usize].iter().copied().max())
        .map(|m| m.expect("cuts are distinct"))
        .collect();
    let mut tree = MaxAddTree::from_values(&highest);
    let at = |p: u32| cuts.partition_point(|&c| c < p);
    let mut took = false;
    for v in order {
        let room = |(lo, hi): (u32, u32)| tree.max(at(lo), at(hi + 1)) <= limit(v);
        if pieces.idle(v, &nodes[v]).all(room) {
            for (lo, hi) in pieces.idle(v, &nodes[v]) {
                tree.add(at(lo), at(hi + 1), i64::from(nodes[v].banks));
            }
            spilled[v] = false;
            took = true;
        }
    }
    took
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc::setup::Start;
    use crate::alloc::AllocOptions;
    use crate::gen::random::{program, RandomConfig};

    /// The local search and its restarts never hand back a costlier
    /// placement than they were given, and on small multi-bank programs
    /// under pressure each finds cheaper ones than what came before it.
    #[test]
    fn local_search_only_improves() {
        let opts = AllocOptions::default();
        let (mut cheaper, mut restarted) = (0, 0);
        for seed in 0..40 {
            let cfg = RandomConfig {
                tensors: 16,
                max_banks: 4,
                pressure: Some(12.0),
                ..RandomConfig::default()
            };
            let first = Start::of(program(seed, &cfg).unwrap(), &opts)
                .unwrap()
                .analysis;
            let pinned = IdMap::with_len(first.module.tensors.len(), false);
            let pieces = Pieces::of(&first.lin, &first.live, &pinned, opts.spill_latency, false);
            let problem = Problem::new(&first.live.nodes, &pieces, first.num_banks);
            let plain = problem
                .sweep(
                    &IdMap::with_len(problem.nodes.len(), Let::AtPrice),
                    &IdMap::default(),
                )
                .unwrap();
            let given = cost_of(&pieces, &plain);
            let mut sweeps = SEARCH_WORK / problem.nodes.len();
            let (cost, placed) = improve(&problem, (given, plain), &mut sweeps);
            assert!(cost <= given, "seed {seed}: {cost} > {given}");
            assert_eq!(cost, cost_of(&pieces, &placed));
            cheaper += usize::from(cost < given);
            let (again, placed) = perturb(&problem, (cost, placed), &mut sweeps);
            assert!(again <= cost, "seed {seed}: restarts {again} > {cost}");
            assert_eq!(again, cost_of(&pieces, &placed));
            restarted += usize::from(again < cost);
        }
        assert!(cheaper >= 10, "cheaper on {cheaper} of 40");
        assert!(restarted >= 4, "restarts cheaper on {restarted} of 40");
    }
}
