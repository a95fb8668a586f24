//! Lower bounds on PSUM allocation (`psum bound`): what no allocator can beat.
//!
//! Both bounds work on the live intervals of SPEC §3.3 (closed `[start, end]`
//! in program points, each holding `liveN` banks) under the closed-interval
//! interference of SPEC §3.4.
//!
//! - [`peak_demand`]: the most banks live at one point. No allocation of the
//!   program can use fewer banks without spilling.
//! - [`min_spills_one_bank`]: when every node holds one bank, the fewest nodes
//!   that must spill on `k` banks. A node that is not spilled holds its bank
//!   over its whole interval, so the unspilled nodes form a k-colorable
//!   subgraph of the interval graph; the bound is `n` minus the largest such
//!   subgraph. For interval graphs that maximum is found exactly by the greedy
//!   of Yannakakis & Gavril ("The maximum k-colorable subgraph problem for
//!   chordal graphs", IPL 24, 1987) and Carlisle & Lloyd ("On the k-coloring of
//!   intervals", Discrete Applied Mathematics 59, 1995): take intervals by
//!   increasing right endpoint and keep one when, with it, no point is covered
//!   by more than `k` kept intervals.
//!
//! - [`min_spill_cost_one_bank`]: when every node holds one bank, the least
//!   total spill cost (SPEC §3.5 cycles) of a set of nodes whose removal
//!   leaves at most `k` banks live at every point: the complement of the
//!   heaviest k-colorable subgraph, weighted by cost, by the minimum-cost
//!   flow of Carlisle & Lloyd (1995) (`flow`). A spilled node
//!   still holds PSUM at its writes and reads, so no spill set under SPEC
//!   §3.8 costs less.
//!
//! [`crate::alloc::problem`] extracts the intervals of a module's first allocation
//! iteration (after the memloc split, before any spill), which is also what
//! [`crate::export`] hands to MiniMalloc; [`bounds`] computes the bounds.

use crate::alloc::costs::Cost;
use crate::alloc::support::max_add_tree::MaxAddTree;
use crate::alloc::{AllocProblem, Interval, SplitSpans};
use crate::flow::{self, Weight};
use serde::Serialize;
use std::fmt::Write as _;

/// Both lower bounds of a problem (`psum bound`, `--report json`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BoundReport {
    /// The arch codename.
    pub arch: String,
    /// Banks available.
    pub num_banks: u32,
    /// Number of nodes.
    pub nodes: usize,
    /// Peak demand in banks: no allocation needs fewer banks without spilling.
    pub peak_demand: u32,
    /// First point of peak demand (`null` without nodes).
    pub peak_point: Option<u32>,
    /// Fewest nodes that must spill on `num_banks` banks (`null` unless every
    /// node holds one bank).
    pub min_spills: Option<usize>,
    /// One minimum spill set, by name in node order (`null` with `min_spills`).
    pub spill_set: Option<Vec<String>>,
    /// Least total spill cost in cycles of a set of nodes whose removal
    /// fits `num_banks` banks (`null` unless every node holds one bank, or
    /// when the unspillable nodes alone do not fit).
    pub min_spill_cost_cycles: Option<u64>,
    /// Least total cost of split spilling (SPEC §3.11) on `num_banks`
    /// banks, a lower bound for `mincost` and `exact` (`null` as for
    /// `min_spill_cost_cycles`).
    pub min_split_cost_cycles: Option<u64>,
}

/// Computes [`BoundReport`] for a problem.
pub fn bounds(p: &AllocProblem) -> BoundReport {
    let ivs = p.intervals();
    let peak = peak_demand(&ivs);
    let spilled = min_spills_one_bank(&ivs, p.num_banks);
    BoundReport {
        arch: p.arch.clone(),
        num_banks: p.num_banks,
        nodes: ivs.len(),
        peak_demand: peak.banks,
        peak_point: peak.point,
        min_spills: spilled.as_ref().map(Vec::len),
        spill_set: spilled.map(|s| s.iter().map(|&i| p.buffers[i].id.clone()).collect()),
        min_spill_cost_cycles: min_spill_cost_one_bank(&ivs, &p.costs, p.num_banks),
        min_split_cost_cycles: min_split_cost_one_bank(&ivs, &p.split, p.num_banks),
    }
}

