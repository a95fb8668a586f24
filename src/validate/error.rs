//! The validation errors: what is wrong, and the [`Loc`] it is wrong at.

use crate::arch;
use crate::ir::{Bound, DType, Loc, Mem};

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
    /// A loop bound, coefficient or constant beyond [`MAX_LOOP_BOUND`](super::MAX_LOOP_BOUND) or [`MAX_AFFINE`](super::MAX_AFFINE).
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
    /// than [`MAX_READ_CHECK_STEPS`](super::MAX_READ_CHECK_STEPS).
    #[error("checking that PSUM is written before it is read would step through more than {0} instructions")]
    ReadCheckLimit(u64),
}

pub(super) fn err<T>(loc: Loc, kind: ValidateErrorKind) -> Result<T, ValidateError> {
    Err(ValidateError {
        loc,
        kind: Box::new(kind),
    })
}

pub(super) fn malformed<T>(loc: Loc, msg: String) -> Result<T, ValidateError> {
    err(loc, ValidateErrorKind::Malformed(msg))
}
