//! The random program generator builds valid, deterministic programs.

use psum::gen::random::{random_program, random_program_text, RandomConfig, ARCHES};
use psum::verify::sim::{run, Mode, DEFAULT_SEED};

#[test]
fn generated_programs_validate_and_simulate() {
    let cfg = RandomConfig::default();
    for seed in 0..300 {
        let m = random_program(seed, &cfg);
        if let Err(e) = psum::validate::validate(&m) {
            panic!("seed {seed}: {e}\n{}", random_program_text(seed, &cfg));
        }
        if seed % 10 == 0 {
            run(&m, Mode::Virtual, DEFAULT_SEED).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        }
    }
}

#[test]
fn generator_is_deterministic_and_covers_every_arch() {
    let cfg = RandomConfig::default();
    assert_eq!(random_program_text(7, &cfg), random_program_text(7, &cfg));
    assert_ne!(random_program_text(7, &cfg), random_program_text(8, &cfg));
    for a in ARCHES {
        let seen = (0..40).any(|s| random_program(s, &cfg).arch == a);
        assert!(seen, "no program for {a}");
    }
}

#[test]
fn generator_covers_the_features() {
    let cfg = RandomConfig::default();
    let all: String = (0..100).map(|s| random_program_text(s, &cfg)).collect();
    for feature in [
        "loop ", "memset ", " pos=0,", "copy t", "dma out_", "block b1", "k0*",
    ] {
        assert!(all.contains(feature), "no program has {feature:?}");
    }
}
