//! `psum bench --pipeline` (SPEC §7): what `psum compile` costs end to end
//! on a program at the allocator's scale and on a production-size kernel,
//! pass by pass, with the targets each figure must meet.

use super::format_secs;
use super::procfs::{peak_kib, reset_peak, Usage};
use crate::alloc::AllocOptions;
use crate::cli::io::Failure;
use crate::gen::scaling;
use crate::gen::workloads::{generate, Workload, WorkloadKind};
use crate::pipeline::{self, CompileOptions};
use crate::{text, verify};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

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
pub(super) fn run_pipeline(million: bool) -> Result<(), Failure> {
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

/// The `--pipeline` child: prints `NAME_ms=… NAME_kib=…` for each pass (or
/// `total_…` for `compile`/`fmt`), and the verdict of verification.
pub(super) fn pipeline_child(what: &str, program: &str, file: &str) -> Result<(), Failure> {
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
