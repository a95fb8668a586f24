//! The `psum` command line (SPEC §6): a thin shell over the library. Each
//! subcommand is one variant of [`Command`] with its own argument struct and
//! one `cmd_*` function. Exit codes: 0 success, 1 input error, 2 usage error
//! (clap's own exit code for bad arguments).

use clap::{Args, Parser, Subcommand, ValueEnum};
use psum::source::{self, Loaded};
use psum::{arch, text};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

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
}

/// Output format of a module.
#[derive(Clone, Copy, ValueEnum)]
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
    let mut bytes = Vec::new();
    if file == "-" {
        std::io::stdin().read_to_end(&mut bytes)?;
    } else {
        bytes = std::fs::read(file).map_err(|e| Failure(format!("{file}: error: {e}")))?;
    }
    source::load(file, &bytes).map_err(|d| Failure(d.to_string()))
}

/// Writes `content` to `-o FILE` via a temp file and rename, or to stdout.
fn emit(out: &OutputArgs, content: &str) -> Result<(), Failure> {
    let Some(path) = &out.output else {
        std::io::stdout().write_all(content.as_bytes())?;
        return Ok(());
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp{}", std::process::id()));
    let written = std::fs::write(&tmp, content).and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = written {
        // Best effort: the temp file may not exist if the write itself failed.
        let _ = std::fs::remove_file(&tmp);
        return Err(Failure(format!("{}: error: {e}", path.display())));
    }
    Ok(())
}

fn module_text(m: &psum::ir::Module, format: Emit) -> String {
    match format {
        Emit::Text => text::print(m),
        Emit::Json => text::to_json(m),
    }
}

fn cmd_fmt(a: FmtArgs) -> Result<(), Failure> {
    let loaded = load(&a.file)?;
    emit(&a.out, &module_text(&loaded.module, a.emit))
}

fn cmd_arch(a: ArchArgs) -> Result<(), Failure> {
    let out = match (&a.name, a.json) {
        (Some(name), false) => arch::describe(&arch::lookup(name)?),
        (Some(name), true) => to_json_line(&arch::lookup(name)?)?,
        (None, false) => arch::describe_all(),
        (None, true) => {
            let all: Vec<_> = arch::Generation::ALL
                .iter()
                .map(|&g| {
                    serde_json::json!({
                        "generation": g,
                        "arch_level": g.arch_level(),
                        "codenames": g.codenames(),
                        "board": arch::board(g),
                    })
                })
                .collect();
            to_json_line(&all)?
        }
    };
    std::io::stdout().write_all(out.as_bytes())?;
    Ok(())
}

fn to_json_line(v: &impl serde::Serialize) -> Result<String, Failure> {
    Ok(serde_json::to_string_pretty(v)? + "\n")
}
