//! Robustness of the matmul passes on random valid modules: unroll and
//! legalize succeed without panicking, leave every instruction labelled and
//! every matmul with explicit flags and a `zr`, and re-legalizing the printed
//! result changes nothing.

use psum::arch::lookup;
use psum::gen::random::{program, RandomConfig};
use psum::ir::{Flags, Mem};
use psum::matmul::legalize_program;

#[test]
fn legalize_random_modules() {
    for seed in 0..300u64 {
        let mut m = program(
            seed,
            &RandomConfig {
                tensors: 12,
                ..RandomConfig::syntax()
            },
        )
        .unwrap();
        for (i, t) in m.tensors.iter_mut().enumerate() {
            if t.mem == Mem::Psum {
                t.bank = Some((seed as u32 + i as u32) % 4);
            }
        }
        let arch = lookup(&m.arch).unwrap();
        let mut u = psum::unroll::unroll(&m).unwrap();
        legalize_program(&mut u, &arch).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        for i in u.insts_in_order() {
            let inst = u.inst(i);
            assert!(
                inst.label().is_some(),
                "seed {seed}: unlabelled instruction"
            );
            if let Some(mm) = inst.kind.as_matmul() {
                assert!(
                    matches!(mm.flags, Flags::Set(_)),
                    "seed {seed}: auto flags left"
                );
                assert!(mm.zr.is_some(), "seed {seed}: no zr");
            }
        }
        let printed = psum::text::print(&u);
        let mut again = psum::text::parse(&printed).unwrap().module;
        let r = legalize_program(&mut again, &arch).unwrap();
        assert_eq!(psum::text::print(&again), printed, "seed {seed}");
        assert_eq!(r.memsets_inserted, 0, "seed {seed}");
    }
}
