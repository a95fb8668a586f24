//! `psum trace` as a user meets it (SPEC §9.1, §9.3): kernel files as they
//! are found, SPMD grids, limits, and one shape of error for every way a
//! kernel can fail (the fuzz findings of the tracer, as kernels of our own).

use super::kernels::{psum, scratch, text};

/// Traces `tests/nki_kernels/FILE` `FUNCTION` into `-o`: asserts exit 1, the
/// one error line on stderr (after any output of the kernel's own), and that
/// no file was written.
fn fails(file: &str, function: &str, args: &[&str], error: &str) {
    let dir = scratch(&format!("{file}-{function}"));
    let out = dir.join("out.psum");
    let path = format!("tests/nki_kernels/{file}");
    let mut all = vec!["trace", path.as_str(), function];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", out.to_str().unwrap()]);
    let o = psum(&all);
    let stderr = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr.lines().last(),
        Some(format!("{path}:{error}").as_str())
    );
    assert!(!stderr.contains("Traceback"), "{stderr}");
    assert!(!out.exists(), "no output file on a failure");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Traces and returns the program text; asserts success.
fn traces(file: &str, function: &str, args: &[&str]) -> (String, String) {
    let path = format!("tests/nki_kernels/{file}");
    let mut all = vec!["trace", path.as_str(), function];
    all.extend_from_slice(args);
    let o = psum(&all);
    assert!(o.status.success(), "{}", text(&o.stderr));
    (text(&o.stdout), text(&o.stderr))
}

const X: [&str; 2] = ["--arg", "x=float32[128,8]"];

#[test]
fn kernel_exceptions_and_refusals_name_their_line() {
    fails("trace_errors.py", "exits", &X, "11: error: SystemExit: 3");
    fails(
        "trace_errors.py",
        "nan_fill",
        &X,
        "16: error: the fill value nan is not a number psum's memset takes",
    );
    fails(
        "trace_errors.py",
        "nan_memset",
        &X,
        "22: error: the memset value nan is not a number psum's memset takes",
    );
    fails(
        "trace_errors.py",
        "negative_shape",
        &X,
        "28: error: dimension -1 of shape (-1, 8) is not positive",
    );
    fails(
        "trace_errors.py",
        "listed_target",
        &X,
        "44: error: platform_target=['trn2'] names no architecture (a name such as 'trn2')",
    );
}

#[test]
fn calls_bind_against_nki_signatures() {
    fails(
        "trace_errors.py",
        "missing_op",
        &X,
        "51: error: nki.isa.activation() is missing its argument 'op'",
    );
    fails(
        "trace_errors.py",
        "misspelt",
        &X,
        "56: error: nki.language.zeros() got an unexpected keyword argument 'bufer' \
         (it takes: shape, dtype, buffer, name, lazy_initialization)",
    );
    fails(
        "trace_errors.py",
        "bad_tile_position",
        &["--arg", "w=bfloat16[64,128]", "--arg", "x=bfloat16[64,128]"],
        "61: error: tile_position start row 32 is not a multiple of the tile_size row 64 within the 128x128 PE array",
    );
}

#[test]
fn syntax_errors_are_located_with_their_column() {
    fails(
        "trace_syntax_error.py",
        "kernel",
        &X,
        "7:16: error: SyntaxError: '(' was never closed",
    );
    fails(
        "trace_indentation_error.py",
        "kernel",
        &X,
        "8:6: error: IndentationError: unexpected indent",
    );
    fails(
        "trace_return_outside.py",
        "kernel",
        &X,
        "8:1: error: SyntaxError: 'return' outside function",
    );
}

#[test]
fn a_kernel_that_runs_too_long_or_too_big_is_stopped_at_its_line() {
    fails(
        "trace_errors.py",
        "forever",
        &["--arg", "x=float32[128,8]", "--timeout", "1"],
        "33: error: the kernel did not finish within 1 s (psum trace --timeout)",
    );
    fails(
        "trace_errors.py",
        "hungry",
        &["--arg", "x=float32[128,8]", "--memory-limit", "512"],
        "41: error: MemoryError: the kernel exceeded the tracer's memory limit of 512 MiB",
    );
}

