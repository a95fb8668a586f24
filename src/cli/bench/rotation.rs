//! `psum bench --rotation [PATH…]` (SPEC §3.12, §10, §11): what rotation
//! does to the reuse edges and the estimated cycles, side by side in one
//! run, on every `psum gen` workload and on the programs of each PATH.
//!
//! A PATH is a program (`.psum` or `.json`), a folder of programs, or a
//! folder with a `MANIFEST.tsv` of NKI kernels (rows `name`, `file`,
//! `function`, `arch` or `-` for the kernel's own, trace arguments, as the
//! public corpus writes them), each row traced by this binary (`psum
//! trace`, run in that folder; `PSUM_PYTHON` as it is); a row that does not
//! trace is counted, not compiled. A PATH that does not exist is noted and
//! skipped, so that a corpus is used when it is there.
//!
//! Per program: `briggs`, `mincost --no-rotate` and `mincost` (rotated) —
//! edges and avoidable edges (SPEC §10), estimated cycles (SPEC §11) and the
//! change rotation makes — and the spill cost, the same with and without
//! rotation; for a program that places PSUM itself (every PSUM tensor with
//! `bank=`, a sound placement, SPEC §9.5) its own placement beside. Every
//! rotated result is verified (SPEC §5). The targets: rotated mincost leaves
//! no avoidable edge and no more estimated cycles than `--no-rotate` and
//! than `briggs`, and no more avoidable edges and cycles than a kept
//! placement. Programs with no reuse edge under any placement and the same
//! cycles under each are listed on one line below the table.

use crate::alloc::{AllocOptions, Allocator};
use crate::cli::io::Failure;
use crate::estimate;
use crate::gen::workloads::{generate, Workload, WorkloadKind};
use crate::ir::{Mem, Module};
use crate::pipeline::{compile, CompileOptions, Rotation};
use crate::reuse::{self, ReuseSummary};
use crate::source;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one kernel may take to trace.
const TRACE_LIMIT: Duration = Duration::from_secs(300);

/// One placement of a program, measured.
#[derive(Clone, Copy)]
struct Measured {
    reuse: ReuseSummary,
    cycles: u64,
    spill: u64,
}

/// Compiles `m` under `allocator` and `rotate` and measures the result;
/// verified when `verify`.
fn measured(
    m: &Module,
    allocator: Allocator,
    rotate: Rotation,
    verify: bool,
) -> Result<Measured, String> {
    let opts = CompileOptions {
        alloc: AllocOptions {
            allocator,
            ..AllocOptions::default()
        },
        rotate,
        verify,
        verify_each: false,
    };
    let c = compile(m, &opts).map_err(|e| e.to_string())?;
    if let Some(e) = c.verify.as_ref().and_then(|v| v.first_error()) {
        return Err(format!("does not verify: {e}"));
    }
    Ok(Measured {
        reuse: reuse::analyze(&c.module, c.alloc.report.num_banks).summary(),
        cycles: estimate::estimate(&c.module)
            .map_err(|e| e.to_string())?
            .cycles,
        spill: c.alloc.report.spill_cost_cycles,
    })
}

/// The program's own placement (`--keep-banks`, SPEC §9.5), measured and
/// verified, when every PSUM tensor carries a sound `bank=`.
fn kept(m: &Module) -> Option<Measured> {
    let mut psum = m.tensors.values().filter(|t| t.mem == Mem::Psum).peekable();
    if psum.peek().is_none() || psum.any(|t| t.bank.is_none()) {
        return None;
    }
    measured(m, Allocator::Kept, Rotation::Off, true).ok()
}

/// A program to measure: its name and module, or why there is none.
struct Program {
    name: String,
    module: Result<Module, String>,
}

/// Every program of `path` (see the module documentation), or a note that
/// it is not there.
fn programs_of(path: &Path, notes: &mut Vec<String>) -> Vec<Program> {
    if !path.exists() {
        notes.push(format!("{}: not found, skipped", path.display()));
        return Vec::new();
    }
    if path.is_file() {
        return vec![read_program(path)];
    }
    let manifest = path.join("MANIFEST.tsv");
    if manifest.is_file() {
        return traced(path, &manifest, notes);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(path)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|f| f.extension().is_some_and(|e| e == "psum" || e == "json"));
    files.sort();
    files.iter().map(|f| read_program(f)).collect()
}

/// A program read from `file`.
fn read_program(file: &Path) -> Program {
    let name = file
        .file_stem()
        .map_or(String::new(), |s| s.to_string_lossy().into_owned());
    let module = std::fs::read(file)
        .map_err(|e| e.to_string())
        .and_then(|bytes| {
            let loaded =
                source::parse(&file.to_string_lossy(), bytes).map_err(|d| d.to_string())?;
            loaded.validate().map_err(|d| d.to_string())?;
            Ok(loaded.module)
        });
    Program { name, module }
}

