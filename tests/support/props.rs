//! The settings of every property test: a fixed number of cases drawn from a
//! fixed seed, so each run checks the same programs, and a regression file
//! per test file that proptest reads back before the new cases.

use proptest::test_runner::{Config, FileFailurePersistence, RngSeed};

/// `cases` cases from a fixed seed; failures are saved to and replayed from
/// `regressions` (a path from the crate root, under
/// `tests/proptest-regressions/BINARY/`).
pub fn config(cases: u32, regressions: &'static str) -> Config {
    Config {
        cases,
        rng_seed: RngSeed::Fixed(0x7073_756d),
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(regressions))),
        ..Config::default()
    }
}
