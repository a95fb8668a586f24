//! SVG drawing of a [`Timeline`] (SPEC §8) in the [`Layout`] worked out by
//! `layout`: title, pressure chart with the bank-count line, loop and block
//! brackets, one lane per bank (bank 0 at the top) holding the tensor bars,
//! cluster outlines and spill marks, the x axis, the legend and the
//! footnotes. Every number is written by [`num`], so the output is
//! byte-stable.

use super::layout::{
    Layout, CHART_TOP, CHAR_W, CLUSTER_INSET, LANE_H, ML, PRESSURE_H, ROW_H, STRIP_ROW_H,
};
use super::style::{color_key, fill_of, hex, num, Key, PALETTE, REUSE_STYLE, STYLE};
use super::{escape, range_text, BarRole, SpillKind, Timeline};
use std::fmt::Write;

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

/// Whether a label of `chars` characters fits in `w` pixels.
fn fits(chars: usize, w: f64) -> bool {
    chars as f64 * CHAR_W + 8.0 <= w
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
    let base = l.bands.chart_bottom;
    let mut d = String::new();
    let first = values.first().copied().unwrap_or(0);
    if closed {
        put!(
            d,
            "M{},{}V{}",
            num(l.scale.col_x(0)),
            num(base),
            num(l.py(first))
        );
    } else {
        put!(d, "M{},{}", num(l.scale.col_x(0)), num(l.py(first)));
    }
    for (c, &v) in values.iter().enumerate() {
        let c = c as u32;
        put!(d, "H{}", num(l.scale.col_x(c + 1)));
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
    let (x0, x1) = (ML, ML + l.scale.plot_w);
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
    if l.pressure.ymax > l.num_banks {
        put!(
            o,
            "<rect class=\"over\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>\n",
            num(x0),
            num(CHART_TOP),
            num(l.scale.plot_w),
            num(l.py(l.num_banks) - CHART_TOP)
        );
    }
    let min_gap = 14.0 * f64::from(l.pressure.ymax) / PRESSURE_H;
    let mut step = 1;
    while f64::from(step) < min_gap {
        step *= 2;
    }
    let mut v = 0;
    while v <= l.pressure.ymax {
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
    if !l.pressure.after.is_empty() {
        put!(
            o,
            "<path class=\"after\" d=\"{}\"/>\n",
            step_path(l, &l.pressure.after, true)
        );
    }
    if !l.pressure.before.is_empty() {
        put!(
            o,
            "<path class=\"before\" d=\"{}\"/>\n",
            step_path(l, &l.pressure.before, false)
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
        num(l.scale.plot_w),
        num(PRESSURE_H)
    );
}

fn lanes(o: &mut String, l: &Layout) {
    o.push_str("<g id=\"lanes\">\n");
    for b in 0..l.lanes {
        let y = l.bands.lane_y(b);
        put!(
            o,
            "<rect class=\"lane{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/><text class=\"ax\" x=\"{}\" y=\"{}\" text-anchor=\"end\">bank {b}</text>\n",
            b % 2,
            num(ML),
            num(y),
            num(l.scale.plot_w),
            num(LANE_H),
            num(ML - 6.0),
            num(y + LANE_H / 2.0 + 3.5)
        );
    }
    put!(
        o,
        "<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/></g>\n",
        num(ML),
        num(l.bands.lanes_top),
        num(l.scale.plot_w),
        num(l.bands.lanes_bottom - l.bands.lanes_top)
    );
}

fn blocks_and_loops(o: &mut String, t: &Timeline, l: &Layout) {
    o.push_str("<g id=\"loops\">\n");
    for b in &t.blocks {
        if b.start >= l.scale.n {
            continue;
        }
        let x = l.scale.x(b.start);
        let w = l.scale.x(b.end.min(l.scale.n - 1) + 1) - x;
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
                num(l.bands.strip_top),
                num(l.bands.lanes_bottom),
                x = num(x)
            );
        }
        let label = format!("block {}", b.name);
        if fits(label.chars().count(), w) {
            put!(
                o,
                "<text x=\"{}\" y=\"{}\">{}</text>",
                num(x + 3.0),
                num(l.bands.strip_top + 12.0),
                escape(&label)
            );
        }
        o.push_str("</g>\n");
    }
    for &i in &l.loops {
        let lp = &t.loops[i];
        let end = lp.end.min(l.scale.n - 1);
        let (xh, xe) = (l.scale.cx(lp.header), l.scale.cx(end));
        let row_top = l.bands.strip_top + f64::from(lp.depth + 1) * STRIP_ROW_H;
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
            num(l.scale.x(lp.header)),
            num(l.bands.lanes_top),
            num(l.scale.x(end + 1) - l.scale.x(lp.header)),
            num(l.bands.lanes_bottom - l.bands.lanes_top)
        );
        put!(
            o,
            "<line class=\"lh\" x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\"/>",
            num(row_top + 9.0),
            num(l.bands.lanes_bottom),
            x = num(xh)
        );
        put!(
            o,
            "<line class=\"le\" x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\"/>",
            num(row_top + 9.0),
            num(l.bands.lanes_bottom),
            x = num(xe)
        );
        put!(
            o,
            "<path class=\"br\" d=\"M{},{y}H{}\"/>",
            num(xh),
            num(xe),
            y = num(row_top + 9.0)
        );
        if fits(lp.label.chars().count(), xe - xh + l.scale.sx) {
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
    for r in &l.bars.runs {
        let x = l.scale.col_x(r.col_lo);
        let w = (l.scale.col_x(r.col_hi + 1) - x).max(1.0);
        let (p0, p1) = (
            l.scale.col_start(r.col_lo),
            l.scale.col_start(r.col_hi + 1) - 1,
        );
        put!(
            o,
            "<rect class=\"m\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>bank {}, points {}: {} narrow tensors</title></rect>\n",
            num(x),
            num(l.bands.lane_y(r.lane) + 3.0),
            num(w),
            num(LANE_H - 6.0),
            r.lane,
            range_text(p0, p1),
            r.tensors
        );
    }
    for bar in &l.bars.bars {
        let b = &t.tensors[bar.idx];
        let x = l.scale.x(bar.start) + 1.0;
        let w = (l.scale.x(bar.end + 1) - 1.0 - x).max(1.0);
        let y = l.bands.lane_y(bar.bank) + 3.0;
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
        let end = c.end.min(l.scale.n - 1);
        let hi = c.bank_hi.min(l.lanes - 1);
        let x = l.scale.x(c.start) + CLUSTER_INSET.0;
        let y = l.bands.lane_y(c.bank_lo) + CLUSTER_INSET.1;
        put!(
            o,
            "<rect class=\"cl\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{}\nbanks {}, points {}</title></rect>\n",
            num(x),
            num(y),
            num((l.scale.x(end + 1) - CLUSTER_INSET.0 - x).max(1.0)),
            num(l.bands.lane_y(hi + 1) - CLUSTER_INSET.1 - y),
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
            SpillKind::Save => ("sv", l.bands.lane_y(m.bank) + 4.0, 10.0, "save", "to"),
            SpillKind::Reload => (
                "rm",
                l.bands.lane_y(m.bank + banks) - 4.0,
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
        let (x0, x1) = (l.scale.cx(m.point), l.scale.cx(mk.last_point));
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
        let (from, to) = (a.from.min(l.scale.n - 1), a.to.min(l.scale.n - 1));
        let y = l.bands.lane_y(a.bank) + LANE_H * 0.7;
        let (x0, x1) = if from == to {
            (l.scale.cx(from) - 5.0, l.scale.cx(from) + 5.0)
        } else {
            (l.scale.cx(from), l.scale.cx(to))
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
            if f64::from(step) * l.scale.sx >= 40.0 {
                break 'find;
            }
        }
    }
    o.push_str("<g id=\"xaxis\">\n");
    let y = l.bands.lanes_bottom;
    let mut p = 0u32;
    while p < l.scale.n {
        let x = num(if l.scale.bin == 1 {
            l.scale.cx(p)
        } else {
            l.scale.x(p)
        });
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
    let what = if l.scale.bin == 1 {
        "program point (SPEC 3.1)".to_string()
    } else {
        format!(
            "program point (SPEC 3.1), {} columns of {} points",
            l.scale.cols, l.scale.bin
        )
    };
    put!(
        o,
        "<text class=\"ax\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{what}</text></g>\n",
        num(ML + l.scale.plot_w / 2.0),
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
