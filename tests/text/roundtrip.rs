//! Round trip of the text format (SPEC §2.5) on the shipped examples.

use psum::text::{parse, parse_json, print, to_json};
use std::path::PathBuf;

fn examples() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut out: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "psum"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    out.sort();
    out
}

#[test]
fn every_example_round_trips() {
    let all = examples();
    // Four hand-written examples and one generated example per SPEC §7 workload.
    assert_eq!(all.len(), 11);
    for (name, src) in all {
        let m = parse(&src).unwrap_or_else(|e| panic!("{name}: {e}")).module;
        let printed = print(&m);
        let again = parse(&printed).unwrap().module;
        assert_eq!(again, m, "{name}: parse(print(m)) != m");
        assert_eq!(print(&again), printed, "{name}: printing is not stable");
        let json = to_json(&m);
        assert_eq!(parse_json(&json).unwrap(), m, "{name}: JSON round trip");
    }
}

#[test]
fn canonical_form_of_gemm_example() {
    let src = &examples()[3].1;
    let printed = print(&parse(src).unwrap().module);
    assert_eq!(
        printed,
        "arch trn1

psum acc [128, 2048]
sbuf w [128, 4096] bf16
sbuf x [128, 8192] bf16
sbuf y [128, 2048]
dram out [128, 2048]

block main {
  loop k 0..4 {
    matmul acc <- w[0:128, k*1024:k*1024+256], x[0:128, k*2048:k*2048+1024]
  }
  act y <- acc
  dma out <- y
}
"
    );
}

#[test]
fn readme_tour_program_is_valid_and_canonicalizes_to_the_gemm_example() {
    let readme =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("README.md"))
            .unwrap();
    let tour = readme.split("## The text format").nth(1).unwrap();
    let code = tour.split("```").nth(1).unwrap();
    let loaded = psum::source::load("README.md", code.as_bytes()).unwrap();
    let gemm = parse(&examples()[3].1).unwrap().module;
    assert_eq!(loaded.module, gemm);
}
