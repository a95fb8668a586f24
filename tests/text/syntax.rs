//! The text syntax in detail (SPEC §2.1–2.3, §2.5): what each construct
//! parses to, how it prints canonically, and the parse errors of malformed
//! attributes and operands.

use psum::ir::{DType, FlagSet, Flags, InstKind, MatmulKind, Mem};
use psum::text::{line_col, parse, print, ParseError};

const HEAD: &str = "arch core_v4\npsum acc [128, 4096] bank=2\nsbuf w [128, 512] bf16 addr=64\nsbuf x [128, 2048] fp8\n";

fn block(body: &str) -> String {
    format!("{HEAD}block main {{\n{body}\n}}\n")
}

/// The canonical print of the body of `block(body)`.
fn canon(body: &str) -> String {
    let printed = print(&parse(&block(body)).unwrap().module);
    let start = printed.find("block main {\n").unwrap() + "block main {\n".len();
    printed[start..printed.len() - 2].trim_end().to_string()
}

fn parse_err(src: &str) -> ((usize, usize), String) {
    let e = parse(src).unwrap_err();
    (line_col(src, e.span().start), e.to_string())
}

#[test]
fn declarations_with_dtype_and_attributes() {
    let m = parse(&block("")).unwrap().module;
    let t = &m.tensors;
    assert_eq!(
        (
            t[psum::ir::TensorId(0)].mem,
            t[psum::ir::TensorId(0)].dtype,
            t[psum::ir::TensorId(0)].bank,
            t[psum::ir::TensorId(0)].addr
        ),
        (Mem::Psum, DType::F32, Some(2), None)
    );
    assert_eq!(
        (
            t[psum::ir::TensorId(1)].mem,
            t[psum::ir::TensorId(1)].dtype,
            t[psum::ir::TensorId(1)].bank,
            t[psum::ir::TensorId(1)].addr
        ),
        (Mem::Sbuf, DType::Bf16, None, Some(64))
    );
    assert_eq!(t[psum::ir::TensorId(2)].elems(), 2048);
    assert_eq!(
        print(&m),
        "arch core_v4\n\npsum acc [128, 4096] bank=2\nsbuf w [128, 512] bf16 addr=64\nsbuf x [128, 2048] fp8\n\nblock main {\n}\n"
    );
}

#[test]
fn affine_bounds_print_canonically() {
    let body = "  loop k 0..2 {\n    memset acc[2*k : k*2 + 1, -k*4+4 : 8 - 4*k + 4] = 1\n  }";
    assert_eq!(
        canon(body),
        "  loop k 0..2 {\n    memset acc[k*2:k*2+1, -k*4+4:-k*4+12] = 1\n  }"
    );
    let nested = "  loop i 1..3 {\n    loop j 0..2 {\n      memset acc[i - 1 + j : i + j, 0 : 4] = 0\n    }\n  }";
    assert_eq!(
        canon(nested),
        "  loop i 1..3 {\n    loop j 0..2 {\n      memset acc[i+j-1:i+j, 0:4] = 0\n    }\n  }"
    );
}

#[test]
fn whole_tensor_access_prints_as_the_bare_name() {
    assert_eq!(canon("  memset acc[0:128, 0:4096] = 0"), "  memset acc = 0");
    assert_eq!(
        canon("  memset acc[0:128, 0:2048] = 0"),
        "  memset acc[0:128, 0:2048] = 0"
    );
}

#[test]
fn memset_values() {
    for (written, printed) in [
        ("0", "0"),
        ("-1.5", "-1.5"),
        ("2.50", "2.5"),
        ("1e3", "1000"),
        ("0.125", "0.125"),
    ] {
        assert_eq!(
            canon(&format!("  memset acc = {written}")),
            format!("  memset acc = {printed}")
        );
    }
}

