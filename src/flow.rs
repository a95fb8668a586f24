//! Minimum-cost flow on interval graphs: the heaviest subset of closed
//! intervals that covers no point more than `k` times (`psum bound`'s
//! cost bound, SPEC §3.11).
//!
//! Carlisle & Lloyd ("On the k-coloring of intervals", Discrete Applied
//! Mathematics 59, 1995) reduce the maximum-weight k-colorable subgraph of
//! an interval graph to a minimum-cost flow: one node per distinct
//! endpoint coordinate (every `start` and `end + 1`), a chain arc from each
//! coordinate to the next of capacity `k` and cost 0, and an arc of
//! capacity 1 and cost `−weight` from `start` to `end + 1` per interval.
//! Any `k` units of flow from the first coordinate to the last use at most
//! `k` interval arcs across each cut, so the intervals they carry are
//! k-colorable, and every k-colorable set is carried so; the cheapest flow
//! of value `k` keeps the heaviest set. The flow is found by `k`
//! successive shortest paths (Dijkstra over reduced costs on a radix heap,
//! with the first potentials from one pass over the acyclic network),
//! O(k · n · b) for b-bit costs, in 64-bit arithmetic when no path can cost
//! beyond it, else in 128-bit.

/// What keeping an interval is worth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Weight {
    /// Dropping it costs this much.
    Finite(u64),
    /// It cannot be dropped.
    Forced,
}

/// The integer type of arc costs and path lengths.
trait Cost: Copy + Ord + std::ops::Add<Output = Self> + std::ops::Sub<Output = Self> {
    /// Zero.
    const ZERO: Self;
    /// Farther than any path.
    const FAR: Self;
    /// `c`, which the caller has checked fits.
    fn of(c: i128) -> Self;
    /// Bits of the type.
    const BITS: usize;
    /// How many low bits hold where non-negative `self` and `other`
    /// differ: 0 when they are equal.
    fn differ(self, other: Self) -> usize;
}

impl Cost for i64 {
    const ZERO: i64 = 0;
    const FAR: i64 = i64::MAX / 4;
    fn of(c: i128) -> i64 {
        c as i64
    }
    const BITS: usize = 64;
    fn differ(self, other: i64) -> usize {
        64 - (self ^ other).leading_zeros() as usize
    }
}

impl Cost for i128 {
    const ZERO: i128 = 0;
    const FAR: i128 = i128::MAX / 4;
    fn of(c: i128) -> i128 {
        c
    }
    const BITS: usize = 128;
    fn differ(self, other: i128) -> usize {
        128 - (self ^ other).leading_zeros() as usize
    }
}

/// A residual arc: head, remaining capacity, cost, index of its reverse.
#[derive(Clone, Copy)]
struct Arc<C> {
    to: u32,
    cap: u32,
    cost: C,
    rev: u32,
}

/// A monotone priority queue of nodes by distance (a radix heap): no key
/// pushed is below the last popped, as in Dijkstra's search over
/// non-negative reduced costs. Bucket `i` holds the keys that first differ
/// from the last popped in bit `i - 1`; bucket 0, those equal to it, by
/// node, the last the least. It pops in the order of a binary heap of
/// `(distance, node)`.
struct RadixHeap<C> {
    last: C,
    buckets: Vec<Vec<(C, u32)>>,
}

impl<C: Cost> RadixHeap<C> {
    fn new() -> Self {
        RadixHeap {
            last: C::ZERO,
            buckets: (0..=C::BITS).map(|_| Vec::new()).collect(),
        }
    }

    /// Adds `node` at distance `key`, above the last popped.
    fn push(&mut self, key: C, node: u32) {
        debug_assert!(key > self.last || (key == self.last && self.last == C::ZERO));
        self.buckets[key.differ(self.last)].push((key, node));
    }

