//! SVG rendering of a [`Timeline`] (SPEC §8): title, pressure chart with the
//! bank-count line, loop and block brackets, one lane per bank (bank 0 at the
//! top) holding the tensor bars, cluster outlines and spill marks, the x axis
//! and a legend.
//!
//! Bars, clusters and loops narrower than [`MIN_PX`] pixels are not drawn one
//! by one: bars are merged per bank lane into grey runs, clusters and loops are
//! counted in a footnote. Spill marks of one kind on one bank closer than
//! [`MARK_GAP`] pixels become one strip. Every number is written by [`num`],
//! so the output is byte-stable.

use super::{escape, range_text, BarRole, SpillKind, TensorBar, Timeline, MAX_COLUMNS};
use std::fmt::Write;

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
/// Horizontal and vertical inset of a cluster outline in its lanes: inside
/// the bars it covers, so it does not hide their edges.
const CLUSTER_INSET: (f64, f64) = (3.0, 6.0);
/// Height of one bank lane.
const LANE_H: f64 = 34.0;
/// Height of the pressure chart.
const PRESSURE_H: f64 = 110.0;
/// Height of one row of block and loop brackets.
const STRIP_ROW_H: f64 = 16.0;
/// Loops nested deeper than this are not bracketed.
const MAX_LOOP_DEPTH: u32 = 5;
/// Lanes drawn at most; bars above are clipped.
const MAX_LANES: u32 = 64;
/// Left margin (bank and pressure labels).
const ML: f64 = 84.0;
/// Right margin (bank-count label).
const MR: f64 = 84.0;
/// Top of the pressure chart.
const CHART_TOP: f64 = 58.0;
/// Height of one legend or footnote row.
const ROW_H: f64 = 22.0;
/// Estimated advance of one character at 11 px, for "does the label fit".
const CHAR_W: f64 = 6.6;

/// Fill colors for tensors (ColorBrewer Set3, without its grey), picked by
/// hashing the tensor name.
const PALETTE: [(u8, u8, u8); 11] = [
    (0x8d, 0xd3, 0xc7),
    (0xff, 0xff, 0xb3),
    (0xbe, 0xba, 0xda),
    (0xfb, 0x80, 0x72),
    (0x80, 0xb1, 0xd3),
    (0xfd, 0xb4, 0x62),
    (0xb3, 0xde, 0x69),
    (0xfc, 0xcd, 0xe5),
    (0xbc, 0x80, 0xbd),
    (0xcc, 0xeb, 0xc5),
    (0xff, 0xed, 0x6f),
];

/// Style sheet shared by the picture and the HTML legend swatches.
const STYLE: &str =
    "text{font-family:'DejaVu Sans',Helvetica,Arial,sans-serif;font-size:11px;fill:#1a1a1a}\
.h{font-size:15px;font-weight:bold}.s{fill:#555}.ax{fill:#444;font-size:10px}\
.lane0{fill:#f7f7f7}.lane1{fill:#ececec}.frame{fill:none;stroke:#999}\
.grid{stroke:#ddd}.over{fill:#fbe3e0}.bankline{stroke:#222;stroke-width:1.5;stroke-dasharray:6 3}\
.after{fill:#4f81bd;fill-opacity:.35;stroke:#2b5c8a;stroke-width:1.2}\
.before{fill:none;stroke:#e66101;stroke-width:1.6;stroke-dasharray:4 2}\
.band{fill:#1f3a5f;fill-opacity:.06}.lh{stroke:#53657a;stroke-width:1.2}\
.le{stroke:#53657a;stroke-width:1.2;stroke-dasharray:3 2}.br{fill:none;stroke:#53657a}\
.blk{stroke:#333;stroke-width:1.5}.sp{stroke:#b2182b;stroke-width:2;stroke-dasharray:5 3}\
.rl{stroke:#2166ac;stroke-width:1.5}.m{fill:#a0a8b0}\
.cl{fill:none;stroke:#111;stroke-width:1.4;stroke-dasharray:4 2}\
.sv{fill:#b2182b;stroke:#fff}.rm{fill:#2166ac;stroke:#fff}";

/// Style of the reuse arrows, written with them (pictures without reuse
/// edges do not carry it).
const REUSE_STYLE: &str = ".ru{fill:none;stroke:#333;stroke-width:1.2}\
.ra{fill:none;stroke:#d7191c;stroke-width:1.6;stroke-dasharray:4 2}";

/// Renders the timeline as a standalone SVG document.
pub fn svg(t: &Timeline) -> String {
    render(t).0
}

