//! Hand-checked allocator programs (SPEC §3): loops, multi-bank alignment,
//! gen1, spill inside loops, node numbering, unspillable values, memloc
//! split, diagnostics. Every program runs in both modes (compared).

use crate::alloc_common;

use alloc_common::*;
use psum::alloc::{AllocError, AllocOptions, Allocator, Cost, LogLevel};

const DECLS: &str = "sbuf w [128, 256] bf16
sbuf x [128, 8192] bf16
sbuf y [128, 2048]
sbuf z [128, 2048]
";

/// A trn1 program: `psums` declarations, the shared operands, then `body`.
fn prog(psums: &str, body: &str) -> String {
    format!("arch trn1\n\n{psums}{DECLS}\nblock main {{\n{body}}}\n")
}

fn with_banks(n: u32) -> AllocOptions {
    AllocOptions {
        psum_banks: Some(n),
        ..AllocOptions::default()
    }
}

/// The error of every mode (which must agree).
fn alloc_err(src: &str, opts: AllocOptions) -> AllocError {
    let m = psum::text::parse(src).unwrap().module;
    alloc_all(&m, opts).unwrap_err()
}

#[test]
fn loop_carried_accumulator() {
    // acc is read at the top of the body and rewritten below: its value
    // crosses the back edge, so it is live over the whole loop (0..7) and
    // interferes with v, which lives only after the rewrite.
    let src = prog(
        "psum acc [128, 2048]\npsum t [128, 2048]\npsum v [128, 2048]\n",
        "  memset acc = 0
  loop k 0..4 {
    act y <- acc
    matmul t <- w, x[0:128, k*1024:k*1024+1024]
    act acc <- t
    matmul v <- w, x[0:128, k*1024+4096:k*1024+5120]
    act z <- v
  }
",
    );
    let out = alloc_src(&src);
    assert_eq!(
        intervals(&out),
        [
            ("acc".to_string(), Some([0, 7])),
            ("t".to_string(), Some([3, 4])),
            ("v".to_string(), Some([5, 6])),
        ]
    );
    assert_eq!(banks(&out), expect(&[("acc", 1), ("t", 0), ("v", 0)]));
}

#[test]
fn defined_before_loop_read_inside() {
    // a lives to the end of the loop that reads it (0..4), not beyond: b
    // after the loop reuses its bank.
    let src = prog(
        "psum a [128, 2048]\npsum t [128, 2048]\npsum b [128, 2048]\n",
        "  matmul a <- w, x[0:128, 0:1024]
  loop k 0..4 {
    matmul t <- w, x[0:128, k*1024+1024:k*1024+2048]
    act y <- a, t
  }
  matmul b <- w, x[0:128, 6144:7168]
  act z <- b
",
    );
    let out = alloc_src(&src);
    assert_eq!(
        intervals(&out),
        [
            ("a".to_string(), Some([0, 4])),
            ("t".to_string(), Some([2, 3])),
            ("b".to_string(), Some([5, 6])),
        ]
    );
    assert_eq!(banks(&out), expect(&[("a", 1), ("t", 0), ("b", 0)]));
}

#[test]
fn nested_def_read_after_outer_loop() {
    // acc is defined two loops deep and read after the outer loop: it starts
    // at the outer header (0) and so interferes with t in the outer body.
    let src = prog(
        "psum acc [128, 2048]\npsum t [128, 2048]\npsum u [128, 2048]\n",
        "  loop i 0..2 {
    loop j 0..2 {
      matmul acc <- w, x[0:128, i*2048+j*1024:i*2048+j*1024+1024]
    }
    matmul t <- w, x[0:128, i*1024+4096:i*1024+5120]
    act y <- t
  }
  act z <- acc
  matmul u <- w, x[0:128, 7168:8192]
  act y <- u
",
    );
    let out = alloc_src(&src);
    assert_eq!(
        intervals(&out),
        [
            ("acc".to_string(), Some([0, 7])),
            ("t".to_string(), Some([4, 5])),
            ("u".to_string(), Some([8, 9])),
        ]
    );
    assert_eq!(banks(&out), expect(&[("acc", 1), ("t", 0), ("u", 0)]));
}

