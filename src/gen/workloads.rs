//! Workload generators (SPEC §7): valid programs shaped like public NKI
//! kernels — tiled matmul, fused attention forward and backward, QKV
//! projection, conv1d, column-tiled matmul groups — plus a seeded random
//! program with a chosen PSUM pressure for stress and scaling runs.
//!
//! Each generator takes a params struct (defaults documented on its fields)
//! and builds a [`Module`] through the IR API. The programs follow the Neuron
//! conventions of SPEC §2.3: inputs are DMA'd from DRAM into SBUF, matmuls
//! accumulate `[M partitions, N ≤ 512 elements]` f32 tiles (one bank) over
//! contraction chunks of at most 128 partitions, and results are evacuated
//! from PSUM by `act` and DMA'd back to DRAM. Every matmul reads different
//! operand bytes, so the simulator's value comparison (SPEC §5) can tell
//! tensors apart. The M tile (PSUM partitions, PE columns) is the smaller of
//! the PE column count and the PSUM partition count: 128, or 64 on gen1.
//!
//! [`Workload`] bundles a kind with its params for the `psum gen` command
//! line; [`generate`] dispatches.

use super::random::Rng;
use crate::arch::{self, Arch, ArchError, PSUM_BANK_SIZE};
use crate::ir::{
    Access, Affine, Block, DType, Flags, Inst, InstKind, Loop, Matmul, MatmulKind, Mem, Module,
    Stmt, Tensor, TensorId, VarId,
};
use std::fmt;
use std::ops::Range;

/// Bytes per partition of one PSUM bank.
const BANK: u32 = PSUM_BANK_SIZE;
/// f32 elements per partition in one bank: the N of a one-bank matmul.
const TILE_N: u32 = 512;
/// PE rows: the contraction (K) chunk of a matmul.
const K_TILE: u32 = 128;

/// Why a workload could not be generated.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum GenError {
    /// The workload name is not one of [`WorkloadKind::ALL`].
    #[error("unknown workload '{0}' (known: gemm, attention, attention-bwd, qkv, conv1d, column-tiled, random)")]
    UnknownWorkload(String),
    /// A `--key` the workload does not have.
    #[error("workload {workload} has no parameter '--{key}' (parameters: {known})")]
    UnknownParam {
        /// The workload.
        workload: &'static str,
        /// The key as given (without `--`).
        key: String,
        /// The workload's keys, comma-separated.
        known: String,
    },
    /// A `--key` at the end of the arguments with no value.
    #[error("parameter '--{0}' needs a value")]
    MissingValue(String),
    /// A value that does not parse.
    #[error("bad value '{value}' for '--{key}': expected {expected}")]
    BadValue {
        /// The key.
        key: &'static str,
        /// The value as given.
        value: String,
        /// What was expected.
        expected: &'static str,
    },
    /// More positional arguments than the workload takes.
    #[error("unexpected argument '{arg}' for workload {workload}")]
    ExtraArg {
        /// The workload.
        workload: &'static str,
        /// The argument.
        arg: String,
    },
    /// The architecture codename is unknown.
    #[error(transparent)]
    Arch(#[from] ArchError),
    /// A size that must be a positive multiple of a tile.
    #[error("{param} = {value} must be a positive multiple of {multiple}")]
    NotMultiple {
        /// The parameter.
        param: &'static str,
        /// Its value.
        value: u64,
        /// The tile it must be a multiple of.
        multiple: u64,
    },
    /// A parameter outside its range.
    #[error("{param} = {value} is out of range {lo}..={hi} ({why})")]
    OutOfRange {
        /// The parameter.
        param: &'static str,
        /// Its value.
        value: u64,
        /// Smallest allowed value.
        lo: u64,
        /// Largest allowed value.
        hi: u64,
        /// The constraint behind the range.
        why: &'static str,
    },
    /// The random workload's pressure is not a positive number of banks.
    #[error("pressure = {0} must be a positive number of banks")]
    BadPressure(f64),
    /// A tensor whose bytes per partition do not fit the IR's `u32`.
    #[error("tensor {tensor} would need {bytes} bytes per partition")]
    TooLarge {
        /// The tensor.
        tensor: String,
        /// Bytes per partition it would need.
        bytes: u64,
    },
    /// The SBUF tensors do not fit the architecture's SBUF partition.
    #[error("the SBUF tensors need {bytes} bytes per partition; {arch} has {limit}")]
    SbufOverflow {
        /// The architecture codename.
        arch: String,
        /// Bytes per partition the program's SBUF tensors need.
        bytes: u64,
        /// Bytes per SBUF partition of the architecture.
        limit: u64,
    },
}

// ---------------------------------------------------------------------------
// Params

/// `gemm M N K`: `out[M, N] = lhsTᵀ · rhs` tiled the Neuron way.
#[derive(Clone, Debug, PartialEq)]
pub struct GemmParams {
    /// Architecture codename (default `trn1`).
    pub arch: String,
    /// Output rows (default 256; a multiple of the M tile).
    pub m: u32,
    /// Output columns (default 1024; a multiple of 512).
    pub n: u32,
    /// Contraction size (default 512; a multiple of 128).
    pub k: u32,
}

impl Default for GemmParams {
    fn default() -> Self {
        GemmParams {
            arch: "trn1".into(),
            m: 256,
            n: 1024,
            k: 512,
        }
    }
}

/// `attention`: fused single-head attention forward, `out = softmax(QKᵀ)·V`.
#[derive(Clone, Debug, PartialEq)]
pub struct AttentionParams {
    /// Architecture codename (default `trn1`).
    pub arch: String,
    /// Query length (default 512; a multiple of the M tile).
    pub seq_q: u32,
    /// Key/value length (default 1024; a multiple of 512).
    pub seq_k: u32,
    /// Head dimension (default 128; at most 128).
    pub d: u32,
}

impl Default for AttentionParams {
    fn default() -> Self {
        AttentionParams {
            arch: "trn1".into(),
            seq_q: 512,
            seq_k: 1024,
            d: 128,
        }
    }
}

/// `attention-bwd`: fused single-head attention backward (dQ, dK, dV).
#[derive(Clone, Debug, PartialEq)]
pub struct AttentionBwdParams {
    /// Architecture codename (default `trn1`).
    pub arch: String,
    /// Query length (default 512; a multiple of the M tile).
    pub seq_q: u32,
    /// Key/value length (default 1536; a multiple of 512, at most 1536 on
    /// gen2/gen3, 1024 on gen4, 512 on gen1).
    pub seq_k: u32,
    /// Head dimension (default 128; at most the M tile).
    pub d: u32,
}

impl Default for AttentionBwdParams {
    fn default() -> Self {
        AttentionBwdParams {
            arch: "trn1".into(),
            seq_q: 512,
            seq_k: 1536,
            d: 128,
        }
    }
}

/// `qkv`: the fused QKV projection `x · [Wq Wk Wv]`.
#[derive(Clone, Debug, PartialEq)]
pub struct QkvParams {
    /// Architecture codename (default `trn1`).
    pub arch: String,
    /// Tokens (default 256; a multiple of the M tile).
    pub tokens: u32,
    /// Hidden size H, the contraction (default 512; a multiple of 128).
    pub hidden: u32,
    /// Output groups of 512 columns accumulated together (default 6; at
    /// most the PSUM bank count).
    pub groups: u32,
}

impl Default for QkvParams {
    fn default() -> Self {
        QkvParams {
            arch: "trn1".into(),
            tokens: 256,
            hidden: 512,
            groups: 6,
        }
    }
}

