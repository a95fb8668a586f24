//! `psum::peers`: the problems shared with regalloc2.

use psum::alloc::AllocOptions;
use psum::bound::{min_spills_one_bank, peak_demand};
use psum::ir::{InstKind, Mem};
use psum::peers::{run_psum, Problem, Step};

#[test]
fn generated_problems_hit_their_peak_and_use_each_tensor_one_to_three_times() {
    for (n, peak) in [(1_000, 8), (1_000, 16), (300, 3)] {
        let p = Problem::generate(n, peak, 1);
        let ivs = peak_demand(&p.intervals());
        assert_eq!(ivs.banks, peak, "n={n} peak={peak}");
        let mut defs = vec![0u32; n as usize];
        let mut uses = vec![0u32; n as usize];
        let mut next = 0;
        for s in &p.steps {
            match *s {
                Step::Def(t) => {
                    assert_eq!(t, next, "tensors are defined in order");
                    next += 1;
                    defs[t as usize] += 1;
                }
                Step::Use(t) => {
                    assert_eq!(defs[t as usize], 1, "use after def");
                    uses[t as usize] += 1;
                }
            }
        }
        assert!(defs.iter().all(|&d| d == 1));
        assert!(uses.iter().all(|&u| (1..=3).contains(&u)));
    }
}

#[test]
fn generation_is_deterministic_per_seed() {
    assert_eq!(Problem::generate(500, 8, 7), Problem::generate(500, 8, 7));
    assert_ne!(Problem::generate(500, 8, 7), Problem::generate(500, 8, 8));
}

#[test]
fn small_problem_intervals_and_bound() {
    let p = Problem {
        num_tensors: 3,
        steps: vec![
            Step::Def(0),
            Step::Def(1),
            Step::Use(0),
            Step::Def(2),
            Step::Use(1),
            Step::Use(2),
        ],
    };
    let ends: Vec<(u32, u32)> = p.intervals().iter().map(|i| (i.start, i.end)).collect();
    assert_eq!(ends, vec![(0, 2), (1, 4), (3, 5)]);
    assert_eq!(min_spills_one_bank(&p.intervals(), 1), Some(vec![1]));
}

#[test]
fn module_has_one_instruction_per_step_and_distinct_matmul_operands() {
    let p = Problem::generate(2_000, 8, 3);
    let m = p.to_module("trn1");
    assert_eq!(m.insts.len(), p.steps.len());
    assert_eq!(m.blocks.len(), 1);
    let psum = m.tensors.values().filter(|t| t.mem == Mem::Psum).count();
    assert_eq!(psum, 2_000);
    let mut operands = std::collections::HashSet::new();
    for (inst, step) in m.insts_in_order().into_iter().zip(&p.steps) {
        match (&m.inst(inst).kind, *step) {
            (InstKind::Matmul(mm), Step::Def(t)) => {
                assert_eq!(m.tensor(mm.dst.tensor).name, format!("t{t}"));
                assert!(mm.dst.is_whole(m.tensor(mm.dst.tensor)));
                assert!(operands.insert((mm.stationary.clone(), mm.moving.clone())));
            }
            (InstKind::Act { dst, srcs }, Step::Use(t)) => {
                assert_eq!(m.tensor(dst.tensor).name, "out");
                assert_eq!(m.tensor(srcs[1].tensor).name, format!("t{t}"));
            }
            (k, s) => panic!("step {s:?} built as {}", k.mnemonic()),
        }
    }
    let x = m.tensor(m.tensor_by_name("x").unwrap());
    assert_eq!((x.partitions, x.bytes), (128, 2 * 16));
    let arch = psum::arch::lookup("trn1").unwrap();
    assert!(m
        .tensors
        .values()
        .filter(|t| t.mem == Mem::Psum)
        .all(|t| arch.bank_num(u64::from(t.bytes)) == 1));
}

#[test]
fn module_is_valid_and_round_trips_through_text() {
    let m = Problem::generate(300, 8, 5).to_module("trn1");
    psum::validate::validate(&m).unwrap();
    let parsed = psum::text::parse(&psum::text::print(&m)).unwrap();
    assert!(parsed.module.same_program(&m));
}

#[test]
fn psum_sees_the_same_intervals() {
    let p = Problem::generate(400, 16, 9);
    let m = p.to_module("trn1");
    let seen = psum::alloc::problem(&m, &psum::alloc::AllocOptions::default()).unwrap();
    assert_eq!(seen.intervals(), p.intervals());
    let names: Vec<String> = (0..400).map(|t| format!("t{t}")).collect();
    let ids: Vec<&String> = seen.buffers.iter().map(|b| &b.id).collect();
    assert_eq!(ids, names.iter().collect::<Vec<_>>());
}

#[test]
fn psum_run_counts_spill_code() {
    let p = Problem::generate(200, 16, 2);
    let m = p.to_module("trn1");
    let (run, result) = run_psum(&m, &AllocOptions::default(), 1).unwrap();
    let bound = min_spills_one_bank(&p.intervals(), 8).unwrap().len();
    assert!(run.spilled >= bound && bound > 0);
    // One save per spilled tensor, one reload per read group (at least one).
    assert_eq!(run.saves, run.spilled);
    assert!(run.reloads >= run.spilled);
    assert_eq!(result.insts.len(), m.insts.len() + run.saves + run.reloads);
    assert!(psum::verify::verify(&m, &result).is_ok());

    let easy = Problem::generate(200, 8, 2).to_module("trn1");
    let (run, _) = run_psum(&easy, &AllocOptions::default(), 2).unwrap();
    assert_eq!(
        (run.spilled, run.saves, run.reloads, run.iterations),
        (0, 0, 0, 1)
    );
}
