//! The allocator's analysis (SPEC §3.1–3.3): memloc split
//! ([`super::memloc_split`]), linearization ([`super::linear`]) and live
//! ranges ([`super::liveness`]) of a validated module, which the allocator
//! starts from and `psum bound` and the bank pictures read; and the same
//! brought up to date after each round of spill code
//! ([`Analysis::after_spill`]), moving the nodes the code left alone
//! instead of reading the program again.

use super::events::AccessTable;
use super::linear::Linear;
use super::liveness::{self, Liveness, Node, NodeCtx};
use super::memloc_split;
use super::spill::SpillShift;
use super::support::threads::{self, join, PARALLEL_MIN_NODES};
use super::{AllocError, AllocOptions, InputTensors};
use crate::arch::{self, Arch};
use crate::entity::IdMap;
use crate::ir::{Module, TensorId};

#[cfg(test)]
pub(crate) mod testing;

/// A module split and analyzed: the nodes of the allocator's first
/// iteration.
#[derive(Clone, Debug)]
pub(crate) struct Analysis {
    /// The module after the memloc split (statements as they were).
    pub module: Module,
    /// Its architecture.
    pub arch: Arch,
    /// Banks the allocator may use (after `--psum-banks`).
    pub num_banks: u32,
    /// Its program points.
    pub lin: Linear,
    /// Its nodes and their live ranges, with the PSUM accesses.
    pub live: Liveness,
    /// The input tensor each of its tensors holds the value of.
    pub input: InputTensors,
}

/// Splits and analyzes `m` under `opts` (its bank count, and two threads
/// on a large program when `opts.parallel`). Errors: an unknown arch, a
/// bank count out of range, and the live-range errors of SPEC §3.3.
pub(crate) fn analyze(m: Module, opts: &AllocOptions) -> Result<Analysis, AllocError> {
    let arch = arch::lookup(&m.arch)?;
    let num_banks = opts.num_banks(&arch)?;
    let parallel = opts.parallel && m.insts.len() >= PARALLEL_MIN_NODES;
    // The points and the access table of a large program, side by side.
    let (table, lin) = join(parallel, || AccessTable::new(&m), || Linear::new(&m));
    let (module, events, input) = memloc_split::memloc_split(m, &lin, table, parallel);
    let live = liveness::live_ranges_of(&module, events, &lin, &arch, num_banks)
        .map_err(|e| e.in_input(|t| input.of(&module, t)))?;
    Ok(Analysis {
        module,
        arch,
        num_banks,
        lin,
        live,
        input,
    })
}

impl Analysis {
    /// The input's tensor that tensor `t` of the module holds the value of.
    pub(crate) fn input_tensor(&self, t: TensorId) -> TensorId {
        self.input.of(&self.module, t)
    }

    /// Brings the analysis up to date with the spill code `shift` describes, just
    /// inserted into its module: its points renumbered and its live ranges the
    /// same as [`liveness::live_ranges`] computes afresh, from those before the code.
    /// Spill code adds instructions and renames reads of the spilled tensors
    /// only, so every other node keeps its instructions: its four points move
    /// to their new numbers (which keeps their order), its events and loops
    /// stay. Moving needs only the shift, so on `parallel` it runs beside the
    /// renumbering. The spilled tensors' nodes and the new tensors' are then
    /// computed afresh (side by side too), and the new ones merged in by def
    /// (the unused tensors stay unused: every new tensor is accessed).
    pub(crate) fn after_spill(
        &mut self,
        shift: &SpillShift,
        parallel: bool,
    ) -> Result<(), AllocError> {
        let Analysis {
            module: m,
            arch,
            num_banks,
            lin,
            live,
            input,
        } = self;
        let Liveness {
            nodes,
            unused,
            mut events,
        } = std::mem::take(live);
        let mut nodes = nodes.into_vec();
        let ((), spilled) = threads::join(
            parallel,
            || lin.renumber(m),
            || {
                events.update(m.tensors.len(), shift);
                shift.move_nodes(&mut nodes)
            },
        );
        let ctx = NodeCtx {
            m,
            events: &events,
            lin,
            arch,
            num_banks: *num_banks,
        };
        let (fresh, redone) = threads::join(
            parallel,
            || ctx.fresh_nodes(shift.tensors),
            || ctx.nodes_at(&nodes, &spilled),
        );
        let in_input = |e: AllocError| e.in_input(|t| input.of(m, t));
        let (fresh, redone) = (fresh.map_err(in_input)?, redone.map_err(in_input)?);
        for (i, n) in spilled.into_iter().zip(redone) {
            nodes[i] = n;
        }
        merge_by_def(&mut nodes, &fresh);
        *live = Liveness {
            nodes: nodes.into(),
            unused,
            events,
        };
        Ok(())
    }
}

