//! The split-spilling cost model (SPEC §3.11), beside [`super::costs`],
//! which it extends from one cost per node to one cost per read group:
//! what each node holds when it is spilled ([`Pieces`]: its head, from its
//! start to its save, and its read groups, each with what a reload before
//! it costs), what a split allocation is ([`Placement`]: the nodes let go,
//! the groups reloaded and every piece's bank), what it costs
//! ([`cost_of`]) and the spill code it writes ([`spill_plans`]). Mincost,
//! exact and reflow choose placements under it; `psum bound` and the split
//! LP read its spans ([`SplitSpans`]).
//!
//! A spilled node holds PSUM where its spill code needs it: from its start
//! to its save (its head), over each read group, and from each reload to
//! the next time it goes; between them it is idle ([`Pieces::idle`]).

use super::analysis::Analysis;
use super::costs::{spill_plan, Cost};
use super::linear::Linear;
use super::liveness::{self, Liveness, Node};
use super::spill::SpillPlans;
use super::support::threads;
use super::NodeId;
use crate::entity::{entity_id, IdMap, IdVec};
use crate::ir::{entity, TensorId};

entity!(
    /// A read group of [`Pieces`]: index into [`Pieces::groups`], the
    /// groups of each node in order, node after node.
    GroupId
);
entity_id!(GroupId);

impl GroupId {
    /// The group after this one.
    #[inline]
    pub(super) fn next(self) -> GroupId {
        GroupId(self.0 + 1)
    }

    /// The group before this one (`None` for the first).
    #[inline]
    pub(super) fn prev(self) -> Option<GroupId> {
        self.0.checked_sub(1).map(GroupId)
    }
}

/// What each node of one iteration holds when it is spilled, and its cost.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Pieces {
    /// Spill cost of each node (SPEC §3.5): its save and a reload per read
    /// group.
    pub cost: IdVec<NodeId, Cost>,
    /// What each spillable node's save costs (0 for the others).
    pub save_cost: IdVec<NodeId, u64>,
    /// The point each spillable node's save goes right after (SPEC §3.8).
    pub save_after: IdVec<NodeId, u32>,
    /// The last point of each spillable node's head (its interval from its
    /// start to its save, loop extension included).
    pub head_end: IdVec<NodeId, u32>,
    /// Node `v`'s first read group; one more entry, past the last node,
    /// holds the number of groups, so that `v`'s groups run up to the next
    /// entry ([`Pieces::group_range`]).
    first: IdVec<NodeId, GroupId>,
    /// Read groups, closed point ranges, each node's in order.
    pub groups: IdVec<GroupId, (u32, u32)>,
    /// What a reload right before each read group costs.
    pub reload_cost: IdVec<GroupId, u64>,
    /// The last point of a node's own tensor when it keeps its read groups
    /// up to this one (loop extension included).
    pub kept_end: IdVec<GroupId, u32>,
    /// The last read group a reload right before this one can serve: the
    /// run of the node's groups from here whose innermost loop is this
    /// group's, so that the reload's live range is the run's span.
    pub reach: IdVec<GroupId, GroupId>,
}

impl Pieces {
    /// The pieces of every node of `live` on `lin`; `pinned` flags by
    /// tensor the nodes that cannot spill again. In `parallel`, the two
    /// halves of the nodes are worked out side by side.
    pub(crate) fn of(
        lin: &Linear,
        live: &Liveness,
        pinned: &IdMap<TensorId, bool>,
        latency: u64,
        parallel: bool,
    ) -> Pieces {
        let n = live.nodes.len();
        let half = |nodes| Pieces::of_nodes(lin, live, pinned, latency, nodes);
        let (mut pieces, late) = threads::in_halves(parallel, n, half);
        pieces.append(late);
        pieces
    }

