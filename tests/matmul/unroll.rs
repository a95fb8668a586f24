//! Full unrolling (SPEC §4.3 preamble): labels, constant bounds, the
//! instruction limit, and `after=` inside loops.

use crate::matmul_common;

use matmul_common::parse;
use psum::ir::Module;
use psum::unroll::{unroll, unroll_with_origins, unrolled_count, UnrollError, MAX_UNROLLED_INSTS};

/// Asserts the `(label, after)` pairs of the unrolled instructions that have
/// both, in program order.
fn assert_unrolled_afters(m: &Module, expect: &[(&str, &str)]) {
    let u = unroll(m).unwrap();
    let afters: Vec<(&str, &str)> = u
        .insts_in_order()
        .into_iter()
        .filter_map(|i| {
            let inst = u.inst(i);
            Some((inst.label()?, inst.after()?))
        })
        .collect();
    assert_eq!(afters, expect);
}

#[test]
fn copies_get_value_suffixes_and_constant_bounds() {
    let m = parse(
        "arch trn1

psum acc [128, 2048]
sbuf w [128, 1024] bf16
sbuf x [128, 8192] bf16
sbuf y [128, 2048]

block main {
  loop i 0..2 {
    loop j 1..3 {
      %a: matmul acc[0:128, j*512-512:j*512] <- w[0:128, i*256:i*256+256], x[0:128, i*512+j*256:i*512+j*256+256]
      memset y[0:128, i*4:i*4+4] = 1
      %b: act y[0:128, 8:12] <- y[0:128, i*4:i*4+4] after=%a
    }
  }
}

block tail {
  %c: act y[0:128, 0:1024] <- acc[0:128, 0:1024]
}
",
    );
    assert_eq!(unrolled_count(&m), 13);
    let u = unroll(&m).unwrap();
    assert!(!u.has_loops());
    assert!(u.vars.is_empty());
    assert_eq!(
        u.blocks.iter().map(|b| b.name.as_str()).collect::<Vec<_>>(),
        ["main", "tail"]
    );
    assert_eq!(
        psum::text::print(&u),
        "arch trn1

psum acc [128, 2048]
sbuf w [128, 1024] bf16
sbuf x [128, 8192] bf16
sbuf y [128, 2048]

block main {
  %a.0.1: matmul acc[0:128, 0:512] <- w[0:128, 0:256], x[0:128, 256:512]
  memset y[0:128, 0:4] = 1
  %b.0.1: act y[0:128, 8:12] <- y[0:128, 0:4] after=%a.0.1
  %a.0.2: matmul acc[0:128, 512:1024] <- w[0:128, 0:256], x[0:128, 512:768]
  memset y[0:128, 0:4] = 1
  %b.0.2: act y[0:128, 8:12] <- y[0:128, 0:4] after=%a.0.2
  %a.1.1: matmul acc[0:128, 0:512] <- w[0:128, 256:512], x[0:128, 768:1024]
  memset y[0:128, 4:8] = 1
  %b.1.1: act y[0:128, 8:12] <- y[0:128, 4:8] after=%a.1.1
  %a.1.2: matmul acc[0:128, 512:1024] <- w[0:128, 256:512], x[0:128, 1024:1280]
  memset y[0:128, 4:8] = 1
  %b.1.2: act y[0:128, 8:12] <- y[0:128, 4:8] after=%a.1.2
}

block tail {
  %c: act y[0:128, 0:1024] <- acc[0:128, 0:1024]
}
"
    );
}

#[test]
fn after_an_outer_instruction_keeps_its_label_and_inner_targets_get_the_outer_suffix() {
    let m = parse(
        "arch trn1

sbuf y [128, 2048]

block main {
  %m: memset y = 0
  loop i 0..2 {
    %p: memset y[0:128, 0:4] = 1
    loop j 0..2 {
      %q: memset y[0:128, 4:8] = 2 after=%p
      %r: memset y[0:128, 8:12] = 3 after=%m
    }
  }
}
",
    );
    assert_unrolled_afters(
        &m,
        &[
            ("q.0.0", "p.0"),
            ("r.0.0", "m"),
            ("q.0.1", "p.0"),
            ("r.0.1", "m"),
            ("q.1.0", "p.1"),
            ("r.1.0", "m"),
            ("q.1.1", "p.1"),
            ("r.1.1", "m"),
        ],
    );
}

