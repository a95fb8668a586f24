//! Legalization of accumulation groups (SPEC §4.3) on hand-checked programs:
//! flags, zero regions, inserted memsets, ordered edges and the report.

use crate::matmul_common;

use matmul_common::{arch, flags, legalize, lines, parse, set_banks, try_legalize};
use psum::matmul::{analyze, legalize_program, MatmulError, PartitionMode};

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|&(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn example_01_four_singleton_clusters() {
    let mut m = parse(include_str!("../../examples/01_three_tensors.psum"));
    set_banks(&mut m, &[("c", 0), ("b", 2), ("a", 3)]);
    let (out, r) = try_legalize(&m).unwrap();
    assert_eq!(
        lines(&out),
        [
            "%0: matmul a <- w, x[0:128, 0:1024] flags=start|stop zr=2",
            "%1: matmul b <- w, x[0:128, 1024:2048] flags=start|stop zr=2",
            "%2: matmul c[0:128, 0:2048] <- w, x[0:128, 2048:3072] flags=start|stop zr=2",
            "%3: matmul c[0:128, 2048:4096] <- w, x[0:128, 3072:4096] flags=start|stop zr=2",
            "%4: act y <- a, b",
            "%5: act z <- c[0:128, 0:2048], c[0:128, 2048:4096]",
            "%6: dma out[0:128, 0:2048] <- y",
            "%7: dma out[0:128, 2048:4096] <- z",
        ]
    );
    assert_eq!((r.groups, r.clusters.len(), r.memsets_inserted), (4, 4, 0));
    assert!(r.ordered_edges.is_empty());
    assert_eq!(
        r.isa_acc_byte,
        Some(vec![
            ("0".to_string(), 3),
            ("1".to_string(), 3),
            ("2".to_string(), 3),
            ("3".to_string(), 3)
        ])
    );
}

#[test]
fn example_03_column_tiles() {
    let mut m = parse(include_str!("../../examples/03_column_tiles.psum"));
    set_banks(&mut m, &[("acc", 0)]);
    let (out, r) = try_legalize(&m).unwrap();
    assert_eq!(
        lines(&out),
        [
            "%0: matmul acc[0:64, 0:2048] <- w[0:128, 0:128], x[0:128, 0:1024] flags=start zr=1",
            "%1: matmul acc[64:128, 0:2048] <- w[0:128, 128:256], x[0:128, 0:1024] pos=0,64 flags=start zr=1 after=%0",
            "%2: matmul acc[0:64, 0:2048] <- w[0:128, 256:384], x[0:128, 1024:2048] flags=stop zr=0 after=%1",
            "%3: matmul acc[64:128, 0:2048] <- w[0:128, 384:512], x[0:128, 1024:2048] pos=0,64 flags=stop zr=0 after=%2",
            "%4: act y <- acc",
            "%5: dma out <- y",
        ]
    );
    assert_eq!(
        r.ordered_edges,
        pairs(&[("1", "0"), ("2", "1"), ("3", "2")])
    );
    assert_eq!((r.groups, r.clusters.len(), r.memsets_inserted), (2, 2, 0));
    let an = analyze(&out, &arch(&out)).unwrap();
    assert_eq!(an.groups[0].partitions, (0, 63));
    assert_eq!(an.groups[1].partitions, (64, 127));
    assert!(an.groups.iter().all(|g| g.mode == PartitionMode::ColGroup));
}

const CHAIN_DECLS: &str = "
psum acc [128, 2048] bank=0
sbuf w [128, 2048] bf16
sbuf x [128, 8192] bf16
sbuf y [128, 2048]
dram out [128, 2048]
";

fn chain_program(arch: &str, prologue: &str, trip: u32) -> String {
    format!(
        "arch {arch}\n{CHAIN_DECLS}
block main {{
  {prologue}
  loop k 0..{trip} {{
    %mm: matmul acc <- w[0:128, k*256:k*256+256], x[0:128, k*1024:k*1024+1024]
  }}
  act y <- acc
  dma out <- y
}}
"
    )
}

#[test]
fn k_chain_of_eight_in_one_bank() {
    let (out, r) = legalize(&chain_program("trn1", "", 8));
    let l = lines(&out);
    assert_eq!(
        l[0],
        "%mm.0: matmul acc <- w[0:128, 0:256], x[0:128, 0:1024] flags=start zr=2"
    );
    for (k, line) in l.iter().enumerate().take(7).skip(1) {
        assert_eq!(
            *line,
            format!(
                "%mm.{k}: matmul acc <- w[0:128, {}:{}], x[0:128, {}:{}] flags=none zr=0",
                k * 256,
                k * 256 + 256,
                k * 1024,
                k * 1024 + 1024
            )
        );
    }
    assert_eq!(
        l[7],
        "%mm.7: matmul acc <- w[0:128, 1792:2048], x[0:128, 7168:8192] flags=stop zr=0"
    );
    assert_eq!(l[8..], ["%8: act y <- acc", "%9: dma out <- y"]);
    assert_eq!((r.groups, r.clusters.len(), r.memsets_inserted), (1, 1, 0));
    let isa: Vec<u8> = r
        .isa_acc_byte
        .unwrap()
        .into_iter()
        .map(|(_, b)| b)
        .collect();
    assert_eq!(isa, [1, 0, 0, 0, 0, 0, 0, 2]);
}

#[test]
fn chain_after_memset_on_trn1_accumulates_without_start() {
    let (out, r) = legalize(&chain_program("trn1", "memset acc = 0", 3));
    assert_eq!(
        lines(&out),
        [
            "%0: memset acc = 0",
            "%mm.0: matmul acc <- w[0:128, 0:256], x[0:128, 0:1024] flags=none zr=2",
            "%mm.1: matmul acc <- w[0:128, 256:512], x[0:128, 1024:2048] flags=none zr=0",
            "%mm.2: matmul acc <- w[0:128, 512:768], x[0:128, 2048:3072] flags=stop zr=0",
            "%4: act y <- acc",
            "%5: dma out <- y",
        ]
    );
    assert_eq!(r.memsets_inserted, 0);
    let an = analyze(&out, &arch(&out)).unwrap();
    assert_eq!(an.groups[0].init, Some(0));
}

#[test]
fn chain_after_memset_on_core_v4_is_all_acc() {
    let (_, r) = legalize(&chain_program("core_v4", "memset acc = 0", 3));
    assert_eq!(
        flags(&r),
        pairs(&[("mm.0", "acc"), ("mm.1", "acc"), ("mm.2", "acc|stop")])
    );
    assert_eq!(
        r.isa_acc_byte
            .unwrap()
            .into_iter()
            .map(|(_, b)| b)
            .collect::<Vec<_>>(),
        [4, 4, 6]
    );
    assert_eq!(r.memsets_inserted, 0);
}

#[test]
fn chain_without_init_on_core_v4_starts() {
    let (_, r) = legalize(&chain_program("core_v4", "", 2));
    assert_eq!(flags(&r), pairs(&[("mm.0", "start"), ("mm.1", "stop")]));
}

const SLICE_DECLS: &str = "arch trn1

psum acc [128, 2048] bank=0
sbuf w [128, 1024] bf16
sbuf x [128, 4096] bf16
sbuf y [128, 2048]
dram out [128, 2048]
";

/// Four 128-column slices of one bank, each accumulated over K = 4.
fn slices(outer: &str, inner: &str) -> String {
    format!(
        "{SLICE_DECLS}
block main {{
  loop {outer} 0..4 {{
    loop {inner} 0..4 {{
      %s: matmul acc[0:128, n*512:n*512+512] <- w[0:128, k*256:k*256+256], x[0:128, n*1024+k*256:n*1024+k*256+256]
    }}
  }}
  act y <- acc
  dma out <- y
}}
"
    )
}

fn expected_slice_flags(first: &str, last: &str) -> Vec<(String, String)> {
    let mut v = Vec::new();
    for a in 0..4 {
        for b in 0..4 {
            let l = format!("s.{a}.{b}");
            let f = if l == first {
                "start"
            } else if l == last {
                "stop"
            } else {
                "none"
            };
            v.push((l, f.to_string()));
        }
    }
    v
}

#[test]
fn four_slices_accumulated_in_sequence_form_one_cluster() {
    let (out, r) = legalize(&slices("n", "k"));
    assert_eq!(flags(&r), expected_slice_flags("s.0.0", "s.3.3"));
    assert_eq!((r.groups, r.clusters.len(), r.memsets_inserted), (4, 1, 0));
    let l = lines(&out);
    assert_eq!(
        l[0],
        "%s.0.0: matmul acc[0:128, 0:512] <- w[0:128, 0:256], x[0:128, 0:256] flags=start zr=2"
    );
    assert!(l[1..16].iter().all(|s| s.ends_with(" zr=0")));
}

#[test]
fn four_slices_interleaved_form_one_cluster() {
    let (out, r) = legalize(&slices("k", "n"));
    assert_eq!(flags(&r), expected_slice_flags("s.0.0", "s.3.3"));
    assert_eq!((r.groups, r.clusters.len(), r.memsets_inserted), (4, 1, 0));
    let an = analyze(&out, &arch(&out)).unwrap();
    let heads: Vec<usize> = an.groups.iter().map(|g| g.head()).collect();
    assert_eq!(heads, [0, 1, 2, 3]);
    assert!(an.groups[0].is_index_overlap(&an.groups[3]));
}

#[test]
fn two_tensors_reusing_one_bank_are_two_clusters() {
    let src = "arch trn1

psum t1 [128, 2048] bank=0
psum t2 [128, 2048] bank=0
sbuf w [128, 1024] bf16
sbuf x [128, 8192] bf16
sbuf y1 [128, 2048]
sbuf y2 [128, 2048]

block main {
  %a0: matmul t1 <- w[0:128, 0:256], x[0:128, 0:1024]
  %a1: matmul t1 <- w[0:128, 256:512], x[0:128, 1024:2048]
  act y1 <- t1
  %b0: matmul t2 <- w[0:128, 512:768], x[0:128, 2048:3072]
  %b1: matmul t2 <- w[0:128, 768:1024], x[0:128, 3072:4096]
  act y2 <- t2
}
";
    let (_, r) = legalize(src);
    assert_eq!(
        flags(&r),
        pairs(&[
            ("a0", "start"),
            ("a1", "stop"),
            ("b0", "start"),
            ("b1", "stop")
        ])
    );
    assert_eq!((r.groups, r.clusters.len(), r.memsets_inserted), (2, 2, 0));
}

const SPLIT_DECLS: &str = "arch trn1

psum acc [128, 2048] bank=0
sbuf w [128, 512] bf16
sbuf x [128, 1024] bf16
sbuf s [128, 1024]
sbuf z [128, 512]
sbuf y [128, 2048]
dram out [128, 2048]
";

#[test]
fn group_written_since_cluster_head_gets_a_memset() {
    let src = format!(
        "{SPLIT_DECLS}
block main {{
  loop k 0..2 {{
    %a: matmul acc[0:128, 0:1024] <- w[0:128, k*256:k*256+256], x[0:128, k*512:k*512+512]
  }}
  %c: copy acc[0:128, 1024:1536] <- s[0:128, 0:512]
  %r: act z <- acc[0:128, 1024:1536]
  loop k 0..2 {{
    %b: matmul acc[0:128, 1024:2048] <- w[0:128, k*256:k*256+256], x[0:128, k*512:k*512+512]
  }}
  act y <- acc
  dma out <- y
}}
"
    );
    let (out, r) = legalize(&src);
    assert_eq!(
        lines(&out),
        [
            "%a.0: matmul acc[0:128, 0:1024] <- w[0:128, 0:256], x[0:128, 0:512] flags=start zr=2",
            "%a.1: matmul acc[0:128, 0:1024] <- w[0:128, 256:512], x[0:128, 512:1024] flags=none zr=0",
            "%c: copy acc[0:128, 1024:1536] <- s[0:128, 0:512]",
            "%r: act z <- acc[0:128, 1024:1536]",
            "%4: memset acc[0:128, 1024:2048] = 0",
            "%b.0: matmul acc[0:128, 1024:2048] <- w[0:128, 0:256], x[0:128, 0:512] flags=none zr=0",
            "%b.1: matmul acc[0:128, 1024:2048] <- w[0:128, 256:512], x[0:128, 512:1024] flags=stop zr=0",
            "%7: act y <- acc",
            "%8: dma out <- y",
        ]
    );
    assert_eq!((r.groups, r.clusters.len(), r.memsets_inserted), (2, 1, 1));
}

#[test]
fn init_under_the_heads_zero_region_replaces_start_by_memset() {
    let src = format!(
        "{SPLIT_DECLS}
block main {{
  %bias: copy acc[0:128, 1024:2048] <- s
  loop k 0..2 {{
    %a: matmul acc[0:128, 0:1024] <- w[0:128, k*256:k*256+256], x[0:128, k*512:k*512+512]
  }}
  loop k 0..2 {{
    %b: matmul acc[0:128, 1024:2048] <- w[0:128, k*256:k*256+256], x[0:128, k*512:k*512+512]
  }}
  act y <- acc
  dma out <- y
}}
"
    );
    let (out, r) = legalize(&src);
    assert_eq!(
        lines(&out),
        [
            "%bias: copy acc[0:128, 1024:2048] <- s",
            "%1: memset acc[0:128, 0:1024] = 0",
            "%a.0: matmul acc[0:128, 0:1024] <- w[0:128, 0:256], x[0:128, 0:512] flags=none zr=2",
            "%a.1: matmul acc[0:128, 0:1024] <- w[0:128, 256:512], x[0:128, 512:1024] flags=none zr=0",
            "%b.0: matmul acc[0:128, 1024:2048] <- w[0:128, 0:256], x[0:128, 0:512] flags=none zr=0",
            "%b.1: matmul acc[0:128, 1024:2048] <- w[0:128, 256:512], x[0:128, 512:1024] flags=stop zr=0",
            "%6: act y <- acc",
            "%7: dma out <- y",
        ]
    );
    assert_eq!((r.groups, r.clusters.len(), r.memsets_inserted), (2, 1, 1));
    let an = analyze(&out, &arch(&out)).unwrap();
    assert_eq!(
        an.groups.iter().map(|g| g.init).collect::<Vec<_>>(),
        [Some(1), Some(0)]
    );
}

#[test]
fn mixed_explicit_and_auto_cluster_is_rederived_with_a_warning() {
    let src = format!(
        "arch trn1\n{CHAIN_DECLS}
block main {{
  %m0: matmul acc <- w[0:128, 0:256], x[0:128, 0:1024]
  %m1: matmul acc <- w[0:128, 256:512], x[0:128, 1024:2048] flags=stop zr=7
  %m2: matmul acc <- w[0:128, 512:768], x[0:128, 2048:3072]
  act y <- acc
  dma out <- y
}}
"
    );
    let (out, r) = legalize(&src);
    assert_eq!(
        flags(&r),
        pairs(&[("m0", "start"), ("m1", "none"), ("m2", "stop")])
    );
    assert_eq!(
        lines(&out)[1],
        "%m1: matmul acc <- w[0:128, 256:512], x[0:128, 1024:2048] flags=none zr=0"
    );
    assert_eq!(
        r.warnings,
        ["cluster headed by %m0 mixes explicit and auto flags; its flags were re-derived"]
    );
}

#[test]
fn all_explicit_cluster_is_kept_and_missing_zr_computed() {
    let src = format!(
        "arch trn1\n{CHAIN_DECLS}
block main {{
  %m0: matmul acc <- w[0:128, 0:256], x[0:128, 0:1024] flags=start
  %m1: matmul acc <- w[0:128, 256:512], x[0:128, 1024:2048] flags=stop zr=0
  act y <- acc
  dma out <- y
}}
"
    );
    let (out, r) = legalize(&src);
    assert_eq!(
        lines(&out)[..2],
        [
            "%m0: matmul acc <- w[0:128, 0:256], x[0:128, 0:1024] flags=start zr=2",
            "%m1: matmul acc <- w[0:128, 256:512], x[0:128, 1024:2048] flags=stop zr=0",
        ]
    );
    assert!(r.warnings.is_empty());
    assert_eq!(r.memsets_inserted, 0);
}

/// An explicit cluster legalization would keep is refused, at its matmul,
/// when its flags or a given `zr` break SPEC §5.3.
#[test]
fn an_illegal_explicit_cluster_is_refused() {
    let cluster = |m0: &str, m1: &str| {
        format!(
            "arch trn1\n{CHAIN_DECLS}
block main {{
  %m0: matmul acc <- w[0:128, 0:256], x[0:128, 0:1024] {m0}
  %m1: matmul acc <- w[0:128, 256:512], x[0:128, 1024:2048] {m1}
  act y <- acc
  dma out <- y
}}
"
        )
    };
    let refused = |m0: &str, m1: &str| {
        let m = parse(&cluster(m0, m1));
        let err = try_legalize(&m).unwrap_err();
        let MatmulError::Input(e) = &err else {
            panic!("{err:?}");
        };
        let inst = e.inst().expect("names a matmul");
        (m.inst(inst).label().unwrap().to_string(), err.to_string())
    };
    assert_eq!(
        refused("flags=start|stop", "flags=acc zr=0"),
        (
            "m0".to_string(),
            "%m0: flags=start|stop: stop on a matmul that is not the tail of its cluster (tail %m1)"
                .to_string()
        )
    );
    assert_eq!(
        refused("flags=none", "flags=stop"),
        (
            "m0".to_string(),
            "%m0: flags=none: cluster head has neither start nor an init to accumulate onto"
                .to_string()
        )
    );
    assert_eq!(
        refused("flags=start", "flags=stop zr=5"),
        (
            "m1".to_string(),
            "%m1: zr=5 but §4.3.5 gives zr=0 (bank span 1)".to_string()
        )
    );
    assert_eq!(
        refused("flags=start zr=1", "flags=stop"),
        (
            "m0".to_string(),
            "%m0: zr=1 but §4.3.5 gives zr=2 (cluster head, quadrant span 4)".to_string()
        )
    );
}

#[test]
fn three_bank_matmul_on_core_v4() {
    let src = "arch core_v4

psum acc [64, 6144] bank=0
sbuf w [128, 256] bf16
sbuf x [128, 6144] bf16
sbuf y [64, 6144]
dram out [64, 6144]

block main {
  loop k 0..2 {
    %mm: matmul acc <- w[0:128, k*128:k*128+128], x[0:128, k*3072:k*3072+3072]
  }
  act y <- acc
  dma out <- y
}
";
    let (out, r) = legalize(src);
    let an = analyze(&out, &arch(&out)).unwrap();
    let g = &an.groups[0];
    assert_eq!(g.banks, (0, 2));
    assert_eq!(g.zr_banks, (0, 3));
    assert_eq!(g.quadrants, (0, 1));
    assert_eq!(g.bytes, (0, 6143));
    assert_eq!(
        lines(&out)[..2],
        [
            "%mm.0: matmul acc <- w[0:128, 0:128], x[0:128, 0:3072] flags=start zr=1",
            "%mm.1: matmul acc <- w[0:128, 128:256], x[0:128, 3072:6144] flags=stop zr=2 after=%mm.0",
        ]
    );
    assert_eq!(r.ordered_edges, pairs(&[("mm.1", "mm.0")]));
}

#[test]
fn zero_region_needing_sixteen_banks_is_an_error() {
    let src = "arch core_v4

psum acc [128, 4096] bank=7
sbuf w [128, 256] bf16
sbuf x [128, 2048] bf16
sbuf y [128, 4096]

block main {
  %mm: matmul acc <- w, x
  act y <- acc
}
";
    let m = psum::text::parse(src).unwrap().module;
    let mut u = psum::unroll::unroll(&m).unwrap();
    let err = analyze(&u, &arch(&m)).err().unwrap();
    assert_eq!(
        err,
        MatmulError::ZeroRegionTooWide {
            inst: "%mm".into(),
            lo: 7,
            hi: 8
        }
    );
    assert_eq!(
        err.to_string(),
        "%mm: the PSUM zero region for banks 7..=8 would need a 16-bank window"
    );
    // Allocation never places a tensor there: legalization refuses the input.
    assert_eq!(
        legalize_program(&mut u, &arch(&m)).unwrap_err().to_string(),
        "PSUM tensor acc at bank 7 needs 2 bank(s) but core_v4 has 8"
    );
}

#[test]
fn legalize_is_idempotent() {
    for src in [
        chain_program("trn1", "", 4),
        chain_program("core_v4", "memset acc = 0", 2),
        slices("k", "n"),
        include_str!("../../examples/03_column_tiles.psum")
            .replace("[128, 2048]\nsbuf w", "[128, 2048] bank=0\nsbuf w"),
        format!(
            "{SPLIT_DECLS}
block main {{
  copy acc[0:128, 1024:2048] <- s
  matmul acc[0:128, 0:1024] <- w[0:128, 0:256], x[0:128, 0:512]
  matmul acc[0:128, 1024:2048] <- w[0:128, 0:256], x[0:128, 0:512]
  act y <- acc
}}
"
        ),
    ] {
        let (once, r1) = legalize(&src);
        let printed = psum::text::print(&once);
        let mut twice = parse(&printed);
        let a = arch(&twice);
        let r2 = legalize_program(&mut twice, &a).unwrap();
        assert_eq!(psum::text::print(&twice), printed, "{src}");
        assert_eq!(r2.flags, r1.flags);
        assert_eq!(r2.ordered_edges, r1.ordered_edges);
        assert_eq!(r2.memsets_inserted, 0);
    }
}

#[test]
fn needs_loop_free_allocated_programs() {
    let mut m = parse(&chain_program("trn1", "", 2));
    let a = arch(&m);
    assert_eq!(
        legalize_program(&mut m.clone(), &a),
        Err(MatmulError::HasLoops)
    );
    m.tensors[psum::ir::TensorId(0)].bank = None;
    let mut u = psum::unroll::unroll(&m).unwrap();
    let err = legalize_program(&mut u, &a).unwrap_err();
    assert_eq!(err.to_string(), "PSUM tensor acc has no bank");
    assert_eq!(
        err.loc(&u),
        psum::ir::Loc::Tensor(psum::ir::TensorId::new(0))
    );
}

#[test]
fn report_json_keys() {
    let (_, r) = legalize(&chain_program("trn1", "", 2));
    assert_eq!(
        r.to_json(),
        serde_json::json!({
            "ordered_edges": [],
            "flags": {"mm.0": "start", "mm.1": "stop"},
            "isa_acc_byte": {"mm.0": 1, "mm.1": 2},
            "memsets_inserted": 0,
            "groups": 1,
            "clusters": 1,
            "warnings": [],
        })
    );
}

#[test]
fn start_that_would_wipe_a_value_still_to_be_read_becomes_a_memset() {
    let src = format!(
        "{SPLIT_DECLS}
block main {{
  %c: copy acc[0:128, 1024:2048] <- s
  %a: matmul acc[0:128, 0:1024] <- w[0:128, 0:256], x[0:128, 0:512]
  %r: act s <- acc[0:128, 1024:2048]
  %y: act y[0:128, 0:1024] <- acc[0:128, 0:1024]
}}
"
    );
    let (out, r) = legalize(&src);
    assert_eq!(
        lines(&out),
        [
            "%c: copy acc[0:128, 1024:2048] <- s",
            "%1: memset acc[0:128, 0:1024] = 0",
            "%a: matmul acc[0:128, 0:1024] <- w[0:128, 0:256], x[0:128, 0:512] flags=stop zr=2",
            "%r: act s <- acc[0:128, 1024:2048]",
            "%y: act y[0:128, 0:1024] <- acc[0:128, 0:1024]",
        ]
    );
    assert_eq!(r.memsets_inserted, 1);
}

const QUADRANT_DECLS: &str = "arch trn1

psum acc [128, 2048] bank=0
sbuf w [64, 512] bf16
sbuf x [64, 2048] bf16
sbuf y [128, 2048]
";

#[test]
fn interleaved_groups_in_disjoint_quadrants_are_separate_clusters() {
    let src = format!(
        "{QUADRANT_DECLS}
block main {{
  %a0: matmul acc[0:64, 0:2048] <- w[0:64, 0:128], x[0:64, 0:1024]
  %b0: matmul acc[64:128, 0:2048] <- w[0:64, 128:256], x[0:64, 0:1024]
  %a1: matmul acc[0:64, 0:2048] <- w[0:64, 256:384], x[0:64, 1024:2048]
  %b1: matmul acc[64:128, 0:2048] <- w[0:64, 384:512], x[0:64, 1024:2048]
  act y <- acc
}}
"
    );
    let (out, r) = legalize(&src);
    assert_eq!(
        flags(&r),
        pairs(&[
            ("a0", "start"),
            ("b0", "start"),
            ("a1", "stop"),
            ("b1", "stop")
        ])
    );
    assert_eq!((r.groups, r.clusters.len(), r.memsets_inserted), (2, 2, 0));
    let an = analyze(&out, &arch(&out)).unwrap();
    assert!(an.groups.iter().all(|g| g.mode == PartitionMode::Quadrant));
    assert!(lines(&out)[0].ends_with("flags=start zr=1"));
}

#[test]
fn group_sharing_a_quadrant_outside_the_heads_partitions_gets_a_memset() {
    let src = format!(
        "{QUADRANT_DECLS}
block main {{
  %a0: matmul acc[0:48, 0:2048] <- w[0:64, 0:96], x[0:64, 0:1024]
  %b0: matmul acc[48:96, 0:2048] <- w[0:64, 96:192], x[0:64, 0:1024]
  %a1: matmul acc[0:48, 0:2048] <- w[0:64, 192:288], x[0:64, 1024:2048]
  %b1: matmul acc[48:96, 0:2048] <- w[0:64, 288:384], x[0:64, 1024:2048]
  act y[0:96, 0:2048] <- acc[0:96, 0:2048]
}}
"
    );
    let (out, r) = legalize(&src);
    assert_eq!(
        lines(&out),
        [
            "%a0: matmul acc[0:48, 0:2048] <- w[0:64, 0:96], x[0:64, 0:1024] flags=start zr=2",
            "%1: memset acc[48:96, 0:2048] = 0",
            "%b0: matmul acc[48:96, 0:2048] <- w[0:64, 96:192], x[0:64, 0:1024] flags=none zr=0",
            "%a1: matmul acc[0:48, 0:2048] <- w[0:64, 192:288], x[0:64, 1024:2048] flags=none zr=0",
            "%b1: matmul acc[48:96, 0:2048] <- w[0:64, 288:384], x[0:64, 1024:2048] flags=stop zr=0",
            "%5: act y[0:96, 0:2048] <- acc[0:96, 0:2048]",
        ]
    );
    assert_eq!((r.groups, r.clusters.len(), r.memsets_inserted), (2, 1, 1));
}

#[test]
fn positional_label_taken_by_another_instruction_gets_a_suffix() {
    let src = format!(
        "arch trn1\n{CHAIN_DECLS}
block main {{
  %1: matmul acc <- w[0:128, 0:256], x[0:128, 0:1024]
  act y <- acc
  %2.1: dma out <- y
  dma out <- y
}}
"
    );
    let (out, _) = legalize(&src);
    let labels: Vec<String> = out
        .insts_in_order()
        .into_iter()
        .map(|i| out.inst(i).label().unwrap().to_string())
        .collect();
    assert_eq!(labels, ["1", "1.1", "2.1", "3"]);
}
