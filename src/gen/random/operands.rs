//! Where matmul operands and bias sources come from: random slices of two
//! shared tensors, or fresh slices of operand pools that no other matmul
//! reads.

use super::shapes::{Strided, K_TILE};
use crate::gen::build::{Builder, GenError};
use crate::ir::{Access, Affine, DType, Module, TensorId, VarId};
use std::ops::Range;

/// Bytes per partition of the shared stationary operand `w`.
pub(super) const SHARED_W_BYTES: u32 = 8192;
/// Bytes per partition of the shared moving operand `x`.
pub(super) const SHARED_X_BYTES: u32 = 16384;

/// The operand side a slice is for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Side {
    /// `w…`: matmul stationary operands.
    Stationary,
    /// `x…`: matmul moving operands.
    Moving,
    /// `bias…`: sources of bias-copy inits.
    Bias,
}

impl Side {
    /// Bytes per partition of one pool: room for the largest slice (a
    /// moving operand of 1024 bytes in two nested loops of 4, a stationary
    /// one of 256, a bias of four banks).
    fn capacity(self) -> u32 {
        match self {
            Side::Moving => 16384,
            Side::Stationary | Side::Bias => 8192,
        }
    }

    fn prefix(self) -> &'static str {
        match self {
            Side::Stationary => "w",
            Side::Moving => "x",
            Side::Bias => "bias",
        }
    }
}

/// A pool of fresh slices of one dtype, `[128, size]`: a slice of `k`
/// partitions starts at a multiple of `k`, above every byte handed out in
/// its partitions.
struct Pool {
    tensor: TensorId,
    side: Side,
    dtype: DType,
    /// Bytes handed out per partition since the pool was (re)started.
    used: [u32; K_TILE as usize],
    /// Bytes per partition the pool needs.
    size: u32,
}

impl Pool {
    /// The lowest free byte offset for `k` partitions, and the first of them.
    fn place(&self, k: u32) -> (u32, usize) {
        let k = (k as usize).clamp(1, self.used.len());
        (0..self.used.len() / k)
            .map(|l| {
                (
                    self.used[l * k..(l + 1) * k]
                        .iter()
                        .copied()
                        .max()
                        .unwrap_or(0),
                    l * k,
                )
            })
            .min()
            .unwrap_or((0, 0))
    }
}

/// Where matmul operands and bias sources come from.
#[derive(Default)]
pub(super) struct Operands {
    /// The shared `w` and `x` (without `fresh_operands`).
    pub(super) shared: Option<(TensorId, TensorId)>,
    pools: Vec<Pool>,
    /// Bytes per partition the pools may take; past it, pools are reused
    /// from their start.
    budget: u32,
    /// The kinds (side and dtype) of pool there may be.
    kinds: Vec<(Side, DType)>,
}

impl Operands {
    /// Declares the shared `w` and `x` (unless `fresh`) and returns the
    /// tensors to load from DRAM; the pools leave `reserve` bytes per
    /// partition of SBUF free, and with `fp8` operands come in two dtypes.
    pub(super) fn declare(
        &mut self,
        b: &mut Builder,
        fresh: bool,
        fp8: bool,
        reserve: u32,
    ) -> Result<Vec<TensorId>, GenError> {
        self.budget = b.arch.sbuf().partition_size.saturating_sub(reserve);
        let dtypes: &[DType] = if fp8 {
            &[DType::Bf16, DType::Fp8]
        } else {
            &[DType::Bf16]
        };
        self.kinds = [Side::Stationary, Side::Moving]
            .into_iter()
            .flat_map(|s| dtypes.iter().map(move |&d| (s, d)))
            .chain([(Side::Bias, DType::F32)])
            .collect();
        if fresh {
            return Ok(Vec::new());
        }
        let w = b.sbuf("w", K_TILE, SHARED_W_BYTES.into(), DType::Bf16)?;
        let x = b.sbuf("x", K_TILE, SHARED_X_BYTES.into(), DType::Bf16)?;
        self.shared = Some((w, x));
        Ok(vec![w, x])
    }

    /// Sizes each pool to the bytes it handed out.
    pub(super) fn finish(&self, m: &mut Module) {
        for p in &self.pools {
            m.tensors[p.tensor].bytes = p.size;
        }
    }

    /// A fresh `[k, len]` slice of a `side` pool of `dtype` for each
    /// iteration of `vars` (innermost last).
    pub(super) fn fresh(
        &mut self,
        b: &mut Builder,
        side: Side,
        dtype: DType,
        k: u32,
        len: u32,
        vars: &[Strided],
    ) -> Result<Access, GenError> {
        let total = len * vars.iter().map(|v| v.trips).product::<u32>();
        let kind = |p: &Pool| p.side == side && p.dtype == dtype;
        let made = |&(side, dtype): &(Side, DType)| {
            self.pools
                .iter()
                .any(|p| p.side == side && p.dtype == dtype)
        };
        // Room for a first pool of every kind not made yet.
        let missing: u32 = self
            .kinds
            .iter()
            .filter(|k| !made(k))
            .map(|k| k.0.capacity())
            .sum();
        let spent: u32 = self.pools.iter().map(|p| p.side.capacity()).sum();
        let cap = side.capacity();
        let fits = |p: &Pool| kind(p) && p.place(k).0 + total <= cap;
        let idx = match self.pools.iter().position(fits) {
            Some(i) => i,
            None if spent + missing + cap <= self.budget || !made(&(side, dtype)) => {
                let n = self.pools.iter().filter(|p| p.side == side).count();
                let name = format!("{}{n}", side.prefix());
                let tensor = b.sbuf(&name, K_TILE, cap.into(), dtype)?;
                self.pools.push(Pool {
                    tensor,
                    side,
                    dtype,
                    used: [0; K_TILE as usize],
                    size: 0,
                });
                self.pools.len() - 1
            }
            None => {
                let i = self.pools.iter().position(kind).unwrap_or(0);
                self.pools[i].used = [0; K_TILE as usize];
                i
            }
        };
        let pool = &mut self.pools[idx];
        let (base, p0) = pool.place(k);
        let end = base + total;
        pool.used[p0..p0 + k as usize].fill(end);
        pool.size = pool.size.max(end);
        let p0 = p0 as u32;
        Ok(slice(pool.tensor, p0..p0 + k, base, len, len, vars))
    }
}

/// `t[parts, Σ stride·var + base : … + len]`, the stride of the innermost
/// var `inner` and each outer one the inner's times its trips.
pub(super) fn slice(
    t: TensorId,
    parts: Range<u32>,
    base: u32,
    len: u32,
    inner: u32,
    vars: &[Strided],
) -> Access {
    let mut b0 = Affine::constant(base.into());
    let mut stride = i64::from(inner);
    for v in vars.iter().rev() {
        b0.add_term(VarId::new(v.depth), stride);
        stride *= i64::from(v.trips);
    }
    let mut b1 = b0.clone();
    b1.constant += i64::from(len);
    let (p0, p1) = (parts.start.into(), parts.end.into());
    Access::new(t, Affine::constant(p0), Affine::constant(p1), b0, b1)
}

/// The bytes `slice` spans beyond its first `len`.
pub(super) fn span(inner: u32, vars: &[Strided]) -> u32 {
    let mut stride = inner;
    let mut span = 0;
    for v in vars.iter().rev() {
        span += stride * (v.trips - 1);
        stride *= v.trips;
    }
    span
}