#[test]
fn kernels_that_print_or_close_their_streams_still_trace() {
    for function in [
        "prints",
        "replaces_stdout",
        "closes_stdout",
        "closes_fd1",
        "callable_object",
    ] {
        let (program, stderr) = traces("trace_streams.py", function, &X);
        psum::text::parse(&program).unwrap();
        assert!(!stderr.contains("Traceback"), "{function}: {stderr}");
        if function == "prints" {
            assert_eq!(
                stderr, "debug (128, 8)\n",
                "the kernel's output goes to stderr"
            );
        }
    }
    let (program, _) = traces("trace_streams.py", "callable_object", &X);
    assert!(program.contains("block kernel {"), "{program}");
}

#[test]
fn a_kernel_file_as_found_traces_and_fails_only_where_it_uses_what_is_missing() {
    let (program, stderr) = traces(
        "trace_file_as_found.py",
        "kernel",
        &["--arg", "x=float32[128,512]"],
    );
    assert_eq!(stderr, "running the kernel at import\n");
    assert!(program.contains("act tile_1 <- tile"), "{program}");
    fails(
        "trace_file_as_found.py",
        "uses_torch",
        &["--arg", "x=float32[128,512]"],
        "18: error: torch_neuron_missing.relu: module 'torch_neuron_missing' is not installed \
         (imported at tests/nki_kernels/trace_file_as_found.py:3)",
    );
}

#[test]
fn framework_decorators_language_constants_private_modules_optional_tensors_and_operator_arguments()
{
    let k = "trace_frameworks.py";
    let x = ["--arg", "x=float32[128,8]"];
    let (program, _) = traces(
        k,
        "framework_jit",
        &["--arg", "x=float32[128,8]", "--arg", "out=float32[128,8]"],
    );
    assert!(
        program.contains("block framework_jit {\n  dma tile <- x"),
        "{program}"
    );
    let (program, _) = traces(k, "element_sizes", &x);
    assert!(program.contains("dma tile <- x[0:128, 0:16]"), "{program}");
    let (program, _) = traces(k, "caught", &x);
    assert!(program.contains("dma tile <- x"), "{program}");
    let (program, _) = traces(
        k,
        "optional_bias",
        &["--arg", "x=float32[128,8]", "--arg", "bias=float32[128,8]"],
    );
    assert!(program.contains("act t_2 <- t, t_1"), "{program}");
    let (program, _) = traces(
        k,
        "optional_bias",
        &["--arg", "x=float32[128,8]", "--kwarg", "bias=None"],
    );
    assert!(!program.contains("dram bias"), "{program}");
    let (program, _) = traces(
        k,
        "operator_argument",
        &["--arg", "x=float32[128,8]", "--kwarg", "op=nl.maximum"],
    );
    assert!(program.contains("act tile_1 <- tile"), "{program}");
    let (program, _) = traces(k, "running_max", &x);
    assert!(
        program.contains("memset m = -340282346638528860000000000000000000000 "),
        "{program}"
    );
    for bad in ["op=nl.nothing", "op=os.system"] {
        fails(
            k,
            "operator_argument",
            &["--arg", "x=float32[128,8]", "--kwarg", bad],
            &format!(" error: --kwarg {bad} is neither a Python literal nor a name in numpy or the NKI modules")[..],
        );
    }
}

#[test]
fn a_program_that_would_not_validate_is_refused_at_the_kernel_line() {
    fails(
        "invalid_layout.py",
        "kernel",
        &["--arg", "w=bfloat16[128,256]", "--arg", "x=bfloat16[128,512]"],
        "11: error: the traced program is not valid: psum tensor 'tile' has 256 partitions, but trn1 psum has 128",
    );
}

