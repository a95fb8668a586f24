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
//! line; [`generate`] dispatches. The params and their defaults are in
//! `params`, their command-line keys and the parsing of `psum gen KIND …`
//! in `registry`, and each generator has a file of its own (`attention`
//! holds the forward and backward pass).

mod attention;
mod column_tiled;
mod conv1d;
mod gemm;
mod params;
mod qkv;
mod registry;

pub(crate) use super::build::GenError;
pub(crate) use attention::{attention, attention_bwd};
pub(crate) use column_tiled::column_tiled;
pub(crate) use conv1d::conv1d;
pub(crate) use gemm::gemm;
pub use params::{
    AttentionBwdParams, AttentionParams, ColumnTiledParams, Conv1dParams, GemmParams, QkvParams,
    RandomParams,
};
pub(crate) use qkv::qkv;

use crate::ir::Module;
use std::fmt;

/// The workload kinds of SPEC §7.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WorkloadKind {
    /// `gemm`.
    Gemm,
    /// `attention`.
    Attention,
    /// `attention_bwd`.
    AttentionBwd,
    /// `qkv`.
    Qkv,
    /// `conv1d`.
    Conv1d,
    /// `column_tiled`.
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
    pub(crate) fn positional(self) -> &'static [&'static str] {
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
    /// `gemm`.
    Gemm(GemmParams),
    /// `attention`.
    Attention(AttentionParams),
    /// `attention_bwd`.
    AttentionBwd(AttentionBwdParams),
    /// `qkv`.
    Qkv(QkvParams),
    /// `conv1d`.
    Conv1d(Conv1dParams),
    /// `column_tiled`.
    ColumnTiled(ColumnTiledParams),
    /// [`random`].
    Random(RandomParams),
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
    pub(crate) fn kind(&self) -> WorkloadKind {
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
}

/// Generates the program for `w` (SPEC §7).
///
/// ```
/// use psum::gen::workloads::{generate, GemmParams, Workload};
///
/// let m = generate(&Workload::Gemm(GemmParams { m: 128, n: 512, k: 256, ..Default::default() }))?;
/// psum::validate::validate(&m)?;
/// assert_eq!(m.arch, "trn1");
/// assert_eq!(m.tensors.len(), 7);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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

/// `random`: the generator of [`super::random`] with the workload's knobs
/// (see [`RandomParams::config`]).
pub fn random(p: &RandomParams) -> Result<Module, GenError> {
    super::random::program(p.seed, &p.config())
}
