//! One test per input error (SPEC §2.2–2.4, §2.6): each asserts the exact
//! message and the `line:col` it points at, through `source::load`.

use psum::source::load;

/// Loads `src` and returns (line, col, message) of the error.
fn error(src: &str) -> (usize, usize, String) {
    let d = load("t.psum", src.as_bytes()).expect_err("input should be rejected");
    let (line, col) = d.position.expect("error has a position");
    (line, col, d.message)
}

/// A valid program with `body` as the block body (lines 9.. of the file).
fn program(arch: &str, body: &str) -> String {
    format!(
        "arch {arch}

psum acc [128, 2048]
sbuf w [128, 4096] bf16
sbuf x [128, 8192] bf16
sbuf y [128, 2048]

block main {{
{body}
}}
"
    )
}

const GEMM: &str = "  loop k 0..4 {
    matmul acc <- w[0:128, k*1024 : k*1024+256], x[0:128, k*2048 : k*2048+1024]
  }
  act y <- acc";

#[test]
fn valid_program_loads() {
    let l = load("t.psum", program("trn1", GEMM).as_bytes()).unwrap();
    assert_eq!(l.module.insts.len(), 2);
}

#[test]
fn unknown_arch() {
    let (line, col, msg) = error(&program("trn2", GEMM));
    assert_eq!((line, col), (1, 6));
    assert_eq!(
        msg,
        "unknown architecture 'trn2' (known: tonga, inf1, inferentia, sunda, trainium, trn1, inf2, cayman, gen3, core_v4); did you mean 'cayman'?"
    );
}

#[test]
fn duplicate_tensor_name() {
    let src =
        program("trn1", GEMM).replace("sbuf y [128, 2048]", "sbuf y [128, 2048]\nsbuf w [128, 64]");
    assert_eq!(error(&src), (7, 6, "duplicate tensor name 'w'".to_string()));
}

#[test]
fn undefined_tensor() {
    let src = program("trn1", "  act y <- acc2");
    assert_eq!(error(&src), (9, 12, "undefined tensor 'acc2'".to_string()));
}

#[test]
fn access_out_of_bounds_names_bound_and_iteration() {
    let src = program("trn1", &GEMM.replace("0..4", "0..5"));
    assert_eq!(
        error(&src),
        (
            10,
            37,
            "%0 (matmul): access w[0:128, k*1024:k*1024+256] is out of bounds: b1 = k*1024+256 is 4352 at k=4, beyond the 4096 bytes of 'w'"
                .to_string()
        )
    );
}

#[test]
fn access_below_zero() {
    let src = program(
        "trn1",
        "  loop j 0..2 {\n    memset acc[0:128, -j*4 : -j*4+8] = 0\n  }",
    );
    assert_eq!(
        error(&src),
        (
            10,
            23,
            "%0 (memset): access acc[0:128, -j*4:-j*4+8] is out of bounds: b0 = -j*4 is -4 at j=1, below 0"
                .to_string()
        )
    );
}

#[test]
fn bytes_not_a_multiple_of_the_dtype() {
    let src = program("trn1", GEMM).replace("sbuf w [128, 4096] bf16", "sbuf w [128, 4095] bf16");
    assert_eq!(
        error(&src),
        (
            4,
            6,
            "tensor 'w': 4095 bytes per partition is not a multiple of the bf16 size (2 bytes)"
                .to_string()
        )
    );
}

#[test]
fn byte_bound_not_a_multiple_of_the_dtype() {
    let src = program(
        "trn1",
        "  loop k 0..4 {\n    memset y[0:128, k*6 : k*6+4] = 1\n  }",
    );
    assert_eq!(
        error(&src),
        (
            10,
            21,
            "%0 (memset): byte bound b0 = k*6 of y[0:128, k*6:k*6+4] is 6 at k=1, not a multiple of the f32 size (4 bytes)"
                .to_string()
        )
    );
}

#[test]
fn extent_varying_with_the_loop() {
    let src = program(
        "trn1",
        "  loop k 0..4 {\n    memset y[0:128, 0 : k*4+4] = 1\n  }",
    );
    assert_eq!(
        error(&src),
        (
            10,
            25,
            "%0 (memset): the byte extent of y[0:128, 0:k*4+4] varies with the loop variables"
                .to_string()
        )
    );
}