/// Names of a minimum spill set that the text form of `psum bound` shows.
const SHOWN_SPILLS: usize = 8;

impl BoundReport {
    /// The text form printed by `psum bound`: at most eight
    /// names of the spill set (the JSON report has them all).
    pub fn render(&self) -> String {
        let mut out = String::new();
        let at = self
            .peak_point
            .map(|p| format!(" at point {p}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "peak demand: {} banks{at} ({} nodes, {} banks available)",
            self.peak_demand, self.nodes, self.num_banks
        );
        match (&self.min_spills, &self.spill_set) {
            (Some(0), _) => {
                let _ = writeln!(out, "minimum spills: 0 (every node fits without spilling)");
            }
            (Some(n), Some(set)) => {
                let shown = set[..set.len().min(SHOWN_SPILLS)].join(", ");
                let more = set.len().saturating_sub(SHOWN_SPILLS);
                let rest = if more > 0 {
                    format!(" and {more} more; `--report json` lists all")
                } else {
                    String::new()
                };
                let _ = writeln!(out, "minimum spills: {n} (for example {shown}{rest})");
            }
            _ => {
                let _ = writeln!(
                    out,
                    "minimum spills: not computed (exact only when every node holds one bank)"
                );
            }
        }
        match (self.min_spills, self.min_spill_cost_cycles) {
            (Some(_), Some(c)) => {
                let _ = writeln!(out, "minimum spill cost: {c} cycles");
                if let Some(c) = self.min_split_cost_cycles {
                    let _ = writeln!(out, "minimum split spill cost: at least {c} cycles");
                }
            }
            (Some(_), None) => {
                let _ = writeln!(
                    out,
                    "minimum spill cost: inf (the unspillable nodes do not fit)"
                );
            }
            _ => {}
        }
        out
    }
}

/// The peak demand and the first program point where it occurs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Peak {
    /// Most banks live at one point (0 for no intervals).
    pub banks: u32,
    /// The first point with that demand (`None` for no intervals).
    pub point: Option<u32>,
}

/// The maximum over program points of the banks live there (SPEC §3.4
/// `peak_demand`), by a sweep over interval endpoints in O(n log n).
///
/// ```
/// use psum::alloc::Interval;
/// use psum::bound::peak_demand;
///
/// let iv = |start, end, banks| Interval { start, end, banks };
/// // Points 2–3 hold 1 + 2 banks, points 4–5 hold 2 + 2: the peak is 4, first at point 4.
/// let peak = peak_demand(&[iv(0, 3, 1), iv(2, 6, 2), iv(4, 5, 2)]);
/// assert_eq!((peak.banks, peak.point), (4, Some(4)));
/// assert_eq!(peak_demand(&[]).banks, 0);
/// ```
pub fn peak_demand(intervals: &[Interval]) -> Peak {
    // Events at `start` add banks; events at `end + 1` remove them. At one
    // coordinate removals sort first, so `[a, p]` and `[p + 1, b]` never count
    // together while `[a, p]` and `[p, b]` do.
    let mut events: Vec<(u64, i64)> = Vec::with_capacity(2 * intervals.len());
    for iv in intervals {
        debug_assert!(iv.start <= iv.end, "interval ends before it starts");
        events.push((u64::from(iv.start), i64::from(iv.banks)));
        events.push((u64::from(iv.end) + 1, -i64::from(iv.banks)));
    }
    events.sort_unstable();
    let mut live = 0i64;
    let mut peak = Peak {
        banks: 0,
        point: None,
    };
    for (at, delta) in events {
        live += delta;
        if delta > 0 && live > i64::from(peak.banks) {
            peak = Peak {
                banks: u32::try_from(live).expect("demand fits u32"),
                point: Some(u32::try_from(at).expect("start point fits u32")),
            };
        }
    }
    peak
}

