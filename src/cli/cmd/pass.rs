//! `psum pass NAME FILE`: a single pass on its own.

use super::fmt::FmtArgs;
use crate::cli::io::{load, Failure};
use crate::cli::output::emit;
use crate::matmul;
use clap::Subcommand;

/// Single passes (`psum pass NAME FILE`).
#[derive(Subcommand)]
pub(crate) enum PassCommand {
    /// set_first_matmults: provisional `start` flags (SPEC §4.1).
    FirstMatmults(FmtArgs),
}

pub(crate) fn run(a: FmtArgs) -> Result<(), Failure> {
    let loaded = load(&a.file)?;
    let mut m = loaded.module;
    matmul::set_first_matmults(&mut m);
    emit(a.out.output.as_deref(), |w| a.emit.write(&m, w))
}
