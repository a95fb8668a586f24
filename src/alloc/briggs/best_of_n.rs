//! Best-of-n (SPEC §3.8): simplify ([`super::simplify`]) and select
//! ([`super::select`]) under each heuristic H0..H3 over the dirty nodes,
//! keeping the lowest score.
//!
//! The runs go a few components at a time, so each stays in cache: on two
//! threads, each takes half of the parts and runs every heuristic on a
//! part before the next (one large part instead gets two heuristics at
//! once). The runs of one part share their start (simplify's drain of
//! `lo`, which no heuristic decides), and the runs after H0 leave out the
//! components whose selection must be H0's
//! ([`super::simplify::Budgets::mark_agreement`]) and take H0's. A large
//! part, such as iteration 1's whole graph, falls apart as simplify
//! removes its nodes, and its drain goes on range by range in the same way.

use super::context::Context;
use super::graph::Graph;
use super::interference::{DirtyId, Interference};
use super::iteration::{Buffers, Iteration};
use super::reuse::Plan;
use super::select::{self, Selection};
use super::simplify::{self, Budgets, Heuristic};
use crate::alloc::analysis::Analysis;
use crate::alloc::costs::{self, Cost};
use crate::alloc::support::threads::{self, PARALLEL_MIN_NODES};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};

impl Context<'_> {
    /// The best of H0..H3 over the dirty nodes of this iteration (ties:
    /// lowest; a score of 0 ends the search at once), logged. Each
    /// heuristic's score is its dirty nodes' plus the cached cost of the
    /// reused components' spill sets ([`Plan::score`]). A heuristic that
    /// orders the nodes exactly as H0 does
    /// ([`Heuristic::same_order_as_h0`]) does not run: its selection is
    /// H0's, so it logs the same lines and, tying, cannot be chosen.
    pub(crate) fn best_of_n(&mut self) -> Iteration {
        let Analysis {
            lin,
            live,
            num_banks,
            ..
        } = &self.program;
        let plan = (self.reuse).plan(&live.nodes, lin.len(), lin.has_loops());
        let Buffers {
            mut nodes,
            costs,
            graph,
            slots,
        } = std::mem::take(&mut self.buffers);
        nodes.clear();
        nodes.extend(plan.dirty.values().map(|&v| live.nodes[v]));
        let (opts, num_banks, pinned) = (self.opts, *num_banks, &self.pinned);
        let parallel = opts.parallel && nodes.len() >= PARALLEL_MIN_NODES;
        let (graph, costs) = threads::join(
            parallel,
            || Interference::build_in(&nodes, graph),
            || costs::find_costs_of(lin, live, &plan.dirty, pinned, opts.spill_latency, costs),
        );
        let mut init = Budgets::new_in(&graph, &nodes, &costs, num_banks, parallel, slots);
        // The plan knows the components, so the runs after H0 can leave
        // out those that would only repeat it.
        let agreeing = init.mark_agreement(&plan.comp);
        let uniform = (nodes.as_slice().windows(2)).all(|w| w[0].banks == w[1].banks);
        let shortcut = |h: Heuristic| h != Heuristic::H0 && h.same_order_as_h0(uniform);
        let todo: Vec<Heuristic> = Heuristic::ALL
            .into_iter()
            .filter(|&h| !shortcut(h))
            .collect();
        let parts = parts(&plan, PART_MIN_NODES);
        let dirty = Graph {
            g: &graph,
            nodes: &nodes,
            init: &init,
            num_banks,
            split_min: SPLIT_MIN_NODES,
        };
        // The whole graph's score: the dirty nodes' plus the reused spill sets'.
        let score_of = |h: Heuristic, sel: &Selection| {
            sel.score.plus(Cost::Finite(plan.score[h.index() as usize]))
        };
        let zero = |h: Heuristic, sel: &Selection| score_of(h, sel) == Cost::ZERO;
        let mut computed = if parallel && parts.len() == 1 {
            let run = |h: Heuristic, scratch: &mut simplify::Scratch| {
                let mut sels = dirty.select_parts(&[h], &parts, None, scratch);
                sels.pop().expect("one selection per heuristic")
            };
            run_heuristics(&todo, run, zero)
        } else {
            dirty.run_parts(&todo, &parts, agreeing, parallel, zero)
        };
        let mut sels: Vec<Selection> = Vec::with_capacity(Heuristic::ALL.len());
        let mut best: Option<(Heuristic, Cost)> = None;
        for h in Heuristic::ALL {
            self.log.v(format!("best-of-n loop, heuristic = {h}"));
            let sel = match computed[h.index() as usize].take() {
                Some(sel) => sel,
                None => sels[0].clone(),
            };
            let score = score_of(h, &sel);
            self.log
                .v(format!("PSUM score = {score} (lower is better)"));
            if best.is_none_or(|(_, b)| score < b) {
                best = Some((h, score));
            }
            sels.push(sel);
            if score == Cost::ZERO {
                break;
            }
        }
        let (best, _) = best.expect("at least one heuristic ran");
        self.log.v(format!("best PSUM heuristic = {best}"));
        let slots = init.into_buffer();
        Iteration {
            plan,
            graph,
            costs,
            best,
            sels,
            nodes,
            slots,
        }
    }
}

