//! Property tests of the allocator on random programs (SPEC §3, §3.10):
//! fast and reference modes agree byte for byte, and every result obeys
//! the allocation invariants.

use crate::alloc_common;

use alloc_common::*;
use proptest::prelude::*;
use psum::alloc::{allocate, problem, AllocOptions, AllocOutcome, Allocator};
use psum::arch::bank_alignment;
use psum::ir::Module;

fn config() -> impl Strategy<Value = (u64, Config, Option<u32>)> {
    random_config(40)
}

/// Allocates in every mode ([`alloc_all`]); `None` when all fail alike.
fn run(m: &Module, psum_banks: Option<u32>) -> Option<AllocOutcome> {
    let opts = AllocOptions {
        psum_banks,
        ..AllocOptions::default()
    };
    alloc_all(m, opts).ok()
}

/// The invariants of one successful allocation.
fn check(input: &Module, out: &AllocOutcome) {
    let r = &out.report;
    let nb = r.num_banks;
    let placed: Vec<_> = r.tensors.iter().filter(|t| t.interval.is_some()).collect();
    // Banks in range and aligned.
    for t in &placed {
        let b = t.bank.expect("every used PSUM tensor has a bank");
        assert_eq!(b % bank_alignment(t.banks), 0, "{} misaligned", t.name);
        assert!(b + t.banks <= nb, "{} out of range", t.name);
    }
    // The report's intervals are those of the result program (which the
    // memloc split leaves as it is).
    let opts = AllocOptions {
        psum_banks: Some(nb),
        ..AllocOptions::default()
    };
    let p = problem(&out.module, &opts).unwrap();
    for t in &r.tensors {
        let b = p.buffers.iter().find(|b| b.id == t.name);
        let iv = b.map(|b| [b.interval.start, b.interval.end]);
        assert_eq!(iv, t.interval, "{}", t.name);
    }
    // No two interfering tensors share a bank.
    for (i, x) in placed.iter().enumerate() {
        for y in &placed[i + 1..] {
            let [xs, xe] = x.interval.unwrap();
            let [ys, ye] = y.interval.unwrap();
            if xs <= ye && ys <= xe {
                let (xb, yb) = (x.bank.unwrap(), y.bank.unwrap());
                assert!(
                    xb + x.banks <= yb || yb + y.banks <= xb,
                    "{} and {} interfere and share a bank",
                    x.name,
                    y.name
                );
            }
        }
    }
    // Interval graphs of one-bank tensors with demand ≤ numBanks color without spilling.
    let one_bank = input
        .tensors
        .values()
        .all(|t| t.mem != psum::ir::Mem::Psum || t.bytes <= 2048);
    if one_bank && r.demand_pct <= 100.0 {
        assert!(r.spilled.is_empty(), "spilled {:?}", r.spilled);
        assert_eq!(r.iterations, 1);
    }
    // Every iteration but the last spilled something.
    let spills = out
        .log
        .iter()
        .filter(|l| l.starts_with("spilling from PSUM cost about "))
        .count();
    assert_eq!(spills as u32, r.iterations - 1);
    assert!(r.spilled.len() >= spills);
}

proptest! {
    #![proptest_config(crate::props_config::config(300, "tests/proptest-regressions/alloc/props.txt"))]

    #[test]
    fn fast_equals_reference_and_invariants_hold((seed, cfg, banks) in config()) {
        let m = module(&program(seed, cfg));
        if let Some(out) = run(&m, banks) {
            check(&m, &out);
        }
    }
}

proptest! {
    #![proptest_config(crate::props_config::config(24, "tests/proptest-regressions/alloc/props.txt"))]

    /// The independent checker (SPEC §5.1) accepts every allocated program:
    /// every read finds its tensor's latest write in every cell, spills and
    /// reloads included.
    #[test]
    fn checker_accepts_allocations((seed, cfg, banks) in config()) {
        let cfg = Config { tensors: cfg.tensors.min(8), ..cfg };
        let m = module(&program(seed, cfg));
        if let Some(out) = run(&m, banks) {
            let verdict = psum::verify::checker::check(&m, &out.module);
            prop_assert!(verdict.is_ok(), "checker: {}", verdict.unwrap_err());
        }
    }
}

