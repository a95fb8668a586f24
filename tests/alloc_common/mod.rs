//! Test support for the allocator tests: parsing fixtures, running the
//! allocator in both modes, and a generator of random valid allocation
//! programs (see [`random`]).

#![allow(dead_code)]

pub mod random;

use psum::alloc::{allocate, AllocOptions, AllocOutcome, Mode};
use psum::ir::Module;
use psum::text;

/// Parses and validates `src`, panicking with the message on error.
pub fn module(src: &str) -> Module {
    let parsed = text::parse(src).unwrap_or_else(|e| panic!("parse: {e}\n{src}"));
    psum::validate::validate(&parsed.module).unwrap_or_else(|e| panic!("validate: {e}\n{src}"));
    parsed.module
}

/// Allocates `m` in fast mode and in reference mode, checks that both give
/// byte-identical programs, reports and logs, and returns the outcome.
pub fn alloc_both(m: &Module, opts: AllocOptions) -> AllocOutcome {
    let fast = allocate(
        m,
        &AllocOptions {
            mode: Mode::Fast,
            ..opts
        },
    )
    .expect("fast allocation");
    let reference = allocate(
        m,
        &AllocOptions {
            mode: Mode::Reference,
            ..opts
        },
    )
    .expect("reference allocation");
    assert_same(&fast, &reference);
    fast
}

/// Asserts two outcomes print the same program, report, log and trace.
pub fn assert_same(a: &AllocOutcome, b: &AllocOutcome) {
    assert_eq!(text::print(&a.module), text::print(&b.module));
    assert_eq!(
        serde_json::to_string(&a.report).unwrap(),
        serde_json::to_string(&b.report).unwrap()
    );
    assert_eq!(a.log, b.log);
    assert_eq!(a.trace, b.trace);
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
