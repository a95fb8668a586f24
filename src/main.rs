//! The `psum` command line (SPEC §6): a thin shell over the library. Each
//! subcommand is one variant of [`Command`] with its own argument struct and
//! one `cmd_*` function. Exit codes: 0 success, 1 input error, 2 usage error
//! (clap's own exit code for bad arguments).

mod bin_support;

use bin_support::bench::{self, BenchArgs};
use clap::{Args, Parser, Subcommand, ValueEnum};
use psum::alloc::{AllocError, AllocOptions, AllocOutcome, Allocator, Mode};
use psum::ir::{Loc, Module};
use psum::pipeline::{CompileError, CompileOptions};
use psum::source::{self, Loaded};
use psum::viz::{self, Timeline};
use psum::{alloc, arch, matmul, pipeline, report, text, verify};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// mimalloc: the passes allocate and free millions of small objects (boxed
/// matmuls, operand lists, labels), which it serves several times faster
/// than the system allocator. Built without transparent huge pages: where
/// the kernel compacts memory to back a huge page on a fault, a pass that
/// frees and reallocates hundreds of megabytes stalls for seconds.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "psum",
    version,
    about = "PSUM bank allocation and matmul accumulation legalization"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print a module in canonical form (SPEC §2.5).
    Fmt(FmtArgs),
    /// Show the hardware geometry: all generations, or one codename (SPEC §1).
    Arch(ArchArgs),
    /// The main job: validate, allocate, unroll, order, legalize, verify (SPEC §6).
    Compile(CompileArgs),
    /// PSUM allocation only (SPEC §3).
    Alloc(AllocArgs),
    /// Order column tiles and legalize accumulation groups of an allocated,
    /// loop-free program (SPEC §4.2, §4.3).
    Legalize(LegalizeArgs),
    /// Check that RESULT computes what ORIGINAL computes (SPEC §5).
    Verify(VerifyArgs),
    /// Write a workload program (SPEC §7): gemm, attention, attention-bwd,
    /// qkv, conv1d, column-tiled, random. `psum gen KIND --help-params` lists
    /// a workload's parameters.
    Gen(GenArgs),
    /// Lower bounds: peak demand, and the minimum number of spills when every
    /// PSUM tensor is one bank.
    Bound(BoundArgs),
    /// Write the allocation problem for another solver (`--minimalloc`:
    /// MiniMalloc CSV; `--split-lp`: the least split spill cost as a 0-1
    /// program in CPLEX LP format).
    Export(ExportArgs),
    /// Read another solver's solution back and check it (`--minimalloc`).
    Import(ImportArgs),
    /// Draw the PSUM bank timeline as SVG or HTML (SPEC §8), allocating first.
    Viz(VizArgs),
    /// Benchmark the allocator (reference vs fast mode, scaling to 1M
    /// tensors, peak memory) and time each pass of `compile` on the workloads;
    /// `--pipeline`: every pass's time and peak memory at 100k tensors and on a 2048³ gemm.
    Bench(BenchArgs),
    /// Run a single pass on its own.
    #[command(subcommand)]
    Pass(PassCommand),
    /// Run an NKI kernel (Python) under psum's tracer and write its psum
    /// program (SPEC §9).
    Trace(TraceArgs),
    /// Report the PSUM hazards of a program (SPEC §9.4), naming kernel lines
    /// of traced programs; then validate it.
    Lint(LintArgs),
}

#[derive(Args)]
struct LintArgs {
    /// Input file (`.psum` text or `.json`); `-` reads stdin.
    file: String,
}

#[derive(Args)]
struct TraceArgs {
    /// The kernel's Python file.
    kernel: PathBuf,
    /// The kernel function.
    function: String,
    /// A tensor argument: NAME=DTYPE[D0,D1,...] (NKI dtype names, e.g. bfloat16).
    #[arg(long = "arg", value_name = "NAME=DTYPE[D0,...]")]
    args: Vec<String>,
    /// Another argument: NAME=VALUE, VALUE a Python literal.
    #[arg(long = "kwarg", value_name = "NAME=VALUE")]
    kwargs: Vec<String>,
    /// The architecture (default: the kernel's platform_target, else trn1).
    #[arg(long, value_name = "NAME")]
    arch: Option<String>,
    /// Write to OUT.psum or OUT.json (by extension; atomically) instead of stdout.
    #[command(flatten)]
    out: OutputArgs,
}

