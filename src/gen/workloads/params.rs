//! The parameters of each workload of SPEC §7, with their defaults.

use crate::gen::random::{Arches, RandomConfig};

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
    /// Turn on every feature of [`RandomConfig::rich`] (default false).
    pub rich: bool,
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
            rich: false,
        }
    }
}

impl RandomParams {
    /// The generator's knobs: the workload's, and with `rich` those of
    /// [`RandomConfig::rich`] on the workload's architecture and sizes.
    pub fn config(&self) -> RandomConfig {
        let base = match self.rich {
            true => RandomConfig::rich(),
            false => RandomConfig::default(),
        };
        RandomConfig {
            arch: Arches::Fixed(self.arch.clone()),
            tensors: self.tensors,
            pressure: self.pressure,
            max_banks: if self.multi_bank { 4 } else { 1 },
            loops: self.loops || self.rich,
            ..base
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::random::program;
    use crate::ir::Mem;

    /// `--rich` is [`RandomConfig::rich`] on the workload's arch and sizes,
    /// and its programs name their tensors as the rich generator does.
    #[test]
    fn rich_is_the_rich_config() {
        let p = RandomParams {
            rich: true,
            multi_bank: true,
            ..Default::default()
        };
        assert_eq!(
            p.config(),
            RandomConfig {
                arch: Arches::Fixed("trn1".into()),
                tensors: 24,
                max_banks: 4,
                ..RandomConfig::rich()
            }
        );
        let m = program(1, &p.config()).unwrap();
        let psum = m.tensors.values().filter(|t| t.mem == Mem::Psum).count();
        assert_eq!(psum, 24);
        assert!(m.tensors.values().any(|t| t.name == "w0"));
        assert!(m.tensors.values().all(|t| t.name != "w"));
    }
}
