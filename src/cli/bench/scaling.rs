//! `psum bench`'s default mode (SPEC §3.10): the allocator's scaling table,
//! then the per-pass times of `compile` on the `gen` workloads.
//!
//! Every measured size runs in a child process (the binary re-invokes itself
//! as `psum bench --child SIZE MODE`), so the peak memory reported — the
//! child's `VmHWM` from `/proc/self/status`, the program built in memory
//! included — belongs to that size alone. The timed region is
//! [`allocate_owned`] on a program built through the library API: no parse,
//! no print. Reference and fast mode run on the same programs and their
//! results (program text, report, log) are compared through a digest.

use super::procfs::{peak_kib, Usage};
use super::{format_secs, BenchArgs};
use crate::alloc::{allocate_owned, AllocOptions, Allocator};
use crate::cli::io::Failure;
use crate::gen::scaling;
use crate::gen::workloads::{generate, random, Workload, WorkloadKind};
use crate::pipeline::{self, CompileOptions, PASSES};
use crate::text;
use std::fmt::Write as _;
use std::process::Command;
use std::time::Instant;

/// One child's measurement.
struct Sample {
    tensors: u32,
    mode: Allocator,
    /// Median allocation time, seconds.
    secs: f64,
    /// Peak resident memory of the child through its first run (one
    /// program and its allocation), KiB.
    peak_kib: u64,
    /// Peak resident memory of the child through all its runs, KiB: the
    /// later programs are built in a heap the earlier runs left fragmented.
    peak_all_kib: u64,
    /// CPU time and page faults of the median run.
    usage: Option<Usage>,
    /// Digest of the result (program text, report, log).
    digest: u64,
    iterations: u32,
    spilled: usize,
}

/// The scaling table: reference against fast mode on `compare_sizes`,
/// fast mode alone on `sizes`, then `compile` per pass on every `gen`
/// workload.
pub(super) fn run_scaling(a: &BenchArgs) -> Result<(), Failure> {
    let compare = a
        .compare_sizes
        .clone()
        .unwrap_or(scaling::COMPARE_SIZES.to_vec());
    let fast = a.sizes.clone().unwrap_or_else(|| {
        (scaling::FAST_SIZES.into_iter())
            .filter(|&n| !a.quick || n < 300_000)
            .collect()
    });
    let mut out = String::new();
    let p = scaling::params(0);
    let _ = writeln!(
        out,
        "allocator: `random` programs ({}, pressure 1.5 × the bank count, 1–4-bank tensors, seed {}); \
         time = allocate_owned only (median of {} runs; reference from 20k: 1 run); \
         peak = child VmHWM after its first run (one program and its allocation), and after all runs; \
         CPU = user + kernel time of the median run's threads (from /proc/self/stat, 10 ms ticks), \
         faults = its minor page faults (fresh 4 KiB pages)\n",
        p.arch, p.seed, a.runs
    );
    let _ = writeln!(
        out,
        "{:>9}  {:<9}  {:>10}  {:>13}  {:>8}  {:>9}  {:>9}  {:>16}  {:>5}  {:>8}  {:>8}  output",
        "tensors",
        "mode",
        "time",
        "CPU user+sys",
        "faults",
        "peak MiB",
        "all runs",
        "growth",
        "iters",
        "spilled",
        "ref/fast"
    );
    print!("{out}");
    let mut prev: [Option<(u32, f64)>; 2] = [None, None];
    let mut row = |s: &Sample, vs: Option<&Sample>| {
        let slot = usize::from(s.mode == Allocator::Briggs);
        let growth = prev[slot].map_or(String::new(), |(n, t)| {
            format!(
                "×{:.2} (size ×{:.1})",
                s.secs / t,
                f64::from(s.tensors) / f64::from(n)
            )
        });
        prev[slot] = Some((s.tensors, s.secs));
        let (ratio, same) = match vs {
            Some(r) => (
                format!("{:.1}×", r.secs / s.secs),
                if r.digest == s.digest {
                    "identical"
                } else {
                    "DIFFERENT"
                },
            ),
            None => (String::new(), ""),
        };
        let (cpu, faults) = s.usage.map_or((String::new(), String::new()), |c| {
            let cpu = format!("{:.2}+{:.2} s", c.user_secs, c.sys_secs);
            (cpu, c.faults.to_string())
        });
        println!(
            "{:>9}  {:<9}  {:>10}  {:>13}  {:>8}  {:>9.1}  {:>9.1}  {:>16}  {:>5}  {:>8}  {:>8}  {}",
            s.tensors,
            mode_name(s.mode),
            format_secs(s.secs),
            cpu,
            faults,
            s.peak_kib as f64 / 1024.0,
            s.peak_all_kib as f64 / 1024.0,
            growth,
            s.iterations,
            s.spilled,
            ratio,
            same
        );
    };
    let mut differ = false;
    for &n in &compare {
        let with_ref = !(a.quick && n >= 20_000);
        let r = with_ref
            .then(|| spawn(n, Allocator::BriggsReference, a.runs))
            .transpose()?;
        if let Some(r) = &r {
            row(r, None);
        }
        let f = spawn(n, Allocator::Briggs, a.runs)?;
        differ |= r.as_ref().is_some_and(|r| r.digest != f.digest);
        row(&f, r.as_ref());
    }
    for &n in &fast {
        let f = spawn(n, Allocator::Briggs, a.runs)?;
        row(&f, None);
    }
    println!();
    print!("{}", pass_table()?);
    if differ {
        return Err(Failure::Input(
            "error: fast and reference mode disagree".into(),
        ));
    }
    Ok(())
}