const MULTI: &str = "psum big [128, 6144]
psum p [128, 4096]
psum a [128, 2048]
sbuf w [128, 256] bf16
sbuf x [128, 6144] bf16
sbuf y3 [128, 6144]
sbuf y2 [128, 4096]
sbuf y1 [128, 2048]

block main {
  matmul big[0:128, 0:2048] <- w, x[0:128, 0:1024]
  matmul big[0:128, 2048:4096] <- w, x[0:128, 1024:2048]
  matmul big[0:128, 4096:6144] <- w, x[0:128, 2048:3072]
  matmul p[0:128, 0:2048] <- w, x[0:128, 3072:4096]
  matmul p[0:128, 2048:4096] <- w, x[0:128, 4096:5120]
  matmul a <- w, x[0:128, 5120:6144]
  act y3 <- big
  act y2 <- p
  act y1 <- a
}
";

#[test]
fn multi_bank_alignment() {
    // Select pops a, p, big: a takes 0; p (2 banks, aligned to 2) skips
    // bank 1 and takes 2..3; big (3 banks, aligned to 4) takes 4..6.
    let out = alloc_src(&format!("arch trn1\n\n{MULTI}"));
    assert_eq!(banks(&out), expect(&[("big", 4), ("p", 2), ("a", 0)]));
    let sizes: Vec<u32> = out.report.tensors.iter().map(|t| t.banks).collect();
    assert_eq!(sizes, [3, 2, 1]);
    assert_eq!(out.report.demand_pct, 75.0);
    // gen4 rounds the 3-bank tensor up to 4 banks (4..7).
    let out = alloc_src(&format!("arch core_v4\n\n{MULTI}"));
    assert_eq!(banks(&out), expect(&[("big", 4), ("p", 2), ("a", 0)]));
    let sizes: Vec<u32> = out.report.tensors.iter().map(|t| t.banks).collect();
    assert_eq!(sizes, [4, 2, 1]);
    assert_eq!(out.report.demand_pct, 87.5);
    assert_eq!(out.log[1], "87.50% PSUM demand before spilling");
}

#[test]
fn gen1_four_banks() {
    // Five one-bank tensors on gen1's four banks: t4 is unspillable, the
    // others cost 64 × (save + reload) = 128; t0 spills, as in example 02.
    let src = "arch inf1

psum t0 [64, 2048]
psum t1 [64, 2048]
psum t2 [64, 2048]
psum t3 [64, 2048]
psum t4 [64, 2048]
sbuf w [128, 128] bf16
sbuf x [128, 5120] bf16
sbuf y [64, 2048]
sbuf y0 [64, 2048]

block main {
  matmul t0 <- w, x[0:128, 0:1024]
  matmul t1 <- w, x[0:128, 1024:2048]
  matmul t2 <- w, x[0:128, 2048:3072]
  matmul t3 <- w, x[0:128, 3072:4096]
  matmul t4 <- w, x[0:128, 4096:5120]
  act y <- t1, t2, t3, t4
  act y0 <- t0
}
";
    let out = alloc_src(src);
    assert_eq!(out.report.num_banks, 4);
    assert_eq!(
        banks(&out),
        expect(&[
            ("t0", 0),
            ("t1", 3),
            ("t2", 2),
            ("t3", 1),
            ("t4", 0),
            ("t0_ReloadTensorCopy1", 0),
        ])
    );
    assert_eq!(out.log[1], "125.00% PSUM demand before spilling");
    assert_eq!(out.report.spilled, ["t0"]);
    assert_eq!(out.report.spill_cost_cycles, 128);
    assert_eq!(out.report.utilization_pct, 100.0);
}