/// `conv1d`: `out[co, l] = Σ_ci Σ_t w[t, ci, co] · x[ci, l + t]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Conv1dParams {
    /// Architecture codename (default `trn1`).
    pub arch: String,
    /// Input channels (default 256; a multiple of 128).
    pub c_in: u32,
    /// Output channels (default 128; a multiple of the M tile).
    pub c_out: u32,
    /// Filter taps (default 3; at least 1).
    pub taps: u32,
    /// Output length (default 4096; a multiple of 512 × accumulators).
    pub length: u32,
    /// PSUM accumulators used round-robin (default 4; at most the PSUM bank count).
    pub accumulators: u32,
}

impl Default for Conv1dParams {
    fn default() -> Self {
        Conv1dParams {
            arch: "trn1".into(),
            c_in: 256,
            c_out: 128,
            taps: 3,
            length: 4096,
            accumulators: 4,
        }
    }
}

/// `column-tiled`: a narrow matmul split into column tiles placed side by
/// side in the PE array (SPEC §4.2).
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnTiledParams {
    /// Architecture codename (default `trn1`).
    pub arch: String,
    /// Columns of one tile, the M of each matmul (default 64; below the PE column count).
    pub cols: u32,
    /// Column tiles side by side (default 2; `tiles × cols` at most the M tile).
    pub tiles: u32,
    /// Output columns (default 1024; a multiple of 512).
    pub n: u32,
    /// Contraction size (default 512; a multiple of 128).
    pub k: u32,
}

impl Default for ColumnTiledParams {
    fn default() -> Self {
        ColumnTiledParams {
            arch: "trn1".into(),
            cols: 64,
            tiles: 2,
            n: 1024,
            k: 512,
        }
    }
}

/// `random`: straight-line PSUM traffic with a target pressure.
#[derive(Clone, Debug, PartialEq)]
pub struct RandomParams {
    /// Architecture codename (default `trn1`).
    pub arch: String,
    /// Number of PSUM tensors (default 24).
    pub tensors: u32,
    /// Target average number of live banks (default `None`: 1.5 × the bank count).
    pub pressure: Option<f64>,
    /// PRNG seed (default 0).
    pub seed: u64,
    /// Mix 1–4-bank tensors instead of only one-bank tensors (default false).
    pub multi_bank: bool,
    /// Emit accumulation chains of two matmuls as loops (default false).
    pub loops: bool,
}

impl Default for RandomParams {
    fn default() -> Self {
        RandomParams {
            arch: "trn1".into(),
            tensors: 24,
            pressure: None,
            seed: 0,
            multi_bank: false,
            loops: false,
        }
    }
}

// ---------------------------------------------------------------------------
// Workload kinds and the command-line surface

/// The workload kinds of SPEC §7.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WorkloadKind {
    /// [`gemm`].
    Gemm,
    /// [`attention`].
    Attention,
    /// [`attention_bwd`].
    AttentionBwd,
    /// [`qkv`].
    Qkv,
    /// [`conv1d`].
    Conv1d,
    /// [`column_tiled`].
    ColumnTiled,
    /// [`random`].
    Random,
}

impl WorkloadKind {
    /// Every kind, in SPEC §7 order.
    pub const ALL: [WorkloadKind; 7] = [
        WorkloadKind::Gemm,
        WorkloadKind::Attention,
        WorkloadKind::AttentionBwd,
        WorkloadKind::Qkv,
        WorkloadKind::Conv1d,
        WorkloadKind::ColumnTiled,
        WorkloadKind::Random,
    ];

    /// The name used on the command line (`attention-bwd`).
    pub fn name(self) -> &'static str {
        match self {
            WorkloadKind::Gemm => "gemm",
            WorkloadKind::Attention => "attention",
            WorkloadKind::AttentionBwd => "attention-bwd",
            WorkloadKind::Qkv => "qkv",
            WorkloadKind::Conv1d => "conv1d",
            WorkloadKind::ColumnTiled => "column-tiled",
            WorkloadKind::Random => "random",
        }
    }

    /// Looks a kind up by its command-line name.
    pub fn from_name(name: &str) -> Result<WorkloadKind, GenError> {
        WorkloadKind::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| GenError::UnknownWorkload(name.to_string()))
    }

    /// Parameter keys that may also be given positionally, in order
    /// (`psum gen gemm M N K`).
    pub fn positional(self) -> &'static [&'static str] {
        match self {
            WorkloadKind::Gemm => &["m", "n", "k"],
            _ => &[],
        }
    }
}

impl fmt::Display for WorkloadKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A workload kind with its parameters: what `psum gen KIND …` describes.
#[derive(Clone, Debug, PartialEq)]
pub enum Workload {
    /// [`gemm`].
    Gemm(GemmParams),
    /// [`attention`].
    Attention(AttentionParams),
    /// [`attention_bwd`].
    AttentionBwd(AttentionBwdParams),
    /// [`qkv`].
    Qkv(QkvParams),
    /// [`conv1d`].
    Conv1d(Conv1dParams),
    /// [`column_tiled`].
    ColumnTiled(ColumnTiledParams),
    /// [`random`].
    Random(RandomParams),
}

