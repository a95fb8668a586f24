//! The IR data model (SPEC §2): a [`Module`] of tensors, loop variables,
//! instructions and loops, all held in flat vectors and referred to by typed
//! indices ([`TensorId`], [`VarId`], [`InstId`], [`LoopId`]).
//!
//! Control structure is a tree of [`Stmt`] lists (block bodies and loop bodies)
//! whose leaves are indices into the instruction arena, in the manner of
//! Cranelift's layout over its instruction arena. Source positions are kept out
//! of the model (see [`crate::text::SourceMap`]) so that two modules compare
//! equal exactly when they mean the same program.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Defines a `u32` index newtype with `index()`/`new()` helpers.
macro_rules! entity {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub u32);

        impl $name {
            /// The index as a `usize`, for indexing the owning vector.
            #[inline]
            pub fn index(self) -> usize {
                self.0 as usize
            }
            /// Builds the id for position `i` of the owning vector.
            #[inline]
            pub fn new(i: usize) -> Self {
                Self(u32::try_from(i).expect("entity index overflows u32"))
            }
        }
    };
}
#[allow(unused_imports)]
pub(crate) use entity;

entity!(
    /// A tensor declaration: index into [`Module::tensors`].
    TensorId
);
entity!(
    /// A loop variable: index into [`Module::vars`].
    VarId
);
entity!(
    /// An instruction: index into [`Module::insts`].
    InstId
);
entity!(
    /// A counted loop: index into [`Module::loops`].
    LoopId
);

/// The deepest loop nest accepted (keeps every recursive walk shallow).
pub const MAX_LOOP_DEPTH: usize = 100;

/// Memory a tensor lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mem {
    /// The matmul accumulator, allocated in whole 2 KiB banks.
    Psum,
    /// The state buffer (on-chip SRAM).
    Sbuf,
    /// Device DRAM.
    Dram,
}

impl Mem {
    /// The keyword used in the text format.
    pub fn keyword(self) -> &'static str {
        match self {
            Mem::Psum => "psum",
            Mem::Sbuf => "sbuf",
            Mem::Dram => "dram",
        }
    }
}

impl fmt::Display for Mem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.keyword())
    }
}

/// Element type of a tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    /// 32-bit float, 4 bytes (the default).
    #[default]
    F32,
    /// bfloat16, 2 bytes.
    Bf16,
    /// 8-bit float (e4m3), 1 byte.
    Fp8,
    /// IEEE half, 2 bytes.
    F16,
    /// tfloat32, stored in 4 bytes.
    Tf32,
    /// 8-bit float (e5m2), 1 byte.
    #[serde(rename = "fp8_e5m2")]
    Fp8E5m2,
    /// Four 8-bit MX floats packed in one 4-byte element.
    #[serde(rename = "fp8x4")]
    Fp8x4,
    /// Four 4-bit MX floats packed in one 2-byte element.
    #[serde(rename = "fp4x4")]
    Fp4x4,
    /// Signed 8-bit integer.
    I8,
    /// Unsigned 8-bit integer.
    U8,
    /// Signed 16-bit integer.
    I16,
    /// Unsigned 16-bit integer.
    U16,
    /// Signed 32-bit integer.
    I32,
    /// Unsigned 32-bit integer.
    U32,
}

impl DType {
    /// Every dtype, in declaration order.
    pub const ALL: [DType; 14] = [
        DType::F32,
        DType::Bf16,
        DType::Fp8,
        DType::F16,
        DType::Tf32,
        DType::Fp8E5m2,
        DType::Fp8x4,
        DType::Fp4x4,
        DType::I8,
        DType::U8,
        DType::I16,
        DType::U16,
        DType::I32,
        DType::U32,
    ];

    /// Size of one element in bytes.
    pub fn size(self) -> u32 {
        match self {
            DType::Fp8 | DType::Fp8E5m2 | DType::I8 | DType::U8 => 1,
            DType::Bf16 | DType::F16 | DType::Fp4x4 | DType::I16 | DType::U16 => 2,
            DType::F32 | DType::Tf32 | DType::Fp8x4 | DType::I32 | DType::U32 => 4,
        }
    }
    /// The keyword used in the text format.
    pub fn keyword(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::Bf16 => "bf16",
            DType::Fp8 => "fp8",
            DType::F16 => "f16",
            DType::Tf32 => "tf32",
            DType::Fp8E5m2 => "fp8_e5m2",
            DType::Fp8x4 => "fp8x4",
            DType::Fp4x4 => "fp4x4",
            DType::I8 => "i8",
            DType::U8 => "u8",
            DType::I16 => "i16",
            DType::U16 => "u16",
            DType::I32 => "i32",
            DType::U32 => "u32",
        }
    }
    /// The dtype whose [`DType::keyword`] is `s`.
    pub fn from_keyword(s: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.keyword() == s)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.keyword())
    }
}