    /// The pieces of the nodes `nodes`, numbered from 0 as their groups
    /// are.
    fn of_nodes(
        lin: &Linear,
        live: &Liveness,
        pinned: &IdMap<TensorId, bool>,
        latency: u64,
        nodes: std::ops::Range<usize>,
    ) -> Pieces {
        let n = nodes.len();
        let mut pieces = Pieces {
            cost: IdVec::with_capacity(n),
            save_cost: IdVec::with_capacity(n),
            save_after: IdVec::with_capacity(n),
            head_end: IdVec::with_capacity(n),
            first: IdVec::with_capacity(n + 1),
            groups: IdVec::new(),
            reload_cost: IdVec::new(),
            kept_end: IdVec::new(),
            reach: IdVec::new(),
        };
        pieces.first.push(GroupId(0));
        for v in nodes.map(NodeId::new) {
            let node = &live.nodes[v];
            let plan = (!pinned[node.tensor])
                .then(|| spill_plan(lin, live, v))
                .flatten();
            let Some(plan) = plan else {
                pieces.cost.push(Cost::Inf);
                pieces.save_cost.push(0);
                pieces.save_after.push(0);
                pieces.head_end.push(0);
                pieces.first.push(GroupId::new(pieces.groups.len()));
                continue;
            };
            let per = u64::from(node.banks).saturating_mul(latency);
            let mut weight = lin.weight(plan.save_after);
            pieces.save_cost.push(per.saturating_mul(weight));
            pieces.save_after.push(plan.save_after);
            (pieces.head_end).push(liveness::extend(lin, node.def, plan.save_after).1);
            let from = pieces.groups.len();
            (pieces.groups).extend(plan.groups(live.events_of(v, lin)));
            for &(lo, hi) in &pieces.groups.as_slice()[from..] {
                weight = weight.saturating_add(lin.weight(lo));
                (pieces.reload_cost).push(per.saturating_mul(lin.weight(lo)));
                (pieces.kept_end).push(liveness::extend(lin, node.def, hi).1);
            }
            // §3.5's cost, as `costs::find_costs` works it out.
            pieces.cost.push(Cost::Finite(per.saturating_mul(weight)));
            let to = GroupId::new(pieces.groups.len());
            let innermost = |g: GroupId| lin.points[pieces.groups[g].0 as usize].innermost();
            // Each run of groups in the same innermost loop reaches its last.
            let mut g = GroupId::new(from);
            while g < to {
                let mut last = g;
                while last.next() < to && innermost(last) == innermost(last.next()) {
                    last = last.next();
                }
                let run = (last.0 - g.0 + 1) as usize;
                pieces.reach.extend(std::iter::repeat_n(last, run));
                g = last.next();
            }
            pieces.first.push(to);
        }
        pieces
    }

    /// Node `v`'s spans for the split-spilling cost bound (SPEC §3.11,
    /// `bound::min_split_cost_one_bank`): the stretches it holds PSUM over
    /// even when spilled (the whole interval when it cannot spill), its
    /// idle ranges, each with the reload before the group after it, and
    /// its save.
    pub(crate) fn split_spans(&self, v: NodeId, node: &Node) -> SplitSpans {
        let mut spans = SplitSpans {
            held: Vec::new(),
            idle: Vec::new(),
            save: self.save_cost[v],
        };
        for stretch in self.stretches(v, node) {
            match stretch {
                Stretch::Held(span) => spans.held.push(span),
                Stretch::Idle(span, next) => {
                    let reload = next.map_or(0, |g| self.reload_cost[g]);
                    spans.idle.push((span, reload));
                }
            }
        }
        spans
    }

