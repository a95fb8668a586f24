//! The compile-and-verify property shared by `tests/verify_property.rs` and
//! the `compile` fuzz target (`fuzz/fuzz_targets/compile.rs`).

use psum::arch;
use psum::ir::{Mem, Module};
use psum::verify::verify;

/// The compiler under test. Until the lead wires in the real pipeline
/// (validate → alloc → unroll → order → legalize), this is the baseline
/// compilation: every PSUM tensor gets its own aligned banks, first fit in
/// declaration order, loops and `auto` flags kept (a valid allocation output
/// whenever everything fits at once).
pub fn compile_for_test(m: &Module) -> Result<Module, String> {
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
pub fn allowed(err: &str) -> bool {
    [
        "is too big for PSUM",
        "too many reloads required",
        "too many PSUM tensors",
    ]
    .iter()
    .any(|e| err.contains(e))
}

/// What happened to one program.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Compiled and verified.
    Verified,
    /// Refused with an allowed allocation error.
    Refused,
}

/// Compiles `m` and verifies the result; `Err` describes a failure of the
/// property (a wrong result or an unexpected error).
pub fn compile_and_verify(m: &Module) -> Result<Outcome, String> {
    match compile_for_test(m) {
        Ok(res) => {
            let r = verify(m, &res);
            match r.first_error() {
                None => Ok(Outcome::Verified),
                Some(e) => Err(format!("verify failed: {e}\n{}", psum::text::print(&res))),
            }
        }
        Err(e) if allowed(&e) => Ok(Outcome::Refused),
        Err(e) => Err(format!("unexpected error: {e}")),
    }
}
