//! `psum trace` (SPEC §9): NKI kernels under `examples/nki/` are traced,
//! compiled and verified; the traced programs are snapshots; refusals and
//! kernel exceptions name the kernel line.

use psum::ir::Module;
use psum::pipeline::{self, CompileOptions};
use std::process::{Command, Output};

/// Runs `psum ARGS` from the repository root.
fn psum(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_psum"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).unwrap()
}

/// Traces `examples/nki/FILE` `FUNCTION` with `args`; the program text.
fn trace(file: &str, function: &str, args: &[&str]) -> String {
    let path = format!("examples/nki/{file}");
    let mut all = vec!["trace", path.as_str(), function];
    all.extend_from_slice(args);
    let out = psum(&all);
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

/// Compiles a traced program and checks that the verifier proves it.
fn compile_verified(program: &str) -> pipeline::Compiled {
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
        &["--arg", "lhsT=bfloat16[512,256]", "--arg", "rhs=bfloat16[512,1024]"],
    );
    insta::assert_snapshot!("tiled_matmul", p);
    let c = compile_verified(&p);
    assert_eq!(c.module.insts.len(), 2 * 2 * (4 * 3 + 2));
    assert_eq!(c.matmul.groups, 4);
}