    /// Node `v`'s interval cut into the stretches it holds PSUM over even
    /// when spilled and its idle ranges, in order (the whole interval held
    /// when it cannot spill).
    pub(crate) fn stretches<'a>(
        &'a self,
        v: NodeId,
        node: &Node,
    ) -> impl Iterator<Item = Stretch> + use<'a> {
        let spillable = self.cost[v] != Cost::Inf;
        let mut idle = self.idle_ranges(v, node).filter(move |_| spillable);
        let (mut from, end) = (node.start, node.end);
        let mut gap = None;
        std::iter::from_fn(move || {
            if let Some((span, next)) = gap.take() {
                return Some(Stretch::Idle(span, next));
            }
            match idle.next() {
                Some(((lo, hi), next)) => {
                    let held = (from, lo - 1);
                    from = hi + 1;
                    if lo > held.0 {
                        gap = Some(((lo, hi), next));
                        Some(Stretch::Held(held))
                    } else {
                        Some(Stretch::Idle((lo, hi), next))
                    }
                }
                None if from <= end => {
                    let held = (from, end);
                    from = end + 1;
                    Some(Stretch::Held(held))
                }
                None => None,
            }
        })
    }

    /// Whether no node's spill code depends on loops: every read group's
    /// kept end is its own last point and its reload serves every later
    /// group of its node, so a spilled node holds PSUM exactly over its
    /// held [`Stretch`]es and the idle ranges it keeps.
    pub(crate) fn unextended(&self) -> bool {
        self.cost.keys().all(|v| {
            let groups = self.groups_of(v);
            let last = groups.clone().next_back();
            (groups.into_iter())
                .all(|g| self.kept_end[g] == self.groups[g].1 && Some(self.reach[g]) == last)
        })
    }

    /// Appends the pieces of the nodes after these (`late`, whose groups
    /// are numbered from 0).
    fn append(&mut self, mut late: Pieces) {
        let g = self.groups.len() as u32;
        self.cost.append(&mut late.cost);
        self.save_cost.append(&mut late.save_cost);
        self.save_after.append(&mut late.save_after);
        self.head_end.append(&mut late.head_end);
        let after = |f: &GroupId| GroupId(f.0 + g);
        self.first.extend(late.first.values().skip(1).map(after));
        self.groups.append(&mut late.groups);
        self.reload_cost.append(&mut late.reload_cost);
        self.kept_end.append(&mut late.kept_end);
        self.reach.extend(late.reach.values().map(after));
    }

    /// The pieces of `n` nodes none of which can spill.
    pub(crate) fn unspillable(n: usize) -> Pieces {
        Pieces {
            cost: IdVec::from(vec![Cost::Inf; n]),
            save_cost: IdVec::from(vec![0; n]),
            save_after: IdVec::from(vec![0; n]),
            head_end: IdVec::from(vec![0; n]),
            first: IdVec::from(vec![GroupId(0); n + 1]),
            groups: IdVec::new(),
            reload_cost: IdVec::new(),
            kept_end: IdVec::new(),
            reach: IdVec::new(),
        }
    }

    /// The most copies the spill code of any of these nodes can take: a
    /// save for each spillable node and a reload before each read group.
    pub(crate) fn copies_at_most(&self) -> usize {
        self.cost.values().filter(|c| **c != Cost::Inf).count() + self.groups.len()
    }

    /// Node `v`'s read groups: the ids from the range's start up to its
    /// end (exclusive).
    #[inline]
    pub(crate) fn group_range(&self, v: NodeId) -> std::ops::Range<GroupId> {
        self.first[v]..self.first[NodeId::new(v.index() + 1)]
    }

    /// Node `v`'s read groups, in order.
    #[inline]
    pub(crate) fn groups_of(
        &self,
        v: NodeId,
    ) -> impl DoubleEndedIterator<Item = GroupId> + ExactSizeIterator + Clone + use<> {
        let range = self.group_range(v);
        (range.start.index()..range.end.index()).map(GroupId::new)
    }

    /// The closed point ranges where spillable node `v` (`node`) would
    /// hold no PSUM once spilled: between its head, its read groups and
    /// its end.
    pub(crate) fn idle<'a>(
        &'a self,
        v: NodeId,
        node: &Node,
    ) -> impl Iterator<Item = (u32, u32)> + use<'a> {
        self.idle_ranges(v, node).map(|(span, _)| span)
    }

    /// [`Pieces::idle`], each range with the read group right after it
    /// (`None`: the range after the last).
    fn idle_ranges<'a>(
        &'a self,
        v: NodeId,
        node: &Node,
    ) -> impl Iterator<Item = ((u32, u32), Option<GroupId>)> + use<'a> {
        let groups = self.groups_of(v);
        let ends =
            (groups.map(|g| (self.groups[g], Some(g)))).chain([((node.end + 1, node.end), None)]);
        let mut from = self.head_end[v] + 1;
        ends.filter_map(move |((lo, hi), g)| {
            let gap = (lo > from).then(|| ((from, lo - 1), g));
            from = hi + 1;
            gap
        })
    }

    /// The banks in use at each of `points` points when the nodes that
    /// `spilled` flags hold PSUM only over their heads and read groups.
    pub(crate) fn load(
        &self,
        nodes: &IdVec<NodeId, Node>,
        spilled: &IdMap<NodeId, bool>,
        points: usize,
    ) -> Vec<i64> {
        let mut delta = vec![0i64; points + 1];
        for (v, n) in nodes.iter() {
            let b = i64::from(n.banks);
            delta[n.start as usize] += b;
            delta[n.end as usize + 1] -= b;
            if spilled[v] {
                for (lo, hi) in self.idle(v, n) {
                    delta[lo as usize] -= b;
                    delta[hi as usize + 1] += b;
                }
            }
        }
        let mut at = 0;
        delta.truncate(points);
        for d in &mut delta {
            at += *d;
            *d = at;
        }
        delta
    }
}

