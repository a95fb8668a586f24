//! Spill costs (SPEC §3.5; seed: `PSUM_Allocator::find_costs`, bank × latency).
//!
//! Spilling node `v` costs `liveN(v) × spill_latency × (weight(save) +
//! Σ weight(reload))`, the weights taken where §3.8 puts the code: one save
//! after the last write (hoisted past the loops that do not hold the next
//! read) and one reload before each read group. A node is unspillable (+∞)
//! when it is a reload temporary or was spilled before, when it is not read
//! after its last write, or when spilling would relieve no point (SPEC's rule, plus: a save
//! that would leave the interval as long as it was relieves nothing either).

use super::events::Event;
use super::linear::Linear;
use super::liveness::{self, Liveness};
use super::spill::SpillPlans;
use super::NodeId;
use crate::entity::{EntityId, IdMap, IdVec};
use crate::ir::TensorId;
use std::fmt;

/// A spill cost or score in cycles: a whole number, or +∞ (prints `inf`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Cost {
    /// A finite number of cycles.
    Finite(u64),
    /// Unspillable.
    Inf,
}

impl Cost {
    /// Zero cycles.
    pub(crate) const ZERO: Cost = Cost::Finite(0);

    /// The sum (saturating; +∞ absorbs).
    pub(crate) fn plus(self, o: Cost) -> Cost {
        match (self, o) {
            (Cost::Finite(a), Cost::Finite(b)) => Cost::Finite(a.saturating_add(b)),
            _ => Cost::Inf,
        }
    }

    /// The finite value, if any.
    pub fn finite(self) -> Option<u64> {
        match self {
            Cost::Finite(c) => Some(c),
            Cost::Inf => None,
        }
    }
}

impl fmt::Display for Cost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cost::Finite(c) => write!(f, "{c}"),
            Cost::Inf => f.write_str("inf"),
        }
    }
}

/// Where §3.8 puts the spill code of a spillable node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SpillPlan {
    /// The save goes right after this point (the last write, or the end of
    /// the outermost loop around it that does not hold the next read).
    pub save_after: u32,
    /// Index (into the node's events) of the first read after the save.
    first_read: usize,
}

impl SpillPlan {
    /// The read groups after the save, as closed point ranges in order: maximal
    /// runs of consecutive points that are all instructions reading the node.
    pub(crate) fn groups(
        &self,
        ev: impl Iterator<Item = Event>,
    ) -> impl Iterator<Item = (u32, u32)> {
        let mut reads = ev
            .skip(self.first_read)
            .filter(|e| e.read)
            .map(|e| e.point)
            .peekable();
        std::iter::from_fn(move || {
            let lo = reads.next()?;
            let mut hi = lo;
            while reads.next_if(|&p| p == hi + 1).is_some() {
                hi += 1;
            }
            Some((lo, hi))
        })
    }
}

/// The spill plan of node `v`, or `None` when spilling it cannot help: it is
/// not read after its last write, or every point strictly between the save
/// and its last read is in a read group, or the save itself would keep the
/// interval as it is (a save inside a loop that does not hold the def
/// stretches to that loop's end, exactly as the last read did).
pub(crate) fn spill_plan(lin: &Linear, live: &Liveness, v: NodeId) -> Option<SpillPlan> {
    let ev = live.events_of(v, lin);
    let last_write = ev.clone().rev().find(|e| e.write)?.point;
    let first_read = ev.clone().position(|e| e.read && e.point > last_write)?;
    let next_read = ev.clone().nth(first_read)?.point;
    let mut save_after = last_write;
    let mut l = lin.points[last_write as usize].innermost();
    while let Some(x) = l.filter(|&x| !lin.inside(x, next_read)) {
        save_after = lin.end[x];
        l = lin.parent[x];
    }
    let plan = SpillPlan {
        save_after,
        first_read,
    };
    let mut groups = plan.groups(ev);
    let gap = groups.next().is_some_and(|g| g.0 != save_after + 1) || groups.next().is_some();
    let n = &live.nodes[v];
    (gap && liveness::extend(lin, n.def, save_after) != (n.start, n.end)).then_some(plan)
}

