//! Where everything of the bank timeline goes (SPEC §8): the x scale and its
//! binning, the pressure chart's columns, the vertical bands, which bars are
//! drawn on their own and which merge into per-lane runs, the spill-mark
//! groups, the clusters and loops wide enough to outline, the legend's flow
//! and the footnotes. Each piece is a small pure function of the
//! [`Timeline`]; [`Layout`] is their composition, and `svg` only draws it.
//!
//! Bars, clusters and loops narrower than [`MIN_PX`] pixels are not drawn one
//! by one: bars are merged per bank lane into grey runs, clusters and loops are
//! counted in a footnote. Spill marks of one kind on one bank closer than
//! [`MARK_GAP`] pixels become one strip.

use super::style::{num, Key};
use super::{BarRole, SpillKind, Timeline, MAX_COLUMNS};

/// Widest plot area, in pixels.
const MAX_PLOT_W: f64 = 1180.0;
/// Narrowest plot area, in pixels.
const MIN_PLOT_W: f64 = 640.0;
/// Width of one program point while the plot is narrower than [`MAX_PLOT_W`].
const POINT_W: f64 = 64.0;
/// Spill marks of one kind and bank closer than this many pixels are drawn as one strip.
const MARK_GAP: f64 = 16.0;
/// Narrowest bar, cluster or loop drawn on its own.
const MIN_PX: f64 = 3.0;
/// Loops nested deeper than this are not bracketed.
const MAX_LOOP_DEPTH: u32 = 5;
/// Lanes drawn at most; bars above are clipped.
const MAX_LANES: u32 = 64;
/// Horizontal and vertical inset of a cluster outline in its lanes: inside
/// the bars it covers, so it does not hide their edges.
pub(super) const CLUSTER_INSET: (f64, f64) = (3.0, 6.0);
/// Height of one bank lane.
pub(super) const LANE_H: f64 = 34.0;
/// Height of the pressure chart.
pub(super) const PRESSURE_H: f64 = 110.0;
/// Height of one row of block and loop brackets.
pub(super) const STRIP_ROW_H: f64 = 16.0;
/// Left margin (bank and pressure labels).
pub(super) const ML: f64 = 84.0;
/// Right margin (bank-count label).
const MR: f64 = 84.0;
/// Top of the pressure chart.
pub(super) const CHART_TOP: f64 = 58.0;
/// Height of one legend or footnote row.
pub(super) const ROW_H: f64 = 22.0;
/// Estimated advance of one character at 11 px, for "does the label fit".
pub(super) const CHAR_W: f64 = 6.6;

/// The x axis: program points, their binning into columns, and pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Scale {
    /// Program points on the axis (at least 1).
    pub(super) n: u32,
    /// Points per column.
    pub(super) bin: u32,
    /// Number of columns.
    pub(super) cols: u32,
    /// Pixels per point.
    pub(super) sx: f64,
    /// Width of the plot area.
    pub(super) plot_w: f64,
}

impl Scale {
    /// The scale of `num_points` points: [`POINT_W`] pixels each within
    /// [`MIN_PLOT_W`]..=[`MAX_PLOT_W`], at most [`MAX_COLUMNS`] columns.
    pub(super) fn new(num_points: u32) -> Scale {
        let n = num_points.max(1);
        let bin = n.div_ceil(MAX_COLUMNS);
        let cols = n.div_ceil(bin);
        let plot_w = (f64::from(n) * POINT_W).clamp(MIN_PLOT_W, MAX_PLOT_W);
        let sx = plot_w / f64::from(n);
        Scale {
            n,
            bin,
            cols,
            sx,
            plot_w,
        }
    }

    /// x of the left edge of point `p`.
    pub(super) fn x(&self, p: u32) -> f64 {
        ML + f64::from(p) * self.sx
    }

    /// x of the middle of point `p`.
    pub(super) fn cx(&self, p: u32) -> f64 {
        self.x(p) + self.sx / 2.0
    }

    /// x of the left edge of column `c`.
    pub(super) fn col_x(&self, c: u32) -> f64 {
        self.x(self.col_start(c))
    }