#[test]
fn matmul_destination_not_psum() {
    let src = program("trn1", "  matmul y <- w[0:128, 0:256], x[0:128, 0:1024]");
    assert_eq!(
        error(&src),
        (
            9,
            10,
            "%0 (matmul): matmul destination 'y' is in sbuf, not PSUM".to_string()
        )
    );
}

#[test]
fn matmul_k_disagrees() {
    let src = program("trn1", "  matmul acc <- w[0:128, 0:256], x[0:64, 0:1024]");
    assert_eq!(
        error(&src),
        (
            9,
            34,
            "%0 (matmul): matmul shapes disagree: stationary w[0:128, 0:256] has K=128 partitions but moving x[0:64, 0:1024] has K=64"
                .to_string()
        )
    );
}

#[test]
fn matmul_m_disagrees() {
    let src = program(
        "trn1",
        "  matmul acc[0:64, 0:2048] <- w[0:128, 0:256], x[0:128, 0:1024]",
    );
    assert_eq!(
        error(&src),
        (
            9,
            10,
            "%0 (matmul): matmul shapes disagree: destination acc[0:64, 0:2048] has 64 partitions but stationary w[0:128, 0:256] has M=128 elements"
                .to_string()
        )
    );
}

#[test]
fn matmul_n_disagrees() {
    let src = program("trn1", "  matmul acc <- w[0:128, 0:256], x[0:128, 0:512]");
    assert_eq!(
        error(&src),
        (
            9,
            10,
            "%0 (matmul): matmul shapes disagree: destination acc has 512 elements but moving x[0:128, 0:512] has N=256"
                .to_string()
        )
    );
}

fn wide(arch: &str) -> String {
    program(arch, "  matmul acc <- w[0:128, 0:256], x[0:128, 0:2048]")
        .replace("psum acc [128, 2048]", "psum acc [128, 4096]")
}

#[test]
fn matmul_n_above_512_before_gen4() {
    assert_eq!(
        error(&wide("trn1")),
        (
            9,
            34,
            "%0 (matmul): matmul N=1024 exceeds 512 (one bank on trn1; only gen4 allows 4096)"
                .to_string()
        )
    );
}

#[test]
fn matmul_n_up_to_4096_on_gen4() {
    assert!(load("t.psum", wide("core_v4").as_bytes()).is_ok());
    let src = program(
        "core_v4",
        "  matmul acc <- w[0:128, 0:256], x[0:128, 0:8192]",
    )
    .replace("psum acc [128, 2048]", "psum acc [128, 32768]")
    .replace("sbuf x [128, 8192] bf16", "sbuf x [128, 8192] fp8");
    assert_eq!(
        error(&src).2,
        "%0 (matmul): matmul N=8192 exceeds 4096 (eight banks on core_v4)"
    );
}

#[test]
fn matmul_k_above_pe_rows() {
    let src = program("trn1", "  matmul acc <- big[0:256, 0:256], x2").replace(
        "sbuf y [128, 2048]",
        "dram big [256, 256] bf16\ndram x2 [256, 1024] bf16",
    );
    assert_eq!(
        error(&src),
        (
            10,
            17,
            "%0 (matmul): matmul K=256 exceeds 128 (the 128 PE rows)".to_string()
        )
    );
}

#[test]
fn psum_tensor_with_more_partitions_than_psum() {
    let src = program("inf1", "  memset acc = 0");
    assert_eq!(
        error(&src),
        (
            3,
            6,
            "psum tensor 'acc' has 128 partitions, but inf1 psum has 64".to_string()
        )
    );
}

#[test]
fn matmul_on_gen1_uses_half_the_pe_columns() {
    let src = program("inf1", "  matmul acc <- w[0:128, 0:128], x[0:128, 0:1024]")
        .replace("psum acc [128, 2048]", "psum acc [64, 2048]");
    assert!(load("t.psum", src.as_bytes()).is_ok());
    let shifted = src.replace("0:1024]", "0:1024] pos=0,1");
    assert_eq!(
        error(&shifted).2,
        "%0 (matmul): a 128x64 tile at pos=0,1 does not fit the 128x64 PE array"
    );
}

#[test]
fn tile_must_equal_k_by_m() {
    let src = program(
        "trn1",
        "  matmul acc <- w[0:128, 0:256], x[0:128, 0:1024] tile=128x64",
    );
    assert_eq!(
        error(&src),
        (
            9,
            51,
            "%0 (matmul): tile=128x64 does not match the matmul's KxM = 128x128".to_string()
        )
    );
}

