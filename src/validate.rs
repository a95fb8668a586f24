//! Validation (SPEC §2.1–2.4): everything a module must satisfy before any
//! pass runs. [`validate`] checks structure (ids in range, each instruction
//! and loop placed once, loop variables in scope — what JSON input can get
//! wrong), the architecture, declarations, loops, every access (dtype
//! alignment, constant extents, bounds for every iteration), the shape rules
//! of each instruction kind, and that no PSUM cell is read before an
//! earlier instruction instance wrote it. [`validate_source`] adds the `tile=RxC` checks that only the
//! source text carries.
//!
//! Bounds are affine in independent loop variables, so their extremes are
//! found term by term instead of by enumerating iterations; the error then
//! names a concrete iteration that attains the bad value.

use crate::arch::{self, Arch, PSUM_BANK_SIZE};
use crate::ir::MAX_LOOP_DEPTH;
use crate::ir::{
    Access, Affine, Attr, Bound, DType, InstId, InstKind, Loc, LoopId, Matmul, MatmulKind, Mem,
    Module, Stmt, VarId,
};
use crate::text::lexer::{is_label, is_name};
use crate::text::{access_to_string, InstNames, Tile};
use crate::verify::rects::{Rect, RectMap};
use std::collections::HashMap;

/// Largest magnitude of an affine coefficient or constant, so that every
/// evaluation over valid loop ranges fits in `i64`.
pub const MAX_AFFINE: i64 = 1 << 32;

/// Largest magnitude of a loop bound.
pub const MAX_LOOP_BOUND: i64 = 1 << 24;

/// A validation failure: what is wrong and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind}")]
pub struct ValidateError {
    /// The IR entity the error points at.
    pub loc: Loc,
    /// What is wrong (boxed: the variants carry rendered names).
    pub kind: Box<ValidateErrorKind>,
}

/// The kinds of validation failure. `inst` fields name the instruction as
/// `%LABEL (mnemonic)`, or `%N (mnemonic)` with N its program-order position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ValidateErrorKind {
    /// Ids out of range, an instruction placed twice, a bad name (JSON input).
    #[error("malformed module: {0}")]
    Malformed(String),
    /// A loop bound, coefficient or constant beyond [`MAX_LOOP_BOUND`] or [`MAX_AFFINE`].
    #[error("{what} {value} is out of range (magnitude at most {max})")]
    OutOfRange {
        /// Which number.
        what: &'static str,
        /// The number.
        value: i64,
        /// The limit.
        max: i64,
    },
    /// The `arch` codename is not one of the ten.
    #[error("{0}")]
    UnknownArch(arch::ArchError),
    /// Two declarations with one name.
    #[error("duplicate tensor name '{0}'")]
    DuplicateTensor(String),
    /// A tensor with zero partitions or bytes.
    #[error("tensor '{name}' is empty ([{partitions}, {bytes}])")]
    EmptyTensor {
        /// Tensor name.
        name: String,
        /// Declared partitions.
        partitions: u32,
        /// Declared bytes.
        bytes: u32,
    },
    /// BYTES is not a multiple of the dtype size.
    #[error("tensor '{name}': {bytes} bytes per partition is not a multiple of the {dtype} size ({} bytes)", dtype.size())]
    BytesNotMultiple {
        /// Tensor name.
        name: String,
        /// Declared bytes.
        bytes: u32,
        /// Declared dtype.
        dtype: DType,
    },
    /// More partitions than the memory has.
    #[error("{mem} tensor '{name}' has {partitions} partitions, but {arch} {mem} has {max}")]
    TooManyPartitions {
        /// Tensor name.
        name: String,
        /// Its memory.
        mem: Mem,
        /// Declared partitions.
        partitions: u32,
        /// The limit.
        max: u32,
        /// The architecture codename.
        arch: String,
    },
    /// Two instructions with one label.
    #[error("duplicate label '%{0}'")]
    DuplicateLabel(String),
    /// `after=%L` naming no instruction.
    #[error("after=%{0} names no instruction")]
    UnknownAfter(String),
    /// A loop with HI ≤ LO.
    #[error("loop {var} {lo}..{hi} has no iterations (HI must be greater than LO)")]
    EmptyLoop {
        /// The loop variable.
        var: String,
        /// Lower bound.
        lo: i64,
        /// Upper bound.
        hi: i64,
    },
    /// A byte bound that is not a multiple of the dtype size.
    #[error("{inst}: byte bound {bound} = {expr} of {access} is {value}{at}, not a multiple of the {dtype} size ({} bytes)", dtype.size())]
    Misaligned {
        /// The instruction.
        inst: String,
        /// The access as printed.
        access: String,
        /// Which bound.
        bound: Bound,
        /// The bound's expression.
        expr: String,
        /// Its value at `at`.
        value: i64,
        /// The iteration (` at k=1`), empty for constants.
        at: String,
        /// The tensor's dtype.
        dtype: DType,
    },
    /// p1−p0 or b1−b0 depends on a loop variable.
    #[error("{inst}: the {dim} extent of {access} varies with the loop variables")]
    VaryingExtent {
        /// The instruction.
        inst: String,
        /// The access as printed.
        access: String,
        /// `partition` or `byte`.
        dim: &'static str,
    },
    /// p1 ≤ p0 or b1 ≤ b0.
    #[error("{inst}: access {access} is empty")]
    EmptyAccess {
        /// The instruction.
        inst: String,
        /// The access as printed.
        access: String,
    },
    /// A bound outside the tensor for some iteration.
    #[error("{inst}: access {access} is out of bounds: {bound} = {expr} is {value}{at}, {limit}")]
    OutOfBounds {
        /// The instruction.
        inst: String,
        /// The access as printed.
        access: String,
        /// Which bound.
        bound: Bound,
        /// The bound's expression.
        expr: String,
        /// Its value at `at`.
        value: i64,
        /// The iteration (` at k=4`), empty for constants.
        at: String,
        /// What it violates (`below 0`, `above the 8192 bytes of 'x'`).
        limit: String,
    },
    /// A matmul destination outside PSUM.
    #[error("{inst}: matmul destination '{name}' is in {mem}, not PSUM")]
    MatmulDstNotPsum {
        /// The instruction.
        inst: String,
        /// Destination tensor.
        name: String,
        /// Its memory.
        mem: Mem,
    },
    /// A matmul destination that is not f32 (nor bf16 on gen4).
    #[error("{inst}: matmul destination '{name}' is {dtype}, not f32")]
    MatmulDstDtype {
        /// The instruction.
        inst: String,
        /// Destination tensor.
        name: String,
        /// Its dtype.
        dtype: DType,
    },
    /// Operand shapes that disagree (the message names K, M or N).
    #[error("{inst}: matmul shapes disagree: {detail}")]
    MatmulShape {
        /// The instruction.
        inst: String,
        /// Which dimension and values.
        detail: String,
    },
    /// K, M or N above the hardware limit.
    #[error("{inst}: matmul {dim}={value} exceeds {max} ({why})")]
    MatmulLimit {
        /// The instruction.
        inst: String,
        /// `K`, `M` or `N`.
        dim: char,
        /// The operand's value.
        value: i64,
        /// The limit.
        max: u32,
        /// Where the limit comes from.
        why: String,
    },
    /// A destination spanning two banks (not on gen4).
    #[error("{inst}: matmul destination {access} crosses a PSUM bank boundary{at} (only gen4 may span banks)")]
    BankCrossing {
        /// The instruction.
        inst: String,
        /// The destination as printed.
        access: String,
        /// The iteration.
        at: String,
    },
    /// `pos` + tile beyond the PE array.
    #[error("{inst}: a {k}x{m} tile at pos={row},{col} does not fit the {rows}x{cols} PE array")]
    PosOutOfArray {
        /// The instruction.
        inst: String,
        /// Tile rows (K).
        k: i64,
        /// Tile columns (M).
        m: i64,
        /// pos row.
        row: u32,
        /// pos column.
        col: u32,
        /// PE rows.
        rows: u32,
        /// PE columns.
        cols: u32,
    },
    /// `tile=RxC` different from K×M.
    #[error("{inst}: tile={rows}x{cols} does not match the matmul's KxM = {k}x{m}")]
    TileMismatch {
        /// The instruction.
        inst: String,
        /// Written rows.
        rows: u32,
        /// Written columns.
        cols: u32,
        /// K.
        k: i64,
        /// M.
        m: i64,
    },
    /// copy/dma/act operands of different sizes.
    #[error("{inst}: destination {dst} has {dst_shape} but source {src} has {src_shape}")]
    ShapeMismatch {
        /// The instruction.
        inst: String,
        /// The destination as printed.
        dst: String,
        /// Its element count or shape.
        dst_shape: String,
        /// The source as printed.
        src: String,
        /// Its element count or shape.
        src_shape: String,
    },
    /// A read of PSUM cells that no earlier instruction instance wrote.
    #[error("read of PSUM tensor {0} before any write")]
    ReadBeforeWrite(String),
    /// The read-before-write walk would visit more PSUM instruction instances
    /// than [`MAX_READ_CHECK_STEPS`].
    #[error("checking that PSUM is written before it is read would step through more than {0} instructions")]
    ReadCheckLimit(u64),
}

