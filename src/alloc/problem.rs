//! The allocation problem of a module (SPEC §3.2–3.5, §3.11): the nodes of
//! its first iteration with their live intervals, spill costs and split
//! spans, as `psum bound` bounds it, `psum export` hands it to MiniMalloc
//! and the split LP, and the peer comparison feeds it to regalloc2.

use super::costs::{self, Cost};
use super::split_cost::{self, SplitSpans};
use super::{analyze, AllocError, AllocOptions};
use crate::entity::IdMap;
use crate::ir::Module;
use serde::Serialize;

/// A live interval: closed `[start, end]` in program points, holding `banks` banks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Interval {
    /// First program point (inclusive).
    pub start: u32,
    /// Last program point (inclusive).
    pub end: u32,
    /// Banks held (`liveN`, SPEC §3.3).
    pub banks: u32,
}

/// One node of the allocation problem: its name and live interval.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Buffer {
    /// The node's tensor name (a memloc piece is `NAME.K`).
    pub id: String,
    /// Closed live interval and bank count.
    pub interval: Interval,
}

/// The first iteration's allocation problem of a module.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AllocProblem {
    /// The arch codename of the module.
    pub arch: String,
    /// Banks available (after `--psum-banks`).
    pub num_banks: u32,
    /// The nodes, in node order (first definition).
    pub buffers: Vec<Buffer>,
    /// Each node's spill cost (SPEC §3.5), in node order.
    #[serde(skip)]
    pub costs: Vec<Cost>,
    /// Each node's spans under split spilling (SPEC §3.11), in node order.
    #[serde(skip)]
    pub split: Vec<SplitSpans>,
    /// Whether `split` describes the split spill code exactly (no node's
    /// spill code depends on loops); otherwise it relaxes it.
    #[serde(skip)]
    pub split_exact: bool,
}

impl AllocProblem {
    /// The intervals alone, in node order.
    pub fn intervals(&self) -> Vec<Interval> {
        self.buffers.iter().map(|b| b.interval).collect()
    }
}

/// The nodes of a validated module's first allocation iteration (SPEC
/// §3.2–3.3, the allocator's first analysis): memloc split, live ranges with the loop
/// extension, `liveN`.
pub fn problem(m: &Module, opts: &AllocOptions) -> Result<AllocProblem, AllocError> {
    let first = analyze(m.clone(), opts)?;
    let buffers = (first.live.nodes.values())
        .map(|n| Buffer {
            id: first.module.tensor(n.tensor).name.clone(),
            interval: Interval {
                start: n.start,
                end: n.end,
                banks: n.banks,
            },
        })
        .collect();
    let pinned = IdMap::with_len(first.module.tensors.len(), false);
    let (split, split_exact) = split_cost::split_spans(&first, opts.spill_latency);
    Ok(AllocProblem {
        arch: m.arch.clone(),
        num_banks: first.num_banks,
        buffers,
        costs: costs::find_costs(&first.lin, &first.live, &pinned, opts.spill_latency),
        split,
        split_exact,
    })
}