/// Single passes (`psum pass NAME FILE`).
#[derive(Subcommand)]
enum PassCommand {
    /// set_first_matmults: provisional `start` flags (SPEC §4.1).
    FirstMatmults(FmtArgs),
}

/// Allocator settings shared by `alloc` and `compile`.
#[derive(Args)]
struct AllocFlags {
    /// Use the reference allocator (the seed's data structures; same output).
    #[arg(long)]
    reference: bool,
    /// Cycles per bank moved by one spill or reload TensorCopy.
    #[arg(long, value_name = "N", default_value_t = arch::DEFAULT_SPILL_LATENCY)]
    spill_latency: u64,
    /// Banks the allocator may use (1..=numBanks), e.g. 7 when bank 7 is kept for PE transposes.
    #[arg(long, value_name = "N")]
    psum_banks: Option<u32>,
    /// Print the allocator's log on stderr (-v), with its trace lines (-vv).
    #[arg(short, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Which allocator runs (SPEC §3, §3.11).
    #[arg(long, value_enum, default_value = "briggs")]
    allocator: AllocatorKind,
}

/// `--allocator`.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum AllocatorKind {
    /// The reference compiler's Chaitin–Briggs allocator (SPEC §3).
    Briggs,
    /// psum's own: the least spill cost it finds, fast on any size.
    Mincost,
    /// The least spill cost there is, by search (at most 24 PSUM nodes).
    Exact,
}

impl AllocFlags {
    fn options(&self) -> AllocOptions {
        AllocOptions {
            mode: if self.reference {
                Mode::Reference
            } else {
                Mode::Fast
            },
            spill_latency: self.spill_latency,
            psum_banks: self.psum_banks,
            trace: self.verbose >= 2,
            allocator: match self.allocator {
                AllocatorKind::Briggs => Allocator::Briggs,
                AllocatorKind::Mincost => Allocator::Mincost,
                AllocatorKind::Exact => Allocator::Exact,
            },
            ..AllocOptions::default()
        }
    }

    /// Prints the log (or trace) of an allocation on stderr, as -v / -vv ask.
    fn print_log(&self, outcome: &AllocOutcome) {
        let lines = match self.verbose {
            0 => return,
            1 => &outcome.log,
            _ => &outcome.trace,
        };
        for l in lines {
            eprintln!("{l}");
        }
    }
}

/// `--objective` of `export --split-lp`.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum ObjectiveKind {
    /// The total spill cost in cycles.
    Cost,
    /// The number of tensors spilled.
    Count,
}

/// `--report json` (JSON on stdout; the program goes to `-o` only).
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum ReportKind {
    /// The JSON report of SPEC §6.
    Json,
}

#[derive(Args)]
struct AllocArgs {
    /// Input file (`.psum` text or `.json`); `-` reads stdin.
    file: String,
    #[command(flatten)]
    flags: AllocFlags,
    /// Write the JSON report to stdout (the program then goes to -o only).
    #[arg(long, value_enum, value_name = "KIND")]
    report: Option<ReportKind>,
    #[command(flatten)]
    out: OutputArgs,
}

#[derive(Args)]
struct CompileArgs {
    /// Input file (`.psum` text or `.json`); `-` reads stdin.
    file: String,
    #[command(flatten)]
    flags: AllocFlags,
    /// Skip the verifier.
    #[arg(long)]
    no_verify: bool,
    /// Verify after every pass and name the first whose output fails.
    #[arg(long)]
    verify_each: bool,
    /// Keep the program's own `bank=` placement (direct allocation) and check
    /// it instead of allocating (SPEC §9.5).
    #[arg(long, conflicts_with_all = ["report", "reference"])]
    keep_banks: bool,
    /// `json`: write the JSON report to stdout (the program then goes to -o
    /// only); `html OUT.html`: write the bank timeline page to OUT.html.
    #[arg(long, num_args = 1..=2, value_names = ["KIND", "FILE"])]
    report: Option<Vec<String>>,
    /// Output format of the program.
    #[arg(long, value_enum, default_value = "text")]
    emit: Emit,
    #[command(flatten)]
    out: OutputArgs,
}