/// A tensor declaration (`MEM NAME [PARTITIONS, BYTES] [DTYPE] [ATTR=VALUE ...]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tensor {
    /// Unique name.
    pub name: String,
    /// Memory it lives in.
    pub mem: Mem,
    /// Number of partitions.
    pub partitions: u32,
    /// Bytes per partition (a multiple of `dtype.size()`).
    pub bytes: u32,
    /// Element type.
    pub dtype: DType,
    /// PSUM base bank, once allocated (`bank=N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bank: Option<u32>,
    /// SBUF byte offset (`addr=N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub addr: Option<u64>,
    /// Where a traced kernel allocated the tile (`loc="FILE:LINE"`, SPEC §2.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loc: Option<String>,
    /// The variable of the innermost loop whose every iteration allocated the
    /// tile afresh in a traced kernel (`scope=VAR`, SPEC §2.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

impl Tensor {
    /// A declaration with no `bank=` or `addr=` attribute.
    pub fn new(
        name: impl Into<String>,
        mem: Mem,
        partitions: u32,
        bytes: u32,
        dtype: DType,
    ) -> Self {
        Tensor {
            name: name.into(),
            mem,
            partitions,
            bytes,
            dtype,
            bank: None,
            addr: None,
            loc: None,
            scope: None,
        }
    }

    /// Elements per partition.
    pub fn elems(&self) -> u32 {
        self.bytes / self.dtype.size()
    }
}

/// A loop variable's declaration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Var {
    /// The name as written (`k`); names may repeat across sibling loops.
    pub name: String,
}

/// An integer affine expression `c + Σ coef·var` over loop variables.
///
/// Canonical form: terms sorted by [`VarId`], no zero coefficients, no
/// repeated variables. Construct through [`Affine::constant`] and the
/// arithmetic helpers to keep it canonical.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Affine {
    /// Variable terms `(var, coefficient)`, sorted by var, coefficients non-zero.
    pub terms: Terms,
    /// The constant term.
    pub constant: i64,
}

/// The variable terms of an [`Affine`]: a list of `(var, coefficient)` pairs
/// behind one thin pointer, so that an [`Affine`] is 16 bytes and a constant
/// expression (no terms, the common case) owns no heap memory.
///
/// Reads go through `Deref<Target = [(VarId, i64)]>`; equality, hashing,
/// `Debug` and serde behave exactly like the `Vec` it replaces.
#[derive(Clone, Default)]
#[allow(clippy::box_collection)] // the point: `Box<Vec<_>>` is one word, `Vec` and `Box<[_]>` are more
pub struct Terms(Option<Box<Vec<(VarId, i64)>>>);

impl Terms {
    /// Appends `term` as is, without canonicalizing (like `Vec::push`); build
    /// canonical expressions with [`Affine::add_term`] instead.
    pub fn push(&mut self, term: (VarId, i64)) {
        self.0.get_or_insert_with(Box::default).push(term);
    }

    /// Adds `by` to every variable id (their order, and so the canonical
    /// form, is kept).
    pub(crate) fn offset_vars(&mut self, by: u32) {
        for (v, _) in self.0.iter_mut().flat_map(|v| v.iter_mut()) {
            v.0 += by;
        }
    }

    /// Applies `f` to the backing vector, releasing it when left empty.
    fn edit(&mut self, f: impl FnOnce(&mut Vec<(VarId, i64)>)) {
        let v = self.0.get_or_insert_with(Box::default);
        f(v);
        if v.is_empty() {
            self.0 = None;
        }
    }
}

impl std::ops::Deref for Terms {
    type Target = [(VarId, i64)];

    fn deref(&self) -> &[(VarId, i64)] {
        self.0.as_deref().map_or(&[], Vec::as_slice)
    }
}

impl<'a> IntoIterator for &'a Terms {
    type Item = &'a (VarId, i64);
    type IntoIter = std::slice::Iter<'a, (VarId, i64)>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl From<Vec<(VarId, i64)>> for Terms {
    fn from(v: Vec<(VarId, i64)>) -> Self {
        Terms((!v.is_empty()).then(|| Box::new(v)))
    }
}

impl PartialEq for Terms {
    fn eq(&self, other: &Terms) -> bool {
        **self == **other
    }
}