fn err<T>(loc: Loc, kind: ValidateErrorKind) -> Result<T, ValidateError> {
    Err(ValidateError {
        loc,
        kind: Box::new(kind),
    })
}

fn malformed<T>(loc: Loc, msg: String) -> Result<T, ValidateError> {
    err(loc, ValidateErrorKind::Malformed(msg))
}

/// Checks a module (SPEC §2.1–2.4). On success every id is in range, every
/// instruction and loop is placed at most once, and passes may rely on the
/// shape rules.
pub fn validate(m: &Module) -> Result<(), ValidateError> {
    checked(m).map(|_| ())
}

/// Runs every check of [`validate`] and returns the context for more.
fn checked(m: &Module) -> Result<Cx<'_>, ValidateError> {
    let loop_of_var = structure(m)?;
    let arch =
        arch::lookup(&m.arch).or_else(|e| err(Loc::Arch, ValidateErrorKind::UnknownArch(e)))?;
    declarations(m, &arch)?;
    let cx = Cx::new(m, arch, &loop_of_var);
    cx.labels()?;
    cx.loops()?;
    for id in m.insts_in_order() {
        cx.inst(id)?;
    }
    cx.psum_reads()?;
    Ok(cx)
}

/// [`validate`], then the `tile=RxC` attributes as written (the parser's
/// [`crate::text::ParsedModule::tiles`]): each must equal K×M (SPEC §2.3;
/// `pos` + tile fitting the array is checked by [`validate`] since the
/// tile is always K×M).
pub fn validate_source(module: &Module, tiles: &[(InstId, Tile)]) -> Result<(), ValidateError> {
    let cx = checked(module)?;
    for &(id, tile) in tiles {
        let Some(mm) = module.inst(id).kind.as_matmul() else {
            continue;
        };
        let (k, m) = (mm.stationary.part_extent(), cx.elems(&mm.stationary));
        if (i64::from(tile.rows), i64::from(tile.cols)) != (k, m) {
            return err(
                Loc::Attr(id, Attr::Tile),
                ValidateErrorKind::TileMismatch {
                    inst: cx.inst_name(id),
                    rows: tile.rows,
                    cols: tile.cols,
                    k,
                    m,
                },
            );
        }
    }
    Ok(())
}

