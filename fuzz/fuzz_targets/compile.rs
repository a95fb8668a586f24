//! Fuzzes the compile-and-verify property with the random program generator,
//! and the oracle's robustness on corrupted results: a generated program is
//! compiled and must verify (or be refused with an allocation error); then
//! the result is corrupted as the input bytes say, and `verify` must report
//! without panicking.
//!
//! Run: `cargo fuzz run compile --sanitizer none` (from the crate root).
#![no_main]

#[path = "../../tests/verify/verify_compile/mod.rs"]
mod verify_compile;

use libfuzzer_sys::fuzz_target;
use psum::gen::random::{program, Arches, RandomConfig, ARCHES};
use psum::ir::{FlagSet, Flags, InstKind, Mem, Module, Stmt};

fn config(b: &[u8]) -> RandomConfig {
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    RandomConfig {
        arch: match at(0) % 5 {
            4 => Arches::Generations,
            a => Arches::Fixed(ARCHES[usize::from(a)].to_string()),
        },
        tensors: 1 + u32::from(at(1) % 12),
        max_chain: 1 + u32::from(at(2) % 4),
        loops: at(3) % 4 != 0,
        max_banks: if at(4) % 3 != 0 { 3 } else { 1 },
        ..RandomConfig::rich()
    }
}

/// One corruption per remaining byte pair: change a bank, flip flags, change
/// zr, or drop an instruction.
fn corrupt(m: &mut Module, ops: &[u8]) {
    for op in ops.chunks(2) {
        let (kind, arg) = (op[0] % 4, usize::from(*op.get(1).unwrap_or(&0)));
        match kind {
            0 => {
                let psum: Vec<usize> = (0..m.tensors.len())
                    .filter(|&i| m.tensors[i].mem == Mem::Psum)
                    .collect();
                if let Some(&i) = psum.get(arg % psum.len().max(1)) {
                    m.tensors[i].bank = Some((arg / 8 % 10) as u32);
                }
            }
            1 | 2 => {
                let n = m.insts.len();
                if n == 0 {
                    continue;
                }
                if let InstKind::Matmul(mm) = &mut m.insts[arg % n].kind {
                    if kind == 1 {
                        let f = (arg / n) as u8;
                        mm.flags = Flags::Set(FlagSet {
                            start: f & 1 != 0,
                            acc: f & 2 != 0,
                            stop: f & 4 != 0,
                        });
                    } else {
                        mm.zr = Some((arg / n % 4) as u32);
                    }
                }
            }
            _ => {
                for b in &mut m.blocks {
                    if !b.body.is_empty() {
                        let i = arg % b.body.len();
                        if matches!(b.body[i], Stmt::Inst(_)) {
                            b.body.remove(i);
                        }
                        break;
                    }
                }
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 13 {
        return;
    }
    let seed = u64::from_le_bytes(data[0..8].try_into().unwrap());
    let m = program(seed, &config(&data[8..13])).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    if let Err(e) = verify_compile::compile_and_verify(&m) {
        panic!("seed {seed}: {e}");
    }
    if let Ok(mut res) = verify_compile::compile_for_test(&m) {
        corrupt(&mut res, &data[13..]);
        let _ = psum::verify::verify(&m, &res);
    }
});