    /// First point of column `c` (`n` for the column past the last).
    pub(super) fn col_start(&self, c: u32) -> u32 {
        (u64::from(c) * u64::from(self.bin)).min(u64::from(self.n)) as u32
    }

    /// The closed range `start..=end` cut at the last point; `None` when
    /// nothing of it is on the axis.
    fn clip(&self, start: u32, end: u32) -> Option<(u32, u32)> {
        let end = end.min(self.n - 1);
        (start <= end).then_some((start, end))
    }

    /// Width in pixels of the points `start..=end`.
    fn width(&self, start: u32, end: u32) -> f64 {
        f64::from(end - start + 1) * self.sx
    }

    /// Whether the points `start..=end` are on the axis and at least
    /// [`MIN_PX`] wide.
    fn shows(&self, start: u32, end: u32) -> bool {
        self.clip(start, end)
            .is_some_and(|(s, e)| self.width(s, e) >= MIN_PX)
    }

    /// The maximum of `values` over each column (missing values count as 0);
    /// empty when `values` is.
    pub(super) fn column_max(&self, values: &[u32]) -> Vec<u32> {
        if values.is_empty() {
            return Vec::new();
        }
        (0..self.cols)
            .map(|c| {
                let lo = self.col_start(c) as usize;
                let hi = (self.col_start(c + 1) as usize).min(values.len());
                values
                    .get(lo..hi)
                    .map_or(0, |s| s.iter().copied().max().unwrap_or(0))
            })
            .collect()
    }
}

/// The pressure chart: both curves per column and the top of its y axis.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Pressure {
    /// Live banks before allocation, per column (empty when not drawn).
    pub(super) before: Vec<u32>,
    /// Banks in use after allocation, per column.
    pub(super) after: Vec<u32>,
    /// Top of the y axis: one above the highest value and the bank count,
    /// so the bank-count line never sits on the frame.
    pub(super) ymax: u32,
}

impl Pressure {
    /// The curves of `t` binned by `scale`.
    pub(super) fn new(t: &Timeline, scale: &Scale) -> Pressure {
        let before = scale.column_max(&t.pressure_before);
        let after = scale.column_max(&t.pressure_after);
        let ymax = before
            .iter()
            .chain(&after)
            .copied()
            .max()
            .unwrap_or(0)
            .max(t.num_banks)
            + 1;
        Pressure {
            before,
            after,
            ymax,
        }
    }
}

/// Bank lanes drawn: every bank and every bank a tensor reaches, between 1
/// and [`MAX_LANES`].
pub(super) fn lane_count(t: &Timeline) -> u32 {
    let top = t
        .tensors
        .iter()
        .map(|b| b.bank.saturating_add(b.banks))
        .max()
        .unwrap_or(0);
    t.num_banks.max(top).clamp(1, MAX_LANES)
}

/// A bar drawn on its own: index into `Timeline::tensors` and clipped geometry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Bar {
    pub(super) idx: usize,
    pub(super) start: u32,
    pub(super) end: u32,
    pub(super) bank: u32,
    pub(super) banks: u32,
}

/// Narrow bars merged into one grey run of columns on one lane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Run {
    pub(super) lane: u32,
    pub(super) col_lo: u32,
    pub(super) col_hi: u32,
    /// Tensors that start in the run.
    pub(super) tensors: u32,
}

/// The tensors as drawn: wide bars on their own, narrow ones merged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Bars {
    pub(super) bars: Vec<Bar>,
    pub(super) runs: Vec<Run>,
    /// Tensors merged into runs.
    pub(super) merged: u32,
}

