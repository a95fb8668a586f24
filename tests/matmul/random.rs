//! Robustness of the matmul passes on random valid modules: unroll
//! succeeds, legalize refuses an illegal explicit cluster at one of its
//! matmuls and otherwise succeeds without panicking, leave every instruction labelled and
//! every matmul with explicit flags and a `zr`, and re-legalizing the printed
//! result changes nothing.

use psum::arch::{bank_alignment, lookup};
use psum::gen::random::{program, RandomConfig};
use psum::ir::{Flags, InstKind, Mem};
use psum::matmul::{legalize_program, MatmulError};

#[test]
fn legalize_random_modules() {
    let mut refused = 0;
    for seed in 0..300u64 {
        let mut m = program(
            seed,
            &RandomConfig {
                tensors: 12,
                ..RandomConfig::syntax()
            },
        )
        .unwrap();
        let arch = lookup(&m.arch).unwrap();
        // An aligned base that fits (SPEC §1, §5.3), as allocation gives.
        for (i, t) in m.tensors.values_mut().enumerate() {
            if t.mem == Mem::Psum {
                let banks = arch.aligned_bank_num(arch.bank_num(u64::from(t.bytes)));
                let bases = (arch.num_banks() - banks) / bank_alignment(banks) + 1;
                let k = (seed as u32 + i as u32) % bases;
                t.bank = Some(k * bank_alignment(banks));
            }
        }
        let mut u = psum::unroll::unroll(&m).unwrap();
        // Random explicit clusters that break SPEC §5.3 are refused at a
        // matmul with explicit flags; with the flags left to legalization
        // the program legalizes.
        if let Err(e) = legalize_program(&mut u.clone(), &arch) {
            let MatmulError::Input(input) = &e else {
                panic!("seed {seed}: {e}");
            };
            let at = input.inst().unwrap_or_else(|| panic!("seed {seed}: {e}"));
            let mm = u.inst(at).kind.as_matmul().unwrap();
            assert!(matches!(mm.flags, Flags::Set(_)), "seed {seed}: {e}");
            refused += 1;
            for inst in &mut u.insts {
                if let InstKind::Matmul(mm) = &mut inst.kind {
                    (mm.flags, mm.zr) = (Flags::Auto, None);
                }
            }
        }
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
    assert_eq!(refused, 299);
}