/// Merges `fresh` into `nodes`, both in order of def (all defs distinct),
/// in place from the back: the old nodes between two new ones move once,
/// as a block, found by a search outward from the end of the block before
/// (late iterations add a few nodes to millions).
fn merge_by_def(nodes: &mut Vec<Node>, fresh: &[Node]) {
    // The old nodes before `end` are not placed yet.
    let mut end = nodes.len();
    nodes.extend_from_slice(fresh);
    for (j, f) in fresh.iter().enumerate().rev() {
        // The old nodes from `start` on have later defs than `f`: bracket
        // `start` by steps doubling back from `end`, then bisect.
        let (mut lo, mut hi, mut step) = (end, end, 1);
        while lo > 0 && nodes[lo - 1].def > f.def {
            hi = lo - 1;
            lo = lo.saturating_sub(step);
            step *= 2;
        }
        let start = lo + nodes[lo..hi].partition_point(|n| n.def < f.def);
        nodes.copy_within(start..end, start + j + 1);
        nodes[start + j] = *f;
        end = start;
    }
}

impl SpillShift {
    /// Moves the nodes of `nodes` that this code left alone to their new
    /// points; returns the positions of the others, the spilled tensors'.
    fn move_nodes(&self, nodes: &mut [Node]) -> Vec<usize> {
        let mut spilled = IdMap::with_len(self.tensors, false);
        for &t in &self.spilled {
            spilled[t] = true;
        }
        let mut at = Vec::with_capacity(self.spilled.len());
        // Each point moves by the insertions before it, counted from those
        // before the def, which only grows from node to node.
        let mut hint = 0;
        for (i, n) in nodes.iter_mut().enumerate() {
            if spilled[n.tensor] {
                at.push(i);
            } else {
                (*n, hint) = self.move_node(n, hint);
            }
        }
        at
    }

    /// Node `n`, which the spill code left alone, at its new points, with
    /// the count of insertions before its def (`hint`: the count for a
    /// nearby point, such as the previous node's def).
    fn move_node(&self, n: &Node, hint: usize) -> (Node, usize) {
        let at = self.inserted_up_to(n.def, hint);
        // With no insertion inside the interval (the common case when the
        // code is sparse), every point moves by `at`.
        let b = &self.before;
        let inside = (at > 0 && b[at - 1] > n.start) || b.get(at).is_some_and(|&q| q <= n.end);
        let to = |p: u32| {
            let k = if inside {
                self.inserted_up_to(p, at)
            } else {
                at
            };
            p + k as u32
        };
        let moved = Node {
            def: n.def + at as u32,
            last_use: to(n.last_use),
            start: to(n.start),
            end: to(n.end),
            ..*n
        };
        (moved, at)
    }

