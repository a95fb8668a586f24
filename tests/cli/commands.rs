//! The `psum` binary (SPEC §6): `fmt` and `arch`, exit codes, stdin, `-o`.

use crate::cli::{psum, psum_stdin, scratch, stderr, stdout};
use std::path::Path;

const GEMM: &str = "examples/04_gemm_k_loop.psum";

#[test]
fn fmt_prints_the_canonical_form_and_is_idempotent() {
    let o = psum(&["fmt", GEMM]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.starts_with("arch trn1\n\npsum acc [128, 2048]\n"));
    assert!(text
        .contains("    matmul acc <- w[0:128, k*1024:k*1024+256], x[0:128, k*2048:k*2048+1024]\n"));
    let again = psum_stdin(&["fmt", "-"], &text);
    assert_eq!(stdout(&again), text);
    let bad = psum_stdin(&["fmt", "-"], "arch trn9\n");
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        stderr(&bad).starts_with("<stdin>:2:1: error: expected a declaration"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn fmt_emits_and_reads_json() {
    let dir = scratch("json");
    let json = dir.join("m.json");
    let o = psum(&["fmt", GEMM, "--emit", "json", "-o", json.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(o.stdout, b"");
    let from_json = psum(&["fmt", json.to_str().unwrap()]);
    assert_eq!(stdout(&from_json), stdout(&psum(&["fmt", GEMM])));
    let text = std::fs::read_to_string(&json).unwrap();
    assert_eq!(
        stdout(&psum_stdin(&["fmt", "--emit", "json", "-"], &text)),
        text
    );
}

#[test]
fn input_errors_exit_1_with_position_and_caret_and_write_nothing() {
    let dir = scratch("err");
    let bad = dir.join("bad.psum");
    std::fs::write(
        &bad,
        "arch trn1\npsum acc [128, 2048]\nblock main {\n  act acc <- nope\n}\n",
    )
    .unwrap();
    let out = dir.join("out.psum");
    let o = psum(&["fmt", bad.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "{}:4:14: error: undefined tensor 'nope'\n  |\n4 |   act acc <- nope\n  |              ^^^^\n",
            bad.display()
        )
    );
    assert!(!out.exists());
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        1,
        "no temp files left behind"
    );
}

#[test]
fn missing_file_exits_1_and_usage_errors_exit_2() {
    let o = psum(&["fmt", "no/such.psum"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).starts_with("no/such.psum: error: "),
        "{}",
        stderr(&o)
    );
    assert_eq!(psum(&["fmt"]).status.code(), Some(2));
    assert_eq!(psum(&["frobnicate"]).status.code(), Some(2));
    assert_eq!(psum(&["fmt", GEMM, "--emit", "xml"]).status.code(), Some(2));
}

#[test]
fn output_replaces_an_existing_file_atomically() {
    let dir = scratch("out");
    let out = dir.join("o.psum");
    std::fs::write(&out, "old").unwrap();
    let o = psum(&["fmt", GEMM, "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        stdout(&psum(&["fmt", GEMM]))
    );
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
}

#[test]
fn arch_lists_generations_and_codenames() {
    let o = psum(&["arch"]);
    assert_eq!(o.status.code(), Some(0));
    insta::assert_snapshot!("arch_list", stdout(&o));
    let json: serde_json::Value =
        serde_json::from_slice(&psum(&["arch", "--json"]).stdout).unwrap();
    let names: Vec<&str> = json
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| {
            g["codenames"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap())
        })
        .collect();
    assert_eq!(
        names,
        [
            "tonga",
            "inf1",
            "inferentia",
            "sunda",
            "trainium",
            "trn1",
            "inf2",
            "cayman",
            "gen3",
            "core_v4"
        ]
    );
}

#[test]
fn arch_name_prints_the_records() {
    for name in ["inf1", "trn1", "gen3", "core_v4"] {
        let o = psum(&["arch", name]);
        assert_eq!(o.status.code(), Some(0));
        insta::assert_snapshot!(format!("arch_{name}"), stdout(&o));
    }
    let json: serde_json::Value =
        serde_json::from_slice(&psum(&["arch", "inf1", "--json"]).stdout).unwrap();
    let core = &json["board"]["device"]["core"];
    assert_eq!(
        core["psumbuf"],
        serde_json::json!({"numBanks": 4, "partSize": 64, "bankSize": 2048})
    );
    assert_eq!(
        core["statebuf"],
        serde_json::json!({"partitionSize": 98304, "numPartitions": 128, "midPartition": 64, "reservedSize": 16384})
    );
    assert_eq!(core["pe"], serde_json::json!({"rows": 128, "cols": 64}));
    assert_eq!(json["generation"], "gen1");
}

#[test]
fn arch_unknown_names_exit_1_with_hints() {
    let cases = [
        ("trn2", "did you mean 'cayman'?"),
        ("trn3", "did you mean 'core_v4'?"),
        ("trn1x", "did you mean 'trn1'?"),
        ("core_v5", "0 && Unknown architecture"),
    ];
    for (name, hint) in cases {
        let o = psum(&["arch", name]);
        assert_eq!(o.status.code(), Some(1));
        let err = stderr(&o);
        assert!(
            err.starts_with(&format!(
                "error: unknown architecture '{name}' (known: tonga, inf1,"
            )),
            "{err}"
        );
        assert!(err.contains(hint), "{err}");
    }
}

#[test]
fn every_example_formats() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "psum") {
            continue; // examples/nki/ holds kernels
        }
        let o = psum(&["fmt", p.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
}

/// `--keep-banks` goes through the pass list: `--report json` reports
/// the kept banks with the pass timings, `--verify-each` proves every
/// pass, and an unsound placement names the tiles.
#[test]
fn keep_banks_runs_the_pass_list() {
    let src = "arch trn1\n\npsum a [128, 2048] bank=5\npsum b [128, 2048] bank=B\n\
        sbuf w [128, 256] bf16\nsbuf x [128, 2048] bf16\nsbuf y [128, 2048]\n\
        dram out [128, 2048]\n\nblock main {\n  matmul a <- w, x[0:128, 0:1024]\n  \
        matmul b <- w, x[0:128, 1024:2048]\n  act y <- a, b\n  dma out <- y\n}\n";
    let sound = src.replace("bank=B", "bank=2");
    let args = [
        "compile",
        "-",
        "--keep-banks",
        "--verify-each",
        "--report",
        "json",
    ];
    let o = psum_stdin(&args, &sound);
    assert!(o.status.success(), "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let banks: Vec<_> = (report["tensors"].as_array().unwrap().iter())
        .map(|t| (t["name"].as_str().unwrap(), t["bank"].as_u64().unwrap()))
        .collect();
    assert_eq!(banks, [("a", 5), ("b", 2)]);
    assert_eq!(report["spilled"], serde_json::json!([]));
    assert_eq!(report["verify"]["checker"], "ok");
    let timings = report["timings_ms"].as_object().unwrap();
    let passes: Vec<&str> = timings.keys().map(String::as_str).collect();
    assert_eq!(
        passes,
        ["validate", "alloc", "rebank", "unroll", "legalize", "verify"]
    );
    let o = psum_stdin(&["compile", "-", "--keep-banks"], &sound);
    assert_eq!(
        stderr(&o),
        "psum compile --keep-banks: placement ok\n  verify    ok\n"
    );
    assert!(stdout(&o).contains("psum b [128, 2048] bank=2"));
    let o = psum_stdin(
        &["compile", "-", "--keep-banks"],
        &src.replace("bank=B", "bank=5"),
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "error: PSUM tiles a and b are both live at points 1..=2 and share bank 5\n"
    );
}
