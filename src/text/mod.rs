//! The text format (SPEC §2, §2.5): [`parse`] reads a module and a
//! [`SourceMap`] of byte spans ([`parse_module`] the module alone),
//! [`print`](fn@print) writes the canonical form, and
//! [`parse_json`]/[`to_json`] are the serde form (`--emit json`).
//!
//! The parser is hand-written recursive descent over its lexer. It
//! resolves tensor and loop-variable names; everything else about a
//! program's meaning is checked by [`crate::validate`].

pub(crate) mod lexer;
mod names;
mod parser;
mod printer;

use crate::ir::{Attr, Bound, InstId, Loc, LoopId, Module, TensorId};
use serde::{Deserialize, Serialize};

pub(crate) use names::InstNames;
pub use printer::{access_to_string, inst_to_string};

/// A byte range `[start, end)` in the source text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Span {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl Span {
    /// The span `[start, end)`.
    pub(crate) fn new(start: usize, end: usize) -> Self {
        Span { start, end }
    }

    /// The smallest span covering both.
    pub(crate) fn to(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }
}

/// Where an operand access is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessSpans {
    /// The whole access (`x[0:128, 0:64]`).
    pub span: Span,
    /// The four bounds in [`Bound::ALL`] order; `None` for a bare name.
    pub bounds: Option<[Span; 4]>,
}

/// A `tile=RxC` attribute as written (not stored in the IR, SPEC §2.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tile {
    /// PE rows (must equal K).
    pub rows: u32,
    /// PE columns (must equal M).
    pub cols: u32,
    /// Where it was written.
    pub span: Span,
}

/// Where an instruction is, and where its operands and attributes start in
/// [`SourceMap`]'s shared vectors (each run ends where the next
/// instruction's starts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct InstEntry {
    span: [u32; 2],
    operands: u32,
    attrs: u32,
}

/// An [`AccessSpans`] in 32-bit offsets; `None` bounds for a bare name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct OperandEntry {
    span: [u32; 2],
    bounds: Option<[[u32; 2]; 4]>,
}

/// Where a loop is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopSpans {
    /// `loop VAR LO..HI`.
    pub header: Span,
    /// `LO..HI`.
    pub range: Span,
}

/// Source positions of a parsed module, indexed by the module's entity ids.
///
/// Flat and in 32-bit offsets (inputs are at most 4 GiB): one entry per
/// instruction, its operands and attributes in runs of two shared vectors,
/// and the rare `tile=` attributes in a list of their own, so that a
/// program of millions of instructions costs tens of bytes per instruction
/// here.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceMap {
    /// The codename on the `arch` line.
    pub arch: Span,
    /// The name in each declaration, per [`TensorId`].
    pub tensors: Vec<Span>,
    /// Per [`InstId`].
    insts: Vec<InstEntry>,
    operands: Vec<OperandEntry>,
    /// The label, the `NAME=VALUE` attributes and a memset value of each instruction.
    attrs: Vec<(Attr, Span)>,
    /// Every `tile=RxC`, in instruction order.
    tiles: Vec<(InstId, Tile)>,
    /// Per [`LoopId`].
    pub loops: Vec<LoopSpans>,
}

/// A span from its 32-bit form.
fn widen([start, end]: [u32; 2]) -> Span {
    Span::new(start as usize, end as usize)
}

/// A span in its 32-bit form; the parser refuses inputs beyond 4 GiB.
fn narrow(s: Span) -> [u32; 2] {
    [s.start as u32, s.end as u32]
}

impl SourceMap {
    /// The span of a tensor declaration's name.
    pub(crate) fn tensor(&self, t: TensorId) -> Option<Span> {
        self.tensors.get(t.index()).copied()
    }

    /// The span of an instruction.
    pub fn inst(&self, i: InstId) -> Option<Span> {
        self.insts.get(i.index()).map(|e| widen(e.span))
    }

    /// Index ranges of instruction `i`'s operands and attributes.
    fn runs(&self, i: InstId) -> Option<(std::ops::Range<usize>, std::ops::Range<usize>)> {
        let e = self.insts.get(i.index())?;
        let (ops_end, attrs_end) = match self.insts.get(i.index() + 1) {
            Some(next) => (next.operands as usize, next.attrs as usize),
            None => (self.operands.len(), self.attrs.len()),
        };
        Some((e.operands as usize..ops_end, e.attrs as usize..attrs_end))
    }

