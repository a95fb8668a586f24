//! `psum fmt` (SPEC §2.5): a module in canonical form, text or JSON.

use crate::cli::args::{Emit, OutputArgs};
use crate::cli::io::{read, Failure};
use crate::cli::output::Outputs;
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
/// all printing relies on; the rest of validation and printing into the
/// staged file of `-o FILE` each read the parsed module only, so they run
/// side by side. The output is committed only when the program is valid
/// (stdout is printed then).
pub(crate) fn run(a: FmtArgs) -> Result<(), Failure> {
    let loaded = read(&a.file)?;
    let mut out = Outputs::new();
    let (valid, printed) = std::thread::scope(|s| {
        let valid = s.spawn(|| loaded.validate());
        let printed = out.stream(a.out.output.as_deref(), |w| a.emit.write(&loaded.module, w));
        let valid = valid
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (valid, printed)
    });
    valid.map_err(|d| Failure::Input(d.to_string()))?;
    printed?;
    out.commit()
}