/// The fewest one-bank nodes that must spill on `num_banks` banks: returns the
/// indices (ascending) of a minimum set of intervals whose removal leaves no
/// point covered more than `num_banks` times. `None` when some interval holds
/// other than one bank (the bound is only exact for one-bank nodes).
///
/// Greedy by earliest right endpoint (Yannakakis & Gavril 1987; Carlisle &
/// Lloyd 1995), which is optimal for interval graphs: an interval is kept
/// unless some point inside it is already covered by `num_banks` kept
/// intervals. Kept coverage is held in a segment tree over the distinct start
/// points (coverage only rises at a start), so the whole runs in O(n log n).
pub fn min_spills_one_bank(intervals: &[Interval], num_banks: u32) -> Option<Vec<usize>> {
    if intervals.iter().any(|iv| iv.banks != 1) {
        return None;
    }
    let mut starts: Vec<u32> = intervals.iter().map(|iv| iv.start).collect();
    starts.sort_unstable();
    starts.dedup();
    let mut order: Vec<usize> = (0..intervals.len()).collect();
    order.sort_by_key(|&i| (intervals[i].end, intervals[i].start, i));
    let mut tree = MaxAddTree::new(starts.len());
    let mut spilled = Vec::new();
    for i in order {
        let iv = intervals[i];
        // Coverage at any point of [start, end] equals coverage at the last
        // start point at or before it, and `iv.start` is itself a start point.
        let lo = starts.partition_point(|&s| s < iv.start);
        let hi = starts.partition_point(|&s| s <= iv.end);
        if tree.max(lo, hi) < i64::from(num_banks) {
            tree.add(lo, hi, 1);
        } else {
            spilled.push(i);
        }
    }
    spilled.sort_unstable();
    Some(spilled)
}

/// The least total cost of a set of one-bank intervals whose removal
/// leaves no point covered more than `num_banks` times, `costs[i]` being
/// interval `i`'s ([`Cost::Inf`]: it cannot be removed): the total cost
/// minus the heaviest kept set of Carlisle & Lloyd's flow
/// (`flow::max_weight_k_colorable`). `None` when some interval holds
/// other than one bank, or when the unremovable ones alone cover a point
/// more than `num_banks` times.
pub fn min_spill_cost_one_bank(
    intervals: &[Interval],
    costs: &[Cost],
    num_banks: u32,
) -> Option<u64> {
    if intervals.iter().any(|iv| iv.banks != 1) {
        return None;
    }
    let spans: Vec<(u32, u32)> = intervals.iter().map(|iv| (iv.start, iv.end)).collect();
    let weights: Vec<Weight> = (costs.iter())
        .map(|c| c.finite().map_or(Weight::Forced, Weight::Finite))
        .collect();
    least_removal(&spans, &weights, num_banks).map(|(cost, _)| cost)
}

/// The least total weight of a set of the one-bank `spans` whose removal
/// leaves no point covered more than `num_banks` times, none of the
/// [`Weight::Forced`] ones removed, and which spans Carlisle & Lloyd's
/// flow (`flow::max_weight_k_colorable`) keeps. `None` when the forced
/// spans alone do not fit.
fn least_removal(
    spans: &[(u32, u32)],
    weights: &[Weight],
    num_banks: u32,
) -> Option<(u64, Vec<bool>)> {
    let kept = flow::max_weight_k_colorable(spans, &vec![1; spans.len()], weights, num_banks)?;
    let gone = (kept.iter().zip(weights)).filter_map(|(&k, w)| match (k, w) {
        (false, Weight::Finite(c)) => Some(*c),
        _ => None,
    });
    Some((gone.fold(0, u64::saturating_add), kept))
}

