//! The PSUM hazard lints (SPEC §9.4) on kernels of `tests/nki_kernels/`:
//! each rule warns, with its exact message at the kernel line, on the
//! NeuronCore versions its documentation sentence names, and nothing warns
//! on the patterns the documentation calls valid (the `+=` form first).

use super::kernels::{compile_verified, psum, text, trace_lint_kernel, W_X1024};
use std::path::Path;

/// `psum lint` of a traced kernel prints `lines` (stdout) and exits with `code`.
fn assert_lints(program: &Path, lines: &[&str], code: i32) {
    let o = psum(&["lint", program.to_str().unwrap()]);
    let expected: String = lines.iter().map(|l| format!("{l}\n")).collect();
    assert_eq!(text(&o.stdout), expected);
    assert_eq!(o.status.code(), Some(code), "{}", text(&o.stderr));
}

/// Traces `tests/nki_kernels/FILE` with `args` for `arch`.
fn traced(file: &str, arch: &str, args: &[&str]) -> (String, String, std::path::PathBuf) {
    let mut all = args.to_vec();
    all.extend_from_slice(&["--arch", arch]);
    trace_lint_kernel(file, &all)
}

/// The warning line of `line`, with a newline (as stderr prints it).
fn warned(line: &str) -> String {
    format!("{line}\n")
}

const WX: [&str; 4] = [
    "--arg",
    "w=bfloat16[128,128]",
    "--arg",
    "x=bfloat16[256,512]",
];

#[test]
fn the_zeros_and_iadd_form_is_no_hazard_and_keeps_its_memset() {
    let args = [
        "--arg",
        "lhsT=bfloat16[256,128]",
        "--arg",
        "rhs=bfloat16[256,512]",
    ];
    for arch in ["trn1", "cayman", "core_v4"] {
        let (p, stderr, path) = traced("lint_zeros_iadd.py", arch, &args);
        assert_eq!(stderr, "", "{arch}");
        assert_lints(&path, &[], 0);
        if arch == "trn1" {
            insta::assert_snapshot!("lint_zeros_iadd", p);
        }
        // SPEC §4.3.4: the memset stays and the group accumulates onto it.
        let c = compile_verified(&p);
        assert_eq!(c.matmul.memsets_inserted, 0);
        let out = psum::text::print(&c.module);
        assert!(out.contains("memset res_psum = 0"), "{out}");
        assert!(!out.contains("start"), "{out}");
        let o = psum(&["compile", path.to_str().unwrap()]);
        assert!(o.status.success() && !text(&o.stderr).contains("warning"));
    }
}

#[test]
fn accumulate_true_onto_a_memset_or_a_copy_on_neuroncore_v2_v3() {
    let args = [&WX[..], &["--arg", "bias=float32[128,512]"]].concat();
    let line = |head: u32, init: &str, arch: &str| {
        format!(
            "tests/nki_kernels/lint_accumulate_onto_init.py:21: warning: %{head} (matmul) accumulates \
             (accumulate=true) onto PSUM acc, which {init} initialised; on {arch} a matmul accumulating \
             onto PSUM a non-matmul instruction initialised is undefined: let the first matmul overwrite \
             (accumulate=false)"
        )
    };
    let memset = line(
        3,
        "%0 (memset at tests/nki_kernels/lint_accumulate_onto_init.py:14)",
        "trn1",
    );
    let (p, stderr, path) = traced("lint_accumulate_onto_init.py", "trn1", &args);
    insta::assert_snapshot!("lint_accumulate_onto_init", p);
    assert_eq!(stderr, warned(&memset));
    assert_lints(&path, &[&memset], 0);
    let o = psum(&["compile", path.to_str().unwrap()]);
    assert!(
        text(&o.stderr).starts_with(&warned(&memset)),
        "compile warns on traced programs"
    );
    // psum's meaning does not read accumulate= (SPEC §2.3): it still verifies.
    compile_verified(&p);

    let copy_args = [&args[..], &["--kwarg", "init=\"copy\""]].concat();
    let (_, stderr, _) = traced("lint_accumulate_onto_init.py", "cayman", &copy_args);
    let copy = line(
        4,
        "%1 (copy at tests/nki_kernels/lint_accumulate_onto_init.py:16)",
        "cayman",
    );
    assert_eq!(stderr, warned(&copy));

    let (_, stderr, _) = traced("lint_accumulate_onto_init.py", "core_v4", &args);
    assert_eq!(stderr, "", "NeuronCore-v4 accumulates onto a memset");
    let overwrite = [&args[..], &["--kwarg", "overwrite_first=True"]].concat();
    let (p, stderr, _) = traced("lint_accumulate_onto_init.py", "trn1", &overwrite);
    assert_eq!(stderr, "", "the first matmul overwrites");
    assert!(p.contains("accumulate=false") && p.contains("accumulate=true"));
}

