//! The verification oracle on hand-compiled examples: compiled programs pass,
//! the simulator computes exact values, and the checker sees what values cannot.

use crate::verify_fixtures;

use psum::ir::{Flags, TensorId};
use psum::verify::sim::{input_value, run, Mode, DEFAULT_SEED};
use psum::verify::{verify, verify_with, CheckError, Simulator};
use verify_fixtures::*;

const PAIRS: [(&str, &str, &str); 6] = [
    ("01", EX01, C01),
    ("02", EX02, C02),
    ("03", EX03, C03),
    ("04", EX04, C04),
    ("04 alloc", EX04, C04_ALLOC),
    ("05", O05, C05),
];

#[test]
fn hand_compiled_examples_verify() {
    for (name, orig, res) in PAIRS {
        let r = verify(&module(orig), &module(res));
        assert!(r.is_ok(), "example {name}: {:?}", r.first_error());
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"checker": "ok", "simulator": "ok", "statics": "ok"})
        );
    }
}

/// The exact simulator (`psum verify --exact`) agrees on every pair.
#[test]
fn hand_compiled_examples_verify_exactly() {
    for (name, orig, res) in PAIRS {
        let r = verify_with(&module(orig), &module(res), Simulator::Exact);
        assert_eq!(r.simulator, Ok(()), "example {name}");
        assert!(r.is_ok(), "example {name}: {:?}", r.first_error());
    }
}

/// out[0, 0] of example 04 is Σ_k Σ_kk w[kk, k·512] · x[kk, k·1024], computed by hand.
#[test]
fn simulator_computes_exact_values() {
    let m = module(EX04);
    let mem = run(&m, Mode::Virtual, DEFAULT_SEED).unwrap();
    let out = m.tensor_by_name("out").unwrap();
    let got = mem.tensor(&m, out);
    let w = |p: usize, e: usize| input_value(DEFAULT_SEED, "w", p * 2048 + e);
    let x = |p: usize, e: usize| input_value(DEFAULT_SEED, "x", p * 4096 + e);
    let want: f64 = (0..4)
        .flat_map(|k| (0..128).map(move |kk| (k, kk)))
        .map(|(k, kk)| w(kk, k * 512) * x(kk, k * 1024))
        .sum();
    assert_eq!(got[0], want);
    // out[3, 7]: stationary column 3, moving column 7.
    let want: f64 = (0..4)
        .flat_map(|k| (0..128).map(move |kk| (k, kk)))
        .map(|(k, kk)| w(kk, k * 512 + 3) * x(kk, k * 1024 + 7))
        .sum();
    assert_eq!(got[3 * 512 + 7], want);
    // The unrolled, legalized program computes the same on physical PSUM.
    let c = module(C04);
    let phys = run(&c, Mode::Physical, DEFAULT_SEED).unwrap();
    assert_eq!(phys.tensor(&c, c.tensor_by_name("out").unwrap()), got);
}

/// A memset init accumulates (SPEC §2.4): y = 2 + product; a read between
/// memset and matmul breaks the init, and the matmul assigns.
#[test]
fn simulator_follows_the_init_rule() {
    let src = |mid: &str| {
        format!(
            "arch trn1\npsum acc [1, 4]\nsbuf s [1, 2] bf16\nsbuf v [1, 2] bf16\nsbuf y [1, 4]\nsbuf z [1, 4]\n\
             block main {{\n  memset acc = 2\n{mid}  matmul acc <- s, v\n  act y <- acc\n}}\n"
        )
    };
    let s = input_value(DEFAULT_SEED, "s", 0);
    let v = input_value(DEFAULT_SEED, "v", 0);
    for (mid, want) in [("", 2.0 + s * v), ("  act z <- acc\n", s * v)] {
        let m = module(&src(mid));
        let mem = run(&m, Mode::Virtual, DEFAULT_SEED).unwrap();
        assert_eq!(mem.tensor(&m, m.tensor_by_name("y").unwrap()), vec![want]);
    }
}