/// The smallest part simplify and select run on, but for the last one.
const PART_MIN_NODES: usize = 256;

/// Simplify splits what remains of a part this large as nodes leave
/// ([`simplify`]'s drain), into ranges of 1/16 of it or more. A smaller
/// graph is in cache already: at 100k nodes splitting gained nothing,
/// at 1M it saves a tenth of iteration 1's simplify and select.
const SPLIT_MIN_NODES: usize = 1 << 17;

/// The parts of `plan`'s dirty nodes (by their position in `plan.dirty`)
/// that simplify and select run on one by one: runs of whole components,
/// each of at least `min` nodes but the last; all of them at once when the
/// plan has no components (as `Plan::all`'s, in the tests).
fn parts(plan: &Plan, min: usize) -> Vec<Range<usize>> {
    let n = plan.dirty.len();
    if plan.comp.is_empty() {
        return std::iter::once(0..n).collect();
    }
    let comp = |i: usize| plan.comp[i];
    let mut parts = Vec::new();
    let mut start = 0;
    for i in 1..=n {
        if i == n || (i - start >= min && comp(i) != comp(i - 1)) {
            parts.push(start..i);
            start = i;
        }
    }
    parts
}

impl Graph<'_> {
    /// Simplify and select under each of `hs`, part by part (each part
    /// closed under adjacency, and read once for all of `hs`), into one
    /// selection of every node per heuristic, in the buffers of `scratch`.
    /// Given `h0`, H0's selection, a heuristic takes H0's banks of the
    /// nodes that agree with it ([`Budgets::agrees`]) and runs on the
    /// others. The nodes outside `parts` stay unselected.
    fn select_parts(
        &self,
        hs: &[Heuristic],
        parts: &[Range<usize>],
        h0: Option<&Selection>,
        scratch: &mut simplify::Scratch,
    ) -> Vec<Selection> {
        let mut sels: Vec<Selection> = hs
            .iter()
            .map(|_| Selection::new(self.nodes.len()))
            .collect();
        let mut held = Vec::new();
        for part in parts {
            let each = |i: usize, stack: &[DirtyId]| {
                let sel = &mut sels[i];
                select::select(self, stack, part.clone(), &mut held, sel);
                if let Some(h0) = h0 {
                    let agrees = |u| self.init.agrees(u, hs[i]);
                    sel.take_from(h0, part.clone(), agrees, self.init.costs());
                }
            };
            simplify::simplify_each(self, hs, part.clone(), h0.is_some(), scratch, each);
        }
        sels
    }

    /// Runs the heuristics of `todo` (H0 first) over `parts`: H0 first,
    /// then, unless it scores `zero`, the others part by part, so each
    /// part is read in cache once for all of them. With `agreeing`, the
    /// others take H0's selection of the nodes that agree with it. In
    /// `parallel`, given two parts or more, two threads each take whole
    /// parts, about half the nodes. Each selection is the one
    /// [`Graph::select_parts`] makes of the heuristic alone over all the
    /// parts.
    fn run_parts(
        &self,
        todo: &[Heuristic],
        parts: &[Range<usize>],
        agreeing: bool,
        parallel: bool,
        zero: impl Fn(Heuristic, &Selection) -> bool,
    ) -> [Option<Selection>; 4] {
        let n = self.nodes.len();
        let halves = |hs: &[Heuristic], h0: Option<&Selection>| {
            let run = |parts| self.select_parts(hs, parts, h0, &mut simplify::Scratch::default());
            if !parallel || parts.len() < 2 {
                return run(parts);
            }
            let cut = parts
                .partition_point(|p| p.end <= n / 2)
                .clamp(1, parts.len() - 1);
            let (first, second) = parts.split_at(cut);
            let mid = second[0].start;
            let (theirs, mine) = threads::join(true, || run(second), || run(first));
            (mine.into_iter().zip(theirs))
                .map(|(mut sel, other)| {
                    let theirs = &other.bank.as_slice()[mid..];
                    sel.bank.as_mut_slice()[mid..].copy_from_slice(theirs);
                    sel.unplaced.extend(other.unplaced);
                    sel.score = sel.score.plus(other.score);
                    sel
                })
                .collect::<Vec<_>>()
        };
        let mut out: [Option<Selection>; 4] = Default::default();
        let (h0, rest) = todo.split_first().expect("H0 always runs");
        let sel = halves(&[*h0], None)
            .pop()
            .expect("one selection per heuristic");
        if !zero(*h0, &sel) {
            for (h, other) in rest.iter().zip(halves(rest, agreeing.then_some(&sel))) {
                out[h.index() as usize] = Some(other);
            }
        }
        out[h0.index() as usize] = Some(sel);
        out
    }
}