    /// Where operand `k` of instruction `i` is (0 the destination, then the sources).
    pub fn operand(&self, i: InstId, k: usize) -> Option<AccessSpans> {
        let (ops, _) = self.runs(i)?;
        let e = self.operands[ops].get(k)?;
        Some(AccessSpans {
            span: widen(e.span),
            bounds: e.bounds.map(|b| b.map(widen)),
        })
    }

    /// The span of attribute `attr` of instruction `i` (the label, a
    /// `NAME=VALUE`, a memset value), if written.
    pub(crate) fn attr(&self, i: InstId, attr: Attr) -> Option<Span> {
        let (_, attrs) = self.runs(i)?;
        self.attrs[attrs]
            .iter()
            .find(|(a, _)| *a == attr)
            .map(|&(_, s)| s)
    }

    /// Every `tile=RxC` attribute as written, in instruction order.
    pub fn tiles(&self) -> &[(InstId, Tile)] {
        &self.tiles
    }

    /// The span of a loop header.
    pub(crate) fn loop_(&self, l: LoopId) -> Option<Span> {
        self.loops.get(l.index()).map(|s| s.header)
    }

    /// The span a diagnostic at `loc` points at, falling back to the
    /// enclosing entity when the exact part was not written (a bare name
    /// has no bounds; an attribute may be absent).
    pub fn span(&self, loc: Loc) -> Option<Span> {
        match loc {
            Loc::Module => None,
            Loc::Arch => Some(self.arch),
            Loc::Tensor(t) => self.tensor(t),
            Loc::Inst(i) => self.inst(i),
            Loc::Operand(i, k) => self.operand(i, k).map(|a| a.span).or_else(|| self.inst(i)),
            Loc::Bound(i, k, b) => {
                let a = self.operand(i, k);
                let idx = Bound::ALL.iter().position(|&x| x == b).unwrap_or(0);
                a.as_ref()
                    .and_then(|a| a.bounds.map(|bs| bs[idx]))
                    .or_else(|| a.map(|a| a.span))
                    .or_else(|| self.inst(i))
            }
            Loc::Attr(i, attr) => self.attr(i, attr).or_else(|| self.inst(i)),
            Loc::Loop(l) => self.loop_(l),
            Loc::LoopRange(l) => self.loops.get(l.index()).map(|s| s.range),
        }
    }
}

/// A parsed module with its source positions.
#[derive(Clone, Debug, PartialEq)]
pub struct Parsed {
    /// The module.
    pub module: Module,
    /// Where its parts were written.
    pub source_map: SourceMap,
}

/// Why the text (or JSON) could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// A character that starts no token.
    #[error("{message}")]
    Lex {
        /// Where.
        span: Span,
        /// What is wrong.
        message: String,
    },
    /// A token that does not fit the grammar here.
    #[error("expected {expected}, found {found}")]
    Unexpected {
        /// Where.
        span: Span,
        /// What the grammar allows here.
        expected: String,
        /// The token found.
        found: String,
    },
    /// A block or loop without its closing `}`.
    #[error("{what} '{name}' is not closed: expected '}}' before {at}")]
    Unterminated {
        /// The opening keyword and name.
        span: Span,
        /// `block` or `loop`.
        what: &'static str,
        /// The block name or loop variable.
        name: String,
        /// What came instead (`end of input`, `'block'`).
        at: String,
    },
    /// A name that no declaration introduces.
    #[error("undefined tensor '{name}'")]
    UndefinedTensor {
        /// Where.
        span: Span,
        /// The name.
        name: String,
    },
    /// A bound naming a variable of no enclosing loop.
    #[error("unknown loop variable '{name}' (not a variable of an enclosing loop)")]
    UnknownVar {
        /// Where.
        span: Span,
        /// The name.
        name: String,
    },
    /// A loop variable reusing an enclosing loop's name.
    #[error("loop variable '{name}' shadows the variable of an enclosing loop")]
    ShadowedVar {
        /// Where.
        span: Span,
        /// The name.
        name: String,
    },
    /// A well-formed construct with a bad value (range, duplicates, arity).
    #[error("{message}")]
    Invalid {
        /// Where.
        span: Span,
        /// What is wrong.
        message: String,
    },
    /// JSON input that does not describe a module.
    #[error("invalid JSON module: {message}")]
    Json {
        /// Where.
        span: Span,
        /// serde's message.
        message: String,
    },
}