    /// The entry of least distance, of least node among equals.
    fn pop(&mut self) -> Option<(C, u32)> {
        if self.buckets[0].is_empty() {
            // The least key of the first bucket in use becomes the last;
            // the bucket's other keys differ from it in lower bits only.
            let i = self.buckets.iter().position(|b| !b.is_empty())?;
            let mut moved = std::mem::take(&mut self.buckets[i]);
            self.last = moved.iter().map(|e| e.0).min().expect("in use");
            for &(key, node) in &moved {
                self.buckets[key.differ(self.last)].push((key, node));
            }
            moved.clear();
            self.buckets[i] = moved;
            self.buckets[0].sort_unstable_by_key(|&(_, node)| std::cmp::Reverse(node));
        }
        self.buckets[0].pop()
    }

    /// Empties the heap for a search from distance 0.
    fn clear(&mut self) {
        self.buckets.iter_mut().for_each(Vec::clear);
        self.last = C::ZERO;
    }
}

/// The flow network of one problem, arcs grouped by tail.
struct Network<C> {
    /// Arcs of node `v` are `arcs[first[v]..first[v + 1]]`.
    first: Vec<u32>,
    arcs: Vec<Arc<C>>,
}

impl<C: Cost> Network<C> {
    /// Builds the network of `arcs` (tail, head, capacity, cost) over
    /// `nodes` nodes, each with its zero-capacity reverse.
    fn new(nodes: usize, list: &[(u32, u32, u32, i128)]) -> (Network<C>, Vec<u32>) {
        let mut degree = vec![0u32; nodes + 1];
        for &(u, v, _, _) in list {
            degree[u as usize + 1] += 1;
            degree[v as usize + 1] += 1;
        }
        for i in 1..=nodes {
            degree[i] += degree[i - 1];
        }
        let first = degree.clone();
        let mut next = degree;
        let blank = Arc {
            to: 0,
            cap: 0,
            cost: C::ZERO,
            rev: 0,
        };
        let mut arcs = vec![blank; 2 * list.len()];
        let mut forward = Vec::with_capacity(list.len());
        for &(u, v, cap, cost) in list {
            let (a, b) = (next[u as usize], next[v as usize]);
            next[u as usize] += 1;
            next[v as usize] += 1;
            arcs[a as usize] = Arc {
                to: v,
                cap,
                cost: C::of(cost),
                rev: b,
            };
            arcs[b as usize] = Arc {
                to: u,
                cap: 0,
                cost: C::of(-cost),
                rev: a,
            };
            forward.push(a);
        }
        (Network { first, arcs }, forward)
    }

    fn out(&self, v: usize) -> std::ops::Range<usize> {
        self.first[v] as usize..self.first[v + 1] as usize
    }

    /// Sends `units` units from node 0 to the last node, one shortest path
    /// at a time, each search stopping when it settles the last node.
    /// Every arc points forward (tail below head), so the first potentials
    /// come from one pass in node order.
    fn send(&mut self, units: u32) {
        let n = self.first.len() - 1;
        let far = C::FAR;
        let mut pot = vec![far; n];
        pot[0] = C::ZERO;
        for v in 0..n {
            if pot[v] == far {
                continue;
            }
            for a in self.out(v) {
                let arc = self.arcs[a];
                if arc.cap > 0 && pot[v] + arc.cost < pot[arc.to as usize] {
                    pot[arc.to as usize] = pot[v] + arc.cost;
                }
            }
        }
        let mut dist = vec![far; n];
        let mut via = vec![(u32::MAX, 0u32); n];
        let mut heap = RadixHeap::new();
        let mut tied = Vec::new();
        for _ in 0..units {
            dist.fill(far);
            via.fill((u32::MAX, 0));
            dist[0] = C::ZERO;
            heap.clear();
            heap.push(C::ZERO, 0);
            // Nodes reached at the distance being settled wait on a stack
            // instead of the heap: they are next in any order.
            let mut level = C::ZERO;
            loop {
                let (d, v) = match tied.pop() {
                    Some(v) => (level, v),
                    None => match heap.pop() {
                        Some((d, v)) => {
                            level = d;
                            (d, v)
                        }
                        None => break,
                    },
                };
                let v = v as usize;
                if d > dist[v] {
                    continue;
                }
                if v == n - 1 {
                    tied.clear();
                    break;
                }
                for a in self.out(v) {
                    let arc = self.arcs[a];
                    if arc.cap == 0 {
                        continue;
                    }
                    let w = arc.to as usize;
                    let nd = d + arc.cost + pot[v] - pot[w];
                    if nd < dist[w] {
                        dist[w] = nd;
                        via[w] = (a as u32, v as u32);
                        if nd == d {
                            tied.push(arc.to);
                        } else {
                            heap.push(nd, arc.to);
                        }
                    }
                }
            }
            if dist[n - 1] == far {
                return;
            }
            // Every node the search left unsettled, labelled or not, is at
            // least as far as the last; capping them all there keeps every
            // reduced cost non-negative.
            let last = dist[n - 1];
            for (p, &d) in pot.iter_mut().zip(&dist) {
                *p = *p + d.min(last);
            }
            self.augment(&via);
        }
    }

