//! Bank timeline pictures (SPEC §8): the PSUM banks of an allocated program
//! over its program points (SPEC §3.1), drawn as SVG ([`svg()`]) or as an HTML
//! page that embeds the SVG with a legend and tables ([`html()`]).
//!
//! The renderers read a plain [`Timeline`], so they depend on no pass: a
//! builder fills it from an allocation (tensor intervals and banks, spill code,
//! accumulation clusters of SPEC §4.3) and [`pressure`] turns intervals into
//! the live-bank curve. Output is deterministic: fixed number formatting and
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
mod svg;

pub use html::html;
pub use svg::svg;

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