impl Eq for Terms {}

impl std::hash::Hash for Terms {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (**self).hash(state);
    }
}

impl fmt::Debug for Terms {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

impl Serialize for Terms {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Terms {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::deserialize(d).map(Terms::from)
    }
}

impl Affine {
    /// The constant expression `c`.
    pub fn constant(c: i64) -> Self {
        Affine {
            terms: Terms::default(),
            constant: c,
        }
    }

    /// The expression `coef·var`.
    pub fn var(var: VarId, coef: i64) -> Self {
        let mut a = Affine::constant(0);
        a.add_term(var, coef);
        a
    }

    /// Adds `coef·var`, keeping the form canonical.
    pub fn add_term(&mut self, var: VarId, coef: i64) {
        match self.terms.binary_search_by_key(&var, |t| t.0) {
            Ok(i) => self.terms.edit(|t| {
                t[i].1 += coef;
                if t[i].1 == 0 {
                    t.remove(i);
                }
            }),
            Err(i) => {
                if coef != 0 {
                    self.terms.edit(|t| t.insert(i, (var, coef)));
                }
            }
        }
    }

    /// Adds `sign·other` to `self`.
    pub fn add_scaled(&mut self, other: &Affine, sign: i64) {
        self.constant += sign * other.constant;
        for &(v, c) in &other.terms {
            self.add_term(v, sign * c);
        }
    }

    /// The constant value, when the expression has no variable terms.
    pub fn as_const(&self) -> Option<i64> {
        self.terms.is_empty().then_some(self.constant)
    }

    /// Evaluates with `value(var)` giving each variable's current value.
    pub fn eval(&self, value: impl Fn(VarId) -> i64) -> i64 {
        eval(self.constant, &self.terms, value)
    }

    /// Replaces `var` by the constant `val`.
    pub fn substitute(&self, var: VarId, val: i64) -> Affine {
        let mut out = Affine::constant(self.constant);
        for &(v, c) in &self.terms {
            if v == var {
                out.constant += c * val;
            } else {
                out.add_term(v, c);
            }
        }
        out
    }

    /// Prints in canonical text syntax (`k*1024+256`), naming variables via `vars`.
    pub fn display<'a>(&'a self, vars: &'a [Var]) -> impl fmt::Display + 'a {
        AffineDisplay { a: self, vars }
    }
}

/// Evaluates `constant + Σ coef·value(var)` over `terms`.
fn eval(constant: i64, terms: &[(VarId, i64)], value: impl Fn(VarId) -> i64) -> i64 {
    terms
        .iter()
        .fold(constant, |acc, &(v, c)| acc + c * value(v))
}

struct AffineDisplay<'a> {
    a: &'a Affine,
    vars: &'a [Var],
}

impl fmt::Display for AffineDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        self.a.write_text(&mut s, self.vars);
        f.write_str(&s)
    }
}

impl Affine {
    /// Appends the canonical text syntax (`k*1024+256`) to `out`, naming
    /// variables via `vars`; what [`Affine::display`] shows.
    pub fn write_text(&self, out: &mut String, vars: &[Var]) {
        write_affine(out, self.constant, &self.terms, vars);
    }
}

/// Appends `constant + Σ coef·var` over `terms` in canonical text syntax.
pub(crate) fn write_affine(out: &mut String, constant: i64, terms: &[(VarId, i64)], vars: &[Var]) {
    let mut num = itoa::Buffer::new();
    let mut first = true;
    for &(v, c) in terms {
        let mag = c.unsigned_abs();
        if c < 0 {
            out.push('-');
        } else if !first {
            out.push('+');
        }
        out.push_str(&vars[v.index()].name);
        if mag != 1 {
            out.push('*');
            out.push_str(num.format(mag));
        }
        first = false;
    }
    if first || constant < 0 {
        out.push_str(num.format(constant));
    } else if constant > 0 {
        out.push('+');
        out.push_str(num.format(constant));
    }
}

/// An access pattern `NAME[p0:p1, b0:b1]`: partitions `[p0, p1)` and bytes
/// `[b0, b1)` within each partition, relative to the tensor.
///
/// The four bounds are stored split, so that a constant access whose bounds
/// fit in 32 bits (the common case) is 32 bytes and owns no heap memory;
/// read them with [`Access::p0`] and friends or [`Bound::of`]. Serializes as
/// `{tensor, p0, p1, b0, b1}`.
#[derive(Clone, PartialEq, Eq, Hash, Deserialize)]
#[serde(from = "AccessFields")]
pub struct Access {
    /// The tensor accessed.
    pub tensor: TensorId,
    /// The constant terms of p0, p1, b0, b1 when `wide` is `None`; all zero
    /// otherwise (canonical, so that derived equality is equality of bounds).
    narrow: [i32; 4],
    /// The bounds in full, `None` when all four are constants that fit in
    /// an `i32`; canonical: `Some` only if some bound needs it.
    wide: Option<Box<WideBounds>>,
}