/// A lower bound on the cost of split spilling (SPEC §3.11) one-bank
/// intervals on `num_banks` banks, `split[i]` being interval `i`'s spans
/// ([`crate::alloc::AllocProblem::split`]), by Lagrangian relaxation of the
/// save each node owes once. Each round shares every node's save among
/// its idle ranges and prices each range at its reload plus its share;
/// the cheapest set of idle ranges whose removal, with every held stretch
/// kept, leaves no point covered more than `num_banks` times (Carlisle &
/// Lloyd's flow) then costs no more than any split allocation, which
/// leaves its nodes out of PSUM over whole idle ranges, pays each one's
/// reload and each node's save once, at least the shares of the ranges it
/// lets go. The first round shares equally (rounded down); each later one
/// moves part of the shares of a node's kept ranges to its ranges let go,
/// where the round let go some but not all ([`SPLIT_ROUNDS`] rounds, or
/// as many as [`SPLIT_WORK`] allows, fewer when no share moves). The
/// bound is the best round's. `None` when some interval holds other than
/// one bank, or when the held stretches alone do not fit.
pub(crate) fn min_split_cost_one_bank(
    intervals: &[Interval],
    split: &[SplitSpans],
    num_banks: u32,
) -> Option<u64> {
    if intervals.iter().any(|iv| iv.banks != 1) {
        return None;
    }
    let held = split.iter().flat_map(|s| s.held.iter().copied());
    let mut spans: Vec<(u32, u32)> = held.collect();
    let forced = spans.len();
    spans.extend(split.iter().flat_map(|s| s.idle.iter().map(|&(r, _)| r)));
    let reload: Vec<u64> = (split.iter())
        .flat_map(|s| s.idle.iter().map(|&(_, c)| c))
        .collect();
    // Each node's idle ranges, as a run of `share`.
    let mut runs = Vec::with_capacity(split.len());
    let mut share = Vec::with_capacity(reload.len());
    for s in split {
        let from = share.len();
        let each = s.save / s.idle.len().max(1) as u64;
        share.extend(std::iter::repeat_n(each, s.idle.len()));
        runs.push(from..share.len());
    }
    let mut best = 0;
    let rounds = (SPLIT_WORK / spans.len().max(1)).clamp(1, SPLIT_ROUNDS);
    for round in 0..rounds {
        let idle = (reload.iter().zip(&share)).map(|(&r, &s)| Weight::Finite(r.saturating_add(s)));
        let weights: Vec<Weight> = std::iter::repeat_n(Weight::Forced, forced)
            .chain(idle)
            .collect();
        let (cost, kept) = least_removal(&spans, &weights, num_banks)?;
        best = best.max(cost);
        let kept = &kept[forced..];
        let mut moved_any = false;
        for run in runs.iter().cloned() {
            let left = kept[run.clone()].iter().filter(|&&k| !k).count();
            if left == 0 || left == run.len() {
                continue;
            }
            let mut moved = 0;
            for r in run.clone().filter(|&r| kept[r]) {
                let part = share[r] * SPLIT_STEP.0 / (SPLIT_STEP.1 + 2 * round as u64);
                share[r] -= part;
                moved += part;
            }
            let each = moved / left as u64;
            for r in run.filter(|&r| !kept[r]) {
                share[r] += each;
            }
            moved_any |= each > 0;
        }
        if !moved_any {
            break;
        }
    }
    Some(best)
}

/// Rounds of [`min_split_cost_one_bank`]'s Lagrangian relaxation at most.
pub(crate) const SPLIT_ROUNDS: usize = 24;

/// What [`min_split_cost_one_bank`]'s rounds may spend together: rounds
/// times spans (held and idle). Past it, a program gets fewer rounds, at
/// least one: 24 up to about 700,000 spans (some 150,000 one-bank nodes),
/// 3 at a million nodes.
pub(crate) const SPLIT_WORK: usize = 1 << 24;

/// Round `r` of [`min_split_cost_one_bank`] moves `a / (b + 2r)` of each
/// share of a node's kept ranges, for `SPLIT_STEP = (a, b)`.
const SPLIT_STEP: (u64, u64) = (5, 10);

#[cfg(test)]
mod tests {
    use super::BoundReport;

    /// The text form names at most eight of a spill set and says how many
    /// more there are; a set of eight is shown whole.
    #[test]
    fn render_shortens_a_long_spill_set() {
        let report = |spilled: usize| BoundReport {
            arch: "trn1".into(),
            num_banks: 8,
            nodes: 20,
            peak_demand: 8 + spilled as u32,
            peak_point: Some(3),
            min_spills: Some(spilled),
            spill_set: Some((0..spilled).map(|i| format!("t{i}")).collect()),
            min_spill_cost_cycles: Some(64 * spilled as u64),
            min_split_cost_cycles: Some(64 * spilled as u64),
        };
        let line = |r: &BoundReport| r.render().lines().nth(1).unwrap().to_string();
        assert_eq!(
            line(&report(11)),
            "minimum spills: 11 (for example t0, t1, t2, t3, t4, t5, t6, t7 and 3 more; `--report json` lists all)"
        );
        assert_eq!(
            line(&report(8)),
            "minimum spills: 8 (for example t0, t1, t2, t3, t4, t5, t6, t7)"
        );
    }
}
