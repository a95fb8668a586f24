//! The last step of `--allocator mincost` (SPEC §3.11, not the
//! reference's) on one-bank programs whose spill code does not depend on
//! loops: the idle ranges a placement lets go are chosen again, all at
//! once, by Carlisle & Lloyd's flow ([`flow::max_weight_k_colorable`]).
//!
//! With one-bank nodes and no loop extension, a split allocation is a set
//! of idle ranges let go: a node holds PSUM over its held stretches and
//! the idle ranges it keeps, and any such set that covers no point more
//! than the banks there are is placed by colouring the intervals in order
//! of start. Its cost is a save per node with a range let go and the
//! reload after each range let go, which the flow cannot weigh exactly:
//! a save is owed once, however many of a node's ranges go. So the flow
//! prices each range at its reload plus a part of its node's save: none
//! for the nodes the placement already spills, so that letting go more of
//! their ranges is as cheap as it is, and half for the others, between the
//! whole save, which charges a node that goes at several ranges for
//! several saves, and none. The flow's set replaces the placement when it
//! costs less.

use crate::alloc::liveness::Node;
use crate::alloc::split_cost::{cost_of, Pieces, Placement, Stretch};
use crate::alloc::NodeId;
use crate::entity::{IdMap, IdVec};
use crate::flow::{self, Weight};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// `placed`, or the flow's choice of idle ranges where that costs less
/// (see the module doc); `placed` as it is on programs with a node of
/// more than one bank or spill code that depends on loops.
pub(super) fn reflow(
    nodes: &IdVec<NodeId, Node>,
    pieces: &Pieces,
    num_banks: u32,
    placed: Placement,
) -> Placement {
    if placed.spilled.is_empty() || nodes.values().any(|n| n.banks != 1) || !pieces.unextended() {
        return placed;
    }
    let mut paid = IdMap::with_len(nodes.len(), false);
    for &v in &placed.spilled {
        paid[v] = true;
    }
    let mut spans = Vec::new();
    let mut weights = Vec::new();
    for (v, node) in nodes.iter() {
        for stretch in pieces.stretches(v, node) {
            let (span, weight) = match stretch {
                Stretch::Held(span) => (span, Weight::Forced),
                Stretch::Idle(span, next) => {
                    let reload = next.map_or(0, |g| pieces.reload_cost[g]);
                    let save = if paid[v] { 0 } else { pieces.save_cost[v] / 2 };
                    (span, Weight::Finite(reload.saturating_add(save)))
                }
            };
            spans.push(span);
            weights.push(weight);
        }
    }
    let Some(kept) =
        flow::max_weight_k_colorable(&spans, &vec![1; spans.len()], &weights, num_banks)
    else {
        return placed;
    };
    match place(nodes, pieces, num_banks, &kept) {
        Some(found) if cost_of(pieces, &found) < cost_of(pieces, &placed) => found,
        _ => placed,
    }
}

/// A piece to colour: its first and last point, and its segment (a node's
/// own tensor, or `nodes + g` for the reload before read group `g`).
type Segment = (u32, u32, usize);

/// The placement that keeps the idle ranges `kept` flags (in the order of
/// [`Pieces::stretches`] over the nodes, held stretches included), banks
/// coloured in order of start, the highest free bank first; `None` when
/// some point has no bank left (the flow's sets always fit).
fn place(
    nodes: &IdVec<NodeId, Node>,
    pieces: &Pieces,
    num_banks: u32,
    kept: &[bool],
) -> Option<Placement> {
    let n = nodes.len();
    let mut spilled = IdMap::with_len(n, false);
    let mut reload = IdMap::with_len(pieces.groups.len(), false);
    let mut segments: Vec<Segment> = Vec::with_capacity(n);
    let mut flags = kept.iter();
    for (v, node) in nodes.iter() {
        // The segment being held, from where it starts.
        let mut open = Some((node.start, v.index()));
        for stretch in pieces.stretches(v, node) {
            let kept = *flags.next().expect("a flag per stretch");
            let Stretch::Idle((lo, _), next) = stretch else {
                continue;
            };
            if kept {
                continue;
            }
            spilled[v] = true;
            if let Some((start, seg)) = open.take() {
                segments.push((start, lo - 1, seg));
            }
            if let Some(g) = next {
                reload[g] = true;
                open = Some((pieces.groups[g].0, n + g.index()));
            }
        }
        if let Some((start, seg)) = open {
            // A reload ends with its node's last read group.
            let end = match pieces.groups_of(v).last() {
                Some(g) if seg >= n => pieces.groups[g].1,
                _ => node.end,
            };
            segments.push((start, end, seg));
        }
    }
    segments.sort_unstable_by_key(|&(start, _, seg)| (start, seg));
    let mut base = vec![0u8; n + pieces.groups.len()];
    let mut free: u64 = if num_banks >= 64 {
        u64::MAX
    } else {
        (1 << num_banks) - 1
    };
    let mut busy = BinaryHeap::new();
    for (start, end, seg) in segments {
        while let Some(&Reverse((last, bank))) = busy.peek() {
            if last >= start {
                break;
            }
            busy.pop();
            free |= 1u64 << bank;
        }
        let bank = free.checked_ilog2()?;
        free &= !(1u64 << bank);
        busy.push(Reverse((end, bank)));
        base[seg] = bank as u8;
    }
    // The segments' banks, split into the nodes' and the reloads' tables
    // in their own buffers.
    let group_bank = base.split_off(n).into_iter().collect();
    Some(Placement {
        spilled: (spilled.iter())
            .filter_map(|(v, &s)| s.then_some(v))
            .collect(),
        bank: base.into_iter().collect(),
        reload,
        group_bank,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc::mincost::sweep::{Let, Problem};
    use crate::alloc::setup::Start;
    use crate::alloc::{allocate_owned, AllocOptions, Allocator};
    use crate::gen::random::{program, RandomConfig};

    /// On one-bank straight-line programs under pressure the flow's set
    /// never costs more than the plain sweep's, often less, and what it
    /// places fits the program's spill code in one round.
    #[test]
    fn reflow_spills_less_and_fits_in_one_round() {
        let opts = AllocOptions::default();
        let mut cheaper = 0;
        for seed in 0..30 {
            let cfg = RandomConfig {
                tensors: 300,
                max_banks: 1,
                loops: false,
                pressure: Some(12.0),
                ..RandomConfig::default()
            };
            let m = program(seed, &cfg).unwrap();
            let first = Start::of(m.clone(), &opts).unwrap().analysis;
            let num_banks = first.num_banks;
            let pinned = IdMap::with_len(first.module.tensors.len(), false);
            let pieces = Pieces::of(&first.lin, &first.live, &pinned, opts.spill_latency, false);
            assert!(pieces.unextended(), "seed {seed}");
            let problem = Problem::new(&first.live.nodes, &pieces, num_banks);
            let chosen = IdMap::with_len(first.live.nodes.len(), Let::AtPrice);
            let plain = problem.sweep(&chosen, &IdMap::default()).unwrap();
            let given = cost_of(&pieces, &plain);
            let found = reflow(&first.live.nodes, &pieces, num_banks, plain);
            let cost = cost_of(&pieces, &found);
            assert!(cost <= given, "seed {seed}: {cost} > {given}");
            cheaper += usize::from(cost < given);
            let mincost = AllocOptions {
                allocator: Allocator::Mincost,
                ..opts
            };
            let out = allocate_owned(m, &mincost).unwrap();
            assert_eq!(out.report.iterations, 2, "seed {seed}");
        }
        assert!(cheaper >= 10, "cheaper on {cheaper} of 30");
    }
}