/// Where a parameter's value lives, typed.
enum Slot<'a> {
    Size(&'a mut u32),
    Seed(&'a mut u64),
    Pressure(&'a mut Option<f64>),
    Flag(&'a mut bool),
    Arch(&'a mut String),
}

/// One command-line parameter of a workload.
struct Param<'a> {
    key: &'static str,
    doc: &'static str,
    slot: Slot<'a>,
}

impl<'a> Param<'a> {
    fn new(key: &'static str, doc: &'static str, slot: Slot<'a>) -> Self {
        Param { key, doc, slot }
    }

    fn arch(arch: &'a mut String) -> Self {
        Param::new("arch", "architecture codename", Slot::Arch(arch))
    }

    /// The value as it would be written on the command line; `None` when
    /// the parameter is unset (an automatic pressure, a false flag).
    fn value(&self) -> Option<String> {
        match &self.slot {
            Slot::Size(v) => Some(v.to_string()),
            Slot::Seed(v) => Some(v.to_string()),
            Slot::Pressure(v) => v.map(|p| p.to_string()),
            Slot::Flag(v) => v.then(String::new),
            Slot::Arch(v) => Some(v.to_string()),
        }
    }

    fn set(&mut self, value: &str) -> Result<(), GenError> {
        let bad = |expected| GenError::BadValue {
            key: self.key,
            value: value.to_string(),
            expected,
        };
        match &mut self.slot {
            Slot::Size(v) => **v = value.parse().map_err(|_| bad("a non-negative integer"))?,
            Slot::Seed(v) => {
                **v = value
                    .parse()
                    .map_err(|_| bad("a 64-bit unsigned integer"))?
            }
            Slot::Pressure(v) => **v = Some(value.parse().map_err(|_| bad("a number"))?),
            Slot::Flag(v) => {
                **v = match value {
                    "" | "true" => true,
                    "false" => false,
                    _ => return Err(bad("true or false")),
                }
            }
            Slot::Arch(v) => **v = value.to_string(),
        }
        Ok(())
    }
}

impl Workload {
    /// The kind with its default parameters.
    pub fn defaults(kind: WorkloadKind) -> Workload {
        match kind {
            WorkloadKind::Gemm => Workload::Gemm(GemmParams::default()),
            WorkloadKind::Attention => Workload::Attention(AttentionParams::default()),
            WorkloadKind::AttentionBwd => Workload::AttentionBwd(AttentionBwdParams::default()),
            WorkloadKind::Qkv => Workload::Qkv(QkvParams::default()),
            WorkloadKind::Conv1d => Workload::Conv1d(Conv1dParams::default()),
            WorkloadKind::ColumnTiled => Workload::ColumnTiled(ColumnTiledParams::default()),
            WorkloadKind::Random => Workload::Random(RandomParams::default()),
        }
    }

    /// Which kind this is.
    pub fn kind(&self) -> WorkloadKind {
        match self {
            Workload::Gemm(_) => WorkloadKind::Gemm,
            Workload::Attention(_) => WorkloadKind::Attention,
            Workload::AttentionBwd(_) => WorkloadKind::AttentionBwd,
            Workload::Qkv(_) => WorkloadKind::Qkv,
            Workload::Conv1d(_) => WorkloadKind::Conv1d,
            Workload::ColumnTiled(_) => WorkloadKind::ColumnTiled,
            Workload::Random(_) => WorkloadKind::Random,
        }
    }

    fn params(&mut self) -> Vec<Param<'_>> {
        use Slot::{Flag, Pressure, Seed, Size};
        match self {
            Workload::Gemm(p) => vec![
                Param::new("m", "output rows (multiple of the M tile)", Size(&mut p.m)),
                Param::new("n", "output columns (multiple of 512)", Size(&mut p.n)),
                Param::new("k", "contraction size (multiple of 128)", Size(&mut p.k)),
                Param::arch(&mut p.arch),
            ],
            Workload::Attention(p) => attention_params(
                &mut p.seq_q,
                &mut p.seq_k,
                &mut p.d,
                "head dimension (at most 128)",
                &mut p.arch,
            ),
            Workload::AttentionBwd(p) => attention_params(
                &mut p.seq_q,
                &mut p.seq_k,
                &mut p.d,
                "head dimension (at most the M tile)",
                &mut p.arch,
            ),
            Workload::Qkv(p) => vec![
                Param::new(
                    "tokens",
                    "tokens (multiple of the M tile)",
                    Size(&mut p.tokens),
                ),
                Param::new(
                    "hidden",
                    "hidden size H (multiple of 128)",
                    Size(&mut p.hidden),
                ),
                Param::new(
                    "groups",
                    "512-column output groups (at most the bank count)",
                    Size(&mut p.groups),
                ),
                Param::arch(&mut p.arch),
            ],
            Workload::Conv1d(p) => vec![
                Param::new(
                    "c-in",
                    "input channels (multiple of 128)",
                    Size(&mut p.c_in),
                ),
                Param::new(
                    "c-out",
                    "output channels (multiple of the M tile)",
                    Size(&mut p.c_out),
                ),
                Param::new("taps", "filter taps", Size(&mut p.taps)),
                Param::new(
                    "length",
                    "output length (multiple of 512 x accumulators)",
                    Size(&mut p.length),
                ),
                Param::new(
                    "accumulators",
                    "PSUM accumulators (at most the bank count)",
                    Size(&mut p.accumulators),
                ),
                Param::arch(&mut p.arch),
            ],
            Workload::ColumnTiled(p) => vec![
                Param::new(
                    "cols",
                    "columns of one tile (below the PE column count)",
                    Size(&mut p.cols),
                ),
                Param::new("tiles", "column tiles side by side", Size(&mut p.tiles)),
                Param::new("n", "output columns (multiple of 512)", Size(&mut p.n)),
                Param::new("k", "contraction size (multiple of 128)", Size(&mut p.k)),
                Param::arch(&mut p.arch),
            ],
            Workload::Random(p) => vec![
                Param::new("tensors", "number of PSUM tensors", Size(&mut p.tensors)),
                Param::new(
                    "pressure",
                    "average live banks (default 1.5 x banks)",
                    Pressure(&mut p.pressure),
                ),
                Param::new("seed", "PRNG seed", Seed(&mut p.seed)),
                Param::new(
                    "multi-bank",
                    "mix 1-4-bank tensors",
                    Flag(&mut p.multi_bank),
                ),
                Param::new(
                    "loops",
                    "emit two-matmul chains as loops",
                    Flag(&mut p.loops),
                ),
                Param::arch(&mut p.arch),
            ],
        }
    }

    /// Sets one parameter by its command-line key (`seq-q`, `multi-bank`);
    /// a flag takes `""`, `true` or `false`.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), GenError> {
        let workload = self.kind().name();
        let mut params = self.params();
        let known = params.iter().map(|p| p.key).collect::<Vec<_>>().join(", ");
        match params.iter_mut().find(|p| p.key == key) {
            Some(p) => p.set(value),
            None => Err(GenError::UnknownParam {
                workload,
                key: key.to_string(),
                known,
            }),
        }
    }

    /// Parses `psum gen KIND ARGS…`: `--key value`, `--key=value`, bare
    /// `--flag`, and the kind's positional keys in order.
    pub fn from_args<S: AsRef<str>>(kind: WorkloadKind, args: &[S]) -> Result<Workload, GenError> {
        let mut w = Workload::defaults(kind);
        let mut positional = kind.positional().iter();
        let mut i = 0;
        while i < args.len() {
            let arg = args[i].as_ref();
            i += 1;
            let Some(flag) = arg.strip_prefix("--") else {
                let key = positional.next().ok_or_else(|| GenError::ExtraArg {
                    workload: kind.name(),
                    arg: arg.to_string(),
                })?;
                w.set(key, arg)?;
                continue;
            };
            if let Some((key, value)) = flag.split_once('=') {
                w.set(key, value)?;
            } else if w.is_flag(flag) {
                w.set(flag, "")?;
            } else {
                let value = args
                    .get(i)
                    .ok_or_else(|| GenError::MissingValue(flag.to_string()))?;
                i += 1;
                w.set(flag, value.as_ref())?;
            }
        }
        Ok(w)
    }

    fn is_flag(&mut self, key: &str) -> bool {
        self.params()
            .iter()
            .any(|p| p.key == key && matches!(p.slot, Slot::Flag(_)))
    }

    /// The `psum gen` command line that reproduces this workload, every
    /// set parameter spelled out (`psum gen gemm --m 256 … --arch trn1`).
    pub fn command_line(&self) -> String {
        let mut line = format!("psum gen {}", self.kind());
        for p in self.clone().params() {
            match p.value() {
                Some(v) if v.is_empty() => line += &format!(" --{}", p.key),
                Some(v) => line += &format!(" --{} {v}", p.key),
                None => {}
            }
        }
        line
    }

    /// One line per parameter, `--key  meaning (default: value)`, for `--help`.
    pub fn help(kind: WorkloadKind) -> String {
        let mut w = Workload::defaults(kind);
        let mut out = String::new();
        for p in w.params() {
            let default = match (&p.slot, p.value()) {
                (Slot::Flag(_), _) => "off".to_string(),
                (_, Some(v)) => v,
                (_, None) => "auto".to_string(),
            };
            out += &format!("  --{:<14}{} (default: {default})\n", p.key, p.doc);
        }
        out
    }
}

/// The parameters shared by [`attention`] and [`attention_bwd`]; `d_doc`
/// states the head dimension's limit.
fn attention_params<'a>(
    seq_q: &'a mut u32,
    seq_k: &'a mut u32,
    d: &'a mut u32,
    d_doc: &'static str,
    arch: &'a mut String,
) -> Vec<Param<'a>> {
    vec![
        Param::new(
            "seq-q",
            "query length (multiple of the M tile)",
            Slot::Size(seq_q),
        ),
        Param::new(
            "seq-k",
            "key/value length (multiple of 512)",
            Slot::Size(seq_k),
        ),
        Param::new("d", d_doc, Slot::Size(d)),
        Param::arch(arch),
    ]
}

/// Generates the program for `w` (SPEC §7).
pub fn generate(w: &Workload) -> Result<Module, GenError> {
    match w {
        Workload::Gemm(p) => gemm(p),
        Workload::Attention(p) => attention(p),
        Workload::AttentionBwd(p) => attention_bwd(p),
        Workload::Qkv(p) => qkv(p),
        Workload::Conv1d(p) => conv1d(p),
        Workload::ColumnTiled(p) => column_tiled(p),
        Workload::Random(p) => random(p),
    }
}

// ---------------------------------------------------------------------------
// Program builder

