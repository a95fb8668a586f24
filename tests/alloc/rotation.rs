//! Rotation (SPEC §3.12) on the workloads and on the random programs of
//! `psum::gen::random`: it never changes the spill code or its cost, never
//! leaves more avoidable reuse edges (SPEC §10) or more estimated cycles
//! (SPEC §11) than the allocator's own placement, and always verifies.

use crate::alloc_common::*;
use proptest::prelude::*;
use psum::alloc::{AllocOptions, Allocator};
use psum::gen::random::{self, RandomConfig};
use psum::gen::workloads::{generate, Workload, WorkloadKind};
use psum::ir::Module;
use psum::pipeline::{compile, CompileOptions, Compiled, Rotation};
use psum::{estimate, reuse};

fn compiled(
    m: &Module,
    allocator: Allocator,
    rotate: Rotation,
    verify_each: bool,
) -> Option<Compiled> {
    let opts = CompileOptions {
        alloc: AllocOptions {
            allocator,
            ..AllocOptions::default()
        },
        rotate,
        verify: true,
        verify_each,
    };
    compile(m, &opts).ok()
}

/// `(edges, avoidable, least slack, estimated cycles)` of a compiled program.
fn measure(c: &Compiled) -> (usize, usize, Option<u32>, u64) {
    let r = reuse::analyze(&c.module, c.alloc.report.num_banks).summary();
    let e = estimate::estimate(&c.module).unwrap();
    (r.edges, r.avoidable, r.least_slack, e.cycles)
}

/// Rotation after `allocator` against its own placement.
fn check(m: &Module, allocator: Allocator) {
    let Some(plain) = compiled(m, allocator, Rotation::Off, false) else {
        return;
    };
    let rotated = compiled(m, allocator, Rotation::On, true)
        .expect("rotation verifies after every pass wherever the allocation does");
    assert!(rotated.verify.as_ref().unwrap().is_ok());
    let (a, b) = (&plain.alloc.report, &rotated.alloc.report);
    assert_eq!(a.spill_cost_cycles, b.spill_cost_cycles);
    assert_eq!(a.spilled, b.spilled);
    let (_, avoidable0, _, cycles0) = measure(&plain);
    let (_, avoidable1, _, cycles1) = measure(&rotated);
    assert!(avoidable1 <= avoidable0, "{avoidable1} > {avoidable0}");
    assert!(cycles1 <= cycles0, "{cycles1} > {cycles0}");
    // The rows of the report are the program's tensors in their banks.
    for t in &b.tensors {
        let id = rotated.alloc.module.tensor_by_name(&t.name).unwrap();
        assert_eq!(rotated.alloc.module.tensor(id).bank, t.bank, "{}", t.name);
    }
}

proptest! {
    #![proptest_config(crate::props_config::config(64, "tests/proptest-regressions/alloc/rotation.txt"))]

    #[test]
    fn rotation_keeps_the_spill_code_and_only_improves((seed, cfg, _) in random_config(30)) {
        let m = module(&program(seed, cfg));
        check(&m, Allocator::Mincost);
        check(&m, Allocator::Briggs);
    }

    #[test]
    fn rotation_of_rich_programs_verifies(seed in any::<u64>()) {
        let Ok(m) = random::program(seed, &RandomConfig::rich()) else {
            return Ok(());
        };
        check(&m, Allocator::Mincost);
    }
}

#[test]
fn every_workload_is_left_without_avoidable_edges() {
    for kind in WorkloadKind::ALL {
        let m = generate(&Workload::defaults(kind)).unwrap();
        let plain = compiled(&m, Allocator::Mincost, Rotation::Off, false).unwrap();
        let rotated = compiled(&m, Allocator::Mincost, Rotation::Auto, false).unwrap();
        let briggs = compiled(&m, Allocator::Briggs, Rotation::Auto, false).unwrap();
        let (_, avoidable, _, cycles) = measure(&rotated);
        assert_eq!(avoidable, 0, "{kind:?}");
        assert!(cycles <= measure(&plain).3, "{kind:?}");
        assert!(cycles <= measure(&briggs).3, "{kind:?}");
    }
}

#[test]
fn attention_rotates_through_every_bank() {
    let m = generate(&Workload::defaults(WorkloadKind::Attention)).unwrap();
    let plain = compiled(&m, Allocator::Mincost, Rotation::Off, false).unwrap();
    let rotated = compiled(&m, Allocator::Mincost, Rotation::Auto, false).unwrap();
    // Today's placement: s and pT share bank 1, o bank 0; all 18 reuses
    // could have gone elsewhere.
    assert_eq!(measure(&plain), (18, 18, Some(0), 18023));
    // Rotated: the q and g loops expanded, 20 values in 8 banks.
    assert_eq!(measure(&rotated), (12, 0, Some(30), 18023));
    let banks: std::collections::BTreeSet<u32> = (rotated.alloc.report.tensors.iter())
        .filter_map(|t| t.bank)
        .collect();
    assert_eq!(banks.len(), 8);
}
