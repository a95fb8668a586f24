//! `psum bound`, `psum export --minimalloc`, `psum import --minimalloc` and
//! `psum export --split-lp` through the binary: exact output and exit codes.

use crate::cli::{psum, stderr, stdout};

#[test]
fn bound_reports_peak_and_minimum_spills() {
    let o = psum(&["bound", "examples/02_one_spill.psum"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stdout(&o),
        "peak demand: 9 banks at point 8 (9 nodes, 8 banks available)\nminimum spills: 1 (for example t0)\nminimum spill cost: 128 cycles\nminimum split spill cost: at least 128 cycles\n"
    );
    let o = psum(&["bound", "examples/02_one_spill.psum", "--report", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["peak_demand"], 9);
    assert_eq!(v["min_spills"], 1);
    assert_eq!(v["spill_set"], serde_json::json!(["t0"]));
    assert_eq!(v["min_spill_cost_cycles"], 128);
    assert_eq!(v["min_split_cost_cycles"], 128);
}

#[test]
fn export_then_import_round_trips_a_valid_solution() {
    let dir = std::env::temp_dir().join(format!("psum-cli-bound-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("p.csv");
    let o = psum(&[
        "export",
        "--minimalloc",
        "examples/01_three_tensors.psum",
        "-o",
        csv.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stderr(&o),
        "capacity: 8 banks (run MiniMalloc with --capacity=8)\n"
    );
    let problem = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(problem, "id,lower,upper,size\na,0,5,1\nb,1,5,1\nc,2,6,2\n");

    // The allocator's own answer (c=0, b=2, a=3) as a solver would write it.
    let good = dir.join("good.csv");
    std::fs::write(
        &good,
        "id,lower,upper,size,offset\na,0,5,1,3\nb,1,5,1,2\nc,2,6,2,0\n",
    )
    .unwrap();
    let o = psum(&[
        "import",
        "--minimalloc",
        "examples/01_three_tensors.psum",
        good.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).ends_with("valid PSUM allocation\n"));

    // A 2-bank tensor at an odd bank, overlapping b.
    let bad = dir.join("bad.csv");
    std::fs::write(
        &bad,
        "id,lower,upper,size,offset\na,0,5,1,3\nb,1,5,1,2\nc,2,6,2,1\n",
    )
    .unwrap();
    let o = psum(&[
        "import",
        "--minimalloc",
        "examples/01_three_tensors.psum",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(
        out.contains("c: bank 1 is not a multiple of its alignment 2 (2 banks)"),
        "{out}"
    );
    assert!(
        out.contains("b and c are live together and share a bank"),
        "{out}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn export_split_lp_writes_the_one_spill_program() {
    let o = psum(&["export", "--split-lp", "examples/02_one_spill.psum"]);
    assert_eq!(o.status.code(), Some(0));
    insta::assert_snapshot!("split_lp_02_one_spill", stdout(&o));
    let o = psum(&[
        "export",
        "--split-lp",
        "--objective",
        "count",
        "examples/02_one_spill.psum",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    assert!(
        out.contains("\n obj: y0 + y1 + y2 + y3 + y4 + y5 + y6 + y7\n"),
        "{out}"
    );
}

#[test]
fn export_split_lp_bounds_multi_bank_programs_and_refuses_minimalloc_objectives() {
    let o = psum(&["export", "--split-lp", "examples/01_three_tensors.psum"]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    assert!(
        out.contains("\\ a lower bound: rows count banks and aligned blocks, not fragmentation\n"),
        "{out}"
    );
    assert!(
        out.contains(
            "\n obj: 64 y0 + 64 x0_0 + 64 y1 + 64 x1_0 + 128 y2 + 128 x2_0\nSubject To\n g0_0:"
        ),
        "{out}"
    );
    let o = psum(&[
        "export",
        "--minimalloc",
        "--objective",
        "count",
        "examples/02_one_spill.psum",
    ]);
    assert_eq!(o.status.code(), Some(2));
}

/// Two 3-bank accumulators and a 2-bank one, written in turn, fit trn1's
/// 8 banks by count but not in aligned pairs: no allocation exists, and
/// the split LP says where.
#[test]
fn export_split_lp_refuses_held_stretches_over_the_aligned_blocks() {
    let mut src = String::from(
        "arch trn1\n\npsum a [128, 6144]\npsum b [128, 6144]\npsum c [128, 4096]\n\
         sbuf w [128, 256] bf16\nsbuf x [128, 1024] bf16\n\
         sbuf y [128, 6144]\nsbuf z [128, 6144]\nsbuf q [128, 4096]\n\nblock main {\n",
    );
    for lo in [0, 2048, 4096] {
        for t in ["a", "b", "c"].iter().filter(|&&t| t != "c" || lo < 4096) {
            src.push_str(&format!(
                "  matmul {t}[0:128, {lo}:{}] <- w, x\n",
                lo + 2048
            ));
        }
    }
    src.push_str("  act y <- a\n  act z <- b\n  act q <- c\n}\n");
    let path = std::env::temp_dir().join(format!("psum_unaligned_{}.psum", std::process::id()));
    std::fs::write(&path, src).expect("fixture written");
    let file = path.to_str().expect("a UTF-8 temp path");
    let o = psum(&["export", "--split-lp", file]);
    let _ = std::fs::remove_file(&path);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!("{file}: error: what stays in PSUM even when spilled needs 5 aligned blocks of 2 banks at point 2, more than the 4 there are\n")
    );
}