#[test]
fn pos_plus_tile_must_fit_the_pe_array() {
    let src = program(
        "trn1",
        "  matmul acc[0:64, 0:2048] <- w[0:128, 0:128], x[0:128, 0:1024] tile=128x64 pos=0,96",
    );
    assert_eq!(
        error(&src),
        (
            9,
            77,
            "%0 (matmul): a 128x64 tile at pos=0,96 does not fit the 128x128 PE array".to_string()
        )
    );
}

#[test]
fn matmul_destination_crossing_a_bank() {
    let src = program(
        "trn1",
        "  matmul acc[0:128, 1024:3072] <- w[0:128, 0:256], x[0:128, 0:1024]",
    )
    .replace("psum acc [128, 2048]", "psum acc [128, 4096]");
    assert_eq!(
        error(&src),
        (
            9,
            10,
            "%0 (matmul): matmul destination acc[0:128, 1024:3072] crosses a PSUM bank boundary (only gen4 may span banks)"
                .to_string()
        )
    );
    let looped = program(
        "trn1",
        "  loop k 0..3 {\n    matmul acc[0:128, k*1536 : k*1536+2048] <- w[0:128, 0:256], x[0:128, 0:1024]\n  }",
    )
    .replace("psum acc [128, 2048]", "psum acc [128, 8192]");
    assert_eq!(
        error(&looped).2,
        "%0 (matmul): matmul destination acc[0:128, k*1536:k*1536+2048] crosses a PSUM bank boundary at k=1 (only gen4 may span banks)"
    );
}

#[test]
fn loop_with_hi_not_above_lo() {
    let src = program("trn1", &GEMM.replace("0..4", "4..4"));
    assert_eq!(
        error(&src),
        (
            9,
            10,
            "loop k 4..4 has no iterations (HI must be greater than LO)".to_string()
        )
    );
}

#[test]
fn unknown_loop_variable_in_a_bound() {
    let src = program("trn1", &GEMM.replace("x[0:128, k*2048", "x[0:128, j*2048"));
    assert_eq!(
        error(&src),
        (
            10,
            59,
            "unknown loop variable 'j' (not a variable of an enclosing loop)".to_string()
        )
    );
}

#[test]
fn shadowed_loop_variable() {
    let src = program("trn1", "  loop k 0..2 {\n    loop k 0..2 {\n    }\n  }");
    assert_eq!(
        error(&src),
        (
            10,
            10,
            "loop variable 'k' shadows the variable of an enclosing loop".to_string()
        )
    );
}

#[test]
fn unterminated_block() {
    let src = "arch trn1\n\npsum acc [128, 2048]\n\nblock main {\n  memset acc = 0\n";
    assert_eq!(
        error(src),
        (
            5,
            1,
            "block 'main' is not closed: expected '}' before end of input".to_string()
        )
    );
}

#[test]
fn unterminated_block_followed_by_another_block() {
    let src = "arch trn1\npsum acc [128, 2048]\nblock a {\n  memset acc = 0\nblock b {\n}\n";
    assert_eq!(
        error(src),
        (
            3,
            1,
            "block 'a' is not closed: expected '}' before 'block'".to_string()
        )
    );
}

#[test]
fn unterminated_loop() {
    let src =
        "arch trn1\npsum acc [128, 2048]\nblock main {\n  loop i 0..2 {\n    memset acc = 0\n";
    assert_eq!(
        error(src),
        (
            4,
            3,
            "loop 'i' is not closed: expected '}' before end of input".to_string()
        )
    );
}

#[test]
fn unexpected_token() {
    let src = program("trn1", "  act y <- acc acc");
    assert_eq!(
        error(&src),
        (
            9,
            16,
            "expected an instruction (matmul, matmul.sparse, matmul.mx, matmul.t, copy, memset, act, dma), 'loop' or '}', found 'acc'"
                .to_string()
        )
    );
    let src = program("trn1", "  act y <- acc[0:128 0:2048]");
    assert_eq!(
        error(&src),
        (9, 22, "expected ',', found number 0".to_string())
    );
}

#[test]
fn read_of_psum_before_any_write() {
    let src = program("trn1", "  act y <- acc\n  memset acc = 0");
    assert_eq!(
        error(&src),
        (
            9,
            12,
            "read of PSUM tensor acc before any write".to_string()
        )
    );
}