/// The rows of `manifest` (in folder `dir`), each traced with this binary.
fn traced(dir: &Path, manifest: &Path, notes: &mut Vec<String>) -> Vec<Program> {
    let Ok(text) = std::fs::read_to_string(manifest) else {
        notes.push(format!("{}: unreadable, skipped", manifest.display()));
        return Vec::new();
    };
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("psum"));
    let out = std::env::temp_dir().join(format!("psum-bench-rotation-{}.psum", std::process::id()));
    let mut programs = Vec::new();
    let mut untraced = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let cols: Vec<&str> = line.split('\t').collect();
        let [name, file, function, arch, rest @ ..] = cols.as_slice() else {
            continue;
        };
        let mut args = vec!["trace", file, function];
        args.extend(rest.iter().flat_map(|r| r.split_whitespace()));
        if *arch != "-" {
            args.extend(["--arch", arch]);
        }
        let out_s = out.to_string_lossy().into_owned();
        args.extend(["-o", &out_s]);
        let _ = std::fs::remove_file(&out);
        if run_limited(Command::new(&exe).args(&args).current_dir(dir)) {
            let mut p = read_program(&out);
            p.name = name.to_string();
            programs.push(p);
        } else {
            untraced.push(name.to_string());
        }
    }
    let _ = std::fs::remove_file(&out);
    if !untraced.is_empty() {
        notes.push(format!(
            "{}: {} of {} rows do not trace ({})",
            dir.display(),
            untraced.len(),
            untraced.len() + programs.len(),
            untraced.join(", ")
        ));
    }
    programs
}

/// Runs `cmd` to completion within [`TRACE_LIMIT`]; whether it succeeded.
fn run_limited(cmd: &mut Command) -> bool {
    let Ok(mut child) = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    else {
        return false;
    };
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.success(),
            Ok(None) if start.elapsed() < TRACE_LIMIT => {
                std::thread::sleep(Duration::from_millis(20))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return false;
            }
        }
    }
}

fn edges(m: &Measured) -> String {
    format!("{} / {}", m.reuse.edges, m.reuse.avoidable)
}

/// `new` against `old` as a signed percentage.
fn change(new: u64, old: u64) -> String {
    if old == 0 {
        return "-".into();
    }
    format!("{:+.2}%", (new as f64 - old as f64) * 100.0 / old as f64)
}

/// The table of `psum bench --rotation` over the workloads and `paths`.
pub(crate) fn run_rotation(paths: &[PathBuf]) -> Result<(), Failure> {
    let mut programs: Vec<Program> = (WorkloadKind::ALL.iter())
        .map(|&k| Program {
            name: format!("gen {}", k.name()),
            module: generate(&Workload::defaults(k)).map_err(|e| e.to_string()),
        })
        .collect();
    let mut notes = Vec::new();
    for p in paths {
        programs.extend(programs_of(p, &mut notes));
    }
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| program | briggs edges / avoidable | briggs cycles | mincost --no-rotate edges / avoidable | --no-rotate cycles | mincost edges / avoidable | mincost cycles | vs --no-rotate | vs briggs | spill cost | kept edges / avoidable | kept cycles |"
    );
    let _ = writeln!(s, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    let (mut rows, mut met, mut before, mut after) = (0, 0, (0, 0), (0, 0));
    let mut failed = Vec::new();
    let mut unchanged = Vec::new();
    for p in &programs {
        let m = match &p.module {
            Ok(m) => m,
            Err(e) => {
                failed.push(format!(
                    "{}: {}",
                    p.name,
                    e.lines().next().unwrap_or_default()
                ));
                continue;
            }
        };
        let results = (
            measured(m, Allocator::Briggs, Rotation::Off, false),
            measured(m, Allocator::Mincost, Rotation::Off, false),
            measured(m, Allocator::Mincost, Rotation::Auto, true),
        );
        let (b, plain, rotated) = match results {
            (Ok(b), Ok(p), Ok(r)) => (b, p, r),
            (x, y, z) => {
                let e = [x.err(), y.err(), z.err()].into_iter().flatten().next();
                let e = e.unwrap_or_default();
                failed.push(format!(
                    "{}: {}",
                    p.name,
                    e.lines().next().unwrap_or_default()
                ));
                continue;
            }
        };
        let own = kept(m);
        rows += 1;
        let quiet = [b, plain, rotated]
            .iter()
            .all(|x| x.reuse.edges == 0 && x.cycles == b.cycles)
            && own.is_none_or(|k| k.reuse.edges == 0 && k.cycles == b.cycles);
        before = (
            before.0 + plain.reuse.edges,
            before.1 + plain.reuse.avoidable,
        );
        after = (
            after.0 + rotated.reuse.edges,
            after.1 + rotated.reuse.avoidable,
        );
        let own_ok = own.is_none_or(|k| {
            rotated.reuse.avoidable <= k.reuse.avoidable && rotated.cycles <= k.cycles
        });
        if rotated.reuse.avoidable == 0
            && rotated.cycles <= plain.cycles
            && rotated.cycles <= b.cycles
            && rotated.spill == plain.spill
            && own_ok
        {
            met += 1;
        }
        if quiet {
            unchanged.push(p.name.clone());
            continue;
        }
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            p.name,
            edges(&b),
            b.cycles,
            edges(&plain),
            plain.cycles,
            edges(&rotated),
            rotated.cycles,
            change(rotated.cycles, plain.cycles),
            change(rotated.cycles, b.cycles),
            if rotated.spill == plain.spill {
                rotated.spill.to_string()
            } else {
                format!("{} (--no-rotate {})", rotated.spill, plain.spill)
            },
            own.map_or("-".into(), |k| edges(&k)),
            own.map_or("-".into(), |k| k.cycles.to_string()),
        );
    }
    let _ = writeln!(
        s,
        "\n{rows} programs: reuse edges {} → {}, avoidable {} → {} (mincost --no-rotate → mincost); targets met on {met} of {rows}",
        before.0, after.0, before.1, after.1
    );
    if !unchanged.is_empty() {
        let _ = writeln!(
            s,
            "- no reuse edge under any placement, the same cycles ({}): {}",
            unchanged.len(),
            unchanged.join(", ")
        );
    }
    for n in notes.iter().chain(&failed) {
        let _ = writeln!(s, "- {n}");
    }
    print!("{s}");
    Ok(())
}
