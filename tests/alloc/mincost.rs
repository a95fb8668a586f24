//! `--allocator mincost` and `--allocator exact` (SPEC §3.11): every result
//! verifies (checker, simulator, static checks) on random programs of
//! every kind; mincost never fails where Briggs allocates; exact costs no
//! more than mincost or Briggs on small programs, and exactly what trying
//! every way to spill costs on tiny ones; the split bound never exceeds
//! exact.

use crate::alloc_common;

use alloc_common::*;
use proptest::prelude::*;
use psum::alloc::Cost;
use psum::alloc::{allocate, exact, AllocError, AllocOptions, AllocOutcome, Allocator};
use psum::alloc::{problem, Interval};
use psum::bound::{bounds, min_spill_cost_one_bank, peak_demand};
use psum::gen::workloads::{generate, random, RandomParams, Workload, WorkloadKind};
use psum::ir::Module;
use psum::verify::verify;

fn opts(allocator: Allocator, psum_banks: Option<u32>) -> AllocOptions {
    AllocOptions {
        allocator,
        psum_banks,
        ..AllocOptions::default()
    }
}

/// Fails unless `out` verifies against `m`.
fn assert_verifies(m: &Module, out: &AllocOutcome, what: &str) {
    let v = verify(m, &out.module);
    assert_eq!(v.first_error(), None, "{what}");
}

/// A random program of `alloc_common` (loops, loop-carried values,
/// memloc splits, 1–3-bank tensors) on any architecture.
fn config(max_tensors: usize) -> impl Strategy<Value = (u64, Config, Option<u32>)> {
    random_config(max_tensors)
}

proptest! {
    #![proptest_config(crate::props_config::config(128, "tests/proptest-regressions/alloc/mincost.txt"))]

    /// Mincost's result verifies whenever Briggs allocates the program,
    /// and mincost allocates it too; its report counts what it spilled.
    #[test]
    fn mincost_verifies_where_briggs_allocates((seed, cfg, banks) in config(40)) {
        let m = module(&program(seed, cfg));
        let briggs = allocate(&m, &opts(Allocator::Briggs, banks));
        let mincost = allocate(&m, &opts(Allocator::Mincost, banks));
        if briggs.is_ok() {
            let out = mincost.expect("mincost allocates what briggs does");
            assert_verifies(&m, &out, "mincost");
            let flagged = out.report.tensors.iter().filter(|t| t.spilled).count();
            prop_assert_eq!(flagged, out.report.spilled.len());
        }
    }
}

proptest! {
    #![proptest_config(crate::props_config::config(48, "tests/proptest-regressions/alloc/mincost.txt"))]

    /// On the `gen random` programs of every shape, mincost's result
    /// verifies.
    #[test]
    fn mincost_verifies_on_gen_random(
        seed in any::<u64>(),
        a in 0..ARCHS.len(),
        tensors in 20u32..100,
        pressure in 0.75f64..2.0,
        multi_bank in any::<bool>(),
        loops in any::<bool>(),
    ) {
        let arch = ARCHS[a];
        let banks = psum::arch::lookup(arch).unwrap().num_banks();
        let m = random(&RandomParams {
            arch: arch.into(),
            tensors,
            pressure: Some(pressure * f64::from(banks)),
            seed,
            multi_bank,
            loops,
            rich: false,
        }).unwrap();
        let out = allocate(&m, &opts(Allocator::Mincost, None)).unwrap();
        assert_verifies(&m, &out, "mincost");
    }
}

proptest! {
    #![proptest_config(crate::props_config::config(96, "tests/proptest-regressions/alloc/mincost.txt"))]

    /// Exact verifies and costs no more than mincost or Briggs on small
    /// programs, and no less than the split bound of one-bank ones.
    #[test]
    fn exact_is_no_worse_than_mincost((seed, cfg, banks) in config(14)) {
        let m = module(&program(seed, cfg));
        let Ok(exact) = allocate(&m, &opts(Allocator::Exact, banks)) else {
            return Ok(());
        };
        assert_verifies(&m, &exact, "exact");
        let cost = exact.report.spill_cost_cycles;
        let briggs = allocate(&m, &opts(Allocator::Briggs, banks));
        match allocate(&m, &opts(Allocator::Mincost, banks)) {
            Ok(mincost) => prop_assert!(cost <= mincost.report.spill_cost_cycles, "exact {} > mincost {}", cost, mincost.report.spill_cost_cycles),
            Err(e) => prop_assert!(briggs.is_err(), "mincost fails ({}) where briggs allocates", e),
        }
        if let Ok(briggs) = briggs {
            prop_assert!(cost <= briggs.report.spill_cost_cycles);
        }
        let p = problem(&m, &opts(Allocator::Briggs, banks)).unwrap();
        if let Some(bound) = bounds(&p).min_split_cost_cycles {
            prop_assert!(bound <= cost, "split bound {} > exact {}", bound, cost);
        }
    }
}

