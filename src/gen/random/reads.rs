//! The reads of [`super::program`]: live tensors with reads to come, and
//! the SBUF sinks that sum them (`act sinkS <- sinkS, pA, pB, …`,
//! consecutive reads into one sink batched into one `act`).

use super::live::{Live, Sink};
use super::shapes::{Psum, Unit, ACT_BANKS};
use super::Gen;
use crate::gen::build::GenError;
use crate::ir::{Access, InstKind};

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
