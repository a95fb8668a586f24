//! Mutation tests: deliberate corruptions of compiled programs must each be
//! caught, with a message that names the corruption.
//!
//! The harness takes an original program text and its compiled text, applies
//! one corruption to the compiled module, and requires `verify` to fail with
//! a first error containing the expected words.

use crate::verify_fixtures;

use psum::ir::{FlagSet, Flags, InstId, InstKind, Mem, Module, Stmt};
use psum::text::inst_to_string;
use psum::verify::{checker, statics, verify, verify_with, Simulator};
use verify_fixtures::*;

const ALL: [(&str, &str); 5] = [
    (EX01, C01),
    (EX02, C02),
    (EX03, C03),
    (EX04, C04),
    (O05, C05),
];

/// The first error `verify` reports (static checks, checker, simulator),
/// running the simulator only when the cheaper checks pass.
fn first_error(original: &Module, result: &Module) -> Option<String> {
    if let Err(e) = statics::check(original, result) {
        return Some(format!("static check: {e}"));
    }
    if let Err(e) = checker::check(original, result) {
        return Some(format!("checker: {e}"));
    }
    verify(original, result).first_error()
}

/// Verifies `mutant` against `original` and requires a first error containing every word of `want`.
fn caught(original: &str, mutant: &Module, what: &str, want: &[&str]) {
    let Some(err) = first_error(&module(original), mutant) else {
        panic!("{what}: not caught\n{}", psum::text::print(mutant));
    };
    for w in want {
        assert!(
            err.contains(w),
            "{what}: error {err:?} does not mention {w:?}"
        );
    }
}

fn matmuls(m: &Module) -> Vec<InstId> {
    m.insts_in_order()
        .into_iter()
        .filter(|&i| m.inst(i).kind.as_matmul().is_some())
        .collect()
}

fn flags_mut(m: &mut Module, id: InstId) -> &mut FlagSet {
    let InstKind::Matmul(mm) = &mut m.insts[id].kind else {
        panic!("not a matmul")
    };
    match &mut mm.flags {
        Flags::Set(fs) => fs,
        Flags::Auto => panic!("auto flags in a compiled fixture"),
    }
}

/// Removes instruction `id` from the (loop-free) program.
fn remove(m: &mut Module, id: InstId) {
    for b in &mut m.blocks {
        b.body.retain(|s| *s != Stmt::Inst(id));
    }
}

/// Moves instruction `id` to right after `after` (same block).
fn move_after(m: &mut Module, id: InstId, after: InstId) {
    remove(m, id);
    for b in &mut m.blocks {
        if let Some(p) = b.body.iter().position(|s| *s == Stmt::Inst(after)) {
            b.body.insert(p + 1, Stmt::Inst(id));
        }
    }
}

fn name(m: &Module, id: InstId) -> String {
    let pos = m.insts_in_order().iter().position(|&i| i == id).unwrap();
    match m.inst(id).label() {
        Some(l) => format!("%{l}"),
        None => format!("%{pos}"),
    }
}

#[test]
fn interfering_tensors_given_one_bank() {
    // Example 01: a and b are live together.
    let mut m = module(C01);
    let a = m.tensor_by_name("a").unwrap();
    let b = m.tensor_by_name("b").unwrap();
    m.tensors[b].bank = m.tensors[a].bank;
    caught(
        EX01,
        &m,
        "b on a's bank",
        &["checker", "reads a at bank 3", "found b written by %1"],
    );
    // Example 02: t1 moved onto t0's bank while t0 is live (before its save).
    let mut m = module(C02);
    let t1 = m.tensor_by_name("t1").unwrap();
    m.tensors[t1].bank = Some(0);
    caught(
        EX02,
        &m,
        "t1 on bank 0",
        &["checker", "reads t1 at bank 0", "found t8 written by %9"],
    );
}

#[test]
fn reload_removed() {
    let mut m = module(C02);
    let reload = m
        .insts_in_order()
        .into_iter()
        .find(|&i| inst_to_string(&m, i).starts_with("copy t0_ReloadTensorCopy1"))
        .unwrap();
    remove(&mut m, reload);
    caught(
        EX02,
        &m,
        "reload removed",
        &[
            "checker",
            "reads t0_ReloadTensorCopy1 (standing for t0)",
            "found t8 written by",
        ],
    );
}

