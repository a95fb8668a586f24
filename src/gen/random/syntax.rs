//! The `syntax` knob of [`super::program`]: labels, `after=` edges,
//! explicit flags and `zr`, `pos=` rows, the matmul kinds, and `bank=` /
//! `addr=` attributes, drawn at random for the text round trip (SPEC §2.5).

use super::Gen;
use crate::ir::{FlagSet, Flags, Inst, InstKind, MatmulKind, Mem};

impl Gen<'_> {
    /// Decorates `inst` at random.
    pub(super) fn decorate(&mut self, inst: &mut Inst) {
        if let InstKind::Matmul(mm) = &mut inst.kind {
            mm.kind = *self.rng.pick(&[
                MatmulKind::Plain,
                MatmulKind::Plain,
                MatmulKind::Sparse,
                MatmulKind::Mx,
                MatmulKind::Transpose,
            ]);
            let rows = self.b.arch.pe().rows;
            let k = mm.stationary.part_extent() as u32;
            if mm.pos.0 == 0 && self.rng.chance(1, 3) {
                mm.pos.0 = self.rng.range(0, rows - k);
            }
            if self.rng.chance(1, 2) {
                mm.flags = Flags::Set(FlagSet {
                    start: self.rng.chance(1, 2),
                    acc: self.rng.chance(1, 2),
                    stop: self.rng.chance(1, 2),
                });
            }
            mm.zr = self.rng.chance(1, 3).then(|| self.rng.range(0, 3));
        }
        if self.rng.chance(1, 3) {
            let prefix = *self.rng.pick(&["", "a", "mm.", "x_"]);
            let label = format!("{prefix}{}", self.labels.len());
            self.labels.push(label.clone());
            inst.set_label(Some(label));
        }
        if !self.labels.is_empty() && self.rng.chance(1, 4) {
            let after = self.rng.pick(&self.labels).clone();
            inst.set_after(Some(after));
        }
    }

    /// Gives some PSUM tensors a `bank=` and some SBUF tensors an `addr=`.
    pub(super) fn attributes(&mut self) {
        let banks = self.b.arch.num_banks();
        for t in &mut self.b.module.tensors {
            match t.mem {
                Mem::Psum if self.rng.chance(1, 3) => t.bank = Some(self.rng.range(0, banks - 1)),
                Mem::Sbuf if self.rng.chance(1, 3) => t.addr = Some(self.rng.below(1 << 20)),
                _ => {}
            }
        }
    }
}
