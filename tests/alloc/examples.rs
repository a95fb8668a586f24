//! The allocator on the shared examples (SPEC §3): banks, spill code,
//! iterations, heuristic, costs and percentages as their comments state.

use crate::alloc_common;

use alloc_common::*;
use psum::alloc::{problem, AllocOptions, Cost};

fn example(name: &str) -> String {
    std::fs::read_to_string(format!("{}/examples/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// Spill cost of every node of the unallocated `src` (SPEC §3.5), by
/// tensor name.
fn costs_of(src: &str) -> Vec<(String, Cost)> {
    let p = problem(&module(src), &AllocOptions::default()).unwrap();
    p.buffers.into_iter().map(|b| b.id).zip(p.costs).collect()
}

#[test]
fn three_tensors() {
    let out = alloc_src(&example("01_three_tensors.psum"));
    assert_eq!(banks(&out), expect(&[("a", 3), ("b", 2), ("c", 0)]));
    assert_eq!(
        out.log,
        [
            " allocating PSUM",
            "50.00% PSUM demand before spilling",
            "best-of-n loop, heuristic = 0",
            "PSUM score = 0 (lower is better)",
            "best PSUM heuristic = 0",
            "number of tensors spilled from PSUM = 0",
            "50.00% PSUM utilization after allocation",
        ]
    );
    assert_eq!(out.report.demand_pct, 50.0);
    assert_eq!(out.report.utilization_pct, 50.0);
    assert_eq!(out.report.iterations, 1);
    assert!(out.report.spilled.is_empty());
    assert!(out.warnings.is_empty());
}

#[test]
fn one_spill() {
    let src = example("02_one_spill.psum");
    let mut want: Vec<(String, Cost)> = (0..8)
        .map(|i| (format!("t{i}"), Cost::Finite(128)))
        .collect();
    want.push(("t8".into(), Cost::Inf));
    assert_eq!(costs_of(&src), want);

    let out = alloc_src(&src);
    assert_eq!(
        banks(&out),
        expect(&[
            ("t0", 0),
            ("t1", 7),
            ("t2", 6),
            ("t3", 5),
            ("t4", 4),
            ("t5", 3),
            ("t6", 2),
            ("t7", 1),
            ("t8", 0),
            ("t0_ReloadTensorCopy1", 0),
        ])
    );
    let printed = psum::text::print(&out.module);
    assert!(printed.contains(
        "dram out [128, 4096]\nsbuf t0_SpillTensorCopy0 [128, 2048]\npsum t0_ReloadTensorCopy1 [128, 2048] bank=0\n"
    ));
    assert!(printed.contains(
        "  matmul t0 <- w, x[0:128, 0:1024]\n  copy t0_SpillTensorCopy0 <- t0\n  matmul t1 <- "
    ));
    assert!(printed.contains(
        "  act y <- t1, t2, t3, t4, t5, t6, t7, t8\n  copy t0_ReloadTensorCopy1 <- t0_SpillTensorCopy0\n  act y0 <- t0_ReloadTensorCopy1\n"
    ));
    let mut log = vec![
        " allocating PSUM".to_string(),
        "112.50% PSUM demand before spilling".into(),
    ];
    for h in 0..4 {
        log.push(format!("best-of-n loop, heuristic = {h}"));
        log.push("PSUM score = 128 (lower is better)".into());
    }
    log.extend(
        [
            "best PSUM heuristic = 0",
            "spilling from PSUM cost about 128 cycles",
            "best-of-n loop, heuristic = 0",
            "PSUM score = 0 (lower is better)",
            "best PSUM heuristic = 0",
            "number of tensors spilled from PSUM = 1",
            "100.00% PSUM utilization after allocation",
        ]
        .map(String::from),
    );
    assert_eq!(out.log, log);
    let r = &out.report;
    assert_eq!(
        (r.iterations, r.best_heuristic, r.spill_cost_cycles),
        (2, 0, 128)
    );
    assert_eq!(r.spilled, ["t0"]);
    assert_eq!((r.demand_pct, r.utilization_pct), (112.5, 100.0));
    assert_eq!(r.tensors[0].interval, Some([0, 1]));
    assert!(r.tensors[0].spilled);
    assert_eq!(r.tensors[9].interval, Some([11, 12]));
    // -vv: the initial worklists of iteration 1 and the node select gave up on.
    assert_eq!(
        out.trace[3..9],
        [
            "            lo = 0",
            "            hi = 8",
            "            inf = 1",
            "            total = 9",
            " cannot allocate t0",
            "PSUM score = 128 (lower is better)",
        ]
    );
}

#[test]
fn gemm_k_loop() {
    let src = example("04_gemm_k_loop.psum");
    // The accumulator is written in the loop and read right after it: no
    // point lies between the save and the read, so it is unspillable.
    assert_eq!(costs_of(&src), [("acc".to_string(), Cost::Inf)]);
    let out = alloc_src(&src);
    assert_eq!(banks(&out), expect(&[("acc", 0)]));
    // header 0, matmul 1, end 2, act 3: the def in the loop starts at its header.
    assert_eq!(intervals(&out), [("acc".to_string(), Some([0, 3]))]);
    assert_eq!(
        out.log,
        [
            " allocating PSUM",
            "12.50% PSUM demand before spilling",
            "best-of-n loop, heuristic = 0",
            "PSUM score = 0 (lower is better)",
            "best PSUM heuristic = 0",
            "number of tensors spilled from PSUM = 0",
            "12.50% PSUM utilization after allocation",
        ]
    );
    assert_eq!(out.report.iterations, 1);
    assert!(psum::text::print(&out.module).contains("psum acc [128, 2048] bank=0\n"));
}