/// Structural soundness (SPEC §2.5, §2.6): every id in range, each
/// instruction and loop placed exactly once (so no loop contains itself),
/// loops nested at most [`MAX_LOOP_DEPTH`] deep, each loop variable bound by
/// one loop and used in its scope, bounds canonical and in range, names and
/// locations printable: what a module read from text has by construction.
/// Printing a module relies on nothing more; JSON input is checked with it
/// as it is read, before anything indexes by its ids.
pub fn validate_structure(m: &Module) -> Result<(), ValidateError> {
    let loop_of_var = structure(m)?;
    let mut placed = vec![false; m.insts.len()];
    for i in m.insts_in_order() {
        placed[i.index()] = true;
    }
    if let Some(i) = placed.iter().position(|&p| !p) {
        let i = InstId::new(i);
        return malformed(Loc::Module, format!("instruction {i} is never placed"));
    }
    if let Some(v) = loop_of_var.iter().position(Option::is_none) {
        let v = VarId::new(v);
        return malformed(
            Loc::Module,
            format!("loop variable {v} is bound by no loop"),
        );
    }
    // Every variable is bound by one placed loop, each binding one.
    if m.loops.len() > m.vars.len() {
        let mut placed = vec![false; m.loops.len()];
        for l in loop_of_var.into_iter().flatten() {
            placed[l.index()] = true;
        }
        let l = LoopId::new(placed.iter().position(|&p| !p).unwrap_or_default());
        return malformed(Loc::Module, format!("{l} is never placed"));
    }
    Ok(())
}

/// [`validate_structure`]; returns the loop that binds each variable.
fn structure(m: &Module) -> Result<Vec<Option<LoopId>>, ValidateError> {
    struct S<'m> {
        m: &'m Module,
        inst_seen: Vec<bool>,
        loop_seen: Vec<bool>,
        loop_of_var: Vec<Option<LoopId>>,
        scope: Vec<VarId>,
    }
    impl S<'_> {
        fn body(&mut self, body: &[Stmt]) -> Result<(), ValidateError> {
            for s in body {
                match *s {
                    Stmt::Inst(i) => {
                        if self.inst_seen.get(i.index()) != Some(&false) {
                            return malformed(
                                Loc::Module,
                                format!("instruction {i} is out of range or placed twice"),
                            );
                        }
                        self.inst_seen[i.index()] = true;
                        self.inst(i)?;
                    }
                    Stmt::Loop(l) => {
                        if self.loop_seen.get(l.index()) != Some(&false) {
                            return malformed(
                                Loc::Module,
                                format!("{l} is out of range or placed twice"),
                            );
                        }
                        self.loop_seen[l.index()] = true;
                        let v = self.m.loops[l.index()].var;
                        let Some(var) = self.m.vars.get(v.index()) else {
                            return malformed(
                                Loc::Loop(l),
                                format!("loop variable {v} is out of range"),
                            );
                        };
                        if !is_name(&var.name) {
                            return malformed(
                                Loc::Loop(l),
                                format!("bad loop variable name {:?}", var.name),
                            );
                        }
                        if self.scope.len() >= MAX_LOOP_DEPTH {
                            return malformed(
                                Loc::Loop(l),
                                format!("loops nested deeper than {MAX_LOOP_DEPTH}"),
                            );
                        }
                        if self.loop_of_var[v.index()].is_some() {
                            return malformed(
                                Loc::Loop(l),
                                format!("loop variable {v} is bound by two loops"),
                            );
                        }
                        if self
                            .scope
                            .iter()
                            .any(|s| self.m.vars[s.index()].name == var.name)
                        {
                            return malformed(
                                Loc::Loop(l),
                                format!(
                                    "loop variable '{}' shadows the variable of an enclosing loop",
                                    var.name
                                ),
                            );
                        }
                        let lp = &self.m.loops[l.index()];
                        if let Some(&value) =
                            [lp.lo, lp.hi].iter().find(|b| b.abs() > MAX_LOOP_BOUND)
                        {
                            return err(
                                Loc::LoopRange(l),
                                ValidateErrorKind::OutOfRange {
                                    what: "loop bound",
                                    value,
                                    max: MAX_LOOP_BOUND,
                                },
                            );
                        }
                        self.loop_of_var[v.index()] = Some(l);
                        self.scope.push(v);
                        self.body(&self.m.loops[l.index()].body)?;
                        self.scope.pop();
                    }
                }
            }
            Ok(())
        }

        fn inst(&self, i: InstId) -> Result<(), ValidateError> {
            let inst = &self.m.insts[i.index()];
            for l in inst.label().into_iter().chain(inst.after()) {
                if !is_label(l) {
                    return malformed(Loc::Inst(i), format!("bad label {l:?}"));
                }
            }
            if let Some(loc) = inst.loc().filter(|l| !is_loc(l)) {
                return malformed(Loc::Inst(i), format!("bad location {loc:?}"));
            }
            if let InstKind::Act { srcs, .. } | InstKind::Engine { srcs, .. } = &inst.kind {
                if srcs.is_empty() {
                    return malformed(
                        Loc::Inst(i),
                        format!("{} without sources", inst.kind.mnemonic()),
                    );
                }
            }
            let accesses = std::iter::once(inst.kind.dst()).chain(inst.kind.srcs());
            for (k, a) in accesses.enumerate() {
                if a.tensor.index() >= self.m.tensors.len() {
                    return malformed(
                        Loc::Operand(i, k),
                        format!("tensor {} is out of range", a.tensor),
                    );
                }
                if !a.is_affine() {
                    // Constant bounds are canonical and bind no variable.
                    let r = a.region(|_| 0);
                    if [r.p0, r.p1, r.b0, r.b1]
                        .iter()
                        .all(|c| c.abs() <= MAX_AFFINE)
                    {
                        continue;
                    }
                }
                for b in Bound::ALL {
                    let (constant, terms) = b.parts(a);
                    let sorted = terms.windows(2).all(|w| w[0].0 < w[1].0);
                    if !sorted || terms.iter().any(|t| t.1 == 0) {
                        return malformed(
                            Loc::Bound(i, k, b),
                            format!("bound {b} is not in canonical form"),
                        );
                    }
                    let numbers = terms.iter().map(|t| ("coefficient", t.1));
                    let big = std::iter::once(("constant", constant))
                        .chain(numbers)
                        .find(|n| n.1.abs() > MAX_AFFINE);
                    if let Some((what, value)) = big {
                        return err(
                            Loc::Bound(i, k, b),
                            ValidateErrorKind::OutOfRange {
                                what,
                                value,
                                max: MAX_AFFINE,
                            },
                        );
                    }
                    if let Some((v, _)) = terms.iter().find(|t| !self.scope.contains(&t.0)) {
                        return malformed(
                            Loc::Bound(i, k, b),
                            format!("bound {b} uses {v}, which no enclosing loop binds"),
                        );
                    }
                }
            }
            Ok(())
        }
    }
    for t in &m.tensors {
        if !is_name(&t.name) {
            return malformed(Loc::Module, format!("bad tensor name {:?}", t.name));
        }
        if let Some(loc) = t.loc.as_deref().filter(|l| !is_loc(l)) {
            return malformed(Loc::Module, format!("bad location {loc:?}"));
        }
    }
    if m.blocks.is_empty() {
        return malformed(Loc::Module, "no block".to_string());
    }
    let mut s = S {
        m,
        inst_seen: vec![false; m.insts.len()],
        loop_seen: vec![false; m.loops.len()],
        loop_of_var: vec![None; m.vars.len()],
        scope: Vec::new(),
    };
    for b in &m.blocks {
        if !is_name(&b.name) {
            return malformed(Loc::Module, format!("bad block name {:?}", b.name));
        }
        s.body(&b.body)?;
    }
    Ok(s.loop_of_var)
}

