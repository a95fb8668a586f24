//! A piecewise-constant map over a rectangle of cells (partitions × bytes),
//! the storage of the verifier's abstract states (SPEC §5): the symbolic
//! simulator's values, the checker's symbols, the run tracker's events.
//!
//! The map is a list of row **bands** (maximal runs of partitions), each a
//! list of **runs** (maximal runs of bytes holding one value). An update
//! splits bands and runs at the edges of its rectangle and merges equal
//! neighbours again, so a map costs memory in proportion to the distinct
//! pieces it holds and an operation time in proportion to the pieces it
//! touches — not to the cells (a whole-tensor write of 128 × 8192 bytes is
//! one piece).

/// A rectangle of cells: partitions `[p0, p1)` × bytes `[x0, x1)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rect {
    /// First partition.
    pub p0: u32,
    /// One past the last partition.
    pub p1: u32,
    /// First byte.
    pub x0: u32,
    /// One past the last byte.
    pub x1: u32,
}

impl Rect {
    /// The rectangle `[p0, p1) × [x0, x1)`.
    pub(crate) fn new(p0: u32, p1: u32, x0: u32, x1: u32) -> Rect {
        Rect { p0, p1, x0, x1 }
    }

    /// Whether it holds no cell.
    pub(crate) fn is_empty(&self) -> bool {
        self.p0 >= self.p1 || self.x0 >= self.x1
    }
}

#[derive(Clone, Debug)]
struct Band<T> {
    /// First partition (the band ends where the next begins).
    p0: u32,
    /// `(first byte, value)`, sorted; the first run starts at byte 0.
    runs: Vec<(u32, T)>,
}

/// A map from every cell of `[0, height) × [0, width)` to a `T`.
#[derive(Clone, Debug)]
pub(crate) struct RectMap<T> {
    height: u32,
    width: u32,
    bands: Vec<Band<T>>,
}

impl<T: Copy + PartialEq> RectMap<T> {
    /// Every cell holds `init`.
    pub(crate) fn new(height: u32, width: u32, init: T) -> Self {
        RectMap {
            height,
            width,
            bands: vec![Band {
                p0: 0,
                runs: vec![(0, init)],
            }],
        }
    }

    /// Number of pieces (runs over all bands), for tests and statistics.
    #[cfg(test)]
    pub(crate) fn pieces(&self) -> usize {
        self.bands.iter().map(|b| b.runs.len()).sum()
    }

    fn band_end(&self, i: usize) -> u32 {
        self.bands.get(i + 1).map_or(self.height, |b| b.p0)
    }

    /// The index of the band holding partition `p`.
    fn band_at(&self, p: u32) -> usize {
        self.bands.partition_point(|b| b.p0 <= p) - 1
    }

    /// Calls `f(rect, value)` for every piece of `r` (clipped to the map),
    /// band by band from the top, left to right within a band.
    pub(crate) fn visit(&self, r: Rect, mut f: impl FnMut(Rect, &T)) {
        let r = self.clip(r);
        if r.is_empty() {
            return;
        }
        let mut bi = self.band_at(r.p0);
        while bi < self.bands.len() && self.bands[bi].p0 < r.p1 {
            let b = &self.bands[bi];
            let (q0, q1) = (b.p0.max(r.p0), self.band_end(bi).min(r.p1));
            let mut ri = b.runs.partition_point(|run| run.0 <= r.x0) - 1;
            while ri < b.runs.len() && b.runs[ri].0 < r.x1 {
                let end = b.runs.get(ri + 1).map_or(self.width, |n| n.0);
                let x0 = b.runs[ri].0.max(r.x0);
                f(Rect::new(q0, q1, x0, end.min(r.x1)), &b.runs[ri].1);
                ri += 1;
            }
            bi += 1;
        }
    }

    fn clip(&self, r: Rect) -> Rect {
        Rect::new(r.p0, r.p1.min(self.height), r.x0, r.x1.min(self.width))
    }

    /// Splits the band holding `p` so that a band starts at `p`; returns its index.
    fn split_band(&mut self, p: u32) -> usize {
        if p >= self.height {
            return self.bands.len();
        }
        let i = self.band_at(p);
        if self.bands[i].p0 == p {
            return i;
        }
        let runs = self.bands[i].runs.clone();
        self.bands.insert(i + 1, Band { p0: p, runs });
        i + 1
    }

    /// Sets every cell of `r` to `v`.
    pub(crate) fn set(&mut self, r: Rect, v: T) {
        self.update(r, |_, _| v);
    }

