//! The allocator's first analysis (SPEC §3.1–3.3): memloc split
//! ([`super::split`]), linearization ([`super::linear`]) and live ranges
//! ([`super::liveness`]) of a validated module. The allocator starts from
//! it, and `psum bound` and the bank pictures read it.

use super::linear::Linear;
use super::liveness::{self, AccessTable, Liveness};
use super::split;
use super::support::threads::{join, PARALLEL_MIN_NODES};
use super::{AllocError, AllocOptions};
use crate::arch::{self, Arch};
use crate::ir::Module;

/// A module split and analyzed: the nodes of the allocator's first
/// iteration.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// The module after the memloc split (statements as they were).
    pub module: Module,
    /// Its architecture.
    pub arch: Arch,
    /// Banks the allocator may use (after `--psum-banks`).
    pub num_banks: u32,
    /// Its program points.
    pub lin: Linear,
    /// Its nodes and their live ranges, with the PSUM accesses.
    pub live: Liveness,
}

/// Splits and analyzes `m` under `opts` (its bank count, and two threads
/// on a large program when `opts.parallel`). Errors: an unknown arch, a
/// bank count out of range, and the live-range errors of SPEC §3.3.
pub fn analyze(m: Module, opts: &AllocOptions) -> Result<Analysis, AllocError> {
    let arch = arch::lookup(&m.arch)?;
    let num_banks = opts.num_banks(&arch)?;
    let parallel = opts.parallel && m.insts.len() >= PARALLEL_MIN_NODES;
    // The points and the access table of a large program, side by side.
    let (table, lin) = join(parallel, || AccessTable::new(&m), || Linear::new(&m));
    let (module, events) = split::memloc_split(m, &lin, table, parallel);
    let live = liveness::live_ranges_of(&module, events, &lin, &arch, num_banks)?;
    Ok(Analysis {
        module,
        arch,
        num_banks,
        lin,
        live,
    })
}