/// The bounds of an [`Access`] that has variable terms or a constant
/// beyond `i32`.
#[derive(Clone, PartialEq, Eq, Hash)]
struct WideBounds {
    /// The constant terms of p0, p1, b0, b1.
    consts: [i64; 4],
    /// Their variable terms.
    terms: [Terms; 4],
}

const _: () = assert!(std::mem::size_of::<Access>() == 32);

/// The serde form of an [`Access`]: its bounds as [`Affine`]s.
#[derive(Serialize, Deserialize)]
#[serde(rename = "Access")]
struct AccessFields {
    tensor: TensorId,
    p0: Affine,
    p1: Affine,
    b0: Affine,
    b1: Affine,
}

impl From<AccessFields> for Access {
    fn from(f: AccessFields) -> Self {
        Access::new(f.tensor, f.p0, f.p1, f.b0, f.b1)
    }
}

impl Serialize for Access {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let [p0, p1, b0, b1] = self.bounds();
        let fields = AccessFields {
            tensor: self.tensor,
            p0,
            p1,
            b0,
            b1,
        };
        fields.serialize(s)
    }
}

impl fmt::Debug for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Access")
            .field("tensor", &self.tensor)
            .field("p0", &self.p0())
            .field("p1", &self.p1())
            .field("b0", &self.b0())
            .field("b1", &self.b1())
            .finish()
    }
}

impl Access {
    /// The access `[p0:p1, b0:b1]` of tensor `id`.
    pub fn new(id: TensorId, p0: Affine, p1: Affine, b0: Affine, b1: Affine) -> Self {
        let bounds = [p0, p1, b0, b1];
        let consts = bounds.each_ref().map(|a| a.constant);
        if bounds.iter().all(|a| a.terms.is_empty()) {
            return Access::from_consts(id, consts);
        }
        Access::boxed(id, consts, bounds.map(|a| a.terms))
    }

    /// The access with constant bounds `consts` (p0, p1, b0, b1), narrow when they fit.
    pub fn from_consts(id: TensorId, consts: [i64; 4]) -> Self {
        match consts.map(i32::try_from) {
            [Ok(p0), Ok(p1), Ok(b0), Ok(b1)] => Access {
                tensor: id,
                narrow: [p0, p1, b0, b1],
                wide: None,
            },
            _ => Access::boxed(id, consts, Default::default()),
        }
    }

    /// The access with its bounds boxed.
    fn boxed(id: TensorId, consts: [i64; 4], terms: [Terms; 4]) -> Self {
        Access {
            tensor: id,
            narrow: [0; 4],
            wide: Some(Box::new(WideBounds { consts, terms })),
        }
    }

    /// The constant terms of p0, p1, b0, b1.
    fn consts(&self) -> [i64; 4] {
        match &self.wide {
            None => self.narrow.map(i64::from),
            Some(w) => w.consts,
        }
    }

    /// The access covering the whole of `t` (printed as the bare name).
    pub fn whole(id: TensorId, t: &Tensor) -> Self {
        Access::rect(id, 0, t.partitions as i64, 0, t.bytes as i64)
    }

    /// A constant access `[p0:p1, b0:b1]` of tensor `id`.
    pub fn rect(id: TensorId, p0: i64, p1: i64, b0: i64, b1: i64) -> Self {
        Access::from_consts(id, [p0, p1, b0, b1])
    }

    /// First partition.
    pub fn p0(&self) -> Affine {
        Bound::P0.of(self)
    }

    /// One past the last partition.
    pub fn p1(&self) -> Affine {
        Bound::P1.of(self)
    }

    /// First byte within each partition.
    pub fn b0(&self) -> Affine {
        Bound::B0.of(self)
    }

    /// One past the last byte within each partition.
    pub fn b1(&self) -> Affine {
        Bound::B1.of(self)
    }

    /// The four bounds in [`Bound::ALL`] order.
    pub fn bounds(&self) -> [Affine; 4] {
        Bound::ALL.map(|b| b.of(self))
    }

    /// Adds `by` to every loop variable id in the bounds.
    pub(crate) fn offset_vars(&mut self, by: u32) {
        if let Some(wide) = &mut self.wide {
            for t in &mut wide.terms {
                t.offset_vars(by);
            }
        }
    }