/// Runs `run` for each heuristic of `todo` (H0 first, ascending) on two
/// threads, until one ascending run scores `zero` and ends best-of-n: a
/// second thread takes the later half from the last one down while this
/// thread takes the first half; it stops at its next heuristic once this
/// one has seen a zero (its later heuristics are then never logged).
/// Each thread's runs share one set of simplify buffers. Returns the
/// selections by heuristic index.
fn run_heuristics(
    todo: &[Heuristic],
    run: impl Fn(Heuristic, &mut simplify::Scratch) -> Selection + Sync,
    zero: impl Fn(Heuristic, &Selection) -> bool,
) -> [Option<Selection>; 4] {
    let mut out: [Option<Selection>; 4] = Default::default();
    let (mine, theirs) = todo.split_at(todo.len().div_ceil(2));
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let helper = (!theirs.is_empty()).then(|| {
            s.spawn(|| {
                let mut scratch = simplify::Scratch::default();
                (theirs.iter().rev())
                    .take_while(|_| !stop.load(AtomicOrdering::Relaxed))
                    .map(|&h| (h, run(h, &mut scratch)))
                    .collect::<Vec<_>>()
            })
        });
        let mut scratch = simplify::Scratch::default();
        for &h in mine {
            let sel = run(h, &mut scratch);
            let done = zero(h, &sel);
            out[h.index() as usize] = Some(sel);
            if done {
                stop.store(true, AtomicOrdering::Relaxed);
                break;
            }
        }
        if let Some(helper) = helper {
            let theirs = helper.join().expect("a heuristic thread panicked");
            for (h, sel) in theirs {
                out[h.index() as usize] = Some(sel);
            }
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc::briggs::reuse;
    use crate::alloc::briggs::simplify::SlotBuffer;
    use crate::alloc::liveness::Node;
    use crate::entity::{IdMap, IdVec};

    /// Random intervals in order of start, with gaps between some, and
    /// random costs (one in eight unspillable).
    fn random_graph(
        rng: &mut crate::alloc::support::rng::Rng,
    ) -> (IdVec<DirtyId, Node>, IdMap<DirtyId, Cost>) {
        let n = 1 + rng.below(120) as usize;
        let mut start = 0;
        let nodes = (0..n)
            .map(|i| {
                start += rng.below(3) as u32;
                let end = start + rng.below(6) as u32;
                Node::spanning(i, start, end, [1, 1, 2, 4][rng.below(4) as usize])
            })
            .collect();
        let costs = (0..n)
            .map(|_| match rng.below(8) {
                0 => Cost::Inf,
                _ => Cost::Finite(rng.below(50)),
            })
            .collect();
        (nodes, costs)
    }

    /// A selection's spill set in id order (its order depends on the parts).
    fn sorted_spill_set(s: &Selection) -> Vec<DirtyId> {
        let mut v = s.unplaced.clone();
        v.sort_unstable();
        v
    }

    /// A plan of every node dirty, with its components.
    fn plan_of_components(nodes: &IdVec<DirtyId, Node>) -> Plan {
        let points = nodes
            .values()
            .map(|v| v.end as usize + 1)
            .max()
            .unwrap_or(0);
        Plan {
            comp: reuse::components(nodes.as_slice(), points),
            ..Plan::all(nodes.len())
        }
    }

    /// What simplify and select read of a graph, on 8 banks.
    fn on_8_banks<'a>(
        g: &'a Interference,
        nodes: &'a IdVec<DirtyId, Node>,
        init: &'a Budgets<'a>,
    ) -> Graph<'a> {
        Graph {
            g,
            nodes,
            init,
            num_banks: 8,
            split_min: usize::MAX,
        }
    }

    /// Simplify and select give every node the same bank, and the same
    /// spill set and score, on the whole graph at once as on its
    /// components one by one or in groups.
    #[test]
    fn parts_select_as_the_whole_graph_does() {
        let mut rng = crate::alloc::support::rng::Rng::new(5);
        let (mut split, mut split_with_hi) = (0, 0);
        for _ in 0..200 {
            let (nodes, costs) = random_graph(&mut rng);
            let n = nodes.len();
            let plan = plan_of_components(&nodes);
            let components = plan.comp.chunk_by(|a, b| a == b).count();
            let everything = 0..n;
            let all = std::slice::from_ref(&everything);
            assert_eq!(parts(&Plan::all(n), 1), all);
            assert_eq!(parts(&plan, 1).len(), components);
            assert_eq!(parts(&plan, n + 1), all);
            let g = Interference::build(&nodes);
            let init = Budgets::new(&g, &nodes, &costs, 8, false);
            if components > 1 {
                split += 1;
                split_with_hi += usize::from(init.hi > 0);
            }
            let graph = on_8_banks(&g, &nodes, &init);
            // One set of buffers for every run, as a thread has.
            let mut scratch = simplify::Scratch::default();
            for h in Heuristic::ALL {
                let whole = graph.select_parts(&[h], all, None, &mut scratch).remove(0);
                for min in [1, 3, 40] {
                    let parts = parts(&plan, min);
                    let sel = graph
                        .select_parts(&[h], &parts, None, &mut scratch)
                        .remove(0);
                    assert_eq!(sel.bank, whole.bank);
                    assert_eq!(sel.score, whole.score);
                    assert_eq!(sorted_spill_set(&sel), sorted_spill_set(&whole));
                }
            }
        }
        assert!(split > 100, "{split} graphs of several components");
        assert!(split_with_hi > 50, "{split_with_hi} with hi nodes");
    }

    /// A drain that splits what remains of its part into ranges as nodes
    /// leave moves no node past one it interferes with: its stack orders
    /// every interfering pair as one drain does, so select gives the same
    /// banks, score and spill set. Every other graph has its ids shuffled
    /// out of order of start (as loops pull starts back), so a range's
    /// remaining nodes may reach far past it.
    #[test]
    fn split_drains_keep_every_interfering_pair_in_order() {
        let mut rng = crate::alloc::support::rng::Rng::new(17);
        let mut reordered = 0;
        for round in 0..200 {
            let (mut nodes, mut costs) = random_graph(&mut rng);
            let n = nodes.len();
            if round % 2 == 1 {
                for i in (1..n).rev() {
                    let j = rng.below(i as u64 + 1) as usize;
                    let (i, j) = (DirtyId::new(i), DirtyId::new(j));
                    nodes.swap(i, j);
                    costs.swap(i, j);
                }
            }
            let g = Interference::build(&nodes);
            let init = Budgets::new(&g, &nodes, &costs, 8, false);
            let whole = on_8_banks(&g, &nodes, &init);
            let everything = 0..n;
            let all = std::slice::from_ref(&everything);
            let position = |stack: &[DirtyId]| {
                let mut at = IdMap::with_len(n, usize::MAX);
                for (i, &v) in stack.iter().enumerate() {
                    at[v] = i;
                }
                at
            };
            let mut scratch = simplify::Scratch::default();
            for h in Heuristic::ALL {
                let one = whole.select_parts(&[h], all, None, &mut scratch).remove(0);
                let want = position(scratch.stack());
                for split_min in [1, 4, 16] {
                    let graph = Graph { split_min, ..whole };
                    let sel = graph.select_parts(&[h], all, None, &mut scratch).remove(0);
                    assert_eq!(sel.bank, one.bank, "H{h}, split from {split_min}");
                    assert_eq!(sel.score, one.score);
                    assert_eq!(sorted_spill_set(&sel), sorted_spill_set(&one));
                    let got = position(scratch.stack());
                    assert!(got.values().all(|&i| i < n), "every node once");
                    for v in (0..n).map(DirtyId::new) {
                        g.for_each_neighbor(v, |u| {
                            let (i, j) = (u.index(), v.index());
                            assert_eq!(got[u] < got[v], want[u] < want[v], "{i} and {j}");
                        });
                    }
                    reordered += usize::from(got != want);
                }
            }
        }
        assert!(reordered > 300, "{reordered} stacks reordered");
    }

    /// Two threads taking half the parts each, all heuristics per part,
    /// make the selections one thread makes heuristic by heuristic, spill
    /// sets in the same order; a zero under H0 ends the run after it. The
    /// budgets come out the same on two threads too.
    #[test]
    fn halves_select_as_one_thread_does() {
        let mut rng = crate::alloc::support::rng::Rng::new(9);
        let mut spilling = 0;
        for _ in 0..200 {
            let (nodes, costs) = random_graph(&mut rng);
            let plan = plan_of_components(&nodes);
            let parts = parts(&plan, 3);
            if parts.len() < 2 {
                continue;
            }
            let g = Interference::build(&nodes);
            let init = Budgets::new(&g, &nodes, &costs, 8, false);
            assert_eq!(Budgets::new(&g, &nodes, &costs, 8, true), init);
            let graph = on_8_banks(&g, &nodes, &init);
            let all = Heuristic::ALL;
            let none = graph.select_parts(&[], &parts, None, &mut Default::default());
            assert!(none.is_empty());
            let one = graph.select_parts(&all, &parts, None, &mut Default::default());
            let halves = graph.run_parts(&all, &parts, false, true, |_, _| false);
            for (h, sel) in one.iter().enumerate() {
                assert_eq!(halves[h].as_ref(), Some(sel), "H{h}");
            }
            spilling += usize::from(!one[0].unplaced.is_empty());
            let zero = |h: Heuristic, _: &Selection| h == Heuristic::H0;
            let stopped = graph.run_parts(&all, &parts, false, true, zero);
            assert_eq!(stopped[0].as_ref(), Some(&one[0]));
            assert!(stopped[1..].iter().all(Option::is_none));
        }
        assert!(spilling > 50, "{spilling} graphs spill");
    }

    /// A graph and its budgets built in the buffers of the graph before
    /// (larger or smaller, as the iterations' graphs are) equal fresh
    /// ones, on one thread and on two.
    #[test]
    fn buffers_handed_on_build_what_fresh_ones_do() {
        let mut rng = crate::alloc::support::rng::Rng::new(13);
        let (mut lists, mut slots) = (Interference::default(), SlotBuffer::default());
        let (mut grew, mut shrank, mut last) = (0, 0, 0);
        for round in 0..200 {
            let (nodes, costs) = random_graph(&mut rng);
            let fresh = Interference::build(&nodes);
            let g = Interference::build_in(&nodes, lists);
            for v in (0..nodes.len()).map(DirtyId::new) {
                let neighbors = |g: &Interference| {
                    let mut of = Vec::new();
                    g.for_each_neighbor(v, |u| of.push(u));
                    of
                };
                assert_eq!(neighbors(&g), neighbors(&fresh), "round {round}, {v:?}");
            }
            let parallel = round % 2 == 0;
            let init = Budgets::new_in(&g, &nodes, &costs, 8, parallel, slots);
            assert_eq!(init, Budgets::new(&fresh, &nodes, &costs, 8, false));
            grew += usize::from(nodes.len() > last);
            shrank += usize::from(nodes.len() < last);
            last = nodes.len();
            slots = init.into_buffer();
            lists = g;
        }
        assert!(grew > 50 && shrank > 50, "{grew} grew, {shrank} shrank");
    }

    /// Leaving out the components that agree with H0 and taking H0's
    /// selection of them gives each heuristic the banks, score and spill
    /// set of its own full run, on one thread and on two. Every third
    /// graph has one bank size, where H1 and H2 agree with H0 and H3 not.
    #[test]
    fn agreeing_components_select_as_their_own_runs_do() {
        let mut rng = crate::alloc::support::rng::Rng::new(11);
        let (mut all_agree, mut some_agree, mut h3_differs) = (0, 0, 0);
        for round in 0..300 {
            let (mut nodes, costs) = random_graph(&mut rng);
            if round % 3 == 0 {
                nodes.values_mut().for_each(|v| v.banks = 2);
            }
            let plan = plan_of_components(&nodes);
            let g = Interference::build(&nodes);
            let mut init = Budgets::new(&g, &nodes, &costs, 8, false);
            let agreeing = init.mark_agreement(&plan.comp);
            let graph = on_8_banks(&g, &nodes, &init);
            all_agree += usize::from(nodes.keys().all(|u| init.agrees(u, Heuristic::H3)));
            some_agree += usize::from(nodes.keys().any(|u| init.agrees(u, Heuristic::H1)));
            let parts = parts(&plan, 3);
            let all = Heuristic::ALL;
            let own = graph.select_parts(&all, &parts, None, &mut Default::default());
            h3_differs += usize::from(own[3] != own[0]);
            for parallel in [false, true] {
                let runs = graph.run_parts(&all, &parts, agreeing, parallel, |_, _| false);
                for (h, sel) in own.iter().enumerate() {
                    let run = runs[h].as_ref().expect("every heuristic runs");
                    assert_eq!(run.bank, sel.bank, "H{h}");
                    assert_eq!(run.score, sel.score, "H{h}");
                    assert_eq!(sorted_spill_set(run), sorted_spill_set(sel), "H{h}");
                }
            }
        }
        assert!(all_agree > 10, "{all_agree} graphs agree throughout");
        assert!(some_agree > 150, "{some_agree} graphs agree in part");
        assert!(h3_differs > 20, "{h3_differs} graphs where H3 is not H0");
    }
}