/// What `compile --report` asks for.
enum CompileReport {
    /// `--report json`: the JSON report on stdout.
    Json,
    /// `--report html FILE`: the bank timeline page, written to FILE.
    Html(PathBuf),
}

impl CompileArgs {
    /// The parsed `--report` values; a usage error (exit 2) when malformed.
    fn report(&self) -> Option<CompileReport> {
        let values = self.report.as_ref()?;
        match values.as_slice() {
            [k] if k == "json" => Some(CompileReport::Json),
            [k, file] if k == "html" => Some(CompileReport::Html(PathBuf::from(file))),
            _ => usage_error(&format!(
                "--report takes `json` or `html FILE`, not `{}`",
                values.join(" ")
            )),
        }
    }
}

/// Exits with clap's usage error (exit code 2) and `msg`.
fn usage_error(msg: &str) -> ! {
    use clap::CommandFactory;
    Cli::command()
        .error(clap::error::ErrorKind::ValueValidation, msg)
        .exit()
}

#[derive(Args)]
struct VizArgs {
    /// Input file (`.psum` text or `.json`); `-` reads stdin.
    file: String,
    #[command(flatten)]
    flags: AllocFlags,
    /// Write to OUT.svg or OUT.html (by extension; atomically) instead of SVG on stdout.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Args)]
struct LegalizeArgs {
    /// An allocated, loop-free program; `-` reads stdin.
    file: String,
    /// Write the JSON report to stdout (the program then goes to -o only).
    #[arg(long, value_enum, value_name = "KIND")]
    report: Option<ReportKind>,
    #[command(flatten)]
    out: OutputArgs,
}

#[derive(Args)]
struct BoundArgs {
    /// Input file (`.psum` text or `.json`); `-` reads stdin.
    file: String,
    /// Banks the allocator may use (1..=numBanks).
    #[arg(long, value_name = "N")]
    psum_banks: Option<u32>,
    /// Print JSON instead of text.
    #[arg(long, value_enum, value_name = "KIND")]
    report: Option<ReportKind>,
}

#[derive(Args)]
#[command(group(clap::ArgGroup::new("format").required(true).args(["minimalloc", "split_lp"])))]
struct ExportArgs {
    /// Write a MiniMalloc CSV (`id,lower,upper,size`; half-open point ranges, sizes in banks).
    #[arg(long)]
    minimalloc: bool,
    /// Write the split-spilling problem as a 0-1 program in CPLEX LP
    /// format, for a MILP solver (SPEC §3.11).
    #[arg(long)]
    split_lp: bool,
    /// What `--split-lp` minimises (default: cost).
    #[arg(long, value_enum, value_name = "WHAT", conflicts_with = "minimalloc")]
    objective: Option<ObjectiveKind>,
    /// Input file (`.psum` text or `.json`); `-` reads stdin.
    file: String,
    /// Banks the allocator may use (1..=numBanks).
    #[arg(long, value_name = "N")]
    psum_banks: Option<u32>,
    #[command(flatten)]
    out: OutputArgs,
}

#[derive(Args)]
struct ImportArgs {
    /// Read a MiniMalloc solution (its `offset` column is the base bank).
    #[arg(long, required = true)]
    minimalloc: bool,
    /// The program the problem was exported from.
    file: String,
    /// The solver's CSV.
    solution: PathBuf,
    /// Banks the allocator may use (1..=numBanks).
    #[arg(long, value_name = "N")]
    psum_banks: Option<u32>,
}

#[derive(Args)]
struct GenArgs {
    /// The workload.
    kind: String,
    /// List this workload's parameters and defaults, then exit.
    #[arg(long)]
    help_params: bool,
    /// Workload parameters: `--key value`, `--key=value`, flags, or (gemm) `M N K`.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    params: Vec<String>,
    #[command(flatten)]
    out: OutputArgs,
}

#[derive(Args)]
struct VerifyArgs {
    /// The program as written.
    original: String,
    /// The compiled program (allocated; possibly unrolled and legalized).
    result: String,
    /// Compare values with the exact f64 simulator (cost per multiply-add)
    /// instead of the symbolic one (cost per piece of storage written).
    #[arg(long)]
    exact: bool,
}

/// Output format of a module.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Emit {
    /// The text format.
    Text,
    /// The serde JSON form.
    Json,
}

