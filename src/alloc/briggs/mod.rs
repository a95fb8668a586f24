//! Fast mode (SPEC §3.10): Chaitin–Briggs over banks, near-linear in the
//! number of tensors, with the output of [`super::reference`].
//!
//! The fixpoint starts from the first analysis ([`super::setup::Start`]) and
//! repeats, over one [`Context`], until every node has a bank: best-of-n
//! over the nodes that changed ([`best_of_n`]: the interference graph
//! ([`interference`]), the spill costs, then [`simplify`] and [`select`]
//! under H0..H3); the nodes to spill and their spill code ([`spilling`]);
//! and the live ranges after the code, which move the nodes it left alone
//! instead of reading the program again. Best-of-n runs only on the
//! components of the interference graph that changed since the previous
//! iteration and takes the others' results from the last ([`reuse`]).

mod best_of_n;
mod context;
mod graph;
mod interference;
mod iteration;
mod reuse;
mod select;
mod simplify;
mod spilling;

use super::setup::Start;
use super::{AllocError, AllocOptions, AllocOutcome};
use crate::ir::Module;
use context::Context;

/// Allocates the PSUM tensors of a validated module (SPEC §3).
pub(super) fn allocate(m: Module, opts: &AllocOptions) -> Result<AllocOutcome, AllocError> {
    let mut cx = Context::new(Start::of(m, opts)?, opts);
    for iteration in 1..=opts.max_iterations {
        let it = cx.best_of_n();
        if it.placed_all() {
            return Ok(cx.finish(it, iteration));
        }
        let spill = cx.spill_set(&it)?;
        let shift = cx.insert_spill_code(it, &spill);
        cx.after_spill(&shift)?;
    }
    Err(AllocError::NotConverged)
}
