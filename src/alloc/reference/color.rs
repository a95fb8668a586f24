//! Simplify (SPEC §3.6) and select (SPEC §3.7), as the seed runs them:
//! linear scans of the worklists and of the bit-matrix rows.

use super::graph::BitMatrix;
use super::liveness::Node;
use crate::arch::bank_alignment;

/// A node's worklist during simplify.
#[derive(Clone, Copy, PartialEq, Eq)]
enum List {
    Lo,
    Hi,
    Inf,
    Removed,
}

/// The state simplify starts from under every heuristic: each node's
/// remaining degree, the banks of its remaining neighbors (`nb`) and its
/// worklist.
pub(crate) struct Worklists<'a> {
    nodes: &'a [Node],
    costs: &'a [Option<u64>],
    num_banks: u32,
    deg: Vec<u64>,
    nb: Vec<u64>,
    list: Vec<List>,
}

impl<'a> Worklists<'a> {
    /// The initial worklists of `nodes` (graph `g`, spill costs `costs`,
    /// `None` for +∞) on `num_banks` banks: a node is `lo` when its budget
    /// `numBanks − liveN − nb` is not negative, else `inf` when its cost is
    /// +∞, else `hi`.
    pub(crate) fn new(
        g: &BitMatrix,
        nodes: &'a [Node],
        costs: &'a [Option<u64>],
        num_banks: u32,
    ) -> Self {
        let (deg, nb) = (0..nodes.len())
            .map(|v| {
                g.neighbors(v)
                    .fold((0, 0), |(d, b), u| (d + 1, b + live_n(nodes, u)))
            })
            .unzip();
        let mut w = Worklists {
            nodes,
            costs,
            num_banks,
            deg,
            nb,
            list: Vec::new(),
        };
        w.list = (0..nodes.len())
            .map(|v| match (w.budget(v, w.nb[v]) >= 0, costs[v]) {
                (true, _) => List::Lo,
                (false, None) => List::Inf,
                (false, Some(_)) => List::Hi,
            })
            .collect();
        w
    }

    /// The initial sizes of `lo`, `hi` and `inf`.
    pub(crate) fn sizes(&self) -> [usize; 3] {
        let count = |l: List| self.list.iter().filter(|&&x| x == l).count();
        [count(List::Lo), count(List::Hi), count(List::Inf)]
    }

    /// The budget of node `v` with `nb` banks of remaining neighbors.
    fn budget(&self, v: usize, nb: u64) -> i64 {
        i64::from(self.num_banks) - live_n(self.nodes, v) as i64 - nb as i64
    }

    /// Simplify under heuristic `h` (0..=3): the removed nodes, bottom of
    /// the stack first.
    pub(crate) fn simplify(&self, g: &BitMatrix, h: u32) -> Vec<usize> {
        let (nodes, costs) = (self.nodes, self.costs);
        let n = nodes.len();
        let banks = |v: usize| live_n(nodes, v);
        let (mut deg, mut nb, mut list) = (self.deg.clone(), self.nb.clone(), self.list.clone());
        // The metric of a `hi` node as a fraction: its cost over the
        // heuristic's denominator.
        let metric = |v: usize, deg: &[u64], nb: &[u64]| {
            let den = match h {
                0 => deg[v],
                1 => banks(v) * deg[v],
                2 => nb[v],
                _ => u64::from(nodes[v].end - nodes[v].start) + 1,
            };
            (costs[v].unwrap_or(0), den.max(1))
        };
        let mut stack = Vec::with_capacity(n);
        loop {
            let first = |l: List| (0..n).find(|&v| list[v] == l);
            let mut pick = first(List::Lo);
            if pick.is_none() {
                for v in (0..n).filter(|&v| list[v] == List::Hi) {
                    let better = pick.is_none_or(|p| {
                        let (a, b) = metric(v, &deg, &nb);
                        let (c, d) = metric(p, &deg, &nb);
                        u128::from(a) * u128::from(d) < u128::from(c) * u128::from(b)
                    });
                    if better {
                        pick = Some(v);
                    }
                }
            }
            let Some(v) = pick.or_else(|| first(List::Inf)) else {
                break;
            };
            list[v] = List::Removed;
            stack.push(v);
            // Its remaining neighbors.
            for u in 0..n {
                if list[u] == List::Removed || !g.interferes(u, v) {
                    continue;
                }
                deg[u] -= 1;
                nb[u] -= banks(v);
                if self.budget(u, nb[u]) >= 0 && matches!(list[u], List::Hi | List::Inf) {
                    list[u] = List::Lo;
                }
            }
        }
        stack
    }
}

/// `liveN` of node `v`.
fn live_n(nodes: &[Node], v: usize) -> u64 {
    u64::from(nodes[v].banks)
}

/// What select did: each node's base bank (`None` for the spill set) and
/// the spill set in pop order.
pub(crate) struct Selection {
    /// Base bank of each node.
    pub bank: Vec<Option<u32>>,
    /// The nodes that fit nowhere, in pop order.
    pub unplaced: Vec<usize>,
}

/// Select: pops `stack` and gives each node the first aligned base whose
/// banks no placed neighbor holds.
pub(crate) fn select(g: &BitMatrix, nodes: &[Node], stack: &[usize], num_banks: u32) -> Selection {
    let mut bank: Vec<Option<u32>> = vec![None; nodes.len()];
    let mut unplaced = Vec::new();
    for &v in stack.iter().rev() {
        let mut held = vec![false; num_banks as usize];
        let placed = (0..nodes.len()).filter_map(|u| Some((u, bank[u]?)));
        for (u, b) in placed.filter(|&(u, _)| g.interferes(u, v)) {
            for k in b..b + nodes[u].banks {
                held[k as usize] = true;
            }
        }
        let need = nodes[v].banks;
        let fits = |b: &u32| (*b..*b + need).all(|k| !held[k as usize]);
        let base = (0..num_banks)
            .step_by(bank_alignment(need) as usize)
            .take_while(|b| b + need <= num_banks)
            .find(fits);
        debug_assert!(
            base.is_none_or(|b| b + need <= num_banks),
            "bad PSUM address during select"
        );
        match base {
            Some(b) => bank[v] = Some(b),
            None => unplaced.push(v),
        }
    }
    Selection { bank, unplaced }
}
