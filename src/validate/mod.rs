//! Validation (SPEC §2.1–2.4): everything a module must satisfy before any
//! pass runs. [`validate`] checks structure (ids in range, each instruction
//! and loop placed once, loop variables in scope — what JSON input can get
//! wrong), the architecture, declarations, loops, every access (dtype
//! alignment, constant extents, bounds for every iteration), the shape rules
//! of each instruction kind, and that no PSUM cell is read before an
//! earlier instruction instance wrote it. [`validate_source`] adds the
//! `tile=RxC` checks that only the source text carries.
//!
//! Bounds are affine in independent loop variables, so their extremes are
//! found term by term instead of by enumerating iterations; the error then
//! names a concrete iteration that attains the bad value.
//!
//! The files: `error` (the error vocabulary), `context` (what the checks
//! of one module share), `structure` (structural
//! soundness), `decls` (declarations, labels, loop ranges), `affine`
//! (extremes and witnesses), `access` (the rules of every access), `inst`
//! (the shape rules of each instruction kind), `psum` (the PSUM read rule).

mod access;
mod affine;
mod context;
mod decls;
mod error;
mod inst;
mod psum;
mod structure;

pub use error::{ValidateError, ValidateErrorKind};
pub use psum::MAX_READ_CHECK_STEPS;
pub use structure::{MAX_AFFINE, MAX_LOOP_BOUND};

use crate::arch;
use crate::entity::IdMap;
use crate::ir::{Attr, InstId, Loc, LoopId, Module};
use crate::text::Tile;
use context::Cx;
use decls::declarations;
use error::{err, malformed};
use structure::structure;

/// Checks a module (SPEC §2.1–2.4). On success every id is in range, every
/// instruction and loop is placed at most once, and passes may rely on the
/// shape rules.
pub fn validate(m: &Module) -> Result<(), ValidateError> {
    checked(m).map(|_| ())
}

/// Runs every check of [`validate`] and returns the context for more.
fn checked(m: &Module) -> Result<Cx<'_>, ValidateError> {
    let loop_of_var = structure(m)?;
    let arch =
        arch::lookup(&m.arch).or_else(|e| err(Loc::Arch, ValidateErrorKind::UnknownArch(e)))?;
    declarations(m, &arch)?;
    let cx = Cx::new(m, arch, &loop_of_var);
    cx.labels()?;
    cx.loops()?;
    for id in m.insts_in_order() {
        cx.inst(id)?;
    }
    cx.psum_reads()?;
    Ok(cx)
}

/// [`validate`], then the `tile=RxC` attributes as written (the parser's
/// [`crate::text::ParsedModule::tiles`]): each must equal K×M (SPEC §2.3;
/// `pos` + tile fitting the array is checked by [`validate`] since the
/// tile is always K×M).
pub fn validate_source(module: &Module, tiles: &[(InstId, Tile)]) -> Result<(), ValidateError> {
    let cx = checked(module)?;
    for &(id, tile) in tiles {
        let Some(mm) = module.inst(id).kind.as_matmul() else {
            continue;
        };
        let (k, m) = (mm.stationary.part_extent(), cx.elems(&mm.stationary));
        if (i64::from(tile.rows), i64::from(tile.cols)) != (k, m) {
            return err(
                Loc::Attr(id, Attr::Tile),
                ValidateErrorKind::TileMismatch {
                    inst: cx.inst_name(id),
                    rows: tile.rows,
                    cols: tile.cols,
                    k,
                    m,
                },
            );
        }
    }
    Ok(())
}

/// Structural soundness (SPEC §2.5, §2.6): every id in range, each
/// instruction and loop placed exactly once (so no loop contains itself),
/// loops nested at most [`MAX_LOOP_DEPTH`](crate::ir::MAX_LOOP_DEPTH) deep, each loop variable bound by
/// one loop and used in its scope, bounds canonical and in range, names and
/// locations printable: what a module read from text has by construction.
/// Printing a module relies on nothing more; JSON input is checked with it
/// as it is read, before anything indexes by its ids.
pub fn validate_structure(m: &Module) -> Result<(), ValidateError> {
    let loop_of_var = structure(m)?;
    let mut placed = IdMap::with_len(m.insts.len(), false);
    for i in m.insts_in_order() {
        placed[i] = true;
    }
    if let Some((i, _)) = placed.iter().find(|(_, &p)| !p) {
        return malformed(Loc::Module, format!("instruction {i} is never placed"));
    }
    if let Some((v, _)) = loop_of_var.iter().find(|(_, l)| l.is_none()) {
        return malformed(
            Loc::Module,
            format!("loop variable {v} is bound by no loop"),
        );
    }
    // Every variable is bound by one placed loop, each binding one.
    if m.loops.len() > m.vars.len() {
        let mut placed = IdMap::with_len(m.loops.len(), false);
        for &l in loop_of_var.values().flatten() {
            placed[l] = true;
        }
        let l = (placed.iter().find(|(_, &p)| !p)).map_or(LoopId(0), |(l, _)| l);
        return malformed(Loc::Module, format!("{l} is never placed"));
    }
    Ok(())
}
