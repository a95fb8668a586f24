//! The compile-and-verify property shared by `tests/verify_property.rs` and
//! the `compile` fuzz target (`fuzz/fuzz_targets/compile.rs`).

use psum::ir::Module;
use psum::pipeline::{compile, CompileOptions};
use psum::verify::verify;

/// The compiler under test: the `compile` pipeline (validate → alloc →
/// unroll → order → legalize), without its own verification.
pub fn compile_for_test(m: &Module) -> Result<Module, String> {
    let opts = CompileOptions {
        verify: false,
        ..CompileOptions::default()
    };
    compile(m, &opts)
        .map(|c| c.module)
        .map_err(|e| e.to_string())
}

/// Allocation errors a valid program may legitimately get.
pub fn allowed(err: &str) -> bool {
    ["is too big for PSUM", "too many reloads required"]
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