#[test]
fn accumulate_true_onto_nothing_on_every_version() {
    let line = |arch: &str| {
        let (p, _, path) = traced("lint_uninit_accumulate.py", arch, &WX);
        let warning = "tests/nki_kernels/lint_uninit_accumulate.py:14: warning: %2 (matmul) accumulates \
                       (accumulate=true) onto PSUM acc, which nothing wrote before; accumulating onto \
                       uninitialised PSUM is undefined: let the first matmul overwrite (accumulate=false)";
        assert_lints(&path, &[warning], 0);
        p
    };
    let p = line("trn1");
    insta::assert_snapshot!("lint_uninit_accumulate", p);
    compile_verified(&p);
    line("core_v4");
}

/// `psum trace` of `tests/nki_kernels/FILE` for `arch` refuses at the kernel
/// line: the traced program would not validate (SPEC §9.3).
fn refused(file: &str, arch: &str, args: &[&str], error: &str) {
    let path = format!("tests/nki_kernels/{file}");
    let mut all = vec!["trace", path.as_str(), "kernel", "--arch", arch];
    all.extend_from_slice(args);
    let o = psum(&all);
    assert_eq!(o.status.code(), Some(1), "{arch}");
    assert!(o.stdout.is_empty());
    assert_eq!(text(&o.stderr), warned(error), "{arch}");
}

