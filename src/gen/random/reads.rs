//! The reads of [`super::program`]: live tensors with reads to come, and
//! the SBUF sinks that sum them (`act sinkS <- sinkS, pA, pB, …`,
//! consecutive reads into one sink batched into one `act`).

use super::{Gen, Psum, Unit, ACT_BANKS, BANK};
use crate::gen::build::{Builder, GenError};
use crate::ir::{Access, DType, InstKind, TensorId};

/// A PSUM tensor that still has reads to come.
struct Live {
    p: Psum,
    reads_left: u8,
}

/// An SBUF sink `[M tile, bytes]` and the DRAM tensor it is stored to;
/// reads of a `[parts, bytes]` tensor sum into its first `parts` partitions.
#[derive(Clone, Copy)]
struct Sink {
    parts: u32,
    bytes: u32,
    tensor: TensorId,
    out: Option<TensorId>,
}

/// The live tensors and the reads not yet emitted.
#[derive(Default)]
pub(super) struct Reads {
    live: Vec<Live>,
    /// Banks the live tensors occupy.
    pub(super) live_banks: u32,
    sinks: Vec<Sink>,
    /// The sink of the pending batch.
    sink: Option<usize>,
    batch: Vec<Access>,
    batch_banks: u32,
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

impl Gen<'_> {
    /// Makes `p` live with 1–3 reads to come.
    pub(super) fn start_live(&mut self, p: Psum) {
        let reads_left = 1 + self.rng.below(3) as u8;
        self.reads.live.push(Live { p, reads_left });
        self.reads.live_banks += p.need;
    }

    /// Ends the life of `p`: with `second_lives`, a first life leaves the
    /// tensor waiting for its second.
    pub(super) fn retire(&mut self, p: Psum) {
        if self.cfg.second_lives && p.life == 0 {
            self.consumed.push(Psum { life: 1, ..p });
        }
    }

    /// Reads one random live tensor (one must be live); retires it after
    /// its last read.
    pub(super) fn read_one(&mut self) -> Result<(), GenError> {
        let i = self.rng.index(self.reads.live.len());
        let p = self.reads.live[i].p;
        self.read(p)?;
        self.reads.live[i].reads_left -= 1;
        if self.reads.live[i].reads_left == 0 {
            self.reads.live.swap_remove(i);
            self.reads.live_banks -= p.need;
            self.retire(p);
        }
        Ok(())
    }

    /// Adds a read of all of `p` to the batch of its sink.
    pub(super) fn read(&mut self, p: Psum) -> Result<(), GenError> {
        let sink = self.reads.sink(&mut self.b, p.parts, p.bytes, false)?;
        let r = &self.reads;
        let full = r.batch_banks + p.need > self.cfg.read_banks.min(ACT_BANKS);
        if r.sink != Some(sink) || full || r.batch.iter().any(|a| a.tensor == p.tensor) {
            self.flush();
            self.reads.sink = Some(sink);
        }
        let whole = self.b.whole(p.tensor);
        self.reads.batch.push(whole);
        self.reads.batch_banks += p.need;
        Ok(())
    }

    /// Emits the pending reads as `act SINK <- SINK, pA, pB, …` (with
    /// `local_loops`, sometimes in a loop).
    pub(super) fn flush(&mut self) {
        let Some(s) = self.reads.sink.take() else {
            return;
        };
        let Sink {
            parts,
            bytes,
            tensor,
            ..
        } = self.reads.sinks[s];
        let sink = Access::rect(tensor, 0, parts.into(), 0, bytes.into());
        let mut srcs = Vec::with_capacity(self.reads.batch.len() + 1);
        srcs.push(sink.clone());
        srcs.append(&mut self.reads.batch);
        self.reads.batch_banks = 0;
        let act = InstKind::Act { dst: sink, srcs };
        if self.cfg.local_loops && self.rng.chance(1, 4) {
            let trips = 2 + self.rng.below(3) as u32;
            self.emit_unit(Unit::Loop {
                trips,
                body: vec![Unit::Inst(act)],
            });
        } else {
            self.emit(act);
        }
    }
}