/// Renders the SVG document and returns it with the legend entries it shows.
pub(super) fn render(t: &Timeline) -> (String, Vec<Key>) {
    let l = Layout::new(t);
    let mut o = String::with_capacity(64 * 1024);
    put!(
        o,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">\n",
        w = num(l.width),
        h = num(l.height)
    );
    put!(o, "<style>{STYLE}</style>\n");
    o.push_str(
        "<defs><pattern id=\"psum-hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" \
         patternTransform=\"rotate(45)\"><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#2166ac\" \
         stroke-width=\"2\" stroke-opacity=\".55\"/></pattern></defs>\n",
    );
    put!(
        o,
        "<rect width=\"{}\" height=\"{}\" fill=\"#fff\"/>\n",
        num(l.width),
        num(l.height)
    );
    heading(&mut o, t);
    pressure_chart(&mut o, t, &l);
    lanes(&mut o, &l);
    blocks_and_loops(&mut o, t, &l);
    bars(&mut o, t, &l);
    clusters(&mut o, t, &l);
    spill_marks(&mut o, t, &l);
    reuse_arrows(&mut o, t, &l);
    x_axis(&mut o, &l);
    legend(&mut o, &l);
    footnotes(&mut o, &l);
    o.push_str("</svg>\n");
    (o, l.keys.iter().map(|&(k, _, _)| k).collect())
}

/// Writes a number with at most two decimals and no trailing zeros.
pub(super) fn num(v: f64) -> String {
    let r = (v * 100.0).round() / 100.0;
    if r == r.trunc() {
        format!("{}", r as i64)
    } else {
        let s = format!("{r:.2}");
        s.trim_end_matches('0').to_string()
    }
}

/// Fill color of a tensor: a palette entry chosen by an FNV-1a hash of `key`.
fn fill_of(key: &str) -> (u8, u8, u8) {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    PALETTE[(h % PALETTE.len() as u64) as usize]
}

/// `#rrggbb` of a color scaled by `f` (≤ 1 darkens).
fn hex((r, g, b): (u8, u8, u8), f: f64) -> String {
    let s = |c: u8| (f64::from(c) * f).round() as u8;
    format!("#{:02x}{:02x}{:02x}", s(r), s(g), s(b))
}

/// The color key of a bar: reloads take the color of the tensor they reload.
fn color_key(b: &TensorBar) -> &str {
    match &b.role {
        BarRole::Reload { of } => of,
        BarRole::Normal | BarRole::Spilled => &b.name,
    }
}

/// Whether a label of `chars` characters fits in `w` pixels.
fn fits(chars: usize, w: f64) -> bool {
    chars as f64 * CHAR_W + 8.0 <= w
}

/// Legend entries, in drawing order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Key {
    Tensor,
    Spilled,
    Reload,
    Save,
    ReloadMark,
    Merged,
    Cluster,
    Reuse,
    Avoidable,
    Loop,
    After,
    Before,
    BankLine,
}

impl Key {
    /// The short legend text.
    pub(super) fn text(self) -> &'static str {
        match self {
            Key::Tensor => "PSUM tensor: banks x live interval",
            Key::Spilled => "spilled tensor, up to its save",
            Key::Reload => "reload temporary",
            Key::Save => "save to SBUF",
            Key::ReloadMark => "reload from SBUF",
            Key::Merged => "narrow tensors, merged",
            Key::Cluster => "accumulation cluster",
            Key::Reuse => "reuse edge",
            Key::Avoidable => "avoidable reuse edge",
            Key::Loop => "loop: header | end",
            Key::After => "banks in use after allocation",
            Key::Before => "live banks before allocation",
            Key::BankLine => "bank count",
        }
    }

    /// What the entry means, for the HTML legend.
    pub(super) fn explain(self) -> &'static str {
        match self {
            Key::Tensor => "One rectangle per PSUM tensor: its banks (rows) over its live interval (columns), colored by name; hover for name, banks, interval and peak live banks.",
            Key::Spilled => "A spilled tensor keeps its bank only up to its save (SPEC 3.8), so its rectangle ends there.",
            Key::Reload => "A reload temporary X_ReloadTensorCopyJ, hatched in the color of the tensor X it brings back; it lives from the reload to the end of its read group.",
            Key::Save => "copy X_SpillTensorCopyK <- X: the value leaves PSUM for SBUF.",
            Key::ReloadMark => "copy X_ReloadTensorCopyJ <- X_SpillTensorCopyK: the value comes back into PSUM.",
            Key::Merged => "Tensors narrower than 3 pixels, merged per bank lane; hover for how many.",
            Key::Cluster => "An accumulation cluster (SPEC 4.3) of two or more matmuls: groups sharing a zero region, flagged together; outlined from its first to its last matmul over its banks.",
            Key::Reuse => "A value takes a bank after another (SPEC 10): its first write waits for the earlier value's end; the arrow runs from that end to the first write; hover for the count and the least slack.",
            Key::Avoidable => "A reuse edge another aligned block of the value's size could have avoided: that block held no value from the earlier value's end to this value's end.",
            Key::Loop => "A loop's header point (solid line) to its end point (dashed line), bracketed above the banks.",
            Key::After => "Banks held by placed tensors at each point after allocation.",
            Key::Before => "Live banks at each point before allocation (the first iteration's demand); above the bank count something must spill.",
            Key::BankLine => "The number of banks the allocator may use.",
        }
    }
}

