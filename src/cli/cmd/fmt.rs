//! `psum fmt` (SPEC §2.5): a module in canonical form, text or JSON.

use crate::cli::args::{Emit, OutputArgs};
use crate::cli::io::{module_text, read, Failure};
use crate::cli::output::Outputs;
use crate::text;
use clap::Args;

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

/// Parsing checks the module's structure (ids, placement, nesting), which is
/// all printing relies on; the rest of validation and printing each read the
/// parsed module only, so they run side by side, and the output is written
/// only when the program is valid. Text for `-o FILE` is streamed into the
/// staged file as it is printed.
pub(crate) fn run(a: FmtArgs) -> Result<(), Failure> {
    let loaded = read(&a.file)?;
    let mut out = Outputs::new();
    let (valid, printed) = std::thread::scope(|s| {
        let valid = s.spawn(|| loaded.validate());
        let printed = match (a.out.output.as_deref(), a.emit) {
            (Some(path), Emit::Text) => out.stream(path, |w| text::write(&loaded.module, w)),
            (path, format) => out.add(path, &module_text(&loaded.module, format)),
        };
        let valid = valid
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (valid, printed)
    });
    valid.map_err(|d| Failure::Input(d.to_string()))?;
    printed?;
    out.commit()
}
