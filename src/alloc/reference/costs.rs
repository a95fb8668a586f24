//! Spill costs (SPEC §3.5) and where the spill code of a node goes (§3.8).
//!
//! The save goes right after the node's last write, or after the end of
//! the outermost loop around that write that does not hold the next read;
//! a reload goes before each read group, a maximal run of consecutive
//! points that all read the node after the save. Spilling node `v` costs
//! `liveN(v) × spill_latency × (weight(save) + Σ weight(reload))`.

use super::liveness::{extend, Access, Node};
use crate::alloc::linear::Linear;

/// Where the spill code of one node goes.
pub(crate) struct SpillCode {
    /// The save goes right after this point.
    pub save_after: u32,
    /// The read groups after the save, closed point ranges in order.
    pub groups: Vec<(u32, u32)>,
}

/// The spill code of node `n` (accesses `acc`), or `None` when spilling
/// it relieves nothing: it is not read after its last write, no point
/// strictly between the save and its last read lies outside every read
/// group, or its interval from the def to the save is still the whole one.
pub(crate) fn spill_code(lin: &Linear, n: &Node, acc: &[Access]) -> Option<SpillCode> {
    let last_write = acc.iter().rev().find(|a| a.write)?.point;
    let next_read = acc.iter().find(|a| a.read && a.point > last_write)?.point;
    let save_after = (lin.nest(last_write).into_iter())
        .find(|&l| !lin.inside(l, next_read))
        .map_or(last_write, |l| lin.end[l]);
    let mut groups: Vec<(u32, u32)> = Vec::new();
    for a in acc.iter().filter(|a| a.read && a.point > save_after) {
        match groups.last_mut() {
            Some(g) if g.1 + 1 == a.point => g.1 = a.point,
            _ => groups.push((a.point, a.point)),
        }
    }
    let relieves = groups.len() > 1 || groups[0].0 > save_after + 1;
    let shorter = extend(lin, n.def, save_after) != (n.start, n.end);
    (relieves && shorter).then_some(SpillCode { save_after, groups })
}

/// The cost of spilling node `n` (accesses `acc`) in cycles, `None` (+∞)
/// when it is `pinned` (a spill temporary, or spilled already) or
/// spilling it relieves nothing.
pub(crate) fn cost(
    lin: &Linear,
    n: &Node,
    acc: &[Access],
    pinned: bool,
    latency: u64,
) -> Option<u64> {
    if pinned {
        return None;
    }
    let code = spill_code(lin, n, acc)?;
    let weight = (code.groups.iter())
        .map(|g| lin.weight(g.0))
        .fold(lin.weight(code.save_after), u64::saturating_add);
    Some(
        u64::from(n.banks)
            .saturating_mul(latency)
            .saturating_mul(weight),
    )
}
