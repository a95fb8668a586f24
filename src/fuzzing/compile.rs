//! The compile-and-verify property under every allocator, behind the
//! `compile` fuzz target.
//!
//! [`check_bytes`] reads a seed and a generator configuration from its
//! input, generates a valid program (SPEC §7, `gen::random`) and runs
//! [`check_allocator`] with each of `ALLOCATORS`: `compile` (§6) without
//! its own verification, then the verifier (§5), which must accept the
//! result — or the allocator refuses the program with an error a valid
//! program may get (a tensor too big for PSUM, too many reloads, more nodes
//! than `exact` takes). `briggs-reference` must give `briggs`' output byte
//! for byte (§3.10). The bytes left then `corrupt` `briggs`' result, and
//! `check_corrupted` runs the verifier and legalization on it: they may
//! reject it, never panic.

use crate::alloc::{AllocError, AllocOptions, Allocator};
use crate::arch;
use crate::gen::random::{program, Arches, RandomConfig, ARCHES};
use crate::ir::{FlagSet, Flags, InstId, InstKind, Mem, Module, Stmt, TensorId};
use crate::matmul::legalize_program;
use crate::pipeline::{compile, CompileError, CompileOptions};
use crate::verify::verify;

/// The allocators every program is compiled with, in order.
pub(crate) const ALLOCATORS: [Allocator; 4] = [
    Allocator::Briggs,
    Allocator::BriggsReference,
    Allocator::Mincost,
    Allocator::Exact,
];

/// Bytes [`check_bytes`] reads before the corruption: a seed (8) and the
/// configuration (5).
pub(crate) const HEADER: usize = 13;

/// What one allocator did with a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Compiled, and the result verifies.
    Verified,
    /// Refused with an error a valid program may get.
    Refused,
}

/// A failure of the property.
#[derive(Clone, Debug, thiserror::Error)]
pub enum CheckError {
    /// The generator could not make a program of the configuration.
    #[error("seed {seed}: the generator fails: {error}")]
    Generate {
        /// The seed.
        seed: u64,
        /// The generator's error.
        error: String,
    },
    /// `compile` failed with an error no valid program should get.
    #[error("--allocator {}: unexpected error: {error}\n{program}", allocator.name())]
    Compile {
        /// The allocator.
        allocator: Allocator,
        /// The error.
        error: CompileError,
        /// The input program.
        program: String,
    },
    /// The compiled program does not verify.
    #[error("--allocator {}: the result does not verify: {error}\n{program}", allocator.name())]
    Verify {
        /// The allocator.
        allocator: Allocator,
        /// The verifier's first error.
        error: String,
        /// The input program.
        program: String,
    },
    /// `briggs-reference` and `briggs` compile the program differently.
    #[error("briggs-reference differs from briggs on\n{program}")]
    ReferenceDiffers {
        /// The input program.
        program: String,
    },
}

