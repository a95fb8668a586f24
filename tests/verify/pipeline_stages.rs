//! The verifier runs after any prefix of the pipeline (`pipeline::verify_after`):
//! each pass's output alone computes what the input computes.

use psum::alloc::AllocOptions;
use psum::pipeline::{verify_after, Pass};
use psum::text;

const EXAMPLES: [&str; 4] = [
    include_str!("../../examples/01_three_tensors.psum"),
    include_str!("../../examples/02_one_spill.psum"),
    include_str!("../../examples/03_column_tiles.psum"),
    include_str!("../../examples/04_gemm_k_loop.psum"),
];

#[test]
fn every_stage_of_every_shared_example_verifies() {
    for (i, src) in EXAMPLES.iter().enumerate() {
        let m = text::parse(src).unwrap().module;
        for stage in [Pass::Alloc, Pass::Unroll, Pass::Legalize] {
            let (out, report) = verify_after(&m, stage, &AllocOptions::default()).unwrap();
            assert_eq!(report.first_error(), None, "example {i} after {stage:?}");
            assert_eq!(
                out.has_loops(),
                stage == Pass::Alloc && m.has_loops(),
                "example {i} after {stage:?}"
            );
        }
    }
}

#[test]
fn a_corrupted_allocation_fails_at_the_alloc_stage() {
    // Example 01 after allocation, with b moved onto a's bank: the checker
    // must see a clobbered while it is still to be read.
    let m = text::parse(EXAMPLES[0]).unwrap().module;
    let (mut out, _) = verify_after(&m, Pass::Alloc, &AllocOptions::default()).unwrap();
    let a = out.tensor_by_name("a").unwrap();
    let b = out.tensor_by_name("b").unwrap();
    out.tensors[b].bank = out.tensor(a).bank;
    let report = psum::verify::verify(&m, &out);
    let err = report.first_error().expect("a shared bank is caught");
    assert!(err.contains("checker"), "{err}");
}
