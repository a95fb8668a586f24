//! Instructions (SPEC §2.3): matmul kinds and flags, what each kind
//! reads and writes, and the optional label, ordering edge and location.

use super::Access;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The PE-family matmul kinds (SPEC §2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MatmulKind {
    /// `matmul`, reference opcode 8.
    Plain,
    /// `matmul.sparse`, opcode 9.
    Sparse,
    /// `matmul.mx`, opcode 95.
    Mx,
    /// `matmul.t` (PE transpose), opcode 7.
    Transpose,
}

impl MatmulKind {
    /// The mnemonic used in the text format.
    pub fn mnemonic(self) -> &'static str {
        match self {
            MatmulKind::Plain => "matmul",
            MatmulKind::Sparse => "matmul.sparse",
            MatmulKind::Mx => "matmul.mx",
            MatmulKind::Transpose => "matmul.t",
        }
    }
    /// The reference compiler's opcode number.
    pub fn opcode(self) -> u32 {
        match self {
            MatmulKind::Plain => 8,
            MatmulKind::Sparse => 9,
            MatmulKind::Mx => 95,
            MatmulKind::Transpose => 7,
        }
    }
}

/// Accumulation flags of a matmul (SPEC §2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Flags {
    /// The compiler decides (legalization derives them).
    #[default]
    Auto,
    /// An explicit set (possibly empty: `flags=none`).
    Set(FlagSet),
}

/// An explicit set of `start`, `acc`, `stop` flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct FlagSet {
    /// Zero the destination banks before accumulating.
    pub start: bool,
    /// Accumulate (gen4 `use_memset` groups).
    pub acc: bool,
    /// Last matmul of the accumulation group.
    pub stop: bool,
}

impl FlagSet {
    /// The empty set (`flags=none`).
    pub const NONE: FlagSet = FlagSet {
        start: false,
        acc: false,
        stop: false,
    };

    /// The codegen's accumulate byte: bit0 start, bit1 stop, bit2 acc (SPEC §6).
    pub fn isa_byte(self) -> u8 {
        u8::from(self.start) | (u8::from(self.stop) << 1) | (u8::from(self.acc) << 2)
    }
}

impl fmt::Display for FlagSet {
    /// `start|acc|stop` order, `none` when empty.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = [
            (self.start, "start"),
            (self.acc, "acc"),
            (self.stop, "stop"),
        ];
        let mut first = true;
        for (on, name) in names {
            if on {
                if !first {
                    f.write_str("|")?;
                }
                f.write_str(name)?;
                first = false;
            }
        }
        if first {
            f.write_str("none")?;
        }
        Ok(())
    }
}

impl fmt::Display for Flags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Flags::Auto => f.write_str("auto"),
            Flags::Set(s) => s.fmt(f),
        }
    }
}

/// A matmul-family instruction's operands and attributes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Matmul {
    /// Which PE-family kind.
    pub kind: MatmulKind,
    /// Destination, a PSUM access `[M partitions, N elements]`.
    pub dst: Access,
    /// Stationary operand `[K partitions, M elements]`.
    pub stationary: Access,
    /// Moving operand `[K partitions, N elements]`.
    pub moving: Access,
    /// Position `(row, col)` of the tile in the PE array.
    pub pos: (u32, u32),
    /// Accumulation flags.
    pub flags: Flags,
    /// Zero-region width byte (`zr=N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zr: Option<u32>,
    /// What a traced kernel asked for (`accumulate=true|false`, NKI's
    /// `accumulate=` or `+=`); no effect on the meaning, read by the lints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accumulate: Option<bool>,
}

/// What an instruction does (SPEC §2.3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InstKind {
    /// A PE-family matmul (boxed: its three accesses would triple the size
    /// of every instruction).
    Matmul(Box<Matmul>),
    /// `copy D <- S`: TensorCopy between any memories.
    Copy {
        /// Destination.
        dst: Access,
        /// Source.
        src: Access,
    },
    /// `memset D = VALUE`.
    Memset {
        /// Destination.
        dst: Access,
        /// Fill value.
        value: f64,
    },
    /// `act D <- S1, S2, …`: elementwise sum.
    Act {
        /// Destination.
        dst: Access,
        /// Sources (at least one).
        srcs: Vec<Access>,
    },
    /// `engine D <- S1, S2, …`: shape-changing engine work (reductions,
    /// broadcasts): every destination element depends on every source element.
    Engine {
        /// Destination.
        dst: Access,
        /// Sources (at least one).
        srcs: Vec<Access>,
    },
    /// `dma D <- S`: DMA copy.
    Dma {
        /// Destination.
        dst: Access,
        /// Source.
        src: Access,
    },
}