impl ParseError {
    /// Where the error is.
    pub fn span(&self) -> Span {
        match self {
            ParseError::Lex { span, .. }
            | ParseError::Unexpected { span, .. }
            | ParseError::Unterminated { span, .. }
            | ParseError::UndefinedTensor { span, .. }
            | ParseError::UnknownVar { span, .. }
            | ParseError::ShadowedVar { span, .. }
            | ParseError::Invalid { span, .. }
            | ParseError::Json { span, .. } => *span,
        }
    }
}

/// Parses a module in the text format (SPEC §2).
///
/// ```
/// let src = "arch trn1\n\nsbuf x [128, 512]\n\nblock main {\n  act x <- x\n}\n";
/// let parsed = psum::text::parse(src)?;
/// assert_eq!(parsed.module.tensors.len(), 1);
/// // Canonical text prints back as it was read.
/// assert_eq!(psum::text::print(&parsed.module), src);
///
/// let err = psum::text::parse("arch trn1\n\nblock main {\n  act y <- x\n}\n").unwrap_err();
/// assert_eq!(err.to_string(), "undefined tensor 'y'");
/// # Ok::<(), psum::text::ParseError>(())
/// ```
pub fn parse(src: &str) -> Result<Parsed, ParseError> {
    parser::Parser::new(src, true).module()
}

/// A module parsed without its source map ([`parse_module`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedModule {
    /// The module.
    pub module: Module,
    /// Every `tile=RxC` as written, in instruction order (the IR does not
    /// keep them; validation checks them).
    pub tiles: Vec<(InstId, Tile)>,
}

/// [`parse`] without recording spans, which take about a third of a large
/// program's memory: the same module and the same errors, for a caller that
/// needs spans only to report an error and then parses again with [`parse`].
/// A large program is read on two threads.
pub fn parse_module(src: &str) -> Result<ParsedModule, ParseError> {
    let parsed = parser::Parser::new(src, false).module_split()?;
    Ok(ParsedModule {
        module: parsed.module,
        tiles: parsed.source_map.tiles,
    })
}

/// Prints the canonical form (SPEC §2.5); the same as `module.to_string()`.
///
/// ```
/// // Spacing, the default dtype and a whole-tensor region are canonicalized.
/// let m = psum::text::parse("arch trn1\nsbuf   x [128,512] f32\nblock main { act x <- x[0:128, 0:512] }")?.module;
/// assert_eq!(
///     psum::text::print(&m),
///     "arch trn1\n\nsbuf x [128, 512]\n\nblock main {\n  act x <- x\n}\n"
/// );
/// # Ok::<(), psum::text::ParseError>(())
/// ```
pub fn print(module: &Module) -> String {
    printer::module_to_string(module)
}

/// Writes the canonical form (SPEC §2.5) to `w` as it is printed, without
/// holding the whole text: what [`print`](fn@print) returns, in chunks.
pub fn write(module: &Module, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    printer::write_module(module, w)
}

/// Reads a module from its JSON form (the serde form of [`Module`]).
pub fn parse_json(src: &str) -> Result<Module, ParseError> {
    serde_json::from_str(src).map_err(|e| {
        let at = offset_of(src, e.line(), e.column());
        ParseError::Json {
            span: Span::new(at, at),
            message: e.to_string(),
        }
    })
}

/// Writes the JSON form to `w` as it is made, without holding it whole:
/// what [`to_json`] returns.
pub fn write_json(module: &Module, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *w, module)?;
    w.write_all(b"\n")
}

/// Writes a module as pretty-printed JSON, ending with a newline.
pub fn to_json(module: &Module) -> String {
    let mut s = serde_json::to_string_pretty(module).expect("a Module always serializes");
    s.push('\n');
    s
}

/// The byte offset of 1-based `line` and `col` (serde's convention; 0 means "none").
fn offset_of(src: &str, line: usize, col: usize) -> usize {
    let line_start: usize = src
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    (line_start + col.saturating_sub(1)).min(src.len())
}

/// 1-based line and column (in chars) of byte offset `at`.
pub fn line_col(src: &str, at: usize) -> (usize, usize) {
    let at = floor_char_boundary(src, at.min(src.len()));
    let before = &src[..at];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, src[line_start..at].chars().count() + 1)
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}