/// Whether `s` prints as a `"…"` string the lexer reads back (SPEC §2.1).
fn is_loc(s: &str) -> bool {
    !s.contains(['"', '\n'])
}

fn declarations(m: &Module, arch: &Arch) -> Result<(), ValidateError> {
    let mut names = HashMap::new();
    for (i, t) in m.tensors.iter().enumerate() {
        let loc = Loc::Tensor(crate::ir::TensorId::new(i));
        if names.insert(t.name.as_str(), i).is_some() {
            return err(loc, ValidateErrorKind::DuplicateTensor(t.name.clone()));
        }
        if t.partitions == 0 || t.bytes == 0 {
            return err(
                loc,
                ValidateErrorKind::EmptyTensor {
                    name: t.name.clone(),
                    partitions: t.partitions,
                    bytes: t.bytes,
                },
            );
        }
        if t.bytes % t.dtype.size() != 0 {
            return err(
                loc,
                ValidateErrorKind::BytesNotMultiple {
                    name: t.name.clone(),
                    bytes: t.bytes,
                    dtype: t.dtype,
                },
            );
        }
        let max = match t.mem {
            Mem::Psum => Some(arch.psum().part_size),
            Mem::Sbuf => Some(arch.sbuf().num_partitions),
            Mem::Dram => None,
        };
        if let Some(max) = max.filter(|&max| t.partitions > max) {
            return err(
                loc,
                ValidateErrorKind::TooManyPartitions {
                    name: t.name.clone(),
                    mem: t.mem,
                    partitions: t.partitions,
                    max,
                    arch: m.arch.clone(),
                },
            );
        }
    }
    Ok(())
}

/// Validation context over a structurally sound module.
struct Cx<'m> {
    m: &'m Module,
    arch: Arch,
    /// How instructions are named.
    names: InstNames<'m>,
    /// `[lo, hi)` of each variable's loop.
    range: Vec<(i64, i64)>,
}

/// An assignment of values to some loop variables.
type Iteration = Vec<(VarId, i64)>;

impl<'m> Cx<'m> {
    fn new(m: &'m Module, arch: Arch, loop_of_var: &[Option<LoopId>]) -> Self {
        let range = loop_of_var
            .iter()
            .map(|l| l.map_or((0, 1), |l| (m.loop_(l).lo, m.loop_(l).hi)))
            .collect();
        Cx {
            m,
            arch,
            names: InstNames::new(m),
            range,
        }
    }

    fn inst_name(&self, id: InstId) -> String {
        self.names.describe(id, true)
    }

    fn iteration_text(&self, it: &Iteration) -> String {
        if it.is_empty() {
            return String::new();
        }
        let parts: Vec<_> = it
            .iter()
            .map(|(v, x)| format!("{}={x}", self.m.vars[v.index()].name))
            .collect();
        format!(" at {}", parts.join(", "))
    }

    /// The extreme value of `e` over all iterations (`max` or min) and an
    /// iteration attaining it.
    /// Whether access `a` of `t` passes every check of [`Cx::access`]:
    /// the common case, decided on the borrowed bounds without building
    /// expressions or iterations; a failure takes the general path for its
    /// diagnostic.
    fn fits(&self, a: &Access, t: &crate::ir::Tensor) -> bool {
        let size = i64::from(t.dtype.size());
        let range = |v: VarId| self.range[v.index()];
        let aligned = |b: Bound| {
            let (c, terms) = b.parts(a);
            let at_lo: i64 = c + terms.iter().map(|&(v, k)| k * range(v).0).sum::<i64>();
            at_lo % size == 0
                && terms.iter().all(|&(v, k)| {
                    let (lo, hi) = range(v);
                    hi - lo < 2 || k % size == 0
                })
        };
        let extent = |lo: Bound, hi: Bound| {
            let ((c0, t0), (c1, t1)) = (lo.parts(a), hi.parts(a));
            t0 == t1 && c1 > c0
        };
        let extreme = |b: Bound, max: bool| {
            let (c, terms) = b.parts(a);
            terms.iter().fold(i128::from(c), |acc, &(v, k)| {
                let (lo, hi) = range(v);
                acc + i128::from(k) * i128::from(if (k > 0) == max { hi - 1 } else { lo })
            })
        };
        aligned(Bound::B0)
            && aligned(Bound::B1)
            && extent(Bound::P0, Bound::P1)
            && extent(Bound::B0, Bound::B1)
            && extreme(Bound::P0, false) >= 0
            && extreme(Bound::P1, true) <= i128::from(t.partitions)
            && extreme(Bound::B0, false) >= 0
            && extreme(Bound::B1, true) <= i128::from(t.bytes)
    }