impl InstKind {
    /// The destination access (every instruction writes exactly one).
    pub fn dst(&self) -> &Access {
        match self {
            InstKind::Matmul(m) => &m.dst,
            InstKind::Copy { dst, .. }
            | InstKind::Memset { dst, .. }
            | InstKind::Act { dst, .. }
            | InstKind::Engine { dst, .. }
            | InstKind::Dma { dst, .. } => dst,
        }
    }

    /// Mutable destination access.
    pub fn dst_mut(&mut self) -> &mut Access {
        match self {
            InstKind::Matmul(m) => &mut m.dst,
            InstKind::Copy { dst, .. }
            | InstKind::Memset { dst, .. }
            | InstKind::Act { dst, .. }
            | InstKind::Engine { dst, .. }
            | InstKind::Dma { dst, .. } => dst,
        }
    }

    /// The source accesses, in operand order.
    pub fn srcs(&self) -> impl Iterator<Item = &Access> + '_ {
        let (first, second, rest): (_, _, &[Access]) = match self {
            InstKind::Matmul(m) => (Some(&m.stationary), Some(&m.moving), &[]),
            InstKind::Copy { src, .. } | InstKind::Dma { src, .. } => (Some(src), None, &[]),
            InstKind::Memset { .. } => (None, None, &[]),
            InstKind::Act { srcs, .. } | InstKind::Engine { srcs, .. } => (None, None, srcs),
        };
        first.into_iter().chain(second).chain(rest)
    }

    /// Mutable source accesses, in operand order.
    pub fn srcs_mut(&mut self) -> Vec<&mut Access> {
        match self {
            InstKind::Matmul(m) => vec![&mut m.stationary, &mut m.moving],
            InstKind::Copy { src, .. } | InstKind::Dma { src, .. } => vec![src],
            InstKind::Memset { .. } => Vec::new(),
            InstKind::Act { srcs, .. } | InstKind::Engine { srcs, .. } => srcs.iter_mut().collect(),
        }
    }

    /// Calls `f` on each source access in operand order, without the
    /// allocation of [`InstKind::srcs`] (for per-instruction hot loops).
    pub fn for_each_src(&self, mut f: impl FnMut(&Access)) {
        match self {
            InstKind::Matmul(m) => {
                f(&m.stationary);
                f(&m.moving);
            }
            InstKind::Copy { src, .. } | InstKind::Dma { src, .. } => f(src),
            InstKind::Memset { .. } => {}
            InstKind::Act { srcs, .. } | InstKind::Engine { srcs, .. } => srcs.iter().for_each(f),
        }
    }

    /// Calls `f` on each mutable source access in operand order, without
    /// the allocation of [`InstKind::srcs_mut`].
    pub fn for_each_src_mut(&mut self, mut f: impl FnMut(&mut Access)) {
        match self {
            InstKind::Matmul(m) => {
                f(&mut m.stationary);
                f(&mut m.moving);
            }
            InstKind::Copy { src, .. } | InstKind::Dma { src, .. } => f(src),
            InstKind::Memset { .. } => {}
            InstKind::Act { srcs, .. } | InstKind::Engine { srcs, .. } => {
                srcs.iter_mut().for_each(f)
            }
        }
    }

    /// The matmul payload, if this is a matmul-family instruction.
    pub fn as_matmul(&self) -> Option<&Matmul> {
        match self {
            InstKind::Matmul(m) => Some(m),
            _ => None,
        }
    }

    /// The mnemonic used in the text format.
    pub fn mnemonic(&self) -> &'static str {
        match self {
            InstKind::Matmul(m) => m.kind.mnemonic(),
            InstKind::Copy { .. } => "copy",
            InstKind::Memset { .. } => "memset",
            InstKind::Act { .. } => "act",
            InstKind::Engine { .. } => "engine",
            InstKind::Dma { .. } => "dma",
        }
    }
}

/// One instruction: an optional label, what it does, an optional
/// ordering edge (`after=%L`, SPEC §4.2) and an optional kernel source
/// location (`loc="FILE:LINE"`, SPEC §2.3).
///
/// The label, the edge and the location are boxed together so that an
/// instruction with none of them (the common case) is 80 bytes and owns no
/// heap memory; read them with [`Inst::label`], [`Inst::after`] and
/// [`Inst::loc`]. Serializes as `{label, kind, after, loc}`.
#[derive(Clone, PartialEq, Deserialize)]
#[serde(from = "InstFields<InstKind, String>")]
pub struct Inst {
    /// The operation.
    pub kind: InstKind,
    /// The label, the ordering edge and the location; canonical: `None` when all are absent.
    labels: Option<Box<Labels>>,
}

const _: () = assert!(std::mem::size_of::<Inst>() == 80);

/// The boxed names of an [`Inst`]; never all `None`.
#[derive(Clone, Default, PartialEq)]
struct Labels {
    label: Option<String>,
    after: Option<String>,
    loc: Option<String>,
}

