//! Shared helpers for the matmul-pass tests: parse a fixture, validate it,
//! unroll it, legalize it, and print its instructions.

#![allow(dead_code)] // each test binary uses its own subset

use psum::arch::{lookup, Arch};
use psum::ir::Module;
use psum::matmul::{legalize_program, MatmulError, MatmulReport};

/// Parses and validates `src`.
pub fn parse(src: &str) -> Module {
    let m = psum::text::parse(src).expect("fixture parses").module;
    psum::validate::validate(&m).expect("fixture is valid");
    m
}

/// The module's architecture.
pub fn arch(m: &Module) -> Arch {
    lookup(&m.arch).expect("known arch")
}

/// Unrolls `m` and legalizes the result.
pub fn try_legalize(m: &Module) -> Result<(Module, MatmulReport), MatmulError> {
    let mut u = psum::unroll::unroll(m).expect("unrolls");
    let r = legalize_program(&mut u, &arch(m))?;
    Ok((u, r))
}

/// Parses, validates, unrolls and legalizes `src`.
pub fn legalize(src: &str) -> (Module, MatmulReport) {
    try_legalize(&parse(src)).expect("legalizes")
}

/// The instructions in program order, as printed.
pub fn lines(m: &Module) -> Vec<String> {
    m.insts_in_order()
        .into_iter()
        .map(|i| psum::text::inst_to_string(m, i))
        .collect()
}

/// The report's flags as `(label, flags)` strings.
pub fn flags(r: &MatmulReport) -> Vec<(String, String)> {
    r.flags
        .iter()
        .map(|(l, f)| (l.clone(), f.to_string()))
        .collect()
}

/// Sets `bank=` on the named tensors.
pub fn set_banks(m: &mut Module, banks: &[(&str, u32)]) {
    for &(name, bank) in banks {
        let t = m.tensor_by_name(name).expect("tensor exists");
        m.tensors[t].bank = Some(bank);
    }
}
