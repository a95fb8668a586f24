//! Reuse across fixpoint iterations (fast mode, SPEC §3.10).
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
//! therefore keeps the banks H0..H3 gave each node of a component that
//! all four placed in full, and runs best-of-n only on the other
//! components (the *dirty* nodes): a component is reused when its nodes
//! are exactly one such component of the previous iteration, checked by
//! its key and size. Reused components score 0 under every heuristic.

use super::liveness::Node;
use super::select::Selection;
use super::NodeId;
use crate::ir::TensorId;

/// No reusable result.
const NONE: u32 = u32::MAX;

/// The component of every node: the first point of the component's hull
/// (points joined by an interval holding both belong to one component).
pub fn components(nodes: &[Node], num_points: usize) -> Vec<u32> {
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
pub struct Plan {
    /// The component of each node (see [`components`]).
    pub comp: Vec<u32>,
    /// The nodes best-of-n must run on, ascending.
    pub dirty: Vec<NodeId>,
    /// Each node's index in `dirty`, or `u32::MAX` when it is reused.
    pub local: Vec<u32>,
}

impl Plan {
    /// Every node dirty: nothing to reuse.
    pub fn all(n: usize) -> Plan {
        Plan {
            comp: Vec::new(),
            dirty: (0..n).map(NodeId::new).collect(),
            local: (0..n as u32).collect(),
        }
    }
}

/// The banks H0..H3 gave the nodes of fully placed components, by tensor,
/// with the component each was in.
#[derive(Clone, Debug, Default)]
pub struct Reuse {
    /// Per tensor: its component key last iteration, or `NONE`.
    comp: Vec<u32>,
    /// Per tensor: its base bank under H0..H3.
    banks: Vec<[u8; 4]>,
    /// Last iteration's component sizes, by key.
    sizes: Vec<u32>,
}

impl Reuse {
    /// Splits `nodes` into reused components and dirty nodes.
    pub fn plan(&self, nodes: &[Node], num_points: usize) -> Plan {
        let comp = components(nodes, num_points);
        // Per component key: the previous key all its nodes share (NONE
        // once they disagree or one has none), and its size.
        let mut prev = vec![None::<u32>; num_points];
        let mut size = vec![0u32; num_points];
        for (n, &c) in nodes.iter().zip(&comp) {
            let t = n.tensor.index();
            let mine = self.comp.get(t).copied().unwrap_or(NONE);
            let c = c as usize;
            size[c] += 1;
            prev[c] = match prev[c] {
                None => Some(mine),
                Some(p) if p == mine => Some(p),
                Some(_) => Some(NONE),
            };
        }
        let reused = |c: u32| {
            let c = c as usize;
            matches!(prev[c], Some(p) if p != NONE && self.sizes[p as usize] == size[c])
        };
        let mut dirty = Vec::new();
        let mut local = vec![NONE; nodes.len()];
        for (i, &c) in comp.iter().enumerate() {
            if !reused(c) {
                local[i] = dirty.len() as u32;
                dirty.push(NodeId::new(i));
            }
        }
        Plan { comp, dirty, local }
    }

    /// The base bank of reused tensor `t` under heuristic `h`.
    pub fn bank(&self, t: TensorId, h: usize) -> u32 {
        u32::from(self.banks[t.index()][h])
    }

    /// Records this iteration for the next: the reused components keep
    /// their banks; a dirty component is kept when all four `sels` (over
    /// `plan.dirty`) placed every node of it.
    pub fn record(&mut self, nodes: &[Node], num_points: usize, plan: &Plan, sels: [&Selection; 4]) {
        let tensors = nodes.iter().map(|n| n.tensor.index() + 1).max().unwrap_or(0);
        if self.comp.len() < tensors {
            self.comp.resize(tensors, NONE);
            self.banks.resize(tensors, [0; 4]);
        }
        self.comp.fill(NONE);
        let mut placed = vec![true; num_points];
        for sel in sels {
            for v in &sel.unplaced {
                placed[plan.comp[plan.dirty[v.index()].index()] as usize] = false;
            }
        }
        self.sizes.clear();
        self.sizes.resize(num_points, 0);
        for (i, n) in nodes.iter().enumerate() {
            let c = plan.comp[i];
            self.sizes[c as usize] += 1;
            let t = n.tensor.index();
            let l = plan.local[i];
            if l == NONE {
                self.comp[t] = c;
            } else if placed[c as usize] {
                self.comp[t] = c;
                for (h, sel) in sels.iter().enumerate() {
                    let b = sel.bank[l as usize].expect("a placed component");
                    self.banks[t][h] = b as u8;
                }
            } else {
                self.comp[t] = NONE;
            }
        }
    }
}