#[test]
fn spilled_value_read_inside_loop() {
    // Two banks: the 2-bank d is unspillable, so s spills. Its reload in the
    // loop sits right before the read, inside the loop (never hoisted), and
    // weighs the trip count: 64 × (save 1 + reload 4 + reload 1) = 384.
    let src = prog(
        "psum s [128, 2048]\npsum d [128, 4096]\nsbuf y2 [128, 4096]\n",
        "  matmul s <- w, x[0:128, 0:1024]
  matmul d[0:128, 0:2048] <- w, x[0:128, 1024:2048]
  matmul d[0:128, 2048:4096] <- w, x[0:128, 2048:3072]
  act y2 <- d
  loop k 0..4 {
    act y <- s
  }
  act z <- s
",
    );
    let out = alloc_both(&module(&src), with_banks(2));
    assert_eq!(
        body(&out),
        "block main {
  matmul s <- w, x[0:128, 0:1024]
  copy s_SpillTensorCopy0 <- s
  matmul d[0:128, 0:2048] <- w, x[0:128, 1024:2048]
  matmul d[0:128, 2048:4096] <- w, x[0:128, 2048:3072]
  act y2 <- d
  loop k 0..4 {
    copy s_ReloadTensorCopy1 <- s_SpillTensorCopy0
    act y <- s_ReloadTensorCopy1
  }
  copy s_ReloadTensorCopy2 <- s_SpillTensorCopy0
  act z <- s_ReloadTensorCopy2
}
"
    );
    assert_eq!(
        out.log[out.log.len() - 6],
        "spilling from PSUM cost about 384 cycles"
    );
    assert_eq!(out.report.spill_cost_cycles, 384);
    assert_eq!(
        banks(&out),
        expect(&[
            ("s", 0),
            ("d", 0),
            ("s_ReloadTensorCopy1", 0),
            ("s_ReloadTensorCopy2", 0),
        ])
    );
    assert_eq!(
        intervals(&out)[2..],
        [
            ("s_ReloadTensorCopy1".to_string(), Some([6, 7])),
            ("s_ReloadTensorCopy2".to_string(), Some([9, 10])),
        ]
    );
}

#[test]
fn nodes_follow_first_definition() {
    // `late` is declared first but defined second: node 0 is `early`, so
    // select pops `late` first (bank 0) and `early` takes bank 1.
    let src = prog(
        "psum late [128, 2048]\npsum early [128, 2048]\n",
        "  matmul early <- w, x[0:128, 0:1024]
  matmul late <- w, x[0:128, 1024:2048]
  act y <- early, late
",
    );
    let out = alloc_src(&src);
    assert_eq!(banks(&out), expect(&[("late", 0), ("early", 1)]));
}

#[test]
fn written_in_loop_read_right_after_is_unspillable() {
    // One bank: acc (written in the loop, read right after it) costs +inf,
    // so s — live across it — is the one spilled.
    let src = prog(
        "psum s [128, 2048]\npsum acc [128, 2048]\n",
        "  matmul s <- w, x[0:128, 0:1024]
  loop k 0..4 {
    matmul acc <- w, x[0:128, k*1024+1024:k*1024+2048]
  }
  act y <- acc
  act z <- s
",
    );
    let out = alloc_both(&module(&src), with_banks(1));
    let trace = out.trace.join("\n");
    assert!(trace.contains("            hi = 1\n            inf = 1\n"));
    assert!(trace.contains(" cannot allocate s\nPSUM score = 128 (lower is better)"));
    assert_eq!(out.report.spilled, ["s"]);
    assert_eq!(
        banks(&out),
        expect(&[("s", 0), ("acc", 0), ("s_ReloadTensorCopy1", 0)])
    );
}