/// A bar drawn on its own: index into `Timeline::tensors` and clipped geometry.
struct Bar {
    idx: usize,
    start: u32,
    end: u32,
    bank: u32,
    banks: u32,
}

/// Narrow bars merged into one grey run on one lane.
struct Run {
    lane: u32,
    col_lo: u32,
    col_hi: u32,
    tensors: u32,
}

/// Spill marks of one kind on one bank closer than [`MARK_GAP`] pixels,
/// drawn as one triangle (`count == 1`) or one strip.
struct Mark {
    /// Index of the first mark into `Timeline::spills`.
    first: usize,
    /// Point of the last mark.
    last_point: u32,
    count: u32,
}

/// Where everything goes: scales, what is drawn on its own, what is merged.
struct Layout {
    /// Program points on the axis (at least 1).
    n: u32,
    /// Points per column.
    bin: u32,
    /// Number of columns.
    cols: u32,
    /// Pixels per point.
    sx: f64,
    plot_w: f64,
    lanes: u32,
    num_banks: u32,
    chart_bottom: f64,
    strip_top: f64,
    lanes_top: f64,
    lanes_bottom: f64,
    notes_top: f64,
    width: f64,
    height: f64,
    /// Top of the pressure chart's y axis: one above the highest value, so
    /// the bank-count line never sits on the frame.
    ymax: u32,
    before: Vec<u32>,
    after: Vec<u32>,
    bars: Vec<Bar>,
    runs: Vec<Run>,
    marks: Vec<Mark>,
    clusters: Vec<usize>,
    loops: Vec<usize>,
    keys: Vec<(Key, f64, f64)>,
    notes: Vec<String>,
}