/// A stretch of a node's interval ([`Pieces::stretches`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stretch {
    /// Held even when the node is spilled: its head, a read group, what
    /// lies between adjacent groups.
    Held((u32, u32)),
    /// Idle once spilled, with the read group right after it (`None`:
    /// after its last).
    Idle((u32, u32), Option<GroupId>),
}

/// One node's spans for the split-spilling cost bound (`psum bound`'s
/// `min_split_cost_cycles`, SPEC §3.11).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitSpans {
    /// Where it holds PSUM even when spilled.
    pub held: Vec<(u32, u32)>,
    /// Its idle ranges, each with the reload its going there costs.
    pub idle: Vec<((u32, u32), u64)>,
    /// What its save costs, paid once for all its ranges that go.
    pub save: u64,
}

/// The split-spilling spans of every node of a validated module's first
/// iteration (for `psum bound` and `psum export --split-lp`), and whether
/// they describe its split spill code exactly: whether no node's spill code
/// depends on loops (every read group kept on its own tensor up to its
/// last point, and a reload serving every later group of its node).
pub(super) fn split_spans(first: &Analysis, latency: u64) -> (Vec<SplitSpans>, bool) {
    let pinned = IdMap::with_len(first.module.tensors.len(), false);
    let pieces = Pieces::of(&first.lin, &first.live, &pinned, latency, false);
    let spans = (first.live.nodes.iter())
        .map(|(v, n)| pieces.split_spans(v, n))
        .collect();
    (spans, pieces.unextended())
}

/// The placement one sweep found: the spilled nodes, where they are
/// reloaded, and every piece's base bank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Placement {
    /// The nodes to spill, ascending.
    pub spilled: Vec<NodeId>,
    /// Base bank of each node (over its whole interval, or up to where it
    /// goes when spilled).
    pub bank: IdMap<NodeId, u8>,
    /// Per read group of [`Pieces::groups`], whether a reload goes right
    /// before it.
    pub reload: IdMap<GroupId, bool>,
    /// Base bank of the reload before each read group (meaningful where
    /// `reload` is set).
    pub group_bank: IdMap<GroupId, u8>,
}

/// The cycles the spill code of `placed` costs: a save per spilled node
/// and a reload per reloaded group.
pub(super) fn cost_of(pieces: &Pieces, placed: &Placement) -> u64 {
    let saves = placed.spilled.iter().map(|&v| pieces.save_cost[v]);
    let reloads = (pieces.reload_cost.values().zip(placed.reload.values()))
        .filter_map(|(&c, &r)| r.then_some(c));
    saves.chain(reloads).fold(0, u64::saturating_add)
}

/// The spill code of `placed`: each spilled node's save, its first read
/// groups kept on its own tensor, and a reload before each group the sweep
/// reloads, serving the groups after it up to the next.
pub(super) fn spill_plans(live: &Liveness, pieces: &Pieces, placed: &Placement) -> SpillPlans {
    let mut plans = SpillPlans::default();
    for &v in &placed.spilled {
        let reloads = (pieces.groups_of(v)).map(|g| (pieces.groups[g], placed.reload[g]));
        plans.push_split(live.nodes[v].tensor, pieces.save_after[v], reloads);
    }
    plans
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pieces' costs are §3.5's, each spillable node's is its save and
    /// a reload per read group, and the pieces worked out in two halves are
    /// the ones worked out in one.
    #[test]
    fn pieces_cost_what_find_costs_does() {
        for seed in 0..4 {
            let a = crate::alloc::analysis::testing::random_analyzed(200, seed);
            let pinned: IdMap<TensorId, bool> =
                (0..a.module.tensors.len()).map(|t| t % 7 == 0).collect();
            let pieces = Pieces::of(&a.lin, &a.live, &pinned, 64, false);
            assert_eq!(
                pieces,
                Pieces::of(&a.lin, &a.live, &pinned, 64, true),
                "seed {seed}"
            );
            let want = crate::alloc::costs::find_costs(&a.lin, &a.live, &pinned, 64);
            assert_eq!(pieces.cost.as_slice(), want, "seed {seed}");
            for (v, c) in pieces.cost.iter() {
                let reloads = pieces.groups_of(v).map(|g| pieces.reload_cost[g]);
                let parts = Cost::Finite(pieces.save_cost[v] + reloads.sum::<u64>());
                assert!(*c == Cost::Inf || *c == parts, "seed {seed}, node {v:?}");
            }
            assert!(pieces.cost.values().filter(|c| **c != Cost::Inf).count() > 20);
        }
    }
}
