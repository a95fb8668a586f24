//! Property test: every random valid program compiles and verifies, or is
//! refused with a clear allocation error — never a panic, never a wrong result.
//!
//! Time-boxed (about 45 s) so it fits in CI.

use crate::verify_compile;

use psum::gen::random::{program, program_text, RandomConfig};
use std::time::{Duration, Instant};
use verify_compile::{compile_and_verify, Outcome};

#[test]
fn random_programs_compile_and_verify() {
    let start = Instant::now();
    let (mut verified, mut refused) = (0, 0);
    for seed in 0..2000u64 {
        if start.elapsed() > Duration::from_secs(45) {
            break;
        }
        // Vary the pressure: 4 to 11 PSUM tensors at most.
        let cfg = RandomConfig {
            tensors: 4 + (seed % 8) as u32,
            ..RandomConfig::rich()
        };
        let m = program(seed, &cfg).unwrap();
        match compile_and_verify(&m) {
            Ok(Outcome::Verified) => verified += 1,
            Ok(Outcome::Refused) => refused += 1,
            Err(e) => panic!("seed {seed}: {e}\n{}", program_text(seed, &cfg).unwrap()),
        }
    }
    eprintln!("{verified} programs verified, {refused} refused");
    assert!(
        verified >= 20,
        "only {verified} programs verified ({refused} refused)"
    );
}
