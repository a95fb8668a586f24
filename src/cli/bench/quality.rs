//! `psum bench --quality` (SPEC §3.11): what the allocators spill, side by
//! side in one run, one table per problem family — Briggs (SPEC §3),
//! mincost, exact where it applies, and the lower bounds of `psum bound`.
//!
//! - one-bank straight-line `random` programs (trn1, seed 7) against the
//!   count bound and the cost bound;
//! - a corpus of random programs of every architecture, with and without
//!   loops, one- and multi-bank, 20–2,000 tensors, and every `gen`
//!   workload at its defaults: mincost against Briggs, every mincost
//!   result verified (SPEC §5);
//! - programs of at most [`exact::MAX_NODES`] nodes: mincost and Briggs
//!   against exact, exact against the cost bound;
//! - speed: the scaling programs of `psum bench` at 100k and 1M tensors;
//! - the peer problems of `cargo bench --bench peers`, psum's side (that
//!   bench, run after these tables, adds regalloc2's Ion and fastalloc).

use crate::alloc::problem;
use crate::alloc::{allocate_owned, exact, AllocOptions, AllocOutcome, Allocator};
use crate::bound::bounds;
use crate::cli::io::Failure;
use crate::gen::random::Rng;
use crate::gen::scaling;
use crate::gen::workloads::{generate, random, RandomParams, Workload, WorkloadKind};
use crate::ir::Module;
use crate::peers::Problem;
use crate::verify::verify;
use std::fmt::Write as _;
use std::time::Instant;

/// One allocation: its spill count and cost, and the time it took.
struct Run {
    spilled: usize,
    cycles: u64,
    secs: f64,
    outcome: AllocOutcome,
}

/// Allocates a copy of `m` with `allocator` (the copy made before the clock
/// starts), on one thread when `serial`.
fn run(m: &Module, allocator: Allocator, serial: bool) -> Result<Run, Failure> {
    let opts = AllocOptions {
        allocator,
        parallel: !serial,
        ..AllocOptions::default()
    };
    let input = m.clone();
    let t = Instant::now();
    let outcome = allocate_owned(input, &opts)?;
    let secs = t.elapsed().as_secs_f64();
    Ok(Run {
        spilled: outcome.report.spilled.len(),
        cycles: outcome.report.spill_cost_cycles,
        secs,
        outcome,
    })
}

/// Fails when `r`'s program does not verify against `m` (SPEC §5: checker,
/// simulator, static checks).
fn verified(m: &Module, r: &Run, what: &str) -> Result<(), Failure> {
    match verify(m, &r.outcome.module).first_error() {
        None => Ok(()),
        Some(e) => Err(Failure::Input(format!(
            "error: {what} does not verify: {e}"
        ))),
    }
}

/// `a / b` to two decimals, `-` when `b` is 0 (and `a` is not).
fn times(a: u64, b: u64) -> String {
    match (a, b) {
        (0, 0) => "1.00".into(),
        (_, 0) => "-".into(),
        _ => format!("{:.2}", a as f64 / b as f64),
    }
}

fn ms(secs: f64) -> String {
    format!("{:.1} ms", secs * 1e3)
}

fn verdict(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "MISSED"
    }
}

/// Prints every table of `psum bench --quality`.
pub(crate) fn run_quality() -> Result<(), Failure> {
    print!("{}", straight_line()?);
    print!("{}", corpus()?);
    print!("{}", small()?);
    print!("{}", speed()?);
    print!("{}", peers()?);
    Ok(())
}

/// One-bank straight-line programs against both bounds.
fn straight_line() -> Result<String, Failure> {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "## One-bank straight-line programs (`psum gen random --tensors N --pressure P --seed 7`, trn1)\n"
    );
    let _ = writeln!(
        s,
        "| tensors | peak | count bound | cost bound | split bound | briggs spilled | briggs cycles | mincost spilled | mincost cycles | mincost / count bound | mincost / cost bound | mincost / split bound | mincost / briggs cycles | briggs time | mincost time |"
    );
    let _ = writeln!(
        s,
        "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
    );
    let mut worst = (0.0f64, 0.0f64);
    for tensors in [10_000, 100_000] {
        for pressure in [9.0, 12.0, 16.0] {
            let m = random(&RandomParams {
                tensors,
                pressure: Some(pressure),
                seed: 7,
                ..RandomParams::default()
            })?;
            let b = bounds(&problem(&m, &AllocOptions::default())?);
            let count = b.min_spills.unwrap_or(0) as u64;
            let cost = b.min_spill_cost_cycles.unwrap_or(0);
            let split = b.min_split_cost_cycles.unwrap_or(0);
            let briggs = run(&m, Allocator::Briggs, false)?;
            let mincost = run(&m, Allocator::Mincost, false)?;
            verified(&m, &mincost, "mincost")?;
            worst.0 = worst.0.max(mincost.spilled as f64 / count.max(1) as f64);
            worst.1 = worst.1.max(mincost.cycles as f64 / cost.max(1) as f64);
            let _ = writeln!(
                s,
                "| {tensors} | {} | {count} | {cost} | {split} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                b.peak_demand,
                briggs.spilled,
                briggs.cycles,
                mincost.spilled,
                mincost.cycles,
                times(mincost.spilled as u64, count),
                times(mincost.cycles, cost),
                times(mincost.cycles, split),
                times(mincost.cycles, briggs.cycles),
                ms(briggs.secs),
                ms(mincost.secs)
            );
        }
    }
    let _ = writeln!(
        s,
        "\n- mincost spilled ≤ 1.05 × count bound: {} (worst {:.2}×)\n- mincost cycles ≤ 1.05 × cost bound: {} (worst {:.2}×)\n",
        verdict(worst.0 <= 1.05),
        worst.0,
        verdict(worst.1 <= 1.05),
        worst.1
    );
    Ok(s)
}

