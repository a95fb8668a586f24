//! Bank timeline rendering (SPEC §8): snapshots of hand-built timelines shaped
//! like the shared examples, well-formedness of SVG and HTML, escaping, and
//! the binning that keeps large programs small.

use psum::viz::{
    html, pressure, svg, BarRole, BlockSpan, ClusterBox, LoopSpan, SpillKind, SpillMark, TensorBar,
    Timeline,
};

fn bar(name: &str, bank: u32, banks: u32, start: u32, end: u32) -> TensorBar {
    TensorBar {
        name: name.to_string(),
        bank,
        banks,
        start,
        end,
        role: BarRole::Normal,
        loc: None,
    }
}

fn cluster(label: &str, bank_lo: u32, bank_hi: u32, start: u32, end: u32) -> ClusterBox {
    ClusterBox {
        label: label.to_string(),
        bank_lo,
        bank_hi,
        start,
        end,
    }
}

fn summary(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// 01_three_tensors: a [0,4] bank 3, b [1,4] bank 2, c [2,5] banks 0-1; four
/// singleton clusters, one per matmul.
fn ex01() -> Timeline {
    let tensors = vec![
        bar("a", 3, 1, 0, 4),
        bar("b", 2, 1, 1, 4),
        bar("c", 0, 2, 2, 5),
    ];
    let after = pressure(8, tensors.iter().map(|b| (b.start, b.end, b.banks)));
    Timeline {
        title: "01_three_tensors.psum".into(),
        arch: "trn1".into(),
        num_banks: 8,
        num_points: 8,
        blocks: vec![BlockSpan {
            name: "main".into(),
            start: 0,
            end: 7,
        }],
        loops: vec![],
        tensors,
        spills: vec![],
        clusters: vec![
            cluster("cluster 0: a", 3, 3, 0, 0),
            cluster("cluster 1: b", 2, 2, 1, 1),
            cluster("cluster 2: c[0:128, 0:2048]", 0, 0, 2, 2),
            cluster("cluster 3: c[0:128, 2048:4096]", 1, 1, 3, 3),
        ],
        pressure_before: after.clone(),
        pressure_after: after,
        reuse: vec![],
        summary: summary(&[
            ("arch", "trn1"),
            ("num_banks", "8"),
            ("iterations", "1"),
            ("demand_pct", "50.00"),
            ("utilization_pct", "50.00"),
        ]),
    }
}

/// 02_one_spill after allocation: t0 saved after its matmul (point 1) and
/// reloaded before `act y0` (point 11).
fn ex02() -> Timeline {
    let mut tensors = vec![TensorBar {
        role: BarRole::Spilled,
        loc: None,
        ..bar("t0", 0, 1, 0, 1)
    }];
    for i in 1..=8u32 {
        tensors.push(bar(&format!("t{i}"), 8 - i, 1, i + 1, 10));
    }
    tensors.push(TensorBar {
        role: BarRole::Reload { of: "t0".into() },
        loc: None,
        ..bar("t0_ReloadTensorCopy1", 0, 1, 11, 12)
    });
    let after = pressure(15, tensors.iter().map(|b| (b.start, b.end, b.banks)));
    let mut clusters = vec![cluster("cluster 0: t0", 0, 0, 0, 0)];
    for i in 1..=8u32 {
        clusters.push(cluster(
            &format!("cluster {i}: t{i}"),
            8 - i,
            8 - i,
            i + 1,
            i + 1,
        ));
    }
    Timeline {
        title: "02_one_spill.psum".into(),
        arch: "trn1".into(),
        num_banks: 8,
        num_points: 15,
        blocks: vec![BlockSpan {
            name: "main".into(),
            start: 0,
            end: 14,
        }],
        loops: vec![],
        tensors,
        spills: vec![
            SpillMark {
                point: 1,
                kind: SpillKind::Save,
                tensor: "t0".into(),
                slot: "t0_SpillTensorCopy0".into(),
                bank: 0,
                banks: 1,
            },
            SpillMark {
                point: 11,
                kind: SpillKind::Reload,
                tensor: "t0_ReloadTensorCopy1".into(),
                slot: "t0_SpillTensorCopy0".into(),
                bank: 0,
                banks: 1,
            },
        ],
        clusters,
        pressure_before: vec![1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 1, 1, 0, 0],
        pressure_after: after,
        reuse: vec![],
        summary: summary(&[
            ("arch", "trn1"),
            ("num_banks", "8"),
            ("spilled", "t0"),
            ("spill_cost_cycles", "128"),
            ("iterations", "2"),
            ("best_heuristic", "0"),
            ("demand_pct", "112.50"),
            ("utilization_pct", "100.00"),
        ]),
    }
}

/// 03_column_tiles: `loop k 0..2` (header 0, end 3) around two column-tiled
/// matmuls into the partition halves of acc (bank 0); two clusters.
fn ex03() -> Timeline {
    Timeline {
        title: "03_column_tiles.psum".into(),
        arch: "trn1".into(),
        num_banks: 8,
        num_points: 6,
        blocks: vec![BlockSpan {
            name: "main".into(),
            start: 0,
            end: 5,
        }],
        loops: vec![LoopSpan {
            label: "loop k 0..2".into(),
            header: 0,
            end: 3,
            depth: 0,
        }],
        tensors: vec![bar("acc", 0, 1, 0, 4)],
        spills: vec![],
        clusters: vec![
            cluster("cluster 0: acc partitions 0-63", 0, 0, 1, 1),
            cluster("cluster 1: acc partitions 64-127", 0, 0, 2, 2),
        ],
        pressure_before: vec![1, 1, 1, 1, 1, 0],
        pressure_after: vec![1, 1, 1, 1, 1, 0],
        reuse: vec![],
        summary: summary(&[("arch", "trn1"), ("ordered_edges", "3")]),
    }
}

/// 04_gemm_k_loop: `loop k 0..4` (header 0, end 2), acc [0,3] in bank 0, one
/// cluster over the matmul.
fn ex04() -> Timeline {
    Timeline {
        title: "04_gemm_k_loop.psum".into(),
        arch: "trn1".into(),
        num_banks: 8,
        num_points: 5,
        blocks: vec![BlockSpan {
            name: "main".into(),
            start: 0,
            end: 4,
        }],
        loops: vec![LoopSpan {
            label: "loop k 0..4".into(),
            header: 0,
            end: 2,
            depth: 0,
        }],
        tensors: vec![bar("acc", 0, 1, 0, 3)],
        spills: vec![],
        clusters: vec![cluster("cluster 0: acc", 0, 0, 1, 1)],
        pressure_before: vec![1, 1, 1, 1, 0],
        pressure_after: vec![1, 1, 1, 1, 0],
        reuse: vec![],
        summary: summary(&[("arch", "trn1"), ("iterations", "1")]),
    }
}

/// Two blocks, nested loops, a gen1 (4-bank) program, and names that need escaping.
fn nested() -> Timeline {
    let tensors = vec![
        bar("x<&>\"'", 0, 2, 1, 9),
        bar("acc.0", 2, 1, 3, 6),
        bar("acc.1", 3, 1, 12, 18),
    ];
    let after = pressure(20, tensors.iter().map(|b| (b.start, b.end, b.banks)));
    Timeline {
        title: "nested <loops> & \"blocks\"".into(),
        arch: "inf1".into(),
        num_banks: 4,
        num_points: 20,
        blocks: vec![
            BlockSpan {
                name: "first".into(),
                start: 0,
                end: 10,
            },
            BlockSpan {
                name: "second".into(),
                start: 11,
                end: 19,
            },
        ],
        loops: vec![
            LoopSpan {
                label: "loop i 0..2".into(),
                header: 2,
                end: 8,
                depth: 0,
            },
            LoopSpan {
                label: "loop j 0..3".into(),
                header: 3,
                end: 6,
                depth: 1,
            },
        ],
        tensors,
        spills: vec![],
        clusters: vec![cluster("cluster <0>", 2, 3, 4, 14)],
        pressure_before: vec![],
        pressure_after: after,
        reuse: vec![],
        summary: summary(&[("note", "a < b & c")]),
    }
}

#[test]
fn snapshot_01_three_tensors() {
    insta::assert_snapshot!(svg(&ex01()));
}

#[test]
fn snapshot_02_one_spill() {
    insta::assert_snapshot!(svg(&ex02()));
}

#[test]
fn snapshot_03_column_tiles() {
    insta::assert_snapshot!(svg(&ex03()));
}

#[test]
fn snapshot_04_gemm_k_loop() {
    insta::assert_snapshot!(svg(&ex04()));
}

#[test]
fn snapshot_04_html() {
    insta::assert_snapshot!(html(&ex04()));
}

/// Parses `doc` as XML and returns the tree's text, failing on malformed markup.
fn parse(doc: &str) -> roxmltree::Document<'_> {
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    roxmltree::Document::parse_with_options(doc, opts)
        .unwrap_or_else(|e| panic!("malformed XML: {e}"))
}

