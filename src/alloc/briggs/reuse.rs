//! Reuse across fixpoint iterations (SPEC §3.10).
//!
//! Simplify and select decompose over the connected components of the
//! interference graph. A node of component `C` is removed from `lo` only
//! as the smallest-id `lo` node of `C`, from `hi` only when no `lo` node is
//! left anywhere and its key is the smallest of all, hence of `C`, and
//! from `inf` only when `lo` and `hi` are empty everywhere. Removals
//! elsewhere never touch `C`'s budgets or degrees, so the nodes of `C`
//! leave in the order simplify on `C` alone would give, and select places
//! each one against its neighbors, all in `C`. Every node's bank, and
//! each component's share of the score, is therefore a function of its
//! component alone.
//!
//! Spill code only goes strictly inside the interval of a spilled node
//! (after its last write, before its reads), so a component without a
//! spilled node keeps its node set, its intervals up to a uniform shift,
//! their lengths, weights and costs into the next iteration. Fast mode
//! therefore keeps what H0..H3 gave each node of such a component (a bank,
//! or a place in the spill set with its cost) and runs best-of-n only on
//! the other components (the *dirty* nodes). The nodes of a kept component
//! keep their intervals, and every other node lies in other hulls, so a
//! kept component comes back whole and alone: a component whose first
//! node was in a kept component of its size is that one, and is reused
//! without a look at its other nodes (debug builds check them all).
//! Components whose spill set under some heuristic holds an unspillable
//! node are never kept, so a reused component's spill set is spilled node
//! by node, without its graph.

use super::interference::DirtyId;
use super::select::Selection;
use crate::alloc::costs::Cost;
use crate::alloc::liveness::Node;
use crate::alloc::NodeId;
use crate::entity::{IdMap, IdVec};
use crate::ir::TensorId;
use std::ops::Range;

/// No reusable result.
const NONE: u32 = u32::MAX;

/// The component of every node: the first point of the component's hull
/// (points joined by an interval holding both belong to one component).
#[cfg(test)]
pub(crate) fn components(nodes: &[Node], num_points: usize) -> Vec<u32> {
    if nodes.is_sorted_by_key(|n| n.start) {
        components_by_start(nodes).collect()
    } else {
        components_by_points(nodes, num_points)
    }
}

/// [`components`] of nodes in order of start (always so without loops),
/// as they come: a node begins a component when no earlier interval
/// reaches its start.
#[cfg(test)]
fn components_by_start(nodes: &[Node]) -> impl Iterator<Item = u32> + '_ {
    let (mut reach, mut head) = (None::<u32>, 0);
    nodes.iter().map(move |n| {
        if reach.is_none_or(|r| r < n.start) {
            head = n.start;
        }
        reach = Some(reach.map_or(n.end, |r| r.max(n.end)));
        head
    })
}

/// The component of every node, as `components` finds it, for nodes in
/// any order, by a pass over the points.
fn components_by_points(nodes: &[Node], num_points: usize) -> Vec<u32> {
    // links[p]: how many intervals hold both p and p + 1.
    let mut links = vec![0i32; num_points + 1];
    for n in nodes {
        links[n.start as usize] += 1;
        links[n.end as usize] -= 1;
    }
    let mut head_of = vec![0u32; num_points];
    let (mut cur, mut head) = (0i32, 0u32);
    for (p, h) in head_of.iter_mut().enumerate() {
        *h = head;
        cur += links[p];
        if cur == 0 {
            head = p as u32 + 1;
        }
    }
    nodes.iter().map(|n| head_of[n.start as usize]).collect()
}

/// What one iteration can take from the previous one.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    /// The component of each dirty node (the first point of its
    /// component's hull), by its position in `dirty`; empty in the tests'
    /// `Plan::all`, which nothing is recorded from.
    pub comp: Vec<u32>,
    /// The nodes best-of-n must run on, ascending: the program's node
    /// each node of the dirty graph stands for.
    pub dirty: IdVec<DirtyId, NodeId>,
    /// Under H0..H3: the reused nodes of the spill set, ascending.
    pub unplaced: [Vec<NodeId>; 4],
    /// Under H0..H3: Σ cost of `unplaced` (all finite).
    pub score: [u64; 4],
}