/// Where a command writes its main output.
#[derive(Args)]
struct OutputArgs {
    /// Write to this file (atomically: a temp file, then rename) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Args)]
struct FmtArgs {
    /// Input file (`.psum` text or `.json`); `-` reads stdin.
    file: String,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    emit: Emit,
    #[command(flatten)]
    out: OutputArgs,
}

#[derive(Args)]
struct ArchArgs {
    /// A codename (`trn1`, `core_v4`, …); omit to list the generations.
    name: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// A failure to report on stderr with exit code 1 (the full rendered text).
struct Failure(String);

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure(format!("error: {e}"))
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Fmt(a) => cmd_fmt(a),
        Command::Arch(a) => cmd_arch(a),
        Command::Compile(a) => cmd_compile(a),
        Command::Alloc(a) => cmd_alloc(a),
        Command::Legalize(a) => cmd_legalize(a),
        Command::Verify(a) => cmd_verify(a),
        Command::Gen(a) => cmd_gen(a),
        Command::Bound(a) => cmd_bound(a),
        Command::Export(a) => cmd_export(a),
        Command::Import(a) => cmd_import(a),
        Command::Viz(a) => cmd_viz(a),
        Command::Bench(a) => bench::cmd_bench(a),
        Command::Pass(PassCommand::FirstMatmults(a)) => cmd_first_matmults(a),
        Command::Trace(a) => cmd_trace(a),
        Command::Lint(a) => cmd_lint(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(msg)) => {
            eprintln!("{msg}");
            ExitCode::from(1)
        }
    }
}

/// Reads, parses and validates FILE (`-` is stdin).
fn load(file: &str) -> Result<Loaded, Failure> {
    let loaded = read(file)?;
    loaded.validate().map_err(|d| Failure(d.to_string()))?;
    Ok(loaded)
}

/// Reads and parses FILE (`-` is stdin), without validating it.
fn read(file: &str) -> Result<Loaded, Failure> {
    let mut bytes = Vec::new();
    if file == "-" {
        std::io::stdin().read_to_end(&mut bytes)?;
    } else {
        bytes = std::fs::read(file).map_err(|e| Failure(format!("{file}: error: {e}")))?;
    }
    source::parse(file, bytes).map_err(|d| Failure(d.to_string()))
}

/// Writes `content` to `-o FILE` via a temp file and rename, or to stdout.
fn emit(out: &OutputArgs, content: &str) -> Result<(), Failure> {
    let Some(path) = &out.output else {
        std::io::stdout().write_all(content.as_bytes())?;
        return Ok(());
    };
    let tmp = write_temp(path, |w| w.write_all(content.as_bytes()))?;
    keep(&tmp, path)
}

/// Writes what `write` produces to a temporary file beside `path` and
/// returns its name; on an error the file is removed.
fn write_temp(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<PathBuf, Failure> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp{}", std::process::id()));
    let written = std::fs::File::create(&tmp).and_then(|mut file| write(&mut file));
    if let Err(e) = written {
        // Best effort: the temp file may not exist if creating it failed.
        let _ = std::fs::remove_file(&tmp);
        return Err(Failure(format!("{}: error: {e}", path.display())));
    }
    Ok(tmp)
}

/// Renames the temporary file `tmp` to `path`.
fn keep(tmp: &Path, path: &Path) -> Result<(), Failure> {
    std::fs::rename(tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(tmp);
        Failure(format!("{}: error: {e}", path.display()))
    })
}

fn module_text(m: &psum::ir::Module, format: Emit) -> String {
    match format {
        Emit::Text => text::print(m),
        Emit::Json => text::to_json(m),
    }
}

