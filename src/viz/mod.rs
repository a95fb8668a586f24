//! Bank timeline pictures (SPEC §8): the PSUM banks of an allocated program
//! over its program points (SPEC §3.1), drawn as SVG ([`svg()`]) or as an HTML
//! page that embeds the SVG with a legend and tables ([`html()`]).
//!
//! The renderers read a plain [`Timeline`], so they depend on no pass:
//! [`Timeline::from_alloc`] fills it from an allocation (tensor intervals and
//! banks, spill code, the first iteration's demand), [`Timeline::from_compiled`]
//! adds the accumulation clusters of SPEC §4.3 and the reuse edges of SPEC
//! §10 found on the unrolled program, mapped back to the points of the
//! allocated one, and [`pressure`] turns
//! intervals into a live-bank curve. Output is deterministic: fixed number formatting and
//! the order of the input vectors. Programs with more than [`MAX_COLUMNS`]
//! points are binned, and tensors too narrow to see are merged per bank lane,
//! so the size of the picture is bounded by its pixels, not by the program.

/// Appends formatted text to a `String` (writing to a `String` cannot fail).
macro_rules! put {
    ($out:expr, $($arg:tt)*) => {{
        let _ = write!($out, $($arg)*);
    }};
}

mod html;
mod layout;
mod style;
mod svg;

pub use html::html;
pub use svg::svg;

use crate::alloc::linear::{Linear, PointKind};
use crate::alloc::{self, AllocOptions, AllocOutcome, Analysis};
use crate::ir::{InstId, InstKind, LoopId, Mem, Module, Stmt};
use crate::pipeline::Compiled;
use crate::reuse;
use std::collections::HashMap;

/// Above this many program points the timeline is binned: each column of the
/// picture then stands for `ceil(num_points / MAX_COLUMNS)` points.
pub const MAX_COLUMNS: u32 = 2000;

/// Everything the bank timeline shows. Points are program points of the drawn
/// program (SPEC §3.1), numbered `0..num_points`; ranges are closed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Timeline {
    /// Heading of the picture, usually the input file name.
    pub title: String,
    /// Architecture codename as written in the module's `arch` line.
    pub arch: String,
    /// Banks the allocator may use (Psumbuf.numBanks or `--psum-banks`): one
    /// lane each, and the bank-count line on the pressure chart.
    pub num_banks: u32,
    /// Number of program points; the x axis runs over `0..num_points`.
    pub num_points: u32,
    /// Blocks in program order, each with its first and last point.
    pub blocks: Vec<BlockSpan>,
    /// Loops with their header and end points (SPEC §3.1).
    pub loops: Vec<LoopSpan>,
    /// One bar per allocated PSUM tensor (unused tensors have no bank and no bar).
    pub tensors: Vec<TensorBar>,
    /// Spill saves and reloads (SPEC §3.8), one per inserted copy.
    pub spills: Vec<SpillMark>,
    /// Accumulation clusters (SPEC §4.3), outlined over the bars they cover.
    pub clusters: Vec<ClusterBox>,
    /// Reuse edges (SPEC §10), one arrow per bank and pair of points.
    pub reuse: Vec<ReuseArrow>,
    /// Live banks per point before allocation (first iteration's demand,
    /// SPEC §3.4), indexed by the drawn program's points: a point the
    /// allocator inserted takes the value of the original point it follows.
    /// Empty when there is no such curve.
    pub pressure_before: Vec<u32>,
    /// Banks in use per point after allocation (see [`pressure`]).
    pub pressure_after: Vec<u32>,
    /// Key/value lines of the report (SPEC §6 keys), shown as the HTML summary table.
    pub summary: Vec<(String, String)>,
}

/// A block of the program: its name and closed point range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockSpan {
    /// The block's name.
    pub name: String,
    /// First point of the block.
    pub start: u32,
    /// Last point of the block.
    pub end: u32,
}

/// A loop: its header and end points and nesting depth.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopSpan {
    /// Text shown at the loop's bracket, e.g. `loop k 0..4`.
    pub label: String,
    /// The loop's header point.
    pub header: u32,
    /// The loop's end point.
    pub end: u32,
    /// Nesting depth: 0 for a loop directly in a block.
    pub depth: u32,
}

