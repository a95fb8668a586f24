//! The random program generator builds valid, deterministic programs.

use psum::gen::random::{program, program_text, RandomConfig, ARCHES};
use psum::verify::sim::{run, Mode, DEFAULT_SEED};

#[test]
fn generated_programs_validate_and_simulate() {
    let cfg = RandomConfig::rich();
    for seed in 0..300 {
        let m = program(seed, &cfg).unwrap();
        if let Err(e) = psum::validate::validate(&m) {
            panic!("seed {seed}: {e}\n{}", program_text(seed, &cfg).unwrap());
        }
        if seed % 10 == 0 {
            run(&m, Mode::Virtual, DEFAULT_SEED).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        }
    }
}

#[test]
fn generator_is_deterministic_and_covers_every_arch() {
    let cfg = RandomConfig::rich();
    assert_eq!(program_text(7, &cfg), program_text(7, &cfg));
    assert_ne!(program_text(7, &cfg), program_text(8, &cfg));
    for a in ARCHES {
        let seen = (0..40).any(|s| program(s, &cfg).unwrap().arch == a);
        assert!(seen, "no program for {a}");
    }
}

#[test]
fn generator_covers_the_features() {
    let cfg = RandomConfig::rich();
    let all: String = (0..100).map(|s| program_text(s, &cfg).unwrap()).collect();
    for feature in [
        "loop ", "memset ", " pos=0,", "copy p", "dma out_", "block b1", "k*",
    ] {
        assert!(all.contains(feature), "no program has {feature:?}");
    }
}
