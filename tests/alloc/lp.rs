//! `psum::lp`: the split-spilling 0-1 program. Its optimum, found by
//! trying every choice of idle ranges against its rows, is what
//! `--allocator exact` finds wherever the program is exact (one-bank
//! nodes, no spill code that depends on loops), and at most that where it
//! is a lower bound.

use crate::alloc_common::*;
use psum::alloc::problem;
use psum::alloc::{allocate, AllocError, AllocOptions, Allocator};
use psum::lp::{LpError, SplitLp};

/// The least cost of `lp` by trying every set of idle ranges to let go
/// against its rows of block size at most `size` (`None`: no set meets
/// them all): each row's ranges let go free the banks or blocks it needs,
/// each node with a range let go paying its save, each range let go its
/// reload.
fn brute_optimum(lp: &SplitLp, size: u32) -> Option<u64> {
    let n = lp.ranges.len();
    assert!(n <= 20, "{n} idle ranges are too many to try");
    (0u32..1 << n)
        .filter(|set| {
            (lp.rows.iter().filter(|row| row.size <= size)).all(|row| {
                let gone = row.ranges.iter().filter(|&&r| set >> r & 1 == 1);
                let freed = gone.map(|&r| row.coefficient(lp.ranges[r].banks));
                freed.sum::<u32>() >= row.need
            })
        })
        .map(|set| {
            let gone = |r: usize| set >> r & 1 == 1;
            let saves = (lp.nodes.iter())
                .filter(|v| v.ranges.clone().any(gone))
                .map(|v| v.save);
            let reloads = (0..n).filter(|&r| gone(r)).map(|r| lp.ranges[r].reload);
            saves.chain(reloads).sum()
        })
        .min()
}

#[test]
fn split_lp_optimum_is_what_exact_finds() {
    let (mut exact_programs, mut spilling) = (0, 0);
    let (mut multi_bank, mut loops, mut raised) = (0, 0, 0);
    // Seeds from 300 on: 3- and 4-bank tensors on 8 banks, where aligned
    // blocks run out before banks do.
    for seed in 0..400u64 {
        let wide = seed >= 300;
        let cfg = Config {
            arch: if wide {
                "trn1"
            } else {
                ARCHS[seed as usize % 4]
            },
            tensors: 3 + seed as usize % 8,
            max_banks: if wide {
                3 + seed as u32 % 2
            } else if seed % 3 == 1 {
                2 + seed as u32 % 2
            } else {
                1
            },
            pressure: if wide { 9 } else { 3 } + seed as usize % 5,
            loops: !wide && seed % 3 == 0,
        };
        let m = module(&program(seed, cfg));
        let o = AllocOptions {
            allocator: Allocator::Exact,
            psum_banks: Some(if wide { 8 } else { 2 + (seed as u32 % 3) }),
            ..AllocOptions::default()
        };
        let p = problem(&m, &o).unwrap();
        let lp = match SplitLp::new(&p) {
            Ok(lp) if lp.ranges.len() <= 16 => lp,
            Ok(_) => continue,
            Err(e @ LpError::Unaligned { .. }) => {
                let got = allocate(&m, &o).map(|out| out.report.spill_cost_cycles);
                assert!(got.is_err(), "seed {seed}: {e}, yet exact gives {got:?}");
                continue;
            }
            Err(LpError::Overfull { .. }) => {
                let got = allocate(&m, &o).map(|out| out.report.spill_cost_cycles);
                assert!(
                    matches!(got, Err(AllocError::TooManyReloads { .. })),
                    "seed {seed}: the held stretches overfill, exact gives {got:?}"
                );
                continue;
            }
        };
        let optimum = brute_optimum(&lp, u32::MAX);
        let by_banks = brute_optimum(&lp, 1);
        match allocate(&m, &o) {
            Ok(out) => {
                let cost = out.report.spill_cost_cycles;
                let optimum = optimum.expect("exact places, so some set fits");
                if lp.exact() {
                    assert_eq!(optimum, cost, "seed {seed}");
                    exact_programs += 1;
                    spilling += usize::from(cost > 0);
                } else {
                    assert!(optimum <= cost, "seed {seed}: {optimum} > exact {cost}");
                    multi_bank += usize::from(!lp.one_bank && optimum > 0);
                    raised += usize::from(by_banks.is_some_and(|b| b < optimum));
                    loops += usize::from(!lp.loop_free);
                }
            }
            Err(AllocError::TooManyReloads { .. }) if lp.exact() => {
                assert_eq!(optimum, None, "seed {seed}");
            }
            Err(e) => panic!("seed {seed}: {e}"),
        }
    }
    assert!(
        exact_programs > 80,
        "{exact_programs} exact programs compared"
    );
    assert!(spilling > 30, "{spilling} of them spill");
    assert!(multi_bank > 50, "{multi_bank} multi-bank programs spill");
    assert!(raised > 5, "the block rows raise {raised} bounds");
    assert!(
        loops > 50,
        "{loops} programs have spill code that depends on loops"
    );
}