/// How a tensor's bar is drawn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BarRole {
    /// An ordinary PSUM tensor over its whole interval.
    Normal,
    /// A spilled tensor over its shortened range (up to its save).
    Spilled,
    /// A reload temporary (`X_ReloadTensorCopyJ`) of the spilled tensor `of`;
    /// drawn hatched in `of`'s color.
    Reload {
        /// Name of the spilled tensor whose value it brings back.
        of: String,
    },
}

/// One PSUM tensor placed in banks `bank..bank + banks` over points `start..=end`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorBar {
    /// The tensor's name.
    pub name: String,
    /// Base bank.
    pub bank: u32,
    /// Number of banks it occupies (`liveN`, SPEC §3.3).
    pub banks: u32,
    /// First point of its interval.
    pub start: u32,
    /// Last point of its interval.
    pub end: u32,
    /// How it is drawn.
    pub role: BarRole,
    /// Where a traced kernel allocated the tile (`loc=`), shown in the tooltip.
    pub loc: Option<String>,
}

/// Which spill copy a [`SpillMark`] stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SpillKind {
    /// `copy X_SpillTensorCopyK <- X`: PSUM to SBUF.
    Save,
    /// `copy X_ReloadTensorCopyJ <- X_SpillTensorCopyK`: SBUF back to PSUM.
    Reload,
}

/// A spill copy at a point, drawn on the PSUM banks it reads or writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpillMark {
    /// The copy's program point.
    pub point: u32,
    /// Save or reload.
    pub kind: SpillKind,
    /// The PSUM tensor: the saved tensor, or the reload temporary.
    pub tensor: String,
    /// The SBUF spill tensor (`X_SpillTensorCopyK`).
    pub slot: String,
    /// Base bank of `tensor`.
    pub bank: u32,
    /// Banks of `tensor`.
    pub banks: u32,
}

/// An accumulation cluster: banks `bank_lo..=bank_hi` over points `start..=end`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterBox {
    /// Tooltip text, e.g. `cluster 0: acc, partitions 0-63`.
    pub label: String,
    /// Lowest bank.
    pub bank_lo: u32,
    /// Highest bank.
    pub bank_hi: u32,
    /// Point of the cluster's head.
    pub start: u32,
    /// Point of the cluster's tail.
    pub end: u32,
}