/// The spill code of the spillable nodes `spill`, in their order.
pub(crate) fn spill_plans(lin: &Linear, live: &Liveness, spill: &[NodeId]) -> SpillPlans {
    let mut plans = SpillPlans::default();
    for &v in spill {
        let plan = spill_plan(lin, live, v).expect("only spillable nodes are spilled");
        let t = live.nodes[v].tensor;
        plans.push(t, plan.save_after, plan.groups(live.events_of(v, lin)));
    }
    plans
}

/// The cost of spilling every node (SPEC §3.5). `pinned` flags, by tensor,
/// the nodes spilling cannot help: the reload temporaries, and the tensors
/// already spilled. A spilled tensor's only read after its last write is
/// its own save, placed right after that write (or loop end); spilling it
/// again would only relieve the spill code that later iterations put in
/// the same gap, never a point of the program, and would repeat forever.
pub(crate) fn find_costs(
    lin: &Linear,
    live: &Liveness,
    pinned: &IdMap<TensorId, bool>,
    latency: u64,
) -> Vec<Cost> {
    (0..live.nodes.len())
        .map(|i| cost_of(lin, live, NodeId::new(i), pinned, latency))
        .collect()
}

/// [`find_costs`] of the nodes `ids` only: each id's value is the cost of
/// the node it stands for, in the buffer of `costs` (emptied first).
pub(crate) fn find_costs_of<K: EntityId>(
    lin: &Linear,
    live: &Liveness,
    ids: &IdVec<K, NodeId>,
    pinned: &IdMap<TensorId, bool>,
    latency: u64,
    costs: IdMap<K, Cost>,
) -> IdMap<K, Cost> {
    let mut costs = costs.into_vec();
    costs.clear();
    costs.extend(
        ids.values()
            .map(|&v| cost_of(lin, live, v, pinned, latency)),
    );
    IdMap::from(costs)
}

