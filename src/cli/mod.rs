//! The `psum` command line (SPEC §6), behind the crate's `cli` feature (the
//! only part of the crate that depends on clap). [`run`] parses the
//! arguments and dispatches to one module per subcommand under `cmd/`, each
//! holding its argument struct and its `run`; `args` holds the flags several
//! commands share, `io` reading, writing and rendering failures, and `bench`
//! the `psum bench` tables. Exit codes: 0 success, 1 input error, 2 usage
//! error (clap's own exit code for bad arguments).

mod args;
mod bench;
mod cmd;
mod io;
mod output;

use clap::{CommandFactory, Parser, Subcommand};
use cmd::{
    alloc, arch, bound, compile, export, fmt, gen, import, legalize, lint, pass, trace, verify, viz,
};
use io::Failure;
use std::ffi::OsString;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "psum",
    version,
    about = "PSUM bank allocation and matmul accumulation legalization"
)]
/// `psum`: one subcommand.
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The subcommands.
#[derive(Subcommand)]
enum Command {
    /// Print a module in canonical form (SPEC §2.5).
    Fmt(fmt::FmtArgs),
    /// Show the hardware geometry: all generations, or one codename (SPEC §1).
    Arch(arch::ArchArgs),
    /// The main job: validate, allocate, unroll, order, legalize, verify (SPEC §6).
    Compile(compile::CompileArgs),
    /// PSUM allocation only (SPEC §3).
    Alloc(alloc::AllocArgs),
    /// Order column tiles and legalize accumulation groups of an allocated,
    /// loop-free program (SPEC §4.2, §4.3).
    Legalize(legalize::LegalizeArgs),
    /// Check that RESULT computes what ORIGINAL computes (SPEC §5).
    Verify(verify::VerifyArgs),
    /// Write a workload program (SPEC §7): gemm, attention, attention-bwd,
    /// qkv, conv1d, column-tiled, random. `psum gen KIND --help-params` lists
    /// a workload's parameters.
    Gen(gen::GenArgs),
    /// Lower bounds: peak demand, and the minimum number of spills when every
    /// PSUM tensor is one bank.
    Bound(bound::BoundArgs),
    /// Write the allocation problem for another solver (`--minimalloc`:
    /// MiniMalloc CSV; `--split-lp`: the least split spill cost as a 0-1
    /// program in CPLEX LP format).
    Export(export::ExportArgs),
    /// Read another solver's solution back and check it (`--minimalloc`).
    Import(import::ImportArgs),
    /// Draw the PSUM bank timeline as SVG or HTML (SPEC §8), allocating first.
    Viz(viz::VizArgs),
    /// Benchmark the allocator (reference vs fast mode, scaling to 1M
    /// tensors, peak memory) and time each pass of `compile` on the workloads;
    /// `--pipeline`: every pass's time and peak memory at 100k tensors and on a 2048³ gemm.
    Bench(bench::BenchArgs),
    /// Run a single pass on its own.
    #[command(subcommand)]
    Pass(pass::PassCommand),
    /// Run an NKI kernel (Python) under psum's tracer and write its psum
    /// program (SPEC §9).
    Trace(trace::TraceArgs),
    /// Report the PSUM hazards of a program (SPEC §9.4), naming kernel lines
    /// of traced programs; then validate it.
    Lint(lint::LintArgs),
}

/// Runs the command line on `args` (the program name first, as
/// [`std::env::args_os`] gives them), printing to stdout and stderr, and
/// returns the exit code.
pub fn run<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    ExitCode::from(status(args))
}

/// [`run`], returning the exit code as a number (0; 1 or 2 for an input or a
/// usage error; 101 for a panic, caught): what a host
/// process other than the `psum` binary exits with.
pub fn status<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => return io::usage_exit(&e),
    };
    let command = cli.command;
    let result = std::panic::catch_unwind(move || dispatch(command));
    match result {
        Ok(Ok(())) => 0,
        Ok(Err(Failure::Input(msg))) => {
            eprintln!("{msg}");
            1
        }
        Ok(Err(Failure::Usage(kind, msg))) => io::usage_exit(&Cli::command().error(kind, msg)),
        Err(_) => {
            // The panic hook has printed the panic's message and place.
            eprintln!(
                "error: internal error: psum panicked (a bug in psum); no output file was written"
            );
            101
        }
    }
}

/// Runs one subcommand.
fn dispatch(command: Command) -> Result<(), Failure> {
    match command {
        Command::Fmt(a) => fmt::run(a),
        Command::Arch(a) => arch::run(a),
        Command::Compile(a) => compile::run(a),
        Command::Alloc(a) => alloc::run(a),
        Command::Legalize(a) => legalize::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Gen(a) => gen::run(a),
        Command::Bound(a) => bound::run(a),
        Command::Export(a) => export::run(a),
        Command::Import(a) => import::run(a),
        Command::Viz(a) => viz::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Pass(pass::PassCommand::FirstMatmults(a)) => pass::run(a),
        Command::Trace(a) => trace::run(a),
        Command::Lint(a) => lint::run(a),
    }
}