#[test]
fn svg_and_html_are_well_formed() {
    for t in [ex01(), ex02(), ex03(), ex04(), nested()] {
        let s = svg(&t);
        let doc = parse(&s);
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        let h = html(&t);
        let doc = parse(&h);
        assert_eq!(doc.root_element().tag_name().name(), "html");
    }
}

/// Every `<title>` text of the SVG, in document order.
fn titles(s: &str) -> Vec<String> {
    let doc = parse(s);
    doc.descendants()
        .filter(|n| n.has_tag_name("title"))
        .map(|n| n.text().unwrap_or("").to_string())
        .collect()
}

#[test]
fn names_are_escaped_and_round_trip() {
    let t = nested();
    let s = svg(&t);
    assert!(!s.contains("x<&>"));
    let doc = parse(&s);
    let texts: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .collect();
    assert_eq!(texts[0], "nested <loops> & \"blocks\"");
    assert!(texts.contains(&"x<&>\"'"));
    let ts = titles(&s);
    assert!(ts.contains(
        &"x<&>\"'\nbanks 0-1 (2 banks)\ninterval [1, 9]\npeak live banks in interval: 3 of 4"
            .to_string()
    ));
    assert!(ts.contains(&"cluster <0>\nbanks 2-3, points 4-14".to_string()));
    let h = html(&t);
    let doc = parse(&h);
    let cells: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("td"))
        .filter_map(|n| n.text())
        .collect();
    assert!(cells.contains(&"a < b & c"));
}