    /// Rewrites each bound in place with `f(bound, expr)`, in [`Bound::ALL`] order.
    pub fn edit_bounds(&mut self, mut f: impl FnMut(Bound, &mut Affine)) {
        let mut bounds = self.bounds();
        for (b, e) in Bound::ALL.into_iter().zip(&mut bounds) {
            f(b, e);
        }
        let [p0, p1, b0, b1] = bounds;
        *self = Access::new(self.tensor, p0, p1, b0, b1);
    }

    /// True when the access is constant and covers all of `t`.
    pub fn is_whole(&self, t: &Tensor) -> bool {
        !self.is_affine() && self.consts() == [0, t.partitions as i64, 0, t.bytes as i64]
    }

    /// Partition extent `p1 − p0` (constant for valid programs; evaluated at all-zero vars).
    pub fn part_extent(&self) -> i64 {
        let c = self.consts();
        c[1] - c[0]
    }

    /// Byte extent `b1 − b0` (constant for valid programs; evaluated at all-zero vars).
    pub fn byte_extent(&self) -> i64 {
        let c = self.consts();
        c[3] - c[2]
    }

    /// Evaluates all four bounds for the current variable values.
    pub fn region(&self, value: impl Fn(VarId) -> i64) -> Region {
        let [p0, p1, b0, b1] = match &self.wide {
            None => self.narrow.map(i64::from),
            Some(w) => std::array::from_fn(|i| eval(w.consts[i], &w.terms[i], &value)),
        };
        Region { p0, p1, b0, b1 }
    }

    /// Whether any bound mentions a loop variable.
    pub fn is_affine(&self) -> bool {
        self.wide
            .as_ref()
            .is_some_and(|w| w.terms.iter().any(|t| !t.is_empty()))
    }
}

/// A concrete (evaluated) access region: partitions `[p0, p1)`, bytes `[b0, b1)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Region {
    /// First partition.
    pub p0: i64,
    /// One past the last partition.
    pub p1: i64,
    /// First byte.
    pub b0: i64,
    /// One past the last byte.
    pub b1: i64,
}

impl Region {
    /// Whether the two regions share at least one cell.
    pub fn overlaps(&self, o: &Region) -> bool {
        self.p0 < o.p1 && o.p0 < self.p1 && self.b0 < o.b1 && o.b0 < self.b1
    }
    /// Whether `self` contains every cell of `o`.
    pub fn contains(&self, o: &Region) -> bool {
        self.p0 <= o.p0 && o.p1 <= self.p1 && self.b0 <= o.b0 && o.b1 <= self.b1
    }
}

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

/// A counted loop `loop VAR LO..HI { … }`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Loop {
    /// The induction variable.
    pub var: VarId,
    /// First value.
    pub lo: i64,
    /// One past the last value.
    pub hi: i64,
    /// The kernel declared the iterations independent (NKI's `affine_range`,
    /// `loop VAR LO..HI affine`); it changes no meaning, the lints read it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub affine: bool,
    /// The body.
    pub body: Vec<Stmt>,
}

impl Loop {
    /// Number of iterations (`hi − lo`, 0 if empty).
    pub fn trip_count(&self) -> u64 {
        (self.hi - self.lo).max(0) as u64
    }
}

/// An element of a block or loop body.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stmt {
    /// An instruction.
    Inst(InstId),
    /// A nested loop.
    Loop(LoopId),
}

/// A named block; blocks run in order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Block {
    /// The block's name.
    pub name: String,
    /// Its statements in program order.
    pub body: Vec<Stmt>,
}

/// A whole program: one `arch` line, declarations, and blocks.
///
/// Arena order carries no meaning; program order is given by the block and
/// loop bodies. Equality ([`Module::same_program`]) compares programs, not
/// arena layouts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Module {
    /// The architecture codename as written (`trn1`).
    pub arch: String,
    /// Tensor declarations in order.
    pub tensors: Vec<Tensor>,
    /// Loop variables (one per loop).
    pub vars: Vec<Var>,
    /// Instruction arena.
    pub insts: Vec<Inst>,
    /// Loop arena.
    pub loops: Vec<Loop>,
    /// Blocks in execution order.
    pub blocks: Vec<Block>,
}

impl Module {
    /// An empty module for `arch`.
    pub fn new(arch: impl Into<String>) -> Self {
        Module {
            arch: arch.into(),
            ..Default::default()
        }
    }

