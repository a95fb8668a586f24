//! Interference (SPEC §3.4; seed: `PSUM_Allocator::build`).
//!
//! Two nodes interfere iff their closed intervals intersect. Both modes find
//! the edges with the seed's sweep over the points (insert the nodes starting
//! at a point before erasing those ending there; every newcomer meets every
//! resident) and differ only in storage: reference mode keeps the seed's
//! lower-triangular bit-matrix and enumerates neighbors by scanning a row
//! (quadratic), fast mode keeps adjacency lists in one flat vector (linear in
//! the edge count, which pressure bounds).

use super::linear::{refill, resize_to_overwrite};
use super::liveness::Node;
use super::{Mode, NodeId};

/// The interference graph in one of the two representations.
#[derive(Clone, Debug)]
pub enum Interference {
    /// Reference mode: lower-triangular bit-matrix.
    Matrix(BitMatrix),
    /// Fast mode: adjacency lists.
    Lists(AdjLists),
}

/// The seed's lower-triangular bit-matrix: bit `i(i−1)/2 + j` for `i > j`.
#[derive(Clone, Debug)]
pub struct BitMatrix {
    n: usize,
    bits: Vec<u64>,
}

impl BitMatrix {
    fn bit(i: usize, j: usize) -> usize {
        let (i, j) = if i > j { (i, j) } else { (j, i) };
        i * (i - 1) / 2 + j
    }

    fn set(&mut self, i: usize, j: usize) {
        let b = Self::bit(i, j);
        self.bits[b / 64] |= 1 << (b % 64);
    }

    fn get(&self, i: usize, j: usize) -> bool {
        i != j && {
            let b = Self::bit(i, j);
            self.bits[b / 64] & (1 << (b % 64)) != 0
        }
    }
}

/// Adjacency lists, sliced out of one vector; empty by default, as the
/// buffers [`Interference::build_in`] fills.
#[derive(Clone, Debug, Default)]
pub struct AdjLists {
    offsets: Vec<u32>,
    adj: Vec<NodeId>,
}

impl Interference {
    /// Builds the graph of `nodes`.
    pub fn build(nodes: &[Node], mode: Mode) -> Interference {
        Self::build_in(nodes, mode, AdjLists::default())
    }

    /// [`Interference::build`], in fast mode in the buffers of `lists`
    /// (from [`Interference::into_lists`]): an allocator iteration's graph
    /// is as large as the program, and fresh buffers would cost a page
    /// fault per 4 KiB every iteration.
    pub fn build_in(nodes: &[Node], mode: Mode, lists: AdjLists) -> Interference {
        let n = nodes.len();
        match mode {
            Mode::Reference => {
                let mut m = BitMatrix {
                    n,
                    bits: vec![0; (n * n.saturating_sub(1) / 2).div_ceil(64)],
                };
                Sweep::new(nodes).run(|u, v| m.set(u.index(), v.index()));
                Interference::Matrix(m)
            }
            Mode::Fast => {
                let sweep = Sweep::new(nodes);
                let AdjLists {
                    mut offsets,
                    mut adj,
                } = lists;
                refill(&mut offsets, n + 1, 0);
                sweep.run(|u, v| {
                    offsets[u.index() + 1] += 1;
                    offsets[v.index() + 1] += 1;
                });
                for i in 0..n {
                    offsets[i + 1] += offsets[i];
                }
                resize_to_overwrite(&mut adj, offsets[n] as usize, NodeId(0));
                // Each list's start is its fill cursor; once full, each
                // holds the next list's start, so the starts shift back.
                sweep.run(|u, v| {
                    adj[offsets[u.index()] as usize] = v;
                    offsets[u.index()] += 1;
                    adj[offsets[v.index()] as usize] = u;
                    offsets[v.index()] += 1;
                });
                offsets.copy_within(0..n, 1);
                offsets[0] = 0;
                Interference::Lists(AdjLists { offsets, adj })
            }
        }
    }

