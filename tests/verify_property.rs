//! Property test: every random valid program compiles and verifies, or is
//! refused with a clear allocation error — never a panic, never a wrong result.
//!
//! Time-boxed (about 45 s) so it fits in CI.

use psum::arch;
use psum::gen::random::{random_program, random_program_text, RandomConfig};
use psum::ir::{Mem, Module};
use psum::verify::verify;
use std::time::{Duration, Instant};

/// The compiler under test. Until the lead wires in the real pipeline
/// (validate → alloc → unroll → order → legalize), this is the baseline
/// compilation: every PSUM tensor gets its own aligned banks, first fit in
/// declaration order, loops and `auto` flags kept (a valid allocation output
/// whenever everything fits at once).
fn compile_for_test(m: &Module) -> Result<Module, String> {
    let a = arch::lookup(&m.arch).map_err(|e| e.to_string())?;
    let mut out = m.clone();
    let mut next = 0u32;
    for t in out.tensors.iter_mut().filter(|t| t.mem == Mem::Psum) {
        let banks = a.aligned_bank_num(a.bank_num(u64::from(t.bytes)));
        let align = arch::bank_alignment(banks);
        let base = next.div_ceil(align) * align;
        if base + banks > a.num_banks() {
            return Err(format!("too many PSUM tensors: {} does not fit", t.name));
        }
        t.bank = Some(base);
        next = base + banks;
    }
    Ok(out)
}

/// Allocation errors a valid program may legitimately get.
fn allowed(err: &str) -> bool {
    [
        "is too big for PSUM",
        "too many reloads required",
        "too many PSUM tensors",
    ]
    .iter()
    .any(|e| err.contains(e))
}

#[test]
fn random_programs_compile_and_verify() {
    let cfg = RandomConfig::default();
    let start = Instant::now();
    let (mut verified, mut refused) = (0, 0);
    for seed in 0..2000u64 {
        if start.elapsed() > Duration::from_secs(45) {
            break;
        }
        let m = random_program(seed, &cfg);
        match compile_for_test(&m) {
            Ok(res) => {
                let r = verify(&m, &res);
                assert!(
                    r.is_ok(),
                    "seed {seed}: {:?}\n{}",
                    r.first_error(),
                    random_program_text(seed, &cfg)
                );
                verified += 1;
            }
            Err(e) => {
                assert!(allowed(&e), "seed {seed}: unexpected error {e}");
                refused += 1;
            }
        }
    }
    assert!(
        verified >= 20,
        "only {verified} programs verified ({refused} refused)"
    );
}