/// The least cost of any way to spill a tiny program, trying every set
/// of its spillable nodes' read groups to reload before (a node spilled
/// when any of its groups is), cheapest first, and its allocation
/// (verified); `None` when no way fits.
fn brute_force(m: &Module, o: &AllocOptions) -> Result<Option<u64>, AllocError> {
    let cand = exact::candidates(m, o)?;
    let bits: usize = cand.iter().map(|c| c.2.len()).sum();
    assert!(bits <= 22, "{bits} read groups");
    let spills = |mask: u32| {
        let (mut at, mut cost, mut set) = (0, 0u64, Vec::new());
        for (name, save, reloads) in &cand {
            let flags: Vec<bool> = (0..reloads.len())
                .map(|j| mask & (1 << (at + j)) != 0)
                .collect();
            at += reloads.len();
            if flags.contains(&true) {
                let paid = reloads.iter().zip(&flags).filter(|r| *r.1).map(|r| *r.0);
                cost += save + paid.sum::<u64>();
                set.push((name.clone(), flags));
            }
        }
        (cost, set)
    };
    let mut masks: Vec<(u64, u32)> = (0u32..1 << bits)
        .map(|mask| (spills(mask).0, mask))
        .collect();
    masks.sort_unstable();
    for (cost, mask) in masks {
        let set = spills(mask).1;
        if let Some(out) = exact::with_spills(m, o, &set)? {
            assert_eq!(out.report.spill_cost_cycles, cost);
            let names: Vec<String> = set.into_iter().map(|s| s.0).collect();
            assert_eq!(out.report.spilled, names);
            assert_verifies(m, &out, "the cheapest way to spill");
            return Ok(Some(cost));
        }
    }
    Ok(None)
}

/// On tiny programs exact finds what trying every spill set finds.
#[test]
fn exact_matches_brute_force_on_tiny_programs() {
    let (mut spilling, mut compared) = (0, 0);
    for seed in 0..120u64 {
        let arch = ARCHS[seed as usize % 4];
        let cfg = Config {
            arch,
            tensors: 3 + seed as usize % 6,
            max_banks: 1 + (seed as u32 / 4) % 3,
            pressure: 2 + seed as usize % 5,
            loops: seed % 3 == 0,
        };
        let m = module(&program(seed, cfg));
        let o = opts(Allocator::Exact, Some(2 + (seed as u32 % 3)));
        match (allocate(&m, &o), brute_force(&m, &o)) {
            (Ok(out), Ok(want)) => {
                assert_eq!(Some(out.report.spill_cost_cycles), want, "seed {seed}");
                spilling += usize::from(want.is_some_and(|c| c > 0));
                compared += 1;
            }
            (Err(AllocError::TooManyReloads { .. }), Ok(want)) => {
                assert_eq!(want, None, "seed {seed}");
            }
            (Err(e), Err(f)) => assert_eq!(e, f, "seed {seed}"),
            (got, want) => panic!("seed {seed}: exact {:?}, brute force {want:?}", got.err()),
        }
    }
    assert!(compared > 80, "{compared} programs compared");
    assert!(spilling > 30, "{spilling} programs spill");
}

/// Every `gen` workload at its defaults allocates with mincost, verifies,
/// and costs no more than Briggs.
#[test]
fn mincost_allocates_every_gen_workload() {
    for kind in WorkloadKind::ALL {
        let m = generate(&Workload::defaults(kind)).unwrap();
        let briggs = allocate(&m, &opts(Allocator::Briggs, None)).unwrap();
        let out = allocate(&m, &opts(Allocator::Mincost, None)).unwrap();
        assert_verifies(&m, &out, kind.name());
        assert!(
            out.report.spill_cost_cycles <= briggs.report.spill_cost_cycles,
            "{kind}: mincost {} > briggs {}",
            out.report.spill_cost_cycles,
            briggs.report.spill_cost_cycles
        );
    }
}

/// The one-spill example: mincost and exact spill the one tensor the
/// bound names, for the bound's cost, and log the lines that apply.
#[test]
fn one_spill_example_spills_the_bound() {
    let m = module(include_str!("../../examples/02_one_spill.psum"));
    let b = bounds(&problem(&m, &AllocOptions::default()).unwrap());
    assert_eq!(b.min_spill_cost_cycles, Some(128));
    for allocator in [Allocator::Mincost, Allocator::Exact] {
        let out = allocate(&m, &opts(allocator, None)).unwrap();
        assert_verifies(&m, &out, "example");
        assert_eq!(out.report.spilled, vec!["t0".to_string()]);
        assert_eq!(out.report.spill_cost_cycles, 128);
        assert_eq!(out.report.iterations, 2);
        assert_eq!(
            out.log,
            [
                " allocating PSUM",
                "112.50% PSUM demand before spilling",
                "spilling from PSUM cost about 128 cycles",
                "number of tensors spilled from PSUM = 1",
                "100.00% PSUM utilization after allocation",
            ]
        );
    }
}

