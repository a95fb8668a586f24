//! `--allocator` through the binary: mincost and exact on a shipped
//! example, exact's size limit (exit 1), and an unknown allocator (exit 2).

use crate::cli::{psum, psum_stdin, stderr, stdout};

#[test]
fn mincost_and_exact_spill_the_one_tensor_of_the_example() {
    for allocator in ["mincost", "exact"] {
        let args = [
            "alloc",
            "examples/02_one_spill.psum",
            "--allocator",
            allocator,
            "--report",
            "json",
        ];
        let o = psum(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["spilled"], serde_json::json!(["t0"]), "{allocator}");
        assert_eq!(v["spill_cost_cycles"], 128, "{allocator}");
        assert_eq!(v["iterations"], 2, "{allocator}");
    }
    let o = psum_stdin(
        &[
            "compile",
            "examples/02_one_spill.psum",
            "--allocator",
            "mincost",
        ],
        "",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn exact_refuses_more_than_24_nodes() {
    let gen = psum(&["gen", "random", "--tensors", "25"]);
    let program = stdout(&gen);
    let o = psum_stdin(&["alloc", "-", "--allocator", "exact"], &program);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("--allocator exact takes at most 24 PSUM nodes; this program has 25"),
        "{}",
        stderr(&o)
    );
    let o = psum_stdin(&["alloc", "-", "--allocator", "mincost"], &program);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn an_unknown_allocator_is_a_usage_error() {
    let o = psum_stdin(
        &[
            "alloc",
            "examples/02_one_spill.psum",
            "--allocator",
            "linear",
        ],
        "",
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("briggs, briggs-reference, mincost, exact"),
        "{}",
        stderr(&o)
    );
}

/// `--reference` is briggs' reference implementation: beside another
/// allocator it is a usage error, and with briggs (or alone) it runs
/// `briggs-reference`.
#[test]
fn reference_goes_with_briggs_only() {
    for other in ["mincost", "exact"] {
        let args = [
            "alloc",
            "examples/02_one_spill.psum",
            "--reference",
            "--allocator",
            other,
        ];
        let o = psum(&args);
        assert_eq!(o.status.code(), Some(2), "{other}");
        let want = format!("the argument '--reference' cannot be used with '--allocator {other}'");
        assert!(stderr(&o).contains(&want), "{}", stderr(&o));
    }
    let run = |args: &[&str]| {
        let o = psum(args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        (o.stdout, o.stderr)
    };
    let reference = run(&[
        "alloc",
        "examples/02_one_spill.psum",
        "-v",
        "--allocator",
        "briggs-reference",
    ]);
    assert_eq!(
        run(&["alloc", "examples/02_one_spill.psum", "-v", "--reference"]),
        reference
    );
    let briggs = [
        "alloc",
        "examples/02_one_spill.psum",
        "-v",
        "--reference",
        "--allocator",
        "briggs",
    ];
    assert_eq!(run(&briggs), reference);
    assert_eq!(
        run(&["alloc", "examples/02_one_spill.psum", "-v"]),
        reference
    );
}