    fn extreme(&self, e: &Affine, max: bool) -> (i128, Iteration) {
        let mut value = i128::from(e.constant);
        let mut it = Vec::new();
        for &(v, c) in &e.terms {
            let (lo, hi) = self.range[v.index()];
            let x = if (c > 0) == max { hi - 1 } else { lo };
            value += i128::from(c) * i128::from(x);
            it.push((v, x));
        }
        (value, it)
    }

    fn labels(&self) -> Result<(), ValidateError> {
        let mut seen = HashMap::new();
        for id in self.m.insts_in_order() {
            if let Some(l) = self.m.inst(id).label() {
                if seen.insert(l, id).is_some() {
                    return err(
                        Loc::Attr(id, Attr::Label),
                        ValidateErrorKind::DuplicateLabel(l.to_string()),
                    );
                }
            }
        }
        for id in self.m.insts_in_order() {
            if let Some(a) = self.m.inst(id).after() {
                if !seen.contains_key(a) {
                    return err(
                        Loc::Attr(id, Attr::After),
                        ValidateErrorKind::UnknownAfter(a.to_string()),
                    );
                }
            }
        }
        Ok(())
    }

    fn loops(&self) -> Result<(), ValidateError> {
        let mut out = Ok(());
        self.m.walk(|v, _| {
            if let (crate::ir::Visit::Enter(l), Ok(())) = (v, &out) {
                let lp = self.m.loop_(l);
                if lp.hi <= lp.lo {
                    out = err(
                        Loc::LoopRange(l),
                        ValidateErrorKind::EmptyLoop {
                            var: self.m.vars[lp.var.index()].name.clone(),
                            lo: lp.lo,
                            hi: lp.hi,
                        },
                    );
                }
            }
        });
        out
    }

    fn elems(&self, a: &Access) -> i64 {
        a.byte_extent() / i64::from(self.m.tensor(a.tensor).dtype.size())
    }

    fn inst(&self, id: InstId) -> Result<(), ValidateError> {
        let kind = &self.m.inst(id).kind;
        self.access(id, 0, kind.dst())?;
        let (mut k, mut checked) = (0, Ok(()));
        kind.for_each_src(|a| {
            k += 1;
            if checked.is_ok() {
                checked = self.access(id, k, a);
            }
        });
        checked?;
        match kind {
            InstKind::Matmul(mm) => self.matmul(id, mm),
            InstKind::Copy { dst, src } | InstKind::Dma { dst, src } => {
                let (d, s) = (
                    dst.part_extent() * self.elems(dst),
                    src.part_extent() * self.elems(src),
                );
                if d != s {
                    return self.mismatch(
                        id,
                        1,
                        dst,
                        src,
                        format!("{d} elements"),
                        format!("{s} elements"),
                    );
                }
                Ok(())
            }
            InstKind::Act { dst, srcs } => {
                let shape = |a: &Access| (a.part_extent(), self.elems(a));
                let text = |(p, e): (i64, i64)| format!("shape [{p} partitions, {e} elements]");
                for (k, s) in srcs.iter().enumerate() {
                    if shape(s) != shape(dst) {
                        return self.mismatch(id, k + 1, dst, s, text(shape(dst)), text(shape(s)));
                    }
                }
                Ok(())
            }
            InstKind::Memset { .. } | InstKind::Engine { .. } => Ok(()),
        }
    }

    fn mismatch(
        &self,
        id: InstId,
        operand: usize,
        dst: &Access,
        src: &Access,
        dst_shape: String,
        src_shape: String,
    ) -> Result<(), ValidateError> {
        err(
            Loc::Operand(id, operand),
            ValidateErrorKind::ShapeMismatch {
                inst: self.inst_name(id),
                dst: access_to_string(self.m, dst),
                dst_shape,
                src: access_to_string(self.m, src),
                src_shape,
            },
        )
    }

    /// Alignment, constant non-empty extents and bounds of operand `k`.
    fn access(&self, id: InstId, k: usize, a: &Access) -> Result<(), ValidateError> {
        let t = self.m.tensor(a.tensor);
        if self.fits(a, t) {
            return Ok(());
        }
        let text = || access_to_string(self.m, a);
        let vars = &self.m.vars;
        let size = i64::from(t.dtype.size());
        for b in [Bound::B0, Bound::B1] {
            let e = b.of(a);
            let bad_var = e.terms.iter().find(|&&(v, c)| {
                let (lo, hi) = self.range[v.index()];
                hi - lo >= 2 && c % size != 0
            });
            let mut it: Iteration = e
                .terms
                .iter()
                .map(|&(v, _)| (v, self.range[v.index()].0))
                .collect();
            if e.eval(|v| self.range[v.index()].0) % size == 0 {
                let Some(&(bv, _)) = bad_var else { continue };
                it.iter_mut().filter(|p| p.0 == bv).for_each(|p| p.1 += 1);
            }
            let value = e.eval(|v| it.iter().find(|p| p.0 == v).map_or(0, |p| p.1));
            return err(
                Loc::Bound(id, k, b),
                ValidateErrorKind::Misaligned {
                    inst: self.inst_name(id),
                    access: text(),
                    bound: b,
                    expr: e.display(vars).to_string(),
                    value,
                    at: self.iteration_text(&it),
                    dtype: t.dtype,
                },
            );
        }
        for (dim, lo, hi, b) in [
            ("partition", a.p0(), a.p1(), Bound::P1),
            ("byte", a.b0(), a.b1(), Bound::B1),
        ] {
            let mut extent = hi;
            extent.add_scaled(&lo, -1);
            let Some(n) = extent.as_const() else {
                return err(
                    Loc::Bound(id, k, b),
                    ValidateErrorKind::VaryingExtent {
                        inst: self.inst_name(id),
                        access: text(),
                        dim,
                    },
                );
            };
            if n <= 0 {
                return err(
                    Loc::Operand(id, k),
                    ValidateErrorKind::EmptyAccess {
                        inst: self.inst_name(id),
                        access: text(),
                    },
                );
            }
        }
        let checks = [
            (Bound::P0, false, 0),
            (Bound::P1, true, t.partitions),
            (Bound::B0, false, 0),
            (Bound::B1, true, t.bytes),
        ];
        for (b, upper, limit) in checks {
            let e = b.of(a);
            let (value, it) = self.extreme(&e, upper);
            let bad = if upper {
                value > i128::from(limit)
            } else {
                value < 0
            };
            if bad {
                let limit = if upper {
                    let what = if b == Bound::P1 {
                        "partitions"
                    } else {
                        "bytes"
                    };
                    format!("beyond the {limit} {what} of '{}'", t.name)
                } else {
                    "below 0".to_string()
                };
                return err(
                    Loc::Bound(id, k, b),
                    ValidateErrorKind::OutOfBounds {
                        inst: self.inst_name(id),
                        access: text(),
                        bound: b,
                        expr: e.display(vars).to_string(),
                        value: i64::try_from(value).unwrap_or(if upper {
                            i64::MAX
                        } else {
                            i64::MIN
                        }),
                        at: self.iteration_text(&it),
                        limit,
                    },
                );
            }
        }
        Ok(())
    }

