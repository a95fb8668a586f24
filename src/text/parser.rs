//! Recursive-descent parser for the text format (SPEC §2.1–2.3).
//!
//! Grammar (newlines are whitespace):
//! ```text
//! module  := 'arch' NAME decl* block+
//! decl    := MEM NAME '[' INT ',' INT ']' DTYPE? (NAME '=' (INT | STRING | NAME))*
//! block   := 'block' NAME '{' stmt* '}'
//! stmt    := 'loop' NAME INT '..' INT 'affine'? '{' stmt* '}' | (LABEL ':')? inst
//! inst    := MNEMONIC access ('<-' access (',' access)* | '=' NUMBER) attr*
//! access  := NAME ('[' affine ':' affine ',' affine ':' affine ']')?
//! affine  := ('-'|'+')? term (('+'|'-') term)*
//! term    := INT | VAR | INT '*' VAR | VAR '*' INT
//! attr    := NAME '=' ...   (tile=RxC pos=R,C flags=F zr=N after=%L loc="FILE:LINE")
//! ```

use super::lexer::{small_int, Lexer, Tok};
use super::{
    narrow, InstEntry, LoopSpans, OperandEntry, ParseError, Parsed, SourceMap, Span, Tile,
};
use crate::ir::MAX_LOOP_DEPTH;
use crate::ir::{
    Access, Affine, Attr, Block, DType, FlagSet, Flags, Inst, InstId, InstKind, Loop, Matmul,
    MatmulKind, Mem, Module, Stmt, Tensor, TensorId, VarId,
};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

mod split;

/// FNV-1a over a name's bytes: the tensor table is looked up once per
/// operand, and names are short, so a keyed hash would cost more than the
/// parse around it (the input is the user's own program).
#[derive(Default)]
struct NameHasher(u64);

impl Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type PResult<T> = Result<T, ParseError>;

/// Each tensor's id, partition count and byte count, by name.
type Names<'a> = HashMap<&'a str, (TensorId, u32, u32), BuildHasherDefault<NameHasher>>;

/// Parser state: the token cursor, the module under construction, its
/// source map, the tensor names and the loop variables in scope.
pub(super) struct Parser<'a> {
    lex: Lexer<'a>,
    tok: Tok<'a>,
    span: Span,
    /// End of the previously consumed token.
    prev_end: usize,
    module: Module,
    map: SourceMap,
    /// Whether `map` records spans; without, it keeps only the `tile=`
    /// attributes, which validation needs.
    spans: bool,
    tensors: Names<'a>,
    scope: Vec<(&'a str, VarId)>,
    /// For the first of two parsers ([`split`]): where its blocks stop.
    stop: Option<split::StopAt>,
}

fn mem_of(s: &str) -> Option<Mem> {
    match s {
        "psum" => Some(Mem::Psum),
        "sbuf" => Some(Mem::Sbuf),
        "dram" => Some(Mem::Dram),
        _ => None,
    }
}

fn dtype_of(s: &str) -> Option<DType> {
    DType::from_keyword(s)
}

fn matmul_kind_of(s: &str) -> Option<MatmulKind> {
    match s {
        "matmul" => Some(MatmulKind::Plain),
        "matmul.sparse" => Some(MatmulKind::Sparse),
        "matmul.mx" => Some(MatmulKind::Mx),
        "matmul.t" => Some(MatmulKind::Transpose),
        _ => None,
    }
}

/// Operands of an instruction before it is assembled.
enum Rhs {
    Sources(Vec<Access>),
    Value(f64),
}

/// Instruction attributes as parsed.
#[derive(Default)]
struct InstAttrs {
    after: Option<String>,
    loc: Option<String>,
    tile: Option<Tile>,
    pos: Option<(u32, u32)>,
    flags: Option<Flags>,
    zr: Option<u32>,
    accumulate: Option<bool>,
}

impl<'a> Parser<'a> {
    /// A parser of `src` that records the source map's spans when `spans`.
    pub(super) fn new(src: &'a str, spans: bool) -> Self {
        // Room for an instruction per 48 bytes of text (printed programs
        // take 60 to 80), so that the large vectors are not copied as they
        // grow; room never written is never touched.
        let insts = src.len() / 48;
        let mut module = Module::default();
        module.insts.reserve(insts);
        let mut map = SourceMap::default();
        if spans {
            map.insts.reserve(insts);
            map.operands.reserve(3 * insts);
        }
        Parser {
            lex: Lexer::new(src),
            tok: Tok::Eof,
            span: Span::default(),
            prev_end: 0,
            module,
            map,
            spans,
            tensors: HashMap::default(),
            scope: Vec::new(),
            stop: None,
        }
    }