/// Two tensors computed from the same operands hold equal values; sharing a
/// bank is invisible to the simulator but not to the checker.
#[test]
fn checker_sees_equal_values_sharing_a_bank() {
    let orig = "arch trn1\npsum a [128, 2048]\npsum b [128, 2048]\nsbuf w [128, 256] bf16\n\
        sbuf x [128, 1024] bf16\nsbuf y [128, 2048]\n\
        block main {\n  matmul a <- w, x\n  matmul b <- w, x\n  act y <- a, b\n}\n";
    let res = orig
        .replace("psum a [128, 2048]", "psum a [128, 2048] bank=0")
        .replace("psum b [128, 2048]", "psum b [128, 2048] bank=0")
        .replace("<- w, x\n", "<- w, x flags=start|stop zr=2\n");
    let r = verify(&module(orig), &module(&res));
    assert_eq!(r.simulator, Ok(()));
    let err = r.checker.unwrap_err();
    assert_eq!(
        err.to_string(),
        "%2 reads a at bank 0, partition 0, byte 0: expected a written by %0, found b written by %1"
    );
    assert!(matches!(err, CheckError::Read { clobberer: Some(ref c), .. } if c == "%1"));
    // With distinct banks the same program is fine.
    let ok = res.replace("psum b [128, 2048] bank=0", "psum b [128, 2048] bank=1");
    assert!(verify(&module(orig), &module(&ok)).is_ok());
}

/// PSUM starts as garbage: a matmul that neither starts nor has an init shows
/// in values, and the checker names it.
#[test]
fn missing_zero_shows_in_values_and_symbols() {
    let orig = module(EX04);
    let mut res = module(C04);
    let first = res.insts_in_order()[0];
    if let psum::ir::InstKind::Matmul(mm) = &mut res.insts[first].kind {
        mm.flags = Flags::Set(psum::ir::FlagSet::NONE);
    }
    let r = verify(&orig, &res);
    assert!(
        matches!(r.simulator, Err(psum::verify::SimError::Mismatch { ref tensor, partition: 0, byte: 0, .. }) if tensor == "y"),
        "{:?}",
        r.simulator
    );
    assert_eq!(
        r.checker.unwrap_err().to_string(),
        "%0 (flags=none) writes acc at bank 0, partition 0, byte 0: expected zero underneath, found uninitialized PSUM (garbage)"
    );
}

/// The checker runs loops (allocation output, flags auto) and names iterations.
#[test]
fn checker_names_loop_iterations() {
    let orig = module(EX04);
    let src = C04_ALLOC
        .replace("  act y <- acc", "  memset clob = 1\n  act y <- acc")
        .replace(
            "psum acc [128, 2048] bank=0",
            "psum acc [128, 2048] bank=0\npsum clob [128, 64] bank=0",
        );
    let res = module(&src);
    let err = psum::verify::checker::check(&orig, &res).unwrap_err();
    assert_eq!(
        err.to_string(),
        "%2 reads acc at bank 0, partition 0, byte 0: expected acc written by %0 (k=3), found clob written by %1"
    );
}

/// Violations point at the instruction or declaration to show.
#[test]
fn first_violation_has_a_location() {
    use psum::ir::Loc;
    let orig = module(EX01);
    let mut res = module(C01);
    res.tensors[TensorId(1)].bank = Some(9);
    let r = verify(&orig, &res);
    assert_eq!(r.first_loc(&res), Loc::Tensor(psum::ir::TensorId(1)));
    let mut res = module(C01);
    res.tensors[TensorId(1)].bank = Some(3);
    let r = verify(&orig, &res);
    assert_eq!(r.first_loc(&res), Loc::Inst(res.insts_in_order()[4]));
}

