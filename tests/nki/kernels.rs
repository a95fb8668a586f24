//! `psum trace` (SPEC §9): NKI kernels under `examples/nki/` are traced,
//! compiled and verified; the traced programs are snapshots; refusals and
//! kernel exceptions name the kernel line.

use psum::ir::Module;
use psum::pipeline::{self, CompileOptions};
use std::process::Command;

#[path = "../support/cli.rs"]
mod cli;
pub(crate) use cli::{psum, scratch, text};

/// Traces `examples/nki/FILE` `FUNCTION` with `args`; the program text.
fn trace(file: &str, function: &str, args: &[&str]) -> String {
    let path = format!("examples/nki/{file}");
    let mut all = vec!["trace", path.as_str(), function];
    all.extend_from_slice(args);
    let out = psum(&all);
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

fn assert_contains(program: &str, needles: &[&str]) {
    for needle in needles {
        assert!(program.contains(needle), "{needle} in\n{program}");
    }
}

/// Compiles a traced program and checks that the verifier proves it.
pub(crate) fn compile_verified(program: &str) -> pipeline::Compiled {
    let m: Module = psum::text::parse(program).unwrap().module;
    psum::validate::validate(&m).unwrap();
    let c = pipeline::compile(&m, &CompileOptions::default()).unwrap();
    let v = c.verify.as_ref().unwrap();
    assert!(v.is_ok(), "{:?}", v.first_error());
    c
}

#[test]
fn tiled_matmul_folds_its_loops_and_verifies() {
    let p = trace(
        "tiled_matmul.py",
        "tiled_matmul",
        &[
            "--arg",
            "lhsT=bfloat16[512,256]",
            "--arg",
            "rhs=bfloat16[512,1024]",
        ],
    );
    insta::assert_snapshot!("tiled_matmul", p);
    let c = compile_verified(&p);
    assert_eq!(c.module.insts.len(), 2 * 2 * (4 * 3 + 2));
    assert_eq!(c.matmul.groups, 4);
}

#[test]
fn blocked_matmul_keeps_four_accumulators_live_across_k() {
    let p = trace(
        "blocked_matmul.py",
        "blocked_matmul",
        &[
            "--arg",
            "lhsT=bfloat16[256,256]",
            "--arg",
            "rhs=bfloat16[256,2048]",
        ],
    );
    insta::assert_snapshot!("blocked_matmul", p);
    assert!(
        p.starts_with("arch cayman\n"),
        "platform_target=trn2 is cayman"
    );
    let c = compile_verified(&p);
    let banks: Vec<_> = ["acc_b0", "acc_b1", "acc_b2", "acc_b3"]
        .iter()
        .map(|n| {
            c.alloc
                .module
                .tensor(c.alloc.module.tensor_by_name(n).unwrap())
                .bank
        })
        .collect();
    assert_eq!(
        banks,
        [Some(3), Some(2), Some(1), Some(0)],
        "four distinct banks"
    );
}

#[test]
fn attention_forward_transposes_on_the_pe_and_reduces() {
    let p = trace(
        "attention_fwd.py",
        "attention_fwd",
        &[
            "--arg",
            "q=bfloat16[128,256]",
            "--arg",
            "k=bfloat16[128,1024]",
            "--arg",
            "v=bfloat16[1024,128]",
        ],
    );
    insta::assert_snapshot!("attention_fwd", p);
    assert_contains(
        &p,
        &[
            "matmul.t p_t_psum <- ",
            "engine row_max <- probs",
            "psum scores_b1 ",
        ],
    );
    compile_verified(&p);
}

#[test]
fn mx_matmul_on_trn3_accumulates_into_bf16_psum() {
    let p = trace(
        "mx_matmul.py",
        "mx_matmul",
        &[
            "--arg",
            "a=float8_e4m3fn_x4[256,128]",
            "--arg",
            "b=float8_e4m3fn_x4[256,512]",
            "--arg",
            "a_scale=uint8[32,128]",
            "--arg",
            "b_scale=uint8[32,512]",
        ],
    );
    insta::assert_snapshot!("mx_matmul", p);
    assert!(p.contains("psum acc [128, 1024] bf16"));
    compile_verified(&p);
}

#[test]
fn direct_allocation_is_traced_with_its_banks() {
    let p = trace(
        "direct_alloc.py",
        "direct_alloc",
        &[
            "--arg",
            "x=bfloat16[256,1024]",
            "--arg",
            "w=bfloat16[128,128]",
        ],
    );
    insta::assert_snapshot!("direct_alloc", p);
    assert_contains(
        &p,
        &[
            "acc_b0 [128, 2048] bank=2",
            "acc_b1 [128, 2048] bank=3",
            "tp [128, 512] bank=7",
        ],
    );
    compile_verified(&p);
}

#[test]
fn json_output_and_kwargs() {
    let dir = std::env::temp_dir().join(format!("psum-nki-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("blocked.json");
    let o = psum(&[
        "trace",
        "examples/nki/blocked_matmul.py",
        "blocked_matmul",
        "--arg",
        "lhsT=bfloat16[128,128]",
        "--arg",
        "rhs=bfloat16[128,1024]",
        "--kwarg",
        "BLOCKS=2",
        "--arch",
        "trn1",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let m = psum::text::parse_json(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(m.arch, "trn1");
    let psum_tiles: Vec<_> = m
        .tensors
        .values()
        .filter(|t| t.mem == psum::ir::Mem::Psum)
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(psum_tiles, ["acc_b0", "acc_b1"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Traces `tests/nki_kernels/FILE` `kernel` into `-o OUT`; asserts exit 1,
/// the one-line error, and that no output file was written.
fn refused(file: &str, args: &[&str], error: &str) {
    let dir = std::env::temp_dir().join(format!("psum-nki-refuse-{}-{file}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("out.psum");
    let path = format!("tests/nki_kernels/{file}");
    let mut all = vec!["trace", path.as_str(), "kernel"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", out.to_str().unwrap()]);
    let o = psum(&all);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert_eq!(text(&o.stderr), format!("{path}:{error}\n"));
    assert!(o.stdout.is_empty());
    assert!(!out.exists(), "no output file on a refusal");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unsupported_api_is_refused_at_its_line() {
    refused(
        "refuse_api.py",
        &["--arg", "x=float32[128,64]"],
        "10: error: nki.collectives.all_reduce is not supported by psum trace: collective communication \
         between NeuronCores (the program is one core's)",
    );
}

#[test]
fn a_dynamic_loop_is_refused_at_its_line() {
    refused(
        "refuse_dynamic_loop.py",
        &["--arg", "x=float32[128,64]", "--arg", "count=int32[1,1]"],
        "10: error: a dynamic loop (sequential_range over a tile's value)",
    );
}

#[test]
fn a_data_dependent_index_is_refused_at_its_line() {
    refused(
        "refuse_data_index.py",
        &["--arg", "x=float32[256,64]", "--arg", "rows=int32[128,1]"],
        "10: error: an indirect (data-dependent) index into a PSUM tensor",
    );
}

#[test]
fn a_kernel_exception_names_the_kernel_frame() {
    refused(
        "raises.py",
        &["--arg", "x=float32[100,64]"],
        "7: error: AssertionError: K must be a multiple of 128, got 100",
    );
}

#[test]
fn malformed_arguments_are_usage_errors() {
    for bad in ["x=float32[100]x", "x=float32", "=float32[4]"] {
        let o = psum(&[
            "trace",
            "tests/nki_kernels/raises.py",
            "kernel",
            "--arg",
            bad,
        ]);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        assert!(text(&o.stderr).contains(&format!("--arg '{bad}'")), "{bad}");
    }
    let o = psum(&[
        "trace",
        "tests/nki_kernels/raises.py",
        "kernel",
        "--kwarg",
        "x",
    ]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_missing_or_unknown_parameter_is_named() {
    let o = psum(&["trace", "tests/nki_kernels/raises.py", "kernel"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stderr),
        "tests/nki_kernels/raises.py: error: parameter 'x' of kernel needs --arg x=DTYPE[D0,...] or --kwarg x=VALUE\n"
    );
    let o = psum(&[
        "trace",
        "tests/nki_kernels/raises.py",
        "kernel",
        "--arg",
        "x=float32[128,4]",
        "--arg",
        "y=float32[1,1]",
    ]);
    assert_eq!(
        text(&o.stderr),
        "tests/nki_kernels/raises.py: error: kernel has no parameter 'y' (its parameters: x)\n"
    );
}

#[test]
fn a_missing_interpreter_is_reported() {
    let o = Command::new(env!("CARGO_BIN_EXE_psum"))
        .args([
            "trace",
            "tests/nki_kernels/raises.py",
            "kernel",
            "--arg",
            "x=float32[128,4]",
        ])
        .env("PSUM_PYTHON", "/nonexistent/python")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("cannot run /nonexistent/python"));
}

/// Traces `tests/nki_kernels/FILE` `kernel` with `args` to a temp file of
/// its own: (program, trace stderr, path).
pub(crate) fn trace_lint_kernel(file: &str, args: &[&str]) -> (String, String, std::path::PathBuf) {
    static TRACED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = TRACED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("psum-nki-lint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(format!("{n}-{}", file.replace(".py", ".psum")));
    let path = format!("tests/nki_kernels/{file}");
    let mut all = vec!["trace", path.as_str(), "kernel"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", out.to_str().unwrap()]);
    let o = psum(&all);
    assert!(o.status.success(), "{}", text(&o.stderr));
    (std::fs::read_to_string(&out).unwrap(), text(&o.stderr), out)
}

pub(crate) const W_X1024: [&str; 4] = [
    "--arg",
    "w=bfloat16[128,128]",
    "--arg",
    "x=bfloat16[128,1024]",
];

#[test]
fn keep_banks_checks_a_kernels_own_placement() {
    let (p, _, path) = trace_lint_kernel("keep_banks_overlap.py", &W_X1024);
    insta::assert_snapshot!("keep_banks_overlap", p);
    let o = psum(&["compile", "--keep-banks", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    assert_eq!(
        text(&o.stderr),
        "error: PSUM tiles acc_b0 (tests/nki_kernels/keep_banks_overlap.py:12) and acc_b1 \
         (tests/nki_kernels/keep_banks_overlap.py:12) are both live at points 4..=5 and share bank 1\n"
    );
    compile_verified(&p);

    let p = trace(
        "direct_alloc.py",
        "direct_alloc",
        &[
            "--arg",
            "x=bfloat16[256,1024]",
            "--arg",
            "w=bfloat16[128,128]",
        ],
    );
    let path = path.with_file_name("direct_alloc.psum");
    std::fs::write(&path, &p).unwrap();
    let o = psum(&["compile", "--keep-banks", path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stderr),
        "psum compile --keep-banks: placement ok\n  verify    ok\n"
    );
    let kept = psum::text::parse(&text(&o.stdout)).unwrap().module;
    let bank = |n: &str| kept.tensor(kept.tensor_by_name(n).unwrap()).bank;
    assert_eq!(
        (bank("acc_b0"), bank("acc_b1"), bank("tp")),
        (Some(2), Some(3), Some(7))
    );
    assert!(p.contains("bank=7"));
}