impl Labels {
    /// Boxes the names, or `None` when all are absent.
    fn boxed(names: Labels) -> Option<Box<Labels>> {
        (names.label.is_some() || names.after.is_some() || names.loc.is_some())
            .then(|| Box::new(names))
    }
}

/// The serde form of an [`Inst`]: owned when deserializing, borrowed when
/// serializing.
#[derive(Serialize, Deserialize)]
#[serde(rename = "Inst")]
struct InstFields<K, S> {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    label: Option<S>,
    kind: K,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    after: Option<S>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    loc: Option<S>,
}

impl From<InstFields<InstKind, String>> for Inst {
    fn from(f: InstFields<InstKind, String>) -> Self {
        Inst {
            kind: f.kind,
            labels: Labels::boxed(Labels {
                label: f.label,
                after: f.after,
                loc: f.loc,
            }),
        }
    }
}

impl Serialize for Inst {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let fields = InstFields {
            label: self.label(),
            kind: &self.kind,
            after: self.after(),
            loc: self.loc(),
        };
        fields.serialize(s)
    }
}

impl fmt::Debug for Inst {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Inst");
        d.field("label", &self.label())
            .field("kind", &self.kind)
            .field("after", &self.after());
        if let Some(loc) = self.loc() {
            d.field("loc", &loc);
        }
        d.finish()
    }
}

impl Inst {
    /// An unlabelled instruction with no ordering edge.
    pub fn new(kind: InstKind) -> Self {
        Inst { kind, labels: None }
    }

    /// The label without `%` (`a.0.1`), if any.
    pub fn label(&self) -> Option<&str> {
        self.labels.as_ref()?.label.as_deref()
    }

    /// Label of an instruction this one must be ordered after, if any.
    pub fn after(&self) -> Option<&str> {
        self.labels.as_ref()?.after.as_deref()
    }

    /// The kernel source location (`kernel.py:42`) of a traced instruction, if any.
    pub fn loc(&self) -> Option<&str> {
        self.labels.as_ref()?.loc.as_deref()
    }

    /// Replaces one of the boxed names.
    fn edit_labels(&mut self, f: impl FnOnce(&mut Labels)) {
        let mut names = self.labels.take().map(|b| *b).unwrap_or_default();
        f(&mut names);
        self.labels = Labels::boxed(names);
    }

    /// Replaces the label.
    pub fn set_label(&mut self, label: Option<String>) {
        self.edit_labels(|n| n.label = label);
    }

    /// Replaces the ordering edge.
    pub fn set_after(&mut self, after: Option<String>) {
        self.edit_labels(|n| n.after = after);
    }

    /// Replaces the kernel source location.
    pub fn set_loc(&mut self, loc: Option<String>) {
        self.edit_labels(|n| n.loc = loc);
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;

    /// An instruction's boxed names serialize and debug as the four fields
    /// `{label, kind, after, loc}`, and stay canonical so that equality
    /// ignores how they were set.
    #[test]
    fn inst_names_serde_debug_canonical() {
        let kind = InstKind::Memset {
            dst: Access::rect(TensorId(0), 0, 1, 0, 4),
            value: 0.0,
        };
        let plain = Inst::new(kind.clone());
        let mut inst = plain.clone();
        inst.set_after(Some("a".into()));
        assert_eq!((inst.label(), inst.after()), (None, Some("a")));
        let json = serde_json::to_string(&inst).unwrap();
        assert!(json.starts_with(r#"{"kind":"#) && json.ends_with(r#","after":"a"}"#));
        assert_eq!(serde_json::from_str::<Inst>(&json).unwrap(), inst);
        inst.set_label(Some("x.1".into()));
        let json = serde_json::to_string(&inst).unwrap();
        assert!(json.starts_with(r#"{"label":"x.1","kind":"#));
        assert_eq!(serde_json::from_str::<Inst>(&json).unwrap(), inst);
        assert_eq!(
            format!("{inst:?}"),
            format!("Inst {{ label: Some(\"x.1\"), kind: {kind:?}, after: Some(\"a\") }}")
        );
        inst.set_after(None);
        inst.set_label(None);
        assert_eq!(inst, plain);
        assert_eq!(
            format!("{inst:?}"),
            format!("Inst {{ label: None, kind: {kind:?}, after: None }}")
        );
        assert!(!serde_json::to_string(&inst).unwrap().contains("label"));
    }

    #[test]
    fn flagset_display_and_isa_byte() {
        let s = FlagSet {
            start: true,
            acc: true,
            stop: true,
        };
        assert_eq!(s.to_string(), "start|acc|stop");
        assert_eq!(s.isa_byte(), 7);
        assert_eq!(FlagSet::NONE.to_string(), "none");
        let stop = FlagSet {
            stop: true,
            ..FlagSet::NONE
        };
        assert_eq!(stop.isa_byte(), 2);
    }
}
