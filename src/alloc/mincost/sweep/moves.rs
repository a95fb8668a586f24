//! Kempe interchanges over the banks' histories (a phase of the sweep,
//! SPEC §3.11): a holder of a block the sweep must free moves, for
//! nothing, to a free block of its size when the two blocks can swap the
//! pieces placed in them from some point on, as if the banks had been
//! chosen so from the start.

use super::{Move, Sweep, FREE};
use crate::alloc::blocks::block;
use crate::arch::bank_alignment;

/// How many pieces back [`Sweep::swap_point`] looks for a point two
/// blocks can swap from.
const SWAP_ROUNDS: usize = 8;

/// The most pieces of one bank [`Sweep::swap_point`] lets a swap move.
const SWAP_PIECES: usize = 32;

/// Where the pieces of bank history `h` placed from point `at` on begin,
/// when there are at most [`SWAP_PIECES`] of them (found from the end).
fn recent_from(h: &[(u32, u32)], at: u32) -> Option<usize> {
    let lo = h.len().saturating_sub(SWAP_PIECES + 1);
    match h[lo..].iter().rposition(|&(s, _)| s < at) {
        Some(i) => Some(lo + i + 1),
        None => (lo == 0).then_some(0),
    }
}

impl Sweep<'_> {
    /// How holder `seg` can leave its block for another of its size,
    /// outside the banks `reserved` and free now, as if the two blocks had
    /// been swapped from some point on: the latest point, at most where
    /// `seg` was placed, that no piece in either block is held across and
    /// from which every piece placed in them lies within one of the two.
    /// Of the target blocks, the lowest that has such a point within
    /// [`SWAP_ROUNDS`] steps back.
    fn plan_swap(&self, seg: usize, reserved: u64) -> Option<Move> {
        let free = !(self.busy | reserved) & block(0, self.problem.num_banks);
        if free == 0 {
            return None;
        }
        let size = self.banks(seg);
        let from = u32::from(self.base[seg]);
        let step = bank_alignment(size) as usize;
        let targets = (0..=self.problem.num_banks - size).step_by(step);
        let mut targets = targets.filter(|&t| free & block(t, size) == block(t, size));
        targets.find_map(|to| {
            let at = self.swap_point(from, to, size, self.start_of(seg))?;
            Some(Move { from, to, size, at })
        })
    }

    /// The latest point at most `at` from which the blocks of `size` banks
    /// from `x` and from `y` can swap their pieces (see
    /// [`Sweep::plan_swap`]).
    fn swap_point(&self, x: u32, y: u32, size: u32, mut at: u32) -> Option<u32> {
        let banks = || (x..x + size).chain(y..y + size);
        let mut settled = false;
        for _ in 0..SWAP_ROUNDS {
            settled = true;
            for b in banks() {
                let h = &self.history[b as usize];
                let k = recent_from(h, at)?;
                if let Some(&(start, g)) = k.checked_sub(1).map(|k| &h[k]) {
                    if self.end[g as usize] >= at {
                        at = start;
                        settled = false;
                    }
                }
            }
            if settled {
                break;
            }
        }
        let within = |g: u32| {
            let piece = block(u32::from(self.base[g as usize]), self.banks(g as usize));
            piece & !block(x, size) == 0 || piece & !block(y, size) == 0
        };
        let contained = banks().all(|b| {
            let h = &self.history[b as usize];
            recent_from(h, at).is_some_and(|k| h[k..].iter().all(|&(_, g)| within(g)))
        });
        (settled && contained).then_some(at)
    }

    /// Swaps the pieces placed in the two blocks of `m` from its point on.
    pub(super) fn swap(&mut self, m: Move) {
        let delta = |b: u32, from: u32, to: u32| b + to - from;
        for o in 0..m.size {
            let (bx, by) = ((m.from + o) as usize, (m.to + o) as usize);
            let mut hx = std::mem::take(&mut self.history[bx]);
            let mut hy = std::mem::take(&mut self.history[by]);
            let kx = recent_from(&hx, m.at).expect("a planned swap");
            let ky = recent_from(&hy, m.at).expect("a planned swap");
            let (tx, ty) = (hx.split_off(kx), hy.split_off(ky));
            for &(_, g) in &tx {
                if u32::from(self.base[g as usize]) == bx as u32 {
                    self.base[g as usize] = delta(bx as u32, m.from, m.to) as u8;
                }
            }
            for &(_, g) in &ty {
                if u32::from(self.base[g as usize]) == by as u32 {
                    self.base[g as usize] = delta(by as u32, m.to, m.from) as u8;
                }
            }
            hx.extend(ty);
            hy.extend(tx);
            self.history[bx] = hx;
            self.history[by] = hy;
            self.owner.swap(bx, by);
        }
        let (bx, by) = (block(m.from, m.size), block(m.to, m.size));
        let (held_x, held_y) = (self.busy & bx != 0, self.busy & by != 0);
        self.busy &= !(bx | by);
        if held_x {
            self.busy |= by;
        }
        if held_y {
            self.busy |= bx;
        }
    }

    /// Into `moves`, the holders of the block of `banks` banks from `b`
    /// (each once: a holder's banks are consecutive) that can move out of
    /// it ([`Sweep::plan_swap`]), each with its swap, in bank order.
    pub(super) fn plan_moves(&self, b: u32, banks: u32, moves: &mut Vec<Move>) {
        moves.clear();
        // With every bank held, or no histories kept, no holder can move.
        if !self.problem.multi_bank || !self.busy & block(0, self.problem.num_banks) == 0 {
            return;
        }
        let mut reserved = block(b, banks);
        for x in b..b + banks {
            let o = self.owner[x as usize];
            if o == FREE || (x > b && self.owner[x as usize - 1] == o) {
                continue;
            }
            if let Some(m) = self.plan_swap(o as usize, reserved) {
                reserved |= block(m.to, m.size);
                moves.push(m);
            }
        }
    }
}