#[test]
fn too_many_reloads() {
    // Two unspillable accumulators live together on one bank.
    let src = prog(
        "psum a [128, 2048]\npsum b [128, 2048]\n",
        "  loop k 0..4 {
    matmul a <- w, x[0:128, k*1024:k*1024+1024]
    matmul b <- w, x[0:128, k*1024+4096:k*1024+5120]
  }
  act y <- a, b
",
    );
    let err = alloc_err(&src, with_banks(1));
    assert_eq!(
        err.to_string(),
        "too many reloads required: cannot place a; PSUM pressure peaks at 2 banks at point 0"
    );
}

#[test]
fn memloc_split_of_reused_tensor() {
    // t holds two unrelated values; the matmul at the third point starts a
    // fresh accumulation after a read, so t splits into t.0 and t.1, and
    // t.0 shares bank 0 with t.1. The memset after the second read is a
    // non-matmul overwrite: a third piece, whose matmul accumulates onto it.
    let src = prog(
        "psum t [128, 2048]\npsum u [128, 2048]\n",
        "  matmul t <- w, x[0:128, 0:1024]
  act y <- t
  matmul u <- w, x[0:128, 1024:2048]
  matmul t <- w, x[0:128, 2048:3072]
  act z <- t, u
  memset t = 0
  matmul t <- w, x[0:128, 3072:4096]
  act y <- t
",
    );
    let out = alloc_src(&src);
    assert_eq!(
        banks(&out),
        expect(&[("t.0", 0), ("t.1", 0), ("t.2", 0), ("u", 1)])
    );
    assert_eq!(
        body(&out),
        "block main {
  matmul t.0 <- w, x[0:128, 0:1024]
  act y <- t.0
  matmul u <- w, x[0:128, 1024:2048]
  matmul t.1 <- w, x[0:128, 2048:3072]
  act z <- t.1, u
  memset t.2 = 0
  matmul t.2 <- w, x[0:128, 3072:4096]
  act y <- t.2
}
"
    );
}

#[test]
fn split_only_outside_loops_and_not_within_a_run() {
    // The whole write inside the loop follows the loop's read (in the
    // previous iteration) but is inside a loop: no cut. The first matmul
    // after the loop follows a read: cut (t.1). The next matmul continues
    // that accumulation run: no cut.
    let src = prog(
        "psum t [128, 2048]\n",
        "  loop k 0..2 {
    matmul t <- w, x[0:128, k*1024:k*1024+1024]
    act y <- t
  }
  matmul t <- w, x[0:128, 2048:3072]
  matmul t <- w, x[0:128, 3072:4096]
  act z <- t
",
    );
    let out = alloc_src(&src);
    assert_eq!(banks(&out), expect(&[("t.0", 0), ("t.1", 0)]));
    assert_eq!(
        body(&out),
        "block main {
  loop k 0..2 {
    matmul t.0 <- w, x[0:128, k*1024:k*1024+1024]
    act y <- t.0
  }
  matmul t.1 <- w, x[0:128, 2048:3072]
  matmul t.1 <- w, x[0:128, 3072:4096]
  act z <- t.1
}
"
    );
}

#[test]
fn unused_tensor_warns_and_keeps_no_bank() {
    let src = prog(
        "psum idle [128, 2048] bank=5\npsum a [128, 2048] bank=7\n",
        "  matmul a <- w, x[0:128, 0:1024]\n  act y <- a\n",
    );
    let out = alloc_src(&src);
    assert_eq!(out.warnings, ["unused PSUM tensor idle"]);
    assert_eq!(
        banks(&out),
        [("idle".to_string(), None), ("a".to_string(), Some(0))]
    );
    assert_eq!(out.report.tensors[0].interval, None);
    assert!(psum::text::print(&out.module)
        .contains("psum idle [128, 2048]\npsum a [128, 2048] bank=0\n"));
}