impl Layout {
    fn new(t: &Timeline) -> Layout {
        let n = t.num_points.max(1);
        let bin = n.div_ceil(MAX_COLUMNS);
        let cols = n.div_ceil(bin);
        let plot_w = (f64::from(n) * POINT_W).clamp(MIN_PLOT_W, MAX_PLOT_W);
        let sx = plot_w / f64::from(n);
        let top = t
            .tensors
            .iter()
            .map(|b| b.bank.saturating_add(b.banks))
            .max()
            .unwrap_or(0);
        let lanes = t.num_banks.max(top).clamp(1, MAX_LANES);
        let before = column_max(&t.pressure_before, n, bin);
        let after = column_max(&t.pressure_after, n, bin);
        let ymax = before
            .iter()
            .chain(&after)
            .copied()
            .max()
            .unwrap_or(0)
            .max(t.num_banks)
            + 1;

        let clip = |start: u32, end: u32| {
            let end = end.min(n - 1);
            (start <= end).then_some((start, end))
        };
        let width_of = |start: u32, end: u32| f64::from(end - start + 1) * sx;

        let mut bars = Vec::new();
        let mut occ = vec![vec![0i64; cols as usize + 1]; lanes as usize];
        let mut starts = vec![vec![0u32; cols as usize]; lanes as usize];
        let mut merged = 0;
        for (idx, b) in t.tensors.iter().enumerate() {
            let Some((start, end)) = clip(b.start, b.end) else {
                continue;
            };
            if b.bank >= lanes || b.banks == 0 {
                continue;
            }
            let banks = b.banks.min(lanes - b.bank);
            if width_of(start, end) >= MIN_PX {
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
            let (c0, c1) = ((start / bin) as usize, (end / bin) as usize);
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
            for c in 0..cols {
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

        let mut order: Vec<usize> = (0..t.spills.len())
            .filter(|&i| t.spills[i].point < n && t.spills[i].bank < lanes)
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
                    && f64::from(m.point - prev.point) * sx < MARK_GAP
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

        let mut clusters = Vec::new();
        let mut hidden_clusters = 0;
        for (i, c) in t.clusters.iter().enumerate() {
            match clip(c.start, c.end) {
                Some((s, e)) if width_of(s, e) >= MIN_PX && c.bank_lo <= c.bank_hi => {
                    if c.bank_lo < lanes {
                        clusters.push(i);
                    }
                }
                _ => hidden_clusters += 1,
            }
        }
        let mut loops = Vec::new();
        let mut hidden_loops = 0;
        for (i, lp) in t.loops.iter().enumerate() {
            match clip(lp.header, lp.end) {
                Some((s, e)) if width_of(s, e) >= MIN_PX && lp.depth < MAX_LOOP_DEPTH => {
                    loops.push(i)
                }
                _ => hidden_loops += 1,
            }
        }
        let strip_rows = 1 + loops
            .iter()
            .map(|&i| t.loops[i].depth + 1)
            .max()
            .unwrap_or(0);

        let chart_bottom = CHART_TOP + PRESSURE_H;
        let strip_top = chart_bottom + 12.0;
        let lanes_top = strip_top + f64::from(strip_rows) * STRIP_ROW_H + 2.0;
        let lanes_bottom = lanes_top + f64::from(lanes) * LANE_H;
        let width = ML + plot_w + MR;
        let legend_top = lanes_bottom + 52.0;

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
        let mut keys = Vec::new();
        let (mut x, mut y) = (ML, legend_top);
        for k in wanted {
            let w = 30.0 + k.text().len() as f64 * CHAR_W + 18.0;
            if x + w > width - 8.0 && x > ML {
                x = ML;
                y += ROW_H;
            }
            keys.push((k, x, y));
            x += w;
        }

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
        let notes_top = y + ROW_H;
        let height = notes_top + ROW_H * notes.len() as f64 + 6.0;

        Layout {
            n,
            bin,
            cols,
            sx,
            plot_w,
            lanes,
            num_banks: t.num_banks,
            chart_bottom,
            strip_top,
            lanes_top,
            lanes_bottom,
            notes_top,
            width,
            height,
            ymax,
            before,
            after,
            bars,
            runs,
            marks,
            clusters,
            loops,
            keys,
            notes,
        }
    }

    /// x of the left edge of point `p`.
    fn x(&self, p: u32) -> f64 {
        ML + f64::from(p) * self.sx
    }

    /// x of the middle of point `p`.
    fn cx(&self, p: u32) -> f64 {
        self.x(p) + self.sx / 2.0
    }

    /// x of the left edge of column `c`.
    fn col_x(&self, c: u32) -> f64 {
        self.x(col_start(c, self.bin, self.n))
    }

    /// y of the top of bank lane `bank`.
    fn lane_y(&self, bank: u32) -> f64 {
        self.lanes_top + f64::from(bank) * LANE_H
    }

    /// y of value `v` on the pressure chart.
    fn py(&self, v: u32) -> f64 {
        self.chart_bottom - f64::from(v) / f64::from(self.ymax) * PRESSURE_H
    }
}

/// First point of column `c` (`n` for the column past the last).
fn col_start(c: u32, bin: u32, n: u32) -> u32 {
    (u64::from(c) * u64::from(bin)).min(u64::from(n)) as u32
}

/// The maximum of `values` over each column of `bin` points (missing values
/// count as 0); empty when `values` is.
fn column_max(values: &[u32], n: u32, bin: u32) -> Vec<u32> {
    if values.is_empty() {
        return Vec::new();
    }
    (0..n.div_ceil(bin))
        .map(|c| {
            let lo = col_start(c, bin, n) as usize;
            let hi = (col_start(c + 1, bin, n) as usize).min(values.len());
            values
                .get(lo..hi)
                .map_or(0, |s| s.iter().copied().max().unwrap_or(0))
        })
        .collect()
}

fn heading(o: &mut String, t: &Timeline) {
    put!(
        o,
        "<text class=\"h\" x=\"{}\" y=\"22\">{}</text>\n",
        num(ML),
        escape(&t.title)
    );
    let spills = t.spills.len();
    put!(
        o,
        "<text class=\"s\" x=\"{}\" y=\"40\">{} \u{b7} {} PSUM banks \u{b7} {} program points \u{b7} {} PSUM tensors \u{b7} {} spill copies \u{b7} bank 0 at the top</text>\n",
        num(ML),
        escape(&t.arch),
        t.num_banks,
        t.num_points,
        t.tensors.len(),
        spills
    );
}

/// The step path of per-column `values`: `M x,y H x V y …`, starting at the
/// baseline when `closed` (for a filled area).
fn step_path(l: &Layout, values: &[u32], closed: bool) -> String {
    let base = l.chart_bottom;
    let mut d = String::new();
    let first = values.first().copied().unwrap_or(0);
    if closed {
        put!(d, "M{},{}V{}", num(l.col_x(0)), num(base), num(l.py(first)));
    } else {
        put!(d, "M{},{}", num(l.col_x(0)), num(l.py(first)));
    }
    for (c, &v) in values.iter().enumerate() {
        let c = c as u32;
        put!(d, "H{}", num(l.col_x(c + 1)));
        if let Some(&next) = values.get(c as usize + 1) {
            if next != v {
                put!(d, "V{}", num(l.py(next)));
            }
        }
    }
    if closed {
        put!(d, "V{}Z", num(base));
    }
    d
}

fn pressure_chart(o: &mut String, t: &Timeline, l: &Layout) {
    let (x0, x1) = (ML, ML + l.plot_w);
    let peak = |v: &[u32]| v.iter().copied().max().unwrap_or(0);
    put!(
        o,
        "<g id=\"pressure\"><title>live banks per point: peak {} after allocation{}, {} banks</title>\n",
        peak(&t.pressure_after),
        if t.pressure_before.is_empty() {
            String::new()
        } else {
            format!(", {} before", peak(&t.pressure_before))
        },
        t.num_banks
    );
    if l.ymax > l.num_banks {
        put!(
            o,
            "<rect class=\"over\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>\n",
            num(x0),
            num(CHART_TOP),
            num(l.plot_w),
            num(l.py(l.num_banks) - CHART_TOP)
        );
    }
    let min_gap = 14.0 * f64::from(l.ymax) / PRESSURE_H;
    let mut step = 1;
    while f64::from(step) < min_gap {
        step *= 2;
    }
    let mut v = 0;
    while v <= l.ymax {
        let y = num(l.py(v));
        put!(
            o,
            "<line class=\"grid\" x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\"/><text class=\"ax\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{v}</text>\n",
            num(x0),
            num(x1),
            num(x0 - 6.0),
            num(l.py(v) + 3.5)
        );
        v += step;
    }
    put!(
        o,
        "<text class=\"ax\" transform=\"rotate(-90 {x} {y})\" x=\"{x}\" y=\"{y}\" text-anchor=\"middle\">live banks</text>\n",
        x = num(ML - 40.0),
        y = num(CHART_TOP + PRESSURE_H / 2.0)
    );
    if !l.after.is_empty() {
        put!(
            o,
            "<path class=\"after\" d=\"{}\"/>\n",
            step_path(l, &l.after, true)
        );
    }
    if !l.before.is_empty() {
        put!(
            o,
            "<path class=\"before\" d=\"{}\"/>\n",
            step_path(l, &l.before, false)
        );
    }
    let yb = num(l.py(l.num_banks));
    put!(
        o,
        "<line class=\"bankline\" x1=\"{}\" y1=\"{yb}\" x2=\"{}\" y2=\"{yb}\"/><text x=\"{}\" y=\"{}\">{} banks</text>\n",
        num(x0),
        num(x1),
        num(x1 + 6.0),
        num(l.py(l.num_banks) + 4.0),
        l.num_banks
    );
    put!(
        o,
        "<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/></g>\n",
        num(x0),
        num(CHART_TOP),
        num(l.plot_w),
        num(PRESSURE_H)
    );
}

fn lanes(o: &mut String, l: &Layout) {
    o.push_str("<g id=\"lanes\">\n");
    for b in 0..l.lanes {
        let y = l.lane_y(b);
        put!(
            o,
            "<rect class=\"lane{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/><text class=\"ax\" x=\"{}\" y=\"{}\" text-anchor=\"end\">bank {b}</text>\n",
            b % 2,
            num(ML),
            num(y),
            num(l.plot_w),
            num(LANE_H),
            num(ML - 6.0),
            num(y + LANE_H / 2.0 + 3.5)
        );
    }
    put!(
        o,
        "<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/></g>\n",
        num(ML),
        num(l.lanes_top),
        num(l.plot_w),
        num(l.lanes_bottom - l.lanes_top)
    );
}

fn blocks_and_loops(o: &mut String, t: &Timeline, l: &Layout) {
    o.push_str("<g id=\"loops\">\n");
    for b in &t.blocks {
        if b.start >= l.n {
            continue;
        }
        let x = l.x(b.start);
        let w = l.x(b.end.min(l.n - 1) + 1) - x;
        put!(
            o,
            "<g><title>block {}: points {}</title>",
            escape(&b.name),
            range_text(b.start, b.end)
        );
        if b.start > 0 {
            put!(
                o,
                "<line class=\"blk\" x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\"/>",
                num(l.strip_top),
                num(l.lanes_bottom),
                x = num(x)
            );
        }
        let label = format!("block {}", b.name);
        if fits(label.chars().count(), w) {
            put!(
                o,
                "<text x=\"{}\" y=\"{}\">{}</text>",
                num(x + 3.0),
                num(l.strip_top + 12.0),
                escape(&label)
            );
        }
        o.push_str("</g>\n");
    }
    for &i in &l.loops {
        let lp = &t.loops[i];
        let end = lp.end.min(l.n - 1);
        let (xh, xe) = (l.cx(lp.header), l.cx(end));
        let row_top = l.strip_top + f64::from(lp.depth + 1) * STRIP_ROW_H;
        put!(
            o,
            "<g><title>{}: header point {}, end point {}</title>",
            escape(&lp.label),
            lp.header,
            lp.end
        );
        put!(
            o,
            "<rect class=\"band\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>",
            num(l.x(lp.header)),
            num(l.lanes_top),
            num(l.x(end + 1) - l.x(lp.header)),
            num(l.lanes_bottom - l.lanes_top)
        );
        put!(
            o,
            "<line class=\"lh\" x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\"/>",
            num(row_top + 9.0),
            num(l.lanes_bottom),
            x = num(xh)
        );
        put!(
            o,
            "<line class=\"le\" x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\"/>",
            num(row_top + 9.0),
            num(l.lanes_bottom),
            x = num(xe)
        );
        put!(
            o,
            "<path class=\"br\" d=\"M{},{y}H{}\"/>",
            num(xh),
            num(xe),
            y = num(row_top + 9.0)
        );
        if fits(lp.label.chars().count(), xe - xh + l.sx) {
            put!(
                o,
                "<text x=\"{}\" y=\"{}\">{}</text>",
                num(xh + 3.0),
                num(row_top + 7.0),
                escape(&lp.label)
            );
        }
        o.push_str("</g>\n");
    }
    o.push_str("</g>\n");
}

/// Peak of `values[start..=end]` (0 where missing).
fn peak(values: &[u32], start: u32, end: u32) -> u32 {
    let hi = (end as usize + 1).min(values.len());
    values
        .get(start as usize..hi)
        .map_or(0, |s| s.iter().copied().max().unwrap_or(0))
}

fn bars(o: &mut String, t: &Timeline, l: &Layout) {
    o.push_str("<g id=\"tensors\">\n");
    for r in &l.runs {
        let x = l.col_x(r.col_lo);
        let w = (l.col_x(r.col_hi + 1) - x).max(1.0);
        let (p0, p1) = (
            col_start(r.col_lo, l.bin, l.n),
            col_start(r.col_hi + 1, l.bin, l.n) - 1,
        );
        put!(
            o,
            "<rect class=\"m\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>bank {}, points {}: {} narrow tensors</title></rect>\n",
            num(x),
            num(l.lane_y(r.lane) + 3.0),
            num(w),
            num(LANE_H - 6.0),
            r.lane,
            range_text(p0, p1),
            r.tensors
        );
    }
    for bar in &l.bars {
        let b = &t.tensors[bar.idx];
        let x = l.x(bar.start) + 1.0;
        let w = (l.x(bar.end + 1) - 1.0 - x).max(1.0);
        let y = l.lane_y(bar.bank) + 3.0;
        let h = f64::from(bar.banks) * LANE_H - 6.0;
        let fill = fill_of(color_key(b));
        let (class, what) = match &b.role {
            BarRole::Normal => ("", String::new()),
            BarRole::Spilled => (
                " class=\"sp\"",
                " (spilled: drawn up to its save)".to_string(),
            ),
            BarRole::Reload { of } => (" class=\"rl\"", format!(" (reload of {})", escape(of))),
        };
        let what = match &b.loc {
            Some(loc) => format!("{what}\nallocated at {}", escape(loc)),
            None => what,
        };
        put!(
            o,
            "<g><title>{}{what}\nbanks {} ({} bank{})\ninterval [{}, {}]\npeak live banks in interval: {} of {}</title>",
            escape(&b.name),
            range_text(bar.bank, bar.bank + bar.banks - 1),
            bar.banks,
            if bar.banks == 1 { "" } else { "s" },
            bar.start,
            bar.end,
            peak(&t.pressure_after, bar.start, bar.end),
            t.num_banks
        );
        let stroke = if class.is_empty() {
            format!(" stroke=\"{}\"", hex(fill, 0.55))
        } else {
            String::new()
        };
        put!(
            o,
            "<rect{class} x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"{stroke}/>",
            num(x),
            num(y),
            num(w),
            num(h),
            hex(fill, 1.0)
        );
        if matches!(b.role, BarRole::Reload { .. }) {
            put!(
                o,
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"url(#psum-hatch)\"/>",
                num(x),
                num(y),
                num(w),
                num(h)
            );
        }
        if fits(b.name.chars().count(), w) {
            put!(
                o,
                "<text x=\"{}\" y=\"{}\">{}</text>",
                num(x + 4.0),
                num(y + LANE_H / 2.0 + 1.0),
                escape(&b.name)
            );
        }
        o.push_str("</g>\n");
    }
    o.push_str("</g>\n");
}

fn clusters(o: &mut String, t: &Timeline, l: &Layout) {
    o.push_str("<g id=\"clusters\">\n");
    for &i in &l.clusters {
        let c = &t.clusters[i];
        let end = c.end.min(l.n - 1);
        let hi = c.bank_hi.min(l.lanes - 1);
        let x = l.x(c.start) + CLUSTER_INSET.0;
        let y = l.lane_y(c.bank_lo) + CLUSTER_INSET.1;
        put!(
            o,
            "<rect class=\"cl\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{}\nbanks {}, points {}</title></rect>\n",
            num(x),
            num(y),
            num((l.x(end + 1) - CLUSTER_INSET.0 - x).max(1.0)),
            num(l.lane_y(hi + 1) - CLUSTER_INSET.1 - y),
            escape(&c.label),
            range_text(c.bank_lo, c.bank_hi),
            range_text(c.start, c.end)
        );
    }
    o.push_str("</g>\n");
}

fn spill_marks(o: &mut String, t: &Timeline, l: &Layout) {
    o.push_str("<g id=\"spills\">\n");
    for mk in &l.marks {
        let m = &t.spills[mk.first];
        let banks = m.banks.max(1).min(l.lanes - m.bank);
        let (class, y, dy, verb, prep) = match m.kind {
            SpillKind::Save => ("sv", l.lane_y(m.bank) + 4.0, 10.0, "save", "to"),
            SpillKind::Reload => (
                "rm",
                l.lane_y(m.bank + banks) - 4.0,
                -10.0,
                "reload",
                "from",
            ),
        };
        let what = format!(
            "{verb} {} {prep} {} at point {}",
            escape(&m.tensor),
            escape(&m.slot),
            m.point
        );
        let (x0, x1) = (l.cx(m.point), l.cx(mk.last_point));
        if mk.count == 1 {
            put!(
                o,
                "<path class=\"{class}\" d=\"M{},{}h14l-7,{}z\"><title>{what}</title></path>\n",
                num(x0 - 7.0),
                num(y),
                num(dy)
            );
        } else {
            put!(
                o,
                "<rect class=\"{class}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"5\"><title>{} {verb}s at points {}, the first: {what}</title></rect>\n",
                num(x0 - 3.0),
                num(if dy > 0.0 { y } else { y - 5.0 }),
                num(x1 - x0 + 6.0),
                mk.count,
                range_text(m.point, mk.last_point)
            );
        }
    }
    o.push_str("</g>\n");
}

/// One arc per [`ReuseArrow`](super::ReuseArrow) in the lane of its bank,
/// bowed upwards, with an arrow head at the later value's first write.
fn reuse_arrows(o: &mut String, t: &Timeline, l: &Layout) {
    if t.reuse.is_empty() {
        return;
    }
    put!(o, "<g id=\"reuse\">\n<style>{REUSE_STYLE}</style><defs>");
    for (id, fill) in [("psum-arrow", "#333"), ("psum-arrow-avoidable", "#d7191c")] {
        put!(
            o,
            "<marker id=\"{id}\" viewBox=\"0 0 6 6\" refX=\"5\" refY=\"3\" markerWidth=\"6\" \
             markerHeight=\"6\" orient=\"auto\"><path d=\"M0,0L6,3L0,6z\" fill=\"{fill}\"/></marker>"
        );
    }
    o.push_str("</defs>\n");
    for a in t.reuse.iter().filter(|a| a.bank < l.lanes) {
        let (from, to) = (a.from.min(l.n - 1), a.to.min(l.n - 1));
        let y = l.lane_y(a.bank) + LANE_H * 0.7;
        let (x0, x1) = if from == to {
            (l.cx(from) - 5.0, l.cx(from) + 5.0)
        } else {
            (l.cx(from), l.cx(to))
        };
        let (class, marker, what) = if a.avoidable {
            ("ra", "psum-arrow-avoidable", "avoidable reuse")
        } else {
            ("ru", "psum-arrow", "reuse")
        };
        put!(
            o,
            "<path class=\"{class}\" marker-end=\"url(#{marker})\" d=\"M{},{}Q{},{} {},{}\"><title>{what}: bank {}, point {} to point {}, {} edge{}, least slack {}</title></path>\n",
            num(x0),
            num(y),
            num((x0 + x1) / 2.0),
            num(y - LANE_H * 0.55),
            num(x1),
            num(y),
            a.bank,
            a.from,
            a.to,
            a.edges,
            if a.edges == 1 { "" } else { "s" },
            a.slack
        );
    }
    o.push_str("</g>\n");
}

fn x_axis(o: &mut String, l: &Layout) {
    let mut step = 1u32;
    'find: for scale in [1u32, 10, 100, 1000, 10_000, 100_000, 1_000_000, 10_000_000] {
        for m in [1, 2, 5] {
            step = m * scale;
            if f64::from(step) * l.sx >= 40.0 {
                break 'find;
            }
        }
    }
    o.push_str("<g id=\"xaxis\">\n");
    let y = l.lanes_bottom;
    let mut p = 0u32;
    while p < l.n {
        let x = num(if l.bin == 1 { l.cx(p) } else { l.x(p) });
        put!(
            o,
            "<line class=\"frame\" x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\"/><text class=\"ax\" x=\"{x}\" y=\"{}\" text-anchor=\"middle\">{p}</text>\n",
            num(y),
            num(y + 5.0),
            num(y + 17.0)
        );
        p = match p.checked_add(step) {
            Some(next) => next,
            None => break,
        };
    }
    let what = if l.bin == 1 {
        "program point (SPEC 3.1)".to_string()
    } else {
        format!(
            "program point (SPEC 3.1), {} columns of {} points",
            l.cols, l.bin
        )
    };
    put!(
        o,
        "<text class=\"ax\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{what}</text></g>\n",
        num(ML + l.plot_w / 2.0),
        num(y + 34.0)
    );
}

/// Draws the swatch of legend entry `k` in the 24 × 14 box at (`x`, `y`).
pub(super) fn swatch(o: &mut String, k: Key, x: f64, y: f64) {
    let (x0, y0, xm, ym) = (num(x), num(y), num(x + 12.0), num(y + 7.0));
    let (x1, y1) = (num(x + 24.0), num(y + 14.0));
    let first = hex(PALETTE[0], 1.0);
    match k {
        Key::Tensor => put!(
            o,
            "<rect x=\"{x0}\" y=\"{y0}\" width=\"24\" height=\"14\" fill=\"{first}\" stroke=\"{}\"/>",
            hex(PALETTE[0], 0.55)
        ),
        Key::Spilled => put!(
            o,
            "<rect class=\"sp\" x=\"{x0}\" y=\"{y0}\" width=\"24\" height=\"14\" fill=\"{first}\"/>"
        ),
        Key::Reload => put!(
            o,
            "<rect class=\"rl\" x=\"{x0}\" y=\"{y0}\" width=\"24\" height=\"14\" fill=\"{first}\"/><rect x=\"{x0}\" y=\"{y0}\" width=\"24\" height=\"14\" fill=\"url(#psum-hatch)\"/>"
        ),
        Key::Save => put!(
            o,
            "<path class=\"sv\" d=\"M{},{}h14l-7,10z\"/>",
            num(x + 5.0),
            num(y + 2.0)
        ),
        Key::ReloadMark => put!(
            o,
            "<path class=\"rm\" d=\"M{},{}h14l-7,-10z\"/>",
            num(x + 5.0),
            num(y + 12.0)
        ),
        Key::Merged => put!(
            o,
            "<rect class=\"m\" x=\"{x0}\" y=\"{y0}\" width=\"24\" height=\"14\"/>"
        ),
        Key::Cluster => put!(
            o,
            "<rect class=\"cl\" x=\"{x0}\" y=\"{y0}\" width=\"24\" height=\"14\"/>"
        ),
        Key::Reuse | Key::Avoidable => put!(
            o,
            "<path class=\"{}\" d=\"M{},{}Q{xm},{y0} {},{}\"/>",
            if k == Key::Reuse { "ru" } else { "ra" },
            num(x + 2.0),
            y1,
            num(x + 22.0),
            y1
        ),
        Key::Loop => put!(
            o,
            "<rect class=\"band\" x=\"{x0}\" y=\"{y0}\" width=\"24\" height=\"14\"/><line class=\"lh\" x1=\"{}\" y1=\"{y0}\" x2=\"{}\" y2=\"{y1}\"/><line class=\"le\" x1=\"{}\" y1=\"{y0}\" x2=\"{}\" y2=\"{y1}\"/>",
            num(x + 3.0),
            num(x + 3.0),
            num(x + 21.0),
            num(x + 21.0)
        ),
        Key::After => put!(
            o,
            "<path class=\"after\" d=\"M{x0},{y1}V{ym}H{xm}V{y0}H{x1}V{y1}Z\"/>"
        ),
        Key::Before => put!(
            o,
            "<path class=\"before\" d=\"M{x0},{ym}H{xm}V{y0}H{x1}\"/>"
        ),
        Key::BankLine => put!(
            o,
            "<line class=\"bankline\" x1=\"{x0}\" y1=\"{ym}\" x2=\"{x1}\" y2=\"{ym}\"/>"
        ),
    }
}

fn legend(o: &mut String, l: &Layout) {
    o.push_str("<g id=\"legend\">\n");
    for &(k, x, y) in &l.keys {
        swatch(o, k, x, y);
        put!(
            o,
            "<text x=\"{}\" y=\"{}\">{}</text>\n",
            num(x + 30.0),
            num(y + 11.0),
            k.text()
        );
    }
    o.push_str("</g>\n");
}

fn footnotes(o: &mut String, l: &Layout) {
    let top = l.notes_top;
    for (i, note) in l.notes.iter().enumerate() {
        put!(
            o,
            "<text class=\"s\" x=\"{}\" y=\"{}\">{}</text>\n",
            num(ML),
            num(top + ROW_H * i as f64 + 11.0),
            escape(note)
        );
    }
}