impl Plan {
    /// Every node dirty: nothing to reuse.
    #[cfg(test)]
    pub(crate) fn all(n: usize) -> Plan {
        Plan {
            comp: Vec::new(),
            dirty: (0..n).map(NodeId::new).collect(),
            unplaced: Default::default(),
            score: [0; 4],
        }
    }

    /// Adds nodes `ids`, of component `c`, to the dirty ones.
    fn add_dirty(&mut self, ids: Range<usize>, c: u32) {
        self.dirty.extend(ids.clone().map(NodeId::new));
        self.comp.extend(ids.map(|_| c));
    }
}

/// The end of the component that starts at node `i` of `nodes`, which are
/// in order of start.
fn component_end(nodes: &[Node], i: usize) -> usize {
    let mut reach = nodes[i].end;
    let mut end = i + 1;
    while let Some(n) = nodes.get(end).filter(|n| n.start <= reach) {
        reach = reach.max(n.end);
        end += 1;
    }
    end
}

/// What H0..H3 gave the nodes of the kept components, by tensor, and what
/// each kept component's spill sets hold.
#[derive(Clone, Debug, Default)]
pub(crate) struct Reuse {
    /// Per tensor: the kept component it was in last (an index into
    /// `kept`), or `NONE`.
    comp: IdMap<TensorId, u32>,
    /// Per tensor: its base bank under H0..H3, or `UNPLACED`.
    banks: IdMap<TensorId, [u8; 4]>,
    /// Per tensor: its (finite) spill cost.
    cost: IdMap<TensorId, u64>,
    /// The components recorded so far; one that is no longer kept has
    /// size 0. A component stays at its index for as long as it is kept,
    /// so reusing it touches none of its nodes.
    kept: Vec<Kept>,
    /// The spill-set members of the kept components, each as its offset
    /// in its component and the heuristic whose spill set holds it.
    spills: Vec<(u32, u8)>,
}

/// One kept component.
#[derive(Clone, Debug)]
struct Kept {
    /// Its node count (0: no longer kept).
    size: u32,
    /// The last point of its hull less the first (spill code elsewhere
    /// moves its points uniformly).
    span: u32,
    /// Its spill-set members, in `Reuse::spills`, by offset.
    spills: Range<u32>,
}

/// A node in the spill set of a heuristic.
const UNPLACED: u8 = u8::MAX;

impl Reuse {
    /// Splits `nodes` into reused components and dirty nodes. A component's
    /// nodes are consecutive (ids follow the defs, each inside its node's
    /// component hull, and hulls are disjoint), so each run of one key is
    /// a whole component. A kept component comes back whole and alone (see
    /// the module doc), so a component whose first node was in a kept
    /// component is that one: its nodes are not looked at again. Without
    /// `loops` every interval starts at its def, so the nodes come in order
    /// of start, and the next component begins right after a kept one:
    /// then its nodes are not even visited.
    pub(crate) fn plan(&self, nodes: &IdVec<NodeId, Node>, num_points: usize, loops: bool) -> Plan {
        let nodes = nodes.as_slice();
        let mut plan = Plan {
            comp: Vec::new(),
            dirty: IdVec::new(),
            unplaced: Default::default(),
            score: [0; 4],
        };
        if !loops || nodes.is_sorted_by_key(|n| n.start) {
            self.plan_by_start(nodes, &mut plan);
        } else {
            self.plan_runs(nodes, components_by_points(nodes, num_points), &mut plan);
        }
        plan
    }

