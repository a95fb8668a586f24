//! A choice of spills made real: one round of the split spill code in a
//! copy of the first iteration's program, and a placement of every live
//! range of the result; and the cheapest such allocation found so far.

use crate::alloc::analysis::Analysis;
use crate::alloc::linear::Linear;
use crate::alloc::liveness::{self, Liveness};
use crate::alloc::spill::{self, SpillPlans};
use crate::alloc::split_cost::Pieces;
use crate::alloc::{blocks, NodeId};
use crate::ir::Module;

/// A program with one round of spill code and a placement of all of it.
pub(super) struct Realized {
    pub(super) module: Module,
    pub(super) lin: Linear,
    pub(super) live: Liveness,
    pub(super) bank: Vec<Option<u32>>,
}

/// How one spilled node is spilled: per read group of it, whether a
/// reload goes right before it.
pub(super) type Spill = (NodeId, Vec<bool>);

/// The cheapest allocation found so far.
pub(super) struct Best {
    pub(super) cost: u64,
    pub(super) spills: Vec<Spill>,
    pub(super) realized: Realized,
}

/// Spills `spills` in a copy of the first iteration's program in one
/// round and places every live range of the result, if it can be.
pub(super) fn realize(first: &Analysis, pieces: &Pieces, spills: &[Spill]) -> Option<Realized> {
    let (arch, num_banks) = (&first.arch, first.num_banks);
    let mut module = first.module.clone();
    if !spills.is_empty() {
        let mut namer = spill::Namer::new(&module);
        let (lin, live) = (&first.lin, &first.live);
        let mut plans = SpillPlans::default();
        for (v, reload) in spills {
            let groups = pieces.groups_of(*v).map(|g| pieces.groups[g]);
            plans.push_split(
                live.nodes[*v].tensor,
                pieces.save_after[*v],
                groups.zip(reload.iter().copied()),
            );
        }
        spill::insert_spill_code(&mut module, lin, &[plans], &mut namer, false);
    }
    let lin = Linear::new(&module);
    let live = liveness::live_ranges(&module, &lin, arch, num_banks).ok()?;
    let bank = blocks::place_all(live.nodes.as_slice(), num_banks)?;
    Some(Realized {
        module,
        lin,
        live,
        bank,
    })
}