    fn bump(&mut self) -> PResult<(Tok<'a>, Span)> {
        let cur = (self.tok, self.span);
        self.prev_end = self.span.end;
        (self.tok, self.span) = self.lex.next_token()?;
        Ok(cur)
    }

    fn unexpected<T>(&self, expected: &str) -> PResult<T> {
        Err(ParseError::Unexpected {
            span: self.span,
            expected: expected.to_string(),
            found: self.tok.describe(),
        })
    }

    fn invalid<T>(span: Span, message: impl Into<String>) -> PResult<T> {
        Err(ParseError::Invalid {
            span,
            message: message.into(),
        })
    }

    fn expect(&mut self, want: Tok<'static>) -> PResult<Span> {
        if self.tok == want {
            Ok(self.bump()?.1)
        } else {
            self.unexpected(&want.describe())
        }
    }

    fn at_ident(&self, word: &str) -> bool {
        self.tok == Tok::Ident(word)
    }

    fn name(&mut self, what: &str) -> PResult<(&'a str, Span)> {
        match self.tok {
            Tok::Ident(s) => {
                let span = self.bump()?.1;
                Ok((s, span))
            }
            _ => self.unexpected(what),
        }
    }

    fn unsigned(&mut self, what: &str) -> PResult<(u64, Span)> {
        match self.tok {
            Tok::Num(s) => {
                let span = self.span;
                let v = s.parse::<u64>().or_else(|_| {
                    Self::invalid(
                        span,
                        format!("{what} must be a non-negative integer, got {s}"),
                    )
                })?;
                self.bump()?;
                Ok((v, span))
            }
            _ => self.unexpected(what),
        }
    }

    fn u32_(&mut self, what: &str) -> PResult<(u32, Span)> {
        let (v, span) = self.unsigned(what)?;
        let v = u32::try_from(v)
            .or_else(|_| Self::invalid(span, format!("{what} {v} is out of range")))?;
        Ok((v, span))
    }

    /// The integer literal `s` (the current token) in an affine term; as
    /// [`Parser::signed`] reads it, without its sign, by a loop over digits.
    fn integer(&mut self, s: &str) -> PResult<i64> {
        match small_int(s.as_bytes()) {
            Some(v) => {
                self.bump()?;
                Ok(v)
            }
            None => self.signed("integer").map(|(v, _)| v),
        }
    }

    /// An optionally negative integer (loop bounds).
    fn signed(&mut self, what: &str) -> PResult<(i64, Span)> {
        let start = self.span;
        let neg = self.tok == Tok::Minus;
        if neg {
            self.bump()?;
        }
        let (v, span) = self.unsigned(what)?;
        let span = start.to(span);
        let v = i64::try_from(v)
            .ok()
            .map(|v| if neg { -v } else { v })
            .map_or_else(
                || Self::invalid(span, format!("{what} is out of range")),
                Ok,
            )?;
        Ok((v, span))
    }

    /// The whole module, on one thread.
    pub(super) fn module(mut self) -> PResult<Parsed> {
        self.header()?;
        self.blocks()
    }

    /// `arch` and the declarations.
    fn header(&mut self) -> PResult<()> {
        let len = self.lex.len();
        if u32::try_from(len).is_err() {
            return Self::invalid(
                Span::new(0, 0),
                format!("input of {len} bytes is larger than the 4 GiB psum reads"),
            );
        }
        self.bump()?;
        if !self.at_ident("arch") {
            return self.unexpected("'arch'");
        }
        self.bump()?;
        let (arch, span) = self.name("an architecture name")?;
        self.module.arch = arch.to_string();
        if self.spans {
            self.map.arch = span;
        }
        while let Tok::Ident(w) = self.tok {
            match mem_of(w) {
                Some(mem) => self.decl(mem)?,
                None => break,
            }
        }
        Ok(())
    }

    /// The blocks, to the end of the input.
    fn blocks(self) -> PResult<Parsed> {
        if !self.at_ident("block") {
            return self.unexpected("a declaration ('psum', 'sbuf', 'dram') or 'block'");
        }
        self.more_blocks()
    }

