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

use super::lists::flat_index;
use super::trace::{Rect, Trace};
use crate::arch::PSUM_BANK_SIZE;
use std::ops::Range;

/// One axis of the grid: its cuts, ascending, and for a dense range of
/// values the number of cuts below each (so a bound's position is one load).
struct Axis {
    cuts: Vec<i64>,
    /// The first value `below` covers.
    lo: i64,
    /// `below[v − lo]`: how many cuts are less than `v`; empty when the
    /// values span too wide a range.
    below: Vec<u32>,
}

impl Axis {
    /// The axis cut at every value of `values`. Values of one PSUM program
    /// lie in a small range, so a bitmap over it replaces a sort.
    fn new(values: impl Iterator<Item = i64> + Clone) -> Axis {
        const DENSE: i64 = 1 << 20;
        let range = values.clone().fold(None, |r, v| {
            Some(r.map_or((v, v), |(lo, hi): (i64, i64)| (v.min(lo), v.max(hi))))
        });
        let Some((lo, hi)) = range.filter(|&(lo, hi)| hi.saturating_sub(lo) < DENSE) else {
            let mut cuts: Vec<i64> = values.collect();
            cuts.sort_unstable();
            cuts.dedup();
            return Axis {
                cuts,
                lo: 0,
                below: Vec::new(),
            };
        };
        let mut seen = vec![false; (hi - lo + 1) as usize];
        for v in values {
            seen[(v - lo) as usize] = true;
        }
        let mut cuts = Vec::new();
        let mut below = Vec::with_capacity(seen.len());
        for (v, &s) in (lo..).zip(&seen) {
            below.push(flat_index(cuts.len()));
            if s {
                cuts.push(v);
            }
        }
        Axis { cuts, lo, below }
    }

    /// Number of cells along the axis.
    fn cells(&self) -> usize {
        self.cuts.len().saturating_sub(1)
    }

    /// How many cuts are less than `v`.
    fn position(&self, v: i64) -> usize {
        let dense = (v.checked_sub(self.lo))
            .and_then(|d| usize::try_from(d).ok())
            .and_then(|d| self.below.get(d));
        match dense {
            Some(&i) => i as usize,
            None => self.cuts.partition_point(|&c| c < v),
        }
    }

    /// The cells between the cuts `lo` and `hi`.
    fn span(&self, lo: i64, hi: i64) -> Range<usize> {
        self.position(lo)..self.position(hi)
    }
}

/// The coordinate-compressed grid over physical PSUM.
pub(crate) struct Grid {
    p: Axis,
    x: Axis,
}

impl Grid {
    /// A grid whose cuts include every bound of `rects` and every bank boundary
    /// up to the last byte touched.
    pub(crate) fn new(rects: impl Iterator<Item = Rect> + Clone) -> Grid {
        let p = Axis::new(rects.clone().flat_map(|r| [r.p0, r.p1]));
        let bank = i64::from(PSUM_BANK_SIZE);
        let top = rects.clone().map(|r| r.x0.max(r.x1)).max().unwrap_or(0);
        let banks = (0..=(top + bank - 1) / bank).map(|b| b * bank);
        let x = Axis::new(rects.flat_map(|r| [r.x0, r.x1]).chain(banks));
        Grid { p, x }
    }

    /// Number of cells.
    pub(crate) fn len(&self) -> usize {
        self.p.cells() * self.x.cells()
    }

    /// Row and column index ranges of `r` (whose bounds are grid cuts).
    fn spans(&self, r: &Rect) -> (Range<usize>, Range<usize>) {
        (self.p.span(r.p0, r.p1), self.x.span(r.x0, r.x1))
    }

    /// The cells of `r`.
    pub(crate) fn cells(&self, r: &Rect) -> impl Iterator<Item = usize> {
        let nx = self.x.cells();
        let (ps, xs) = self.spans(r);
        ps.flat_map(move |p| xs.clone().map(move |x| p * nx + x))
    }

    /// The cells of `outer` that are not in `inner`.
    pub(crate) fn cells_outside(&self, outer: &Rect, inner: &Rect) -> impl Iterator<Item = usize> {
        let nx = self.x.cells();
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

/// What the sweeps need of an accumulation group (implemented by
/// [`AccGroup`](super::AccGroup)).
pub(crate) trait GroupCells {
    /// The ordinal of the group's first matmul.
    fn head(&self) -> usize;
    /// The cells the group's matmuls write.
    fn rect(&self) -> Rect;
    /// The cells a `start` at the group's head zeroes.
    fn zone(&self) -> Rect;
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
    groups: &[impl GroupCells],
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
/// ([`GroupCells::zone`]) outside its own cells hold a value that is read
/// later? `accumulates[ord]` says the ordinal's write reads its destination
/// first (a matmul continuing a run, or opening a run onto an init).
pub(crate) fn live_in_zones(
    trace: &Trace,
    grid: &Grid,
    accumulates: &[bool],
    groups: &[impl GroupCells],
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
        assert_eq!(g.p.cuts, vec![0, 32, 64, 128]);
        assert_eq!(g.x.cuts, vec![0, 1024, 2048, 4096]);
        assert_eq!(
            (g.p.position(31), g.p.position(32), g.p.position(200)),
            (1, 1, 4)
        );
        assert_eq!(g.len(), 9);
        let cells: Vec<_> = g.cells(&rect(0, 64, 0, 2048)).collect();
        assert_eq!(cells, vec![0, 1, 3, 4]);
        let outside: Vec<_> = g
            .cells_outside(&rect(0, 64, 0, 2048), &rect(0, 64, 0, 1024))
            .collect();
        assert_eq!(outside, vec![1, 4]);
    }

    #[test]
    fn a_wide_axis_is_searched() {
        let a = Axis::new([1 << 30, 5, 0, 5].into_iter());
        assert_eq!(a.cuts, vec![0, 5, 1 << 30]);
        assert!(a.below.is_empty());
        let at: Vec<usize> = [-1, 0, 5, 6, 1 << 30, i64::MAX]
            .map(|v| a.position(v))
            .to_vec();
        assert_eq!(at, [0, 0, 1, 2, 2, 3]);
        let d = Axis::new([7, 3, 3].into_iter());
        assert_eq!(
            (d.cuts.clone(), d.below.clone()),
            (vec![3, 7], vec![0, 1, 1, 1, 1])
        );
        let at: Vec<usize> = [i64::MIN, 3, 4, 7, 8].map(|v| d.position(v)).to_vec();
        assert_eq!(at, [0, 0, 1, 1, 2]);
    }
}