    /// The buffers of the adjacency lists, for [`Interference::build_in`]
    /// (none in reference mode).
    pub fn into_lists(self) -> AdjLists {
        match self {
            Interference::Matrix(_) => AdjLists::default(),
            Interference::Lists(l) => l,
        }
    }

    /// Calls `f` on every neighbor of `v` (in no particular order).
    pub fn for_each_neighbor(&self, v: NodeId, mut f: impl FnMut(NodeId)) {
        match self {
            Interference::Matrix(m) => {
                for u in 0..m.n {
                    if m.get(v.index(), u) {
                        f(NodeId::new(u));
                    }
                }
            }
            Interference::Lists(l) => {
                let r = l.offsets[v.index()] as usize..l.offsets[v.index() + 1] as usize;
                for &u in &l.adj[r] {
                    f(u);
                }
            }
        }
    }

    /// Hints the cache about `v`'s adjacency: `far`, where its list starts;
    /// otherwise (that entry should be cached by now) the list itself.
    pub fn prefetch(&self, v: NodeId, far: bool) {
        if let Interference::Lists(l) = self {
            if far {
                super::prefetch(&l.offsets, v.index());
            } else if let Some(&o) = l.offsets.get(v.index()) {
                super::prefetch(&l.adj, o as usize);
            }
        }
    }

    /// Whether `u` and `v` interfere.
    pub fn interferes(&self, u: NodeId, v: NodeId) -> bool {
        match self {
            Interference::Matrix(m) => m.get(u.index(), v.index()),
            Interference::Lists(l) => {
                let r = l.offsets[u.index()] as usize..l.offsets[u.index() + 1] as usize;
                l.adj[r].contains(&v)
            }
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
/// whole program). Fast mode sweeps twice, counting and then filling, over
/// one order.
struct Sweep<'a> {
    nodes: &'a [Node],
    /// The node ids in order of start, or empty when that is id order
    /// (always so without loops).
    order: Vec<NodeId>,
}

impl Sweep<'_> {
    fn new(nodes: &[Node]) -> Sweep<'_> {
        let order = if nodes.is_sorted_by_key(|n| n.start) {
            Vec::new()
        } else {
            let mut order: Vec<NodeId> = (0..nodes.len()).map(NodeId::new).collect();
            order.sort_by_key(|v| nodes[v.index()].start);
            order
        };
        Sweep { nodes, order }
    }

    fn run(&self, mut edge: impl FnMut(NodeId, NodeId)) {
        // The residents, with their ends.
        let mut live: Vec<(u32, NodeId)> = Vec::new();
        let mut insert = |v: NodeId| {
            let n = &self.nodes[v.index()];
            live.retain(|&(end, _)| end >= n.start);
            for &(_, u) in &live {
                edge(u, v);
            }
            live.push((n.end, v));
        };
        if self.order.is_empty() {
            (0..self.nodes.len()).for_each(|i| insert(NodeId::new(i)));
        } else {
            self.order.iter().for_each(|&v| insert(v));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both representations hold exactly the pairs of intersecting closed
    /// intervals, each neighbor once, whether the nodes come in order of
    /// start or not (loops extend starts backwards).
    #[test]
    fn edges_are_the_intersecting_pairs() {
        let mut rng = crate::gen::random::Rng::new(3);
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
            for mode in [Mode::Fast, Mode::Reference] {
                let g = Interference::build(&nodes, mode);
                for (i, a) in nodes.iter().enumerate() {
                    let mut seen = Vec::new();
                    g.for_each_neighbor(NodeId::new(i), |u| seen.push(u.index()));
                    seen.sort_unstable();
                    let want: Vec<usize> = (0..n)
                        .filter(|&j| j != i && a.start <= nodes[j].end && nodes[j].start <= a.end)
                        .collect();
                    assert_eq!(seen, want, "{mode:?} node {i}");
                    for j in 0..n {
                        let hit = g.interferes(NodeId::new(i), NodeId::new(j));
                        assert_eq!(hit, want.binary_search(&j).is_ok());
                    }
                }
            }
        }
        assert!(unsorted > 100, "{unsorted} rounds out of order of start");
    }
}