#[test]
fn tooltips_name_tensor_banks_interval_and_spill_copies() {
    let ts = titles(&svg(&ex02()));
    assert!(ts.contains(
        &"t0 (spilled: drawn up to its save)\nbanks 0 (1 bank)\ninterval [0, 1]\npeak live banks in interval: 1 of 8"
            .to_string()
    ));
    assert!(ts.contains(
        &"t0_ReloadTensorCopy1 (reload of t0)\nbanks 0 (1 bank)\ninterval [11, 12]\npeak live banks in interval: 1 of 8"
            .to_string()
    ));
    assert!(ts.contains(&"save t0 to t0_SpillTensorCopy0 at point 1".to_string()));
    assert!(ts
        .contains(&"reload t0_ReloadTensorCopy1 from t0_SpillTensorCopy0 at point 11".to_string()));
    assert!(ts.contains(
        &"t1\nbanks 7 (1 bank)\ninterval [2, 10]\npeak live banks in interval: 8 of 8".to_string()
    ));
}

#[test]
fn output_is_deterministic() {
    assert_eq!(svg(&ex02()), svg(&ex02()));
    assert_eq!(html(&nested()), html(&nested()));
}

/// A synthetic program of `n` one-bank tensors, each live for 3 points,
/// round-robin over 8 banks, with a spill every 50 tensors.
fn synthetic(n: u32) -> Timeline {
    let num_points = n + 2;
    let tensors: Vec<TensorBar> = (0..n)
        .map(|i| bar(&format!("t{i}"), i % 8, 1, i, i + 2))
        .collect();
    let spills = (0..n)
        .step_by(50)
        .map(|i| SpillMark {
            point: i + 1,
            kind: SpillKind::Save,
            tensor: format!("t{i}"),
            slot: format!("t{i}_SpillTensorCopy{i}"),
            bank: i % 8,
            banks: 1,
        })
        .collect();
    let clusters = (0..n)
        .map(|i| cluster(&format!("cluster {i}"), i % 8, i % 8, i, i))
        .collect();
    let loops = (0..n / 10)
        .map(|i| LoopSpan {
            label: format!("loop l{i} 0..2"),
            header: 10 * i,
            end: 10 * i + 9,
            depth: 0,
        })
        .collect();
    let after = pressure(
        num_points,
        tensors.iter().map(|b| (b.start, b.end, b.banks)),
    );
    Timeline {
        title: format!("synthetic {n}"),
        arch: "trn1".into(),
        num_banks: 8,
        num_points,
        blocks: vec![BlockSpan {
            name: "main".into(),
            start: 0,
            end: num_points - 1,
        }],
        loops,
        tensors,
        spills,
        clusters,
        pressure_before: after.clone(),
        pressure_after: after,
        reuse: vec![],
        summary: vec![],
    }
}