/// Static checks of declarations: alignment, spill-code names and shapes.
#[test]
fn static_checks_of_declarations() {
    let c01 = C01;
    let c02 = C02;
    let statics = |orig: &str, res: String| {
        psum::verify::statics::check(&module(orig), &module(&res))
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        statics(
            EX01,
            c01.replace("psum c [128, 4096] bank=0", "psum c [128, 4096] bank=1")
        ),
        "PSUM tensor c occupies 2 banks from bank 1, which is not a multiple of its alignment 2"
    );
    assert_eq!(
        statics(
            EX01,
            c01.replace("psum c [128, 4096] bank=0", "psum c [128, 4096]")
        ),
        "PSUM tensor c has no bank"
    );
    assert_eq!(
        statics(
            EX02,
            c02.replace("t0_SpillTensorCopy0", "t0_SpillTensorCopy1")
        ),
        "spill-code tensors t0_ReloadTensorCopy1 and t0_SpillTensorCopy1 share the counter 1"
    );
    assert_eq!(
        statics(
            EX02,
            c02.replace(
                "sbuf t0_SpillTensorCopy0 [128, 2048]",
                "sbuf t0_SpillTensorCopy0 [128, 1024]"
            )
            .replace(
                "copy t0_SpillTensorCopy0 <- t0",
                "copy t0_SpillTensorCopy0 <- t0[0:128, 0:1024]"
            )
            .replace(
                "copy t0_ReloadTensorCopy1 <- t0_SpillTensorCopy0",
                "copy t0_ReloadTensorCopy1[0:128, 0:1024] <- t0_SpillTensorCopy0"
            )
        ),
        "t0_SpillTensorCopy0 must be a sbuf tensor of the shape and dtype of t0"
    );
    assert_eq!(
        statics(EX02, c02.replace("sbuf y0 [128, 2048]\n", "sbuf y0 [128, 2048]\nsbuf junk [1, 4]\n")),
        "result declares junk, which is not in the original and is not a spill, reload or memloc-split tensor"
    );
    assert_eq!(
        statics(
            EX02,
            c02.replace("sbuf y0 [128, 2048]\n", "").replace("y0", "y")
        ),
        "result lacks tensor y0 of the original"
    );
}

/// A memloc-split piece `X.N` stands for a fresh tensor; its reload stands for it.
#[test]
fn memloc_pieces_and_their_reloads_verify() {
    let orig = "arch trn1\npsum acc [128, 2048]\nsbuf w [128, 256] bf16\nsbuf x [128, 2048] bf16\n\
        sbuf y [128, 2048]\nsbuf z [128, 2048]\n\
        block main {\n  matmul acc <- w, x[0:128, 0:1024]\n  act y <- acc\n  matmul acc <- w, x[0:128, 1024:2048]\n  act z <- acc\n}\n";
    let res = "arch trn1\npsum acc.0 [128, 2048] bank=0\npsum acc.1 [128, 2048] bank=0\nsbuf w [128, 256] bf16\n\
        sbuf x [128, 2048] bf16\nsbuf y [128, 2048]\nsbuf z [128, 2048]\n\
        sbuf acc.1_SpillTensorCopy0 [128, 2048]\npsum acc.1_ReloadTensorCopy1 [128, 2048] bank=1\n\
        block main {\n  matmul acc.0 <- w, x[0:128, 0:1024] flags=start|stop zr=2\n  act y <- acc.0\n\
        matmul acc.1 <- w, x[0:128, 1024:2048] flags=start|stop zr=2\n\
        copy acc.1_SpillTensorCopy0 <- acc.1\n  copy acc.1_ReloadTensorCopy1 <- acc.1_SpillTensorCopy0\n\
        act z <- acc.1_ReloadTensorCopy1\n}\n";
    let r = verify(&module(orig), &module(res));
    assert!(r.is_ok(), "{:?}", r.first_error());
    // The reload on acc.1's own bank is fine too; on a bank holding garbage it is not.
    let bad = res.replace(
        "copy acc.1_ReloadTensorCopy1 <- acc.1_SpillTensorCopy0\n",
        "",
    );
    assert_eq!(
        psum::verify::checker::check(&module(orig), &module(&bad))
            .unwrap_err()
            .to_string(),
        "%4 reads acc.1_ReloadTensorCopy1 (standing for acc.1) at bank 1, partition 0, byte 0: \
         expected acc.1 written by %2, found uninitialized PSUM (garbage)"
    );
}
