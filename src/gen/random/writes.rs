//! The writes of [`super::program`]: matmul operands (from
//! [`super::operands`]), the core's per-bank chains, the rich ways to write
//! a life, and the loop shapes (loop-carried values, loops of short-lived
//! tensors).

use super::operands::{slice, span, Side, SHARED_W_BYTES, SHARED_X_BYTES};
use super::shapes::{Psum, Strided, Unit, BANK, K_TILE};
use super::Gen;
use crate::gen::build::GenError;
use crate::ir::{Access, Affine, DType, Flags, InstKind, Matmul, MatmulKind, VarId};
use std::collections::VecDeque;

/// Bank `bank` of `p`: `[0:parts, bank·BANK : min((bank+1)·BANK, bytes)]`.
fn bank_region(p: Psum, bank: u32) -> Access {
    let (b0, b1) = (bank * BANK, p.bytes.min((bank + 1) * BANK));
    Access::rect(p.tensor, 0, p.parts.into(), b0.into(), b1.into())
}

impl Gen<'_> {
    /// Partitions and bytes of a `writes` tensor of `banks` banks.
    pub(super) fn shape(&mut self, banks: u32) -> (u32, u32) {
        let mt = self.mt;
        let parts = *self.rng.pick(&[mt, mt, mt / 2, 32.min(mt)]);
        let bytes = match banks {
            1 => *self.rng.pick(&[512, 1024, 2048, 2048]),
            n => n * BANK,
        };
        (parts, bytes)
    }

    /// The slice of one operand: `elems` elements of `k` partitions per
    /// iteration of `vars`.
    fn operand(
        &mut self,
        side: Side,
        k: u32,
        elems: u32,
        vars: &[Strided],
    ) -> Result<Access, GenError> {
        let dtype = match self.cfg.syntax && self.operands.shared.is_none() {
            true => *self.rng.pick(&[DType::Bf16, DType::Fp8]),
            false => DType::Bf16,
        };
        let len = elems * dtype.size();
        let Some((w, x)) = self.operands.shared else {
            return self.operands.fresh(&mut self.b, side, dtype, k, len, vars);
        };
        let (t, cap, inner) = match side {
            Side::Moving => (x, SHARED_X_BYTES, 1024),
            _ => (w, SHARED_W_BYTES, 256),
        };
        let free = cap - len - span(inner, vars);
        let base = 2 * self.rng.below(u64::from(free / 2) + 1) as u32;
        Ok(slice(t, 0..k, base, len, inner, vars))
    }

    /// `matmul dst <- w…, x…` with `dst` `[m, n_bytes]` at PE column
    /// `pos_col`, contraction `k`, operands striding over `vars`.
    fn matmul(
        &mut self,
        dst: Access,
        k: u32,
        m: u32,
        n_bytes: u32,
        pos_col: u32,
        vars: &[Strided],
    ) -> Result<Unit, GenError> {
        let stationary = self.operand(Side::Stationary, k, m, vars)?;
        let moving = self.operand(Side::Moving, k, n_bytes / 4, vars)?;
        Ok(Unit::Inst(InstKind::Matmul(Box::new(Matmul {
            kind: MatmulKind::Plain,
            dst,
            stationary,
            moving,
            pos: (0, pos_col),
            flags: Flags::Auto,
            zr: None,
            accumulate: None,
        }))))
    }

    /// The writes of the next life of `p`.
    pub(super) fn write(&mut self, p: Psum) -> Result<Vec<Unit>, GenError> {
        let depth = self.depth();
        if self.cfg.writes {
            return self.rich_write(p, depth);
        }
        // A second life starts with a whole overwrite outside loops (the
        // memloc split): a memset, or one bank's straight chain.
        let mut out = Vec::new();
        let memset = p.life > 0 && (p.banks > 1 || self.rng.chance(1, 2));
        if memset {
            let dst = self.b.whole(p.tensor);
            out.push(self.memset(dst, 0.0));
        }
        let straight = p.life > 0 && !memset;
        for bank in 0..p.banks {
            let dst = bank_region(p, bank);
            let chain = if self.rng.chance(1, 4) { 2 } else { 1 };
            if self.cfg.loops && chain == 2 && !straight {
                let vars = [Strided { depth, trips: 2 }];
                let body = vec![self.matmul(dst, K_TILE, p.parts, BANK, 0, &vars)?];
                out.push(Unit::Loop { trips: 2, body });
            } else {
                for _ in 0..chain {
                    out.push(self.matmul(dst.clone(), K_TILE, p.parts, BANK, 0, &[])?);
                }
            }
        }
        Ok(out)
    }

    /// One matmul per bank of `p`, operands striding over `vars` (with
    /// `writes`, of a random contraction).
    fn bank_writes(&mut self, p: Psum, vars: &[Strided]) -> Result<Vec<Unit>, GenError> {
        let k = match self.cfg.writes {
            true => self.contraction(),
            false => K_TILE,
        };
        (0..p.banks)
            .map(|bank| {
                let dst = bank_region(p, bank);
                let n_bytes = dst.byte_extent() as u32;
                self.matmul(dst, k, p.parts, n_bytes, 0, vars)
            })
            .collect()
    }

    /// `memset dst = value` (with `syntax`, a value drawn from a list).
    fn memset(&mut self, dst: Access, value: f64) -> Unit {
        let value = match self.cfg.syntax {
            true => *self.rng.pick(&[0.0, 1.0, -1.5, 0.25, 1e10, -3.0, 0.1]),
            false => value,
        };
        Unit::Inst(InstKind::Memset { dst, value })
    }

    /// An optional init of `dst` (`[parts, bytes]`): a memset or a bias copy.
    fn init(&mut self, dst: &Access, parts: u32, bytes: u32) -> Result<Vec<Unit>, GenError> {
        Ok(match self.rng.below(6) {
            0 => vec![self.memset(dst.clone(), 0.0)],
            1 => {
                let v = self.rng.range(1, 3);
                vec![self.memset(dst.clone(), f64::from(v))]
            }
            2 => vec![self.bias_copy(dst.clone(), parts, bytes)?],
            _ => Vec::new(),
        })
    }

    /// `copy dst <- bias…`, a fresh `[parts, bytes]` slice of a bias pool.
    fn bias_copy(&mut self, dst: Access, parts: u32, bytes: u32) -> Result<Unit, GenError> {
        let src = self
            .operands
            .fresh(&mut self.b, Side::Bias, DType::F32, parts, bytes, &[])?;
        Ok(Unit::Inst(InstKind::Copy { dst, src }))
    }

    /// The loop of a chain of `chain` matmuls at `depth`, if it is one.
    fn maybe_loop(&mut self, chain: u32, depth: usize) -> Vec<Strided> {
        if self.cfg.loops && chain > 1 && self.rng.chance(1, 2) {
            vec![Strided {
                depth,
                trips: chain,
            }]
        } else {
            Vec::new()
        }
    }

    fn contraction(&mut self) -> u32 {
        *self.rng.pick(&[4, 8, 8, 16, 32, 64])
    }

    /// `body`, as the loop `vars` (at most one) when there is one.
    fn wrap(body: Vec<Unit>, vars: &[Strided]) -> Vec<Unit> {
        match vars.first() {
            None => body,
            Some(v) => vec![Unit::Loop {
                trips: v.trips,
                body,
            }],
        }
    }

    /// A life of `p` written one of the rich ways: column tiles, per-bank
    /// chains, column halves, affine slices or one whole chain, each chain
    /// straight or a loop, on top of an optional init.
    fn rich_write(&mut self, p: Psum, depth: usize) -> Result<Vec<Unit>, GenError> {
        let gen4 = self.b.arch.arch_level() >= 40;
        let (t, parts, bytes) = (p.tensor, p.parts, p.bytes);
        let second = p.life > 0;
        let kind = self.rng.below(5);
        let chain = self.rng.range(1, self.cfg.max_chain.clamp(1, 4));
        let mut out = Vec::new();
        if second {
            // A whole overwrite outside loops first (the memloc split).
            let whole = self.b.whole(t);
            out.push(match self.rng.below(3) {
                0 => self.memset(whole, 0.0),
                1 => {
                    let v = self.rng.range(1, 3);
                    self.memset(whole, f64::from(v))
                }
                _ => self.bias_copy(whole, parts, bytes)?,
            });
        }
        if kind == 0 && parts == self.mt && bytes <= BANK && !second {
            // Column tiles: two halves of the partitions side by side in the PE array.
            let half = parts / 2;
            let whole = self.b.whole(t);
            out.extend(self.init(&whole, parts, bytes)?);
            let vars = self.maybe_loop(chain, depth);
            let steps = if vars.is_empty() { chain } else { 1 };
            let mut body = Vec::new();
            for _ in 0..steps {
                for h in 0..2 {
                    let dst = Access::rect(
                        t,
                        (h * half).into(),
                        ((h + 1) * half).into(),
                        0,
                        bytes.into(),
                    );
                    body.push(self.matmul(dst, K_TILE, half, bytes, h * half, &vars)?);
                }
            }
            out.extend(Self::wrap(body, &vars));
            return Ok(out);
        }
        let regions: Vec<(u32, u32)> = if p.banks > 1 && !(gen4 && kind == 1) {
            (0..p.banks).map(|b| (b * BANK, (b + 1) * BANK)).collect()
        } else if kind == 2 && bytes >= 1024 && !second {
            vec![(0, bytes / 2), (bytes / 2, bytes)]
        } else {
            vec![(0, bytes)]
        };
        if kind == 3 && regions.len() > 1 && self.cfg.loops {
            // Affine destination: one loop over the regions, each accumulated.
            let trips = regions.len() as u32;
            let rb = bytes / trips;
            let inner = self.maybe_loop(chain, depth + 1);
            let mut vars = vec![Strided { depth, trips }];
            vars.extend(inner.iter().copied());
            let k = self.contraction();
            let b0 = Affine::var(VarId::new(depth), rb.into());
            let mut b1 = b0.clone();
            b1.constant += i64::from(rb);
            let dst = Access::new(
                t,
                Affine::constant(0),
                Affine::constant(parts.into()),
                b0,
                b1,
            );
            let steps = if inner.is_empty() { chain } else { 1 };
            let mut body = Vec::new();
            for _ in 0..steps {
                body.push(self.matmul(dst.clone(), k, parts, rb, 0, &vars)?);
            }
            out.push(Unit::Loop {
                trips,
                body: Self::wrap(body, &inner),
            });
            return Ok(out);
        }
        let interleave = regions.len() > 1 && self.rng.chance(1, 2);
        let k = self.contraction();
        let mut chains = Vec::new();
        for (b0, b1) in regions {
            let dst = Access::rect(t, 0, parts.into(), b0.into(), b1.into());
            let mut units = self.init(&dst, parts, b1 - b0)?;
            let vars = self.maybe_loop(chain, depth);
            let steps = if vars.is_empty() { chain } else { 1 };
            let mut body = Vec::new();
            for _ in 0..steps {
                body.push(self.matmul(dst.clone(), k, parts, b1 - b0, 0, &vars)?);
            }
            units.extend(Self::wrap(body, &vars));
            chains.push(units);
        }
        Ok(match interleave {
            true => self.merge(chains),
            false => chains.into_iter().flatten().collect(),
        })
    }

    /// A tensor initialized before a loop and rewritten inside it, read at
    /// the top of the body (the previous iteration's value) and maybe below
    /// the write; it may stay live after the loop.
    pub(super) fn carried_loop(&mut self, p: Psum) -> Result<(), GenError> {
        let whole = self.b.whole(p.tensor);
        let init = self.memset(whole, 0.0);
        self.emit_unit(init);
        let trips = 2 + self.rng.below(3) as u32;
        let depth = self.depth();
        self.open(trips);
        self.read(p)?;
        self.flush();
        for u in self.bank_writes(p, &[Strided { depth, trips }])? {
            self.emit_unit(u);
        }
        if !self.reads.none_live() && self.rng.chance(1, 2) {
            self.read_one()?;
        }
        let read_below = self.rng.chance(1, 2);
        if read_below {
            self.read(p)?;
        }
        self.flush();
        self.b.close_loop();
        if read_below && self.rng.chance(1, 2) {
            self.retire(p);
        } else {
            self.start_live(p);
        }
        Ok(())
    }

    /// A loop holding a short-lived tensor, maybe nesting its accumulation
    /// loop and reading a live tensor.
    pub(super) fn local_loop(&mut self, p: Psum) -> Result<(), GenError> {
        let trips = 2 + self.rng.below(3) as u32;
        let depth = self.depth();
        self.open(trips);
        let mut vars = vec![Strided { depth, trips }];
        if self.rng.chance(1, 2) {
            let inner = 2 + self.rng.below(3) as u32;
            vars.push(Strided {
                depth: depth + 1,
                trips: inner,
            });
            let body = self.bank_writes(p, &vars)?;
            self.emit_unit(Unit::Loop { trips: inner, body });
        } else {
            for u in self.bank_writes(p, &vars)? {
                self.emit_unit(u);
            }
        }
        if !self.reads.none_live() && self.rng.chance(1, 2) {
            self.read_one()?;
        }
        self.read(p)?;
        self.flush();
        self.b.close_loop();
        self.retire(p);
        Ok(())
    }

    /// Interleaves `lists` at random, keeping each list's order.
    pub(super) fn merge(&mut self, lists: Vec<Vec<Unit>>) -> Vec<Unit> {
        let mut lists: Vec<VecDeque<Unit>> = lists.into_iter().map(Into::into).collect();
        let mut out = Vec::with_capacity(lists.iter().map(VecDeque::len).sum());
        loop {
            let open: Vec<usize> = (0..lists.len()).filter(|&i| !lists[i].is_empty()).collect();
            if open.is_empty() {
                return out;
            }
            let i = *self.rng.pick(&open);
            out.extend(lists[i].pop_front());
        }
    }
}