    /// Sends one unit along the path `via` names (the arc into each node
    /// and its tail) from node 0 to the last. The walk follows the tails,
    /// so no step waits on the arcs of the one before.
    fn augment(&mut self, via: &[(u32, u32)]) {
        let mut w = via.len() - 1;
        while w != 0 {
            let (a, tail) = via[w];
            self.arcs[a as usize].cap -= 1;
            let rev = self.arcs[a as usize].rev as usize;
            self.arcs[rev].cap += 1;
            w = tail as usize;
        }
    }
}

/// Whether each interval arc of `list` (from index `chain` on) is full
/// once `k` units cross the network of `nodes` nodes.
fn kept_by<C: Cost>(
    nodes: usize,
    list: &[(u32, u32, u32, i128)],
    chain: usize,
    k: u32,
) -> Vec<bool> {
    let (mut net, forward) = Network::<C>::new(nodes, list);
    net.send(k);
    forward[chain..]
        .iter()
        .map(|&a| net.arcs[a as usize].cap == 0)
        .collect()
}

/// The heaviest set of the closed intervals `[start, end]` that covers no
/// point more than `k` times, as a flag per interval (true: kept), or
/// `None` when the [`Weight::Forced`] intervals alone cover some point
/// more than `k` times.
///
/// An interval of width `w` (`widths`) counts `w` times at each point it
/// covers. With every width 1 the set is the heaviest; otherwise an
/// interval is an arc of capacity `w`, each unit worth `1/w` of its
/// weight, kept when it carries all `w`: a set within `k` at every
/// point, not always the heaviest.
///
/// Only the points that more than `k` intervals cover constrain the
/// choice, so the network is built over those alone: an interval becomes
/// the run of such points it covers, and one that covers none is kept
/// without entering the flow.
pub(crate) fn max_weight_k_colorable(
    intervals: &[(u32, u32)],
    widths: &[u32],
    weights: &[Weight],
    k: u32,
) -> Option<Vec<bool>> {
    assert_eq!(intervals.len(), weights.len(), "one weight per interval");
    assert_eq!(intervals.len(), widths.len(), "one width per interval");
    let (runs, over) = over_runs(intervals, widths, k);
    let mut kept = vec![true; intervals.len()];
    let entered: Vec<usize> = (0..intervals.len())
        .filter(|&i| runs[i].is_some())
        .collect();
    if entered.is_empty() {
        return Some(kept);
    }
    // One node before each stretch covered more than `k` times, and one
    // after the last.
    let nodes = over as usize + 1;
    // Every unit's worth is a whole number of `1/scale`s of a weight.
    let scale = (entered.iter()).fold(1i128, |l, &i| lcm(l, i128::from(widths[i])));
    // A forced unit is worth more than every finite interval together.
    let finite: i128 = (weights.iter())
        .map(|w| match w {
            Weight::Finite(c) => i128::from(*c) * scale,
            Weight::Forced => 0,
        })
        .sum();
    let forced = finite + 1;
    let mut list: Vec<(u32, u32, u32, i128)> = Vec::with_capacity(entered.len() + nodes);
    for i in 1..nodes as u32 {
        list.push((i - 1, i, k, 0));
    }
    let chain = list.len();
    for &i in &entered {
        let w = widths[i];
        let worth = match weights[i] {
            Weight::Finite(c) => i128::from(c) * scale / i128::from(w),
            Weight::Forced => forced,
        };
        let (s, e) = runs[i].expect("entered intervals have a run");
        list.push((s, e, w, -worth));
    }
    // No potential, distance or reduced cost exceeds the arcs' total cost.
    let units: i128 = entered.iter().map(|&i| i128::from(widths[i])).sum();
    let total = forced * (units + 1);
    let carried = if total < i128::from(i64::MAX / 16) {
        kept_by::<i64>(nodes, &list, chain, k)
    } else {
        kept_by::<i128>(nodes, &list, chain, k)
    };
    for (&i, c) in entered.iter().zip(carried) {
        kept[i] = c;
    }
    let all_forced_kept = (kept.iter().zip(weights)).all(|(&k, w)| k || *w != Weight::Forced);
    all_forced_kept.then_some(kept)
}