/// The cost of spilling node `v` (see [`find_costs`]).
fn cost_of(
    lin: &Linear,
    live: &Liveness,
    v: NodeId,
    pinned: &IdMap<TensorId, bool>,
    latency: u64,
) -> Cost {
    let node = &live.nodes[v];
    if pinned[node.tensor] {
        return Cost::Inf;
    }
    let Some(plan) = spill_plan(lin, live, v) else {
        return Cost::Inf;
    };
    let weight = plan
        .groups(live.events_of(v, lin))
        .fold(lin.weight(plan.save_after), |acc, g| {
            acc.saturating_add(lin.weight(g.0))
        });
    Cost::Finite(
        u64::from(node.banks)
            .saturating_mul(latency)
            .saturating_mul(weight),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc::analysis::testing::random_analyzed;
    use crate::alloc::spill::{insert_spill_code, Namer};

    /// Planned in two halves, the spill code is the one planned in one piece:
    /// the same program, tensors, names and spill description, with a
    /// declared name in the counter's way.
    #[test]
    fn halves_build_the_code_one_piece_builds() {
        for seed in 0..4 {
            let a = random_analyzed(200, seed);
            let (mut m, lin, live) = (a.module, a.lin, a.live);
            let spill: Vec<NodeId> = (0..live.nodes.len())
                .map(NodeId::new)
                .filter(|&v| v.index() % 2 == 0 && spill_plan(&lin, &live, v).is_some())
                .collect();
            assert!(spill.len() > 10, "seed {seed}: {} spilled", spill.len());
            // The first node's first reload would take K = 1.
            let first = m.tensor(live.nodes[spill[0]].tensor).name.clone();
            let last = TensorId::new(m.tensors.len() - 1);
            m.tensors[last].name = format!("{first}_ReloadTensorCopy1");
            let code = |parallel| {
                let mut m = m.clone();
                let mut namer = Namer::new(&m);
                let plans = match parallel {
                    false => vec![spill_plans(&lin, &live, &spill)],
                    true => (spill.chunks(spill.len().div_ceil(2)))
                        .map(|half| spill_plans(&lin, &live, half))
                        .collect(),
                };
                let shift = insert_spill_code(&mut m, &lin, &plans, &mut namer, parallel);
                (m, format!("{shift:?}"))
            };
            let (one, halves) = (code(false), code(true));
            // The last name minted is the copies' count: one was skipped.
            let copies = one.0.tensors.len() - m.tensors.len();
            let minted = |t: &&crate::ir::Tensor| t.name.ends_with(&format!("TensorCopy{copies}"));
            assert!(one.0.tensors.as_slice()[m.tensors.len()..]
                .iter()
                .any(|t| minted(&t)));
            assert!(one
                .0
                .tensors
                .values()
                .any(|t| t.name == format!("{first}_ReloadTensorCopy2")));
            assert_eq!(one.0.tensors, halves.0.tensors, "seed {seed}");
            assert_eq!(one.0.insts, halves.0.insts, "seed {seed}");
            assert_eq!(one.0.blocks, halves.0.blocks, "seed {seed}");
            assert_eq!(one.0.loops, halves.0.loops, "seed {seed}");
            assert_eq!(one.1, halves.1, "seed {seed}");
        }
    }

    /// Spilling every spillable node at once strictly shortens each one's
    /// interval: its new interval covers a strict subset of the original
    /// points of its old one (inserted copies are not original points), on
    /// random programs of every shape, each architecture.
    #[test]
    fn spilling_shortens_intervals() {
        use crate::alloc::linear::PointKind;
        use crate::alloc::{analyze, AllocOptions};
        use crate::gen::random::{program, Arches, RandomConfig};
        let mut rng = crate::alloc::support::rng::Rng::new(29);
        for seed in 0..200 {
            let loops = rng.chance(1, 2);
            let cfg = RandomConfig {
                arch: Arches::Fixed(rng.pick(&["trn1", "inf1", "core_v4", "gen3"]).to_string()),
                tensors: rng.range(1, 39),
                pressure: Some(rng.range(1u32, 11).into()),
                max_banks: rng.range(1, 3),
                read_banks: 2,
                loops,
                second_lives: true,
                carried: loops,
                local_loops: loops,
                ..RandomConfig::default()
            };
            let m = program(seed, &cfg).unwrap();
            let a = analyze(m, &AllocOptions::default()).unwrap();
            let (m, lin, live) = (&a.module, &a.lin, &a.live);
            let costs = find_costs(lin, live, &IdMap::with_len(m.tensors.len(), false), 64);
            let chosen: Vec<NodeId> = (0..costs.len())
                .filter(|&i| costs[i] != Cost::Inf)
                .map(NodeId::new)
                .collect();
            let mut after = m.clone();
            let plans = [spill_plans(lin, live, &chosen)];
            insert_spill_code(&mut after, lin, &plans, &mut Namer::new(m), seed % 2 == 0);
            let lin2 = Linear::new(&after);
            let live2 = liveness::live_ranges(&after, &lin2, &a.arch, a.arch.num_banks()).unwrap();
            let old_point = |p: u32| match lin2.points[p as usize].kind() {
                PointKind::Inst(i) => lin.point_of(i),
                PointKind::Header(l) => Some(lin.header[l]),
                PointKind::End(l) => Some(lin.end[l]),
            };
            let node_of = live2.node_index(after.tensors.len());
            for v in chosen {
                let old = live.nodes[v];
                let new = live2.nodes[node_of[old.tensor].unwrap()];
                let covered: Vec<u32> = (new.start..=new.end).filter_map(old_point).collect();
                assert!(
                    covered.iter().all(|&p| old.start <= p && p <= old.end),
                    "seed {seed}"
                );
                let name = &m.tensor(old.tensor).name;
                assert!(
                    (covered.len() as u64) < old.interval_len(),
                    "seed {seed}: {name} not shortened"
                );
            }
        }
    }
}