    /// Any further blocks, then the end of the input.
    fn more_blocks(mut self) -> PResult<Parsed> {
        while self.at_ident("block") {
            self.block()?;
        }
        if self.tok != Tok::Eof {
            return self.unexpected("'block' or end of input");
        }
        Ok(Parsed {
            module: self.module,
            source_map: self.map,
        })
    }

    fn decl(&mut self, mem: Mem) -> PResult<()> {
        self.bump()?;
        let (name, name_span) = self.name("a tensor name")?;
        self.expect(Tok::LBracket)?;
        let (partitions, _) = self.u32_("partition count")?;
        self.expect(Tok::Comma)?;
        let (bytes, _) = self.u32_("byte count")?;
        self.expect(Tok::RBracket)?;
        let mut t = Tensor::new(name, mem, partitions, bytes, DType::F32);
        if let Some(d) = match self.tok {
            Tok::Ident(w) => dtype_of(w),
            _ => None,
        } {
            t.dtype = d;
            self.bump()?;
        }
        while matches!(self.tok, Tok::Ident(_)) && self.lex.next_byte() == Some(b'=') {
            let (attr, span) = self.name("an attribute")?;
            self.bump()?;
            match attr {
                "bank" if t.bank.is_none() => t.bank = Some(self.u32_("bank")?.0),
                "addr" if t.addr.is_none() => t.addr = Some(self.unsigned("addr")?.0),
                "loc" if t.loc.is_none() => t.loc = Some(self.string("a location")?),
                "scope" if t.scope.is_none() => {
                    t.scope = Some(self.name("a loop variable name")?.0.to_string())
                }
                "bank" | "addr" | "loc" | "scope" => {
                    return Self::invalid(span, format!("duplicate attribute '{attr}'"))
                }
                _ => {
                    return Self::invalid(
                        span,
                        format!(
                            "unknown declaration attribute '{attr}' (expected 'bank' or 'addr')"
                        ),
                    )
                }
            }
        }
        let shape = (t.partitions, t.bytes);
        let id = self.module.add_tensor(t);
        self.tensors.entry(name).or_insert((id, shape.0, shape.1));
        if self.spans {
            self.map.tensors.push(name_span);
        }
        Ok(())
    }

    fn block(&mut self) -> PResult<()> {
        let start = self.bump()?.1;
        let (name, name_span) = self.name("a block name")?;
        self.expect(Tok::LBrace)?;
        let body = self.body("block", name, start.to(name_span))?;
        self.module.blocks.push(Block {
            name: name.to_string(),
            body,
        });
        Ok(())
    }

    /// Statements up to and including the closing `}`.
    fn body(&mut self, what: &'static str, name: &str, open: Span) -> PResult<Vec<Stmt>> {
        let mut body = Vec::new();
        loop {
            if what == "block" && self.at_boundary()? {
                return Ok(body);
            }
            match self.tok {
                Tok::RBrace => {
                    self.bump()?;
                    return Ok(body);
                }
                // A statement never starts with `block`: the `}` was forgotten.
                Tok::Eof | Tok::Ident("block") => {
                    return Err(ParseError::Unterminated {
                        span: open,
                        what,
                        name: name.to_string(),
                        at: self.tok.describe(),
                    })
                }
                Tok::Ident("loop") => body.push(self.loop_()?),
                _ => body.push(Stmt::Inst(self.inst()?)),
            }
        }
    }

    fn loop_(&mut self) -> PResult<Stmt> {
        let start = self.bump()?.1;
        if self.scope.len() >= MAX_LOOP_DEPTH {
            return Self::invalid(start, format!("loops nested deeper than {MAX_LOOP_DEPTH}"));
        }
        let (name, name_span) = self.name("a loop variable name")?;
        if self.scope.iter().any(|(n, _)| *n == name) {
            return Err(ParseError::ShadowedVar {
                span: name_span,
                name: name.to_string(),
            });
        }
        let (lo, lo_span) = self.signed("loop lower bound")?;
        self.expect(Tok::DotDot)?;
        let (hi, hi_span) = self.signed("loop upper bound")?;
        let affine = self.tok == Tok::Ident("affine");
        let header_end = if affine { self.bump()?.1 } else { hi_span };
        self.expect(Tok::LBrace)?;
        let var = self.module.add_var(name);
        let id = self.module.add_loop(Loop {
            var,
            lo,
            hi,
            affine,
            body: Vec::new(),
        });
        if self.spans {
            self.map.loops.push(LoopSpans {
                header: start.to(header_end),
                range: lo_span.to(hi_span),
            });
        }
        self.scope.push((name, var));
        let body = self.body("loop", name, start.to(name_span))?;
        self.scope.pop();
        self.module.loops[id].body = body;
        Ok(Stmt::Loop(id))
    }