/// The name of `m` in the table and on the child's command line.
fn mode_name(m: Allocator) -> &'static str {
    match m {
        Allocator::BriggsReference => "reference",
        _ => "fast",
    }
}

/// Measures one size in a child process.
fn spawn(tensors: u32, mode: Allocator, runs: u32) -> Result<Sample, Failure> {
    let exe = std::env::current_exe()?;
    let slow = mode == Allocator::BriggsReference && tensors >= 20_000;
    let runs = if slow { 1 } else { runs.max(1) };
    let out = Command::new(exe)
        .args(["bench", "--child", &tensors.to_string(), mode_name(mode)])
        .args(["--runs", &runs.to_string()])
        .output()?;
    let line = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(Failure::Input(format!(
            "error: bench child ({tensors} tensors, {}) failed: {}",
            mode_name(mode),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let field = |key: &str| -> Result<&str, Failure> {
        line.split_whitespace()
            .find_map(|kv| kv.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
            .ok_or_else(|| Failure::Input(format!("error: bench child printed no {key}: {line}")))
    };
    let num = |key: &str| -> Result<u64, Failure> {
        field(key)?
            .parse()
            .map_err(|_| Failure::Input(format!("error: bench child printed a bad {key}: {line}")))
    };
    let secs = |key: &str| field(key).ok()?.parse::<f64>().ok();
    let usage = (|| {
        Some(Usage {
            user_secs: secs("user_secs")?,
            sys_secs: secs("sys_secs")?,
            faults: field("faults").ok()?.parse().ok()?,
        })
    })();
    Ok(Sample {
        tensors,
        mode,
        secs: num("nanos")? as f64 / 1e9,
        usage,
        peak_kib: num("peak_kib")?,
        peak_all_kib: num("peak_all_kib")?,
        digest: u64::from_str_radix(field("digest")?, 16).map_err(|_| {
            Failure::Input(format!("error: bench child printed a bad digest: {line}"))
        })?,
        iterations: num("iterations")? as u32,
        spilled: num("spilled")? as usize,
    })
}

/// The child: allocates a freshly built program `runs` times (the build
/// outside the timed region, each result dropped before the next build),
/// prints the median time, the peak memory after the first run (that of
/// one program and its allocation) and after all of them, and a digest of
/// the last result.
pub(super) fn run_child(size: &str, mode: &str, runs: u32) -> Result<(), Failure> {
    let tensors: u32 = size
        .parse()
        .map_err(|_| Failure::Input(format!("error: bad size {size}")))?;
    let mode = match mode {
        "fast" => Allocator::Briggs,
        "reference" => Allocator::BriggsReference,
        _ => return Err(Failure::Input(format!("error: bad mode {mode}"))),
    };
    let opts = AllocOptions {
        allocator: mode,
        ..AllocOptions::default()
    };
    let mut times = Vec::new();
    let mut last = None;
    let mut first_peak = None;
    for _ in 0..runs.max(1) {
        drop(last.take());
        let m = random(&scaling::params(tensors))?;
        let before = Usage::now();
        let t0 = Instant::now();
        let outcome = allocate_owned(m, &opts)?;
        let nanos = t0.elapsed().as_nanos();
        let usage = Usage::now()
            .zip(before)
            .map(|(after, before)| after.since(before));
        times.push((nanos, usage));
        last = Some(outcome);
        if first_peak.is_none() {
            first_peak = Some(peak_kib()?);
        }
    }
    let outcome = last.expect("at least one run");
    let peak = first_peak.expect("at least one run");
    let peak_all = peak_kib()?;
    times.sort_unstable_by_key(|t| t.0);
    let (nanos, usage) = times[times.len() / 2];
    let usage = usage.map_or(String::new(), |c| {
        format!(
            " user_secs={:.2} sys_secs={:.2} faults={}",
            c.user_secs, c.sys_secs, c.faults
        )
    });
    println!(
        "nanos={nanos} peak_kib={peak} peak_all_kib={peak_all} digest={:016x} iterations={} spilled={}{usage}",
        digest(&outcome),
        outcome.report.iterations,
        outcome.report.spilled.len()
    );
    Ok(())
}

/// FNV-1a over the printed program, the JSON report and the `-v` log.
fn digest(o: &crate::alloc::AllocOutcome) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let mut feed = |s: &str| {
        for b in s.bytes().chain([0]) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    };
    feed(&text::print(&o.module));
    feed(&serde_json::to_string(&o.report).unwrap_or_default());
    o.log.iter().for_each(|l| feed(l));
    h
}

/// Per-pass times of `compile` on each `gen` workload at its default size.
fn pass_table() -> Result<String, Failure> {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "compile per pass (ms), each `gen` workload at its default size:"
    );
    let _ = write!(out, "{:<14}", "workload");
    for p in PASSES {
        let _ = write!(out, "{p:>10}");
    }
    let _ = writeln!(out, "{:>10}", "total");
    for kind in WorkloadKind::ALL {
        let m = generate(&Workload::defaults(kind))?;
        let c = pipeline::compile(&m, &CompileOptions::default())?;
        let _ = write!(out, "{:<14}", kind.name());
        let mut total = 0.0;
        for p in PASSES {
            let ms = (c.timings.iter())
                .find(|(n, _)| *n == p)
                .map(|(_, d)| d.as_secs_f64() * 1e3);
            total += ms.unwrap_or(0.0);
            let _ = write!(
                out,
                "{:>10}",
                ms.map_or("-".into(), |ms| format!("{ms:.2}"))
            );
        }
        let _ = writeln!(out, "{total:>10.2}");
    }
    Ok(out)
}