/// Validation and printing each read the parsed module only, so they run
/// side by side; the output appears only when the program is valid. Text
/// for `-o FILE` is streamed into the temporary file as it is printed.
fn cmd_fmt(a: FmtArgs) -> Result<(), Failure> {
    /// What printing left: the text, or the temporary file it was streamed to.
    enum Printed {
        Text(String),
        Streamed(PathBuf),
    }
    let loaded = read(&a.file)?;
    let stream = a.out.output.as_deref().filter(|_| a.emit == Emit::Text);
    let (valid, printed) = std::thread::scope(|s| {
        let valid = s.spawn(|| loaded.validate());
        let printed = match stream {
            Some(path) => {
                write_temp(path, |w| text::write(&loaded.module, w)).map(Printed::Streamed)
            }
            None => Ok(Printed::Text(module_text(&loaded.module, a.emit))),
        };
        (valid.join(), printed)
    });
    let valid = valid.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
    match (valid, printed?, stream) {
        (Ok(()), Printed::Streamed(tmp), Some(path)) => keep(&tmp, path),
        (Ok(()), Printed::Text(text), _) => emit(&a.out, &text),
        (valid, printed, _) => {
            if let Printed::Streamed(tmp) = printed {
                let _ = std::fs::remove_file(tmp);
            }
            valid.map_err(|d| Failure(d.to_string()))
        }
    }
}

fn cmd_arch(a: ArchArgs) -> Result<(), Failure> {
    let out = match (&a.name, a.json) {
        (Some(name), false) => arch::describe(&arch::lookup(name)?),
        (Some(name), true) => to_json_line(&arch::lookup(name)?)?,
        (None, false) => arch::describe_all(),
        (None, true) => {
            let all: Vec<_> = arch::Generation::ALL
                .iter()
                .map(|&g| GenerationInfo {
                    generation: g,
                    arch_level: g.arch_level(),
                    codenames: g.codenames(),
                    board: arch::board(g),
                })
                .collect();
            to_json_line(&all)?
        }
    };
    std::io::stdout().write_all(out.as_bytes())?;
    Ok(())
}

/// One generation in `psum arch --json`.
#[derive(serde::Serialize)]
struct GenerationInfo {
    generation: arch::Generation,
    arch_level: u32,
    codenames: &'static [&'static str],
    board: arch::Board,
}

fn to_json_line(v: &impl serde::Serialize) -> Result<String, Failure> {
    Ok(serde_json::to_string_pretty(v)? + "\n")
}

/// Where an allocation error points in the input: the tensor it names.
fn alloc_loc(m: &Module, e: &AllocError) -> Loc {
    let name = match e {
        AllocError::TooBig { name, .. }
        | AllocError::NoFirstDef(name)
        | AllocError::NoLastUse(name)
        | AllocError::TooManyReloads { name, .. } => name.as_str(),
        _ => return Loc::Module,
    };
    // A memloc-split piece `NAME.K` points at the declaration of NAME.
    let base = |n: &str| m.tensor_by_name(n);
    base(name)
        .or_else(|| name.rsplit_once('.').and_then(|(b, _)| base(b)))
        .map_or(Loc::Module, Loc::Tensor)
}

/// Renders a pipeline error against the input it came from.
fn compile_failure(loaded: &Loaded, e: &CompileError) -> Failure {
    let loc = match e {
        CompileError::Invalid(v) => v.loc,
        CompileError::Alloc(a) => alloc_loc(&loaded.module, a),
        _ => Loc::Module,
    };
    located(loaded, loc, e.to_string())
}

/// The diagnostic at `loc`, with a note naming the kernel line of a traced
/// tile when it points at one (SPEC §2.3).
fn located(loaded: &Loaded, loc: Loc, message: String) -> Failure {
    let mut text = loaded.diagnostic(loc, message).to_string();
    if let Loc::Tensor(t) = loc {
        if let Some(kernel) = &loaded.module.tensor(t).loc {
            text.push_str(&format!("\n   = note: the tile is allocated at {kernel}"));
        }
    }
    Failure(text)
}

fn json_text(v: &serde_json::Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default() + "\n"
}