/// Splits the tensors on `lanes` lanes into bars at least [`MIN_PX`] wide
/// and per-lane runs of the columns the narrower ones cover.
pub(super) fn bars_and_runs(t: &Timeline, scale: &Scale, lanes: u32) -> Bars {
    let cols = scale.cols as usize;
    let mut bars = Vec::new();
    let mut occ = vec![vec![0i64; cols + 1]; lanes as usize];
    let mut starts = vec![vec![0u32; cols]; lanes as usize];
    let mut merged = 0;
    for (idx, b) in t.tensors.iter().enumerate() {
        let Some((start, end)) = scale.clip(b.start, b.end) else {
            continue;
        };
        if b.bank >= lanes || b.banks == 0 {
            continue;
        }
        let banks = b.banks.min(lanes - b.bank);
        if scale.width(start, end) >= MIN_PX {
            bars.push(Bar {
                idx,
                start,
                end,
                bank: b.bank,
                banks,
            });
            continue;
        }
        merged += 1;
        let (c0, c1) = ((start / scale.bin) as usize, (end / scale.bin) as usize);
        for lane in b.bank..b.bank + banks {
            occ[lane as usize][c0] += 1;
            occ[lane as usize][c1 + 1] -= 1;
            starts[lane as usize][c0] += 1;
        }
    }
    let mut runs = Vec::new();
    for lane in 0..lanes {
        let mut live = 0;
        let mut open: Option<Run> = None;
        for c in 0..scale.cols {
            live += occ[lane as usize][c as usize];
            let s = starts[lane as usize][c as usize];
            match (&mut open, live > 0) {
                (Some(r), true) => {
                    r.col_hi = c;
                    r.tensors += s;
                }
                (Some(_), false) => runs.extend(open.take()),
                (None, true) => {
                    open = Some(Run {
                        lane,
                        col_lo: c,
                        col_hi: c,
                        tensors: s,
                    })
                }
                (None, false) => {}
            }
        }
        runs.extend(open);
    }
    Bars { bars, runs, merged }
}

/// Spill marks of one kind on one bank closer than [`MARK_GAP`] pixels,
/// drawn as one triangle (`count == 1`) or one strip.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Mark {
    /// Index of the first mark into `Timeline::spills`.
    pub(super) first: usize,
    /// Point of the last mark.
    pub(super) last_point: u32,
    pub(super) count: u32,
}

/// The spill marks on the axis and on `lanes` lanes, grouped by bank and
/// kind in order of point.
pub(super) fn mark_groups(t: &Timeline, scale: &Scale, lanes: u32) -> Vec<Mark> {
    let mut order: Vec<usize> = (0..t.spills.len())
        .filter(|&i| t.spills[i].point < scale.n && t.spills[i].bank < lanes)
        .collect();
    order.sort_by_key(|&i| {
        let m = &t.spills[i];
        (m.bank, m.kind, m.point, i)
    });
    let mut marks: Vec<Mark> = Vec::new();
    for (k, &i) in order.iter().enumerate() {
        let m = &t.spills[i];
        let joins = k > 0 && {
            let prev = &t.spills[order[k - 1]];
            (prev.bank, prev.kind) == (m.bank, m.kind)
                && f64::from(m.point - prev.point) * scale.sx < MARK_GAP
        };
        match marks.last_mut() {
            Some(last) if joins => {
                last.last_point = m.point;
                last.count += 1;
            }
            _ => marks.push(Mark {
                first: i,
                last_point: m.point,
                count: 1,
            }),
        }
    }
    marks
}

/// Which items of a list are outlined, and how many are too narrow (or too
/// deep) to be.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Visible {
    /// Indices of the items drawn.
    pub(super) shown: Vec<usize>,
    /// Items counted in the footnote instead.
    pub(super) hidden: u32,
}

/// The clusters wide enough to outline; a cluster wide enough but below
/// the lanes is neither shown nor counted.
pub(super) fn visible_clusters(t: &Timeline, scale: &Scale, lanes: u32) -> Visible {
    let mut v = Visible::default();
    for (i, c) in t.clusters.iter().enumerate() {
        if scale.shows(c.start, c.end) && c.bank_lo <= c.bank_hi {
            if c.bank_lo < lanes {
                v.shown.push(i);
            }
        } else {
            v.hidden += 1;
        }
    }
    v
}

