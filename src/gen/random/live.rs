//! What the reads of [`super::program`] keep: the live tensors with reads
//! to come, and the SBUF sinks that sum them.

use super::shapes::{Psum, BANK};
use crate::gen::build::{Builder, GenError};
use crate::ir::{Access, DType, TensorId};

/// A PSUM tensor that still has reads to come.
pub(super) struct Live {
    pub(super) p: Psum,
    pub(super) reads_left: u8,
}

/// An SBUF sink `[M tile, bytes]` and the DRAM tensor it is stored to;
/// reads of a `[parts, bytes]` tensor sum into its first `parts` partitions.
#[derive(Clone, Copy)]
pub(super) struct Sink {
    pub(super) parts: u32,
    pub(super) bytes: u32,
    pub(super) tensor: TensorId,
    pub(super) out: Option<TensorId>,
}

/// The live tensors and the reads not yet emitted.
#[derive(Default)]
pub(super) struct Reads {
    pub(super) live: Vec<Live>,
    /// Banks the live tensors occupy.
    pub(super) live_banks: u32,
    pub(super) sinks: Vec<Sink>,
    /// The sink of the pending batch.
    pub(super) sink: Option<usize>,
    pub(super) batch: Vec<Access>,
    pub(super) batch_banks: u32,
}

impl Reads {
    /// Whether no tensor is live.
    pub(super) fn none_live(&self) -> bool {
        self.live.is_empty()
    }

    /// The sink of `[parts, bytes]` tensors: the sink of `bytes` (`sinkS`
    /// for S banks, `sink_B` below a bank, declared with its DRAM output
    /// `out…` unless `later`) read at partitions `0..parts`.
    pub(super) fn sink(
        &mut self,
        b: &mut Builder,
        parts: u32,
        bytes: u32,
        later: bool,
    ) -> Result<usize, GenError> {
        let same = |s: &Sink| s.bytes == bytes;
        if let Some(i) = self.sinks.iter().position(|s| same(s) && s.parts == parts) {
            return Ok(i);
        }
        let (tensor, out) = match self.sinks.iter().find(|s| same(s)) {
            Some(s) => (s.tensor, None),
            None => {
                let suffix = match bytes % BANK {
                    0 => (bytes / BANK).to_string(),
                    _ => format!("_{bytes}"),
                };
                let mt = b.m_tile();
                let tensor = b.sbuf(&format!("sink{suffix}"), mt, bytes.into(), DType::F32)?;
                let out = match later {
                    true => None,
                    false => Some(b.dram(&format!("out{suffix}"), mt, bytes.into(), DType::F32)?),
                };
                (tensor, out)
            }
        };
        self.sinks.push(Sink {
            parts,
            bytes,
            tensor,
            out,
        });
        Ok(self.sinks.len() - 1)
    }

    /// Declares the DRAM outputs of the sinks declared without one.
    pub(super) fn declare_outs(&mut self, b: &mut Builder) -> Result<(), GenError> {
        for s in self.sinks.iter_mut().filter(|s| s.out.is_none()) {
            let name = b.module.tensor(s.tensor).name.replacen("sink", "out", 1);
            s.out = Some(b.dram(&name, s.parts, s.bytes.into(), DType::F32)?);
        }
        Ok(())
    }

    /// `(sink, out)` of every sink, in declaration order.
    pub(super) fn stores(&self) -> Vec<(TensorId, TensorId)> {
        self.sinks
            .iter()
            .filter_map(|s| Some((s.tensor, s.out?)))
            .collect()
    }
}
