//! `psum import`: another solver's solution, read back and checked.

use super::bound::alloc_problem;
use crate::cli::io::{print_stdout, Failure};
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct ImportArgs {
    /// Read a MiniMalloc solution (its `offset` column is the base bank).
    #[arg(long, required = true)]
    pub(crate) minimalloc: bool,
    /// The program the problem was exported from.
    pub(crate) file: String,
    /// The solver's CSV.
    pub(crate) solution: PathBuf,
    /// Banks the allocator may use (1..=numBanks).
    #[arg(long, value_name = "N")]
    pub(crate) psum_banks: Option<u32>,
}

pub(crate) fn run(a: ImportArgs) -> Result<(), Failure> {
    let p = alloc_problem(&a.file, a.psum_banks)?;
    let csv = std::fs::read_to_string(&a.solution)
        .map_err(|e| Failure::Input(format!("{}: error: {e}", a.solution.display())))?;
    let report = crate::export::import_minimalloc(&p.buffers, &csv, p.num_banks)
        .map_err(|e| Failure::Input(format!("{}: error: {e}", a.solution.display())))?;
    print_stdout(&report.render())?;
    if report.is_valid() {
        Ok(())
    } else {
        Err(Failure::Input(format!(
            "{}: error: the solution is not a valid bank assignment",
            a.solution.display()
        )))
    }
}