    fn matmul(&self, id: InstId, mm: &Matmul) -> Result<(), ValidateError> {
        let inst = || self.inst_name(id);
        let dt = self.m.tensor(mm.dst.tensor);
        if dt.mem != Mem::Psum {
            return err(
                Loc::Operand(id, 0),
                ValidateErrorKind::MatmulDstNotPsum {
                    inst: inst(),
                    name: dt.name.clone(),
                    mem: dt.mem,
                },
            );
        }
        // A PE transpose (NKI's nc_transpose) writes its input's dtype.
        let transposed = mm.kind == MatmulKind::Transpose
            && dt.dtype == self.m.tensor(mm.stationary.tensor).dtype;
        if dt.dtype != DType::F32
            && !transposed
            && (dt.dtype != DType::Bf16 || self.arch.arch_level() < 40)
        {
            return err(
                Loc::Operand(id, 0),
                ValidateErrorKind::MatmulDstDtype {
                    inst: inst(),
                    name: dt.name.clone(),
                    dtype: dt.dtype,
                },
            );
        }
        let text = |a: &Access| access_to_string(self.m, a);
        let (k, m) = (mm.stationary.part_extent(), self.elems(&mm.stationary));
        let (k2, n) = (mm.moving.part_extent(), self.elems(&mm.moving));
        let (dm, dn) = (mm.dst.part_extent(), self.elems(&mm.dst));
        let mismatch = if k != k2 {
            Some((
                2,
                format!(
                    "stationary {} has K={k} partitions but moving {} has K={k2}",
                    text(&mm.stationary),
                    text(&mm.moving)
                ),
            ))
        } else if dm != m {
            Some((
                0,
                format!(
                    "destination {} has {dm} partitions but stationary {} has M={m} elements",
                    text(&mm.dst),
                    text(&mm.stationary)
                ),
            ))
        } else if dn != n {
            Some((
                0,
                format!(
                    "destination {} has {dn} elements but moving {} has N={n}",
                    text(&mm.dst),
                    text(&mm.moving)
                ),
            ))
        } else {
            None
        };
        if let Some((operand, detail)) = mismatch {
            return err(
                Loc::Operand(id, operand),
                ValidateErrorKind::MatmulShape {
                    inst: inst(),
                    detail,
                },
            );
        }
        let pe = *self.arch.pe();
        let codename = &self.m.arch;
        let limits = [
            ('K', k, pe.rows, 1),
            ('M', m, pe.cols, 1),
            ('N', n, self.arch.max_matmul_n(), 2),
        ];
        for (dim, value, max, operand) in limits {
            if value > i64::from(max) {
                let why = match dim {
                    'K' => format!("the {} PE rows", pe.rows),
                    'M' => format!("the {} PE columns of {codename}", pe.cols),
                    _ if self.arch.arch_level() >= 40 => format!("eight banks on {codename}"),
                    _ => format!("one bank on {codename}; only gen4 allows 4096"),
                };
                return err(
                    Loc::Operand(id, operand),
                    ValidateErrorKind::MatmulLimit {
                        inst: inst(),
                        dim,
                        value,
                        max,
                        why,
                    },
                );
            }
        }
        let (row, col) = mm.pos;
        if i64::from(row) + k > i64::from(pe.rows) || i64::from(col) + m > i64::from(pe.cols) {
            return err(
                Loc::Attr(id, Attr::Pos),
                ValidateErrorKind::PosOutOfArray {
                    inst: inst(),
                    k,
                    m,
                    row,
                    col,
                    rows: pe.rows,
                    cols: pe.cols,
                },
            );
        }
        if self.arch.arch_level() < 40 {
            if let Some(it) = self.bank_crossing(&mm.dst.b0(), mm.dst.byte_extent()) {
                return err(
                    Loc::Operand(id, 0),
                    ValidateErrorKind::BankCrossing {
                        inst: inst(),
                        access: text(&mm.dst),
                        at: self.iteration_text(&it),
                    },
                );
            }
        }
        Ok(())
    }

