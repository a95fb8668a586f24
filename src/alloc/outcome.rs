//! The end of an allocation (SPEC §3.9, §6): the closing lines of the log
//! and the report's rows of every PSUM tensor.

use super::liveness;
use super::liveness::Liveness;
use super::log::{hundredths, pct_text, Log};
use super::support::threads::in_halves;
use super::TensorReport;
use crate::arch::Arch;
use crate::entity::IdMap;
use crate::ir::{Mem, Module, TensorId};
use std::ops::Range;

/// The report's row of every PSUM tensor of `work` (banks written), in
/// declaration order, with `live`'s intervals; on `parallel`, half the
/// rows on a helper thread.
pub(crate) fn rows(
    work: &Module,
    arch: &Arch,
    live: &Liveness,
    spilled: &[TensorId],
    parallel: bool,
) -> Vec<TensorReport> {
    let node_of = live.node_index(work.tensors.len());
    let mut was_spilled = IdMap::with_len(work.tensors.len(), false);
    for &t in spilled {
        was_spilled[t] = true;
    }
    let rows = |range: Range<usize>| {
        let psum = range.filter(|&i| work.tensors[TensorId::new(i)].mem == Mem::Psum);
        psum.map(|i| {
            let id = TensorId::new(i);
            let t = &work.tensors[id];
            TensorReport {
                name: t.name.clone(),
                bank: t.bank,
                banks: arch.aligned_bank_num(arch.bank_num(u64::from(t.bytes))),
                interval: node_of[id].map(|v| {
                    let n = &live.nodes[v];
                    [n.start, n.end]
                }),
                spilled: was_spilled[id],
            }
        })
        .collect::<Vec<_>>()
    };
    let (mut tensors, rest) = in_halves(parallel, work.tensors.len(), rows);
    tensors.extend(rest);
    tensors
}

/// Logs the closing lines of SPEC §3.9 (the spill count, then the
/// utilization of `live`'s nodes over `points` points of `num_banks`
/// banks) and returns the utilization in hundredths.
pub(crate) fn log_closing(
    log: &mut Log,
    spilled: usize,
    live: &Liveness,
    points: usize,
    num_banks: u32,
) -> u64 {
    log.v(format!("number of tensors spilled from PSUM = {spilled}"));
    let used = liveness::peak_demand(live.nodes.as_slice(), points).0;
    let utilization = hundredths(used, num_banks);
    log.v(format!(
        "{}% PSUM utilization after allocation",
        pct_text(utilization)
    ));
    utilization
}