/// An open statement list: the block body, or a loop body with its variable
/// and trip count (loops run from 0).
struct Open {
    header: Option<(VarId, i64)>,
    body: Vec<Stmt>,
}

/// Appends declarations and statements to a one-block module in program order.
struct Builder {
    module: Module,
    arch: Arch,
    open: Vec<Open>,
}

impl Builder {
    fn new(codename: &str) -> Result<Builder, GenError> {
        Ok(Builder {
            module: Module::new(codename),
            arch: arch::lookup(codename)?,
            open: vec![Open {
                header: None,
                body: Vec::new(),
            }],
        })
    }

    /// The M tile: PSUM partitions and PE columns a matmul output may use.
    fn m_tile(&self) -> u32 {
        self.arch.pe().cols.min(self.arch.psum().part_size)
    }

    fn tensor(
        &mut self,
        mem: Mem,
        name: impl Into<String>,
        partitions: u32,
        bytes: u64,
        dtype: DType,
    ) -> Result<TensorId, GenError> {
        let name = name.into();
        let bytes = u32::try_from(bytes).map_err(|_| GenError::TooLarge {
            tensor: name.clone(),
            bytes,
        })?;
        Ok(self
            .module
            .add_tensor(Tensor::new(name, mem, partitions, bytes, dtype)))
    }

    /// An f32 PSUM tensor.
    fn psum(
        &mut self,
        name: impl Into<String>,
        partitions: u32,
        bytes: u64,
    ) -> Result<TensorId, GenError> {
        self.tensor(Mem::Psum, name, partitions, bytes, DType::F32)
    }

    fn sbuf(
        &mut self,
        name: &str,
        partitions: u32,
        bytes: u64,
        dtype: DType,
    ) -> Result<TensorId, GenError> {
        self.tensor(Mem::Sbuf, name, partitions, bytes, dtype)
    }

    fn dram(
        &mut self,
        name: &str,
        partitions: u32,
        bytes: u64,
        dtype: DType,
    ) -> Result<TensorId, GenError> {
        self.tensor(Mem::Dram, name, partitions, bytes, dtype)
    }

    /// Declares, per SBUF tensor in `inputs`, a DRAM tensor `NAME_in` shaped
    /// like it; returns the `(sbuf, dram)` pairs for [`Builder::load_inputs`].
    fn dram_inputs(&mut self, inputs: &[TensorId]) -> Result<Vec<(TensorId, TensorId)>, GenError> {
        let mut pairs = Vec::with_capacity(inputs.len());
        for &t in inputs {
            let s = self.module.tensor(t).clone();
            let name = format!("{}_in", s.name);
            let d = self.tensor(Mem::Dram, name, s.partitions, u64::from(s.bytes), s.dtype)?;
            pairs.push((t, d));
        }
        Ok(pairs)
    }

    /// One bank-sized f32 PSUM tensor `{prefix}{i}` of `partitions` for each
    /// `i` in `0..count`.
    fn psum_banks(
        &mut self,
        prefix: &str,
        partitions: u32,
        count: u32,
    ) -> Result<Vec<TensorId>, GenError> {
        (0..count)
            .map(|i| self.psum(format!("{prefix}{i}"), partitions, BANK.into()))
            .collect()
    }

    /// `dma sbuf <- dram` for each `(sbuf, dram)` pair.
    fn load_inputs(&mut self, pairs: &[(TensorId, TensorId)]) {
        for &(sb, dr) in pairs {
            let (dst, src) = (self.whole(sb), self.whole(dr));
            self.dma(dst, src);
        }
    }

    fn whole(&self, t: TensorId) -> Access {
        Access::whole(t, self.module.tensor(t))
    }

    fn emit(&mut self, kind: InstKind) {
        let id = self.module.add_inst(Inst::new(kind));
        self.current().push(Stmt::Inst(id));
    }

    fn current(&mut self) -> &mut Vec<Stmt> {
        &mut self
            .open
            .last_mut()
            .expect("block body is always open")
            .body
    }

    fn matmul_at(
        &mut self,
        kind: MatmulKind,
        dst: Access,
        stationary: Access,
        moving: Access,
        pos: (u32, u32),
    ) {
        self.emit(InstKind::Matmul(Box::new(Matmul {
            kind,
            dst,
            stationary,
            moving,
            pos,
            flags: Flags::Auto,
            zr: None,
            accumulate: None,
        })));
    }

    fn matmul(&mut self, dst: Access, stationary: Access, moving: Access) {
        self.matmul_at(MatmulKind::Plain, dst, stationary, moving, (0, 0));
    }

    fn act(&mut self, dst: Access, srcs: Vec<Access>) {
        self.emit(InstKind::Act { dst, srcs });
    }

    fn dma(&mut self, dst: Access, src: Access) {
        self.emit(InstKind::Dma { dst, src });
    }

    /// `act y[:, i·BANK : (i+1)·BANK] <- accs[i]` for each accumulator: the
    /// banks evacuated side by side.
    fn evacuate_side_by_side(&mut self, y: TensorId, accs: &[TensorId]) {
        let parts = self.module.tensor(y).partitions;
        let bank = u64::from(BANK);
        for (i, &acc) in accs.iter().enumerate() {
            let dst = at(y, 0..parts, aff(i as u64 * bank, &[]), bank);
            self.act(dst, vec![self.whole(acc)]);
        }
    }

    /// `dma out[0:P, offset : offset + B] <- sb`: stores the SBUF tensor `sb`
    /// (`[P, B]`) into its slot of `out`.
    fn store(&mut self, out: TensorId, offset: Affine, sb: TensorId) {
        let t = self.module.tensor(sb);
        let (parts, bytes) = (t.partitions, u64::from(t.bytes));
        self.dma(at(out, 0..parts, offset, bytes), self.whole(sb));
    }

    /// A loop `j` of `matmul.t`s transposing the square blocks of `src`
    /// (`[M tile, 512]` bf16) through `ident` into the PSUM tile `tp`.
    fn transpose_blocks(&mut self, tp: TensorId, src: TensorId, ident: TensorId) {
        let mt = self.m_tile();
        let mt64 = u64::from(mt);
        let j = self.open_loop("j", TILE_N / mt);
        self.matmul_at(
            MatmulKind::Transpose,
            at(tp, 0..mt, aff(0, &[(j, mt64 * 4)]), mt64 * 4),
            at(src, 0..mt, aff(0, &[(j, mt64 * 2)]), mt64 * 2),
            self.whole(ident),
            (0, 0),
        );
        self.close_loop();
    }

    /// A loop `j` over the square blocks of `lhs` (`[M tile, 512]` bf16, the
    /// output of [`Builder::transpose_blocks`], evacuated):
    /// `acc += lhs block j · rhs[:, rhs_at + j·len : … + len]`.
    fn block_matmuls(
        &mut self,
        acc: TensorId,
        lhs: TensorId,
        rhs: TensorId,
        mut rhs_at: Affine,
        len: u64,
    ) {
        let mt = self.m_tile();
        let mt64 = u64::from(mt);
        let j = self.open_loop("j", TILE_N / mt);
        rhs_at.add_term(j, len as i64);
        self.matmul(
            self.whole(acc),
            at(lhs, 0..mt, aff(0, &[(j, mt64 * 2)]), mt64 * 2),
            at(rhs, 0..mt, rhs_at, len),
        );
        self.close_loop();
    }

    /// Opens `loop NAME 0..trips` and returns its variable.
    fn open_loop(&mut self, name: &str, trips: u32) -> VarId {
        let var = self.module.add_var(name);
        self.open.push(Open {
            header: Some((var, i64::from(trips))),
            body: Vec::new(),
        });
        var
    }

    fn close_loop(&mut self) {
        let open = self.open.pop().expect("a loop is open");
        let (var, hi) = open
            .header
            .expect("close_loop closes a loop, not the block");
        let id = self.module.add_loop(Loop {
            var,
            lo: 0,
            hi,
            body: open.body,
        });
        self.current().push(Stmt::Loop(id));
    }