    fn inst(&mut self) -> PResult<InstId> {
        let start = self.span;
        let (first_operand, first_attr) = (self.map.operands.len(), self.map.attrs.len());
        let label = if let Tok::Label(l) = self.tok {
            let span = self.bump()?.1;
            self.expect(Tok::Colon)?;
            self.attr(Attr::Label, span);
            Some(l.to_string())
        } else {
            None
        };
        let (mnemonic, mn_span) = match self.tok {
            Tok::Ident(w) => (w, self.span),
            _ => return self.unexpected("an instruction, 'loop' or '}'"),
        };
        let kind_tag = matmul_kind_of(mnemonic).map(Some).or(match mnemonic {
            "copy" | "memset" | "act" | "engine" | "dma" => Some(None),
            _ => None,
        });
        let Some(matmul_kind) = kind_tag else {
            return self.unexpected("an instruction (matmul, matmul.sparse, matmul.mx, matmul.t, copy, memset, act, dma), 'loop' or '}'");
        };
        self.bump()?;
        let dst = self.access()?;
        let rhs = if mnemonic == "memset" {
            self.expect(Tok::Eq)?;
            let (v, span) = self.number()?;
            self.attr(Attr::Value, span);
            Rhs::Value(v)
        } else {
            self.expect(Tok::Arrow)?;
            let mut srcs = Vec::with_capacity(2);
            srcs.push(self.access()?);
            while self.tok == Tok::Comma {
                self.bump()?;
                srcs.push(self.access()?);
            }
            Rhs::Sources(srcs)
        };
        let at = self.attributes(matmul_kind.is_some())?;
        let kind = match (rhs, matmul_kind) {
            (Rhs::Value(value), _) => InstKind::Memset { dst, value },
            (Rhs::Sources(srcs), Some(kind)) => {
                let [stationary, moving] = <[Access; 2]>::try_from(srcs).or_else(|s| {
                    Self::invalid(
                        mn_span,
                        format!(
                            "'{mnemonic}' takes 2 sources (stationary, moving), got {}",
                            s.len()
                        ),
                    )
                })?;
                InstKind::Matmul(Box::new(Matmul {
                    kind,
                    dst,
                    stationary,
                    moving,
                    pos: at.pos.unwrap_or((0, 0)),
                    flags: at.flags.unwrap_or(Flags::Auto),
                    zr: at.zr,
                    accumulate: at.accumulate,
                }))
            }
            (Rhs::Sources(srcs), None) if mnemonic == "act" => InstKind::Act { dst, srcs },
            (Rhs::Sources(srcs), None) if mnemonic == "engine" => InstKind::Engine { dst, srcs },
            (Rhs::Sources(srcs), None) => {
                let [src] = <[Access; 1]>::try_from(srcs).or_else(|s| {
                    Self::invalid(
                        mn_span,
                        format!("'{mnemonic}' takes 1 source, got {}", s.len()),
                    )
                })?;
                if mnemonic == "copy" {
                    InstKind::Copy { dst, src }
                } else {
                    InstKind::Dma { dst, src }
                }
            }
        };
        let mut inst = Inst::new(kind);
        inst.set_label(label);
        inst.set_after(at.after);
        inst.set_loc(at.loc);
        let id = self.module.add_inst(inst);
        if self.spans {
            self.map.insts.push(InstEntry {
                span: narrow(start.to(Span::new(start.start, self.prev_end))),
                operands: first_operand as u32,
                attrs: first_attr as u32,
            });
        }
        if let Some(tile) = at.tile {
            self.map.tiles.push((id, tile));
        }
        Ok(id)
    }