/// The generator configuration five bytes describe: the architecture, up
/// to 12 PSUM tensors, chains of up to 4 matmuls, loops or not, tensors of
/// up to 3 banks or of one, and every other feature of
/// [`RandomConfig::rich`].
pub(crate) fn config(b: &[u8]) -> RandomConfig {
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

/// Whether `allocator` may refuse a valid program with `e`.
pub(crate) fn allowed(allocator: Allocator, e: &CompileError) -> bool {
    match e {
        CompileError::Alloc(AllocError::TooBig { .. } | AllocError::TooManyReloads { .. }) => true,
        CompileError::Alloc(AllocError::ExactTooLarge { .. }) => allocator == Allocator::Exact,
        _ => false,
    }
}

/// Compiles `m` with `allocator` (without `compile`'s own verification)
/// and verifies the result; returns the outcome and the result.
pub fn check_allocator(
    m: &Module,
    allocator: Allocator,
) -> Result<(Outcome, Option<Module>), CheckError> {
    let opts = CompileOptions {
        alloc: AllocOptions {
            allocator,
            ..AllocOptions::default()
        },
        verify: false,
        ..CompileOptions::default()
    };
    match compile(m, &opts) {
        Ok(c) => match verify(m, &c.module).first_error() {
            None => Ok((Outcome::Verified, Some(c.module))),
            Some(error) => Err(CheckError::Verify {
                allocator,
                error,
                program: crate::text::print(m),
            }),
        },
        Err(e) if allowed(allocator, &e) => Ok((Outcome::Refused, None)),
        Err(error) => Err(CheckError::Compile {
            allocator,
            error,
            program: crate::text::print(m),
        }),
    }
}

/// Runs [`check_allocator`] with each of `ALLOCATORS` and compares
/// `briggs-reference` with `briggs`; returns each allocator's outcome and
/// `briggs`' result.
pub(crate) fn check_program(m: &Module) -> Result<(Vec<Outcome>, Option<Module>), CheckError> {
    let mut outcomes = Vec::with_capacity(ALLOCATORS.len());
    let mut briggs = None;
    for allocator in ALLOCATORS {
        let (outcome, result) = check_allocator(m, allocator)?;
        outcomes.push(outcome);
        match allocator {
            Allocator::Briggs => briggs = Some(result),
            Allocator::BriggsReference if briggs.as_ref() != Some(&result) => {
                return Err(CheckError::ReferenceDiffers {
                    program: crate::text::print(m),
                });
            }
            _ => {}
        }
    }
    Ok((outcomes, briggs.flatten()))
}

/// One corruption per byte pair of `ops`: a bank changed, flags set, a
/// `zr` changed, or an instruction dropped.
pub(crate) fn corrupt(m: &mut Module, ops: &[u8]) {
    for op in ops.chunks(2) {
        let (kind, arg) = (op[0] % 4, usize::from(*op.get(1).unwrap_or(&0)));
        match kind {
            0 => {
                let psum: Vec<TensorId> = (m.tensors.iter())
                    .filter(|(_, t)| t.mem == Mem::Psum)
                    .map(|(i, _)| i)
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
                if let InstKind::Matmul(mm) = &mut m.insts[InstId::new(arg % n)].kind {
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
                if let Some(b) = m.blocks.iter_mut().find(|b| !b.body.is_empty()) {
                    let i = arg % b.body.len();
                    if matches!(b.body[i], Stmt::Inst(_)) {
                        b.body.remove(i);
                    }
                }
            }
        }
    }
}

/// Runs the verifier on `result`, a corrupted compilation of `original`,
/// and, when it is a valid program, legalization: each may reject it (the
/// verifier's verdict is returned), neither may panic.
pub(crate) fn check_corrupted(original: &Module, result: &Module) -> Option<String> {
    let verdict = verify(original, result).first_error();
    if crate::validate::validate(result).is_ok() {
        if let Ok(a) = arch::lookup(&result.arch) {
            // Refusing the corrupted input is as good as legalizing it.
            let _ = legalize_program(&mut result.clone(), &a);
        }
    }
    verdict
}

/// The whole check on one fuzz input: a seed (8 bytes, little-endian), the
/// `config` (5 bytes), then corruption operations; inputs shorter than
/// `HEADER` are skipped. Returns each allocator's outcome.
pub fn check_bytes(data: &[u8]) -> Result<Vec<Outcome>, CheckError> {
    let Some((head, ops)) = data.split_at_checked(HEADER) else {
        return Ok(Vec::new());
    };
    let (seed, cfg) = head.split_at(8);
    let seed = u64::from_le_bytes(seed.try_into().expect("eight bytes"));
    let m = program(seed, &config(cfg)).map_err(|e| CheckError::Generate {
        seed,
        error: e.to_string(),
    })?;
    let (outcomes, briggs) = check_program(&m)?;
    if let Some(mut result) = briggs {
        corrupt(&mut result, ops);
        check_corrupted(&m, &result);
    }
    Ok(outcomes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::sim::splitmix;

    /// A bounded, seeded run of the fuzz target: 48 inputs of 13 to 31
    /// bytes. Every allocator verifies most programs, and the corruptions
    /// make the verifier reject most results.
    #[test]
    fn seeded_inputs_verify_under_every_allocator() {
        let mut verified = [0; ALLOCATORS.len()];
        let mut rejected = 0;
        for i in 0..48u64 {
            let len = HEADER + (i % 19) as usize;
            let data: Vec<u8> = (0..len as u64)
                .map(|j| splitmix(i << 8 | j) as u8)
                .collect();
            let outcomes = check_bytes(&data).unwrap_or_else(|e| panic!("input {i}: {e}"));
            for (v, o) in verified.iter_mut().zip(&outcomes) {
                *v += usize::from(*o == Outcome::Verified);
            }
            let seed = u64::from_le_bytes(data[..8].try_into().unwrap());
            let m = program(seed, &config(&data[8..HEADER])).unwrap();
            if let Ok((_, Some(mut r))) = check_allocator(&m, Allocator::Briggs) {
                corrupt(&mut r, &data[HEADER..]);
                rejected += usize::from(check_corrupted(&m, &r).is_some());
            }
        }
        // briggs and its reference refuse 4 programs (too many reloads),
        // mincost and exact 3.
        assert_eq!(verified, [44, 44, 45, 45]);
        assert_eq!(rejected, 39);
    }

    /// A result that does not compute what its input computes fails the
    /// property, naming the allocator.
    #[test]
    fn a_wrong_result_is_reported() {
        let src =
            "arch trn1\npsum a [128, 2048]\nsbuf w [128, 256] bf16\nsbuf x [128, 1024] bf16\n\
                   sbuf y [128, 2048]\nblock main {\n  matmul a <- w, x\n  copy y <- a\n}\n";
        let m = crate::text::parse(src).unwrap().module;
        let (_, Some(mut r)) = check_allocator(&m, Allocator::Mincost).unwrap() else {
            panic!("compiles");
        };
        assert_eq!(check_corrupted(&m, &r), None);
        // Dropping the matmul leaves `a` unwritten when it is copied.
        corrupt(&mut r, &[3, 0]);
        let verdict = check_corrupted(&m, &r).expect("rejected");
        assert!(verdict.starts_with("checker: "), "{verdict}");
    }
}
