//! Test support for the allocator tests: parsing fixtures, running the
//! allocator in both modes, and the allocation programs of
//! `psum::gen::random` in the tests' terms ([`Config`], [`program`]).

#![allow(dead_code)]

use psum::alloc::{allocate, AllocError, AllocOptions, AllocOutcome, Allocator, LogLevel};
use psum::gen::random::{self, Arches, RandomConfig};
use psum::ir::Module;
use psum::text;

/// Shape of a random allocation program.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Arch codename (`inf1` programs use 64-partition PSUM tensors).
    pub arch: &'static str,
    /// Number of PSUM tensors declared.
    pub tensors: usize,
    /// Largest tensor, in banks (1..=3).
    pub max_banks: u32,
    /// Target number of banks live at once.
    pub pressure: usize,
    /// Whether to emit loops: accumulation loops, loop-carried values,
    /// loops of short-lived tensors (nested) and reads in loops.
    pub loops: bool,
}

/// The text of a random allocation program for `cfg`, deterministic in
/// `seed`: bank-sized tensors, reads of at most two banks, whole overwrites
/// of consumed tensors (memloc split), and with `loops` every loop shape.
pub fn program(seed: u64, cfg: Config) -> String {
    let rc = RandomConfig {
        arch: Arches::Fixed(cfg.arch.to_string()),
        tensors: cfg.tensors as u32,
        pressure: Some(cfg.pressure as f64),
        max_banks: cfg.max_banks,
        read_banks: 2,
        loops: cfg.loops,
        second_lives: true,
        carried: cfg.loops,
        local_loops: cfg.loops,
        ..RandomConfig::default()
    };
    random::program_text(seed, &rc).unwrap_or_else(|e| panic!("seed {seed}: {e}"))
}

/// The architectures random programs are drawn for.
pub const ARCHS: [&str; 4] = ["trn1", "inf1", "core_v4", "gen3"];

/// A proptest strategy for a seed, a [`Config`] of fewer than
/// `max_tensors` tensors on any of [`ARCHS`] (1–3 banks, pressure 1–11,
/// loops or not), and now and then a `--psum-banks` below the arch's.
pub fn random_config(
    max_tensors: usize,
) -> impl proptest::strategy::Strategy<Value = (u64, Config, Option<u32>)> {
    use proptest::prelude::*;
    (
        any::<u64>(),
        0..ARCHS.len(),
        1usize..max_tensors,
        1u32..=3,
        1usize..12,
        any::<bool>(),
        prop::option::weighted(0.2, 1u32..=8),
    )
        .prop_map(|(seed, a, tensors, max_banks, pressure, loops, banks)| {
            let arch = ARCHS[a];
            let total = psum::arch::lookup(arch).unwrap().num_banks();
            let cfg = Config {
                arch,
                tensors,
                max_banks,
                pressure,
                loops,
            };
            (seed, cfg, banks.map(|b| b.min(total)))
        })
}

/// Parses and validates `src`, panicking with the message on error.
pub fn module(src: &str) -> Module {
    let parsed = text::parse(src).unwrap_or_else(|e| panic!("parse: {e}\n{src}"));
    psum::validate::validate(&parsed.module).unwrap_or_else(|e| panic!("validate: {e}\n{src}"));
    parsed.module
}

/// Allocates `m` in fast mode, in reference mode and with the trace
/// (which reference mode writes). All three must succeed with
/// byte-identical programs, reports and logs, only the traced run having
/// a trace (the log's lines with the trace lines among them), or fail with the same error; returns the traced outcome.
pub fn alloc_all(m: &Module, opts: AllocOptions) -> Result<AllocOutcome, AllocError> {
    let run = |allocator, log| {
        allocate(
            m,
            &AllocOptions {
                allocator,
                log,
                ..opts
            },
        )
    };
    let fast = run(Allocator::Briggs, LogLevel::Log);
    let reference = run(Allocator::BriggsReference, LogLevel::Log);
    let traced = run(Allocator::Briggs, LogLevel::Trace);
    match (fast, reference, traced) {
        (Ok(f), Ok(r), Ok(t)) => {
            assert_same(&f, &r);
            assert!(f.trace.is_empty() && r.trace.is_empty());
            assert_same(&f, &t);
            let mut trace = t.trace.iter();
            let interleaved = t.log.iter().all(|l| trace.any(|x| x == l));
            assert!(interleaved, "the trace interleaves the log's lines");
            Ok(t)
        }
        (Err(f), Err(r), Err(t)) => {
            assert_eq!(f, r);
            assert_eq!(f, t);
            Err(f)
        }
        (f, r, t) => panic!(
            "modes disagree: {:?} / {:?} / {:?}",
            f.err(),
            r.err(),
            t.err()
        ),
    }
}

/// [`alloc_all`], which must succeed.
pub fn alloc_both(m: &Module, opts: AllocOptions) -> AllocOutcome {
    alloc_all(m, opts).unwrap_or_else(|e| panic!("allocation: {e}"))
}

/// Asserts two outcomes print the same program, report, log and warnings.
pub fn assert_same(a: &AllocOutcome, b: &AllocOutcome) {
    assert_eq!(text::print(&a.module), text::print(&b.module));
    assert_eq!(
        serde_json::to_string(&a.report).unwrap(),
        serde_json::to_string(&b.report).unwrap()
    );
    assert_eq!(a.log, b.log);
    assert_eq!(a.warnings, b.warnings);
}

/// Allocates `src` (both modes, compared) with default options.
pub fn alloc_src(src: &str) -> AllocOutcome {
    alloc_both(&module(src), AllocOptions::default())
}

/// `(name, bank)` of every PSUM tensor in the report, in declaration order.
pub fn banks(out: &AllocOutcome) -> Vec<(String, Option<u32>)> {
    out.report
        .tensors
        .iter()
        .map(|t| (t.name.clone(), t.bank))
        .collect()
}

/// `(name, [start, end])` of every PSUM tensor in the report.
pub fn intervals(out: &AllocOutcome) -> Vec<(String, Option<[u32; 2]>)> {
    out.report
        .tensors
        .iter()
        .map(|t| (t.name.clone(), t.interval))
        .collect()
}

/// Builds `[(name, bank)]` expectations from string/number pairs.
pub fn expect(pairs: &[(&str, u32)]) -> Vec<(String, Option<u32>)> {
    pairs
        .iter()
        .map(|&(n, b)| (n.to_string(), Some(b)))
        .collect()
}

/// The body of the printed program: everything after the declarations.
pub fn body(out: &AllocOutcome) -> String {
    let p = text::print(&out.module);
    p[p.find("block ").expect("a block")..].to_string()
}
