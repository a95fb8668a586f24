//! Interference (SPEC §3.4; seed: `PSUM_Allocator::build`).
//!
//! Two nodes interfere iff their closed intervals intersect. Both modes find
//! the edges with the seed's sweep over the points (insert the nodes starting
//! at a point before erasing those ending there; every newcomer meets every
//! resident) and differ only in storage: reference mode keeps the seed's
//! lower-triangular bit-matrix and enumerates neighbors by scanning a row
//! (quadratic), fast mode keeps adjacency lists in one flat vector (linear in
//! the edge count, which pressure bounds).

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

/// Adjacency lists, sliced out of one vector.
#[derive(Clone, Debug)]
pub struct AdjLists {
    offsets: Vec<u32>,
    adj: Vec<NodeId>,
}

impl Interference {
    /// Builds the graph of `nodes`.
    pub fn build(nodes: &[Node], mode: Mode) -> Interference {
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
                let mut offsets = vec![0u32; n + 1];
                sweep.run(|u, v| {
                    offsets[u.index() + 1] += 1;
                    offsets[v.index() + 1] += 1;
                });
                for i in 0..n {
                    offsets[i + 1] += offsets[i];
                }
                let mut adj = vec![NodeId(0); offsets[n] as usize];
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
/// ending there. Each interfering pair is reported exactly once. The nodes
/// are bucketed by start and end point once, so fast mode can sweep twice
/// (count, then fill) for the price of one bucketing. Only the points from
/// the first start to the last end are swept, and when those are many
/// more than the nodes (a late iteration's few dirty nodes in a large
/// program) only the points where a node starts or ends: the buckets and
/// their order stay the same.
struct Sweep {
    s_off: Vec<u32>,
    starts: Vec<NodeId>,
    e_off: Vec<u32>,
    ends: Vec<NodeId>,
}

impl Sweep {
    fn new(nodes: &[Node]) -> Sweep {
        let first = nodes.iter().map(|n| n.start).min().unwrap_or(0);
        let last = nodes.iter().map(|n| n.end).max().unwrap_or(0);
        let sparse = (last - first) as usize > 32 * nodes.len();
        let coords: Vec<u32> = if sparse {
            let mut c: Vec<u32> = nodes.iter().flat_map(|n| [n.start, n.end]).collect();
            c.sort_unstable();
            c.dedup();
            c
        } else {
            Vec::new()
        };
        let span = if nodes.is_empty() {
            0
        } else if sparse {
            coords.len()
        } else {
            (last - first) as usize + 1
        };
        let at = |p: u32| {
            if sparse {
                coords
                    .binary_search(&p)
                    .expect("every endpoint has a coordinate")
            } else {
                (p - first) as usize
            }
        };
        // A counting sort whose offsets double as the fill cursors: counted
        // one slot ahead, `off[b + 1]` is bucket b's cursor and ends as its end.
        let bucket = |key: fn(&Node) -> u32| {
            let mut off = vec![0u32; span + 2];
            for n in nodes {
                off[at(key(n)) + 2] += 1;
            }
            for i in 2..span + 2 {
                off[i] += off[i - 1];
            }
            let mut ids = vec![NodeId(0); nodes.len()];
            for (i, n) in nodes.iter().enumerate() {
                let cursor = &mut off[at(key(n)) + 1];
                ids[*cursor as usize] = NodeId::new(i);
                *cursor += 1;
            }
            off.pop();
            (off, ids)
        };
        let (s_off, starts) = bucket(|n| n.start);
        let (e_off, ends) = bucket(|n| n.end);
        Sweep {
            s_off,
            starts,
            e_off,
            ends,
        }
    }

    fn run(&self, mut edge: impl FnMut(NodeId, NodeId)) {
        let mut live: Vec<NodeId> = Vec::new();
        let mut pos = vec![u32::MAX; self.starts.len()];
        for p in 0..self.s_off.len() - 1 {
            for &v in &self.starts[self.s_off[p] as usize..self.s_off[p + 1] as usize] {
                for &u in &live {
                    edge(u, v);
                }
                pos[v.index()] = live.len() as u32;
                live.push(v);
            }
            for &v in &self.ends[self.e_off[p] as usize..self.e_off[p + 1] as usize] {
                let i = pos[v.index()] as usize;
                let last = *live.last().expect("an ending node is live");
                live.swap_remove(i);
                if last != v {
                    pos[last.index()] = i as u32;
                }
            }
        }
    }
}