#[test]
fn copy_and_act_shapes() {
    let src = program("trn1", "  memset acc = 0\n  copy y[0:64, 0:2048] <- acc");
    assert_eq!(
        error(&src),
        (
            10,
            27,
            "%1 (copy): destination y[0:64, 0:2048] has 32768 elements but source acc has 65536 elements".to_string()
        )
    );
    let src = program("trn1", "  memset acc = 0\n  act y <- acc, w[0:128, 0:4096]");
    assert_eq!(
        error(&src),
        (
            10,
            17,
            "%1 (act): destination y has shape [128 partitions, 512 elements] but source w has shape [128 partitions, 2048 elements]"
                .to_string()
        )
    );
}

#[test]
fn labels_must_be_unique_and_after_must_resolve() {
    let src = program("trn1", "  %a: memset acc = 0\n  %a: memset y = 0");
    assert_eq!(error(&src), (10, 3, "duplicate label '%a'".to_string()));
    let src = program("trn1", "  %a: memset acc = 0\n  memset y = 0 after=%b");
    assert_eq!(
        error(&src),
        (10, 16, "after=%b names no instruction".to_string())
    );
}

#[test]
fn rendered_diagnostic_has_file_line_col_source_line_and_caret() {
    let src = program("trn1", "  act y <- acc2");
    let d = load("dir/t.psum", src.as_bytes()).unwrap_err();
    assert_eq!(
        d.to_string(),
        "dir/t.psum:9:12: error: undefined tensor 'acc2'\n  |\n9 | act y <- acc2\n  |          ^^^^"
            .replace("9 | act", "9 |   act")
            .replace("|          ^", "|            ^")
    );
}

#[test]
fn json_input_errors_have_no_source_line() {
    let m = load("t.psum", program("trn1", GEMM).as_bytes())
        .unwrap()
        .module;
    let mut bad = m.clone();
    bad.arch = "trn1x".to_string();
    let json = psum::text::to_json(&bad);
    let d = load("t.json", json.as_bytes()).unwrap_err();
    assert_eq!(d.position, None);
    assert_eq!(
        d.to_string(),
        "t.json: error: unknown architecture 'trn1x' (known: tonga, inf1, inferentia, sunda, trainium, trn1, inf2, cayman, gen3, core_v4); did you mean 'trn1'?"
    );
    let d = load("t.json", b"{\"arch\": 3}").unwrap_err();
    assert_eq!(d.position, Some((1, 10)));
    assert!(
        d.message
            .starts_with("invalid JSON module: invalid type: integer `3`"),
        "{}",
        d.message
    );
}

#[test]
fn malformed_json_modules_are_rejected_not_panicking() {
    let m = load("t.psum", program("trn1", GEMM).as_bytes())
        .unwrap()
        .module;
    let check = |edit: &dyn Fn(&mut psum::ir::Module), want: &str| {
        let mut bad = m.clone();
        edit(&mut bad);
        let e = psum::validate::validate(&bad).unwrap_err();
        assert_eq!(e.to_string(), want);
    };
    check(
        &|b| {
            let first = b.blocks[0].body[0];
            b.blocks[0].body.push(first);
        },
        "malformed module: loop0 is out of range or placed twice",
    );
    check(
        &|b| b.insts[psum::ir::InstId(1)].kind.dst_mut().tensor = psum::ir::TensorId(9),
        "malformed module: tensor t9 is out of range",
    );
    check(
        &|b| {
            let v = b.loops[psum::ir::LoopId(0)].var;
            b.insts[psum::ir::InstId(1)]
                .kind
                .dst_mut()
                .edit_bounds(|bound, e| {
                    if bound == psum::ir::Bound::P0 {
                        e.add_term(v, 1);
                    }
                });
        },
        "malformed module: bound p0 uses v0, which no enclosing loop binds",
    );
    check(
        &|b| b.tensors[psum::ir::TensorId(0)].name = "a b".to_string(),
        "malformed module: bad tensor name \"a b\"",
    );
    check(&|b| b.blocks.clear(), "malformed module: no block");
    check(
        &|b| {
            b.insts[psum::ir::InstId(0)]
                .kind
                .dst_mut()
                .edit_bounds(|bound, e| {
                    if bound == psum::ir::Bound::B0 {
                        e.terms.push((psum::ir::VarId(0), 0));
                    }
                });
        },
        "malformed module: bound b0 is not in canonical form",
    );
}