/// The loops wide enough and shallow enough to bracket.
pub(super) fn visible_loops(t: &Timeline, scale: &Scale) -> Visible {
    let mut v = Visible::default();
    for (i, lp) in t.loops.iter().enumerate() {
        if scale.shows(lp.header, lp.end) && lp.depth < MAX_LOOP_DEPTH {
            v.shown.push(i);
        } else {
            v.hidden += 1;
        }
    }
    v
}

/// The vertical bands: pressure chart, bracket strip, bank lanes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Bands {
    pub(super) chart_bottom: f64,
    pub(super) strip_top: f64,
    pub(super) lanes_top: f64,
    pub(super) lanes_bottom: f64,
}

impl Bands {
    /// The bands with `strip_rows` rows of brackets and `lanes` lanes.
    pub(super) fn new(strip_rows: u32, lanes: u32) -> Bands {
        let chart_bottom = CHART_TOP + PRESSURE_H;
        let strip_top = chart_bottom + 12.0;
        let lanes_top = strip_top + f64::from(strip_rows) * STRIP_ROW_H + 2.0;
        let lanes_bottom = lanes_top + f64::from(lanes) * LANE_H;
        Bands {
            chart_bottom,
            strip_top,
            lanes_top,
            lanes_bottom,
        }
    }

    /// y of the top of bank lane `bank`.
    pub(super) fn lane_y(&self, bank: u32) -> f64 {
        self.lanes_top + f64::from(bank) * LANE_H
    }
}

/// Rows of the bracket strip: one for blocks and one per depth of the
/// deepest loop shown.
pub(super) fn strip_rows(t: &Timeline, loops: &Visible) -> u32 {
    1 + loops
        .shown
        .iter()
        .map(|&i| t.loops[i].depth + 1)
        .max()
        .unwrap_or(0)
}

/// The legend entries `t` needs, in drawing order; `merged` is the number
/// of tensors merged into runs.
pub(super) fn wanted_keys(t: &Timeline, merged: u32) -> Vec<Key> {
    let mut wanted = vec![Key::Tensor];
    let any_role = |f: fn(&BarRole) -> bool| t.tensors.iter().any(|b| f(&b.role));
    if any_role(|r| *r == BarRole::Spilled) {
        wanted.push(Key::Spilled);
    }
    if any_role(|r| matches!(r, BarRole::Reload { .. })) {
        wanted.push(Key::Reload);
    }
    if t.spills.iter().any(|m| m.kind == SpillKind::Save) {
        wanted.push(Key::Save);
    }
    if t.spills.iter().any(|m| m.kind == SpillKind::Reload) {
        wanted.push(Key::ReloadMark);
    }
    if merged > 0 {
        wanted.push(Key::Merged);
    }
    if !t.clusters.is_empty() {
        wanted.push(Key::Cluster);
    }
    if t.reuse.iter().any(|a| !a.avoidable) {
        wanted.push(Key::Reuse);
    }
    if t.reuse.iter().any(|a| a.avoidable) {
        wanted.push(Key::Avoidable);
    }
    if !t.loops.is_empty() {
        wanted.push(Key::Loop);
    }
    wanted.push(Key::After);
    if !t.pressure_before.is_empty() {
        wanted.push(Key::Before);
    }
    wanted.push(Key::BankLine);
    wanted
}

/// The legend flowed into rows of a picture `width` wide from `top`.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Legend {
    /// Each entry with the top left corner of its swatch.
    pub(super) keys: Vec<(Key, f64, f64)>,
    /// Top of the last row.
    pub(super) last_row: f64,
}

/// Flows `keys` left to right from ([`ML`], `top`), starting a new row when
/// an entry would pass `width - 8`.
pub(super) fn legend(keys: Vec<Key>, width: f64, top: f64) -> Legend {
    let mut placed = Vec::with_capacity(keys.len());
    let (mut x, mut y) = (ML, top);
    for k in keys {
        let w = 30.0 + k.text().len() as f64 * CHAR_W + 18.0;
        if x + w > width - 8.0 && x > ML {
            x = ML;
            y += ROW_H;
        }
        placed.push((k, x, y));
        x += w;
    }
    Legend {
        keys: placed,
        last_row: y,
    }
}

