//! `psum verify ORIGINAL RESULT` (SPEC §5).

use crate::cli::io::{load, print_stdout, Failure};
use crate::ir::Loc;
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
    /// With --exact: refuse a run of more than N element operations
    /// (multiply-adds, element moves and stored elements of both programs).
    #[arg(long, value_name = "N", default_value_t = verify::DEFAULT_EXACT_LIMIT)]
    pub(crate) exact_limit: u128,
}

pub(crate) fn run(a: VerifyArgs) -> Result<(), Failure> {
    let original = load(&a.original)?;
    let result = load(&a.result)?;
    let simulator = if a.exact {
        verify::Simulator::Exact
    } else {
        verify::Simulator::Symbolic
    };
    verify::admit(&original.module, &result.module, simulator, a.exact_limit).map_err(
        |e| match e {
            verify::LimitError::Instructions { result: r, error } => {
                let file = if r { &result } else { &original };
                Failure::Input(file.diagnostic(Loc::Module, error.to_string()).to_string())
            }
            verify::LimitError::ExactWork { .. } => {
                Failure::Input(format!("error: {e} (raise it with --exact-limit N)"))
            }
            e => Failure::Input(format!("error: {e}")),
        },
    )?;
    let r = verify::verify_with(&original.module, &result.module, simulator);
    match r.first_error() {
        None => print_stdout("ok\n"),
        Some(e) => {
            let loc = r.first_loc(&result.module);
            Err(Failure::Input(result.diagnostic(loc, e).to_string()))
        }
    }
}