    /// Fills `plan` from nodes in order of start, component by component:
    /// a kept one is stepped over by its size (when its hull, from its
    /// first node's start, ends before the next node starts, as it does
    /// unless some node came into it), a dirty one is swept for its end.
    fn plan_by_start(&self, nodes: &[Node], plan: &mut Plan) {
        let mut i = 0;
        while let Some(first) = nodes.get(i) {
            let kept = self.kept_of(first).filter(|k| {
                let (end, hull) = (i + k.size as usize, first.start + k.span);
                end <= nodes.len() && nodes.get(end).is_none_or(|n| n.start > hull)
            });
            if let Some(k) = kept {
                let ids = i..i + k.size as usize;
                debug_assert_eq!(component_end(nodes, i), ids.end, "a kept component is one");
                self.reuse(nodes, ids.clone(), k, plan);
                i = ids.end;
            } else {
                let end = component_end(nodes, i);
                plan.add_dirty(i..end, first.start);
                i = end;
            }
        }
    }

    /// Fills `plan` from the component of each node (`comp`, by id).
    fn plan_runs(&self, nodes: &[Node], comp: Vec<u32>, plan: &mut Plan) {
        let mut first = 0;
        for run in comp.chunk_by(|a, b| a == b) {
            let ids = first..first + run.len();
            first = ids.end;
            match self.kept_of(&nodes[ids.start]) {
                Some(k) if k.size as usize == ids.len() => self.reuse(nodes, ids, k, plan),
                _ => plan.add_dirty(ids, run[0]),
            }
        }
    }

    /// The kept component node `n`'s tensor was in, if any.
    fn kept_of(&self, n: &Node) -> Option<&Kept> {
        let key = self.comp.get(n.tensor).copied().unwrap_or(NONE);
        self.kept.get(key as usize).filter(|k| k.size > 0)
    }

    /// Adds kept component `k`, back as nodes `ids`, to `plan`.
    fn reuse(&self, nodes: &[Node], ids: Range<usize>, k: &Kept, plan: &mut Plan) {
        debug_assert!(
            (nodes[ids.clone()].iter())
                .all(|n| self.kept_of(n).is_some_and(|x| std::ptr::eq(x, k))),
            "a kept component comes back whole"
        );
        for &(offset, h) in &self.spills[k.spills.start as usize..k.spills.end as usize] {
            let v = ids.start + offset as usize;
            let (h, cost) = (h as usize, self.cost[nodes[v].tensor]);
            plan.unplaced[h].push(NodeId::new(v));
            plan.score[h] = plan.score[h].saturating_add(cost);
        }
    }

    /// The base bank of reused tensor `t` under heuristic `h`, if placed.
    pub(crate) fn bank(&self, t: TensorId, h: usize) -> Option<u32> {
        let b = self.banks[t][h];
        (b != UNPLACED).then_some(u32::from(b))
    }

    /// The spill cost of reused tensor `t`.
    pub(crate) fn cost(&self, t: TensorId) -> u64 {
        self.cost[t]
    }