    /// The tensor record for `id`.
    pub fn tensor(&self, id: TensorId) -> &Tensor {
        &self.tensors[id.index()]
    }

    /// The instruction for `id`.
    pub fn inst(&self, id: InstId) -> &Inst {
        &self.insts[id.index()]
    }

    /// The loop for `id`.
    pub fn loop_(&self, id: LoopId) -> &Loop {
        &self.loops[id.index()]
    }

    /// Looks a tensor up by name (linear scan).
    pub fn tensor_by_name(&self, name: &str) -> Option<TensorId> {
        self.tensors
            .iter()
            .position(|t| t.name == name)
            .map(TensorId::new)
    }

    /// An index from tensor names to ids, for lookups in loops over many
    /// tensors ([`Module::tensor_by_name`] scans).
    pub fn name_index(&self) -> std::collections::HashMap<&str, TensorId> {
        self.tensors
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.as_str(), TensorId::new(i)))
            .collect()
    }

    /// Declares a tensor and returns its id.
    pub fn add_tensor(&mut self, t: Tensor) -> TensorId {
        self.tensors.push(t);
        TensorId::new(self.tensors.len() - 1)
    }

    /// Adds a loop variable and returns its id.
    pub fn add_var(&mut self, name: impl Into<String>) -> VarId {
        self.vars.push(Var { name: name.into() });
        VarId::new(self.vars.len() - 1)
    }

    /// Adds an instruction to the arena (not yet placed in any body).
    pub fn add_inst(&mut self, inst: Inst) -> InstId {
        self.insts.push(inst);
        InstId::new(self.insts.len() - 1)
    }

    /// Adds a loop to the arena (not yet placed in any body).
    pub fn add_loop(&mut self, l: Loop) -> LoopId {
        self.loops.push(l);
        LoopId::new(self.loops.len() - 1)
    }

    /// Visits every statement in program order with its loop nest
    /// (outermost first). `f` sees loops on entry ([`Visit::Enter`]) and exit
    /// ([`Visit::Exit`]) and each instruction ([`Visit::Inst`]).
    pub fn walk(&self, mut f: impl FnMut(Visit, &[LoopId])) {
        let mut nest = Vec::new();
        for (bi, b) in self.blocks.iter().enumerate() {
            f(Visit::BlockStart(bi), &nest);
            self.walk_body(&b.body, &mut nest, &mut f);
        }
    }

    fn walk_body(
        &self,
        body: &[Stmt],
        nest: &mut Vec<LoopId>,
        f: &mut impl FnMut(Visit, &[LoopId]),
    ) {
        for s in body {
            match *s {
                Stmt::Inst(i) => f(Visit::Inst(i), nest),
                Stmt::Loop(l) => {
                    f(Visit::Enter(l), nest);
                    nest.push(l);
                    self.walk_body(&self.loops[l.index()].body, nest, f);
                    nest.pop();
                    f(Visit::Exit(l), nest);
                }
            }
        }
    }

    /// Instructions in program order (each loop body once).
    pub fn insts_in_order(&self) -> Vec<InstId> {
        let mut out = Vec::new();
        self.walk(|v, _| {
            if let Visit::Inst(i) = v {
                out.push(i);
            }
        });
        out
    }

    /// Per tensor, whether a placed instruction accesses it.
    pub fn accessed_tensors(&self) -> Vec<bool> {
        let mut used = vec![false; self.tensors.len()];
        self.walk(|v, _| {
            if let Visit::Inst(i) = v {
                let kind = &self.inst(i).kind;
                for a in std::iter::once(kind.dst()).chain(kind.srcs()) {
                    if let Some(u) = used.get_mut(a.tensor.index()) {
                        *u = true;
                    }
                }
            }
        });
        used
    }

    /// Whether the program has any loop.
    pub fn has_loops(&self) -> bool {
        self.blocks
            .iter()
            .any(|b| b.body.iter().any(|s| matches!(s, Stmt::Loop(_))))
    }

    /// Rebuilds the arenas in program order, dropping unreachable entries.
    /// Two modules that print the same compare equal after compaction.
    pub fn compacted(&self) -> Module {
        let mut out = Module {
            arch: self.arch.clone(),
            tensors: self.tensors.clone(),
            ..Default::default()
        };
        let mut var_map = vec![None; self.vars.len()];
        let blocks = self
            .blocks
            .iter()
            .map(|b| Block {
                name: b.name.clone(),
                body: self.compact_body(&b.body, &mut out, &mut var_map),
            })
            .collect();
        out.blocks = blocks;
        out
    }

    fn compact_body(
        &self,
        body: &[Stmt],
        out: &mut Module,
        var_map: &mut Vec<Option<VarId>>,
    ) -> Vec<Stmt> {
        body.iter()
            .map(|s| match *s {
                Stmt::Inst(i) => {
                    let mut inst = self.insts[i.index()].clone();
                    remap_inst_vars(&mut inst, var_map);
                    Stmt::Inst(out.add_inst(inst))
                }
                Stmt::Loop(l) => {
                    let lp = &self.loops[l.index()];
                    let nv = out.add_var(self.vars[lp.var.index()].name.clone());
                    var_map[lp.var.index()] = Some(nv);
                    let id = out.add_loop(Loop {
                        var: nv,
                        lo: lp.lo,
                        hi: lp.hi,
                        affine: lp.affine,
                        body: Vec::new(),
                    });
                    let b = self.compact_body(&lp.body, out, var_map);
                    out.loops[id.index()].body = b;
                    Stmt::Loop(id)
                }
            })
            .collect()
    }

    /// Program equality: same arch, declarations and statements in program
    /// order, regardless of arena layout.
    pub fn same_program(&self, other: &Module) -> bool {
        self.compacted() == other.compacted()
    }
}