#[test]
fn after_into_a_loop_not_enclosing_targets_its_last_iteration() {
    let m = parse(
        "arch trn1

sbuf y [128, 2048]

block main {
  loop i 0..2 {
    %p: memset y[0:128, 0:4] = 1
    loop j 3..5 {
      %q: memset y[0:128, 4:8] = 1
    }
  }
  loop i 0..2 {
    %r: memset y[0:128, 4:8] = 2 after=%q
  }
  %s: memset y[0:128, 8:12] = 2 after=%p
}
",
    );
    assert_unrolled_afters(&m, &[("r.0", "q.1.4"), ("r.1", "q.1.4"), ("s", "p.1")]);
}

#[test]
fn clashing_unrolled_labels_are_an_error() {
    let m = parse(
        "arch trn1

sbuf y [128, 2048]

block main {
  %a.1: memset y = 0
  loop k 0..2 {
    %a: memset y[0:128, 0:4] = 1
  }
}
",
    );
    assert_eq!(
        unroll(&m).unwrap_err(),
        UnrollError::DuplicateLabel {
            label: "a.1".into()
        }
    );
}

fn big(outer: u64, inner: u64, extra: &str) -> Module {
    parse(&format!(
        "arch trn1

sbuf y [128, 2048]

block main {{
  {extra}
  loop i 0..{outer} {{
    loop j 0..{inner} {{
      memset y[0:128, 0:4] = 1
    }}
  }}
}}
"
    ))
}

#[test]
fn the_instruction_limit_is_checked_arithmetically() {
    let at_limit = big(5000, 2000, "");
    assert_eq!(unrolled_count(&at_limit), MAX_UNROLLED_INSTS);
    let over = big(5000, 2000, "memset y = 0");
    let e = unroll(&over).unwrap_err();
    assert_eq!(e, UnrollError::TooManyInstructions { count: 10_000_001 });
    assert_eq!(
        e.to_string(),
        "unrolling would produce 10000001 instructions, more than the limit of 10000000"
    );
    let huge = big(16_000_000, 16_000_000, "");
    assert_eq!(
        unroll(&huge).unwrap_err(),
        UnrollError::TooManyInstructions {
            count: 256_000_000_000_000
        }
    );
}

#[test]
fn negative_loop_values_print_as_valid_labels() {
    let m = parse(
        "arch trn1

sbuf y [128, 2048]

block main {
  loop k -2..0 {
    %a: memset y[0:128, k*4+8:k*4+12] = 1
  }
}
",
    );
    let u = unroll(&m).unwrap();
    let printed = psum::text::print(&u);
    assert!(
        printed.contains("  %a.n2: memset y[0:128, 0:4] = 1\n  %a.n1: memset y[0:128, 4:8] = 1\n")
    );
    assert!(parse(&printed).same_program(&u));
}

#[test]
fn loop_free_programs_are_unchanged() {
    let m = parse(include_str!("../../examples/01_three_tensors.psum"));
    assert!(unroll(&m).unwrap().same_program(&m));
}

/// Every unrolled instruction knows the instruction it was copied from.
#[test]
fn origins_name_the_copied_instruction() {
    let m = parse(
        "arch trn1

psum acc [128, 1024]
sbuf w [128, 1024] bf16
sbuf x [128, 1024] bf16
sbuf y [128, 1024]

block main {
  %z: memset y = 0
  loop i 0..2 {
    loop j 0..2 {
      %a: matmul acc[0:128, j*512:j*512+512] <- w[0:128, i*256:i*256+256], x[0:128, 0:256]
    }
    %b: act y <- acc
  }
}
",
    );
    let (u, origins) = unroll_with_origins(&m).unwrap();
    assert!(u.same_program(&unroll(&m).unwrap()));
    let label = |m: &Module, i: psum::ir::InstId| m.inst(i).label().unwrap().to_string();
    let pairs: Vec<(String, String)> = u
        .insts_in_order()
        .into_iter()
        .map(|i| (label(&u, i), label(&m, origins[i.index()])))
        .collect();
    let want = [
        ("z", "z"),
        ("a.0.0", "a"),
        ("a.0.1", "a"),
        ("b.0", "b"),
        ("a.1.0", "a"),
        ("a.1.1", "a"),
        ("b.1", "b"),
    ];
    assert_eq!(pairs, want.map(|(a, b)| (a.to_string(), b.to_string())));
    assert_eq!(origins.len(), u.insts.len());
}
