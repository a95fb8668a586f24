//! `psum::bound` against brute force on small random instances.

use proptest::prelude::*;
use psum::alloc::AllocOptions;
use psum::alloc::{problem, Interval};
use psum::bound::{bounds, min_spills_one_bank, peak_demand, Peak};

fn iv(start: u32, end: u32, banks: u32) -> Interval {
    Interval { start, end, banks }
}

/// Banks live at point `p`.
fn demand_at(ivs: &[Interval], p: u32) -> u32 {
    ivs.iter()
        .filter(|i| i.start <= p && p <= i.end)
        .map(|i| i.banks)
        .sum()
}

fn brute_peak(ivs: &[Interval]) -> Peak {
    let last = ivs.iter().map(|i| i.end).max();
    let mut peak = Peak {
        banks: 0,
        point: None,
    };
    for p in 0..=last.unwrap_or(0) {
        let d = demand_at(ivs, p);
        if d > peak.banks {
            peak = Peak {
                banks: d,
                point: Some(p),
            };
        }
    }
    peak
}

/// Fewest intervals to drop so no point is covered more than `k` times.
fn brute_min_spills(ivs: &[Interval], k: u32) -> usize {
    (0u32..1 << ivs.len())
        .filter(|mask| {
            let kept: Vec<Interval> = (0..ivs.len())
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| ivs[i])
                .collect();
            brute_peak(&kept).banks <= k
        })
        .map(|mask| ivs.len() - mask.count_ones() as usize)
        .min()
        .expect("the empty subset always fits")
}

fn intervals(max_banks: u32) -> impl Strategy<Value = Vec<Interval>> {
    prop::collection::vec((0u32..24, 0u32..10, 1..=max_banks), 0..12)
        .prop_map(|v| v.into_iter().map(|(s, len, b)| iv(s, s + len, b)).collect())
}

proptest! {
    #![proptest_config(crate::props_config::config(400, "tests/proptest-regressions/alloc/bound.txt"))]

    #[test]
    fn peak_matches_brute_force(ivs in intervals(4)) {
        prop_assert_eq!(peak_demand(&ivs), brute_peak(&ivs));
    }

    #[test]
    fn min_spills_matches_brute_force(ivs in intervals(1), k in 1u32..5) {
        let spilled = min_spills_one_bank(&ivs, k).expect("all one-bank");
        prop_assert_eq!(spilled.len(), brute_min_spills(&ivs, k));
        let kept: Vec<Interval> = (0..ivs.len())
            .filter(|i| spilled.binary_search(i).is_err())
            .map(|i| ivs[i])
            .collect();
        prop_assert!(peak_demand(&kept).banks <= k);
    }
}

#[test]
fn closed_intervals_touching_at_a_point_overlap() {
    let ivs = [iv(0, 3, 1), iv(3, 5, 2), iv(6, 9, 4)];
    assert_eq!(
        peak_demand(&ivs),
        Peak {
            banks: 4,
            point: Some(6)
        }
    );
    assert_eq!(
        peak_demand(&ivs[..2]),
        Peak {
            banks: 3,
            point: Some(3)
        }
    );
    assert_eq!(
        peak_demand(&[]),
        Peak {
            banks: 0,
            point: None
        }
    );
}

#[test]
fn start_only_check_is_not_enough() {
    // Kept [5,6] lies inside [1,10]: nothing kept is live at 1, yet keeping
    // [1,10] would cover point 5 twice on one bank. The optimum keeps one of
    // the nested pair and spills the long one.
    let ivs = [iv(1, 10, 1), iv(5, 6, 1), iv(11, 12, 1)];
    assert_eq!(min_spills_one_bank(&ivs, 1), Some(vec![0]));
}

#[test]
fn earliest_end_beats_earliest_start() {
    // Two banks; a long interval starting first blocks two short ones.
    let ivs = [
        iv(0, 20, 1),
        iv(1, 4, 1),
        iv(2, 5, 1),
        iv(6, 9, 1),
        iv(7, 10, 1),
    ];
    assert_eq!(min_spills_one_bank(&ivs, 2), Some(vec![0]));
    assert_eq!(min_spills_one_bank(&ivs, 3), Some(vec![]));
    assert_eq!(min_spills_one_bank(&ivs, 1), Some(vec![0, 2, 4]));
}

#[test]
fn multi_bank_nodes_have_no_exact_bound() {
    assert_eq!(min_spills_one_bank(&[iv(0, 1, 1), iv(0, 1, 2)], 8), None);
}