fn remap_inst_vars(inst: &mut Inst, var_map: &[Option<VarId>]) {
    let remap = |a: &mut Affine| {
        let terms = std::mem::take(&mut a.terms);
        for &(v, c) in &terms {
            a.add_term(var_map[v.index()].unwrap_or(v), c);
        }
    };
    inst.kind.dst_mut().edit_bounds(|_, a| remap(a));
    for s in inst.kind.srcs_mut() {
        s.edit_bounds(|_, a| remap(a));
    }
}

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
    /// sources in [`InstKind::srcs`] order.
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

/// The four bounds of an [`Access`]; the discriminant is the bound's slot
/// in the access's storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bound {
    /// First partition.
    P0 = 0,
    /// One past the last partition.
    P1 = 1,
    /// First byte.
    B0 = 2,
    /// One past the last byte.
    B1 = 3,
}

impl Bound {
    /// All four, in text order.
    pub const ALL: [Bound; 4] = [Bound::P0, Bound::P1, Bound::B0, Bound::B1];

    /// The bound's constant term and variable terms in `a`, borrowed.
    pub fn parts(self, a: &Access) -> (i64, &[(VarId, i64)]) {
        let i = self as usize;
        match &a.wide {
            None => (a.narrow[i].into(), &[]),
            Some(w) => (w.consts[i], &w.terms[i]),
        }
    }

    /// The bound's expression in `a` (allocation-free when it is constant).
    pub fn of(self, a: &Access) -> Affine {
        let i = self as usize;
        match &a.wide {
            None => Affine::constant(a.narrow[i].into()),
            Some(w) => Affine {
                terms: w.terms[i].clone(),
                constant: w.consts[i],
            },
        }
    }
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Bound::P0 => "p0",
            Bound::P1 => "p1",
            Bound::B0 => "b0",
            Bound::B1 => "b1",
        })
    }
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

/// One step of [`Module::walk`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Visit {
    /// Start of block `n` (blocks run in order).
    BlockStart(usize),
    /// Entering a loop (its header).
    Enter(LoopId),
    /// An instruction.
    Inst(InstId),
    /// Leaving a loop (its end).
    Exit(LoopId),
}

impl fmt::Display for TensorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t{}", self.0)
    }
}

impl fmt::Display for InstId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%{}", self.0)
    }
}

impl fmt::Display for LoopId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "loop{}", self.0)
    }
}