/// Writes `program` with its `arch` line replaced by `arch` to a scratch
/// file and returns its path: a program as a user may write it, which `psum
/// lint` reads before it validates.
fn rewritten_for(program: &str, arch: &str, name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("psum-nki-lints-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (_, rest) = program.split_once('\n').unwrap();
    let path = dir.join(format!("{name}-{arch}.psum"));
    std::fs::write(&path, format!("arch {arch}\n{rest}")).unwrap();
    path
}

#[test]
fn matmul_destination_dtypes_by_version() {
    let w_x512 = [
        "--arg",
        "w=bfloat16[128,128]",
        "--arg",
        "x=bfloat16[128,512]",
    ];
    let (p, stderr, _) = traced("lint_dst_dtype.py", "core_v4", &w_x512);
    insta::assert_snapshot!("lint_dst_dtype", p);
    assert_eq!(stderr, "");
    compile_verified(&p);
    for arch in ["trn1", "cayman"] {
        refused(
            "lint_dst_dtype.py",
            arch,
            &w_x512,
            "tests/nki_kernels/lint_dst_dtype.py:11: error: the traced program is not valid: %2 (matmul at \
             tests/nki_kernels/lint_dst_dtype.py:11): matmul destination 'acc' is bf16, not f32",
        );
        let path = rewritten_for(&p, arch, "dst_dtype");
        let o = psum(&["lint", path.to_str().unwrap()]);
        assert_eq!(
            text(&o.stdout),
            format!(
                "tests/nki_kernels/lint_dst_dtype.py:11: warning: %2 (matmul) writes bf16 PSUM acc; the \
                 matmul destination is f32 on {arch}\n"
            )
        );
        assert_eq!(o.status.code(), Some(1), "validation rejects it");
        assert!(text(&o.stderr).contains(
            "error: %2 (matmul at tests/nki_kernels/lint_dst_dtype.py:11): matmul destination 'acc' is bf16, not f32"
        ));
    }

    // The transpose mode of NeuronCore-v3 writes the data's bf16.
    let x = ["--arg", "x=bfloat16[128,128]"];
    let (_, stderr, _) = traced("lint_transpose_dtype.py", "trn1", &x);
    assert_eq!(
        stderr,
        "tests/nki_kernels/lint_transpose_dtype.py:12: warning: %1 (matmul.t) writes bf16 PSUM t; the \
         matmul destination is f32 on trn1\n"
    );
    let (p, stderr, _) = traced("lint_transpose_dtype.py", "cayman", &x);
    assert_eq!(stderr, "");
    assert!(p.contains("matmul.t t <- tile, identity"));
}

#[test]
fn a_matmul_across_a_bank_on_neuroncore_v2_v3() {
    let (p, stderr, _) = traced("lint_wide_matmul.py", "core_v4", &W_X1024);
    insta::assert_snapshot!("lint_wide_matmul", p);
    assert_eq!(stderr, "", "a NeuronCore-v4 matmul may write eight banks");
    compile_verified(&p);
    for arch in ["trn1", "cayman"] {
        refused(
            "lint_wide_matmul.py",
            arch,
            &W_X1024,
            &format!(
                "tests/nki_kernels/lint_wide_matmul.py:11: error: the traced program is not valid: %2 (matmul \
                 at tests/nki_kernels/lint_wide_matmul.py:11): matmul N=1024 exceeds 512 (one bank on {arch}; \
                 only gen4 allows 4096)"
            ),
        );
        let path = rewritten_for(&p, arch, "wide_matmul");
        let warning = format!(
            "tests/nki_kernels/lint_wide_matmul.py:11: warning: %2 (matmul) writes 4096 bytes per partition \
             of acc across a bank boundary; a matmul output stays inside one 2 KiB bank on {arch}"
        );
        assert_lints(&path, &[&warning], 1);
    }
}

#[test]
fn a_psum_tile_over_two_banks_is_no_hazard() {
    let (p, stderr, path) = traced("lint_tile_two_banks.py", "trn1", &W_X1024);
    insta::assert_snapshot!("lint_tile_two_banks", p);
    assert_eq!(stderr, "");
    assert_lints(&path, &[], 0);
    compile_verified(&p);
}

#[test]
fn affine_iterations_writing_one_psum_location() {
    let x = ["--arg", "x=float32[512,512]"];
    let (p, stderr, path) = traced("lint_affine_same_location.py", "trn1", &x);
    insta::assert_snapshot!("lint_affine_same_location", p);
    let warning = "tests/nki_kernels/lint_affine_same_location.py:15: warning: affine_range iterations write \
                   the same PSUM location stage (not by accumulation); use sequential_range";
    assert_eq!(stderr, warned(warning));
    assert_lints(&path, &[warning], 0);
    let o = psum(&["compile", path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stderr).lines().next(), Some(warning));
    compile_verified(&p);
    let sequential = [&x[..], &["--kwarg", "sequential=True"]].concat();
    let (p, stderr, _) = traced("lint_affine_same_location.py", "trn1", &sequential);
    assert_eq!(stderr, "");
    assert!(p.contains("loop i 0..4 {"), "{p}");
}

#[test]
fn an_unrolled_affine_loop_is_checked_with_the_iterations_the_tracer_reports() {
    let (p, stderr, path) = traced(
        "lint_affine_unrolled.py",
        "trn1",
        &["--arg", "x=float32[256,512]"],
    );
    insta::assert_snapshot!("lint_affine_unrolled", p);
    // Line 19 writes the stage tile iteration 0 zeroed at line 17; the tile
    // each iteration allocates (line 14) is its own.
    assert_eq!(
        stderr,
        "tests/nki_kernels/lint_affine_unrolled.py:19: warning: affine_range iterations write the same PSUM \
         location stage (not by accumulation); use sequential_range\n"
    );
    // The written program no longer holds the loop.
    assert_lints(&path, &[], 0);
    compile_verified(&p);
}

#[test]
fn associative_reductions_in_affine_loops_are_no_hazard() {
    let (p, stderr, path) = traced(
        "lint_affine_reduction.py",
        "trn1",
        &["--arg", "x=float32[512,512]"],
    );
    insta::assert_snapshot!("lint_affine_reduction", p);
    assert!(p.contains("loop i 0..4 affine") && p.contains("act total <- total, tile_1"));
    assert_eq!(stderr, "");
    assert_lints(&path, &[], 0);
    compile_verified(&p);
}
