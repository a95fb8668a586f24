//! Property test: every random valid program compiles and verifies, or is
//! refused with a clear allocation error — never a panic, never a wrong result.
//!
//! Runs seeds `0..2000`; `PSUM_PROPTEST_SEEDS=N` runs `0..N` instead.

use psum::alloc::Allocator;
use psum::fuzzing::compile::{check_allocator, Outcome};
use psum::gen::random::{program, program_text, RandomConfig};

/// The number of seeds: `PSUM_PROPTEST_SEEDS`, else 2000.
fn seeds() -> u64 {
    std::env::var("PSUM_PROPTEST_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000)
}

#[test]
fn random_programs_compile_and_verify() {
    let (mut verified, mut refused) = (0, 0);
    for seed in 0..seeds() {
        // Vary the pressure: 4 to 11 PSUM tensors at most.
        let cfg = RandomConfig {
            tensors: 4 + (seed % 8) as u32,
            ..RandomConfig::rich()
        };
        let m = program(seed, &cfg).unwrap();
        match check_allocator(&m, Allocator::Briggs) {
            Ok((Outcome::Verified, _)) => verified += 1,
            Ok((Outcome::Refused, _)) => refused += 1,
            Err(e) => panic!("seed {seed}: {e}\n{}", program_text(seed, &cfg).unwrap()),
        }
    }
    eprintln!("{verified} programs verified, {refused} refused");
    assert!(
        verified >= 20,
        "only {verified} programs verified ({refused} refused)"
    );
}
