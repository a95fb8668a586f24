//! The bank timeline of real allocations of the shared examples (SPEC §8
//! over SPEC §3): points, bars, spill marks and pressure curves, rendered
//! to well-formed SVG and HTML.

use psum::alloc::{allocate, AllocOptions};
use psum::pipeline::{compile, CompileOptions};
use psum::viz::{html, svg, BarRole, LoopSpan, SpillKind, Timeline};

fn timeline(file: &str) -> Timeline {
    let path = format!("{}/examples/{file}", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(&path).unwrap();
    let module = psum::text::parse(&src).unwrap().module;
    let outcome = allocate(&module, &AllocOptions::default()).unwrap();
    Timeline::from_alloc(file, &module, &outcome)
}

/// The timeline of the compiled example, with its accumulation clusters.
fn compiled(file: &str) -> Timeline {
    let path = format!("{}/examples/{file}", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(&path).unwrap();
    let module = psum::text::parse(&src).unwrap().module;
    let opts = CompileOptions {
        verify: false,
        ..Default::default()
    };
    let c = compile(&module, &opts).unwrap();
    Timeline::from_compiled(file, &module, &c)
}

/// `(label, bank_lo, bank_hi, start, end)` of each cluster.
fn clusters(t: &Timeline) -> Vec<(&str, u32, u32, u32, u32)> {
    t.clusters
        .iter()
        .map(|c| (c.label.as_str(), c.bank_lo, c.bank_hi, c.start, c.end))
        .collect()
}

/// `(name, bank, banks, start, end)` of each bar.
fn bars(t: &Timeline) -> Vec<(&str, u32, u32, u32, u32)> {
    t.tensors
        .iter()
        .map(|b| (b.name.as_str(), b.bank, b.banks, b.start, b.end))
        .collect()
}

#[test]
fn three_tensors() {
    let t = timeline("01_three_tensors.psum");
    assert_eq!((t.num_banks, t.num_points), (8, 8));
    assert_eq!(
        bars(&t),
        [("a", 3, 1, 0, 4), ("b", 2, 1, 1, 4), ("c", 0, 2, 2, 5)]
    );
    assert_eq!(t.pressure_after, [1, 2, 4, 4, 4, 2, 0, 0]);
    assert_eq!(t.pressure_before, t.pressure_after);
    assert!(t.spills.is_empty() && t.loops.is_empty());
}

#[test]
fn one_spill() {
    let t = timeline("02_one_spill.psum");
    assert_eq!(t.num_points, 15);
    let b = bars(&t);
    assert_eq!(b[0], ("t0", 0, 1, 0, 1));
    assert_eq!(t.tensors[0].role, BarRole::Spilled);
    let reload = t
        .tensors
        .iter()
        .find(|b| b.name == "t0_ReloadTensorCopy1")
        .unwrap();
    assert_eq!((reload.bank, reload.start, reload.end), (0, 11, 12));
    assert_eq!(reload.role, BarRole::Reload { of: "t0".into() });
    let marks: Vec<_> = t
        .spills
        .iter()
        .map(|m| (m.point, m.kind, m.tensor.as_str(), m.slot.as_str(), m.bank))
        .collect();
    assert_eq!(
        marks,
        [
            (1, SpillKind::Save, "t0", "t0_SpillTensorCopy0", 0),
            (
                11,
                SpillKind::Reload,
                "t0_ReloadTensorCopy1",
                "t0_SpillTensorCopy0",
                0
            ),
        ]
    );
    assert_eq!(
        t.pressure_before,
        [1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 1, 1, 0, 0]
    );
    assert_eq!(
        t.pressure_after,
        [1, 1, 1, 2, 3, 4, 5, 6, 7, 8, 8, 1, 1, 0, 0]
    );
}

#[test]
fn gemm_k_loop() {
    let t = timeline("04_gemm_k_loop.psum");
    assert_eq!(t.num_points, 5);
    assert_eq!(
        t.loops,
        [LoopSpan {
            label: "loop k 0..4".into(),
            header: 0,
            end: 2,
            depth: 0
        }]
    );
    assert_eq!(bars(&t), [("acc", 0, 1, 0, 3)]);
}

/// 03: the two partition halves of bank 0 are two clusters, each the two
/// copies of one matmul of the loop (points 1 and 2).
#[test]
fn column_tiles_have_two_clusters() {
    let t = compiled("03_column_tiles.psum");
    assert_eq!(
        clusters(&t),
        [
            ("cluster 0: 1 group, 2 matmuls, partitions 0-63", 0, 0, 1, 1),
            (
                "cluster 1: 1 group, 2 matmuls, partitions 64-127",
                0,
                0,
                2,
                2
            ),
        ]
    );
    let mut plain = t.clone();
    plain.clusters.clear();
    assert_eq!(plain, timeline("03_column_tiles.psum"));
}

/// 04: the four copies of the K-loop matmul form one cluster at point 1.
#[test]
fn gemm_k_loop_has_one_cluster() {
    let t = compiled("04_gemm_k_loop.psum");
    assert_eq!(
        clusters(&t),
        [(
            "cluster 0: 1 group, 4 matmuls, partitions 0-127",
            0,
            0,
            1,
            1
        )]
    );
}

/// 01: every cluster is a single matmul, which its bar already shows.
#[test]
fn single_matmul_clusters_are_not_outlined() {
    assert_eq!(clusters(&compiled("01_three_tensors.psum")), []);
}

/// The pictures of the compiled shared examples, as `psum viz` draws them.
#[test]
fn snapshot_compiled_examples() {
    for (name, file) in [
        ("compiled_01_svg", "01_three_tensors.psum"),
        ("compiled_02_svg", "02_one_spill.psum"),
        ("compiled_03_svg", "03_column_tiles.psum"),
        ("compiled_04_svg", "04_gemm_k_loop.psum"),
    ] {
        insta::assert_snapshot!(name, svg(&compiled(file)));
    }
    insta::assert_snapshot!("compiled_03_html", html(&compiled("03_column_tiles.psum")));
}

#[test]
fn every_example_renders_well_formed() {
    for f in [
        "01_three_tensors.psum",
        "02_one_spill.psum",
        "03_column_tiles.psum",
        "04_gemm_k_loop.psum",
    ] {
        let t = timeline(f);
        roxmltree::Document::parse(&svg(&t)).unwrap();
        let opts = roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        };
        roxmltree::Document::parse_with_options(&html(&t), opts).unwrap();
    }
}

/// Random programs: one bar per placed tensor, a mark per spill copy (one
/// save per spilled tensor), and the after curve within the bank count.
#[test]
fn random_programs_build_consistent_timelines() {
    use psum::gen::random::{program, RandomConfig};
    let cfg = RandomConfig {
        tensors: 14,
        ..RandomConfig::rich()
    };
    for seed in 0..40 {
        let module = program(seed, &cfg).unwrap();
        let Ok(outcome) = allocate(&module, &AllocOptions::default()) else {
            continue;
        };
        let t = Timeline::from_alloc("random", &module, &outcome);
        let placed = outcome
            .report
            .tensors
            .iter()
            .filter(|r| r.bank.is_some())
            .count();
        assert_eq!(t.tensors.len(), placed, "seed {seed}");
        let saves = t
            .spills
            .iter()
            .filter(|m| m.kind == SpillKind::Save)
            .count();
        assert_eq!(saves, outcome.report.spilled.len(), "seed {seed}");
        assert!(
            t.pressure_after.iter().all(|&v| v <= t.num_banks),
            "seed {seed}"
        );
        assert_eq!(
            t.pressure_before.len(),
            t.num_points as usize,
            "seed {seed}"
        );
        roxmltree::Document::parse(&svg(&t)).unwrap();
    }
}

/// `(bank, from, to, avoidable, edges, slack)` of each reuse arrow.
fn arrows(t: &Timeline) -> Vec<(u32, u32, u32, bool, u32, u32)> {
    t.reuse
        .iter()
        .map(|a| (a.bank, a.from, a.to, a.avoidable, a.edges, a.slack))
        .collect()
}

#[test]
fn reuse_edges_are_drawn_between_points_of_the_allocated_program() {
    // t8 takes bank 0 after t0's save (point 1 to point 9, seven matmuls
    // between), the reload after t8's read: all eight banks are busy.
    let t = compiled("02_one_spill.psum");
    assert_eq!(
        arrows(&t),
        [(0, 1, 9, false, 1, 7), (0, 10, 11, false, 1, 0)]
    );
    // attention: s and pT alternate in bank 1 (8 edges s→pT, 7 pT→s, the
    // least across g with the four PV matmuls between), o follows itself in
    // bank 0 once per q; six banks stay free, so every edge is avoidable.
    let t = compiled("gen_attention.psum");
    assert_eq!(
        arrows(&t),
        [
            (0, 16, 13, true, 3, 8),
            (1, 7, 9, true, 8, 0),
            (1, 11, 6, true, 7, 4)
        ]
    );
    let doc = svg(&t);
    assert_eq!(doc.matches("<path class=\"ra\" marker-end").count(), 3);
    assert!(doc.contains("avoidable reuse: bank 1, point 11 to point 6, 7 edges, least slack 4"));
}