#[test]
fn tile_position_is_the_pe_row_and_column_it_starts_at() {
    let (program, _) = traces(
        "tile_position.py",
        "kernel",
        &[
            "--arg",
            "w=bfloat16[128,128]",
            "--arg",
            "x=bfloat16[128,512]",
        ],
    );
    assert!(
        program.contains("matmul acc[0:64, 0:2048] <- s[0:64, 0:128], m loc="),
        "{program}"
    );
    assert!(
        program.contains("matmul acc[64:128, 0:2048] <- s_1[0:64, 0:128], m_1 pos=64,0 loc="),
        "{program}"
    );
    let path = scratch("tile-position").join("p.psum");
    std::fs::write(&path, &program).unwrap();
    let o = psum(&["compile", path.to_str().unwrap(), "--report", "json"]);
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["verify"]["checker"], "ok", "{}", text(&o.stderr));
    assert_eq!(report["verify"]["simulator"], "ok");
}

#[test]
fn an_spmd_grid_traces_one_program_of_it() {
    let ab = [
        "--arg",
        "a=float32[256,1024]",
        "--arg",
        "b=float32[256,1024]",
    ];
    let mut args = ab.to_vec();
    args.extend_from_slice(&["--grid", "2,2", "--program-id", "1,1"]);
    let (program, stderr) = traces("spmd_rows.py", "kernel", &args);
    assert_eq!(stderr, "");
    assert!(
        program.contains("dma t <- a[128:256, 2048:4096]"),
        "{program}"
    );
    let (program, stderr) = traces("spmd_rows.py", "kernel", &ab);
    assert!(program.contains("dma t <- a[0:128, 0:2048]"), "{program}");
    assert_eq!(
        stderr,
        "tests/nki_kernels/spmd_rows.py:9: warning: the kernel reads its SPMD program id: traced as program 0 \
         of a 1-program grid (give --grid)\n"
    );
    let o = psum(&[
        "trace",
        "tests/nki_kernels/spmd_rows.py",
        "kernel",
        "--grid",
        "2,0",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let mut args = ab.to_vec();
    args.extend_from_slice(&["--grid", "2,2", "--program-id", "2,0"]);
    fails(
        "spmd_rows.py",
        "kernel",
        &args,
        " error: --program-id (2, 0) is not an instance of the grid (2, 2)",
    );
}

#[test]
fn product_names_trace_as_their_codenames() {
    for (name, codename) in [("trn2", "cayman"), ("trn3", "core_v4"), ("trn1", "trn1")] {
        let (program, _) = traces(
            "spmd_rows.py",
            "kernel",
            &[
                "--arg",
                "a=float32[128,512]",
                "--arg",
                "b=float32[128,512]",
                "--arch",
                name,
            ],
        );
        assert!(
            program.starts_with(&format!("arch {codename}\n")),
            "{name}: {program}"
        );
    }
}

#[test]
fn the_api_listing_has_every_public_name() {
    let o = psum(&["trace", "--api"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let listing = text(&o.stdout);
    let lines: Vec<&str> = listing.lines().collect();
    for l in &lines {
        let fields: Vec<&str> = l.split('\t').collect();
        match fields.as_slice() {
            [_, "implemented"] => {}
            [_, "refused", reason] => assert!(!reason.is_empty(), "{l}"),
            _ => panic!("malformed line {l:?}"),
        }
    }
    let status = |name: &str| {
        lines
            .iter()
            .find(|l| l.split('\t').next() == Some(name))
            .map(|l| l.split('\t').nth(1).unwrap().to_string())
    };
    assert_eq!(status("nki.isa.nc_matmul").as_deref(), Some("implemented"));
    assert_eq!(
        status("nki.language.dynamic_range").as_deref(),
        Some("refused")
    );
    assert_eq!(
        status("nki.collectives.all_reduce").as_deref(),
        Some("refused")
    );
    // The reference's own list, where it is at hand (the NKI corpus beside the repository).
    let tsv = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/nki-corpus/API.tsv");
    if let Ok(names) = std::fs::read_to_string(tsv) {
        for row in names.lines().filter(|l| !l.starts_with('#')) {
            let name = row.replace('\t', ".");
            assert!(
                status(&name).is_some(),
                "{name} is neither implemented nor refused"
            );
        }
    }
}
