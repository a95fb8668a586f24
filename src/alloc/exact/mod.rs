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

mod realize;
mod search;

use super::costs::Cost;
use super::liveness::{self, Node};
use super::mincost;
use super::setup::{Finish, Start};
use super::split_cost::{cost_of, Pieces};
use super::{AllocError, AllocOptions, AllocOutcome};
use crate::entity::IdMap;
use crate::ir::{Module, TensorId};
use realize::{realize, Best, Realized, Spill};
use search::Search;

/// The most PSUM nodes (after the memloc split) the exact search takes.
pub const MAX_NODES: usize = 24;

/// A spillable node of a validated module's first iteration (SPEC §3.5):
/// its tensor's name, what its save costs and what a reload before each of
/// its read groups costs.
pub(crate) type SpillCandidate = (String, u64, Vec<u64>);

/// The spillable nodes of a validated module's first iteration, in id
/// order: what the exact search chooses among.
pub fn candidates(m: &Module, opts: &AllocOptions) -> Result<Vec<SpillCandidate>, AllocError> {
    let first = Start::of(m.clone(), opts)?.analysis;
    let pinned = IdMap::with_len(first.module.tensors.len(), false);
    let pieces = Pieces::of(&first.lin, &first.live, &pinned, opts.spill_latency, false);
    Ok((first.live.nodes.iter())
        .filter(|&(v, _)| pieces.cost[v] != Cost::Inf)
        .map(|(v, node)| {
            let name = first.module.tensor(node.tensor).name.clone();
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
    let start = Start::of(m.clone(), opts)?;
    let first = &start.analysis;
    let pinned = IdMap::with_len(first.module.tensors.len(), false);
    let pieces = Pieces::of(&first.lin, &first.live, &pinned, opts.spill_latency, false);
    let mut spills: Vec<Spill> = Vec::new();
    let mut cost = 0u64;
    for (v, node) in first.live.nodes.iter() {
        let name = &first.module.tensor(node.tensor).name;
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
        spills.push((v, reload.clone()));
    }
    if spills.len() != spill.len() {
        return Ok(None);
    }
    let realized = realize(first, &pieces, &spills);
    Ok(realized.map(|r| outcome(start, &spills, cost, r)))
}

/// The outcome of spilling `spills` for `cost` cycles as `r` realizes it.
fn outcome(start: Start, spills: &[Spill], cost: u64, r: Realized) -> AllocOutcome {
    let Start {
        analysis: first,
        demand,
        warnings,
        mut log,
        parallel,
        ..
    } = start;
    if !spills.is_empty() {
        log.v(format!("spilling from PSUM cost about {cost} cycles"));
    }
    let spilled: Vec<TensorId> = (spills.iter())
        .map(|(v, _)| first.live.nodes[*v].tensor)
        .collect();
    let finish = Finish {
        work: r.module,
        arch: &first.arch,
        num_banks: first.num_banks,
        live: &r.live,
        points: r.lin.len(),
        banks: &r.bank,
        spilled: &spilled,
        spill_cost: cost,
        iterations: 1 + u32::from(!spills.is_empty()),
        best_heuristic: 0,
        demand,
        log,
        warnings,
        parallel,
    };
    finish.finish()
}

/// Allocates a validated module of at most [`MAX_NODES`] PSUM nodes at
/// the least spill cost under SPEC §3.8 (SPEC §3.11), taking it over.
pub(super) fn allocate(m: Module, opts: &AllocOptions) -> Result<AllocOutcome, AllocError> {
    let start = Start::of(m, opts)?;
    let first = &start.analysis;
    let n = first.live.nodes.len();
    if n > MAX_NODES {
        return Err(AllocError::ExactTooLarge {
            nodes: n,
            limit: MAX_NODES,
        });
    }
    let pinned = IdMap::with_len(first.module.tensors.len(), false);
    let pieces = Pieces::of(&first.lin, &first.live, &pinned, opts.spill_latency, false);
    let (points, nodes, num_banks) = (
        first.lin.len(),
        first.live.nodes.as_slice(),
        first.num_banks,
    );
    let (search, low, high) = Search::new(first, &pieces);
    // The mincost sweep's placement, where it realizes, is the best found
    // to begin with: it cuts most of the search at once.
    let mut best = mincost::best_placement(&first.live.nodes, &pieces, num_banks, points)
        .ok()
        .and_then(|placed| {
            let spills: Vec<Spill> = (placed.spilled.iter())
                .map(|&v| (v, pieces.groups_of(v).map(|g| placed.reload[g]).collect()))
                .collect();
            let realized = realize(first, &pieces, &spills)?;
            let cost = cost_of(&pieces, &placed);
            Some(Best {
                cost,
                spills,
                realized,
            })
        });
    search.run(low, high, &mut best);
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
            tensor: first.input_tensor(stuck.tensor),
            name: first.module.tensor(stuck.tensor).name.clone(),
            pressure,
            point,
        });
    };
    Ok(outcome(start, &spills, cost, realized))
}