impl Timeline {
    /// The timeline of an allocation (SPEC §3): `original` is the module the
    /// allocator was given and `outcome` what it returned. Points are those of
    /// the allocated program; the "before" curve is the first iteration's
    /// demand, carried over to the allocated program's points. Clusters
    /// (SPEC §4.3) are left empty: see [`Timeline::from_compiled`].
    ///
    /// ```
    /// let src = "arch trn1
    ///
    /// psum a [128, 2048]
    /// psum b [128, 2048]
    /// sbuf w [128, 256] bf16
    /// sbuf x [128, 1024] bf16
    /// sbuf y [128, 2048]
    ///
    /// block main {
    ///   matmul a <- w, x
    ///   act y <- a
    ///   matmul b <- w, x
    ///   act y <- b
    /// }
    /// ";
    /// let input = psum::text::parse(src)?.module;
    /// let out = psum::alloc::allocate(&input, &Default::default())?;
    /// let t = psum::viz::Timeline::from_alloc("two", &input, &out);
    /// assert_eq!((t.num_banks, t.num_points, t.tensors.len()), (8, 4, 2));
    /// let svg = psum::viz::svg(&t);
    /// assert!(svg.starts_with("<svg"));
    /// assert!(psum::viz::html(&t).contains(&svg));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_alloc(
        title: impl Into<String>,
        original: &Module,
        outcome: &AllocOutcome,
    ) -> Timeline {
        let m = &outcome.module;
        let report = &outcome.report;
        let lin = Linear::new(m);
        let num_points = lin.points.len() as u32;

        let mut blocks = Vec::new();
        let mut start = 0;
        for b in &m.blocks {
            let len = points_in(m, &b.body);
            if len > 0 {
                blocks.push(BlockSpan {
                    name: b.name.clone(),
                    start,
                    end: start + len - 1,
                });
            }
            start += len;
        }

        let mut loops: Vec<LoopSpan> = (m.loops.values().enumerate())
            .map(|(l, lp)| (LoopId::new(l), lp))
            .filter(|&(l, _)| lin.header[l] != u32::MAX)
            .map(|(l, lp)| LoopSpan {
                label: format!("loop {} {}..{}", m.vars[lp.var].name, lp.lo, lp.hi),
                header: lin.header[l],
                end: lin.end[l],
                depth: lin.depth[l].saturating_sub(1),
            })
            .collect();
        loops.sort_by_key(|l| l.header);

        let mut reloads: HashMap<&str, &str> = HashMap::new();
        for inst in &m.insts {
            if let InstKind::Copy { dst, src } = &inst.kind {
                if let Some(of) = spill_source(&m.tensor(src.tensor).name) {
                    reloads.insert(&m.tensor(dst.tensor).name, of);
                }
            }
        }
        let by_name = m.name_index();
        let tensors: Vec<TensorBar> = (report.tensors.iter())
            .filter_map(|t| {
                let (bank, [start, end]) = (t.bank?, t.interval?);
                let role = if t.spilled {
                    BarRole::Spilled
                } else {
                    match reloads.get(t.name.as_str()) {
                        Some(&of) => BarRole::Reload { of: of.to_string() },
                        None => BarRole::Normal,
                    }
                };
                Some(TensorBar {
                    name: t.name.clone(),
                    bank,
                    banks: t.banks,
                    start,
                    end,
                    role,
                    loc: by_name
                        .get(t.name.as_str())
                        .and_then(|&id| m.tensor(id).loc.clone()),
                })
            })
            .collect();

        let placed: HashMap<&str, (u32, u32)> = (tensors.iter())
            .map(|b| (b.name.as_str(), (b.bank, b.banks)))
            .collect();
        let mut spills = Vec::new();
        for (i, inst) in m.insts.values().enumerate() {
            let (Some(point), InstKind::Copy { dst, src }) =
                (lin.point_of(InstId::new(i)), &inst.kind)
            else {
                continue;
            };
            let (d, s) = (m.tensor(dst.tensor), m.tensor(src.tensor));
            let mark = match (s.mem, d.mem) {
                (Mem::Psum, Mem::Sbuf) if spill_source(&d.name) == Some(s.name.as_str()) => {
                    (SpillKind::Save, &s.name, &d.name)
                }
                (Mem::Sbuf, Mem::Psum) if spill_source(&s.name).is_some() => {
                    (SpillKind::Reload, &d.name, &s.name)
                }
                _ => continue,
            };
            if let Some(&(bank, banks)) = placed.get(mark.1.as_str()) {
                spills.push(SpillMark {
                    point,
                    kind: mark.0,
                    tensor: mark.1.clone(),
                    slot: mark.2.clone(),
                    bank,
                    banks,
                });
            }
        }
        spills.sort_by_key(|s| s.point);

        let pressure_after = pressure(
            num_points,
            tensors.iter().map(|b| (b.start, b.end, b.banks)),
        );
        let pressure_before = if keeps_ids(original, m) {
            first_demand(original, report.num_banks, &lin)
        } else {
            Vec::new()
        };
        let pct = |v: f64| format!("{v:.2}");
        let summary = vec![
            ("arch".to_string(), report.arch.clone()),
            ("num_banks".to_string(), report.num_banks.to_string()),
            ("psum_tensors".to_string(), report.tensors.len().to_string()),
            ("spilled".to_string(), report.spilled.join(", ")),
            (
                "spill_cost_cycles".to_string(),
                report.spill_cost_cycles.to_string(),
            ),
            ("iterations".to_string(), report.iterations.to_string()),
            (
                "best_heuristic".to_string(),
                report.best_heuristic.to_string(),
            ),
            ("demand_pct".to_string(), pct(report.demand_pct)),
            ("utilization_pct".to_string(), pct(report.utilization_pct)),
        ];
        Timeline {
            title: title.into(),
            arch: report.arch.clone(),
            num_banks: report.num_banks,
            num_points,
            blocks,
            loops,
            tensors,
            spills,
            clusters: Vec::new(),
            reuse: Vec::new(),
            pressure_before,
            pressure_after,
            summary,
        }
    }
}

