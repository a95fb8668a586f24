//! `psum export`: the allocation problem for another solver.

use super::bound::alloc_problem;
use crate::cli::args::{ObjectiveKind, OutputArgs};
use crate::cli::io::Failure;
use crate::cli::output::emit_str;
use clap::Args;

#[derive(Args)]
#[command(group(clap::ArgGroup::new("format").required(true).args(["minimalloc", "split_lp"])))]
pub(crate) struct ExportArgs {
    /// Write a MiniMalloc CSV (`id,lower,upper,size`; half-open point ranges, sizes in banks).
    #[arg(long)]
    pub(crate) minimalloc: bool,
    /// Write the split-spilling problem as a 0-1 program in CPLEX LP
    /// format, for a MILP solver (SPEC §3.11).
    #[arg(long)]
    pub(crate) split_lp: bool,
    /// What `--split-lp` minimises (default: cost).
    #[arg(long, value_enum, value_name = "WHAT", conflicts_with = "minimalloc")]
    pub(crate) objective: Option<ObjectiveKind>,
    /// Input file (`.psum` text or `.json`); `-` reads stdin.
    pub(crate) file: String,
    /// Banks the allocator may use (1..=numBanks).
    #[arg(long, value_name = "N")]
    pub(crate) psum_banks: Option<u32>,
    #[command(flatten)]
    pub(crate) out: OutputArgs,
}

pub(crate) fn run(a: ExportArgs) -> Result<(), Failure> {
    let p = alloc_problem(&a.file, a.psum_banks)?;
    if a.split_lp {
        let lp = crate::lp::SplitLp::new(&p)
            .map_err(|e| Failure::Input(format!("{}: error: {e}", a.file)))?;
        let objective = match a.objective {
            None | Some(ObjectiveKind::Cost) => crate::lp::Objective::Cost,
            Some(ObjectiveKind::Count) => crate::lp::Objective::Count,
        };
        return emit_str(a.out.output.as_deref(), &lp.render(objective));
    }
    emit_str(
        a.out.output.as_deref(),
        &crate::export::to_minimalloc_csv(&p.buffers),
    )?;
    eprintln!(
        "capacity: {} banks (run MiniMalloc with --capacity={})",
        p.num_banks, p.num_banks
    );
    Ok(())
}
