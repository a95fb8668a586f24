//! `psum bench` (SPEC §3.10, §7): the allocator's scaling table
//! and the per-pass times of `compile` on the `gen` workloads.
//!
//! Every measured size runs in a child process (the binary re-invokes itself
//! as `psum bench --child SIZE MODE`), so the peak memory reported — the
//! child's `VmHWM` from `/proc/self/status`, the program built in memory
//! included — belongs to that size alone. The timed region is
//! [`allocate_owned`] on a program built through the library API: no parse,
//! no print. Reference and fast mode run on the same programs and their
//! results (program text, report, log) are compared through a digest.
//! Further comparisons (e.g. `--peers`, `--pipeline`) are flags of
//! [`BenchArgs`] with their own section function.

mod quality;
mod rotation;

use crate::alloc::{allocate_owned, AllocOptions, Allocator};
use crate::cli::io::Failure;
use crate::gen::scaling;
use crate::gen::workloads::{generate, random, Workload, WorkloadKind};
use crate::pipeline::{self, CompileOptions, PASSES};
use crate::{text, verify};
use clap::Args;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Arguments of `psum bench`.
#[derive(Args)]
pub(crate) struct BenchArgs {
    /// Skip the reference run at 20k tensors and the fast sizes of 300k and up.
    #[arg(long)]
    quick: bool,
    /// Sizes (PSUM tensors) for fast mode alone [default: 100000,300000,1000000].
    #[arg(long, value_delimiter = ',', value_name = "N,…")]
    sizes: Option<Vec<u32>>,
    /// Sizes on which reference and fast mode are compared [default: 1000,5000,20000].
    #[arg(long, value_delimiter = ',', value_name = "N,…")]
    compare_sizes: Option<Vec<u32>>,
    /// Runs per size (the median is reported); reference mode from 20k
    /// tensors runs once.
    #[arg(long, default_value_t = 3, value_name = "N")]
    runs: u32,
    /// Compare with regalloc2 (Ion and fastalloc) on the same problems instead:
    /// runs `cargo bench --bench peers` of the source checkout's `benches/`
    /// crate, since regalloc2 is a dependency of the bench, not of this binary.
    #[arg(long)]
    peers: bool,
    /// Time and weigh every pass of `compile` (parse to print) on the
    /// 100k-tensor random program and the 2048³ gemm instead, with `psum
    /// compile` and `psum fmt` end to end, and the symbolic against the
    /// exact simulator on the gemm.
    #[arg(long)]
    pipeline: bool,
    /// With `--pipeline`: the 1M-tensor scaling program too.
    #[arg(long, requires = "pipeline")]
    million: bool,
    /// Internal: one `--pipeline` measurement (`passes`, `compile` or `fmt`) of one program file.
    #[arg(long, hide = true, num_args = 3, value_names = ["WHAT", "PROGRAM", "FILE"])]
    pipeline_child: Option<Vec<String>>,
    /// Allocation quality instead: briggs, mincost, exact and the bounds
    /// side by side (SPEC §3.11), then the peer comparison (`--peers`).
    #[arg(long)]
    quality: bool,
    /// Reuse edges and estimated cycles with and without rotation instead
    /// (SPEC §3.12): every `gen` workload, then the programs of each PATH
    /// (a program, a folder of programs, or a folder with a MANIFEST.tsv of
    /// NKI kernels to trace; a missing PATH is skipped).
    #[arg(long)]
    rotation: bool,
    /// With `--rotation`: programs, folders of programs, or kernel corpora.
    #[arg(requires = "rotation", value_name = "PATH")]
    programs: Vec<PathBuf>,
    /// Internal: measure one size in this process and print one result line.
    #[arg(long, hide = true, num_args = 2, value_names = ["SIZE", "MODE"])]
    child: Option<Vec<String>>,
}

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

/// What one allocation used of the process beyond its time: CPU time of all
/// its threads, in user and kernel mode, and minor page faults (each a
/// fresh page of memory; on this machine's VM the kernel time is mostly
/// those). Read from `/proc/self/stat`, so Linux only.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Usage {
    user_secs: f64,
    sys_secs: f64,
    faults: u64,
}

impl Usage {
    /// The process's counters so far, or `None` without `/proc`.
    fn now() -> Option<Usage> {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        Usage::parse(&stat)
    }

