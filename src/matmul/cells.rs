//! Physical PSUM cells for the legalizer (SPEC §4.3.3–4, §4.4).
//!
//! Physical PSUM is partitions × bytes, a tensor at `bank=B` occupying bytes
//! `B·2048 + offset`. The accesses of one program cut it into a coarse grid
//! ([`Grid`]: coordinate compression over every access boundary and every
//! bank boundary), so per-cell facts cost one slot per grid cell instead of
//! one per byte. Two sweeps compute the facts the legalizer needs:
//! [`forward`] (whose group a read still needs, and what was last written
//! under each group head) and [`live_in_zones`] (backward liveness: does a
//! `start` at a head wipe a value that is read later).

use super::groups::AccGroup;
use super::{flat_index, Trace};
use crate::arch::PSUM_BANK_SIZE;
use std::ops::Range;

/// A physical PSUM rectangle: partitions `[p0, p1)` × bytes `[x0, x1)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rect {
    /// First partition.
    pub p0: i64,
    /// One past the last partition.
    pub p1: i64,
    /// First physical byte (`bank·2048 + offset`).
    pub x0: i64,
    /// One past the last physical byte.
    pub x1: i64,
}

impl Rect {
    /// Whether every cell of `o` is in `self`.
    pub fn contains(&self, o: &Rect) -> bool {
        self.p0 <= o.p0 && o.p1 <= self.p1 && self.x0 <= o.x0 && o.x1 <= self.x1
    }

    /// Whether the two rectangles share at least one cell.
    pub fn overlaps(&self, o: &Rect) -> bool {
        self.p0 < o.p1 && o.p0 < self.p1 && self.x0 < o.x1 && o.x0 < self.x1
    }
}

/// The coordinate-compressed grid over physical PSUM.
pub(crate) struct Grid {
    pcuts: Vec<i64>,
    xcuts: Vec<i64>,
}

impl Grid {
    /// A grid whose cuts include every bound of `rects` and every bank boundary
    /// up to the last byte touched.
    pub fn new(rects: impl Iterator<Item = Rect> + Clone) -> Grid {
        let pcuts = distinct(rects.clone().flat_map(|r| [r.p0, r.p1]));
        let bank = i64::from(PSUM_BANK_SIZE);
        let top = rects.clone().map(|r| r.x0.max(r.x1)).max().unwrap_or(0);
        let banks = (0..=(top + bank - 1) / bank).map(|b| b * bank);
        let xcuts = distinct(rects.flat_map(|r| [r.x0, r.x1]).chain(banks));
        Grid { pcuts, xcuts }
    }

    /// Number of cells.
    pub fn len(&self) -> usize {
        self.pcuts.len().saturating_sub(1) * self.xcuts.len().saturating_sub(1)
    }

    fn span(cuts: &[i64], lo: i64, hi: i64) -> Range<usize> {
        let i0 = cuts.partition_point(|&c| c < lo);
        let i1 = cuts.partition_point(|&c| c < hi);
        i0..i1
    }

    /// Row and column index ranges of `r` (whose bounds are grid cuts).
    fn spans(&self, r: &Rect) -> (Range<usize>, Range<usize>) {
        (
            Self::span(&self.pcuts, r.p0, r.p1),
            Self::span(&self.xcuts, r.x0, r.x1),
        )
    }

    /// The cells of `r`.
    pub fn cells(&self, r: &Rect) -> impl Iterator<Item = usize> {
        let nx = self.xcuts.len().saturating_sub(1);
        let (ps, xs) = self.spans(r);
        ps.flat_map(move |p| xs.clone().map(move |x| p * nx + x))
    }

    /// The cells of `outer` that are not in `inner`.
    pub fn cells_outside(&self, outer: &Rect, inner: &Rect) -> impl Iterator<Item = usize> {
        let nx = self.xcuts.len().saturating_sub(1);
        let (ps, xs) = self.spans(outer);
        let (ips, ixs) = self.spans(inner);
        ps.flat_map(move |p| {
            let (ips, ixs) = (ips.clone(), ixs.clone());
            xs.clone()
                .filter(move |x| !(ips.contains(&p) && ixs.contains(x)))
                .map(move |x| p * nx + x)
        })
    }
}