/// The footnotes: binning, merged tensors, and clusters and loops not
/// outlined.
pub(super) fn notes(bin: u32, merged: u32, hidden_clusters: u32, hidden_loops: u32) -> Vec<String> {
    let mut notes = Vec::new();
    if bin > 1 {
        notes.push(format!(
            "binned: {bin} points per column; the pressure curves show each column's maximum"
        ));
    }
    if merged > 0 {
        notes.push(format!(
            "{merged} tensors narrower than {} px are merged per bank lane (grey)",
            num(MIN_PX)
        ));
    }
    if hidden_clusters + hidden_loops > 0 {
        notes.push(format!(
            "not outlined (too narrow or too deep): {hidden_clusters} clusters, {hidden_loops} loops"
        ));
    }
    notes
}

/// Where everything goes: the composition of the pieces above.
pub(super) struct Layout {
    pub(super) scale: Scale,
    pub(super) pressure: Pressure,
    pub(super) bands: Bands,
    pub(super) lanes: u32,
    pub(super) num_banks: u32,
    pub(super) bars: Bars,
    pub(super) marks: Vec<Mark>,
    /// Indices of the clusters outlined.
    pub(super) clusters: Vec<usize>,
    /// Indices of the loops bracketed.
    pub(super) loops: Vec<usize>,
    pub(super) keys: Vec<(Key, f64, f64)>,
    pub(super) notes: Vec<String>,
    pub(super) notes_top: f64,
    pub(super) width: f64,
    pub(super) height: f64,
}

impl Layout {
    /// The layout of `t`.
    pub(super) fn new(t: &Timeline) -> Layout {
        let scale = Scale::new(t.num_points);
        let lanes = lane_count(t);
        let pressure = Pressure::new(t, &scale);
        let bars = bars_and_runs(t, &scale, lanes);
        let marks = mark_groups(t, &scale, lanes);
        let clusters = visible_clusters(t, &scale, lanes);
        let loops = visible_loops(t, &scale);
        let bands = Bands::new(strip_rows(t, &loops), lanes);
        let width = ML + scale.plot_w + MR;
        let legend = legend(
            wanted_keys(t, bars.merged),
            width,
            bands.lanes_bottom + 52.0,
        );
        let notes = notes(scale.bin, bars.merged, clusters.hidden, loops.hidden);
        let notes_top = legend.last_row + ROW_H;
        let height = notes_top + ROW_H * notes.len() as f64 + 6.0;
        Layout {
            scale,
            pressure,
            bands,
            lanes,
            num_banks: t.num_banks,
            bars,
            marks,
            clusters: clusters.shown,
            loops: loops.shown,
            keys: legend.keys,
            notes,
            notes_top,
            width,
            height,
        }
    }