/// The architectures of the corpus: one per generation.
const ARCHES: [&str; 4] = ["inf1", "trn1", "gen3", "core_v4"];

/// Corpus programs per family (architecture × loops × bank sizes).
const PER_FAMILY: usize = 128;

/// Mincost against Briggs on the corpus, per family.
fn corpus() -> Result<String, Failure> {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "## Corpus: random programs (20–2,000 tensors, pressure 0.75–2 × the banks, {PER_FAMILY} per family) and every `gen` workload\n"
    );
    let _ = writeln!(
        s,
        "| family | programs | mincost ≤ briggs | briggs cycles | mincost cycles | mincost / briggs | mincost failed, briggs not | briggs time | mincost time |"
    );
    let _ = writeln!(s, "|---|--:|--:|--:|--:|--:|--:|--:|--:|");
    let mut rng = Rng::new(2026);
    let mut all = Tally::default();
    let mut families: Vec<(String, Vec<Module>)> = Vec::new();
    for arch in ARCHES {
        for loops in [false, true] {
            for multi_bank in [false, true] {
                let mut programs = Vec::with_capacity(PER_FAMILY);
                for _ in 0..PER_FAMILY {
                    let tensors = (20.0 * 100f64.powf(rng.unit())) as u32;
                    let banks = crate::arch::lookup(arch).expect("known arch").num_banks();
                    let pressure = f64::from(banks) * (0.75 + 1.25 * rng.unit());
                    programs.push(random(&RandomParams {
                        arch: arch.into(),
                        tensors,
                        pressure: Some(pressure),
                        seed: rng.next_u64(),
                        multi_bank,
                        loops,
                        rich: false,
                    })?);
                }
                let name = format!(
                    "{arch}, {}, {}",
                    if loops { "loops" } else { "straight" },
                    if multi_bank { "1–4 banks" } else { "1 bank" }
                );
                families.push((name, programs));
            }
        }
    }
    let workloads = (WorkloadKind::ALL.iter())
        .map(|&k| generate(&Workload::defaults(k)))
        .collect::<Result<Vec<_>, _>>()?;
    families.push(("gen workloads (defaults)".into(), workloads));
    for (name, programs) in &families {
        let mut t = Tally::default();
        for m in programs {
            t.add(m)?;
        }
        let _ = writeln!(s, "| {name} | {} |", t.row());
        all.merge(&t);
    }
    let _ = writeln!(s, "| **all** | {} |", all.row());
    let share = all.at_most as f64 / all.programs as f64;
    let _ = writeln!(
        s,
        "\n- mincost ≤ briggs on ≥ 99% of programs: {} ({:.1}%)\n- mincost ≤ 0.7 × briggs in total: {} ({}×)\n- mincost never fails where briggs allocates: {} ({} failures)\n- mincost results verified (checker, simulator, static checks): {} of {}\n",
        verdict(share >= 0.99),
        100.0 * share,
        verdict(all.mincost * 10 <= all.briggs * 7),
        times(all.mincost, all.briggs),
        verdict(all.failed == 0),
        all.failed,
        all.verified,
        all.programs - all.failed,
    );
    Ok(s)
}

/// Totals of mincost against Briggs over programs.
#[derive(Default)]
struct Tally {
    programs: usize,
    at_most: usize,
    briggs: u64,
    mincost: u64,
    failed: usize,
    verified: usize,
    briggs_secs: f64,
    mincost_secs: f64,
}

