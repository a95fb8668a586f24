//! Reading inputs, writing outputs and rendering failures, shared by every
//! command (SPEC §2.6, §6).

use super::args::{Emit, OutputArgs};
use super::Cli;
use crate::ir::{Loc, Module};
use crate::pipeline::CompileError;
use crate::source::{self, Loaded};
use crate::text;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Why a command failed.
pub(crate) enum Failure {
    /// An input error: the full rendered text, printed on stderr, exit 1.
    Input(String),
    /// A usage error, rendered by clap, exit 2.
    Usage(clap::Error),
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

/// Writes `content` to `-o FILE` via a temp file and rename, or to stdout.
pub(crate) fn emit(out: &OutputArgs, content: &str) -> Result<(), Failure> {
    let Some(path) = &out.output else {
        std::io::stdout().write_all(content.as_bytes())?;
        return Ok(());
    };
    let tmp = write_temp(path, |w| w.write_all(content.as_bytes()))?;
    keep(&tmp, path)
}

/// Writes what `write` produces to a temporary file beside `path` and
/// returns its name; on an error the file is removed.
pub(crate) fn write_temp(
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
        return Err(Failure::Input(format!("{}: error: {e}", path.display())));
    }
    Ok(tmp)
}

/// Renames the temporary file `tmp` to `path`.
pub(crate) fn keep(tmp: &Path, path: &Path) -> Result<(), Failure> {
    std::fs::rename(tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(tmp);
        Failure::Input(format!("{}: error: {e}", path.display()))
    })
}

/// The module in the chosen output format.
pub(crate) fn module_text(m: &Module, format: Emit) -> String {
    match format {
        Emit::Text => text::print(m),
        Emit::Json => text::to_json(m),
    }
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
    use clap::CommandFactory;
    Failure::Usage(Cli::command().error(clap::error::ErrorKind::ValueValidation, msg))
}

/// Prints a clap error (or `--help`, `--version`) as clap does and returns
/// its exit code.
pub(crate) fn usage_exit(e: &clap::Error) -> u8 {
    // Printing to a closed stream leaves nothing to report it on.
    let _ = e.print();
    u8::try_from(e.exit_code()).unwrap_or(2)
}