    /// Closes the block `main` and checks that the SBUF tensors fit.
    fn finish(mut self) -> Result<Module, GenError> {
        debug_assert_eq!(self.open.len(), 1, "every loop is closed");
        let body = self.open.pop().map(|o| o.body).unwrap_or_default();
        self.module.blocks.push(Block {
            name: "main".into(),
            body,
        });
        let bytes: u64 = self
            .module
            .tensors
            .iter()
            .filter(|t| t.mem == Mem::Sbuf)
            .map(|t| u64::from(t.bytes))
            .sum();
        let limit = u64::from(self.arch.sbuf().partition_size);
        if bytes > limit {
            return Err(GenError::SbufOverflow {
                arch: self.module.arch,
                bytes,
                limit,
            });
        }
        Ok(self.module)
    }
}

/// `c + Σ coef·var`.
fn aff(c: u64, terms: &[(VarId, u64)]) -> Affine {
    let mut a = Affine::constant(c as i64);
    for &(v, coef) in terms {
        a.add_term(v, coef as i64);
    }
    a
}

/// `t[p0:p1, b0 : b0+len]`.
fn at(t: TensorId, parts: Range<u32>, b0: Affine, len: u64) -> Access {
    let mut b1 = b0.clone();
    b1.constant += len as i64;
    Access::new(
        t,
        Affine::constant(i64::from(parts.start)),
        Affine::constant(i64::from(parts.end)),
        b0,
        b1,
    )
}

/// `k·a`.
fn scale(a: &Affine, k: u64) -> Affine {
    let mut out = Affine::constant(a.constant * k as i64);
    for &(v, c) in &a.terms {
        out.add_term(v, c * k as i64);
    }
    out
}

/// `value / tile`, requiring a positive multiple.
fn tiles(param: &'static str, value: u32, tile: u32) -> Result<u32, GenError> {
    if value == 0 || value % tile != 0 {
        return Err(GenError::NotMultiple {
            param,
            value: value.into(),
            multiple: tile.into(),
        });
    }
    Ok(value / tile)
}

fn in_range(
    param: &'static str,
    value: u32,
    lo: u32,
    hi: u32,
    why: &'static str,
) -> Result<u32, GenError> {
    if value < lo || value > hi {
        return Err(GenError::OutOfRange {
            param,
            value: value.into(),
            lo: lo.into(),
            hi: hi.into(),
            why,
        });
    }
    Ok(value)
}

// ---------------------------------------------------------------------------
// The workloads

/// `gemm M N K`: loops over M tiles, 512-column N tiles (one bank each) and
/// K chunks of 128 partitions; the K loop accumulates into one PSUM tile,
/// which is evacuated and stored per (M, N) tile. One bank of PSUM.
pub fn gemm(p: &GemmParams) -> Result<Module, GenError> {
    let mut b = Builder::new(&p.arch)?;
    let mt = b.m_tile();
    let m_tiles = tiles("m", p.m, mt)?;
    let n_tiles = tiles("n", p.n, TILE_N)?;
    let k_tiles = tiles("k", p.k, K_TILE)?;
    let (m, n) = (u64::from(p.m), u64::from(p.n));
    let kt = u64::from(k_tiles);

    let acc = b.psum("acc", mt, BANK.into())?;
    // lhsT chunk c holds K rows c*128.. of Aᵀ: [128 partitions, M elements].
    let lhs_t = b.sbuf("lhsT", K_TILE, kt * m * 2, DType::Bf16)?;
    let rhs = b.sbuf("rhs", K_TILE, kt * n * 2, DType::Bf16)?;
    let res = b.sbuf("res", mt, BANK.into(), DType::F32)?;
    let inputs = b.dram_inputs(&[lhs_t, rhs])?;
    let out = b.dram("out", mt, u64::from(m_tiles) * n * 4, DType::F32)?;

    b.load_inputs(&inputs);
    let mi = b.open_loop("m", m_tiles);
    let ni = b.open_loop("n", n_tiles);
    let ki = b.open_loop("k", k_tiles);
    let mtb = u64::from(mt) * 2;
    b.matmul(
        b.whole(acc),
        at(lhs_t, 0..K_TILE, aff(0, &[(mi, mtb), (ki, m * 2)]), mtb),
        at(rhs, 0..K_TILE, aff(0, &[(ni, 1024), (ki, n * 2)]), 1024),
    );
    b.close_loop();
    b.act(b.whole(res), vec![b.whole(acc)]);
    b.store(out, aff(0, &[(mi, n * 4), (ni, BANK.into())]), res);
    b.close_loop();
    b.close_loop();
    b.finish()
}

/// `attention`: per query tile, per 512-wide kv tile: scores `S = QKᵀ`
/// ([M tile, 512] f32, one bank), `P = act(S)`, PE transposes (`matmul.t`)
/// of P's square blocks into one bank, and `O += P·V` (the transposed blocks
/// stationary) accumulated over every kv tile; O is evacuated and stored per
/// query tile. Two banks live at most (O, and S or Pᵀ).
pub fn attention(p: &AttentionParams) -> Result<Module, GenError> {
    let mut b = Builder::new(&p.arch)?;
    let mt = b.m_tile();
    let q_tiles = tiles("seq-q", p.seq_q, mt)?;
    let kv_tiles = tiles("seq-k", p.seq_k, TILE_N)?;
    let d = in_range(
        "d",
        p.d,
        1,
        K_TILE,
        "the head dimension is the QKᵀ contraction",
    )?;
    let blocks = TILE_N / mt;
    let (mt64, d64) = (u64::from(mt), u64::from(d));

    let s = b.psum("s", mt, BANK.into())?;
    let pt = b.psum("pT", mt, BANK.into())?;
    let o = b.psum("o", mt, d64 * 4)?;
    let q_t = b.sbuf("qT", d, u64::from(p.seq_q) * 2, DType::Bf16)?;
    let k_t = b.sbuf("kT", d, u64::from(p.seq_k) * 2, DType::Bf16)?;
    // v block r holds kv rows r*mt.. : [mt partitions, d elements].
    let v = b.sbuf("v", mt, u64::from(p.seq_k / mt) * d64 * 2, DType::Bf16)?;
    let ident = b.sbuf("ident", mt, mt64 * 2, DType::Bf16)?;
    let probs = b.sbuf("p", mt, u64::from(TILE_N) * 2, DType::Bf16)?;
    let probs_t = b.sbuf("pTs", mt, u64::from(TILE_N) * 2, DType::Bf16)?;
    let o_sb = b.sbuf("os", mt, d64 * 4, DType::F32)?;
    let pairs = b.dram_inputs(&[q_t, k_t, v, ident])?;
    let out = b.dram("out", mt, u64::from(q_tiles) * d64 * 4, DType::F32)?;

    b.load_inputs(&pairs);
    let qi = b.open_loop("q", q_tiles);
    let g = b.open_loop("g", kv_tiles);
    b.matmul(
        b.whole(s),
        at(q_t, 0..d, aff(0, &[(qi, mt64 * 2)]), mt64 * 2),
        at(k_t, 0..d, aff(0, &[(g, 1024)]), 1024),
    );
    b.act(b.whole(probs), vec![b.whole(s)]);
    b.transpose_blocks(pt, probs, ident);
    b.act(b.whole(probs_t), vec![b.whole(pt)]);
    let v_tile = aff(0, &[(g, u64::from(blocks) * d64 * 2)]);
    b.block_matmuls(o, probs_t, v, v_tile, d64 * 2);
    b.close_loop();
    b.act(b.whole(o_sb), vec![b.whole(o)]);
    b.store(out, aff(0, &[(qi, d64 * 4)]), o_sb);
    b.close_loop();
    b.finish()
}