    /// An iteration at which `[b0, b0 + extent)` crosses a bank boundary.
    /// Exact: explores the reachable residues of `b0` modulo the bank size
    /// (each variable contributes at most one period of residues).
    fn bank_crossing(&self, b0: &Affine, extent: i64) -> Option<Iteration> {
        let bank = i64::from(PSUM_BANK_SIZE);
        if b0.terms.is_empty() {
            return (b0.constant.rem_euclid(bank) + extent > bank).then(Vec::new);
        }
        let mut reach: Vec<Option<Iteration>> = vec![None; PSUM_BANK_SIZE as usize];
        reach[b0.constant.rem_euclid(bank) as usize] = Some(Vec::new());
        for &(v, c) in &b0.terms {
            let step = c.rem_euclid(bank);
            let (lo, hi) = self.range[v.index()];
            let period = if step == 0 { 1 } else { bank / gcd(step, bank) };
            let mut next: Vec<Option<Iteration>> = vec![None; reach.len()];
            for (r, w) in reach.iter().enumerate() {
                let Some(w) = w else { continue };
                for x in lo..hi.min(lo.saturating_add(period)) {
                    let nr = (r as i64 + step * x.rem_euclid(bank)).rem_euclid(bank) as usize;
                    if next[nr].is_none() {
                        let mut w2 = w.clone();
                        w2.push((v, x));
                        next[nr] = Some(w2);
                    }
                }
            }
            reach = next;
        }
        reach
            .into_iter()
            .enumerate()
            .filter(|(r, _)| *r as i64 + extent > bank)
            .filter_map(|(_, w)| w)
            .min_by(|a, b| a.iter().map(|p| p.1).cmp(b.iter().map(|p| p.1)))
    }

    /// SPEC §2.4: every dynamic read of a PSUM region finds each of its
    /// cells written by an earlier instruction instance. The walk follows
    /// execution with the written cells of each PSUM tensor as a map of
    /// pieces; a loop whose body touches no PSUM is skipped, and a loop whose
    /// PSUM accesses do not move with its variable runs one iteration (a later
    /// one reads the same regions with at least as much written, and writes
    /// nothing new), so the walk is exact and costs at most what unrolling
    /// costs.
    fn psum_reads(&self) -> Result<(), ValidateError> {
        let mut walk = ReadWalk {
            cx: self,
            loops: self.psum_loops(),
            written: (self.m.tensors.iter())
                .map(|t| (t.mem == Mem::Psum).then(|| RectMap::new(t.partitions, t.bytes, false)))
                .collect(),
            env: vec![0; self.m.vars.len()],
            steps: 0,
        };
        for b in &self.m.blocks {
            walk.body(&b.body)?;
        }
        Ok(())
    }

    /// Per loop: whether its body accesses PSUM, and whether one of those
    /// accesses has a bound that uses the loop's variable.
    fn psum_loops(&self) -> Vec<LoopPsum> {
        fn body(cx: &Cx<'_>, b: &[Stmt], out: &mut [LoopPsum], vars: &mut Vec<VarId>) -> bool {
            let mut touches = false;
            for s in b {
                match *s {
                    Stmt::Inst(i) => {
                        let kind = &cx.m.inst(i).kind;
                        for a in std::iter::once(kind.dst()).chain(kind.srcs()) {
                            if cx.m.tensor(a.tensor).mem != Mem::Psum {
                                continue;
                            }
                            touches = true;
                            for bound in Bound::ALL {
                                vars.extend(bound.parts(a).1.iter().map(|t| t.0));
                            }
                        }
                    }
                    Stmt::Loop(l) => {
                        let mark = vars.len();
                        let inner = body(cx, &cx.m.loop_(l).body, out, vars);
                        let var = cx.m.loop_(l).var;
                        out[l.index()] = LoopPsum {
                            touches: inner,
                            moves: vars[mark..].contains(&var),
                        };
                        touches |= inner;
                    }
                }
            }
            touches
        }
        let mut out = vec![LoopPsum::default(); self.m.loops.len()];
        let mut vars = Vec::new();
        for b in &self.m.blocks {
            body(self, &b.body, &mut out, &mut vars);
        }
        out
    }
}

/// What the read-before-write walk needs to know of a loop.
#[derive(Clone, Copy, Debug, Default)]
struct LoopPsum {
    /// Its body accesses PSUM.
    touches: bool,
    /// A PSUM access in its body moves with its variable.
    moves: bool,
}

/// The most PSUM instruction instances the read-before-write walk visits
/// (the unroll limit of SPEC §4.3: a program `compile` unrolls never reaches it).
pub const MAX_READ_CHECK_STEPS: u64 = crate::unroll::MAX_UNROLLED_INSTS as u64;

/// The read-before-write walk of [`Cx::psum_reads`].
struct ReadWalk<'c, 'm> {
    cx: &'c Cx<'m>,
    loops: Vec<LoopPsum>,
    /// Per PSUM tensor, which cells an instruction instance has written.
    written: Vec<Option<RectMap<bool>>>,
    /// Current value of every loop variable.
    env: Vec<i64>,
    /// PSUM instruction instances visited.
    steps: u64,
}

impl ReadWalk<'_, '_> {
    fn body(&mut self, body: &[Stmt]) -> Result<(), ValidateError> {
        for s in body {
            match *s {
                Stmt::Inst(i) => self.inst(i)?,
                Stmt::Loop(l) => {
                    let lp = self.cx.m.loop_(l);
                    let info = self.loops[l.index()];
                    if !info.touches {
                        continue;
                    }
                    let hi = if info.moves { lp.hi } else { lp.lo + 1 };
                    for v in lp.lo..hi {
                        self.env[lp.var.index()] = v;
                        self.body(&lp.body)?;
                    }
                }
            }
        }
        Ok(())
    }

    fn rect(&self, a: &Access) -> Rect {
        let r = a.region(|v| self.env[v.index()]);
        Rect::new(r.p0 as u32, r.p1 as u32, r.b0 as u32, r.b1 as u32)
    }