impl fmt::Display for VarId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affine_canonical_and_display() {
        let vars = vec![Var { name: "k".into() }, Var { name: "j".into() }];
        let mut a = Affine::constant(256);
        a.add_term(VarId(0), 1024);
        assert_eq!(a.display(&vars).to_string(), "k*1024+256");
        a.add_term(VarId(1), -1);
        assert_eq!(a.display(&vars).to_string(), "k*1024-j+256");
        a.add_term(VarId(0), -1024);
        assert_eq!(*a.terms, [(VarId(1), -1)]);
        assert_eq!(Affine::constant(-3).display(&vars).to_string(), "-3");
        assert_eq!(Affine::var(VarId(0), 1).display(&vars).to_string(), "k");
        assert_eq!(a.eval(|_| 5), 251);
        assert_eq!(a.substitute(VarId(1), 6).as_const(), Some(250));
    }

    #[test]
    fn terms_stay_thin_and_vec_like() {
        let mut a = Affine::var(VarId(2), 3);
        a.add_term(VarId(2), -3);
        assert_eq!(a, Affine::constant(0));
        assert!(a.terms.0.is_none());
        a.terms.push((VarId(1), 0));
        assert_eq!(format!("{:?}", a.terms), "[(VarId(1), 0)]");
        let json = serde_json::to_string(&Affine::var(VarId(1), -2)).unwrap();
        assert_eq!(json, r#"{"terms":[[1,-2]],"constant":0}"#);
        let back: Affine = serde_json::from_str(r#"{"terms":[],"constant":5}"#).unwrap();
        assert!(back.terms.0.is_none());
        assert_eq!(back, Affine::constant(5));
    }

    #[test]
    fn access_reads_serializes_and_debugs_as_four_affines() {
        let k = Affine::var(VarId(0), 4);
        let (c0, c2, c8) = (
            Affine::constant(0),
            Affine::constant(2),
            Affine::constant(8),
        );
        let a = Access::new(TensorId(1), c0.clone(), c2, k.clone(), c8);
        assert!(a.is_affine());
        assert_eq!((a.p0(), a.b0()), (c0, k));
        let json = serde_json::to_string(&a).unwrap();
        assert_eq!(
            json,
            r#"{"tensor":1,"p0":{"terms":[],"constant":0},"p1":{"terms":[],"constant":2},"b0":{"terms":[[0,4]],"constant":0},"b1":{"terms":[],"constant":8}}"#
        );
        assert_eq!(serde_json::from_str::<Access>(&json).unwrap(), a);
        assert_eq!(
            format!("{a:?}"),
            "Access { tensor: TensorId(1), p0: Affine { terms: [], constant: 0 }, \
             p1: Affine { terms: [], constant: 2 }, b0: Affine { terms: [(VarId(0), 4)], constant: 0 }, \
             b1: Affine { terms: [], constant: 8 } }"
        );
        let mut c = a;
        c.edit_bounds(|_, e| *e = e.substitute(VarId(0), 1));
        assert_eq!(c, Access::rect(TensorId(1), 0, 2, 4, 8));
        assert!(!c.is_affine());
    }

    /// Constants beyond `i32` move the bounds to the heap without changing
    /// what the access means, and equality does not see where they live.
    #[test]
    fn access_with_wide_constants_reads_as_written() {
        let big = i64::from(i32::MAX) + 1;
        let a = Access::rect(TensorId(2), 0, 4, big, big + 8);
        assert!(a.wide.is_some());
        assert!(!a.is_affine());
        assert_eq!(
            (a.b0(), a.byte_extent(), a.part_extent()),
            (Affine::constant(big), 8, 4)
        );
        assert_eq!(
            a.region(|_| 0),
            Region {
                p0: 0,
                p1: 4,
                b0: big,
                b1: big + 8
            }
        );
        let json = serde_json::to_string(&a).unwrap();
        assert_eq!(serde_json::from_str::<Access>(&json).unwrap(), a);
        let mut b = a.clone();
        b.edit_bounds(|bound, e| {
            if matches!(bound, Bound::B0 | Bound::B1) {
                *e = Affine::constant(e.constant - big);
            }
        });
        assert_eq!(b, Access::rect(TensorId(2), 0, 4, 0, 8));
        assert!(b.wide.is_none());
        let neg = Access::rect(TensorId(2), i64::from(i32::MIN) - 1, 0, 0, 1);
        assert_eq!(neg.p0(), Affine::constant(i64::from(i32::MIN) - 1));
    }

    /// The boxed names keep the old field-wise JSON and `Debug`, and stay
    /// canonical so that equality ignores how they were set.
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

    /// Issue #6: a 1M-tensor program has ~7M instructions.
    #[test]
    fn ir_sizes() {
        use std::mem::size_of;
        assert_eq!(size_of::<Affine>(), 16);
        assert_eq!(size_of::<Access>(), 32);
        assert_eq!(size_of::<InstKind>(), 72);
        assert_eq!(size_of::<Inst>(), 80);
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

    #[test]
    fn region_overlap_contains() {
        let a = Region {
            p0: 0,
            p1: 64,
            b0: 0,
            b1: 2048,
        };
        let b = Region {
            p0: 64,
            p1: 128,
            b0: 0,
            b1: 2048,
        };
        assert!(!a.overlaps(&b));
        let c = Region {
            p0: 0,
            p1: 128,
            b0: 0,
            b1: 2048,
        };
        assert!(c.contains(&a) && c.contains(&b) && !a.contains(&c));
        assert!(c.overlaps(&a));
    }
}