impl Timeline {
    /// The timeline of a compiled program ([`compile`](crate::pipeline::compile) of
    /// `original`): [`Timeline::from_alloc`] of its allocation, with one
    /// [`ClusterBox`] per accumulation cluster (SPEC §4.3). A cluster found on
    /// the unrolled program spans the allocated-program points of the
    /// instructions its matmuls were copied from, over its banks. A cluster
    /// of a single matmul is not outlined: it says nothing its bar does not.
    /// The reuse edges of SPEC §10 become [`ReuseArrow`]s.
    pub fn from_compiled(
        title: impl Into<String>,
        original: &Module,
        compiled: &Compiled,
    ) -> Timeline {
        let mut t = Timeline::from_alloc(title, original, &compiled.alloc);
        let lin = Linear::new(&compiled.alloc.module);
        t.reuse = reuse_arrows(compiled, &lin);
        let bank = |b: i64| u32::try_from(b.max(0)).unwrap_or(u32::MAX);
        for (k, c) in compiled.matmul.clusters.iter().enumerate() {
            if c.matmuls.len() < 2 {
                continue;
            }
            let points = (c.matmuls.iter())
                .filter_map(|i| compiled.origins.get(i.index()))
                .filter_map(|&o| lin.point_of(o));
            let Some((start, end)) = points.fold(None, |span, p| match span {
                None => Some((p, p)),
                Some((s, e)) => Some((p.min(s), p.max(e))),
            }) else {
                continue;
            };
            let (p_lo, p_hi) = c.partitions;
            t.clusters.push(ClusterBox {
                label: format!(
                    "cluster {k}: {} group{}, {} matmul{}, partitions {}",
                    c.groups,
                    if c.groups == 1 { "" } else { "s" },
                    c.matmuls.len(),
                    if c.matmuls.len() == 1 { "" } else { "s" },
                    if p_lo == p_hi {
                        p_lo.to_string()
                    } else {
                        format!("{p_lo}-{p_hi}")
                    },
                ),
                bank_lo: bank(c.banks.0),
                bank_hi: bank(c.banks.1),
                start,
                end,
            });
        }
        t
    }
}

/// Reuse edges (SPEC §10) that fall on one bank and one pair of points of
/// the drawn program: from the point of the earlier value's end to the point
/// of the later value's first write.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ReuseArrow {
    /// The bank the values share.
    pub bank: u32,
    /// Point of the earlier value's end.
    pub from: u32,
    /// Point of the later value's first write.
    pub to: u32,
    /// Whether the edges are avoidable (another block was free).
    pub avoidable: bool,
    /// How many edges of the unrolled program the arrow stands for.
    pub edges: u32,
    /// The least slack among them (SPEC §10).
    pub slack: u32,
}

/// The reuse arrows of a compiled program over the points `lin` of its
/// allocated program.
fn reuse_arrows(compiled: &Compiled, lin: &Linear) -> Vec<ReuseArrow> {
    let r = reuse::analyze(&compiled.module, compiled.alloc.report.num_banks);
    let point = |pos: u32| {
        let inst = *r.order.get(pos as usize)?;
        lin.point_of(*compiled.origins.get(inst.index())?)
    };
    let mut arrows: Vec<ReuseArrow> = Vec::new();
    let mut index: HashMap<(u32, u32, u32, bool), usize> = HashMap::new();
    for e in &r.edges {
        let (Some(from), Some(to)) = (point(r.values[e.from].end), point(r.values[e.to].first))
        else {
            continue;
        };
        let key = (e.bank, from, to, e.avoidable);
        match index.get(&key) {
            Some(&i) => {
                arrows[i].edges += 1;
                arrows[i].slack = arrows[i].slack.min(e.slack);
            }
            None => {
                index.insert(key, arrows.len());
                arrows.push(ReuseArrow {
                    bank: e.bank,
                    from,
                    to,
                    avoidable: e.avoidable,
                    edges: 1,
                    slack: e.slack,
                });
            }
        }
    }
    arrows.sort();
    arrows
}

/// Number of program points of a statement list (SPEC §3.1: one per
/// instruction, a header and an end per loop).
fn points_in(m: &Module, body: &[Stmt]) -> u32 {
    body.iter()
        .map(|s| match *s {
            Stmt::Inst(_) => 1,
            Stmt::Loop(l) => 2 + points_in(m, &m.loop_(l).body),
        })
        .sum()
}

/// `X` of an SBUF spill tensor named `X_SpillTensorCopyK` (SPEC §3.8).
fn spill_source(name: &str) -> Option<&str> {
    let (x, k) = name.rsplit_once("_SpillTensorCopy")?;
    (!k.is_empty() && k.bytes().all(|b| b.is_ascii_digit())).then_some(x)
}

