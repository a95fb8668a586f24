//! Simplify (SPEC §3.6; seed: `PSUM_Allocator::simplify`, the additive bank test).
//!
//! `budget(v) = numBanks − liveN(v) − Σ liveN(remaining neighbors)`; a node
//! with a non-negative budget is trivially colorable (`lo`), the others wait
//! in `inf` (unspillable) or `hi`. Nodes are removed lowest-id first from
//! `lo`, else the `hi` node with the smallest heuristic metric (optimistic
//! push), else the lowest-id `inf` node; each removal gives its banks back to
//! its remaining neighbors' budgets. Metrics are exact fractions compared by
//! cross-multiplication. Reference mode scans the seed's sparse sets linearly;
//! fast mode keeps a bitset for `lo`, a lazily re-keyed queue ordered by
//! metric for `hi` and a cursor over `inf`, so one simplify costs
//! O((n + E) log n).

use super::costs::Cost;
use super::interference::Interference;
use super::liveness::Node;
use super::{Mode, NodeId};
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::fmt;

/// The four spill-choice heuristics (SPEC §3.6 **\[decision\]**).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Heuristic {
    /// H0: `cost / deg`.
    H0,
    /// H1: `cost / (liveN · deg)`.
    H1,
    /// H2: `cost / nb`.
    H2,
    /// H3: `cost / len`.
    H3,
}

impl Heuristic {
    /// H0..H3 in the order best-of-n tries them.
    pub const ALL: [Heuristic; 4] = [Heuristic::H0, Heuristic::H1, Heuristic::H2, Heuristic::H3];

    /// The number printed in the log and report.
    pub fn index(self) -> u32 {
        self as u32
    }

    /// Whether this heuristic picks the `hi` nodes in exactly H0's order when
    /// `uniform` (every node has the same `liveN = b`). Then H1's
    /// denominator is `b·deg` and H2's `nb = b·deg` too, a constant multiple
    /// of H0's `deg`, so every cross-multiplied comparison, ties included,
    /// comes out the same. (A `hi` node always has `deg ≥ 1`: with no
    /// remaining neighbor its budget is `numBanks − b ≥ 0`, which is `lo`.)
    pub fn same_order_as_h0(self, uniform: bool) -> bool {
        match self {
            Heuristic::H1 | Heuristic::H2 => uniform,
            Heuristic::H0 => true,
            Heuristic::H3 => false,
        }
    }

    /// The metric of a `hi` node: `cost` over the heuristic's denominator
    /// (clamped to 1, so a zero-bank node cannot divide by zero).
    fn metric(self, cost: u64, node: &Node, deg: u32, nb: u64) -> Ratio {
        let den = match self {
            Heuristic::H0 => u64::from(deg),
            Heuristic::H1 => u64::from(node.banks) * u64::from(deg),
            Heuristic::H2 => nb,
            Heuristic::H3 => node.interval_len(),
        };
        Ratio {
            num: cost,
            den: den.max(1),
        }
    }
}

impl fmt::Display for Heuristic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.index())
    }
}

/// An exact non-negative fraction, ordered by cross-multiplication.
#[derive(Clone, Copy, Debug)]
struct Ratio {
    num: u64,
    den: u64,
}

impl Ord for Ratio {
    fn cmp(&self, o: &Self) -> Ordering {
        (u128::from(self.num) * u128::from(o.den)).cmp(&(u128::from(o.num) * u128::from(self.den)))
    }
}

impl PartialOrd for Ratio {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl PartialEq for Ratio {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}

impl Eq for Ratio {}

/// Worklist membership of a node during simplify.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    Lo,
    Hi,
    Inf,
    Removed,
}

/// A node's simplify state, kept together so a removal touches one place
/// per neighbor.
#[derive(Clone, Copy, Debug)]
struct Slot {
    budget: i64,
    deg: u32,
    list: List,
}

/// The initial budgets and worklists, shared by the four heuristics of one
/// iteration.
#[derive(Clone, Debug)]
pub struct Budgets {
    slots: Vec<Slot>,
    /// Initial size of `lo`.
    pub lo: usize,
    /// Initial size of `hi`.
    pub hi: usize,
    /// Initial size of `inf`.
    pub inf: usize,
}