/// The distinct values of `values`, ascending. Values of one PSUM program
/// lie in a small range, so a bitmap over it replaces a sort.
fn distinct(values: impl Iterator<Item = i64> + Clone) -> Vec<i64> {
    const DENSE: i64 = 1 << 20;
    let Some((lo, hi)) = values.clone().fold(None, |r, v| {
        Some(r.map_or((v, v), |(lo, hi)| (v.min(lo), v.max(hi))))
    }) else {
        return Vec::new();
    };
    if hi.saturating_sub(lo) >= DENSE {
        let mut out: Vec<i64> = values.collect();
        out.sort_unstable();
        out.dedup();
        return out;
    }
    let mut seen = vec![false; (hi - lo + 1) as usize];
    for v in values {
        seen[(v - lo) as usize] = true;
    }
    (lo..=hi).filter(|v| seen[(v - lo) as usize]).collect()
}

/// Facts from the forward sweep, indexed by group.
pub(crate) struct Forward {
    /// The last ordinal that reads a cell whose latest write (at that read)
    /// is a matmul of the group.
    pub last_needed: Vec<Option<usize>>,
    /// The latest ordinal before the group's head that wrote any of the
    /// group's cells.
    pub last_write_before_head: Vec<Option<usize>>,
}

/// "No ordinal" / "no group" in the legalizer's `u32` tables.
pub(crate) const NONE: u32 = u32::MAX;

/// Forward sweep over `trace`: `group_of[ord]` is the group of a matmul
/// ordinal ([`NONE`] if none), `by_head` the groups ordered by head.
pub(crate) fn forward(
    trace: &Trace,
    grid: &Grid,
    group_of: &[u32],
    groups: &[AccGroup],
    by_head: &[usize],
) -> Forward {
    let mut latest = vec![NONE; grid.len()];
    let mut last_needed = vec![None; groups.len()];
    let mut last_write_before_head = vec![None; groups.len()];
    let mut heads = by_head.iter().copied().peekable();
    for ord in 0..trace.len() {
        if let Some(g) = heads.next_if(|&g| groups[g].head() == ord) {
            last_write_before_head[g] = grid
                .cells(&groups[g].rect())
                .filter_map(|c| (latest[c] != NONE).then_some(latest[c] as usize))
                .max();
        }
        for r in trace.reads.get(ord) {
            for c in grid.cells(&r.rect) {
                if latest[c] == NONE {
                    continue;
                }
                let g = group_of[latest[c] as usize];
                if g != NONE {
                    last_needed[g as usize] = Some(ord);
                }
            }
        }
        if let Some(w) = trace.write(ord) {
            let o = flat_index(ord);
            for c in grid.cells(&w.rect) {
                latest[c] = o;
            }
        }
    }
    Forward {
        last_needed,
        last_write_before_head,
    }
}

/// Backward liveness sweep asking, for each group of `queries` (ascending
/// by head): just after the head, does any cell of the group's zone
/// ([`AccGroup::zone`]) outside its own cells hold a value that is read
/// later? `accumulates[ord]` says the ordinal's write reads its destination
/// first (a matmul continuing a run, or opening a run onto an init).
pub(crate) fn live_in_zones(
    trace: &Trace,
    grid: &Grid,
    accumulates: &[bool],
    groups: &[AccGroup],
    queries: &[usize],
) -> Vec<bool> {
    let mut live = vec![false; grid.len()];
    let mut answer = vec![false; queries.len()];
    let mut pending = queries.iter().enumerate().rev().peekable();
    for ord in (0..trace.len()).rev() {
        if let Some((q, &g)) = pending.next_if(|(_, &g)| groups[g].head() == ord) {
            let g = &groups[g];
            answer[q] = grid.cells_outside(&g.zone(), &g.rect()).any(|c| live[c]);
        }
        if let Some(w) = trace.write(ord) {
            let keep = accumulates[ord];
            for c in grid.cells(&w.rect) {
                live[c] = keep;
            }
        }
        for c in trace
            .reads
            .get(ord)
            .iter()
            .flat_map(|r| grid.cells(&r.rect))
        {
            live[c] = true;
        }
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rect(p0: i64, p1: i64, x0: i64, x1: i64) -> Rect {
        Rect { p0, p1, x0, x1 }
    }

    #[test]
    fn grid_cuts_on_accesses_and_banks() {
        let g = Grid::new([rect(0, 64, 0, 1024), rect(32, 128, 2048, 4096)].into_iter());
        assert_eq!(g.pcuts, vec![0, 32, 64, 128]);
        assert_eq!(g.xcuts, vec![0, 1024, 2048, 4096]);
        assert_eq!(g.len(), 9);
        let cells: Vec<_> = g.cells(&rect(0, 64, 0, 2048)).collect();
        assert_eq!(cells, vec![0, 1, 3, 4]);
        let outside: Vec<_> = g
            .cells_outside(&rect(0, 64, 0, 2048), &rect(0, 64, 0, 1024))
            .collect();
        assert_eq!(outside, vec![1, 4]);
    }
}