fn module(src: &str) -> psum::ir::Module {
    psum::text::parse(src).unwrap().module
}

#[test]
fn one_spill_example_needs_exactly_one_spill() {
    let m = module(include_str!("../../examples/02_one_spill.psum"));
    let p = problem(&m, &AllocOptions::default()).unwrap();
    let r = bounds(&p);
    assert_eq!(
        (r.nodes, r.peak_demand, r.peak_point, r.min_spills),
        (9, 9, Some(8), Some(1))
    );
    assert_eq!(r.spill_set, Some(vec!["t0".to_string()]));
    assert_eq!(
        r.render(),
        "peak demand: 9 banks at point 8 (9 nodes, 8 banks available)\n\
         minimum spills: 1 (for example t0)\n\
         minimum spill cost: 128 cycles\nminimum split spill cost: at least 128 cycles\n"
    );
    let four = AllocOptions {
        psum_banks: Some(4),
        ..AllocOptions::default()
    };
    assert_eq!(bounds(&problem(&m, &four).unwrap()).min_spills, Some(5));
    let nine = AllocOptions {
        psum_banks: Some(9),
        ..AllocOptions::default()
    };
    assert_eq!(
        problem(&m, &nine).unwrap_err().to_string(),
        "--psum-banks 9 is out of range 1..=8"
    );
}

#[test]
fn multi_bank_example_has_peak_but_no_exact_spill_bound() {
    let m = module(include_str!("../../examples/01_three_tensors.psum"));
    let r = bounds(&problem(&m, &AllocOptions::default()).unwrap());
    assert_eq!(
        (r.peak_demand, r.peak_point, r.min_spills),
        (4, Some(2), None)
    );
    assert_eq!(
        r.render(),
        "peak demand: 4 banks at point 2 (3 nodes, 8 banks available)\n\
         minimum spills: not computed (exact only when every node holds one bank)\n"
    );
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "arch": "trn1", "num_banks": 8, "nodes": 3, "peak_demand": 4,
            "peak_point": 2, "min_spills": null, "spill_set": null,
            "min_spill_cost_cycles": null,
            "min_split_cost_cycles": null
        })
    );
}

#[test]
fn problem_uses_memloc_pieces_and_loop_extension() {
    let m = module(
        "arch trn1\n\
         psum t [128, 2048]\n\
         sbuf w [128, 4096] bf16\n\
         sbuf x [128, 8192] bf16\n\
         sbuf y [128, 2048]\n\
         block main {\n\
           loop k 0..4 {\n\
             matmul t <- w[0:128, k*1024 : k*1024+256], x[0:128, k*2048 : k*2048+1024]\n\
           }\n\
           act y <- t\n\
           matmul t <- w[0:128, 0:256], x[0:128, 0:1024]\n\
           act y <- y, t\n\
         }\n",
    );
    let p = problem(&m, &AllocOptions::default()).unwrap();
    let got: Vec<(&str, u32, u32, u32)> = p
        .buffers
        .iter()
        .map(|b| {
            (
                b.id.as_str(),
                b.interval.start,
                b.interval.end,
                b.interval.banks,
            )
        })
        .collect();
    assert_eq!(got, vec![("t.0", 0, 3, 1), ("t.1", 4, 5, 1)]);
    assert_eq!(bounds(&p).min_spills, Some(0));
    assert_eq!(
        bounds(&p).render(),
        "peak demand: 1 banks at point 0 (2 nodes, 8 banks available)\n\
         minimum spills: 0 (every node fits without spilling)\n\
         minimum spill cost: 0 cycles\nminimum split spill cost: at least 0 cycles\n"
    );
}

/// On the shipped random example the split bound lies above the
/// whole-tensor cost bound and within 2% of exact: its rounds move the
/// shares of each save onto the ranges that go.
#[test]
fn split_bound_on_the_random_example_is_close_to_exact() {
    let m = module(include_str!("../../examples/gen_random.psum"));
    let r = bounds(&problem(&m, &AllocOptions::default()).unwrap());
    assert_eq!(
        (r.min_spill_cost_cycles, r.min_split_cost_cycles),
        (Some(960), Some(1071))
    );
    let exact = AllocOptions {
        allocator: psum::alloc::Allocator::Exact,
        ..AllocOptions::default()
    };
    let out = psum::alloc::allocate(&m, &exact).unwrap();
    assert_eq!(out.report.spill_cost_cycles, 1088);
}