    /// Replaces the value `x` of every piece of `r` by `f(rect, x)`, the
    /// rectangle being the piece's cells (clipped to `r`).
    pub(crate) fn update(&mut self, r: Rect, mut f: impl FnMut(Rect, &T) -> T) {
        let r = self.clip(r);
        if r.is_empty() {
            return;
        }
        let b0 = self.split_band(r.p0);
        let b1 = self.split_band(r.p1);
        for bi in b0..b1 {
            let (q0, q1) = (self.bands[bi].p0, self.band_end(bi));
            let width = self.width;
            let runs = &mut self.bands[bi].runs;
            let lo = split_run(runs, r.x0);
            let hi = if r.x1 >= width {
                runs.len()
            } else {
                split_run(runs, r.x1)
            };
            for i in lo..hi {
                let end = runs.get(i + 1).map_or(width, |n| n.0);
                let rect = Rect::new(q0, q1, runs[i].0, end);
                runs[i].1 = f(rect, &runs[i].1);
            }
            merge_runs(runs, lo.saturating_sub(1), (hi + 1).min(runs.len()));
        }
        // Merge equal neighbouring bands from the band above `r` to the one below.
        let (lo, hi) = (b0.saturating_sub(1), (b1 + 1).min(self.bands.len()));
        let mut keep = lo;
        for i in lo + 1..hi {
            if self.bands[i].runs == self.bands[keep].runs {
                self.bands[i].runs.clear();
            } else {
                keep = i;
            }
        }
        let mut i = lo + 1;
        let mut end = hi;
        while i < end {
            if self.bands[i].runs.is_empty() {
                self.bands.remove(i);
                end -= 1;
            } else {
                i += 1;
            }
        }
    }
}

/// Splits the run holding byte `x` so that a run starts at `x`; returns its index.
fn split_run<T: Copy>(runs: &mut Vec<(u32, T)>, x: u32) -> usize {
    let i = runs.partition_point(|r| r.0 <= x) - 1;
    if runs[i].0 == x {
        return i;
    }
    let v = runs[i].1;
    runs.insert(i + 1, (x, v));
    i + 1
}

/// Merges equal neighbouring runs among `runs[lo..hi]`.
fn merge_runs<T: PartialEq>(runs: &mut Vec<(u32, T)>, lo: usize, hi: usize) {
    if hi <= lo + 1 {
        return;
    }
    let mut w = lo;
    for r in lo + 1..hi {
        if runs[r].1 != runs[w].1 {
            w += 1;
            runs.swap(w, r);
        }
    }
    runs.drain(w + 1..hi);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(m: &RectMap<u32>, r: Rect) -> Vec<(Rect, u32)> {
        let mut out = Vec::new();
        m.visit(r, |rect, &v| out.push((rect, v)));
        out
    }

    #[test]
    fn writes_split_and_merge_again() {
        let mut m = RectMap::new(128, 4096, 0u32);
        m.set(Rect::new(0, 128, 1024, 2048), 7);
        assert_eq!(m.pieces(), 3);
        m.set(Rect::new(0, 64, 0, 4096), 9);
        assert_eq!(
            pieces(&m, Rect::new(0, 128, 0, 4096)),
            vec![
                (Rect::new(0, 64, 0, 4096), 9),
                (Rect::new(64, 128, 0, 1024), 0),
                (Rect::new(64, 128, 1024, 2048), 7),
                (Rect::new(64, 128, 2048, 4096), 0),
            ]
        );
        // Rewriting the lower band as the upper one merges the two bands.
        m.set(Rect::new(64, 128, 0, 4096), 9);
        assert_eq!(m.pieces(), 1);
        assert_eq!(
            pieces(&m, Rect::new(10, 20, 100, 200)),
            vec![(Rect::new(10, 20, 100, 200), 9)]
        );
    }

    #[test]
    fn updates_see_each_piece_and_clip() {
        let mut m = RectMap::new(4, 16, 1u32);
        m.set(Rect::new(0, 4, 8, 16), 2);
        let mut seen = Vec::new();
        m.update(Rect::new(1, 3, 4, 12), |r, &v| {
            seen.push((r, v));
            v * 10
        });
        assert_eq!(
            seen,
            vec![(Rect::new(1, 3, 4, 8), 1), (Rect::new(1, 3, 8, 12), 2)]
        );
        assert_eq!(
            pieces(&m, Rect::new(0, 4, 0, 16)),
            vec![
                (Rect::new(0, 1, 0, 8), 1),
                (Rect::new(0, 1, 8, 16), 2),
                (Rect::new(1, 3, 0, 4), 1),
                (Rect::new(1, 3, 4, 8), 10),
                (Rect::new(1, 3, 8, 12), 20),
                (Rect::new(1, 3, 12, 16), 2),
                (Rect::new(3, 4, 0, 8), 1),
                (Rect::new(3, 4, 8, 16), 2),
            ]
        );
        // Out-of-range parts are ignored; an empty rectangle does nothing.
        m.set(Rect::new(0, 9, 0, 99), 5);
        m.set(Rect::new(2, 2, 0, 16), 6);
        assert_eq!(
            pieces(&m, Rect::new(0, 9, 0, 99)),
            vec![(Rect::new(0, 4, 0, 16), 5)]
        );
    }
}