/// Whether every instruction and loop of `original` is, under its id, the
/// same operation and loop in `drawn` (spill code and renamed tensors
/// aside), so that [`first_demand`] can carry points over. Loops expanded
/// by rotation (SPEC §3.12) renumber the program: there is no such curve.
fn keeps_ids(original: &Module, drawn: &Module) -> bool {
    original.insts.len() <= drawn.insts.len()
        && original.loops.len() <= drawn.loops.len()
        && (original.insts.values().zip(&drawn.insts))
            .all(|(a, b)| a.kind.mnemonic() == b.kind.mnemonic())
        && (original.loops.values().zip(&drawn.loops)).all(|(a, b)| (a.lo, a.hi) == (b.lo, b.hi))
}

/// Live banks per point of the allocator's first iteration (SPEC §3.4
/// demand), carried to the points of the allocated program `lin`: each
/// instruction and loop keeps its id through spilling, and a point the
/// allocator inserted between original points `p` and `p + 1` gets the banks
/// live across that gap (live at both). Empty when the demand cannot be
/// computed (the allocation itself would have failed).
fn first_demand(original: &Module, num_banks: u32, lin: &Linear) -> Vec<u32> {
    let opts = AllocOptions {
        psum_banks: Some(num_banks),
        ..AllocOptions::default()
    };
    let Ok(Analysis {
        lin: lin0, live, ..
    }) = alloc::analyze(original.clone(), &opts)
    else {
        return Vec::new();
    };
    let n0 = lin0.points.len() as u32;
    let at = pressure(n0, live.nodes.values().map(|v| (v.start, v.end, v.banks)));
    let across = pressure(
        n0,
        (live.nodes.values())
            .filter(|v| v.end > v.start)
            .map(|v| (v.start, v.end - 1, v.banks)),
    );
    let mut orig_of = vec![None; lin.points.len()];
    for (p, point) in lin0.points.iter().enumerate() {
        let q = match point.kind() {
            PointKind::Inst(i) => lin.point_of(i),
            PointKind::Header(l) => lin.header.get(l).copied(),
            PointKind::End(l) => lin.end.get(l).copied(),
        };
        if let Some(slot) = q.and_then(|q| orig_of.get_mut(q as usize)) {
            *slot = Some(p);
        }
    }
    let mut last = None;
    orig_of
        .into_iter()
        .map(|p| match p {
            Some(p) => {
                last = Some(p);
                at[p]
            }
            None => last.map_or(0, |p| across[p]),
        })
        .collect()
}

/// Live banks per point: the sum of `banks` over the `(start, end, banks)`
/// ranges covering each point of `0..num_points` (ranges are closed and
/// clipped to the program).
pub fn pressure(num_points: u32, ranges: impl IntoIterator<Item = (u32, u32, u32)>) -> Vec<u32> {
    let n = num_points as usize;
    let mut diff = vec![0i64; n + 1];
    for (start, end, banks) in ranges {
        let (s, e) = (start as usize, (end as usize).min(n.saturating_sub(1)));
        if s <= e && s < n {
            diff[s] += i64::from(banks);
            diff[e + 1] -= i64::from(banks);
        }
    }
    let mut live = 0i64;
    diff[..n]
        .iter()
        .map(|d| {
            live += d;
            u32::try_from(live).unwrap_or(u32::MAX)
        })
        .collect()
}

/// Escapes `&`, `<`, `>`, `"` and `'` for XML text and attribute values.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// `lo-hi`, or `lo` alone when the range is one value: how banks and point
/// ranges are written in tooltips and tables.
fn range_text(lo: u32, hi: u32) -> String {
    if lo == hi {
        lo.to_string()
    } else {
        format!("{lo}-{hi}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pressure_sums_closed_ranges_and_clips() {
        assert_eq!(
            pressure(6, [(0, 2, 1), (2, 3, 2), (5, 9, 1), (7, 8, 4)]),
            vec![1, 1, 3, 2, 0, 1]
        );
        assert_eq!(pressure(0, [(0, 0, 1)]), Vec::<u32>::new());
    }

    #[test]
    fn escape_covers_markup_and_quotes() {
        assert_eq!(escape(r#"a<b>&"c"'"#), "a&lt;b&gt;&amp;&quot;c&quot;&#39;");
    }
}