impl Tally {
    /// Allocates `m` both ways (a program Briggs cannot allocate is left
    /// out) and verifies mincost's result.
    fn add(&mut self, m: &Module) -> Result<(), Failure> {
        let Ok(briggs) = run(m, Allocator::Briggs, true) else {
            return Ok(());
        };
        self.programs += 1;
        self.briggs += briggs.cycles;
        self.briggs_secs += briggs.secs;
        match run(m, Allocator::Mincost, true) {
            Ok(mincost) => {
                verified(m, &mincost, "mincost")?;
                self.verified += 1;
                self.at_most += usize::from(mincost.cycles <= briggs.cycles);
                self.mincost += mincost.cycles;
                self.mincost_secs += mincost.secs;
            }
            Err(_) => self.failed += 1,
        }
        Ok(())
    }

    fn merge(&mut self, o: &Tally) {
        self.programs += o.programs;
        self.at_most += o.at_most;
        self.briggs += o.briggs;
        self.mincost += o.mincost;
        self.failed += o.failed;
        self.verified += o.verified;
        self.briggs_secs += o.briggs_secs;
        self.mincost_secs += o.mincost_secs;
    }

    fn row(&self) -> String {
        format!(
            "{} | {} ({:.1}%) | {} | {} | {} | {} | {} | {}",
            self.programs,
            self.at_most,
            100.0 * self.at_most as f64 / self.programs.max(1) as f64,
            self.briggs,
            self.mincost,
            times(self.mincost, self.briggs),
            self.failed,
            ms(self.briggs_secs),
            ms(self.mincost_secs)
        )
    }
}

/// Small programs per family in the comparison with exact.
const SMALL_PER_FAMILY: usize = 40;

/// Mincost and Briggs against exact on programs of at most
/// [`exact::MAX_NODES`] nodes.
fn small() -> Result<String, Failure> {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "## Programs of at most {} PSUM nodes (6–{} tensors, pressure 1–2.5 × the banks, {SMALL_PER_FAMILY} per family): against exact\n",
        exact::MAX_NODES,
        exact::MAX_NODES
    );
    let _ = writeln!(
        s,
        "| family | programs | mincost within 5% of exact | mincost = exact | briggs = exact | exact cycles | mincost cycles | briggs cycles | exact / cost bound (one-bank) | exact time |"
    );
    let _ = writeln!(s, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    let mut rng = Rng::new(24);
    let (mut programs, mut within) = (0, 0);
    let mut total = SmallRow::default();
    for arch in ARCHES {
        for loops in [false, true] {
            for multi_bank in [false, true] {
                let banks = crate::arch::lookup(arch).expect("known arch").num_banks();
                let mut row = SmallRow::default();
                for _ in 0..SMALL_PER_FAMILY {
                    let m = random(&RandomParams {
                        arch: arch.into(),
                        tensors: 6 + rng.below(exact::MAX_NODES as u64 - 5) as u32,
                        pressure: Some(f64::from(banks) * (1.0 + 1.5 * rng.unit())),
                        seed: rng.next_u64(),
                        multi_bank,
                        loops,
                        rich: false,
                    })?;
                    row.add(&m)?;
                }
                programs += row.programs;
                within += row.within;
                total.exact += row.exact;
                total.mincost += row.mincost;
                total.briggs = total.briggs.saturating_add(row.briggs);
                let _ = writeln!(
                    s,
                    "| {arch}, {}, {} | {} |",
                    if loops { "loops" } else { "straight" },
                    if multi_bank { "1–4 banks" } else { "1 bank" },
                    row.render()
                );
            }
        }
    }
    let share = within as f64 / programs.max(1) as f64;
    let _ = writeln!(
        s,
        "\n- mincost within 5% of exact on ≥ 95% of programs: {} ({:.1}%)\n- in total, exact / briggs {}×, mincost / briggs {}×, mincost / exact {}×\n",
        verdict(share >= 0.95),
        100.0 * share,
        times(total.exact, total.briggs),
        times(total.mincost, total.briggs),
        times(total.mincost, total.exact)
    );
    Ok(s)
}

/// One family of the comparison with exact.
#[derive(Default)]
struct SmallRow {
    programs: usize,
    within: usize,
    equal: usize,
    briggs_equal: usize,
    exact: u64,
    mincost: u64,
    briggs: u64,
    /// Σ exact and Σ cost bound over the one-bank programs.
    exact_one_bank: u64,
    bound: u64,
    secs: f64,
}

impl SmallRow {
    /// Allocates `m` all three ways (left out when exact finds nothing);
    /// exact's result is verified.
    fn add(&mut self, m: &Module) -> Result<(), Failure> {
        let Ok(exact) = run(m, Allocator::Exact, true) else {
            return Ok(());
        };
        verified(m, &exact, "exact")?;
        let mincost = run(m, Allocator::Mincost, true)?;
        let briggs = run(m, Allocator::Briggs, true).map_or(u64::MAX, |r| r.cycles);
        self.programs += 1;
        self.within += usize::from(mincost.cycles * 100 <= exact.cycles * 105);
        self.equal += usize::from(mincost.cycles == exact.cycles);
        self.briggs_equal += usize::from(briggs == exact.cycles);
        self.exact += exact.cycles;
        self.mincost += mincost.cycles;
        self.briggs = self.briggs.saturating_add(briggs);
        self.secs += exact.secs;
        if let Some(c) = bounds(&problem(m, &AllocOptions::default())?).min_spill_cost_cycles {
            self.exact_one_bank += exact.cycles;
            self.bound += c;
        }
        Ok(())
    }