    /// The counters of a `/proc/PID/stat` line: `minflt`, `utime` and
    /// `stime`, the 10th, 14th and 15th fields (counting from `pid`; the
    /// command name in parentheses may hold spaces, so fields are counted
    /// after its closing parenthesis). Times are in ticks of 1/100 s, the
    /// `USER_HZ` of Linux.
    fn parse(stat: &str) -> Option<Usage> {
        let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
        let num = |i: usize| fields.get(i)?.parse::<u64>().ok();
        let secs = |i: usize| num(i).map(|ticks| ticks as f64 / 100.0);
        Some(Usage {
            faults: num(7)?,
            user_secs: secs(11)?,
            sys_secs: secs(12)?,
        })
    }

    /// The counters spent since `before`.
    fn since(self, before: Usage) -> Usage {
        Usage {
            user_secs: self.user_secs - before.user_secs,
            sys_secs: self.sys_secs - before.sys_secs,
            faults: self.faults - before.faults,
        }
    }
}

/// Runs `psum bench`.
pub(crate) fn run(a: BenchArgs) -> Result<(), Failure> {
    if let Some(child) = &a.child {
        return run_child(&child[0], &child[1], a.runs);
    }
    if a.peers {
        return run_peers();
    }
    if let Some(c) = &a.pipeline_child {
        return pipeline_child(&c[0], &c[1], &c[2]);
    }
    if a.pipeline {
        return run_pipeline(a.million);
    }
    if a.quality {
        return quality::run_quality().and_then(|()| run_peers());
    }
    if a.rotation {
        return rotation::run_rotation(&a.programs);
    }
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

fn mode_name(m: Allocator) -> &'static str {
    match m {
        Allocator::BriggsReference => "reference",
        _ => "fast",
    }
}

fn format_secs(s: f64) -> String {
    if s < 1.0 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{s:.2} s")
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
fn run_child(size: &str, mode: &str, runs: u32) -> Result<(), Failure> {
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

/// A program of `--pipeline`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Program {
    /// `gen random --tensors 100000 --seed 2 --multi-bank --loops`.
    Random100k,
    /// `gen gemm 2048 2048 2048`.
    Gemm2048,
    /// The 1M-tensor scaling program of the allocator table.
    Scaling1m,
}

impl Program {
    const ALL: [Program; 3] = [Program::Random100k, Program::Gemm2048, Program::Scaling1m];

    fn name(self) -> &'static str {
        match self {
            Program::Random100k => "random-100k",
            Program::Gemm2048 => "gemm-2048",
            Program::Scaling1m => "scaling-1m",
        }
    }

    fn workload(self) -> Result<Workload, Failure> {
        let (kind, args): (_, &[&str]) = match self {
            Program::Random100k => (
                WorkloadKind::Random,
                &[
                    "--tensors",
                    "100000",
                    "--seed",
                    "2",
                    "--multi-bank",
                    "--loops",
                ],
            ),
            Program::Gemm2048 => (WorkloadKind::Gemm, &["2048", "2048", "2048"]),
            Program::Scaling1m => return Ok(Workload::Random(scaling::params(1_000_000))),
        };
        Ok(Workload::from_args(kind, args)?)
    }

    /// Whether the exact simulator is timed too (it costs K·M·N per matmul
    /// and memory per cell, so only on the gemm).
    fn exact(self) -> bool {
        self == Program::Gemm2048
    }
}

/// The passes of one `--pipeline` child, in order.
const PIPELINE_PASSES: [&str; 10] = [
    "parse",
    "validate",
    "alloc",
    "unroll",
    "legalize",
    "checker",
    "simulator",
    "statics",
    "exact",
    "print",
];

/// How many times each `--pipeline` child runs; its figures are the medians.
const PIPELINE_RUNS: usize = 3;

/// One child's `key=value` lines, one per run.
struct ChildLine(Vec<String>);

impl ChildLine {
    /// The first run's value of `key` (verdicts, the same in every run).
    fn get(&self, key: &str) -> Option<&str> {
        value_of(&self.0[0], key)
    }

    /// The median over the runs of the number `key`.
    fn num(&self, key: &str) -> Option<f64> {
        let mut values: Vec<f64> = (self.0.iter())
            .map(|line| value_of(line, key)?.parse().ok())
            .collect::<Option<_>>()?;
        values.sort_by(f64::total_cmp);
        values.get(values.len() / 2).copied()
    }
}

/// The value of `key` in a `key=value …` line.
fn value_of<'l>(line: &'l str, key: &str) -> Option<&'l str> {
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
}