/// A looped trn1 program of 19 tensors (up to 3 banks) that Briggs cannot
/// allocate: its spill sets cheaper than mincost's fit the banks by count
/// but not in aligned blocks, and exact rules them out by their blocks
/// instead of realizing each one; mincost's is the least cost.
#[test]
fn exact_rules_out_spill_sets_that_overfill_aligned_blocks() {
    use psum::gen::random::{program, Arches, RandomConfig};
    let cfg = RandomConfig {
        arch: Arches::Generations,
        tensors: 19,
        pressure: Some(4.75),
        max_banks: 3,
        loops: true,
        ..RandomConfig::rich()
    };
    let m = program(21416, &cfg).unwrap();
    assert_eq!(m.arch, "trn1");
    assert!(matches!(
        allocate(&m, &opts(Allocator::Briggs, None)),
        Err(AllocError::TooManyReloads { .. })
    ));
    let mincost = allocate(&m, &opts(Allocator::Mincost, None)).unwrap();
    let exact = allocate(&m, &opts(Allocator::Exact, None)).unwrap();
    assert_verifies(&m, &exact, "exact");
    assert_eq!(exact.report.spill_cost_cycles, 2176);
    assert_eq!(mincost.report.spill_cost_cycles, 2176);
}

/// Exact refuses a program of more than its limit of nodes.
#[test]
fn exact_refuses_large_programs() {
    let m = random(&RandomParams {
        tensors: exact::MAX_NODES as u32 + 1,
        ..RandomParams::default()
    })
    .unwrap();
    assert_eq!(
        allocate(&m, &opts(Allocator::Exact, None)).unwrap_err(),
        AllocError::ExactTooLarge {
            nodes: exact::MAX_NODES + 1,
            limit: exact::MAX_NODES
        }
    );
}

/// The least cost of one-bank intervals to drop so that no point is
/// covered more than `k` times, trying every subset.
fn brute_min_cost(ivs: &[Interval], costs: &[Cost], k: u32) -> Option<u64> {
    (0u32..1 << ivs.len())
        .filter(|&drop| {
            let kept: Vec<Interval> = (0..ivs.len())
                .filter(|&i| drop & (1 << i) == 0)
                .map(|i| ivs[i])
                .collect();
            peak_demand(&kept).banks <= k
        })
        .filter_map(|drop| {
            (0..ivs.len())
                .filter(|&i| drop & (1 << i) != 0)
                .map(|i| costs[i].finite())
                .sum::<Option<u64>>()
        })
        .min()
}

proptest! {
    #![proptest_config(crate::props_config::config(400, "tests/proptest-regressions/alloc/mincost.txt"))]

    /// The flow's cost bound is the least cost of a removal that fits,
    /// unremovable intervals included (`None` when they alone do not fit).
    #[test]
    fn cost_bound_matches_brute_force(
        spans in prop::collection::vec((0u32..24, 0u32..10, prop::option::weighted(0.85, 1u64..500)), 0..11),
        k in 1u32..4,
    ) {
        let ivs: Vec<Interval> = spans.iter().map(|&(s, len, _)| Interval { start: s, end: s + len, banks: 1 }).collect();
        let costs: Vec<Cost> = spans.iter().map(|&(_, _, c)| c.map_or(Cost::Inf, Cost::Finite)).collect();
        prop_assert_eq!(min_spill_cost_one_bank(&ivs, &costs, k), brute_min_cost(&ivs, &costs, k));
    }
}

/// Two banks; `a` is read, then idle while `b` and `c` fill the banks,
/// then read twice more with nothing else live.
const SPLIT_SPILL: &str = "arch trn1
psum a [128, 2048]
psum b [128, 2048]
psum c [128, 2048]
sbuf w [128, 8192] bf16
sbuf x [128, 16384] bf16
sbuf s [128, 2048]
dram w_in [128, 8192] bf16
dram x_in [128, 16384] bf16

block main {
  dma w <- w_in
  dma x <- x_in
  matmul a <- w[0:128, 0:256], x[0:128, 0:1024]
  act s <- s, a
  matmul b <- w[0:128, 256:512], x[0:128, 1024:2048]
  matmul c <- w[0:128, 512:768], x[0:128, 2048:3072]
  act s <- s, b, c
  act s <- s, a
  act s <- s
  act s <- s, a
}
";

