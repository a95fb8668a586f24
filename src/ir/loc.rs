//! Places in a module that a diagnostic points at.

use super::{Bound, InstId, LoopId, TensorId};

/// A place in a module that a diagnostic points at; the text front end
/// resolves it to a source span ([`crate::text::SourceMap::span`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Loc {
    /// The module as a whole (no better place).
    Module,
    /// The `arch` line's codename.
    Arch,
    /// A tensor declaration.
    Tensor(TensorId),
    /// An instruction.
    Inst(InstId),
    /// An operand access of an instruction: 0 is the destination, then the
    /// sources in [`InstKind::srcs`](super::InstKind::srcs) order.
    Operand(InstId, usize),
    /// One bound of an operand access.
    Bound(InstId, usize, Bound),
    /// An attribute of an instruction.
    Attr(InstId, Attr),
    /// A loop header.
    Loop(LoopId),
    /// A loop's `LO..HI` range.
    LoopRange(LoopId),
}

/// An instruction attribute a diagnostic can point at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Attr {
    /// `tile=RxC`.
    Tile,
    /// `pos=R,C`.
    Pos,
    /// `flags=F`.
    Flags,
    /// `zr=N`.
    Zr,
    /// `after=%L`.
    After,
    /// The label `%L:`.
    Label,
    /// A memset's value.
    Value,
    /// `loc="FILE:LINE"`.
    Loc,
    /// `accumulate=true|false`.
    Accumulate,
}