/// `attention-bwd`: the PSUM-pressure case. The dVᵀ and dKᵀ accumulators
/// `dv{g}`, `dk{g}` (one bank each per 512-wide kv tile g) accumulate over
/// the whole query loop. Per query tile, for each kv tile g (straight-line,
/// one set of PSUM tiles per g): `act P <- qk{g}`; `dp{g} = dO·Vᵀ`;
/// `act dS <- dp{g}, P`; `dv{g} += dOᵀ·P`; `dk{g} += Qᵀ·dS`; the next kv
/// tile's scores `qk{g+1}` are issued early (software pipelining); `matmul.t`
/// transposes dS's blocks into `dsT{g}`; and `dq += dS·K` (the transposed
/// blocks stationary) accumulates over every kv tile. The last query tile is
/// peeled off the loop, with its own PSUM tiles (suffix `_last`), so that
/// each accumulator is evacuated right after its final matmul.
///
/// At default size the transposes of the middle kv tile see the six
/// accumulators, dq, the prefetched `qk2` and `dsT1`: 9 banks on an 8-bank
/// PSUM. The accumulators are unspillable (each is read right after its last
/// write), while `qk2` is written well before its read, so spilling it
/// relieves the peak.
pub fn attention_bwd(p: &AttentionBwdParams) -> Result<Module, GenError> {
    let mut b = Builder::new(&p.arch)?;
    let mt = b.m_tile();
    let q_tiles = tiles("seq-q", p.seq_q, mt)?;
    let kv_tiles = tiles("seq-k", p.seq_k, TILE_N)?;
    let d = in_range(
        "d",
        p.d,
        1,
        mt,
        "dKᵀ and dVᵀ put the head dimension on PSUM partitions",
    )?;
    let max_kv = b.arch.num_banks().saturating_sub(2) / 2;
    in_range(
        "seq-k",
        p.seq_k,
        TILE_N,
        max_kv * TILE_N,
        "the dK/dV accumulators and two more banks must fit in PSUM",
    )?;
    let blocks = TILE_N / mt;
    let (mt64, d64, kv64) = (u64::from(mt), u64::from(d), u64::from(kv_tiles));
    let (bank, tile_b) = (u64::from(BANK), u64::from(TILE_N) * 2);

    let dv = b.psum_banks("dv", d, kv_tiles)?;
    let dk = b.psum_banks("dk", d, kv_tiles)?;
    let looped = if q_tiles > 1 {
        Some(BwdTiles::declare(&mut b, "", kv_tiles, d)?)
    } else {
        None
    };
    let last = BwdTiles::declare(&mut b, "_last", kv_tiles, d)?;
    let seq_q2 = u64::from(p.seq_q) * 2;
    let seq_k2 = u64::from(p.seq_k) * 2;
    let q_t = b.sbuf("qT", d, seq_q2, DType::Bf16)?;
    // Row-major tiles: tile r holds rows r*mt.. as [mt partitions, d elements].
    let q = b.sbuf("q", mt, u64::from(q_tiles) * d64 * 2, DType::Bf16)?;
    let k_t = b.sbuf("kT", d, seq_k2, DType::Bf16)?;
    let k = b.sbuf("k", mt, u64::from(p.seq_k / mt) * d64 * 2, DType::Bf16)?;
    let v_t = b.sbuf("vT", d, seq_k2, DType::Bf16)?;
    let do_t = b.sbuf("doT", d, seq_q2, DType::Bf16)?;
    let d_o = b.sbuf("do", mt, u64::from(q_tiles) * d64 * 2, DType::Bf16)?;
    let ident = b.sbuf("ident", mt, mt64 * 2, DType::Bf16)?;
    let probs = b.sbuf("p", mt, tile_b, DType::Bf16)?;
    let ds = b.sbuf("ds", mt, tile_b, DType::Bf16)?;
    let ds_ts = b.sbuf("dsTs", mt, tile_b, DType::Bf16)?;
    let dq_sb = b.sbuf("dqs", mt, d64 * 4, DType::F32)?;
    let dv_sb = b.sbuf("dvs", d, kv64 * bank, DType::F32)?;
    let dk_sb = b.sbuf("dks", d, kv64 * bank, DType::F32)?;
    let pairs = b.dram_inputs(&[q_t, q, k_t, k, v_t, do_t, d_o, ident])?;
    let dq_out = b.dram("dq_out", mt, u64::from(q_tiles) * d64 * 4, DType::F32)?;
    let dv_out = b.dram("dv_out", d, kv64 * bank, DType::F32)?;
    let dk_out = b.dram("dk_out", d, kv64 * bank, DType::F32)?;

    // One query tile `qi` (a loop variable or the peeled last index); with
    // `evacuate`, each accumulator is stored to SBUF after its matmul.
    let q_tile = |b: &mut Builder, qi: &Affine, tiles: &BwdTiles, evacuate: bool| {
        let q_rows = |t| at(t, 0..d, scale(qi, mt64 * 2), mt64 * 2);
        let q_block = |t| at(t, 0..mt, scale(qi, d64 * 2), d64 * 2);
        let kv_cols = |t, g: u32| at(t, 0..d, aff(u64::from(g) * 1024, &[]), 1024);
        let slot = |t, g: u32| at(t, 0..d, aff(u64::from(g) * bank, &[]), bank);
        b.matmul(b.whole(tiles.qk[0]), q_rows(q_t), kv_cols(k_t, 0));
        for g in 0..kv_tiles {
            let gi = g as usize;
            b.act(b.whole(probs), vec![b.whole(tiles.qk[gi])]);
            b.matmul(b.whole(tiles.dp[gi]), q_rows(do_t), kv_cols(v_t, g));
            b.act(b.whole(ds), vec![b.whole(tiles.dp[gi]), b.whole(probs)]);
            for (acc, rows, src, out) in [(dv[gi], d_o, probs, dv_sb), (dk[gi], q, ds, dk_sb)] {
                b.matmul(b.whole(acc), q_block(rows), b.whole(src));
                if evacuate {
                    b.act(slot(out, g), vec![b.whole(acc)]);
                }
            }
            if g + 1 < kv_tiles {
                b.matmul(b.whole(tiles.qk[gi + 1]), q_rows(q_t), kv_cols(k_t, g + 1));
            }
            b.transpose_blocks(tiles.ds_t[gi], ds, ident);
            b.act(b.whole(ds_ts), vec![b.whole(tiles.ds_t[gi])]);
            let k_tile = aff(u64::from(g * blocks) * d64 * 2, &[]);
            b.block_matmuls(tiles.dq, ds_ts, k, k_tile, d64 * 2);
        }
        b.act(b.whole(dq_sb), vec![b.whole(tiles.dq)]);
        b.store(dq_out, scale(qi, d64 * 4), dq_sb);
    };

    b.load_inputs(&pairs);
    if let Some(tiles) = &looped {
        let i = b.open_loop("i", q_tiles - 1);
        q_tile(&mut b, &Affine::var(i, 1), tiles, false);
        b.close_loop();
    }
    q_tile(
        &mut b,
        &Affine::constant(i64::from(q_tiles - 1)),
        &last,
        true,
    );
    b.dma(b.whole(dv_out), b.whole(dv_sb));
    b.dma(b.whole(dk_out), b.whole(dk_sb));
    b.finish()
}

/// The PSUM tiles of one query tile of [`attention_bwd`]: scores, dP and
/// transposed dS per kv tile, and the dQ accumulator.
struct BwdTiles {
    qk: Vec<TensorId>,
    dp: Vec<TensorId>,
    ds_t: Vec<TensorId>,
    dq: TensorId,
}

