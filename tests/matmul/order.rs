//! `order_column_tiled_mms` (SPEC §4.2) and `set_first_matmults` (SPEC §4.1).

use crate::matmul_common;

use matmul_common::{arch, lines, parse};
use psum::arch::lookup;
use psum::ir::{InstId, Module};
use psum::matmul::order::{column_tiled_groups, is_column_tiled};
use psum::matmul::{order_column_tiled_mms, set_first_matmults, MatmulError};

/// The declarations of the trn1 fixtures: one PSUM bank, operands, an output.
const DECLS: &str = "arch trn1

psum acc [128, 2048] bank=0
sbuf w [128, 512] bf16
sbuf x [128, 1024] bf16
sbuf y [128, 2048]
";

fn label(m: &Module, i: InstId) -> &str {
    m.inst(i).label().unwrap()
}

fn edges(m: &Module) -> Vec<(&str, &str)> {
    order_column_tiled_mms(m, &arch(m))
        .unwrap()
        .into_iter()
        .map(|(a, b)| (label(m, a), label(m, b)))
        .collect()
}

#[test]
fn groups_open_at_origin_extend_by_shape_and_close_per_block() {
    let m = parse(&format!(
        "{DECLS}
block main {{
  %A: matmul acc[0:64, 0:512] <- w[0:128, 0:128], x[0:128, 0:256]
  %B: matmul acc[64:128, 0:512] <- w[0:128, 128:256], x[0:128, 0:256] pos=0,64
  %C: matmul acc[0:32, 512:1024] <- w[0:128, 0:64], x[0:128, 0:256]
  %D: matmul acc[32:64, 512:1024] <- w[0:128, 64:128], x[0:128, 0:256] pos=0,32
  %E: act y[0:64, 0:512] <- acc[0:64, 0:512]
  %F: matmul acc[64:128, 512:1024] <- w[0:128, 0:128], x[0:128, 0:256] pos=0,64
  %G: matmul acc[0:64, 1024:1536] <- w[0:128, 0:128], x[0:128, 0:256]
  %H: matmul.t acc[64:128, 1024:1536] <- w[0:128, 0:128], x[0:128, 0:256] pos=0,64
  %I: matmul acc[0:64, 1536:2048] <- w[0:128, 0:128], x[0:128, 0:256]
}}

block two {{
  %J: matmul acc[64:128, 1536:2048] <- w[0:128, 128:256], x[0:128, 0:256] pos=0,64
  %K: matmul acc[0:128, 0:512] <- w[0:128, 0:256], x[0:128, 256:512]
}}
"
    ));
    let groups: Vec<Vec<&str>> = column_tiled_groups(&m, &arch(&m))
        .unwrap()
        .into_iter()
        .map(|g| g.into_iter().map(|i| label(&m, i)).collect())
        .collect();
    assert_eq!(
        groups,
        [vec!["A", "B"], vec!["C", "D"], vec!["G"], vec!["I"]]
    );
    assert_eq!(edges(&m), [("B", "A"), ("D", "C")]);
}

#[test]
fn column_tiled_predicate_follows_the_pe_width() {
    let m = parse(
        "arch inf1

psum acc [64, 2048] bank=0
sbuf w [128, 256] bf16
sbuf x [128, 512] bf16

block main {
  %a: matmul acc[0:32, 0:512] <- w[0:128, 0:64], x[0:128, 0:256]
  %b: matmul acc[32:64, 0:512] <- w[0:128, 64:128], x[0:128, 0:256] pos=0,32
  %c: matmul acc[0:64, 512:1024] <- w[0:128, 128:256], x[0:128, 0:256]
  %d: matmul acc[0:64, 512:1024] <- w[0:128, 128:256], x[0:128, 256:512]
  %e: matmul acc[0:32, 1024:1536] <- w[0:64, 0:64], x[0:64, 0:256]
  %f: matmul acc[32:64, 1024:1536] <- w[0:64, 64:128], x[0:64, 0:256] pos=0,32
}
",
    );
    assert_eq!(edges(&m), [("b", "a")]);
    let mm = |l: &str| {
        let i = m
            .insts_in_order()
            .into_iter()
            .find(|&i| label(&m, i) == l)
            .unwrap();
        m.inst(i).kind.as_matmul().unwrap().clone()
    };
    let (inf1, trn1) = (lookup("inf1").unwrap(), lookup("trn1").unwrap());
    // 64 columns: the whole gen1 array, a partial slice of gen2's.
    assert!(!is_column_tiled(&mm("c"), &inf1));
    assert!(is_column_tiled(&mm("c"), &trn1));
    // 64 rows is never column-tiled.
    assert!(!is_column_tiled(&mm("e"), &inf1));
    assert!(!is_column_tiled(&mm("e"), &trn1));
}

#[test]
fn ordering_needs_a_loop_free_program() {
    let m = parse(&format!(
        "{DECLS}
block main {{
  loop k 0..2 {{
    matmul acc[0:64, 0:512] <- w[0:128, 0:128], x[0:128, k*256:k*256+256]
  }}
}}
"
    ));
    assert_eq!(
        order_column_tiled_mms(&m, &arch(&m)),
        Err(MatmulError::HasLoops)
    );
}

#[test]
fn first_matmults_marks_the_first_writer_of_each_access_pattern() {
    let mut m = parse(
        "arch trn1

psum acc [128, 2048]
sbuf w [128, 1024] bf16
sbuf x [128, 4096] bf16

block main {
  loop k 0..2 {
    %a: matmul acc[0:128, 0:1024] <- w[0:128, k*256:k*256+256], x[0:128, k*512:k*512+512]
  }
  %b: matmul acc[0:128, 0:1024] <- w[0:128, 512:768], x[0:128, 1024:1536]
  %c: matmul acc[0:128, 1024:2048] <- w[0:128, 512:768], x[0:128, 1024:1536] flags=stop
  loop j 0..2 {
    %d: matmul acc[0:128, j*1024:j*1024+1024] <- w[0:128, 768:1024], x[0:128, 2048:2560]
  }
  %e: matmul.t acc[0:128, 1024:2048] <- w[0:128, 0:256], x[0:128, 0:512]
}
",
    );
    assert_eq!(set_first_matmults(&mut m), 3);
    assert_eq!(
        lines(&m),
        [
            "%a: matmul acc[0:128, 0:1024] <- w[0:128, k*256:k*256+256], x[0:128, k*512:k*512+512] flags=start",
            "%b: matmul acc[0:128, 0:1024] <- w[0:128, 512:768], x[0:128, 1024:1536] flags=none",
            "%c: matmul acc[0:128, 1024:2048] <- w[0:128, 512:768], x[0:128, 1024:1536] flags=start",
            "%d: matmul acc[0:128, j*1024:j*1024+1024] <- w[0:128, 768:1024], x[0:128, 2048:2560] flags=start",
            "%e: matmul.t acc[0:128, 1024:2048] <- w[0:128, 0:256], x[0:128, 0:512] flags=none",
        ]
    );
}