    /// The number of instructions inserted before old point `p`, searched
    /// outward from `hint` (the count for a nearby point): O(log d) for a
    /// count d away from the hint.
    fn inserted_up_to(&self, p: u32, hint: usize) -> usize {
        let b = &self.before;
        let hint = hint.min(b.len());
        // Bracket the count in [lo, hi] by probes doubling away from the hint.
        let mut step = 1;
        let (lo, hi) = if b.get(hint).is_some_and(|&q| q <= p) {
            let (mut lo, mut hi) = (hint + 1, b.len());
            while let Some(&q) = b.get(lo - 1 + step) {
                if q > p {
                    hi = lo - 1 + step;
                    break;
                }
                lo += step;
                step *= 2;
            }
            (lo, hi)
        } else {
            let (mut lo, mut hi) = (0, hint);
            while step <= hi {
                if b[hi - step] <= p {
                    lo = hi - step + 1;
                    break;
                }
                hi -= step;
                step *= 2;
            }
            (lo, hi)
        };
        lo + b[lo..hi].partition_point(|&q| q <= p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc::costs::{spill_plan, spill_plans};
    use crate::alloc::spill::{insert_spill_code, Namer};
    use crate::alloc::support::rng::Rng;
    use crate::alloc::NodeId;
    use testing::random_analyzed;

    /// The galloping count equals a plain binary search from any hint,
    /// with repeated insertion points and points past the last.
    #[test]
    fn inserted_up_to_counts_from_any_hint() {
        let mut rng = Rng::new(11);
        for _ in 0..300 {
            let mut before: Vec<u32> = (0..rng.index(40)).map(|_| rng.range(0, 100)).collect();
            before.sort_unstable();
            let shift = SpillShift {
                before,
                ..SpillShift::default()
            };
            for p in 0..=101 {
                let want = shift.before.partition_point(|&q| q <= p);
                for hint in 0..=shift.before.len() + 1 {
                    assert_eq!(
                        shift.inserted_up_to(p, hint),
                        want,
                        "{:?} {p} {hint}",
                        shift.before
                    );
                }
            }
        }
    }

    /// A node moves by the insertions before each of its points, whether
    /// or not one falls inside its interval (before the def, after a
    /// loop-extended start, or after it), from any hint.
    #[test]
    fn nodes_move_by_the_insertions_before_each_point() {
        let mut rng = crate::alloc::support::rng::Rng::new(13);
        let mut rnd = move |n: u32| rng.below(u64::from(n)) as u32;
        let mut split = [0; 2];
        for _ in 0..2000 {
            let mut before: Vec<u32> = (0..rnd(6)).map(|_| rnd(40)).collect();
            before.sort_unstable();
            let start = rnd(30);
            let def = start + rnd(4);
            let last_use = def + rnd(6);
            let n = Node {
                tensor: TensorId::new(0),
                def,
                last_use,
                start,
                end: last_use + rnd(4),
                banks: 1,
            };
            let shift = SpillShift {
                before,
                ..SpillShift::default()
            };
            let count = |p: u32| shift.before.partition_point(|&q| q <= p);
            let to = |p: u32| p + count(p) as u32;
            let hint = rnd(8) as usize;
            let (moved, at) = shift.move_node(&n, hint);
            assert_eq!(at, count(def));
            let want = (to(n.def), to(n.last_use), to(n.start), to(n.end));
            assert_eq!((moved.def, moved.last_use, moved.start, moved.end), want);
            split[usize::from(count(n.start) != count(n.def))] += 1;
        }
        assert!(split[1] > 100, "{split:?}: insertions after a start");
    }

    /// After two rounds of spill code (a third of the nodes, then two), the
    /// moved nodes and the updated events equal those computed afresh,
    /// with and without loops; in a program large enough that the nodes
    /// computed afresh, the temporaries declared last, are radix-sorted.
    #[test]
    fn moved_and_updated_equal_recomputed_after_spill_code() {
        for (seed, tensors) in (0..6).map(|s| (s, 300)).chain([(6, 12_000)]) {
            let mut a = random_analyzed(tensors, seed);
            let mut namer = Namer::new(&a.module);
            for round in 0..2 {
                let (lin, live) = (&a.lin, &a.live);
                let spill: Vec<NodeId> = (0..live.nodes.len())
                    .map(NodeId::new)
                    .filter(|&v| round == 1 || v.index() % 3 == 0)
                    .filter(|&v| spill_plan(lin, live, v).is_some())
                    .take(if round == 0 { usize::MAX } else { 2 })
                    .collect();
                assert!(spill.len() >= 2, "seed {seed}: {} spilled", spill.len());
                let plans = [spill_plans(lin, live, &spill)];
                let parallel = round == 1;
                let shift = insert_spill_code(&mut a.module, lin, &plans, &mut namer, parallel);
                a.after_spill(&shift, parallel).unwrap();
                let Analysis {
                    module: m,
                    lin,
                    live,
                    ..
                } = &a;
                assert_eq!(*lin, Linear::new(m), "seed {seed}, round {round}");
                let fresh = liveness::live_ranges(m, lin, &a.arch, a.num_banks).unwrap();
                assert_eq!(live.nodes, fresh.nodes, "seed {seed}, round {round}");
                for t in (0..m.tensors.len()).map(TensorId::new) {
                    let (x, y) = (live.events.of(t, lin), fresh.events.of(t, lin));
                    assert!(x.eq(y), "seed {seed}, round {round}: events of {t}");
                }
            }
        }
    }
}