    fn render(&self) -> String {
        let bound = if self.bound == 0 && self.exact_one_bank == 0 {
            "-".to_string()
        } else {
            times(self.exact_one_bank, self.bound)
        };
        format!(
            "{} | {} | {} | {} | {} | {} | {} | {bound} | {}",
            self.programs,
            self.within,
            self.equal,
            self.briggs_equal,
            self.exact,
            self.mincost,
            self.briggs,
            ms(self.secs)
        )
    }
}

/// One allocator's figures in [`side_by_side`]: its median time, spill
/// count and spill cost.
struct Timed {
    secs: f64,
    spilled: usize,
    cycles: u64,
}

/// Briggs' fast mode and mincost on `m`, three runs each in alternating
/// pairs so that the machine's drift reaches both alike, each outcome
/// dropped before the next run.
fn side_by_side(m: &Module) -> Result<[Timed; 2], Failure> {
    let mut secs = [Vec::new(), Vec::new()];
    let mut spills = [(0, 0); 2];
    for _ in 0..3 {
        for (i, allocator) in [Allocator::Briggs, Allocator::Mincost]
            .into_iter()
            .enumerate()
        {
            let r = run(m, allocator, false)?;
            secs[i].push(r.secs);
            spills[i] = (r.spilled, r.cycles);
        }
    }
    Ok([0, 1].map(|i| {
        secs[i].sort_by(f64::total_cmp);
        Timed {
            secs: secs[i][1],
            spilled: spills[i].0,
            cycles: spills[i].1,
        }
    }))
}

/// Allocation time of mincost against Briggs' fast mode.
fn speed() -> Result<String, Failure> {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "## Speed: `psum bench`'s scaling programs (trn1, pressure 12, 1–4-bank tensors, seed 0), median of 3 in alternating pairs, both threads\n"
    );
    let _ = writeln!(
        s,
        "| tensors | briggs (fast) | mincost | briggs / mincost | briggs spilled | mincost spilled | briggs cycles | mincost cycles |"
    );
    let _ = writeln!(s, "|--:|--:|--:|--:|--:|--:|--:|--:|");
    let mut worst = f64::INFINITY;
    for tensors in [100_000, 1_000_000] {
        let m = random(&scaling::params(tensors))?;
        let [briggs, mincost] = side_by_side(&m)?;
        let speedup = briggs.secs / mincost.secs;
        worst = worst.min(speedup);
        let _ = writeln!(
            s,
            "| {tensors} | {} | {} | {speedup:.2}× | {} | {} | {} | {} |",
            ms(briggs.secs),
            ms(mincost.secs),
            briggs.spilled,
            mincost.spilled,
            briggs.cycles,
            mincost.cycles
        );
    }
    let _ = writeln!(
        s,
        "\n- mincost ≥ 3× faster than briggs' fast mode at 100k and 1M: {} (worst {worst:.2}×)\n",
        verdict(worst >= 3.0)
    );
    Ok(s)
}

/// psum's side of the peer problems.
fn peers() -> Result<String, Failure> {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "## Peer problems (`psum::peers`, seed 1, trn1's 8 banks), one thread; regalloc2's Ion and fastalloc: `cargo bench --manifest-path benches/Cargo.toml --bench peers`\n"
    );
    let _ = writeln!(
        s,
        "| tensors | peak demand | count bound | cost bound | briggs spilled | mincost spilled | briggs cycles | mincost cycles | briggs time | mincost time |"
    );
    let _ = writeln!(s, "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    for tensors in [10_000, 100_000] {
        for peak in [8, 16] {
            let m = Problem::generate(tensors, peak, 1).to_module("trn1");
            let b = bounds(&problem(&m, &AllocOptions::default())?);
            let briggs = run(&m, Allocator::Briggs, true)?;
            let mincost = run(&m, Allocator::Mincost, true)?;
            verified(&m, &mincost, "mincost")?;
            let _ = writeln!(
                s,
                "| {tensors} | {peak} | {} | {} | {} | {} | {} | {} | {} | {} |",
                b.min_spills.unwrap_or(0),
                b.min_spill_cost_cycles.unwrap_or(0),
                briggs.spilled,
                mincost.spilled,
                briggs.cycles,
                mincost.cycles,
                ms(briggs.secs),
                ms(mincost.secs)
            );
        }
    }
    let _ = writeln!(s);
    Ok(s)
}
