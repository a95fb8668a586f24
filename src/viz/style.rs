//! How the bank timeline looks (SPEC §8): the tensor palette, the style
//! sheet the picture and the HTML legend share, the legend's entries with
//! their texts, and the one way numbers are written, so that the output is
//! byte-stable.

use super::{BarRole, TensorBar};

/// Fill colors for tensors (ColorBrewer Set3, without its grey), picked by
/// hashing the tensor name.
pub(super) const PALETTE: [(u8, u8, u8); 11] = [
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
pub(super) const STYLE: &str =
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
pub(super) const REUSE_STYLE: &str = ".ru{fill:none;stroke:#333;stroke-width:1.2}\
.ra{fill:none;stroke:#d7191c;stroke-width:1.6;stroke-dasharray:4 2}";

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
pub(super) fn fill_of(key: &str) -> (u8, u8, u8) {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    PALETTE[(h % PALETTE.len() as u64) as usize]
}

/// `#rrggbb` of a color scaled by `f` (≤ 1 darkens).
pub(super) fn hex((r, g, b): (u8, u8, u8), f: f64) -> String {
    let s = |c: u8| (f64::from(c) * f).round() as u8;
    format!("#{:02x}{:02x}{:02x}", s(r), s(g), s(b))
}

/// The color key of a bar: reloads take the color of the tensor they reload.
pub(super) fn color_key(b: &TensorBar) -> &str {
    match &b.role {
        BarRole::Reload { of } => of,
        BarRole::Normal | BarRole::Spilled => &b.name,
    }
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
