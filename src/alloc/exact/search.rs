//! Exact's branch and bound (SPEC §3.11): over every spillable node's read
//! groups in node and group order, whether a reload goes before each; a
//! branch is cut when it costs as much as the best allocation found, or
//! when some point cannot come down to the banks there are, counted in
//! banks and aligned blocks ([`Measures`]).

use super::realize::{realize, Best, Spill};
use crate::alloc::analysis::Analysis;
use crate::alloc::costs::Cost;
use crate::alloc::liveness::Node;
use crate::alloc::split_cost::{GroupId, Pieces};
use crate::alloc::NodeId;
use crate::arch;

/// One decision of the search: whether a reload goes right before read
/// group `group` (into [`Pieces::groups`]) of candidate `cand`.
struct Decision {
    cand: usize,
    group: GroupId,
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
pub(super) struct Search<'a> {
    first: &'a Analysis,
    pieces: &'a Pieces,
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

impl<'a> Search<'a> {
    /// The search over `first`'s spillable nodes with their `pieces`, and
    /// the loads it starts from: with every undecided idle point free
    /// (`low`) and held (`high`).
    pub(super) fn new(first: &'a Analysis, pieces: &'a Pieces) -> (Self, Vec<i64>, Vec<i64>) {
        let (nodes, num_banks, points) = (&first.live.nodes, first.num_banks, first.lin.len());
        let measures = Measures::new(nodes.as_slice(), num_banks);
        let width = measures.cap.len();
        let mut cand = Vec::new();
        let mut decisions = Vec::new();
        let mut low = vec![0i64; points * width];
        let mut high = vec![0i64; points * width];
        for (v, node) in nodes.iter() {
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
            let groups = pieces.group_range(v);
            let mut from = 0;
            for g in pieces.groups_of(v) {
                let lo = pieces.groups[g].0;
                let before = mine.partition_point(|&p| p < lo);
                let own_end = match g.prev().filter(|&q| q >= groups.start) {
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
                    last: g.next() == groups.end,
                });
                from = before;
            }
            cand.push(Candidate {
                node: v,
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
            first,
            pieces,
            measures,
            cand,
            decisions,
            idle,
        };
        (search, low, high)
    }

    /// Searches from the loads [`Search::new`] gave, improving on `best`.
    pub(super) fn run(&self, mut low: Vec<i64>, mut high: Vec<i64>, best: &mut Option<Best>) {
        let points = self.first.lin.len() as u32;
        if self.measures.fit(&low, 0..points) {
            let mut state = State {
                reload: Vec::new(),
                spills: Vec::new(),
                cost: 0,
            };
            self.go(0, &mut low, &mut high, &mut state, best);
        }
    }
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
            if let Some(realized) = realize(self.first, self.pieces, &state.spills) {
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
