//! The end of an allocation (SPEC §3.9, §6): the banks written into the
//! program and the report's rows of every PSUM tensor.

use super::liveness;
use super::liveness::Liveness;
use super::log::{hundredths, pct_text, Log};
use super::support::threads::in_halves;
use super::{AllocOutcome, AllocReport, TensorReport};
use crate::arch::Arch;
use crate::ir::{Mem, Module, TensorId};
use std::ops::Range;

/// Writes `banks` (by node of `live`) into `work`, fills `report.tensors`
/// and completes the outcome with `log` and `warnings`; on `parallel`,
/// half the rows on a helper thread.
#[allow(clippy::too_many_arguments)]
pub(crate) fn complete(
    mut work: Module,
    arch: &Arch,
    live: &Liveness,
    banks: &[Option<u32>],
    spilled: &[TensorId],
    mut report: AllocReport,
    log: Log,
    warnings: Vec<String>,
    parallel: bool,
) -> AllocOutcome {
    for (n, b) in live.nodes.iter().zip(banks) {
        work.tensors[n.tensor.index()].bank = *b;
    }
    let node_of = live.node_index(work.tensors.len());
    let mut was_spilled = vec![false; work.tensors.len()];
    for t in spilled {
        was_spilled[t.index()] = true;
    }
    let rows = |range: Range<usize>| {
        let psum = range.filter(|&i| work.tensors[i].mem == Mem::Psum);
        psum.map(|i| {
            let t = &work.tensors[i];
            TensorReport {
                name: t.name.clone(),
                bank: t.bank,
                banks: arch.aligned_bank_num(arch.bank_num(u64::from(t.bytes))),
                interval: node_of[i].map(|v| {
                    let n = &live.nodes[v.index()];
                    [n.start, n.end]
                }),
                spilled: was_spilled[i],
            }
        })
        .collect::<Vec<_>>()
    };
    // A large program's rows (a name each) are built in two halves at once.
    let (mut tensors, rest) = in_halves(parallel, work.tensors.len(), rows);
    tensors.extend(rest);
    report.tensors = tensors;
    AllocOutcome {
        module: work,
        report,
        log: log.log,
        trace: log.trace,
        warnings,
    }
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
    let used = liveness::peak_demand(&live.nodes, points).0;
    let utilization = hundredths(used, num_banks);
    log.v(format!(
        "{}% PSUM utilization after allocation",
        pct_text(utilization)
    ));
    utilization
}

/// The report of an allocation that spilled `spilled` for `cycles` in
/// `iterations`, with `demand` hundredths of the banks before spilling;
/// its rows ([`complete`]), heuristic and utilization are 0 until set.
pub(crate) fn report(
    work: &Module,
    num_banks: u32,
    spilled: &[TensorId],
    cycles: u64,
    iterations: u32,
    demand: u64,
) -> AllocReport {
    AllocReport {
        arch: work.arch.clone(),
        num_banks,
        tensors: Vec::new(),
        spilled: (spilled.iter())
            .map(|&t| work.tensor(t).name.clone())
            .collect(),
        spill_cost_cycles: cycles,
        iterations,
        best_heuristic: 0,
        demand_pct: demand as f64 / 100.0,
        utilization_pct: 0.0,
    }
}