/// Runs `psum bench --pipeline-child WHAT PROGRAM FILE` [`PIPELINE_RUNS`] times.
fn spawn_pipeline(what: &str, p: Program, file: &Path) -> Result<ChildLine, Failure> {
    let mut lines = Vec::with_capacity(PIPELINE_RUNS);
    for _ in 0..PIPELINE_RUNS {
        let out = Command::new(std::env::current_exe()?)
            .args(["bench", "--pipeline-child", what, p.name()])
            .arg(file)
            .output()?;
        if !out.status.success() {
            return Err(Failure::Input(format!(
                "error: bench child ({what}, {}) failed ({}): {}",
                p.name(),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        lines.push(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    Ok(ChildLine(lines))
}

/// `psum bench --pipeline`: each program is written to a temporary file,
/// then measured by three children, each run [`PIPELINE_RUNS`] times (the
/// medians are shown): every pass alone (`passes`: time and the peak
/// resident memory during the pass), `psum compile FILE -o OUT` and
/// `psum fmt FILE -o OUT` end to end (wall time and peak).
fn run_pipeline(million: bool) -> Result<(), Failure> {
    let programs: Vec<Program> = (Program::ALL.into_iter())
        .filter(|&p| million || p != Program::Scaling1m)
        .collect();
    let dir = std::env::temp_dir();
    let mut columns = Vec::new();
    for &p in &programs {
        let w = p.workload()?;
        let path = dir.join(format!(
            "psum-bench-{}-{}.psum",
            std::process::id(),
            p.name()
        ));
        std::fs::write(&path, text::print(&generate(&w)?))?;
        let bytes = std::fs::metadata(&path)?.len();
        let measured = (|| {
            let passes = spawn_pipeline("passes", p, &path)?;
            let compile = spawn_pipeline("compile", p, &path)?;
            let fmt = spawn_pipeline("fmt", p, &path)?;
            Ok::<_, Failure>((passes, compile, fmt))
        })();
        let _ = std::fs::remove_file(&path);
        let (passes, compile, fmt) = measured?;
        columns.push((p, w.command_line(), bytes, passes, compile, fmt));
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "pipeline: wall time of each pass, (its CPU time, user + kernel, in 10 ms ticks) and the peak resident \
         memory during it (VmHWM reset before the pass), each program in a child process; `psum compile` and \
         `psum fmt` end to end in children of their own; each child runs {PIPELINE_RUNS} times, medians shown"
    );
    for (p, cmd, bytes, ..) in &columns {
        let _ = writeln!(
            out,
            "  {:<12} {cmd} ({:.1} MB of text)",
            p.name(),
            *bytes as f64 / 1e6
        );
    }
    let _ = write!(out, "\n{:<18}", "pass");
    for (p, ..) in &columns {
        let _ = write!(out, "{:>34}", p.name());
    }
    let _ = writeln!(out);
    let cell = |line: &ChildLine, key: &str| {
        let num = |suffix: &str| line.num(&format!("{key}_{suffix}"));
        match (num("ms"), num("cpu_ms"), num("kib")) {
            (Some(ms), cpu, Some(kib)) => format!(
                "{:>10} {:>10}  {:>6.0} MiB",
                format_secs(ms / 1e3),
                cpu.map_or(String::new(), |c| format!("({})", format_secs(c / 1e3))),
                kib / 1024.0
            ),
            _ => "-".to_string(),
        }
    };
    // Each row: its label, the child that measured it (0 passes, 1 compile, 2 fmt), its key.
    let rows = (PIPELINE_PASSES.iter().map(|&p| (p, 0, p)))
        .chain([("psum compile", 1, "total"), ("psum fmt", 2, "total")]);
    for (label, child, key) in rows {
        let _ = write!(out, "{label:<18}");
        for (_, _, _, passes, compile, fmt) in &columns {
            let line = [passes, compile, fmt][child];
            let _ = write!(out, "{:>34}", cell(line, key));
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out, "\ntargets:");
    let mut missed = false;
    let mut target = |ok: bool, what: String| {
        missed |= !ok;
        let _ = writeln!(out, "  [{}] {what}", if ok { "met" } else { "MISSED" });
    };
    for (p, _, bytes, passes, compile, fmt) in &columns {
        let ms = |l: &ChildLine, k: &str| l.num(&format!("{k}_ms")).unwrap_or(f64::NAN);
        let alloc = ms(passes, "alloc");
        let name = p.name();
        if *p != Program::Gemm2048 {
            let wall = ms(compile, "total");
            let peak = compile.num("total_kib").unwrap_or(f64::NAN) / 1024.0;
            let verdict = compile.get("verify").unwrap_or("?");
            target(
                verdict == "ok",
                format!("{name}: `psum compile` verifies: {verdict}"),
            );
            target(
                peak < 4096.0,
                format!("{name}: `psum compile` peaks at {peak:.0} MiB (< 4096)"),
            );
            let own = ms(compile, "own_alloc");
            target(
                wall <= 10.0 * own,
                format!(
                    "{name}: `psum compile` takes {} = {:.1}× its own alloc ({}; ≤ 10×)",
                    format_secs(wall / 1e3),
                    wall / own,
                    format_secs(own / 1e3)
                ),
            );
            for pass in ["validate", "legalize"] {
                let t = ms(passes, pass);
                target(
                    t <= alloc,
                    format!(
                        "{name}: {pass} {} ≤ alloc {}",
                        format_secs(t / 1e3),
                        format_secs(alloc / 1e3)
                    ),
                );
            }
        }
        if *p != Program::Gemm2048 {
            // The gemm's 500 bytes of text measure process start, not the printer.
            let rate = *bytes as f64 / 1e6 / (ms(fmt, "total") / 1e3);
            target(
                rate >= 50.0,
                format!("{name}: `psum fmt` reads and prints {rate:.0} MB/s (≥ 50)"),
            );
        }
        if p.exact() {
            let (sym, exact) = (ms(passes, "simulator"), ms(passes, "exact"));
            let verify = |sim: f64| ms(passes, "checker") + sim + ms(passes, "statics");
            let speedup = verify(exact) / verify(sym);
            target(
                speedup >= 20.0,
                format!(
                    "{name}: verify {} vs verify --exact {}: {speedup:.0}× faster (≥ 20×)",
                    format_secs(verify(sym) / 1e3),
                    format_secs(verify(exact) / 1e3)
                ),
            );
        }
    }
    print!("{out}");
    if missed {
        return Err(Failure::Input(
            "error: some pipeline targets were missed".into(),
        ));
    }
    Ok(())
}

/// Peak resident memory is measured per pass: `5` written to
/// `/proc/self/clear_refs` resets `VmHWM` to the current resident size.
fn reset_peak() {
    // Best effort: without it the peaks are cumulative, never too low.
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// The `--pipeline` child: prints `NAME_ms=… NAME_kib=…` for each pass (or
/// `total_…` for `compile`/`fmt`), and the verdict of verification.
fn pipeline_child(what: &str, program: &str, file: &str) -> Result<(), Failure> {
    let p = (Program::ALL.into_iter())
        .find(|p| p.name() == program)
        .ok_or_else(|| Failure::Input(format!("error: unknown program {program}")))?;
    let mut line = String::new();
    let mut cpu_before = Usage::now();
    let mut measure = |name: &str, t0: Instant| -> Result<(), Failure> {
        let ms = t0.elapsed().as_secs_f64() * 1e3;
        let _ = write!(line, "{name}_ms={ms:.3} {name}_kib={} ", peak_kib()?);
        let now = Usage::now();
        if let Some(c) = now.zip(cpu_before).map(|(a, b)| a.since(b)) {
            let _ = write!(
                line,
                "{name}_cpu_ms={:.0} ",
                (c.user_secs + c.sys_secs) * 1e3
            );
        }
        cpu_before = now;
        Ok(())
    };
    let verdict = match what {
        "compile" => {
            reset_peak();
            let t0 = Instant::now();
            let loaded = crate::cli::io::load(file)?;
            let c = pipeline::compile(&loaded.module, &CompileOptions::default())?;
            let out = PathBuf::from(format!("{file}.out"));
            crate::cli::output::emit(Some(&out), |w| text::write(&c.module, w))?;
            let summary = crate::report::compile_summary(&c);
            measure("total", t0)?;
            let own_alloc = (c.timings.iter())
                .find(|(name, _)| *name == "alloc")
                .map_or(f64::NAN, |(_, d)| d.as_secs_f64() * 1e3);
            let _ = write!(line, "own_alloc_ms={own_alloc:.3} ");
            let _ = std::fs::remove_file(format!("{file}.out"));
            drop(summary);
            c.verify
                .and_then(|v| v.first_error())
                .unwrap_or_else(|| "ok".into())
        }
        "fmt" => {
            reset_peak();
            let t0 = Instant::now();
            crate::cli::cmd::fmt::run(crate::cli::cmd::fmt::FmtArgs {
                file: file.to_string(),
                emit: crate::cli::args::Emit::Text,
                out: crate::cli::args::OutputArgs {
                    output: Some(PathBuf::from(format!("{file}.fmt"))),
                },
            })?;
            measure("total", t0)?;
            let _ = std::fs::remove_file(format!("{file}.fmt"));
            "ok".into()
        }
        "passes" => pipeline_passes(p, file, &mut measure)?,
        _ => return Err(Failure::Input(format!("error: unknown measurement {what}"))),
    };
    println!("{line}verify={}", verdict.replace(char::is_whitespace, "_"));
    Ok(())
}

/// Every pass of `compile` on its own, as [`pipeline::compile`] chains
/// them; `measure(name, start)` records each. Returns the verdict.
fn pipeline_passes(
    p: Program,
    file: &str,
    measure: &mut impl FnMut(&str, Instant) -> Result<(), Failure>,
) -> Result<String, Failure> {
    fn pass<T>(
        measure: &mut impl FnMut(&str, Instant) -> Result<(), Failure>,
        name: &str,
        f: impl FnOnce() -> T,
    ) -> Result<T, Failure> {
        reset_peak();
        let t0 = Instant::now();
        let out = f();
        measure(name, t0)?;
        Ok(out)
    }
    let bytes = std::fs::read(file)?;
    let parsed = pass(measure, "parse", || {
        std::str::from_utf8(&bytes)
            .map_err(|e| Failure::Input(format!("error: {e}")))
            .and_then(|s| text::parse_module(s).map_err(|e| Failure::Input(format!("error: {e}"))))
    })??;
    drop(bytes);
    let m = parsed.module;
    pass(measure, "validate", || {
        crate::validate::validate_source(&m, &parsed.tiles)
    })??;
    let arch = crate::arch::lookup(&m.arch)?;
    let alloc = pass(measure, "alloc", || {
        crate::alloc::allocate(&m, &AllocOptions::default())
    })??;
    let (mut result, _) = pass(measure, "unroll", || {
        crate::unroll::unroll_with_origins(&alloc.module)
    })??;
    drop(alloc);
    pass(measure, "legalize", || {
        crate::matmul::legalize_program(&mut result, &arch)
    })??;
    let checker = pass(measure, "checker", || {
        verify::checker::check(&m, &result).map_err(Box::new)
    })?
    .map_err(|e| *e);
    let seed = verify::sim::DEFAULT_SEED;
    let simulator = pass(measure, "simulator", || {
        verify::symbolic::compare(&m, &result, seed)
    })?;
    let statics = pass(measure, "statics", || verify::statics::check(&m, &result))?;
    if p.exact() {
        let exact = pass(measure, "exact", || verify::sim::compare(&m, &result, seed))?;
        if let Err(e) = exact {
            return Ok(format!("exact simulator: {e}"));
        }
    }
    let printed = pass(measure, "print", || text::print(&result))?;
    drop(printed);
    let report = verify::VerifyReport {
        checker,
        simulator,
        statics,
    };
    Ok(report.first_error().unwrap_or_else(|| "ok".into()))
}

/// `VmHWM` of this process, KiB.
fn peak_kib() -> Result<u64, Failure> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| Failure::Input("error: no VmHWM in /proc/self/status".into()))
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

/// `psum bench --peers`: the regalloc2 table of `benches/benches/peers.rs`,
/// built and run by cargo in the checkout this binary was built from.
fn run_peers() -> Result<(), Failure> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/benches");
    let status = Command::new(option_env!("CARGO").unwrap_or("cargo"))
        .args(["bench", "--bench", "peers"])
        .current_dir(dir)
        .status()
        .map_err(|e| {
            Failure::Input(format!(
                "error: cannot run `cargo bench --bench peers` in {dir}: {e}"
            ))
        })?;
    if status.success() {
        Ok(())
    } else {
        Err(Failure::Input(format!(
            "error: `cargo bench --bench peers` failed ({status})"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counters come from the 10th, 14th and 15th fields, counted
    /// past a command name with spaces and parentheses in it.
    #[test]
    fn usage_reads_faults_and_cpu_ticks() {
        let stat = "12379 (a (b) c) R 12375 12375 1183 0 -1 4194304 125 7 3 0 250 31 0 0 20 0 1 0";
        let want = Usage {
            user_secs: 2.5,
            sys_secs: 0.31,
            faults: 125,
        };
        assert_eq!(Usage::parse(stat), Some(want));
        assert_eq!(Usage::parse("12379 (cat) R 1 2"), None);
        let later = Usage {
            user_secs: 3.0,
            sys_secs: 0.5,
            faults: 200,
        };
        let spent = later.since(want);
        assert_eq!(spent.faults, 75);
        assert!((spent.user_secs - 0.5).abs() < 1e-9 && (spent.sys_secs - 0.19).abs() < 1e-9);
    }
}
