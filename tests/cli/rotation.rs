//! `--rotate` and `--no-rotate` through the binary (SPEC §3.12), with the
//! `reuse` summary line and the report keys of SPEC §10 and §11.

use crate::cli::{psum, stderr, stdout};
use std::process::Output;

/// The `reuse` line of a compile summary.
fn reuse_line(o: &Output) -> String {
    let err = stderr(o);
    let line = err
        .lines()
        .find(|l| l.starts_with("  reuse "))
        .unwrap_or_default();
    line.to_string()
}

const ATTENTION: &str = "examples/gen_attention.psum";

#[test]
fn rotation_is_on_after_mincost_and_asked_for_after_briggs() {
    let briggs = psum(&["compile", ATTENTION, "-o", "/dev/null"]);
    assert!(briggs.status.success(), "{}", stderr(&briggs));
    assert_eq!(
        reuse_line(&briggs),
        "  reuse     18 edges (18 avoidable), least slack 0"
    );
    for args in [
        vec!["--allocator", "mincost"],
        vec!["--rotate"],
        vec!["--rotate", "--verify-each"],
    ] {
        let mut all = vec!["compile", ATTENTION, "-o", "/dev/null"];
        all.extend(args);
        let o = psum(&all);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(
            reuse_line(&o),
            "  reuse     12 edges (0 avoidable), least slack 30"
        );
        assert!(stderr(&o).contains("  verify    ok\n"));
    }
    let kept = psum(&[
        "compile",
        ATTENTION,
        "--allocator",
        "mincost",
        "--no-rotate",
        "-o",
        "/dev/null",
    ]);
    assert_eq!(
        reuse_line(&kept),
        "  reuse     18 edges (18 avoidable), least slack 0"
    );
}

#[test]
fn the_report_carries_the_measure_and_the_estimate() {
    let o = psum(&["compile", ATTENTION, "--rotate", "--report", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        r["psum_reuse"],
        serde_json::json!({"edges": 12, "avoidable": 0, "least_slack": 30})
    );
    assert_eq!(r["estimated_cycles"], 18023);
    let busy = &r["engine_busy_cycles"];
    assert_eq!(
        [
            &busy["tensor"],
            &busy["vector"],
            &busy["scalar"],
            &busy["gpsimd"],
            &busy["dma"]
        ],
        [6144, 0, 9904, 0, 4564]
    );
    // The copies the expansion made are rows of the report.
    let names: Vec<&str> = (r["tensors"].as_array().unwrap().iter())
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 20);
    assert!(
        names.contains(&"s.7") && names.contains(&"o.3"),
        "{names:?}"
    );
}

#[test]
fn rotate_and_no_rotate_conflict() {
    let o = psum(&["compile", ATTENTION, "--rotate", "--no-rotate"]);
    assert_eq!(o.status.code(), Some(2));
    let o = psum(&["compile", ATTENTION, "--keep-banks", "--rotate"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn the_rotation_bench_meets_its_targets_on_the_workloads_and_a_folder() {
    let o = psum(&["bench", "--rotation", "examples", "no/such/corpus"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    // The seven workloads, then the eleven programs of examples/.
    assert!(
        out.contains("18 programs: reuse edges 200 → 168, avoidable 110 → 0 (mincost --no-rotate → mincost); targets met on 18 of 18\n"),
        "{out}"
    );
    assert!(out.contains("| gen attention | 18 / 18 | 18023 | 18 / 18 | 18023 | 12 / 0 | 18023 | +0.00% | +0.00% | 0 | - | - |\n"), "{out}");
    assert!(
        out.contains("- no/such/corpus: not found, skipped\n"),
        "{out}"
    );
}