#[test]
fn diagnostics() {
    let too_big = format!("arch trn1\n\n{MULTI}");
    assert_eq!(
        alloc_err(&too_big, with_banks(2)).to_string(),
        "big is too big for PSUM, requires 3 banks with PSUM size 2"
    );
    let v4 = format!("arch core_v4\n\n{MULTI}");
    assert_eq!(
        alloc_err(&v4, with_banks(3)).to_string(),
        "big is too big for PSUM, requires 4 banks with PSUM size 3"
    );
    let never_written = prog("psum t [128, 2048]\n", "  act y <- t\n");
    assert_eq!(
        alloc_err(&never_written, AllocOptions::default()),
        AllocError::NoFirstDef {
            tensor: psum::ir::TensorId::new(0),
            name: "t".into()
        }
    );
    assert_eq!(
        alloc_err(&never_written, AllocOptions::default()).to_string(),
        "no first def find: t"
    );
    let never_read = prog(
        "psum t [128, 2048]\n",
        "  matmul t <- w, x[0:128, 0:1024]\n",
    );
    assert_eq!(
        alloc_err(&never_read, AllocOptions::default()).to_string(),
        "no last use find: t"
    );
    let one_spill = std::fs::read_to_string(format!(
        "{}/examples/02_one_spill.psum",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let once = AllocOptions {
        max_iterations: 1,
        ..AllocOptions::default()
    };
    assert_eq!(
        alloc_err(&one_spill, once).to_string(),
        "PSUM allocation did not converge"
    );
    for n in [0, 9] {
        assert_eq!(
            alloc_err(&one_spill, with_banks(n)).to_string(),
            format!("--psum-banks {n} is out of range 1..=8")
        );
    }
}

#[test]
fn save_inside_loop_that_must_carry_the_value_relieves_nothing() {
    // acc is initialized before the loop and rewritten and read inside it:
    // a save after the rewrite would sit in the loop, so acc would still
    // live to the loop's end. Spilling relieves nothing: +inf, and with one
    // bank the spillable s (live across the loop) goes instead.
    let src = prog(
        "psum s [128, 2048]\npsum acc [128, 2048]\n",
        "  matmul s <- w, x[0:128, 0:1024]
  memset acc = 0
  loop k 0..4 {
    act y <- acc
    matmul acc <- w, x[0:128, k*1024+1024:k*1024+2048]
    act z <- y
    act y <- acc
  }
  act z <- s
",
    );
    let m = module(&src);
    let costs = psum::alloc::problem(&m, &AllocOptions::default())
        .unwrap()
        .costs;
    // s: save after 0, reload before 8 (weights 1 + 1).
    assert_eq!(costs, [Cost::Finite(128), Cost::Inf]);
    let out = alloc_both(&m, with_banks(1));
    assert_eq!(out.report.spilled, ["s"]);
}

#[test]
fn spill_names_skip_declared_names() {
    // The counter skips a name the program already declares.
    let src = std::fs::read_to_string(format!(
        "{}/examples/02_one_spill.psum",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
    .replace("dram out", "sbuf t0_SpillTensorCopy0 [128, 2048]\ndram out");
    let out = alloc_src(&src);
    let printed = psum::text::print(&out.module);
    assert!(printed.contains("  copy t0_SpillTensorCopy1 <- t0\n"));
    assert!(printed.contains("  copy t0_ReloadTensorCopy2 <- t0_SpillTensorCopy1\n"));
}

/// Ten one-bank accumulators written in one loop and evacuated one by one
/// after it: all ten are live across the loop, which no spill can relieve.
fn evacuated_accumulators() -> String {
    let mut src = String::from("arch trn1\n\nsbuf w [128, 256] bf16\nsbuf x [128, 40960] bf16\n");
    for i in 0..10 {
        src += &format!("psum acc{i} [128, 2048]\nsbuf y{i} [128, 2048]\n");
    }
    src += "\nblock main {\n  loop k 0..4 {\n";
    for i in 0..10 {
        let b = i * 4096;
        src += &format!(
            "    matmul acc{i} <- w, x[0:128, k*1024+{b} : k*1024+{}]\n",
            b + 1024
        );
    }
    src += "  }\n";
    for i in 0..10 {
        src += &format!("  copy y{i} <- acc{i}\n");
    }
    src + "}\n"
}

#[test]
fn spilled_accumulator_is_not_spilled_again() {
    // Regression: once acc9 was saved right after the loop, the next
    // iteration's save of another accumulator landed between the loop and
    // acc9's save, which made acc9 spillable again (only that save between
    // its last write and its read); every iteration re-spilled it and the
    // fixpoint ended in "PSUM allocation did not converge". A spilled tensor
    // is pinned now, so the allocator spills each accumulator once and then
    // reports the real problem, naming the first stuck accumulator by id
    // (in both modes).
    for allocator in [Allocator::Briggs, Allocator::BriggsReference] {
        let opts = AllocOptions {
            allocator,
            ..AllocOptions::default()
        };
        let src = evacuated_accumulators();
        let err = alloc_err(&src, opts);
        assert_eq!(
            err.to_string(),
            "too many reloads required: cannot place acc0; PSUM pressure peaks at 10 banks at point 0"
        );
        let acc0 = psum::text::parse(&src)
            .unwrap()
            .module
            .tensor_by_name("acc0");
        assert_eq!(err.tensor(), acc0);
    }
}

/// An error names the input's tensor: a memloc-split piece names the
/// tensor it was cut from (declared after another, so the ids differ).
#[test]
fn errors_name_the_tensor_a_piece_was_cut_from() {
    let src = prog(
        "psum u [128, 2048]\npsum t [128, 2048]\n",
        "  matmul u <- w, x[0:128, 0:1024]\n  act y <- u\n  matmul t <- w, x[0:128, 0:1024]\n  \
         act y <- t\n  matmul t <- w, x[0:128, 1024:2048]\n",
    );
    let err = alloc_err(&src, AllocOptions::default());
    assert_eq!(err.to_string(), "no last use find: t.1");
    let m = psum::text::parse(&src).unwrap().module;
    assert_eq!(err.tensor(), m.tensor_by_name("t"));
    assert_eq!(
        err.loc(),
        psum::ir::Loc::Tensor(m.tensor_by_name("t").unwrap())
    );
}

/// `LogLevel::Quiet` collects no log and changes nothing else, whichever
/// allocator runs; `Trace` adds the trace to the same log.
#[test]
fn the_log_level_changes_only_the_log() {
    // With one bank, s (live across the loop) spills.
    let m = module(&prog(
        "psum s [128, 2048]\npsum acc [128, 2048]\n",
        "  matmul s <- w, x[0:128, 0:1024]\n  memset acc = 0\n  loop k 0..4 {\n    act y <- acc\n    \
         matmul acc <- w, x[0:128, k*1024+1024:k*1024+2048]\n    act z <- y\n    act y <- acc\n  }\n  \
         act z <- s\n",
    ));
    for allocator in [
        Allocator::Briggs,
        Allocator::BriggsReference,
        Allocator::Mincost,
        Allocator::Exact,
    ] {
        let run = |log| {
            let opts = AllocOptions {
                allocator,
                log,
                psum_banks: Some(1),
                ..AllocOptions::default()
            };
            psum::alloc::allocate(&m, &opts).unwrap()
        };
        let (quiet, log, trace) = (
            run(LogLevel::Quiet),
            run(LogLevel::Log),
            run(LogLevel::Trace),
        );
        assert_eq!(quiet.report.spilled, ["s"], "{allocator:?}");
        assert!(
            quiet.log.is_empty() && quiet.trace.is_empty(),
            "{allocator:?}"
        );
        assert!(!log.log.is_empty() && log.trace.is_empty(), "{allocator:?}");
        assert_eq!(trace.log, log.log, "{allocator:?}");
        assert!(trace.trace.len() >= log.log.len(), "{allocator:?}");
        for other in [&log, &trace] {
            assert_eq!(quiet.module, other.module, "{allocator:?}");
            assert_eq!(quiet.report, other.report, "{allocator:?}");
            assert_eq!(quiet.warnings, other.warnings, "{allocator:?}");
        }
    }
}