/// The least common multiple of two positive numbers.
fn lcm(a: i128, b: i128) -> i128 {
    let (mut x, mut y) = (a, b);
    while y != 0 {
        (x, y) = (y, x % y);
    }
    a / x * b
}

/// For each interval, the half-open range `[s, e)` of the indices it
/// covers among the stretches between endpoints whose load (the widths
/// of the intervals covering them) exceeds `k`, numbered in order (`None`
/// when it covers none); and how many such stretches there are.
fn over_runs(intervals: &[(u32, u32)], widths: &[u32], k: u32) -> (Vec<Option<(u32, u32)>>, u32) {
    // Every endpoint (`start`, `end + 1`) with its interval and side
    // (`2i`, `2i + 1`), in order; each then takes the index of its
    // coordinate among the distinct ones.
    let mut points: Vec<(u64, u32)> = (intervals.iter().zip(0u32..))
        .flat_map(|(&(s, e), i)| [(u64::from(s), 2 * i), (u64::from(e) + 1, 2 * i + 1)])
        .collect();
    points.sort_unstable_by_key(|&(c, _)| c);
    let mut ends = vec![(0usize, 0usize); intervals.len()];
    let mut coords = 0;
    for (j, &(c, side)) in points.iter().enumerate() {
        coords += usize::from(j == 0 || points[j - 1].0 != c);
        let end = &mut ends[side as usize / 2];
        if side % 2 == 0 {
            end.0 = coords - 1;
        } else {
            end.1 = coords - 1;
        }
    }
    let mut change = vec![0i64; coords + 1];
    for (&(a, b), &w) in ends.iter().zip(widths) {
        change[a] += i64::from(w);
        change[b] -= i64::from(w);
    }
    // `rank[i]`: how many stretches before stretch `i` are covered more
    // than `k` times.
    let mut rank = Vec::with_capacity(coords + 1);
    let (mut load, mut over) = (0i64, 0u32);
    for c in &change {
        rank.push(over);
        load += c;
        over += u32::from(load > i64::from(k));
    }
    let runs = (ends.iter())
        .map(|&(a, b)| (rank[a] < rank[b]).then_some((rank[a], rank[b])))
        .collect();
    (runs, over)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::random::Rng;

    /// The weight of the heaviest k-colorable subset, by trying every subset.
    fn brute(ivs: &[(u32, u32)], ws: &[Weight], k: u32) -> Option<u64> {
        let covered = |mask: u32, p: u32| {
            (0..ivs.len())
                .filter(|&i| mask & (1 << i) != 0 && ivs[i].0 <= p && p <= ivs[i].1)
                .count() as u32
        };
        (0u32..1 << ivs.len())
            .filter(|&mask| (0..40).all(|p| covered(mask, p) <= k))
            .filter(|&mask| (0..ivs.len()).all(|i| mask & (1 << i) != 0 || ws[i] != Weight::Forced))
            .map(|mask| {
                (0..ivs.len())
                    .filter(|&i| mask & (1 << i) != 0)
                    .filter_map(|i| match ws[i] {
                        Weight::Finite(c) => Some(c),
                        Weight::Forced => None,
                    })
                    .sum()
            })
            .max()
    }

    /// Sends `units` along shortest paths found by Bellman–Ford on the
    /// residual costs themselves: slow, with no potentials to get wrong.
    fn send_plainly(net: &mut Network<i128>, units: u32) {
        let n = net.first.len() - 1;
        for _ in 0..units {
            let mut dist = vec![i128::MAX; n];
            let mut via = vec![(u32::MAX, 0u32); n];
            dist[0] = 0;
            let mut changed = true;
            while changed {
                changed = false;
                for v in 0..n {
                    if dist[v] == i128::MAX {
                        continue;
                    }
                    for a in net.out(v) {
                        let arc = net.arcs[a];
                        let w = arc.to as usize;
                        if arc.cap > 0 && dist[v] + arc.cost < dist[w] {
                            (dist[w], via[w], changed) =
                                (dist[v] + arc.cost, (a as u32, v as u32), true);
                        }
                    }
                }
            }
            if dist[n - 1] == i128::MAX {
                return;
            }
            net.augment(&via);
        }
    }

    /// The cost of the flow `net` carries on the arcs of `list`.
    fn flow_cost(net: &Network<i128>, list: &[(u32, u32, u32, i128)], forward: &[u32]) -> i128 {
        (list.iter().zip(forward))
            .map(|(&(_, _, cap, cost), &a)| i128::from(cap - net.arcs[a as usize].cap) * cost)
            .sum()
    }

    /// Dijkstra with potentials, each search stopping at the last node,
    /// sends flow exactly as cheap as plain Bellman–Ford does, on networks
    /// large enough for the searches to leave nodes unsettled.
    #[test]
    fn shortest_paths_match_bellman_ford() {
        let mut rng = Rng::new(5);
        for _ in 0..300 {
            let nodes = 2 + rng.below(60) as usize;
            let k = 1 + rng.below(6) as u32;
            let mut list: Vec<(u32, u32, u32, i128)> =
                (1..nodes as u32).map(|i| (i - 1, i, k, 0)).collect();
            for _ in 0..rng.below(150) {
                let s = rng.below(nodes as u64 - 1) as u32;
                let e = s + 1 + rng.below((nodes as u64 - 1 - u64::from(s)).min(12)) as u32;
                let cost = match rng.below(8) {
                    0 => -1_000_000,
                    _ => -(1 + rng.below(1000) as i128),
                };
                list.push((s, e, 1 + rng.below(3) as u32, cost));
            }
            let (mut fast, forward) = Network::<i128>::new(nodes, &list);
            fast.send(k);
            let (mut plain, _) = Network::<i128>::new(nodes, &list);
            send_plainly(&mut plain, k);
            assert_eq!(
                flow_cost(&fast, &list, &forward),
                flow_cost(&plain, &list, &forward),
                "{nodes} nodes, k={k}: {list:?}"
            );
        }
    }

    /// `n` closed intervals starting below 30, each at most 8 long.
    fn random_intervals(rng: &mut Rng, n: usize) -> Vec<(u32, u32)> {
        (0..n)
            .map(|_| {
                let s = rng.below(30) as u32;
                (s, s + rng.below(8) as u32)
            })
            .collect()
    }

    /// `n` weights, one in six forced, the others `base` + 1 to 9.
    fn random_weights(rng: &mut Rng, n: usize, base: u64) -> Vec<Weight> {
        (0..n)
            .map(|_| match rng.below(6) {
                0 => Weight::Forced,
                _ => Weight::Finite(base + 1 + rng.below(9)),
            })
            .collect()
    }

    /// The radix heap pops what a binary heap of `(distance, node)` pops,
    /// in the same order, under pushes above the last popped key.
    #[test]
    fn radix_heap_pops_in_binary_heap_order() {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let mut rng = Rng::new(5);
        for _ in 0..200 {
            let mut radix = RadixHeap::<i64>::new();
            let mut binary = BinaryHeap::new();
            radix.push(0, 0);
            binary.push(Reverse((0i64, 0u32)));
            let mut last = 0i64;
            for _ in 0..300 {
                if rng.below(3) == 0 {
                    let got = radix.pop();
                    assert_eq!(got, binary.pop().map(|Reverse(e)| e));
                    match got {
                        Some((key, _)) => last = key,
                        None => break,
                    }
                } else {
                    let spread = 1 << rng.below(40);
                    let key = last + 1 + rng.below(spread) as i64;
                    let node = rng.below(50) as u32;
                    radix.push(key, node);
                    binary.push(Reverse((key, node)));
                }
            }
        }
    }

    /// Intervals wider than one keep within `k` at every point, with every
    /// forced one kept, or are reported infeasible only when the forced
    /// ones alone exceed `k` somewhere.
    #[test]
    fn wide_intervals_stay_within_k() {
        let mut rng = Rng::new(8);
        let mut dropped = 0;
        for _ in 0..400 {
            let n = rng.below(16) as usize;
            let ivs = random_intervals(&mut rng, n);
            let widths: Vec<u32> = (0..n).map(|_| 1 + rng.below(4) as u32).collect();
            let ws = random_weights(&mut rng, n, 0);
            let k = 1 + rng.below(8) as u32;
            let load = |keep: &dyn Fn(usize) -> bool, p: u32| -> u32 {
                (0..n)
                    .filter(|&i| keep(i) && ivs[i].0 <= p && p <= ivs[i].1)
                    .map(|i| widths[i])
                    .sum()
            };
            let forced_fit = (0..40).all(|p| load(&|i| ws[i] == Weight::Forced, p) <= k);
            let got = max_weight_k_colorable(&ivs, &widths, &ws, k);
            assert_eq!(got.is_some(), forced_fit, "{ivs:?} {widths:?} {ws:?} k={k}");
            let Some(kept) = got else {
                continue;
            };
            for p in 0..40 {
                assert!(
                    load(&|i| kept[i], p) <= k,
                    "{ivs:?} {widths:?} k={k}: point {p}"
                );
            }
            dropped += kept.iter().filter(|&&x| !x).count();
        }
        assert!(dropped > 100, "{dropped} intervals dropped");
    }

    /// The flow keeps a k-colorable set exactly as heavy as the heaviest,
    /// and reports the forced intervals that cannot all be kept, with
    /// weights small enough for 64-bit costs and large enough for 128.
    #[test]
    fn flow_keeps_the_heaviest_k_colorable_set() {
        for base in [0, 1 << 59] {
            heaviest_sets(base);
        }
    }

    fn heaviest_sets(base: u64) {
        let mut rng = Rng::new(21);
        let mut infeasible = 0;
        for _ in 0..600 {
            let n = rng.below(11) as usize;
            let ivs = random_intervals(&mut rng, n);
            let ws = random_weights(&mut rng, n, base);
            let k = 1 + rng.below(3) as u32;
            let got = max_weight_k_colorable(&ivs, &vec![1; n], &ws, k);
            let want = brute(&ivs, &ws, k);
            infeasible += usize::from(want.is_none());
            let Some(kept) = got else {
                assert_eq!(want, None, "{ivs:?} {ws:?} k={k}");
                continue;
            };
            for p in 0..40 {
                let c = (0..n).filter(|&i| kept[i] && ivs[i].0 <= p && p <= ivs[i].1);
                assert!(c.count() as u32 <= k, "{ivs:?} k={k}: point {p}");
            }
            let weight: u64 = (0..n)
                .filter(|&i| kept[i])
                .filter_map(|i| match ws[i] {
                    Weight::Finite(c) => Some(c),
                    Weight::Forced => None,
                })
                .sum();
            assert_eq!(Some(weight), want, "{ivs:?} {ws:?} k={k}");
        }
        assert!(infeasible > 10, "{infeasible} infeasible cases");
    }
}