impl BwdTiles {
    /// Declares `qk{g}{suffix}`, `dp{g}{suffix}`, `dsT{g}{suffix}` per kv
    /// tile g, then `dq{suffix}`.
    fn declare(b: &mut Builder, suffix: &str, kv_tiles: u32, d: u32) -> Result<BwdTiles, GenError> {
        let mt = b.m_tile();
        let (mut qk, mut dp, mut ds_t) = (Vec::new(), Vec::new(), Vec::new());
        for g in 0..kv_tiles {
            qk.push(b.psum(format!("qk{g}{suffix}"), mt, BANK.into())?);
            dp.push(b.psum(format!("dp{g}{suffix}"), mt, BANK.into())?);
            ds_t.push(b.psum(format!("dsT{g}{suffix}"), mt, BANK.into())?);
        }
        let dq = b.psum(format!("dq{suffix}"), mt, u64::from(d) * 4)?;
        Ok(BwdTiles { qk, dp, ds_t, dq })
    }
}

/// `qkv`: per token tile, `groups` [M tile, 512] accumulators (one bank
/// each) interleaved matmul by matmul over a chain of H/128 contraction
/// chunks, then evacuated side by side and stored. Needs `groups` banks.
pub fn qkv(p: &QkvParams) -> Result<Module, GenError> {
    let mut b = Builder::new(&p.arch)?;
    let mt = b.m_tile();
    let t_tiles = tiles("tokens", p.tokens, mt)?;
    let chain = tiles("hidden", p.hidden, K_TILE)?;
    let banks = b.arch.num_banks();
    let groups = in_range(
        "groups",
        p.groups,
        1,
        banks,
        "every group holds a bank at once",
    )?;
    let (mt64, tok, grp) = (u64::from(mt), u64::from(p.tokens), u64::from(groups));
    let bank = u64::from(BANK);

    let accs = b.psum_banks("qkv", mt, groups)?;
    // xT chunk c: hidden rows c*128.. as [128 partitions, tokens elements].
    let x_t = b.sbuf("xT", K_TILE, u64::from(chain) * tok * 2, DType::Bf16)?;
    // w chunk c, group g: [128 partitions, 512 output columns].
    let w = b.sbuf("w", K_TILE, u64::from(chain) * grp * 1024, DType::Bf16)?;
    let y = b.sbuf("y", mt, grp * bank, DType::F32)?;
    let inputs = b.dram_inputs(&[x_t, w])?;
    let out = b.dram("out", mt, u64::from(t_tiles) * grp * bank, DType::F32)?;

    b.load_inputs(&inputs);
    let t = b.open_loop("t", t_tiles);
    let c = b.open_loop("c", chain);
    for (g, &acc) in accs.iter().enumerate() {
        b.matmul(
            b.whole(acc),
            at(
                x_t,
                0..K_TILE,
                aff(0, &[(t, mt64 * 2), (c, tok * 2)]),
                mt64 * 2,
            ),
            at(w, 0..K_TILE, aff(g as u64 * 1024, &[(c, grp * 1024)]), 1024),
        );
    }
    b.close_loop();
    b.evacuate_side_by_side(y, &accs);
    b.store(out, aff(0, &[(t, grp * bank)]), y);
    b.close_loop();
    b.finish()
}

/// `conv1d`: output tiles of 512 positions are assigned round-robin to
/// `accumulators` PSUM tiles; each round accumulates every accumulator over
/// a chain of C_in/128 chunks × taps (interleaved across accumulators at each
/// step; tap t reads the input window shifted by t), then evacuates them.
pub fn conv1d(p: &Conv1dParams) -> Result<Module, GenError> {
    let mut b = Builder::new(&p.arch)?;
    let mt = b.m_tile();
    let banks = b.arch.num_banks();
    let accs_n = in_range(
        "accumulators",
        p.accumulators,
        1,
        banks,
        "every accumulator holds a bank at once",
    )?;
    let chunks = tiles("c-in", p.c_in, K_TILE)?;
    let o_tiles = tiles("c-out", p.c_out, mt)?;
    let taps = in_range("taps", p.taps, 1, u32::MAX, "a filter has at least one tap")?;
    let rounds = tiles("length", p.length, TILE_N * accs_n)?;
    let (mt64, co, a64) = (u64::from(mt), u64::from(p.c_out), u64::from(accs_n));
    let (len, bank) = (u64::from(p.length), u64::from(BANK));
    // Input positions with the taps - 1 halo.
    let padded = len + u64::from(taps) - 1;

    let accs = b.psum_banks("acc", mt, accs_n)?;
    // x chunk c: channels c*128.. as [128 partitions, padded positions].
    let x = b.sbuf("x", K_TILE, u64::from(chunks) * padded * 2, DType::Bf16)?;
    // w tap t, chunk c: [128 input channels, c_out output channels].
    let w = b.sbuf("w", K_TILE, u64::from(taps * chunks) * co * 2, DType::Bf16)?;
    let y = b.sbuf("y", mt, a64 * bank, DType::F32)?;
    let inputs = b.dram_inputs(&[x, w])?;
    let out = b.dram("out", mt, u64::from(o_tiles) * len * 4, DType::F32)?;

    b.load_inputs(&inputs);
    let o = b.open_loop("o", o_tiles);
    let r = b.open_loop("r", rounds);
    let c = b.open_loop("c", chunks);
    let t = b.open_loop("t", taps);
    for (a, &acc) in accs.iter().enumerate() {
        let w_off = aff(
            0,
            &[(t, u64::from(chunks) * co * 2), (c, co * 2), (o, mt64 * 2)],
        );
        let x_off = aff(a as u64 * 1024, &[(c, padded * 2), (r, a64 * 1024), (t, 2)]);
        b.matmul(
            b.whole(acc),
            at(w, 0..K_TILE, w_off, mt64 * 2),
            at(x, 0..K_TILE, x_off, 1024),
        );
    }
    b.close_loop();
    b.close_loop();
    b.evacuate_side_by_side(y, &accs);
    b.store(out, aff(0, &[(o, len * 4), (r, a64 * bank)]), y);
    b.close_loop();
    b.close_loop();
    b.finish()
}

/// `column-tiled`: per 512-column output tile, `tiles` column-tiled matmuls
/// (tile 128 × cols, at PE positions `0, i*cols`) write the partition slices
/// of one bank side by side, accumulated over K chunks of 128; the bank is
/// evacuated and stored. Each N tile's matmuls form column-tiled groups (SPEC §4.2).
pub fn column_tiled(p: &ColumnTiledParams) -> Result<Module, GenError> {
    let mut b = Builder::new(&p.arch)?;
    let mt = b.m_tile();
    let pe_cols = b.arch.pe().cols;
    let cols = in_range(
        "cols",
        p.cols,
        1,
        pe_cols - 1,
        "a column tile is narrower than the PE array",
    )?;
    let n_tiles = in_range(
        "tiles",
        p.tiles,
        1,
        mt / cols,
        "the tiles must fit the PE columns and PSUM partitions",
    )?;
    let n_blocks = tiles("n", p.n, TILE_N)?;
    let k_tiles = tiles("k", p.k, K_TILE)?;
    let m = cols * n_tiles;
    let (m64, n, cb) = (u64::from(m), u64::from(p.n), u64::from(cols) * 2);

    let acc = b.psum("acc", m, BANK.into())?;
    // w chunk c: [128 partitions, m columns], column tile i at i*cols.
    let w = b.sbuf("w", K_TILE, u64::from(k_tiles) * m64 * 2, DType::Bf16)?;
    let x = b.sbuf("x", K_TILE, u64::from(k_tiles) * n * 2, DType::Bf16)?;
    let y = b.sbuf("y", m, BANK.into(), DType::F32)?;
    let inputs = b.dram_inputs(&[w, x])?;
    let out = b.dram("out", m, n * 4, DType::F32)?;

    b.load_inputs(&inputs);
    let nb = b.open_loop("n", n_blocks);
    let k = b.open_loop("k", k_tiles);
    for i in 0..n_tiles {
        b.matmul_at(
            MatmulKind::Plain,
            at(acc, i * cols..(i + 1) * cols, aff(0, &[]), BANK.into()),
            at(w, 0..K_TILE, aff(u64::from(i) * cb, &[(k, m64 * 2)]), cb),
            at(x, 0..K_TILE, aff(0, &[(k, n * 2), (nb, 1024)]), 1024),
            (0, i * cols),
        );
    }
    b.close_loop();
    b.act(b.whole(y), vec![b.whole(acc)]);
    b.store(out, aff(0, &[(nb, BANK.into())]), y);
    b.close_loop();
    b.finish()
}

