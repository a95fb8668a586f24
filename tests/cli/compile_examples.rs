//! Every shipped example compiles (validate → alloc → unroll → order →
//! legalize → verify) and verifies; its printed result and JSON report are
//! snapshot-tested (the report without `timings_ms`, the only part that is
//! not deterministic).

use psum::pipeline::{compile, CompileOptions};
use psum::{report, text};
use std::path::Path;

fn examples() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("examples/ exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "psum"))
        .map(|p| {
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            (stem, std::fs::read_to_string(&p).expect("readable example"))
        })
        .collect();
    out.sort();
    out
}

#[test]
fn every_example_compiles_verifies_and_matches_its_snapshots() {
    let all = examples();
    assert!(all.len() >= 4, "the four shared examples are shipped");
    for (stem, src) in all {
        let m = text::parse(&src)
            .unwrap_or_else(|e| panic!("{stem}: {e}"))
            .module;
        let c = compile(&m, &CompileOptions::default()).unwrap_or_else(|e| panic!("{stem}: {e}"));
        let v = c.verify.as_ref().expect("verification ran");
        assert_eq!(v.first_error(), None, "{stem} verifies");
        insta::assert_snapshot!(format!("{stem}_ir"), text::print(&c.module));
        let mut json = report::compile_report(&c);
        let timings = json.as_object_mut().unwrap().remove("timings_ms");
        let passes: Vec<String> = timings
            .unwrap()
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(
            passes,
            ["validate", "alloc", "rebank", "unroll", "legalize", "verify"]
        );
        insta::assert_json_snapshot!(format!("{stem}_report"), json);
    }
}

#[test]
fn compiled_output_is_valid_input_and_relegalizes_to_itself() {
    for (stem, src) in examples() {
        let m = text::parse(&src).unwrap().module;
        let c = compile(&m, &CompileOptions::default()).unwrap();
        let printed = text::print(&c.module);
        let reparsed = text::parse(&printed).unwrap_or_else(|e| panic!("{stem}: {e}"));
        psum::validate::validate_source(&reparsed.module, reparsed.source_map.tiles())
            .unwrap_or_else(|e| panic!("{stem}: {e}"));
        assert_eq!(reparsed.module, c.module, "{stem}: parse(print(m)) == m");
        let mut again = reparsed.module.clone();
        let arch = psum::arch::lookup(&again.arch).unwrap();
        psum::matmul::legalize_program(&mut again, &arch).unwrap();
        assert_eq!(
            text::print(&again),
            printed,
            "{stem}: legalize is idempotent"
        );
    }
}
