//! The spill step of one fixpoint iteration (SPEC §3.8): the nodes to
//! spill, their spill code, and the live ranges after it.

use super::context::Context;
use super::interference::DirtyId;
use super::iteration::{Buffers, Iteration};
use super::simplify::SlotBuffer;
use crate::alloc::analysis::Analysis;
use crate::alloc::costs::{self, Cost};
use crate::alloc::liveness;
use crate::alloc::spill::{self, SpillShift};
use crate::alloc::support::threads::{self, PARALLEL_MIN_NODES};
use crate::alloc::{AllocError, NodeId};
use crate::entity::{IdMap, IdVec};
use std::ops::Range;

/// An iteration hands its buffers on when its spill set is at least this
/// fraction (1/N) of its dirty nodes. At 1M tensors the shares are 41%,
/// 10%, 2% and 0.5%, and the next dirty graphs 179%, 116%, 26% and 6% of
/// each one.
const KEEP_BUFFERS_SPILL_SHARE: usize = 16;

impl Context<'_> {
    /// The nodes to spill after iteration `it`, ascending, with what
    /// spilling them costs logged and added up: every finite-cost node of
    /// the spill set, and the finite-cost neighbors of each unspillable
    /// one (SPEC §3.8 **\[decision\]**); an unspillable node with none is
    /// fatal (the first such by id, which does not depend on the order the
    /// parts were selected in). The reused part of the spill set is all
    /// finite.
    pub(crate) fn spill_set(&mut self, it: &Iteration) -> Result<Vec<NodeId>, AllocError> {
        let mut chosen = IdMap::with_len(it.plan.dirty.len(), false);
        let mut stuck: Option<DirtyId> = None;
        for &v in &it.sel().unplaced {
            if it.costs[v] != Cost::Inf {
                chosen[v] = true;
                continue;
            }
            let mut any = false;
            it.graph.for_each_neighbor(v, |u| {
                if it.costs[u] != Cost::Inf {
                    chosen[u] = true;
                    any = true;
                }
            });
            if !any {
                stuck = Some(stuck.map_or(v, |s| s.min(v)));
            }
        }
        if let Some(v) = stuck {
            let n = &self.program.live.nodes[it.plan.dirty[v]];
            let (pressure, point) = liveness::peak_in(
                self.program.live.nodes.as_slice(),
                self.program.lin.len(),
                n.start,
                n.end,
            );
            return Err(AllocError::TooManyReloads {
                tensor: self.program.input_tensor(n.tensor),
                name: self.program.module.tensor(n.tensor).name.clone(),
                pressure,
                point,
            });
        }
        let reused = &it.plan.unplaced[it.best.index() as usize];
        let picked = || (chosen.iter()).filter(|&(_, &c)| c).map(|(v, _)| v);
        let cycles = (picked().filter_map(|v| it.costs[v].finite()))
            .chain(
                reused
                    .iter()
                    .map(|v| self.reuse.cost(self.program.live.nodes[*v].tensor)),
            )
            .fold(0u64, u64::saturating_add);
        let mut all: Vec<NodeId> = picked().map(|v| it.plan.dirty[v]).collect();
        all.extend(reused);
        all.sort_unstable();
        self.log
            .v(format!("spilling from PSUM cost about {cycles} cycles"));
        self.spill_cost = self.spill_cost.saturating_add(cycles);
        (self.spilled).extend(all.iter().map(|v| self.program.live.nodes[*v].tensor));
        Ok(all)
    }

    /// Inserts the spill code of `chosen` (ascending) after iteration `it`,
    /// records what the next iteration may reuse, pins the spilled tensors
    /// and the reloads, and keeps `it`'s buffers for the next iteration
    /// when it will be as large. Returns where the code went.
    pub(crate) fn insert_spill_code(&mut self, mut it: Iteration, chosen: &[NodeId]) -> SpillShift {
        // A spill set that is a large share of the dirty graph touches
        // most of its components, so the next dirty graph is as large and
        // takes this one's buffers. A small one leaves most of them clean:
        // then the buffers go now, before the spill code grows the program
        // to its largest.
        let keep = chosen.len() >= it.plan.dirty.len() / KEEP_BUFFERS_SPILL_SHARE;
        if !keep {
            it.nodes = IdVec::new();
            it.slots = SlotBuffer::default();
        }
        // Recording what to reuse and inserting the spill code touch
        // disjoint state: on a large graph they run side by side.
        let big = self.opts.parallel && it.plan.dirty.len() >= PARALLEL_MIN_NODES;
        let Analysis {
            module: work,
            lin,
            live,
            ..
        } = &mut self.program;
        let (lin, live) = (&*lin, &*live);
        let (reuse, namer) = (&mut self.reuse, &mut self.namer);
        let record = || {
            let sels = [0, 1, 2, 3].map(|h| &it.sels[h]);
            reuse.record(&live.nodes, &it.plan, sels, &it.costs, chosen);
        };
        let insert = || {
            let plan = |ids: Range<usize>| costs::spill_plans(lin, live, &chosen[ids]);
            let (early, late) = threads::in_halves(big, chosen.len(), plan);
            spill::insert_spill_code(work, lin, &[early, late], namer, big)
        };
        let ((), shift) = threads::join(big, record, insert);
        self.pinned.resize(self.program.module.tensors.len(), false);
        for &v in chosen {
            self.pinned[self.program.live.nodes[v].tensor] = true;
        }
        for r in &shift.reloads {
            self.pinned[r.tensor] = true;
        }
        if keep {
            self.buffers = Buffers {
                nodes: it.nodes,
                costs: it.costs,
                graph: it.graph,
                slots: it.slots,
            };
        }
        shift
    }

    /// Follows the spill code `shift` describes: the points renumbered and
    /// the live ranges moved or computed afresh, in the buffers of the last.
    pub(crate) fn after_spill(&mut self, shift: &SpillShift) -> Result<(), AllocError> {
        self.program.after_spill(shift, self.two_threads)
    }
}