impl Budgets {
    /// Computes every node's budget and degree and sorts it into a worklist.
    pub fn new(g: &Interference, nodes: &[Node], costs: &[Cost], num_banks: u32) -> Budgets {
        let mut b = Budgets {
            slots: Vec::with_capacity(nodes.len()),
            lo: 0,
            hi: 0,
            inf: 0,
        };
        for (i, n) in nodes.iter().enumerate() {
            let mut budget = i64::from(num_banks) - i64::from(n.banks);
            let mut deg = 0;
            g.for_each_neighbor(NodeId::new(i), |u| {
                budget -= i64::from(nodes[u.index()].banks);
                deg += 1;
            });
            let list = if budget >= 0 {
                b.lo += 1;
                List::Lo
            } else if costs[i] == Cost::Inf {
                b.inf += 1;
                List::Inf
            } else {
                b.hi += 1;
                List::Hi
            };
            b.slots.push(Slot { budget, deg, list });
        }
        b
    }
}

/// Working state of one simplify run.
struct State<'a> {
    nodes: &'a [Node],
    costs: &'a [Cost],
    num_banks: u32,
    h: Heuristic,
    slots: Vec<Slot>,
}

impl State<'_> {
    fn key(&self, u: usize) -> (Ratio, u32) {
        let n = &self.nodes[u];
        let slot = &self.slots[u];
        let nb = (i64::from(self.num_banks) - i64::from(n.banks) - slot.budget) as u64;
        let cost = self.costs[u].finite().expect("hi nodes have finite cost");
        (self.h.metric(cost, n, slot.deg, nb), u as u32)
    }

    /// Gives `banks` back to the remaining neighbor `u`; returns whether `u`
    /// just became trivially colorable.
    fn relieve(&mut self, u: usize, banks: u32) -> bool {
        let slot = &mut self.slots[u];
        slot.budget += i64::from(banks);
        slot.deg -= 1;
        slot.budget >= 0 && matches!(slot.list, List::Hi | List::Inf)
    }
}

/// Runs simplify under heuristic `h`; returns the stack (bottom first).
pub fn simplify(
    g: &Interference,
    nodes: &[Node],
    costs: &[Cost],
    init: &Budgets,
    num_banks: u32,
    h: Heuristic,
    mode: Mode,
) -> Vec<NodeId> {
    let st = State {
        nodes,
        costs,
        num_banks,
        h,
        slots: init.slots.clone(),
    };
    match mode {
        Mode::Reference => simplify_reference(g, st),
        Mode::Fast => simplify_fast(g, st),
    }
}

/// The seed's drain: each pick scans the node universe.
fn simplify_reference(g: &Interference, mut st: State) -> Vec<NodeId> {
    let n = st.nodes.len();
    let mut stack = Vec::with_capacity(n);
    loop {
        let first = |st: &State, l: List| (0..n).find(|&u| st.slots[u].list == l);
        let v = match first(&st, List::Lo) {
            Some(v) => v,
            None => match (0..n)
                .filter(|&u| st.slots[u].list == List::Hi)
                .min_by_key(|&u| st.key(u))
            {
                Some(v) => v,
                None => match first(&st, List::Inf) {
                    Some(v) => v,
                    None => break,
                },
            },
        };
        st.slots[v].list = List::Removed;
        stack.push(NodeId::new(v));
        let banks = st.nodes[v].banks;
        for u in 0..n {
            if st.slots[u].list != List::Removed
                && g.interferes(NodeId::new(v), NodeId::new(u))
                && st.relieve(u, banks)
            {
                st.slots[u].list = List::Lo;
            }
        }
    }
    stack
}

/// The drain with an [`IdSet`] for `lo`, a lazy [`HiQueue`] keyed by
/// metric for `hi` and a cursor over `inf`. A removal only ever raises the metric of a
/// remaining neighbor (its degree and neighbor banks shrink; the cost and
/// length stay), so a `hi` entry's key is a lower bound of the node's
/// current key: when an entry surfaces with an outdated key it is pushed
/// again with the current one, and an entry that surfaces up to date is the
/// true minimum.
fn simplify_fast(g: &Interference, mut st: State) -> Vec<NodeId> {
    let n = st.nodes.len();
    let mut stack = Vec::with_capacity(n);
    let mut lo = IdSet::new(n);
    for u in (0..n).filter(|&u| st.slots[u].list == List::Lo) {
        lo.insert(u);
    }
    let infs: Vec<usize> = (0..n).filter(|&u| st.slots[u].list == List::Inf).collect();
    let mut inf_cursor = 0;
    let mut hi = HiQueue::new(
        (0..n)
            .filter(|&u| st.slots[u].list == List::Hi)
            .map(|u| st.key(u))
            .collect(),
    );
    loop {
        let v = if let Some(v) = lo.pop_min() {
            v
        } else if let Some(v) = pop_hi(&mut hi, &st) {
            v
        } else {
            while inf_cursor < infs.len() && st.slots[infs[inf_cursor]].list != List::Inf {
                inf_cursor += 1;
            }
            match infs.get(inf_cursor) {
                Some(&v) => v,
                None => break,
            }
        };
        st.slots[v].list = List::Removed;
        stack.push(NodeId::new(v));
        let banks = st.nodes[v].banks;
        g.for_each_neighbor(NodeId::new(v), |u| {
            let u = u.index();
            if st.slots[u].list != List::Removed && st.relieve(u, banks) {
                st.slots[u].list = List::Lo;
                lo.insert(u);
            }
        });
    }
    stack
}

