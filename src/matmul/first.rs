//! `set_first_matmults` (SPEC §4.1, seed 004 §set_first_matmults): the
//! provisional start marker.
//!
//! In program order (each loop body once, as the reference walks its
//! instructions), the first matmul-family instruction writing a given
//! destination access pattern gets `start` (`setCalcStart`); every later one
//! writing the same pattern gets no flag (`setCalcContinue`). The key is the
//! access pattern as written, not the bank or the evaluated region. `compile`
//! does not run this pass: §4.3 derives the final flags.

use crate::ir::{Access, FlagSet, Flags, InstKind, Module};
use std::collections::HashSet;

/// Marks the first matmul of every destination access pattern `start` and
/// every later one `none`; returns how many got `start`.
pub fn set_first_matmults(m: &mut Module) -> usize {
    let mut seen: HashSet<Access> = HashSet::new();
    let mut starts = 0;
    for id in m.insts_in_order() {
        if let InstKind::Matmul(mm) = &mut m.insts[id].kind {
            let first = seen.insert(mm.dst.clone());
            starts += usize::from(first);
            mm.flags = Flags::Set(FlagSet {
                start: first,
                ..FlagSet::NONE
            });
        }
    }
    starts
}