fn cmd_alloc(a: AllocArgs) -> Result<(), Failure> {
    let loaded = load(&a.file)?;
    let t0 = Instant::now();
    let result = psum::alloc::allocate(&loaded.module, &a.flags.options());
    let elapsed = t0.elapsed();
    let outcome =
        result.map_err(|e| located(&loaded, alloc_loc(&loaded.module, &e), e.to_string()))?;
    a.flags.print_log(&outcome);
    for w in &outcome.warnings {
        eprintln!("warning: {w}");
    }
    let program = text::print(&outcome.module);
    match a.report {
        Some(ReportKind::Json) => {
            if a.out.output.is_some() {
                emit(&a.out, &program)?;
            }
            print_stdout(&json_text(&report::alloc_report(&outcome.report, elapsed)))
        }
        None => emit(&a.out, &program),
    }
}

fn cmd_compile(a: CompileArgs) -> Result<(), Failure> {
    let loaded = load(&a.file)?;
    if psum::lint::is_traced(&loaded.module) {
        for l in psum::lint::lint(&loaded.module) {
            eprintln!("{l}");
        }
    }
    if a.keep_banks {
        return compile_kept(&a, &loaded);
    }
    let opts = CompileOptions {
        alloc: a.flags.options(),
        verify: !a.no_verify,
        verify_each: a.verify_each,
    };
    let report = a.report();
    let c = pipeline::compile(&loaded.module, &opts).map_err(|e| compile_failure(&loaded, &e))?;
    a.flags.print_log(&c.alloc);
    let program = module_text(&c.module, a.emit);
    match report {
        Some(CompileReport::Json) => {
            if a.out.output.is_some() {
                emit(&a.out, &program)?;
            }
            print_stdout(&json_text(&report::compile_report(&c)))?;
        }
        Some(CompileReport::Html(path)) => {
            let t = Timeline::from_compiled(title(&a.file), &loaded.module, &c);
            emit(&OutputArgs { output: Some(path) }, &viz::html(&t))?;
            emit(&a.out, &program)?;
            eprint!("{}", report::compile_summary(&c));
        }
        None => {
            emit(&a.out, &program)?;
            eprint!("{}", report::compile_summary(&c));
        }
    }
    match c.verify.as_ref().and_then(|v| v.first_error()) {
        Some(e) => Err(Failure(format!("error: verification failed: {e}"))),
        None => Ok(()),
    }
}

fn cmd_legalize(a: LegalizeArgs) -> Result<(), Failure> {
    let loaded = load(&a.file)?;
    let arch = arch::lookup(&loaded.module.arch)?;
    let mut m = loaded.module.clone();
    let t0 = Instant::now();
    let r = matmul::legalize_program(&mut m, &arch)?;
    let elapsed = t0.elapsed();
    for w in &r.warnings {
        eprintln!("warning: {w}");
    }
    let program = text::print(&m);
    match a.report {
        Some(ReportKind::Json) => {
            if a.out.output.is_some() {
                emit(&a.out, &program)?;
            }
            let v = report::legalize_report(&m.arch, arch.num_banks(), &r, elapsed);
            print_stdout(&json_text(&v))
        }
        None => emit(&a.out, &program),
    }
}

fn cmd_verify(a: VerifyArgs) -> Result<(), Failure> {
    let original = load(&a.original)?;
    let result = load(&a.result)?;
    let simulator = if a.exact {
        verify::Simulator::Exact
    } else {
        verify::Simulator::Symbolic
    };
    let r = verify::verify_with(&original.module, &result.module, simulator);
    match r.first_error() {
        None => print_stdout("ok\n"),
        Some(e) => {
            let loc = r.first_loc(&result.module);
            Err(Failure(result.diagnostic(loc, e).to_string()))
        }
    }
}

fn cmd_first_matmults(a: FmtArgs) -> Result<(), Failure> {
    let loaded = load(&a.file)?;
    let mut m = loaded.module;
    matmul::set_first_matmults(&mut m);
    emit(&a.out, &module_text(&m, a.emit))
}

