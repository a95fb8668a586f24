//! Interference (SPEC §3.4; seed: `PSUM_Allocator::build`).
//!
//! Two nodes interfere iff their closed intervals intersect. The edges come
//! from the seed's sweep over the points (insert the nodes starting at a
//! point before erasing those ending there; every newcomer meets every
//! resident), into adjacency lists in one flat vector (linear in the edge
//! count, which pressure bounds).

use crate::alloc::liveness::Node;
use crate::alloc::support::{prefetch, resize_to_overwrite};
use crate::entity::{entity_id, IdMap, IdVec};
use crate::ir::entity;

entity!(
    /// A node of one iteration's dirty graph: its position in
    /// [`Plan::dirty`](super::reuse::Plan::dirty), which gives the
    /// program's [`NodeId`](crate::alloc::NodeId) it stands for.
    DirtyId
);
entity_id!(DirtyId);

/// The interference graph: adjacency lists, sliced out of one vector;
/// empty by default, as the buffers [`Interference::build_in`] fills.
#[derive(Clone, Debug, Default)]
pub(crate) struct Interference {
    /// Where each node's list starts in `adj`; one entry more, past the
    /// last node, where the last list ends.
    offsets: IdMap<DirtyId, u32>,
    adj: Vec<DirtyId>,
}

/// The node after `v`, whose list starts where `v`'s ends.
#[inline]
fn after(v: DirtyId) -> DirtyId {
    DirtyId(v.0 + 1)
}

impl Interference {
    /// Builds the graph of `nodes`.
    #[cfg(test)]
    pub(crate) fn build(nodes: &IdVec<DirtyId, Node>) -> Interference {
        Self::build_in(nodes, Interference::default())
    }

    /// The graph of `nodes`, built in the buffers of `spare`, an earlier
    /// graph: an allocator iteration's graph is as large as the program,
    /// and fresh buffers would cost a page fault per 4 KiB every iteration.
    pub(crate) fn build_in(nodes: &IdVec<DirtyId, Node>, spare: Interference) -> Interference {
        let n = nodes.len();
        let sweep = Sweep::new(nodes);
        let Interference {
            mut offsets,
            mut adj,
        } = spare;
        offsets.reset(n + 1, 0);
        sweep.run(|u, v| {
            offsets[after(u)] += 1;
            offsets[after(v)] += 1;
        });
        let mut sum = 0;
        for o in offsets.values_mut() {
            sum += *o;
            *o = sum;
        }
        resize_to_overwrite(&mut adj, sum as usize, DirtyId(0));
        // Each list's start is its fill cursor; once full, each holds the
        // next list's start, so the starts shift back.
        sweep.run(|u, v| {
            adj[offsets[u] as usize] = v;
            offsets[u] += 1;
            adj[offsets[v] as usize] = u;
            offsets[v] += 1;
        });
        let starts = offsets.as_mut_slice();
        starts.copy_within(0..n, 1);
        starts[0] = 0;
        Interference { offsets, adj }
    }

    /// Calls `f` on every neighbor of `v` (in no particular order).
    pub(crate) fn for_each_neighbor(&self, v: DirtyId, mut f: impl FnMut(DirtyId)) {
        let r = self.offsets[v] as usize..self.offsets[after(v)] as usize;
        for &u in &self.adj[r] {
            f(u);
        }
    }

    /// Hints the cache about `v`'s adjacency: `far`, where its list starts;
    /// otherwise (that entry should be cached by now) the list itself.
    pub(crate) fn prefetch(&self, v: DirtyId, far: bool) {
        if far {
            prefetch(self.offsets.as_slice(), v.index());
        } else if let Some(&o) = self.offsets.get(v) {
            prefetch(&self.adj, o as usize);
        }
    }
}

/// The seed's sweep: at each point insert the nodes starting there (each
/// meets every resident, `edge(resident, newcomer)`), then erase the nodes
/// ending there. Each interfering pair is reported exactly once. It visits
/// the nodes in order of start, so the residents a newcomer meets are the
/// earlier nodes that end at or after its start: the live set is filtered
/// down to those before each insertion, which keeps it at the pressure and
/// costs nothing per point (a late iteration's few dirty nodes may span a
/// whole program). [`Interference::build_in`] sweeps twice, counting and
/// then filling, over one order.
struct Sweep<'a> {
    nodes: &'a IdVec<DirtyId, Node>,
    /// The node ids in order of start, or empty when that is id order
    /// (always so without loops).
    order: Vec<DirtyId>,
}

impl Sweep<'_> {
    fn new(nodes: &IdVec<DirtyId, Node>) -> Sweep<'_> {
        let order = if nodes.as_slice().is_sorted_by_key(|n| n.start) {
            Vec::new()
        } else {
            let mut order: Vec<DirtyId> = nodes.keys().collect();
            order.sort_by_key(|&v| nodes[v].start);
            order
        };
        Sweep { nodes, order }
    }

    fn run(&self, mut edge: impl FnMut(DirtyId, DirtyId)) {
        // The residents, with their ends.
        let mut live: Vec<(u32, DirtyId)> = Vec::new();
        let mut insert = |v: DirtyId| {
            let n = &self.nodes[v];
            live.retain(|&(end, _)| end >= n.start);
            for &(_, u) in &live {
                edge(u, v);
            }
            live.push((n.end, v));
        };
        if self.order.is_empty() {
            self.nodes.keys().for_each(insert);
        } else {
            self.order.iter().for_each(|&v| insert(v));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lists hold exactly the pairs of intersecting closed intervals,
    /// each neighbor once, whether the nodes come in order of start or not
    /// (loops extend starts backwards).
    #[test]
    fn edges_are_the_intersecting_pairs() {
        let mut rng = crate::alloc::support::rng::Rng::new(3);
        let mut unsorted = 0;
        for round in 0..300 {
            let n = rng.below(60) as usize;
            let mut nodes: Vec<Node> = (0..n)
                .map(|i| {
                    let start = rng.below(80) as u32;
                    Node::spanning(i, start, start + rng.below(12) as u32, 1)
                })
                .collect();
            if round % 2 == 0 {
                nodes.sort_by_key(|v| v.start);
            }
            unsorted += usize::from(!nodes.is_sorted_by_key(|v| v.start));
            let g = Interference::build(&IdVec::from(nodes.clone()));
            for (i, a) in nodes.iter().enumerate() {
                let mut seen = Vec::new();
                g.for_each_neighbor(DirtyId::new(i), |u| seen.push(u.index()));
                seen.sort_unstable();
                let want: Vec<usize> = (0..n)
                    .filter(|&j| j != i && a.start <= nodes[j].end && nodes[j].start <= a.end)
                    .collect();
                assert_eq!(seen, want, "node {i}");
            }
        }
        assert!(unsorted > 100, "{unsorted} rounds out of order of start");
    }
}
