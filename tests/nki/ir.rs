//! The IR additions for NKI kernels (SPEC §2, psum's own): `loc=` on
//! instructions and declarations, `accumulate=`, the `engine` op, NKI's
//! dtypes, bf16 matmul destinations on gen4, `affine` loops and `scope=`.

use psum::ir::{DType, InstId, InstKind, LoopId, TensorId};
use psum::text;
use psum::verify::sim::{self, Mode};

const TRACED: &str = r#"arch core_v4

psum acc [128, 1024] bf16 loc="k/attn-1.py:12"
sbuf w [128, 256] bf16
sbuf x [128, 1024] bf16
sbuf red [128, 4] loc="k/attn-1.py:20"

block main {
  loop k 0..2 {
    matmul acc <- w, x accumulate=false loc="k/attn-1.py:14"
  }
  engine red <- acc, w loc="k/attn-1.py:20"
}
"#;

#[test]
fn locations_and_accumulate_print_parse_and_serialize() {
    let p = text::parse(TRACED).unwrap();
    assert_eq!(text::print(&p.module), TRACED);
    let m = &p.module;
    assert_eq!(
        m.tensors[TensorId(0)].loc.as_deref(),
        Some("k/attn-1.py:12")
    );
    assert_eq!(m.tensors[TensorId(1)].loc, None);
    let mm = m.insts[InstId(0)].kind.as_matmul().unwrap();
    assert_eq!(
        (mm.accumulate, m.insts[InstId(0)].loc()),
        (Some(false), Some("k/attn-1.py:14"))
    );
    let json = text::to_json(m);
    assert!(json.contains(r#""loc": "k/attn-1.py:14""#));
    assert!(json.contains(r#""accumulate": false"#));
    assert!(text::parse_json(&json).unwrap().same_program(m));
    psum::validate::validate(m).unwrap();
}

#[test]
fn affine_loops_and_scopes_print_parse_and_serialize() {
    let src = "arch trn1\n\npsum t [128, 2048] scope=i\nsbuf x [128, 2048]\n\n\
               block main {\n  loop i 0..2 affine {\n    copy t <- x\n    copy x <- t\n  }\n}\n";
    let p = text::parse(src).unwrap();
    assert_eq!(text::print(&p.module), src);
    assert!(p.module.loops[LoopId(0)].affine);
    assert_eq!(p.module.tensors[TensorId(0)].scope.as_deref(), Some("i"));
    let json = text::to_json(&p.module);
    assert!(json.contains(r#""affine": true"#) && json.contains(r#""scope": "i""#));
    assert!(text::parse_json(&json).unwrap().same_program(&p.module));
    let plain = text::to_json(&text::parse(TRACED).unwrap().module);
    assert!(!plain.contains("affine") && !plain.contains("scope"));
    let twice = src.replace("scope=i", "scope=i scope=i");
    assert!(text::parse(&twice)
        .unwrap_err()
        .to_string()
        .contains("duplicate attribute 'scope'"));
    psum::validate::validate(&p.module).unwrap();
}

#[test]
fn unrolled_copies_keep_their_location() {
    let m = text::parse(TRACED).unwrap().module;
    let u = psum::unroll::unroll(&m).unwrap();
    let locs: Vec<_> = u.insts.values().map(|i| i.loc()).collect();
    assert_eq!(
        locs,
        [
            Some("k/attn-1.py:14"),
            Some("k/attn-1.py:14"),
            Some("k/attn-1.py:20")
        ]
    );
}

#[test]
fn strings_are_one_line_and_loc_is_checked() {
    let src = TRACED.replace(
        r#"loc="k/attn-1.py:20"
"#,
        "loc=\"open\n",
    );
    let e = text::parse(&src).unwrap_err();
    assert_eq!(
        e.to_string(),
        "unterminated string (a '\"' before the end of the line)"
    );
    let bad = TRACED.replace(r#"accumulate=false"#, "accumulate=maybe");
    assert_eq!(
        text::parse(&bad).unwrap_err().to_string(),
        "accumulate=maybe: expected true or false"
    );
    let mut m = text::parse(TRACED).unwrap().module;
    m.insts[InstId(0)].set_loc(Some("a\"b".into()));
    assert_eq!(
        psum::validate::validate(&m).unwrap_err().to_string(),
        "malformed module: bad location \"a\\\"b\""
    );
}

#[test]
fn validation_and_verification_messages_name_the_kernel_line() {
    let trn1 = TRACED.replace("arch core_v4", "arch trn1");
    let m = text::parse(&trn1).unwrap().module;
    assert_eq!(
        psum::validate::validate(&m).unwrap_err().to_string(),
        "%0 (matmul at k/attn-1.py:14): matmul destination 'acc' is bf16, not f32"
    );
    let m = text::parse(TRACED).unwrap().module;
    let c = psum::pipeline::compile(&m, &Default::default()).unwrap();
    assert!(c.verify.as_ref().unwrap().is_ok());
    let mut broken = c.module.clone();
    let last = InstId::new(broken.insts.len() - 1);
    broken.insts.swap(InstId(0), last);
    let err = psum::verify::verify(&m, &broken).first_error().unwrap();
    assert!(err.contains(" at k/attn-1.py:"), "{err}");
}

#[test]
fn the_engine_op_sums_every_source_element_into_every_destination_element() {
    let src = "arch trn1\n\ndram a [2, 12]\ndram b [1, 8]\nsbuf s [2, 12]\nsbuf t [1, 8]\nsbuf r [3, 4]\ndram out [3, 4]\n\n\
               block main {\n  dma s <- a\n  dma t <- b\n  engine r <- s[0:2, 4:12], t\n  dma out <- r\n}\n";
    let m = text::parse(src).unwrap().module;
    psum::validate::validate(&m).unwrap();
    let mem = sim::run(&m, Mode::Virtual, 7).unwrap();
    let input = |name: &str, idx: usize| sim::input_value(7, name, idx);
    let expected = [1, 2, 4, 5].iter().map(|&i| input("a", i)).sum::<f64>()
        + (0..2).map(|i| input("b", i)).sum::<f64>();
    let out = mem.tensor(&m, m.tensor_by_name("out").unwrap());
    assert_eq!(out, vec![expected; 3]);
    assert_eq!(m.insts[InstId(2)].kind.mnemonic(), "engine");
    assert!(
        matches!(m.insts[InstId(2)].kind, InstKind::Engine { ref srcs, .. } if srcs.len() == 2)
    );
}

#[test]
fn nki_dtypes_have_their_sizes() {
    let sizes: Vec<_> = DType::ALL.iter().map(|d| (d.keyword(), d.size())).collect();
    assert_eq!(
        sizes,
        [
            ("f32", 4),
            ("bf16", 2),
            ("fp8", 1),
            ("f16", 2),
            ("tf32", 4),
            ("fp8_e5m2", 1),
            ("fp8x4", 4),
            ("fp4x4", 2),
            ("i8", 1),
            ("u8", 1),
            ("i16", 2),
            ("u16", 2),
            ("i32", 4),
            ("u32", 4),
        ]
    );
    for d in DType::ALL {
        let src = format!(
            "arch trn1\nsbuf t [1, 12] {}\nblock b {{\n  memset t = 0\n}}\n",
            d.keyword()
        );
        let m = text::parse(&src).unwrap().module;
        assert_eq!(m.tensors[TensorId(0)].dtype, d);
        assert_eq!(
            text::print(&m).contains(&format!("[1, 12] {d}")),
            d != DType::F32
        );
        assert_eq!(psum::text::parse_json(&text::to_json(&m)).unwrap(), m);
    }
    let odd = "arch trn1\nsbuf t [1, 6] i32\nblock b {\n  memset t = 0\n}\n";
    let e = psum::validate::validate(&text::parse(odd).unwrap().module).unwrap_err();
    assert_eq!(
        e.to_string(),
        "tensor 't': 6 bytes per partition is not a multiple of the i32 size (4 bytes)"
    );
}
