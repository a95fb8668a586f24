//! `psum fmt` (SPEC §2.5): a module in canonical form, text or JSON.

use crate::cli::args::{Emit, OutputArgs};
use crate::cli::io::{emit, keep, module_text, read, write_temp, Failure};
use crate::text;
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct FmtArgs {
    /// Input file (`.psum` text or `.json`); `-` reads stdin.
    pub(crate) file: String,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) emit: Emit,
    #[command(flatten)]
    pub(crate) out: OutputArgs,
}

/// Validation and printing each read the parsed module only, so they run
/// side by side; the output appears only when the program is valid. Text
/// for `-o FILE` is streamed into the temporary file as it is printed.
pub(crate) fn run(a: FmtArgs) -> Result<(), Failure> {
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
            valid.map_err(|d| Failure::Input(d.to_string()))
        }
    }
}