    /// Trailing `NAME=VALUE` attributes; records each one's span in the
    /// source map.
    fn attributes(&mut self, is_matmul: bool) -> PResult<InstAttrs> {
        let mut at = InstAttrs::default();
        let mut seen = 0u16;
        while matches!(self.tok, Tok::Ident(_)) && self.lex.next_byte() == Some(b'=') {
            let (name, name_span) = self.name("an attribute")?;
            self.bump()?;
            let key = match name {
                "after" => {
                    let Tok::Label(l) = self.tok else {
                        return self.unexpected("a label ('%NAME')");
                    };
                    at.after = Some(l.to_string());
                    self.bump()?;
                    Attr::After
                }
                "loc" => {
                    at.loc = Some(self.string("a location")?);
                    Attr::Loc
                }
                "tile" => {
                    let t = self.tile()?;
                    at.tile = Some(Tile {
                        span: name_span.to(t.span),
                        ..t
                    });
                    Attr::Tile
                }
                "pos" => {
                    let (r, _) = self.u32_("PE row")?;
                    self.expect(Tok::Comma)?;
                    let (c, _) = self.u32_("PE column")?;
                    at.pos = Some((r, c));
                    Attr::Pos
                }
                "flags" => {
                    at.flags = Some(self.flags()?);
                    Attr::Flags
                }
                "zr" => {
                    at.zr = Some(self.u32_("zero-region width")?.0);
                    Attr::Zr
                }
                "accumulate" => {
                    at.accumulate = Some(match self.name("true or false")? {
                        ("true", _) => true,
                        ("false", _) => false,
                        (w, span) => {
                            return Self::invalid(
                                span,
                                format!("accumulate={w}: expected true or false"),
                            )
                        }
                    });
                    Attr::Accumulate
                }
                _ => {
                    return Self::invalid(
                        name_span,
                        format!(
                            "unknown attribute '{name}' (expected tile, pos, flags, zr or after)"
                        ),
                    )
                }
            };
            if !matches!(key, Attr::After | Attr::Loc) && !is_matmul {
                return Self::invalid(
                    name_span,
                    format!("attribute '{name}' is only valid on matmul instructions"),
                );
            }
            if seen & 1 << key as u16 != 0 {
                return Self::invalid(name_span, format!("duplicate attribute '{name}'"));
            }
            seen |= 1 << key as u16;
            let span = name_span.to(Span::new(name_span.start, self.prev_end));
            self.attr(key, span);
        }
        Ok(at)
    }

    fn tile(&mut self) -> PResult<Tile> {
        let (rows, span) = self.u32_("tile rows")?;
        let cols = match self.tok {
            Tok::Ident(w) if w.len() > 1 && w.starts_with('x') => w[1..].parse::<u32>().ok(),
            _ => None,
        };
        let Some(cols) = cols else {
            return self.unexpected("'xC' (tile=RxC)");
        };
        let end = self.bump()?.1;
        Ok(Tile {
            rows,
            cols,
            span: span.to(end),
        })
    }

    /// A `"TEXT"` string (attribute values such as `loc="kernel.py:42"`).
    fn string(&mut self, what: &str) -> PResult<String> {
        match self.tok {
            Tok::Str(s) => {
                self.bump()?;
                Ok(s.to_string())
            }
            _ => self.unexpected(&format!("{what} (a \"quoted\" string)")),
        }
    }

    fn flags(&mut self) -> PResult<Flags> {
        let mut set = FlagSet::NONE;
        let mut auto = false;
        let mut none = false;
        loop {
            let (w, span) = self.name("a flag (auto, none, start, acc, stop)")?;
            match w {
                "auto" => auto = true,
                "none" => none = true,
                "start" => set.start = true,
                "acc" => set.acc = true,
                "stop" => set.stop = true,
                _ => {
                    return Self::invalid(
                        span,
                        format!("unknown flag '{w}' (expected auto, none, start, acc or stop)"),
                    )
                }
            }
            if (auto || none) && (set != FlagSet::NONE || (auto && none)) {
                return Self::invalid(
                    span,
                    "'auto' and 'none' cannot be combined with other flags",
                );
            }
            if self.tok != Tok::Pipe {
                break;
            }
            self.bump()?;
        }
        Ok(if auto { Flags::Auto } else { Flags::Set(set) })
    }

    /// A memset value: an optionally negative int or float.
    fn number(&mut self) -> PResult<(f64, Span)> {
        let start = self.span;
        let neg = self.tok == Tok::Minus;
        if neg {
            self.bump()?;
        }
        match self.tok {
            Tok::Num(s) => {
                let span = start.to(self.span);
                let v: f64 = s
                    .parse()
                    .or_else(|_| Self::invalid(span, format!("bad number {s}")))?;
                if !v.is_finite() {
                    return Self::invalid(span, format!("number {s} is out of range"));
                }
                self.bump()?;
                Ok((if neg { -v } else { v }, span))
            }
            _ => self.unexpected("a number"),
        }
    }