fn cmd_gen(a: GenArgs) -> Result<(), Failure> {
    use psum::gen::workloads::{generate, Workload, WorkloadKind};
    let kind = WorkloadKind::from_name(&a.kind)?;
    if a.help_params {
        return print_stdout(&Workload::help(kind));
    }
    // The trailing parameters swallow everything after KIND, `-o` included.
    let mut out = a.out;
    let mut params = Vec::with_capacity(a.params.len());
    let mut it = a.params.into_iter();
    while let Some(p) = it.next() {
        match p.as_str() {
            "-o" | "--output" => {
                let path = it
                    .next()
                    .ok_or_else(|| Failure(format!("error: {p} needs a file")))?;
                out.output = Some(PathBuf::from(path));
            }
            _ => match p.strip_prefix("--output=") {
                Some(path) => out.output = Some(PathBuf::from(path)),
                None => params.push(p),
            },
        }
    }
    let w = Workload::from_args(kind, &params)?;
    let m = generate(&w)?;
    emit(&out, &text::print(&m))
}

/// The heading of a picture of FILE: its file name (`stdin` for `-`).
fn title(file: &str) -> String {
    match file {
        "-" => "stdin".to_string(),
        _ => Path::new(file)
            .file_name()
            .map_or_else(|| file.to_string(), |n| n.to_string_lossy().into_owned()),
    }
}

fn cmd_viz(a: VizArgs) -> Result<(), Failure> {
    let html = match a.output.as_ref().and_then(|p| p.extension()) {
        None if a.output.is_none() => false,
        Some(e) if e == "svg" => false,
        Some(e) if e == "html" || e == "htm" => true,
        _ => usage_error("the output of viz must end in .svg or .html"),
    };
    let loaded = load(&a.file)?;
    let m = &loaded.module;
    let opts = CompileOptions {
        alloc: a.flags.options(),
        verify: false,
        ..CompileOptions::default()
    };
    let t = match pipeline::compile(m, &opts) {
        Ok(c) => {
            a.flags.print_log(&c.alloc);
            Timeline::from_compiled(title(&a.file), m, &c)
        }
        Err(e @ (CompileError::Unroll(_) | CompileError::Matmul(_))) => {
            eprintln!("warning: accumulation clusters not drawn: {e}");
            let outcome = alloc::allocate(m, &opts.alloc)?;
            a.flags.print_log(&outcome);
            Timeline::from_alloc(title(&a.file), m, &outcome)
        }
        Err(e) => return Err(compile_failure(&loaded, &e)),
    };
    let page = if html { viz::html(&t) } else { viz::svg(&t) };
    emit(&OutputArgs { output: a.output }, &page)
}

/// The first iteration's allocation problem of FILE (after the memloc split).
fn alloc_problem(
    file: &str,
    psum_banks: Option<u32>,
) -> Result<psum::bound::AllocProblem, Failure> {
    let loaded = load(file)?;
    let opts = AllocOptions {
        psum_banks,
        ..AllocOptions::default()
    };
    psum::bound::problem(&loaded.module, &opts).map_err(|e| {
        Failure(
            loaded
                .diagnostic(alloc_loc(&loaded.module, &e), e.to_string())
                .to_string(),
        )
    })
}

fn cmd_bound(a: BoundArgs) -> Result<(), Failure> {
    let report = psum::bound::bounds(&alloc_problem(&a.file, a.psum_banks)?);
    match a.report {
        Some(ReportKind::Json) => print_stdout(&json_text(&serde_json::to_value(&report)?)),
        None => print_stdout(&report.render()),
    }
}

fn cmd_export(a: ExportArgs) -> Result<(), Failure> {
    let p = alloc_problem(&a.file, a.psum_banks)?;
    if a.split_lp {
        let lp =
            psum::lp::SplitLp::new(&p).map_err(|e| Failure(format!("{}: error: {e}", a.file)))?;
        let objective = match a.objective {
            None | Some(ObjectiveKind::Cost) => psum::lp::Objective::Cost,
            Some(ObjectiveKind::Count) => psum::lp::Objective::Count,
        };
        return emit(&a.out, &lp.render(objective));
    }
    emit(&a.out, &psum::export::to_minimalloc_csv(&p.buffers))?;
    eprintln!(
        "capacity: {} banks (run MiniMalloc with --capacity={})",
        p.num_banks, p.num_banks
    );
    Ok(())
}