    /// Records this iteration for the next. A component is kept unless it
    /// holds a node of `spilled` (ascending) or, when dirty, some `sels`
    /// (over `plan.dirty`, with their `costs`) leaves an unspillable node
    /// of it unplaced. Only the dirty nodes are read: a reused component
    /// stays recorded as it was, or is dropped whole.
    pub(crate) fn record(
        &mut self,
        nodes: &IdVec<NodeId, Node>,
        plan: &Plan,
        sels: [&Selection; 4],
        costs: &IdMap<DirtyId, Cost>,
        spilled: &[NodeId],
    ) {
        let tensor = |l: DirtyId| nodes[plan.dirty[l]].tensor;
        let tensors = (plan.dirty.keys()).map(|l| tensor(l).index() + 1).max();
        if let Some(tensors) = tensors.filter(|&t| self.comp.len() < t) {
            self.comp.resize(tensors, NONE);
            self.banks.resize(tensors, [UNPLACED; 4]);
            self.cost.resize(tensors, 0);
        }
        // Dirty nodes whose component is not kept.
        let mut dropped = IdMap::with_len(plan.dirty.len(), false);
        for sel in sels {
            for &v in (sel.unplaced.iter()).filter(|&&v| costs[v] == Cost::Inf) {
                dropped[v] = true;
            }
        }
        for &v in spilled {
            match plan.dirty.as_slice().binary_search(&v) {
                Ok(l) => dropped[DirtyId::new(l)] = true,
                Err(_) => {
                    let k = self.comp[nodes[v].tensor];
                    self.kept[k as usize].size = 0;
                }
            }
        }
        let mut first = 0;
        for comp in plan.comp.chunk_by(|a, b| a == b) {
            let run = first..first + comp.len();
            first = run.end;
            let ids = run.clone().map(DirtyId::new);
            if ids.clone().any(|l| dropped[l]) {
                for l in ids {
                    self.comp[tensor(l)] = NONE;
                }
                continue;
            }
            let k = self.kept.len() as u32;
            let start = self.spills.len() as u32;
            let mut last = 0;
            for (offset, l) in ids.enumerate() {
                last = last.max(nodes[plan.dirty[l]].end);
                let t = tensor(l);
                self.comp[t] = k;
                self.cost[t] = costs[l].finite().unwrap_or(0);
                for (h, sel) in sels.iter().enumerate() {
                    let bank = sel.bank[l];
                    self.banks[t][h] = bank.unwrap_or(UNPLACED);
                    if bank.is_none() {
                        self.spills.push((offset as u32, h as u8));
                    }
                }
            }
            self.kept.push(Kept {
                size: run.len() as u32,
                span: last - nodes[plan.dirty[DirtyId::new(run.start)]].start,
                spills: start..self.spills.len() as u32,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(t: usize, start: u32, end: u32) -> Node {
        Node::spanning(t, start, end, 1)
    }

    fn sel(bank: &[Option<u32>], costs: &IdMap<DirtyId, Cost>) -> Selection {
        let unplaced: Vec<DirtyId> = (0..bank.len())
            .filter(|&i| bank[i].is_none())
            .map(DirtyId::new)
            .collect();
        let score = unplaced.iter().fold(Cost::ZERO, |s, &v| s.plus(costs[v]));
        Selection {
            bank: bank.iter().map(|b| b.map(|b| b as u8)).collect(),
            unplaced,
            score,
        }
    }

    #[test]
    fn components_join_overlapping_intervals_only() {
        let nodes = [
            node(0, 0, 1),
            node(1, 1, 2),
            node(2, 3, 3),
            node(3, 4, 6),
            node(4, 5, 5),
            node(5, 7, 8),
        ];
        assert_eq!(components(&nodes, 9), [0, 0, 3, 4, 4, 7]);
        assert_eq!(components_by_points(&nodes, 9), [0, 0, 3, 4, 4, 7]);
        let mut shuffled = nodes;
        shuffled.swap(0, 3);
        assert_eq!(components(&shuffled, 9), [4, 0, 3, 0, 4, 7]);
    }

    /// Both ways of finding components agree on random intervals in
    /// order of start.
    #[test]
    fn components_by_start_match_the_point_pass() {
        let mut rng = crate::alloc::support::rng::Rng::new(11);
        let mut rnd = move |m: u32| rng.below(u64::from(m)) as u32;
        for _ in 0..200 {
            let mut start = 0;
            let nodes: Vec<Node> = (0..1 + rnd(40))
                .map(|i| {
                    start += rnd(3);
                    node(i as usize, start, start + rnd(5))
                })
                .collect();
            let points = nodes.iter().map(|n| n.end as usize + 1).max().unwrap_or(0);
            assert!(components_by_start(&nodes).eq(components_by_points(&nodes, points)));
        }
    }

    /// Components A = {0, 1} and B = {2, 3}; `b_h1` is node 3's outcome
    /// under H1 (the other heuristics place everything).
    fn recorded(
        b_h1: Option<u32>,
        cost3: Cost,
        spilled: &[NodeId],
    ) -> (Reuse, IdVec<NodeId, Node>) {
        let nodes = IdVec::from(vec![
            node(0, 0, 1),
            node(1, 1, 2),
            node(2, 4, 5),
            node(3, 5, 6),
        ]);
        let costs = IdMap::from(vec![
            Cost::Finite(3),
            Cost::Finite(4),
            Cost::Finite(5),
            cost3,
        ]);
        let all = sel(&[Some(0), Some(1), Some(0), Some(1)], &costs);
        let h1 = sel(&[Some(1), Some(0), Some(0), b_h1], &costs);
        let mut reuse = Reuse::default();
        let plan = reuse.plan(&nodes, 7, false);
        assert_eq!(plan.dirty.len(), 4);
        reuse.record(&nodes, &plan, [&all, &h1, &all, &all], &costs, spilled);
        (reuse, nodes)
    }

    #[test]
    fn kept_components_are_reused_with_their_banks() {
        let (reuse, nodes) = recorded(Some(1), Cost::Finite(6), &[]);
        let plan = reuse.plan(&nodes, 7, false);
        assert!(plan.dirty.is_empty());
        assert_eq!(plan.score, [0; 4]);
        assert_eq!(reuse.bank(TensorId::new(0), 1), Some(1));
        assert_eq!(reuse.bank(TensorId::new(3), 0), Some(1));
    }

    #[test]
    fn a_reused_spill_set_carries_its_costs() {
        let (reuse, nodes) = recorded(None, Cost::Finite(6), &[]);
        let plan = reuse.plan(&nodes, 7, false);
        assert!(plan.dirty.is_empty());
        assert_eq!(plan.unplaced[1], [NodeId(3)]);
        assert_eq!(plan.score, [0, 6, 0, 0]);
        assert_eq!(reuse.cost(TensorId::new(3)), 6);
    }

    #[test]
    fn an_unspillable_spill_set_is_not_kept() {
        let (reuse, nodes) = recorded(None, Cost::Inf, &[]);
        let plan = reuse.plan(&nodes, 7, false);
        assert_eq!(plan.dirty.as_slice(), [NodeId(2), NodeId(3)]);
    }

    #[test]
    fn a_spilled_component_is_not_kept() {
        let (reuse, nodes) = recorded(Some(1), Cost::Finite(6), &[NodeId(1)]);
        let plan = reuse.plan(&nodes, 7, false);
        assert_eq!(plan.dirty.as_slice(), [NodeId(0), NodeId(1)]);
    }

    #[test]
    fn a_component_with_a_new_node_is_dirty() {
        let (reuse, nodes) = recorded(Some(1), Cost::Finite(6), &[]);
        let mut grown = nodes.clone();
        grown.push(node(9, 6, 6));
        let plan = reuse.plan(&grown, 8, false);
        assert_eq!(plan.dirty.as_slice(), [NodeId(2), NodeId(3), NodeId(4)]);
    }

    /// A reused component one of whose nodes is spilled is dropped whole,
    /// and the other stays reused with its spill set.
    #[test]
    fn a_reused_component_spilled_from_is_dropped() {
        let (mut reuse, nodes) = recorded(None, Cost::Finite(6), &[]);
        let plan = reuse.plan(&nodes, 7, false);
        assert!(plan.dirty.is_empty());
        let none = Selection::new(0);
        reuse.record(&nodes, &plan, [&none; 4], &IdMap::default(), &[NodeId(1)]);
        let plan = reuse.plan(&nodes, 7, false);
        assert_eq!(plan.dirty.as_slice(), [NodeId(0), NodeId(1)]);
        assert_eq!(plan.unplaced[1], [NodeId(3)]);
        assert_eq!(plan.score, [0, 6, 0, 0]);
    }

    /// A component that came back with a node swapped for another is
    /// impossible after spill code; debug builds say so.
    #[cfg(debug_assertions)]
    #[test]
    #[should_panic(expected = "a kept component comes back whole")]
    fn a_component_that_lost_a_node_is_caught() {
        let (reuse, mut nodes) = recorded(Some(1), Cost::Finite(6), &[]);
        nodes[NodeId(3)].tensor = TensorId::new(9);
        reuse.plan(&nodes, 7, false);
    }
}