#[test]
fn large_program_is_binned_and_small() {
    let t = synthetic(100_000);
    let s = svg(&t);
    assert!(s.len() < 5_000_000, "svg is {} bytes", s.len());
    let h = html(&t);
    assert!(h.len() < 5_000_000, "html is {} bytes", h.len());
    let doc = parse(&s);
    let merged = doc
        .descendants()
        .filter(|n| n.attribute("id") == Some("tensors"))
        .flat_map(|g| g.children())
        .filter(|n| n.attribute("class") == Some("m"))
        .count();
    // Every lane is occupied throughout: one merged run per bank.
    assert_eq!(merged, 8);
    let notes: Vec<&str> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("s"))
        .filter_map(|n| n.text())
        .collect();
    assert_eq!(
        notes[1..],
        [
            "binned: 51 points per column; the pressure curves show each column's maximum",
            "100000 tensors narrower than 3 px are merged per bank lane (grey)",
            "not outlined (too narrow or too deep): 100000 clusters, 10000 loops",
        ]
    );
    // Saves on one bank 2.4 px apart merge into one strip per bank.
    let strips: Vec<&str> = doc
        .descendants()
        .filter(|n| n.attribute("id") == Some("spills"))
        .flat_map(|g| g.children())
        .filter(|n| n.is_element())
        .map(|n| n.first_child().and_then(|c| c.text()).unwrap_or(""))
        .collect();
    assert_eq!(
        strips,
        [
            "500 saves at points 1-99801, the first: save t0 to t0_SpillTensorCopy0 at point 1",
            "500 saves at points 51-99851, the first: save t50 to t50_SpillTensorCopy50 at point 51",
            "500 saves at points 101-99901, the first: save t100 to t100_SpillTensorCopy100 at point 101",
            "500 saves at points 151-99951, the first: save t150 to t150_SpillTensorCopy150 at point 151",
        ]
    );
}

#[test]
fn unbinned_program_draws_each_wide_bar() {
    let t = synthetic(300);
    let doc_s = svg(&t);
    let doc = parse(&doc_s);
    let bars = doc
        .descendants()
        .filter(|n| {
            n.has_tag_name("rect")
                && n.attribute("fill").is_some_and(|f| f.starts_with('#'))
                && n.parent().is_some_and(|p| {
                    p.has_tag_name("g")
                        && p.parent()
                            .is_some_and(|g| g.attribute("id") == Some("tensors"))
                })
        })
        .count();
    assert_eq!(bars, 300);
    assert!(!doc_s.contains("binned:"));
}

#[test]
#[ignore = "writes the example pages to target/viz-examples for scripts/screenshot.sh"]
fn write_example_pages() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/viz-examples");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, t) in [
        ("01", ex01()),
        ("02", ex02()),
        ("03", ex03()),
        ("04", ex04()),
        ("nested", nested()),
        ("synthetic", synthetic(100_000)),
        ("synthetic300", synthetic(300)),
    ] {
        std::fs::write(dir.join(format!("{name}.html")), html(&t)).unwrap();
        std::fs::write(dir.join(format!("{name}.svg")), svg(&t)).unwrap();
    }
}