#[test]
fn save_moved_after_clobbering_write() {
    let mut m = module(C02);
    let order = m.insts_in_order();
    let save = order
        .iter()
        .copied()
        .find(|&i| inst_to_string(&m, i).starts_with("copy t0_SpillTensorCopy0"))
        .unwrap();
    // The first later write to a tensor on t0's bank clobbers it.
    let bank = m.tensors[m.tensor_by_name("t0").unwrap()].bank;
    let clobber = order
        .iter()
        .copied()
        .skip_while(|&i| i != save)
        .skip(1)
        .find(|&i| {
            let t = m.tensor(m.inst(i).kind.dst().tensor);
            t.mem == Mem::Psum && t.bank == bank
        })
        .unwrap();
    move_after(&mut m, save, clobber);
    let who = name(&m, clobber);
    caught(
        EX02,
        &m,
        "save moved",
        &[
            "checker",
            "reads t0 at bank 0",
            &format!("found t8 written by {who}"),
        ],
    );
}

#[test]
fn start_removed_from_every_group_head() {
    let mut n = 0;
    for (orig, res) in ALL {
        let base = module(res);
        for id in matmuls(&base) {
            if !flags_mut(&mut base.clone(), id).start {
                continue;
            }
            let mut m = base.clone();
            flags_mut(&mut m, id).start = false;
            let who = name(&m, id);
            caught(
                orig,
                &m,
                &format!("start removed from {who}"),
                &[&who, "neither start nor an init"],
            );
            n += 1;
        }
    }
    assert_eq!(n, 16);
}

#[test]
fn start_added_to_interior_matmuls() {
    // Column-slice clusters of example 03, the K chain of 04, the memset cluster of 05.
    let mut n = 0;
    for (orig, res) in [(EX03, C03), (EX04, C04), (O05, C05)] {
        let base = module(res);
        for (i, id) in matmuls(&base).into_iter().enumerate() {
            let mut m = base.clone();
            let fs = flags_mut(&mut m, id);
            if fs.start || i == 0 {
                continue;
            }
            fs.start = true;
            let who = name(&m, id);
            caught(
                orig,
                &m,
                &format!("start added to {who}"),
                &[&who, "start on a"],
            );
            n += 1;
        }
    }
    assert_eq!(n, 2 + 3 + 2);
}

#[test]
fn inserted_memset_removed() {
    let original = module(O05);
    let orig_lines: Vec<String> = original
        .insts_in_order()
        .into_iter()
        .map(|i| inst_to_string(&original, i))
        .collect();
    let base = module(C05);
    let inserted: Vec<InstId> = base
        .insts_in_order()
        .into_iter()
        .filter(|&i| {
            matches!(base.inst(i).kind, InstKind::Memset { .. })
                && !orig_lines.contains(&inst_to_string(&base, i))
        })
        .collect();
    assert_eq!(inserted.len(), 1);
    let mut m = base.clone();
    remove(&mut m, inserted[0]);
    caught(
        O05,
        &m,
        "memset removed",
        &["%1", "neither start nor an init"],
    );
    // The checker alone names the garbage under the head.
    let err = psum::verify::checker::check(&original, &m).unwrap_err();
    assert_eq!(
        err.to_string(),
        "%1 (flags=none) writes acc at bank 4, partition 0, byte 0: expected zero underneath, found uninitialized PSUM (garbage)"
    );
}

#[test]
fn zr_changed_on_every_matmul() {
    let mut n = 0;
    for (orig, res) in ALL {
        let base = module(res);
        for id in matmuls(&base) {
            let mut m = base.clone();
            let InstKind::Matmul(mm) = &mut m.insts[id].kind else {
                unreachable!()
            };
            let old = mm.zr.unwrap();
            mm.zr = Some(old ^ 1);
            let who = name(&m, id);
            let found = format!("zr={}", old ^ 1);
            let expected = format!("gives zr={old}");
            caught(
                orig,
                &m,
                &format!("zr of {who}"),
                &[&who, &found, &expected],
            );
            n += 1;
        }
    }
    assert_eq!(n, 4 + 9 + 4 + 4 + 3);
}

#[test]
fn bank_out_of_range_for_every_psum_tensor() {
    let mut n = 0;
    for (orig, res) in ALL {
        let base = module(res);
        for (i, t) in base.tensors.iter() {
            if t.mem != Mem::Psum {
                continue;
            }
            let mut m = base.clone();
            m.tensors[i].bank = Some(8);
            caught(
                orig,
                &m,
                &format!("bank of {}", t.name),
                &[&t.name, "at bank 8", "trn1 has 8"],
            );
            n += 1;
        }
    }
    assert_eq!(n, 3 + 10 + 1 + 1 + 1);
}

/// Requires the symbolic simulator alone to reject `mutant` at the element
/// `at` (`TENSOR[P, byte B]`), where the exact simulator finds it too.
fn simulator_rejects(original: &str, mutant: &Module, what: &str, at: &str) {
    let orig = module(original);
    let sym = verify(&orig, mutant).simulator;
    let exact = verify_with(&orig, mutant, Simulator::Exact).simulator;
    let prefix = format!("{at}: original computes ");
    let sym = sym.map_err(|e| e.to_string());
    assert!(
        sym.as_ref().is_err_and(|e| e.starts_with(&prefix)
            && e.contains("computes symbol #")
            && e.contains(", result computes symbol #")),
        "{what}: symbolic simulator says {sym:?}"
    );
    let exact = exact.map_err(|e| e.to_string());
    assert!(
        exact.as_ref().is_err_and(|e| e.starts_with(&prefix)),
        "{what}: exact simulator says {exact:?}"
    );
}