    /// y of value `v` on the pressure chart.
    pub(super) fn py(&self, v: u32) -> f64 {
        self.bands.chart_bottom - f64::from(v) / f64::from(self.pressure.ymax) * PRESSURE_H
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::viz::{ClusterBox, LoopSpan, SpillMark, TensorBar};

    fn bar(bank: u32, banks: u32, start: u32, end: u32) -> TensorBar {
        TensorBar {
            name: format!("t{bank}_{start}"),
            bank,
            banks,
            start,
            end,
            role: BarRole::Normal,
            loc: None,
        }
    }

    fn spill(kind: SpillKind, bank: u32, point: u32) -> SpillMark {
        SpillMark {
            point,
            kind,
            tensor: "x".into(),
            slot: "x_SpillTensorCopy0".into(),
            bank,
            banks: 1,
        }
    }

    /// Pixel values as the picture writes them.
    fn px(values: &[f64]) -> Vec<String> {
        values.iter().map(|&v| num(v)).collect()
    }

    #[test]
    fn scale_widens_points_up_to_the_widest_plot_then_bins() {
        let empty = Scale::new(0);
        assert_eq!((empty.n, empty.bin, empty.cols), (1, 1, 1));
        assert_eq!(px(&[empty.plot_w, empty.sx]), ["640", "640"]);

        let small = Scale::new(10);
        assert_eq!((small.n, small.bin, small.cols), (10, 1, 10));
        assert_eq!(
            px(&[small.plot_w, small.sx, small.x(2), small.cx(2)]),
            ["640", "64", "212", "244"]
        );

        let large = Scale::new(5000);
        assert_eq!((large.n, large.bin, large.cols), (5000, 3, 1667));
        assert_eq!(
            px(&[large.plot_w, large.sx, large.col_x(1)]),
            ["1180", "0.24", "84.71"]
        );
        assert_eq!(large.col_start(1666), 4998);
        assert_eq!(large.col_start(1667), 5000);
    }

    #[test]
    fn column_max_takes_each_columns_peak_and_zero_past_the_values() {
        let s = Scale::new(5000);
        let cols = s.column_max(&[1, 5, 2, 0, 3, 9, 4]);
        assert_eq!(cols.len(), 1667);
        assert_eq!(cols[..4], [5, 9, 4, 0]);
        assert!(cols[4..].iter().all(|&v| v == 0));
        assert_eq!(s.column_max(&[]), Vec::<u32>::new());
    }

    #[test]
    fn pressure_tops_the_axis_one_above_the_highest_value() {
        let mut t = Timeline {
            num_banks: 8,
            num_points: 4,
            pressure_after: vec![2, 6, 3, 1],
            ..Timeline::default()
        };
        let s = Scale::new(4);
        let p = Pressure::new(&t, &s);
        assert_eq!(
            (p.before.clone(), p.after, p.ymax),
            (vec![], vec![2, 6, 3, 1], 9)
        );
        t.pressure_before = vec![4, 11, 0, 0];
        assert_eq!(Pressure::new(&t, &s).ymax, 12);
    }

    #[test]
    fn lanes_cover_every_bank_a_tensor_reaches_within_the_limit() {
        let mut t = Timeline {
            num_banks: 8,
            tensors: vec![bar(6, 4, 0, 1)],
            ..Timeline::default()
        };
        assert_eq!(lane_count(&t), 10);
        t.tensors = vec![bar(100, 1, 0, 1)];
        assert_eq!(lane_count(&t), 64);
        assert_eq!(lane_count(&Timeline::default()), 1);
    }

    #[test]
    fn narrow_bars_merge_into_runs_per_lane() {
        // 1000 points: 1.18 px each, so three points (3.54 px) are drawn and
        // two (2.36 px) are merged.
        let t = Timeline {
            num_banks: 8,
            num_points: 1000,
            tensors: vec![
                bar(0, 1, 0, 9),
                bar(1, 2, 5, 6),
                bar(1, 1, 6, 7),
                bar(1, 1, 20, 20),
                bar(9, 1, 0, 9),
                bar(0, 1, 2000, 2001),
                bar(3, 0, 0, 9),
                bar(7, 4, 100, 1200),
            ],
            ..Timeline::default()
        };
        let s = Scale::new(t.num_points);
        let b = bars_and_runs(&t, &s, 8);
        let at = |idx, bank, banks, start, end| Bar {
            idx,
            start,
            end,
            bank,
            banks,
        };
        assert_eq!(b.bars, [at(0, 0, 1, 0, 9), at(7, 7, 1, 100, 999)]);
        let run = |lane, col_lo, col_hi, tensors| Run {
            lane,
            col_lo,
            col_hi,
            tensors,
        };
        assert_eq!(
            b.runs,
            [run(1, 5, 7, 2), run(1, 20, 20, 1), run(2, 5, 6, 1)]
        );
        assert_eq!(b.merged, 3);
    }

    #[test]
    fn spill_marks_of_one_kind_and_bank_group_when_close() {
        // 1.18 px per point: marks less than 13.56 points apart join.
        let t = Timeline {
            num_banks: 8,
            num_points: 1000,
            spills: vec![
                spill(SpillKind::Save, 0, 10),
                spill(SpillKind::Save, 0, 20),
                spill(SpillKind::Save, 0, 40),
                spill(SpillKind::Reload, 0, 15),
                spill(SpillKind::Save, 9, 10),
                spill(SpillKind::Save, 1, 1000),
            ],
            ..Timeline::default()
        };
        let marks = mark_groups(&t, &Scale::new(t.num_points), 8);
        let mark = |first, last_point, count| Mark {
            first,
            last_point,
            count,
        };
        assert_eq!(marks, [mark(0, 20, 2), mark(2, 40, 1), mark(3, 15, 1)]);
    }

    #[test]
    fn narrow_or_deep_clusters_and_loops_are_counted_not_drawn() {
        let cluster = |bank_lo, bank_hi, start, end| ClusterBox {
            label: String::new(),
            bank_lo,
            bank_hi,
            start,
            end,
        };
        let lp = |header, end, depth| LoopSpan {
            label: String::new(),
            header,
            end,
            depth,
        };
        let t = Timeline {
            num_banks: 8,
            num_points: 1000,
            clusters: vec![
                cluster(0, 1, 0, 9),
                cluster(0, 0, 0, 1),
                cluster(9, 9, 0, 9),
                cluster(2, 1, 0, 9),
            ],
            loops: vec![lp(0, 9, 0), lp(3, 4, 1), lp(0, 9, 5), lp(10, 30, 2)],
            ..Timeline::default()
        };
        let s = Scale::new(t.num_points);
        let clusters = visible_clusters(&t, &s, 8);
        assert_eq!((clusters.shown, clusters.hidden), (vec![0], 2));
        let loops = visible_loops(&t, &s);
        assert_eq!((loops.shown.clone(), loops.hidden), (vec![0, 3], 2));
        assert_eq!(strip_rows(&t, &loops), 4);
        assert_eq!(strip_rows(&t, &Visible::default()), 1);
    }

    #[test]
    fn bands_stack_chart_strip_and_lanes() {
        let b = Bands::new(2, 8);
        assert_eq!(
            px(&[
                b.chart_bottom,
                b.strip_top,
                b.lanes_top,
                b.lanes_bottom,
                b.lane_y(2)
            ]),
            ["168", "180", "214", "486", "282"]
        );
    }

    #[test]
    fn legend_keys_follow_the_timeline_and_flow_into_rows() {
        let mut t = Timeline::default();
        assert_eq!(wanted_keys(&t, 0), [Key::Tensor, Key::After, Key::BankLine]);
        t.pressure_before = vec![1];
        t.spills = vec![spill(SpillKind::Reload, 0, 0)];
        assert_eq!(
            wanted_keys(&t, 2),
            [
                Key::Tensor,
                Key::ReloadMark,
                Key::Merged,
                Key::After,
                Key::Before,
                Key::BankLine
            ]
        );

        // Entries are 48 px plus 6.6 px a character: 272.4, 239.4 and 114.
        let l = legend(wanted_keys(&Timeline::default(), 0), 600.0, 100.0);
        let placed: Vec<_> = l
            .keys
            .iter()
            .map(|&(k, x, y)| (k, num(x), num(y)))
            .collect();
        assert_eq!(
            placed,
            [
                (Key::Tensor, "84".to_string(), "100".to_string()),
                (Key::After, "84".to_string(), "122".to_string()),
                (Key::BankLine, "323.4".to_string(), "122".to_string()),
            ]
        );
        assert_eq!(num(l.last_row), "122");
    }

    #[test]
    fn notes_say_what_is_binned_merged_and_not_outlined() {
        assert_eq!(notes(1, 0, 0, 0), Vec::<String>::new());
        assert_eq!(
            notes(3, 2, 1, 0),
            [
                "binned: 3 points per column; the pressure curves show each column's maximum",
                "2 tensors narrower than 3 px are merged per bank lane (grey)",
                "not outlined (too narrow or too deep): 1 clusters, 0 loops",
            ]
        );
    }
}