/// A set of node ids with O(log₆₄ n) insert and pop-smallest: a bitset
/// with a summary level per 64 words, up to a single word.
struct IdSet {
    /// `levels[0]` holds one bit per id; each next level one bit per
    /// non-zero word of the level below.
    levels: Vec<Vec<u64>>,
}

impl IdSet {
    fn new(n: usize) -> IdSet {
        let mut levels = Vec::new();
        let mut len = n.max(1);
        loop {
            let words = len.div_ceil(64);
            levels.push(vec![0u64; words]);
            if words == 1 {
                return IdSet { levels };
            }
            len = words;
        }
    }

    fn insert(&mut self, mut i: usize) {
        for level in &mut self.levels {
            let word = &mut level[i / 64];
            let was = *word;
            *word |= 1 << (i % 64);
            if was != 0 {
                return;
            }
            i /= 64;
        }
    }

    fn pop_min(&mut self) -> Option<usize> {
        let top = self.levels.len() - 1;
        if self.levels[top][0] == 0 {
            return None;
        }
        let mut i = 0;
        for level in self.levels.iter().rev() {
            i = i * 64 + level[i].trailing_zeros() as usize;
        }
        let mut j = i;
        for level in &mut self.levels {
            let word = &mut level[j / 64];
            *word &= !(1 << (j % 64));
            if *word != 0 {
                break;
            }
            j /= 64;
        }
        Some(i)
    }
}

/// The `hi` entries `(key, node)`: the initial ones sorted once and read
/// through a cursor, the re-keyed ones in a heap. Under pressure nearly
/// every node leaves through `hi` and only some are re-keyed, so this beats
/// one heap of all of them (each pop of which misses the cache at every
/// level).
struct HiQueue {
    sorted: Vec<(Ratio, u32)>,
    next: usize,
    rekeyed: BinaryHeap<Reverse<(Ratio, u32)>>,
}

impl HiQueue {
    fn new(mut entries: Vec<(Ratio, u32)>) -> HiQueue {
        entries.sort_unstable();
        HiQueue {
            sorted: entries,
            next: 0,
            rekeyed: BinaryHeap::new(),
        }
    }

    fn push(&mut self, entry: (Ratio, u32)) {
        self.rekeyed.push(Reverse(entry));
    }

    /// The smallest entry, and whether it is in the heap (the sorted run
    /// wins ties).
    fn front(&self) -> Option<((Ratio, u32), bool)> {
        let sorted = self.sorted.get(self.next).copied();
        let heap = self.rekeyed.peek().map(|r| r.0);
        match (sorted, heap) {
            (Some(a), Some(b)) if b < a => Some((b, true)),
            (Some(a), _) => Some((a, false)),
            (None, b) => b.map(|b| (b, true)),
        }
    }

    /// The smallest entry, if any.
    fn peek(&self) -> Option<(Ratio, u32)> {
        self.front().map(|(e, _)| e)
    }

    /// Removes and returns the smallest entry.
    fn pop(&mut self) -> Option<(Ratio, u32)> {
        let (e, in_heap) = self.front()?;
        if in_heap {
            self.rekeyed.pop();
        } else {
            self.next += 1;
        }
        Some(e)
    }
}

/// Pops the `hi` node with the smallest current key (see [`simplify_fast`]).
/// An outdated entry whose current key still comes before every other
/// entry (each a lower bound of its node's key) is the minimum as it is.
fn pop_hi(hi: &mut HiQueue, st: &State) -> Option<usize> {
    while let Some(old) = hi.pop() {
        let u = old.1 as usize;
        if st.slots[u].list != List::Hi {
            continue;
        }
        let cur = st.key(u);
        debug_assert!(old <= cur, "simplify metrics only grow");
        if cur == old || hi.peek().is_none_or(|next| cur < next) {
            return Some(u);
        }
        hi.push(cur);
    }
    None
}