#[test]
fn matmul_attributes() {
    let src = block(
        "  %mm.0: matmul.t acc[0:64, 0:2048] <- w[0:128, 0:128], x[0:128, 0:512] tile=128x64 pos=0,64 flags=stop|start zr=1\n  \
         matmul.sparse acc[0:64, 0:2048] <- w[0:128, 0:128], x[0:128, 0:512] pos=0,0 flags=none after=%mm.0\n  \
         matmul.mx acc[0:64, 0:2048] <- w[0:128, 0:128], x[0:128, 0:512] flags=auto\n  \
         matmul acc[0:64, 0:2048] <- w[0:128, 0:128], x[0:128, 0:512] flags=acc",
    );
    let p = parse(&src).unwrap();
    let mms: Vec<_> = p
        .module
        .insts
        .values()
        .map(|i| i.kind.as_matmul().unwrap().clone())
        .collect();
    assert_eq!(mms[0].kind, MatmulKind::Transpose);
    assert_eq!(mms[0].pos, (0, 64));
    assert_eq!(
        mms[0].flags,
        Flags::Set(FlagSet {
            start: true,
            acc: false,
            stop: true
        })
    );
    assert_eq!(mms[0].zr, Some(1));
    assert_eq!(mms[1].flags, Flags::Set(FlagSet::NONE));
    assert_eq!(mms[2].flags, Flags::Auto);
    assert_eq!(p.module.insts[psum::ir::InstId(0)].label(), Some("mm.0"));
    assert_eq!(p.module.insts[psum::ir::InstId(1)].after(), Some("mm.0"));
    let tile = p.source_map.tiles()[0].1;
    assert_eq!((tile.rows, tile.cols), (128, 64));
    assert_eq!(&src[tile.span.start..tile.span.end], "tile=128x64");
    let printed = print(&p.module);
    let body: Vec<&str> = printed.lines().skip(7).take(4).collect();
    assert_eq!(
        body,
        [
            "  %mm.0: matmul.t acc[0:64, 0:2048] <- w[0:128, 0:128], x[0:128, 0:512] pos=0,64 flags=start|stop zr=1",
            "  matmul.sparse acc[0:64, 0:2048] <- w[0:128, 0:128], x[0:128, 0:512] flags=none after=%mm.0",
            "  matmul.mx acc[0:64, 0:2048] <- w[0:128, 0:128], x[0:128, 0:512]",
            "  matmul acc[0:64, 0:2048] <- w[0:128, 0:128], x[0:128, 0:512] flags=acc",
        ]
    );
}

#[test]
fn copy_act_dma_and_multiple_blocks() {
    let src = format!("{HEAD}dram d [128, 2048] fp8\nblock a {{\n  memset acc = 0\n}}\nblock b {{\n  act acc <- acc, acc\n  copy x <- d\n  dma d <- x\n}}\n");
    let m = parse(&src).unwrap().module;
    assert_eq!(m.blocks.len(), 2);
    assert!(
        matches!(&m.insts[psum::ir::InstId(1)].kind, InstKind::Act { srcs, .. } if srcs.len() == 2)
    );
    assert!(matches!(
        m.insts[psum::ir::InstId(2)].kind,
        InstKind::Copy { .. }
    ));
    assert!(matches!(
        m.insts[psum::ir::InstId(3)].kind,
        InstKind::Dma { .. }
    ));
    assert!(print(&m).ends_with("\nblock a {\n  memset acc = 0\n}\n\nblock b {\n  act acc <- acc, acc\n  copy x <- d\n  dma d <- x\n}\n"));
}

