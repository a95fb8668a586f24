//! Reading inputs, writing outputs and rendering failures, shared by every
//! command (SPEC §2.6, §6).

use crate::ir::Loc;
use crate::pipeline::CompileError;
use crate::source::{self, Loaded};
use std::io::{Read, Write};
use std::path::Path;

/// Why a command failed.
#[derive(Debug)]
pub(crate) enum Failure {
    /// An input error: the full rendered text, printed on stderr, exit 1.
    Input(String),
    /// A usage error of this kind saying this, rendered by clap against
    /// the whole command line (`cli::status`), exit 2.
    Usage(clap::error::ErrorKind, String),
}

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure::Input(format!("error: {e}"))
    }
}

/// Reads, parses and validates FILE (`-` is stdin).
pub(crate) fn load(file: &str) -> Result<Loaded, Failure> {
    let loaded = read(file)?;
    loaded
        .validate()
        .map_err(|d| Failure::Input(d.to_string()))?;
    Ok(loaded)
}

/// Reads and parses FILE (`-` is stdin), without validating it.
pub(crate) fn read(file: &str) -> Result<Loaded, Failure> {
    let mut bytes = Vec::new();
    if file == "-" {
        std::io::stdin().read_to_end(&mut bytes)?;
    } else {
        bytes = std::fs::read(file).map_err(|e| Failure::Input(format!("{file}: error: {e}")))?;
    }
    source::parse(file, bytes).map_err(|d| Failure::Input(d.to_string()))
}

/// `v` as pretty JSON with a closing newline.
pub(crate) fn to_json_line(v: &impl serde::Serialize) -> Result<String, Failure> {
    Ok(serde_json::to_string_pretty(v)? + "\n")
}

/// Renders a pipeline error against the input it came from.
pub(crate) fn compile_failure(loaded: &Loaded, e: &CompileError) -> Failure {
    located(loaded, e.loc(), e.to_string())
}

/// The diagnostic at `loc` ([`Loaded::located`]).
pub(crate) fn located(loaded: &Loaded, loc: Loc, message: String) -> Failure {
    Failure::Input(loaded.located(loc, message).to_string())
}

/// A JSON report as pretty text with a closing newline.
pub(crate) fn json_text(v: &serde_json::Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default() + "\n"
}

/// The heading of a picture of FILE: its file name (`stdin` for `-`).
pub(crate) fn title(file: &str) -> String {
    match file {
        "-" => "stdin".to_string(),
        _ => Path::new(file)
            .file_name()
            .map_or_else(|| file.to_string(), |n| n.to_string_lossy().into_owned()),
    }
}

/// Writes `s` to stdout.
pub(crate) fn print_stdout(s: &str) -> Result<(), Failure> {
    std::io::stdout().write_all(s.as_bytes())?;
    Ok(())
}

/// A usage error (exit code 2) saying `msg`, as clap renders its own.
pub(crate) fn usage_error(msg: &str) -> Failure {
    Failure::Usage(clap::error::ErrorKind::ValueValidation, msg.to_string())
}

/// Prints a clap error (or `--help`, `--version`) as clap does and returns
/// its exit code.
pub(crate) fn usage_exit(e: &clap::Error) -> u8 {
    // Printing to a closed stream leaves nothing to report it on.
    let _ = e.print();
    u8::try_from(e.exit_code()).unwrap_or(2)
}