/// Example 02 with the matmul at `a`'s and at `b`'s positions trading operands.
fn operands_swapped(a: usize, b: usize) -> Module {
    let mut m = module(C02);
    let mm = matmuls(&m);
    let operands = |m: &Module, i: InstId| {
        let x = m.inst(i).kind.as_matmul().unwrap();
        (x.stationary.clone(), x.moving.clone())
    };
    let (oa, ob) = (operands(&m, mm[a]), operands(&m, mm[b]));
    for (id, (s, v)) in [(mm[a], ob), (mm[b], oa)] {
        let InstKind::Matmul(x) = &mut m.insts[id].kind else {
            unreachable!()
        };
        (x.stationary, x.moving) = (s, v);
    }
    m
}

#[test]
fn two_matmuls_trade_operands() {
    // t0 (spilled, then y0) and t1 (into y) trade operands: the banks, flags
    // and every symbol the checker follows stay right; only values differ.
    let m = operands_swapped(0, 1);
    assert_eq!(checker::check(&module(EX02), &m), Ok(()));
    caught(
        EX02,
        &m,
        "operands of %0 and %2 swapped",
        &["simulator: y[0, byte 0]: original computes symbol #"],
    );
    simulator_rejects(EX02, &m, "operands swapped", "y[0, byte 0]");
    // t1 and t2 both flow only into the sum y: trading them is no error.
    let m = operands_swapped(1, 2);
    assert!(verify(&module(EX02), &m).is_ok());
}

#[test]
fn one_accumulation_dropped() {
    // The third of example 04's four K-chain matmuls removed: flags, banks and
    // the checker's versions stay consistent; the sum misses a term.
    let mut m = module(C04);
    let chain = matmuls(&m);
    assert_eq!(chain.len(), 4);
    remove(&mut m, chain[2]);
    assert_eq!(statics::check(&module(EX04), &m), Ok(()));
    assert_eq!(checker::check(&module(EX04), &m), Ok(()));
    caught(
        EX04,
        &m,
        "accumulation dropped",
        &["simulator: y[0, byte 0]: original computes symbol #"],
    );
    simulator_rejects(EX04, &m, "accumulation dropped", "y[0, byte 0]");
}

#[test]
fn extra_start_inside_a_chain() {
    // A start on every interior matmul of example 04's chain: the static
    // check names it, and the simulator alone sees the lost partial sums.
    let base = module(C04);
    let chain = matmuls(&base);
    for &id in &chain[1..] {
        let mut m = base.clone();
        flags_mut(&mut m, id).start = true;
        let who = name(&m, id);
        caught(
            EX04,
            &m,
            &format!("start added to {who}"),
            &[
                "static check",
                &who,
                "start on a matmul that is not the head",
            ],
        );
        simulator_rejects(EX04, &m, &format!("start on {who}"), "y[0, byte 0]");
    }
}

#[test]
fn reload_from_the_wrong_spill_copy() {
    // t1 is spilled too, and t0's reload reads t1's spill copy: declarations
    // are well formed and the checker sees the reload as t0's latest write.
    let src = C02
        .replace(
            "sbuf t0_SpillTensorCopy0 [128, 2048]\n",
            "sbuf t0_SpillTensorCopy0 [128, 2048]\nsbuf t1_SpillTensorCopy2 [128, 2048]\n",
        )
        .replace(
            "  matmul t2 <-",
            "  copy t1_SpillTensorCopy2 <- t1\n  matmul t2 <-",
        )
        .replace(
            "copy t0_ReloadTensorCopy1 <- t0_SpillTensorCopy0",
            "copy t0_ReloadTensorCopy1 <- t1_SpillTensorCopy2",
        );
    let m = module(&src);
    assert_eq!(statics::check(&module(EX02), &m), Ok(()));
    assert_eq!(checker::check(&module(EX02), &m), Ok(()));
    caught(
        EX02,
        &m,
        "reload from t1's spill copy",
        &["simulator: y0[0, byte 0]: original computes symbol #"],
    );
    simulator_rejects(EX02, &m, "wrong spill copy", "y0[0, byte 0]");
    // Reading its own copy again is fine.
    let ok = src.replace(
        "copy t0_ReloadTensorCopy1 <- t1_SpillTensorCopy2",
        "copy t0_ReloadTensorCopy1 <- t0_SpillTensorCopy0",
    );
    assert!(verify(&module(EX02), &module(&ok)).is_ok());
}