fn cmd_import(a: ImportArgs) -> Result<(), Failure> {
    let p = alloc_problem(&a.file, a.psum_banks)?;
    let csv = std::fs::read_to_string(&a.solution)
        .map_err(|e| Failure(format!("{}: error: {e}", a.solution.display())))?;
    let report = psum::export::import_minimalloc(&p.buffers, &csv, p.num_banks)
        .map_err(|e| Failure(format!("{}: error: {e}", a.solution.display())))?;
    print_stdout(&report.render())?;
    if report.is_valid() {
        Ok(())
    } else {
        Err(Failure(format!(
            "{}: error: the solution is not a valid bank assignment",
            a.solution.display()
        )))
    }
}

fn print_stdout(s: &str) -> Result<(), Failure> {
    std::io::stdout().write_all(s.as_bytes())?;
    Ok(())
}

fn cmd_trace(a: TraceArgs) -> Result<(), Failure> {
    use psum::trace::{self, TensorArg, TraceError, TraceRequest};
    let args = a
        .args
        .iter()
        .map(|s| TensorArg::parse(s))
        .collect::<Result<Vec<_>, _>>()
        .unwrap_or_else(|e| usage_error(&e));
    let kwargs = a
        .kwargs
        .iter()
        .map(|s| match s.split_once('=') {
            Some((n, v)) if !n.is_empty() => (n.to_string(), v.to_string()),
            _ => usage_error(&format!("--kwarg '{s}': expected NAME=VALUE")),
        })
        .collect();
    if let Some(name) = &a.arch {
        arch::lookup(name)?;
    }
    let req = TraceRequest {
        python: std::env::var("PSUM_PYTHON").unwrap_or_else(|_| "python3".to_string()),
        kernel: a.kernel.clone(),
        function: a.function.clone(),
        args,
        kwargs,
        arch: a.arch.clone(),
    };
    let traced = trace::trace(&req).map_err(|e| match e {
        TraceError::Kernel {
            loc: Some(loc),
            message,
        } => Failure(format!("{loc}: error: {message}")),
        e => Failure(format!("{}: error: {e}", a.kernel.display())),
    })?;
    for w in &traced.warnings {
        match &w.loc {
            Some(loc) => eprintln!("{loc}: warning: {}", w.message),
            None => eprintln!("warning: {}", w.message),
        }
    }
    for l in psum::lint::lint_with(&traced.module, &traced.unrolled_affine) {
        eprintln!("{l}");
    }
    let json = a
        .out
        .output
        .as_ref()
        .is_some_and(|p| p.extension().is_some_and(|e| e == "json"));
    let format = if json { Emit::Json } else { Emit::Text };
    emit(&a.out, &module_text(&traced.module, format))
}

fn cmd_lint(a: LintArgs) -> Result<(), Failure> {
    let loaded = read(&a.file)?;
    let valid = || loaded.validate().map_err(|d| Failure(d.to_string()));
    // Text input is linted before validation, which rejects some hazards
    // outright; JSON input may be structurally unsound, so it is validated first.
    if loaded.json {
        valid()?;
    }
    let mut out = String::new();
    for l in psum::lint::lint(&loaded.module) {
        out.push_str(&format!("{l}\n"));
    }
    print_stdout(&out)?;
    valid()
}

/// `compile --keep-banks`: check the program's placement, then unroll,
/// legalize and verify with it.
fn compile_kept(a: &CompileArgs, loaded: &Loaded) -> Result<(), Failure> {
    let problems = psum::placement::check(&loaded.module, &a.flags.options());
    if !problems.is_empty() {
        let lines: Vec<String> = problems.iter().map(|p| format!("error: {p}")).collect();
        return Err(Failure(lines.join("\n")));
    }
    let arch = arch::lookup(&loaded.module.arch)?;
    let mut m = psum::unroll::unroll(&loaded.module)?;
    matmul::legalize_program(&mut m, &arch)?;
    emit(&a.out, &module_text(&m, a.emit))?;
    eprintln!("psum compile --keep-banks: placement ok");
    if a.no_verify {
        return Ok(());
    }
    match verify::verify(&loaded.module, &m).first_error() {
        Some(e) => Err(Failure(format!("error: verification failed: {e}"))),
        None => {
            eprintln!("  verify    ok");
            Ok(())
        }
    }
}