    /// Records where an operand is, when spans are recorded.
    fn operand(&mut self, e: OperandEntry) {
        if self.spans {
            self.map.operands.push(e);
        }
    }

    /// Records where an attribute is, when spans are recorded.
    fn attr(&mut self, key: Attr, span: Span) {
        if self.spans {
            self.map.attrs.push((key, span));
        }
    }

    fn access(&mut self) -> PResult<Access> {
        let (name, name_span) = self.name("a tensor name")?;
        let Some(&(tensor, partitions, bytes)) = self.tensors.get(name) else {
            return Err(ParseError::UndefinedTensor {
                span: name_span,
                name: name.to_string(),
            });
        };
        if self.tok != Tok::LBracket {
            self.operand(OperandEntry {
                span: narrow(name_span),
                bounds: None,
            });
            return Ok(Access::rect(tensor, 0, partitions.into(), 0, bytes.into()));
        }
        if let Some((consts, bounds, close)) = self.lex.constant_bounds() {
            self.lex.seek(close.end);
            (self.tok, self.span) = (Tok::RBracket, close);
            self.bump()?;
            self.operand(OperandEntry {
                span: narrow(name_span.to(close)),
                bounds: Some(bounds.map(narrow)),
            });
            return Ok(Access::from_consts(tensor, consts));
        }
        self.bump()?;
        let (p0, s0) = self.affine()?;
        self.expect(Tok::Colon)?;
        let (p1, s1) = self.affine()?;
        self.expect(Tok::Comma)?;
        let (b0, s2) = self.affine()?;
        self.expect(Tok::Colon)?;
        let (b1, s3) = self.affine()?;
        let end = self.expect(Tok::RBracket)?;
        self.operand(OperandEntry {
            span: narrow(name_span.to(end)),
            bounds: Some([s0, s1, s2, s3].map(narrow)),
        });
        Ok(Access::new(tensor, p0, p1, b0, b1))
    }

    fn affine(&mut self) -> PResult<(Affine, Span)> {
        let start = self.span;
        let mut a = Affine::constant(0);
        let mut sign = 1i64;
        if matches!(self.tok, Tok::Minus | Tok::Plus) {
            sign = if self.tok == Tok::Minus { -1 } else { 1 };
            self.bump()?;
        }
        loop {
            self.term(&mut a, sign, start)?;
            sign = match self.tok {
                Tok::Plus => 1,
                Tok::Minus => -1,
                _ => break,
            };
            self.bump()?;
        }
        let span = start.to(Span::new(start.start, self.prev_end));
        Ok((a, span))
    }

    fn var(&mut self) -> PResult<VarId> {
        let (name, span) = self.name("a loop variable")?;
        self.scope
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|&(_, v)| v)
            .ok_or_else(|| ParseError::UnknownVar {
                span,
                name: name.to_string(),
            })
    }

    /// One `INT`, `VAR`, `INT*VAR` or `VAR*INT`, added to `a` times `sign`.
    fn term(&mut self, a: &mut Affine, sign: i64, start: Span) -> PResult<()> {
        let overflow = |p: &Self| {
            Self::invalid(
                start.to(Span::new(start.start, p.prev_end)),
                "integer overflow in expression",
            )
        };
        let (coef, var) = match self.tok {
            Tok::Num(s) => {
                let c = self.integer(s)?;
                if self.tok == Tok::Star {
                    self.bump()?;
                    (c, Some(self.var()?))
                } else {
                    (c, None)
                }
            }
            Tok::Ident(_) => {
                let v = self.var()?;
                if self.tok == Tok::Star {
                    self.bump()?;
                    (self.signed("integer")?.0, Some(v))
                } else {
                    (1, Some(v))
                }
            }
            _ => return self.unexpected("an integer or a loop variable"),
        };
        let coef = coef * sign;
        match var {
            None => match a.constant.checked_add(coef) {
                Some(c) => a.constant = c,
                None => return overflow(self),
            },
            Some(v) => {
                let old = a.terms.iter().find(|t| t.0 == v).map_or(0, |t| t.1);
                if old.checked_add(coef).is_none() {
                    return overflow(self);
                }
                a.add_term(v, coef);
            }
        }
        Ok(())
    }
}