/// Bytes per partition of the shared stationary operand `w` of [`random`].
const RANDOM_W_BYTES: u64 = 8192;
/// Bytes per partition of the shared moving operand `x` of [`random`].
const RANDOM_X_BYTES: u64 = 16384;

/// A PSUM tensor of [`random`] that still has reads to come.
struct LiveTensor {
    tensor: TensorId,
    banks: u32,
    reads_left: u8,
}

/// Most PSUM banks one `act` of [`random`] reads: every instruction's
/// operands then fit PSUM on every generation (gen1 has four banks).
const RANDOM_ACT_BANKS: u32 = 4;

/// The live PSUM tensors of [`random`] and the reads not yet emitted:
/// consecutive reads into the same sink share one `act`.
struct RandomReads {
    live: Vec<LiveTensor>,
    live_banks: u32,
    sink: Option<TensorId>,
    batch: Vec<Access>,
    batch_banks: u32,
}

impl RandomReads {
    /// Reads one random live tensor (at least one must be live).
    fn read_one(&mut self, b: &mut Builder, rng: &mut Rng, sinks: &[TensorId]) {
        let i = rng.index(self.live.len());
        let (t, banks) = (self.live[i].tensor, self.live[i].banks);
        let sink = sinks[(b.module.tensor(t).bytes / BANK) as usize - 1];
        let full = self.batch_banks + banks > RANDOM_ACT_BANKS;
        if self.sink != Some(sink) || full || self.batch.iter().any(|a| a.tensor == t) {
            self.flush(b);
            self.sink = Some(sink);
        }
        self.batch.push(b.whole(t));
        self.batch_banks += banks;
        self.live[i].reads_left -= 1;
        if self.live[i].reads_left == 0 {
            self.live_banks -= self.live.swap_remove(i).banks;
        }
    }

    /// Emits the pending reads as `act SINK <- SINK, pA, pB, …`.
    fn flush(&mut self, b: &mut Builder) {
        if let Some(sink) = self.sink.take() {
            let mut srcs = Vec::with_capacity(self.batch.len() + 1);
            srcs.push(b.whole(sink));
            srcs.append(&mut self.batch);
            b.act(b.whole(sink), srcs);
            self.batch_banks = 0;
        }
    }
}

/// `random`: `tensors` PSUM tensors p0, p1, … in a straight line (with
/// `loops`, two-matmul chains become loops). Each is written by one or two
/// accumulating matmuls per bank, reading random slices of two shared SBUF
/// operands, and read 1–3 times later by `act sinkB <- sinkB, pI, …`, which
/// sums tensors of one size (at most four banks in all) into an SBUF sink of that size
/// (stored to DRAM at the end, so every read reaches the output). Before
/// each tensor is written, reads of random live tensors are issued until the
/// live banks plus half the new tensor's fit a target (the floor or ceiling
/// of `pressure`, matching its fraction on average), so about `pressure`
/// banks are live on average. Time and memory are linear in `tensors`; the
/// SBUF and DRAM declarations are a fixed handful.
pub fn random(p: &RandomParams) -> Result<Module, GenError> {
    let mut b = Builder::new(&p.arch)?;
    let mt = b.m_tile();
    let banks = b.arch.num_banks();
    let pressure = p.pressure.unwrap_or(1.5 * f64::from(banks));
    if !(pressure.is_finite() && pressure > 0.0) {
        return Err(GenError::BadPressure(pressure));
    }
    let n = in_range(
        "tensors",
        p.tensors,
        1,
        u32::MAX,
        "a program needs a PSUM tensor",
    )?;
    let max_banks = if p.multi_bank { banks.min(4) } else { 1 };
    let mut rng = Rng::new(p.seed);

    b.module
        .tensors
        .reserve(n as usize + 2 * max_banks as usize + 4);
    b.module.insts.reserve(n as usize * 5 / 2);
    let mut psum = Vec::with_capacity(n as usize);
    for i in 0..n {
        let size = 1 + rng.below(max_banks.into()) as u32;
        psum.push((b.psum(format!("p{i}"), mt, u64::from(size * BANK))?, size));
    }
    let w = b.sbuf("w", K_TILE, RANDOM_W_BYTES, DType::Bf16)?;
    let x = b.sbuf("x", K_TILE, RANDOM_X_BYTES, DType::Bf16)?;
    let mut sinks = Vec::new();
    for s in 1..=max_banks {
        sinks.push(b.sbuf(&format!("sink{s}"), mt, u64::from(s * BANK), DType::F32)?);
    }
    let inputs = b.dram_inputs(&[w, x])?;
    let mut outs = Vec::new();
    for s in 1..=max_banks {
        outs.push(b.dram(&format!("out{s}"), mt, u64::from(s * BANK), DType::F32)?);
    }

    b.load_inputs(&inputs);
    let st_len = u64::from(mt) * 2;
    let mut reads = RandomReads {
        live: Vec::new(),
        live_banks: 0,
        sink: None,
        batch: Vec::new(),
        batch_banks: 0,
    };
    let floor = pressure.floor();
    for (tensor, size) in psum {
        let need = b.arch.aligned_bank_num(size);
        let target = floor as u32 + u32::from(rng.unit() < pressure - floor);
        while !reads.live.is_empty() && 2 * reads.live_banks + need > 2 * target {
            reads.read_one(&mut b, &mut rng, &sinks);
        }
        reads.flush(&mut b);
        for bank in 0..size {
            let dst = at(tensor, 0..mt, aff(u64::from(bank * BANK), &[]), BANK.into());
            let chain = if rng.chance(1, 4) { 2 } else { 1 };
            if p.loops && chain == 2 {
                let ow = 2 * rng.below((RANDOM_W_BYTES - st_len - 256) / 2 + 1);
                let ox = 2 * rng.below((RANDOM_X_BYTES - 1024 - 1024) / 2 + 1);
                let k = b.open_loop("k", chain);
                b.matmul(
                    dst,
                    at(w, 0..K_TILE, aff(ow, &[(k, 256)]), st_len),
                    at(x, 0..K_TILE, aff(ox, &[(k, 1024)]), 1024),
                );
                b.close_loop();
            } else {
                for _ in 0..chain {
                    let ow = 2 * rng.below((RANDOM_W_BYTES - st_len) / 2 + 1);
                    let ox = 2 * rng.below((RANDOM_X_BYTES - 1024) / 2 + 1);
                    b.matmul(
                        dst.clone(),
                        at(w, 0..K_TILE, aff(ow, &[]), st_len),
                        at(x, 0..K_TILE, aff(ox, &[]), 1024),
                    );
                }
            }
        }
        reads.live.push(LiveTensor {
            tensor,
            banks: need,
            reads_left: 1 + rng.below(3) as u8,
        });
        reads.live_banks += need;
    }
    while !reads.live.is_empty() {
        reads.read_one(&mut b, &mut rng, &sinks);
    }
    reads.flush(&mut b);
    debug_assert_eq!(reads.live_banks, 0);
    for (&sink, &out) in sinks.iter().zip(&outs) {
        b.dma(b.whole(out), b.whole(sink));
    }
    b.finish()
}