    fn inst(&mut self, id: InstId) -> Result<(), ValidateError> {
        let m = self.cx.m;
        let kind = &m.inst(id).kind;
        let dst = kind.dst();
        let psum = |a: &Access| m.tensor(a.tensor).mem == Mem::Psum;
        if !psum(dst) && !kind.srcs().any(psum) {
            return Ok(());
        }
        self.steps += 1;
        if self.steps > MAX_READ_CHECK_STEPS {
            return err(
                Loc::Inst(id),
                ValidateErrorKind::ReadCheckLimit(MAX_READ_CHECK_STEPS),
            );
        }
        for (k, s) in kind.srcs().enumerate() {
            let Some(written) = &self.written[s.tensor.index()] else {
                continue;
            };
            let mut all = true;
            written.visit(self.rect(s), |_, &w| all &= w);
            if !all {
                return err(
                    Loc::Operand(id, k + 1),
                    ValidateErrorKind::ReadBeforeWrite(m.tensor(s.tensor).name.clone()),
                );
            }
        }
        let r = self.rect(dst);
        if let Some(written) = &mut self.written[dst.tensor.index()] {
            written.set(r, true);
        }
        Ok(())
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::parse;

    fn read_error(src: &str) -> Option<(Loc, String)> {
        let m = parse(src).unwrap().module;
        validate(&m).err().map(|e| (e.loc, e.to_string()))
    }

    /// The read rule is per cell and per iteration (SPEC §2.4).
    #[test]
    fn psum_reads_follow_the_cells_written_so_far() {
        let head =
            "arch trn1\npsum c [128, 4096]\nsbuf w [128, 256] bf16\nsbuf x [128, 1024] bf16\n\
                    sbuf z [128, 2048]\nblock b {\n";
        let mm = |at: &str| format!("matmul c[0:128, {at}] <- w, x\n");
        let unwritten = "read of PSUM tensor c before any write".to_string();
        let read = |inst: usize| Some((Loc::Operand(InstId::new(inst), 1), unwritten.clone()));
        // One half written, the other read.
        let src = format!("{head}{}act z <- c[0:128, 0:2048]\n}}\n", mm("2048:4096"));
        assert_eq!(read_error(&src), read(1));
        // Both halves, by the iterations of a loop.
        let src = format!(
            "{head}loop k 0..2 {{\n{}}}\nact z <- c[0:128, 0:2048]\nact z <- c[0:128, 2048:4096]\n}}\n",
            mm("k*2048:k*2048+2048")
        );
        assert_eq!(read_error(&src), None);
        // A read of the half the next iteration writes.
        let src = format!(
            "{head}loop k 0..2 {{\n{}act z <- c[0:128, 2048:4096]\n}}\n}}\n",
            mm("k*2048:k*2048+2048")
        );
        assert_eq!(read_error(&src), read(1));
        // In a loop of 2^24 trips whose accesses do not move (one iteration
        // is walked): the half the iteration before wrote, then the half
        // the next iteration writes.
        let src = format!(
            "{head}{}loop k 0..16777216 {{\nloop j 0..2 {{\n\
             act z <- c[0:128, j*2048:j*2048+2048]\n{}}}\n}}\n}}\n",
            mm("0:2048"),
            mm("2048:4096")
        );
        assert_eq!(read_error(&src), None);
        let src = src.replacen(
            "c[0:128, j*2048:j*2048+2048]",
            "c[0:128, 2048-j*2048:4096-j*2048]",
            1,
        );
        assert_eq!(read_error(&src), read(1));
    }

    /// A walk past the unroll limit is refused at the instruction it reached.
    #[test]
    fn the_read_walk_is_bounded() {
        let src = "arch trn1\npsum c [1, 67108864]\nsbuf z [1, 4]\nblock b {\n\
                   loop k 0..16777216 {\nmemset c[0:1, k*4:k*4+4] = 0\nact z <- c[0:1, k*4:k*4+4]\n}\n}\n";
        assert_eq!(
            read_error(src),
            Some((
                Loc::Inst(InstId::new(0)),
                "checking that PSUM is written before it is read would step through more than \
                 10000000 instructions"
                    .to_string()
            ))
        );
    }

    /// The residue search of `bank_crossing` agrees with enumerating every
    /// iteration, and its witness really crosses a bank.
    #[test]
    fn bank_crossing_matches_enumeration() {
        let mut seed = 0x1234_5678_u64;
        let mut next = |n: i64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as i64
        };
        let mut outcomes = [0; 2];
        for _ in 0..300 {
            let (ck, cj) = (4 * next(700) - 1400, 4 * next(300));
            let (klo, jlo) = (next(3), next(2));
            let (khi, jhi) = (klo + 1 + next(5), jlo + 1 + next(4));
            let extent = 4 * (1 + next(512));
            let c = 4 * next(1024) + 8192;
            let src = format!(
                "arch trn1\npsum acc [1, 65536]\nblock b {{\n  loop k {klo}..{khi} {{\n    loop j {jlo}..{jhi} {{\n      \
                 memset acc[0:1, k*{ck}+j*{cj}+{c} : k*{ck}+j*{cj}+{}] = 0\n    }}\n  }}\n}}\n",
                c + extent
            );
            let m = parse(&src).unwrap().module;
            let loop_of_var = structure(&m).unwrap();
            let cx = Cx::new(&m, arch::lookup("trn1").unwrap(), &loop_of_var);
            let b0 = m.insts[0].kind.dst().b0();
            let crosses = |k: i64, j: i64| {
                let v = b0.eval(|v| if v.index() == 0 { k } else { j });
                v / 2048 != (v + extent - 1) / 2048
            };
            let any = (klo..khi).any(|k| (jlo..jhi).any(|j| crosses(k, j)));
            let found = cx.bank_crossing(&b0, extent);
            assert_eq!(found.is_some(), any, "{src}");
            outcomes[usize::from(any)] += 1;
            if let Some(it) = found {
                let val = |v: usize| it.iter().find(|p| p.0.index() == v).map_or(0, |p| p.1);
                let (k, j) = (val(0), val(1));
                let used = |v: usize| b0.terms.iter().any(|t| t.0.index() == v);
                let k = if used(0) { k } else { klo };
                let j = if used(1) { j } else { jlo };
                assert!(crosses(k, j), "witness k={k} j={j} does not cross\n{src}");
            }
        }
        assert!(outcomes[0] > 30 && outcomes[1] > 30, "{outcomes:?}");
    }
}