/// Split spilling (SPEC §3.11): mincost and exact save `a` after its
/// write, keep its first read on `a` itself, and reload it once for both
/// later reads: a save and a reload, 128 cycles, where Briggs spills three
/// tensors for 512.
#[test]
fn split_spilling_keeps_the_first_read_and_reloads_once() {
    let m = module(SPLIT_SPILL);
    for allocator in [Allocator::Mincost, Allocator::Exact] {
        let out = allocate(&m, &opts(allocator, Some(2))).unwrap();
        assert_verifies(&m, &out, "split spill");
        assert_eq!(out.report.spilled, vec!["a".to_string()]);
        assert_eq!(out.report.spill_cost_cycles, 128);
        let text = psum::text::print(&out.module);
        let body: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with("block"))
            .collect();
        assert_eq!(
            body,
            [
                "block main {",
                "  dma w <- w_in",
                "  dma x <- x_in",
                "  matmul a <- w[0:128, 0:256], x[0:128, 0:1024]",
                "  copy a_SpillTensorCopy0 <- a",
                "  act s <- s, a",
                "  matmul b <- w[0:128, 256:512], x[0:128, 1024:2048]",
                "  matmul c <- w[0:128, 512:768], x[0:128, 2048:3072]",
                "  act s <- s, b, c",
                "  copy a_ReloadTensorCopy1 <- a_SpillTensorCopy0",
                "  act s <- s, a_ReloadTensorCopy1",
                "  act s <- s",
                "  act s <- s, a_ReloadTensorCopy1",
                "}",
            ],
            "{allocator:?}"
        );
    }
    let briggs = allocate(&m, &opts(Allocator::Briggs, Some(2))).unwrap();
    assert_eq!(briggs.report.spilled.len(), 3);
    assert_eq!(briggs.report.spill_cost_cycles, 512);
}

/// Four banks: `a`, `b` and `c` take banks 3, 2 and 1 as they start; when
/// `b` has ended, banks 0 and 2 are free but not an aligned pair, and the
/// two-bank `d` needs one. Either pair can be freed for nothing: in 0..1,
/// `c` leaves bank 1 by swapping the pieces of banks 1 and 2 from point 1
/// on (from `b`'s start, since `b` was held across `c`'s), so `b` is in
/// bank 1 and `c` in bank 2; the first pair wins, and nothing spills.
const FRAGMENTED: &str = "arch inf1

psum a [64, 2048]
psum b [64, 2048]
psum c [64, 2048]
psum d [64, 4096]
sbuf w [128, 128] bf16
sbuf x [128, 6144] bf16
sbuf y [64, 2048]
sbuf y2 [64, 4096]

block main {
  matmul a <- w, x[0:128, 0:1024]
  matmul b <- w, x[0:128, 1024:2048]
  matmul c <- w, x[0:128, 2048:3072]
  act y <- b
  matmul d[0:64, 0:2048] <- w, x[0:128, 3072:4096]
  matmul d[0:64, 2048:4096] <- w, x[0:128, 4096:5120]
  act y2 <- d
  act y <- c
  act y <- a
}
";

#[test]
fn a_holder_swaps_banks_from_a_point_on() {
    let m = module(FRAGMENTED);
    let out = allocate(&m, &opts(Allocator::Mincost, None)).unwrap();
    assert_verifies(&m, &out, "fragmented");
    assert_eq!(out.report.spilled, Vec::<String>::new());
    assert_eq!(
        banks(&out),
        expect(&[("a", 3), ("b", 1), ("c", 2), ("d", 0)])
    );
    let briggs = allocate(&m, &opts(Allocator::Briggs, None)).unwrap();
    assert_eq!(briggs.report.spilled, Vec::<String>::new());
}

/// On a program large enough for two threads (the module grown for the
/// spill code while the sweep runs, the passes split in halves), mincost
/// allocates what it does on one: the same program, report and log, and
/// the result verifies.
#[test]
fn mincost_on_two_threads_allocates_what_it_does_on_one() {
    let m = random(&RandomParams {
        tensors: 6_000,
        multi_bank: true,
        ..RandomParams::default()
    })
    .unwrap();
    assert!(m.insts.len() >= 1 << 14, "{} instructions", m.insts.len());
    let on = |parallel| {
        let o = AllocOptions {
            parallel,
            ..opts(Allocator::Mincost, None)
        };
        allocate(&m, &o).unwrap()
    };
    let (two, one) = (on(true), on(false));
    assert!(!two.report.spilled.is_empty(), "the program spills");
    assert_eq!(
        psum::text::print(&two.module),
        psum::text::print(&one.module)
    );
    assert_eq!(two.report, one.report);
    assert_eq!(two.log, one.log);
    assert_verifies(&m, &two, "mincost on two threads");
}