#[test]
fn malformed_attributes_and_operands() {
    let mm = "  matmul acc[0:64, 0:2048] <- w[0:128, 0:128], x[0:128, 0:512]";
    let cases = [
        (
            format!("{mm} flags=auto|start"),
            (6, 75),
            "'auto' and 'none' cannot be combined with other flags",
        ),
        (
            format!("{mm} flags=begin"),
            (6, 70),
            "unknown flag 'begin' (expected auto, none, start, acc or stop)",
        ),
        (
            format!("{mm} zr=1 zr=2"),
            (6, 69),
            "duplicate attribute 'zr'",
        ),
        (
            format!("{mm} tile=128y64"),
            (6, 72),
            "expected 'xC' (tile=RxC), found 'y64'",
        ),
        (
            format!("{mm} color=3"),
            (6, 64),
            "unknown attribute 'color' (expected tile, pos, flags, zr or after)",
        ),
        (
            format!("{mm} after=mm"),
            (6, 70),
            "expected a label ('%NAME'), found 'mm'",
        ),
        (
            "  copy acc <- w, x".to_string(),
            (6, 3),
            "'copy' takes 1 source, got 2",
        ),
        (
            "  matmul acc <- w".to_string(),
            (6, 3),
            "'matmul' takes 2 sources (stationary, moving), got 1",
        ),
        (
            "  copy acc <- w pos=1,1".to_string(),
            (6, 17),
            "attribute 'pos' is only valid on matmul instructions",
        ),
        (
            "  memset acc <- w".to_string(),
            (6, 14),
            "expected '=', found '<-'",
        ),
        (
            "  memset acc = x".to_string(),
            (6, 16),
            "expected a number, found 'x'",
        ),
        (
            "  % : memset acc = 0".to_string(),
            (6, 3),
            "expected a label name after '%'",
        ),
        (
            "  loop k 0..2 memset acc = 0".to_string(),
            (6, 15),
            "expected '{', found 'memset'",
        ),
        (
            "  memset acc[0:1, 0:k] = 0".to_string(),
            (6, 21),
            "unknown loop variable 'k' (not a variable of an enclosing loop)",
        ),
        (
            "  memset acc[0:1, 0:4*4] = 0".to_string(),
            (6, 23),
            "expected a loop variable, found number 4",
        ),
    ];
    for (body, pos, msg) in cases {
        assert_eq!(parse_err(&block(&body)), (pos, msg.to_string()), "{body}");
    }
}

#[test]
fn declaration_errors() {
    let cases = [
        (
            "arch trn1\npsum a [1, 4] bank=1 bank=2\nblock b {\n}\n",
            (2, 22),
            "duplicate attribute 'bank'",
        ),
        (
            "arch trn1\npsum a [1, 4] color=1\nblock b {\n}\n",
            (2, 15),
            "unknown declaration attribute 'color' (expected 'bank' or 'addr')",
        ),
        (
            "arch trn1\nhbm a [1, 4]\nblock b {\n}\n",
            (2, 1),
            "expected a declaration ('psum', 'sbuf', 'dram') or 'block', found 'hbm'",
        ),
        (
            "arch trn1\npsum a [1 4]\nblock b {\n}\n",
            (2, 11),
            "expected ',', found number 4",
        ),
        (
            "arch trn1\nblock b {\n}\npsum a [1, 4]\n",
            (4, 1),
            "expected 'block' or end of input, found 'psum'",
        ),
        (
            "arch\n",
            (2, 1),
            "expected an architecture name, found end of input",
        ),
    ];
    for (src, pos, msg) in cases {
        assert_eq!(parse_err(src), (pos, msg.to_string()), "{src}");
    }
    assert!(matches!(
        parse("arch trn1\nblock b {\n"),
        Err(ParseError::Unterminated { what: "block", .. })
    ));
}

#[test]
fn bounds_have_the_same_spans_however_they_are_spaced() {
    let variants = [
        "x[0:128, 0:64]",
        "x[ 0 :128 ,\t0: 64 ]",
        "x[0:128,\n 0:64]",
        "x[0:128, # a comment\n 0:64]",
        "x[0:120+8, 0:64]",
    ];
    for access in variants {
        let src = block(&format!("  copy w <- {access}"));
        let p = parse(&src).unwrap();
        let id = psum::ir::InstId::new(0);
        let spans = p.source_map.operand(id, 1).unwrap();
        let text = |s: psum::text::Span| &src[s.start..s.end];
        let bounds = spans.bounds.unwrap().map(text);
        let p1 = if access.contains("120+8") {
            "120+8"
        } else {
            "128"
        };
        assert_eq!(bounds, ["0", p1, "0", "64"], "{access:?}");
        assert_eq!(text(spans.span), access, "{access:?}");
        let r = p.module.insts[psum::ir::InstId(0)]
            .kind
            .srcs()
            .next()
            .unwrap()
            .region(|_| 0);
        assert_eq!((r.p0, r.p1, r.b0, r.b1), (0, 128, 0, 64), "{access:?}");
    }
}