/// Every tensor two banks: fast mode reuses H0's selection for H1 and H2
/// (they order the nodes exactly as H0 when all bank counts are equal),
/// reference mode runs them; both must still agree byte for byte, on
/// programs that spill, so the reuse is exercised.
#[test]
fn uniform_two_bank_programs_agree() {
    let mut spilling = 0;
    for seed in 0..100 {
        let cfg = Config {
            arch: "trn1",
            tensors: 30,
            max_banks: 1,
            pressure: 8 + seed as usize % 4,
            loops: seed % 2 == 0,
        };
        let mut m = module(&program(seed, cfg));
        for t in m
            .tensors
            .values_mut()
            .filter(|t| t.mem == psum::ir::Mem::Psum)
        {
            t.bytes *= 2;
        }
        if let Some(out) = run(&m, None) {
            assert!(out.report.tensors.iter().all(|t| t.banks == 2));
            spilling += usize::from(!out.report.spilled.is_empty());
        }
    }
    assert!(spilling >= 30, "only {spilling} programs spilled");
}

/// Low pressure, one-bank tensors: the no-spill property is exercised on
/// every program (most have demand ≤ numBanks).
#[test]
fn low_pressure_one_bank_never_spills() {
    let mut exercised = 0;
    for seed in 0..200 {
        let cfg = Config {
            arch: ARCHS[seed as usize % ARCHS.len()],
            tensors: 30,
            max_banks: 1,
            pressure: 1 + seed as usize % 4,
            loops: seed % 3 != 0,
        };
        let m = module(&program(seed, cfg));
        let out = run(&m, None).expect("one-bank programs allocate");
        check(&m, &out);
        if out.report.demand_pct <= 100.0 {
            exercised += 1;
        }
    }
    assert!(
        exercised > 100,
        "only {exercised} programs within the bank count"
    );
}

/// Programs of a thousand tensors and more, where fast mode reuses
/// components across many iterations and splits simplify into parts:
/// fast and reference mode (two implementations) agree byte for byte, or
/// fail alike, on all banks and on fewer.
#[test]
fn thousand_tensor_programs_agree() {
    let mut spilled = 0;
    for (seed, max_banks, loops, psum_banks) in [
        (21, 3, true, None),
        (22, 1, false, Some(6)),
        (23, 2, true, Some(5)),
    ] {
        let cfg = Config {
            arch: "trn1",
            tensors: 1200,
            max_banks,
            pressure: 12,
            loops,
        };
        let m = module(&program(seed, cfg));
        let opts = AllocOptions {
            psum_banks,
            ..AllocOptions::default()
        };
        let reference = AllocOptions {
            allocator: Allocator::BriggsReference,
            ..opts
        };
        match (allocate(&m, &opts), allocate(&m, &reference)) {
            (Ok(f), Ok(r)) => {
                assert_same(&f, &r);
                assert!(f.report.iterations >= 2, "seed {seed} spills");
                spilled += f.report.spilled.len();
            }
            (Err(f), Err(r)) => assert_eq!(f, r, "seed {seed}"),
            (f, r) => panic!("seed {seed}: {:?} / {:?}", f.err(), r.err()),
        }
    }
    assert!(spilled > 300, "{spilled} tensors spilled");
}

/// Programs too large for reference mode, big enough for fast mode to run
/// two heuristics at once: two threads and one agree byte for byte.
#[test]
fn large_programs_agree_across_fast_paths() {
    for (seed, max_banks) in [(3, 2), (4, 1)] {
        let cfg = Config {
            arch: "trn1",
            tensors: 20_000,
            max_banks,
            pressure: 12,
            loops: true,
        };
        let m = module(&program(seed, cfg));
        let run = |parallel| {
            let opts = AllocOptions {
                parallel,
                ..AllocOptions::default()
            };
            allocate(&m, &opts).expect("allocates")
        };
        let default = run(true);
        assert!(default.report.iterations >= 3);
        assert!(default.report.spilled.len() > 1000);
        assert_same(&default, &run(false));
    }
}
