//! `psum verify ORIGINAL RESULT` (SPEC §5).

use crate::cli::io::{load, print_stdout, Failure};
use crate::verify;
use clap::Args;

#[derive(Args)]
pub(crate) struct VerifyArgs {
    /// The program as written.
    pub(crate) original: String,
    /// The compiled program (allocated; possibly unrolled and legalized).
    pub(crate) result: String,
    /// Compare values with the exact f64 simulator (cost per multiply-add)
    /// instead of the symbolic one (cost per piece of storage written).
    #[arg(long)]
    pub(crate) exact: bool,
}

pub(crate) fn run(a: VerifyArgs) -> Result<(), Failure> {
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
            Err(Failure::Input(result.diagnostic(loc, e).to_string()))
        }
    }
}
