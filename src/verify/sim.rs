//! The simulator (SPEC §5.2): a reusable interpreter that executes a module
//! on f64 values, either with virtual storage (every tensor its own memory,
//! matmuls following the accumulation-run rule of §2.4) or with physical
//! PSUM (§4.4: tensors at `bank·2048 + offset`, `start` zeroing whole banks,
//! PSUM starting as deterministic non-zero garbage), and compares the SBUF
//! and DRAM tensors of an original program with those of its compiled form.
//!
//! Inputs are seeded small integers keyed by tensor name and element index,
//! so the original and the result see identical inputs even though the result
//! declares extra tensors. Loops and affine bounds are executed directly.

use super::exec::{checked_region, for_each_step, BadAccess, Env, InstNames, RunTracker};
use super::layout::{Layout, PlaceError, Store};
use crate::arch;
use crate::entity::IdMap;
use crate::ir::{Access, Flags, InstId, InstKind, Mem, Module, Region, TensorId};
use thiserror::Error;

/// The seed `verify` uses for inputs and PSUM garbage.
pub const DEFAULT_SEED: u64 = 0x005e_ed0f_9a5e;

/// Which storage model to execute with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Every tensor its own zero-initialized storage (SPEC §2.4).
    Virtual,
    /// PSUM tensors in physical PSUM at their banks, flags honoured (SPEC §4.4).
    Physical,
}

/// Why a simulation failed or where two programs disagree.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum SimError {
    /// The module names an unknown arch.
    #[error("{0}")]
    Arch(String),
    /// A PSUM tensor cannot be placed in physical PSUM.
    #[error(transparent)]
    Place(#[from] PlaceError),
    /// An access outside its tensor.
    #[error("{0}")]
    Access(BadAccess),
    /// Operand shapes that do not agree.
    #[error("{inst}: {what}")]
    Shape {
        /// The instruction instance.
        inst: String,
        /// What disagrees.
        what: String,
    },
    /// The result lacks an SBUF/DRAM tensor the original declares, or changed its shape.
    #[error("result {problem} tensor {name} of the original")]
    MissingTensor {
        /// The tensor.
        name: String,
        /// `lacks` or `changes the shape of`.
        problem: &'static str,
    },
    /// The first element where the result differs from the original.
    #[error(
        "{tensor}[{partition}, byte {byte}]: original computes {expected}, result computes {found}"
    )]
    Mismatch {
        /// The tensor.
        tensor: String,
        /// Partition.
        partition: u32,
        /// Byte offset in the partition.
        byte: u32,
        /// The original's value.
        expected: Value,
        /// The result's value.
        found: Value,
    },
}

/// One element's value as a simulator computes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// The exact simulator's number.
    Number(f64),
    /// The symbolic simulator's hash of the element ([`super::symbolic`]).
    Symbol {
        /// The hash.
        digest: u64,
        /// Whether it was computed from uninitialized PSUM.
        garbage: bool,
    },
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Value::Number(v) => write!(f, "{v}"),
            Value::Symbol { digest, garbage } => {
                write!(f, "symbol #{digest:016x}")?;
                if garbage {
                    f.write_str(" (from uninitialized PSUM)")?;
                }
                Ok(())
            }
        }
    }
}

impl SimError {
    /// Operand shapes of instance `id` (under `env`) that disagree.
    pub(crate) fn shape(
        m: &Module,
        names: &InstNames,
        id: InstId,
        env: &Env,
        what: String,
    ) -> Self {
        SimError::Shape {
            inst: names.instance(m, id, env),
            what,
        }
    }
}

/// The final contents of every tensor after a run.
pub struct Memory {
    layout: Layout,
    cells: Store<f64>,
}

impl Memory {
    /// The row-major contents of tensor `t` (`partitions × elems`).
    pub fn tensor(&self, m: &Module, t: TensorId) -> Vec<f64> {
        let tt = m.tensor(t);
        let whole = Region {
            p0: 0,
            p1: i64::from(tt.partitions),
            b0: 0,
            b1: i64::from(tt.bytes),
        };
        let mut out = Vec::new();
        self.gather(m, t, &whole, &mut out);
        out
    }

    /// Appends the elements of region `r` of `t`, row-major, to `out`.
    fn gather(&self, m: &Module, t: TensorId, r: &Region, out: &mut Vec<f64>) {
        let span = self.layout.span(m, t, r);
        span.read_rows(self.cells.buf(span.buf), |_, row| {
            out.extend_from_slice(row)
        });
    }
}

/// The splitmix64 finalizer, the simulators' hash.
pub(crate) fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn name_hash(seed: u64, name: &str) -> u64 {
    name.bytes()
        .fold(splitmix(seed), |h, b| splitmix(h ^ u64::from(b)))
}

/// The seeded input value of element `idx` (row-major) of tensor `name`: an integer in −3..=3.
pub fn input_value(seed: u64, name: &str, idx: usize) -> f64 {
    value_at(name_hash(seed, name), idx)
}

fn value_at(name_hash: u64, idx: usize) -> f64 {
    (splitmix(name_hash ^ idx as u64) % 7) as f64 - 3.0
}

/// The garbage physical PSUM cell `idx` starts with: non-zero, not an integer.
fn garbage(seed: u64, idx: usize) -> f64 {
    let h = splitmix(seed.rotate_left(17) ^ idx as u64);
    -1000.5 - (h % 1000) as f64
}

/// Tensors that receive seeded inputs: every DRAM tensor, and every SBUF
/// tensor whose first access in linear program order is a read.
pub(crate) fn input_tensors(m: &Module) -> IdMap<TensorId, bool> {
    let mut seen = IdMap::with_len(m.tensors.len(), false);
    let mut input: IdMap<TensorId, bool> = m.tensors.values().map(|t| t.mem == Mem::Dram).collect();
    for id in m.insts_in_order() {
        let k = &m.inst(id).kind;
        for s in k.srcs() {
            let t = s.tensor;
            if !seen[t] {
                seen[t] = true;
                input[t] |= m.tensors[t].mem == Mem::Sbuf;
            }
        }
        seen[k.dst().tensor] = true;
    }
    input
}

/// Executes `m` in `mode` on inputs seeded by `seed`.
pub fn run(m: &Module, mode: Mode, seed: u64) -> Result<Memory, SimError> {
    let arch = arch::lookup(&m.arch).map_err(|e| SimError::Arch(e.to_string()))?;
    let layout = match mode {
        Mode::Virtual => Layout::virtual_(m),
        Mode::Physical => Layout::physical(m, &arch)?,
    };
    let inputs = input_tensors(m);
    let own = m
        .tensors
        .iter()
        .map(|(i, t)| {
            if layout.in_psum(i) {
                return Vec::new();
            }
            let n = t.partitions as usize * t.elems() as usize;
            if inputs[i] {
                let h = name_hash(seed, &t.name);
                (0..n).map(|j| value_at(h, j)).collect()
            } else {
                vec![0.0; n]
            }
        })
        .collect();
    let psum = (0..layout.psum_cells()).map(|i| garbage(seed, i)).collect();
    let mut sim = Sim {
        m,
        names: InstNames::new(m),
        runs: RunTracker::new(m),
        mem: Memory {
            layout,
            cells: Store { own, psum },
        },
        srcs: Vec::new(),
        values: Vec::new(),
        out: Vec::new(),
    };
    for_each_step(m, |id, env| sim.step(id, env))?;
    Ok(sim.mem)
}

struct Sim<'a> {
    m: &'a Module,
    names: InstNames,
    runs: RunTracker,
    mem: Memory,
    /// Per-instruction buffers, reused: source regions, their values, the result.
    srcs: Vec<(TensorId, Region)>,
    values: Vec<Vec<f64>>,
    out: Vec<f64>,
}

impl Sim<'_> {
    fn region(&self, id: InstId, env: &Env, a: &Access) -> Result<Region, SimError> {
        checked_region(self.m, &self.names, id, env, a).map_err(SimError::Access)
    }

    fn shape_error(&self, id: InstId, env: &Env, what: String) -> SimError {
        SimError::shape(self.m, &self.names, id, env, what)
    }

    fn step(&mut self, id: InstId, env: &Env) -> Result<(), SimError> {
        let m = self.m;
        let kind = &m.inst(id).kind;
        let mut srcs = std::mem::take(&mut self.srcs);
        srcs.clear();
        for a in kind.srcs() {
            srcs.push((a.tensor, self.region(id, env, a)?));
        }
        let dst = kind.dst();
        let dr = self.region(id, env, dst)?;
        let mut values = std::mem::take(&mut self.values);
        values.resize_with(srcs.len(), Vec::new);
        for (v, (t, r)) in values.iter_mut().zip(&srcs) {
            v.clear();
            self.mem.gather(m, *t, r, v);
        }
        for (t, r) in &srcs {
            self.runs.read(m, *t, *r);
        }
        let span = self.mem.layout.span(m, dst.tensor, &dr);
        let n_dst = span.count();
        let mut out = std::mem::take(&mut self.out);
        out.clear();
        let accumulate = match kind {
            InstKind::Matmul(mm) => {
                self.product(id, env, &srcs, &values, dst.tensor, &dr, &mut out)?;
                let run = self.runs.matmul(m, dst.tensor, dr);
                match (mm.flags, self.mem.layout.in_psum(dst.tensor)) {
                    (Flags::Set(fs), true) => {
                        if fs.start {
                            self.zero_banks(dst.tensor, &dr);
                        }
                        true
                    }
                    _ => run.accumulates(),
                }
            }
            InstKind::Memset { value, .. } => {
                self.runs.write(m, dst.tensor, dr);
                out.resize(n_dst, *value);
                false
            }
            InstKind::Copy { .. } | InstKind::Dma { .. } | InstKind::Act { .. } => {
                if let Some(v) = values.iter().find(|v| v.len() != n_dst) {
                    return Err(self.shape_error(
                        id,
                        env,
                        format!(
                            "{} source elements for {} destination elements",
                            v.len(),
                            n_dst
                        ),
                    ));
                }
                self.runs.write(m, dst.tensor, dr);
                // The sum of f64s folds from -0.0, in source order.
                out.resize(n_dst, -0.0);
                for v in &values {
                    for (o, x) in out.iter_mut().zip(v) {
                        *o += x;
                    }
                }
                false
            }
            InstKind::Engine { .. } => {
                self.runs.write(m, dst.tensor, dr);
                let total = values.iter().flatten().fold(-0.0, |acc, x| acc + x);
                out.resize(n_dst, total);
                false
            }
        };
        let len = span.len;
        span.write_rows(self.mem.cells.buf_mut(span.buf), |i, row| {
            let vals = &out[i * len..(i + 1) * len];
            if accumulate {
                for (o, p) in row.iter_mut().zip(vals) {
                    *o += p;
                }
            } else {
                row.copy_from_slice(vals);
            }
        });
        self.srcs = srcs;
        self.values = values;
        self.out = out;
        Ok(())
    }

    /// `Σ_k S[k, m] · M[k, n]` as a row-major `[M, N]` block in `out`.
    #[allow(clippy::too_many_arguments)]
    fn product(
        &self,
        id: InstId,
        env: &Env,
        srcs: &[(TensorId, Region)],
        values: &[Vec<f64>],
        dst: TensorId,
        dr: &Region,
        out: &mut Vec<f64>,
    ) -> Result<(), SimError> {
        let m = self.m;
        let dims = |t: TensorId, r: &Region| {
            let ds = i64::from(m.tensor(t).dtype.size());
            ((r.p1 - r.p0) as usize, ((r.b1 - r.b0) / ds) as usize)
        };
        let (ks, ms) = dims(srcs[0].0, &srcs[0].1);
        let (km, ns) = dims(srcs[1].0, &srcs[1].1);
        let (md, nd) = dims(dst, dr);
        if ks != km || ms != md || ns != nd {
            return Err(self.shape_error(
                id,
                env,
                format!(
                    "matmul shapes disagree: stationary [{ks}, {ms}], moving [{km}, {ns}], destination [{md}, {nd}]"
                ),
            ));
        }
        product(&values[0], &values[1], ks, ms, ns, out);
        Ok(())
    }

    fn zero_banks(&mut self, t: TensorId, r: &Region) {
        if let Some(span) = self.mem.layout.start_span(t, r) {
            span.write_rows(&mut self.mem.cells.psum, |_, row| row.fill(0.0));
        }
    }
}

/// Rows of the register blocks of [`product_in`].
const BLOCK_ROWS: usize = 4;

/// Whether `S^T · M` is exact in f32: every operand an integer and every
/// partial sum at most `k · max|s| · max|m| ≤ 2^24` in magnitude, so f32 and
/// f64 both compute it exactly (and a zero as `+0.0`).
fn exact_in_f32(s: &[f64], mv: &[f64], k: usize) -> bool {
    let bound = |x: &[f64]| {
        x.iter().try_fold(0.0f64, |b, &v| {
            let a = v.abs();
            (a <= 16_777_216.0 && f64::from(a as i32) == a).then_some(b.max(a))
        })
    };
    match (bound(s), bound(mv)) {
        (Some(a), Some(b)) => k as f64 * a * b <= 16_777_216.0,
        _ => false,
    }
}

/// `out = S^T · M` for row-major `s` `[k, m]` and `mv` `[k, n]`: every
/// element summed from 0.0 in increasing `k`, so the result does not depend
/// on the blocking. Computed in f32 when that is exact ([`exact_in_f32`]).
fn product(s: &[f64], mv: &[f64], k: usize, m: usize, n: usize, out: &mut Vec<f64>) {
    if exact_in_f32(s, mv, k) {
        let narrow = |x: &[f64]| x.iter().map(|&v| v as f32).collect::<Vec<f32>>();
        let mut o = Vec::new();
        product_in::<f32, 8>(&narrow(s), &narrow(mv), k, m, n, &mut o);
        out.clear();
        out.extend(o.iter().map(|&v| f64::from(v)));
    } else {
        product_in::<f64, 4>(s, mv, k, m, n, out);
    }
}

/// [`product`] in `T`, in register blocks of `BLOCK_ROWS × BLOCK_COLS`
/// (two SSE registers per row) over operands packed into contiguous panels.
fn product_in<T, const BLOCK_COLS: usize>(
    s: &[T],
    mv: &[T],
    k: usize,
    m: usize,
    n: usize,
    out: &mut Vec<T>,
) where
    T: Copy + Default + std::ops::Add<Output = T> + std::ops::Mul<Output = T>,
{
    out.clear();
    out.resize(m * n, T::default());
    if n == 0 || k == 0 {
        return;
    }
    let (mb, nb) = (m - m % BLOCK_ROWS, n - n % BLOCK_COLS);
    // Panel j holds columns [j·W, j·W + W) of every row, row after row.
    let panels = |x: &[T], w: usize, width: usize| -> Vec<T> {
        let mut p = Vec::with_capacity(x.len());
        for c0 in (0..w - w % width).step_by(width) {
            for row in x.chunks_exact(w) {
                p.extend_from_slice(&row[c0..c0 + width]);
            }
        }
        p
    };
    let (sp, mp) = (panels(s, m, BLOCK_ROWS), panels(mv, n, BLOCK_COLS));
    for (pj, mpan) in mp.chunks_exact(k * BLOCK_COLS).enumerate() {
        let n0 = pj * BLOCK_COLS;
        for (pi, span) in sp.chunks_exact(k * BLOCK_ROWS).enumerate() {
            let m0 = pi * BLOCK_ROWS;
            let mut acc = [[T::default(); BLOCK_COLS]; BLOCK_ROWS];
            for (a, b) in span
                .chunks_exact(BLOCK_ROWS)
                .zip(mpan.chunks_exact(BLOCK_COLS))
            {
                for (row, &x) in acc.iter_mut().zip(a) {
                    for (o, &y) in row.iter_mut().zip(b) {
                        *o = *o + x * y;
                    }
                }
            }
            for (r, row) in acc.iter().enumerate() {
                out[(m0 + r) * n + n0..][..BLOCK_COLS].copy_from_slice(row);
            }
        }
    }
    // The ragged edges: the last columns of the blocked rows, then the last rows.
    for (mi, row) in out.chunks_exact_mut(n).enumerate() {
        let n0 = if mi < mb { nb } else { 0 };
        for kk in 0..k {
            let a = s[kk * m + mi];
            for (o, &y) in row[n0..].iter_mut().zip(&mv[kk * n + n0..(kk + 1) * n]) {
                *o = *o + a * y;
            }
        }
    }
}

/// The SBUF and DRAM tensors a comparison covers: every one the original
/// declares, paired with the result's tensor of that name, which must exist
/// with the same memory, shape and dtype.
pub(crate) fn compared_tensors(
    original: &Module,
    result: &Module,
) -> Result<Vec<(TensorId, TensorId)>, SimError> {
    let names = result.name_index();
    let mut pairs = Vec::new();
    for (i, t) in original.tensors.values().enumerate() {
        if t.mem == Mem::Psum {
            continue;
        }
        let Some(&rid) = names.get(t.name.as_str()) else {
            return Err(SimError::MissingTensor {
                name: t.name.clone(),
                problem: "lacks",
            });
        };
        let rt = result.tensor(rid);
        if (rt.partitions, rt.bytes, rt.dtype, rt.mem) != (t.partitions, t.bytes, t.dtype, t.mem) {
            return Err(SimError::MissingTensor {
                name: t.name.clone(),
                problem: "changes the shape of",
            });
        }
        pairs.push((TensorId::new(i), rid));
    }
    Ok(pairs)
}

/// Runs `original` virtually and `result` physically on the same inputs and
/// compares every SBUF and DRAM tensor the original declares, exactly.
pub(crate) fn compare(original: &Module, result: &Module, seed: u64) -> Result<(), SimError> {
    let want = run(original, Mode::Virtual, seed)?;
    let got = run(result, Mode::Physical, seed)?;
    for (oid, rid) in compared_tensors(original, result)? {
        let t = original.tensor(oid);
        let a = want.tensor(original, oid);
        let b = got.tensor(result, rid);
        let elems = t.elems() as usize;
        if let Some(j) = (0..a.len()).find(|&j| a[j] != b[j]) {
            return Err(SimError::Mismatch {
                tensor: t.name.clone(),
                partition: (j / elems) as u32,
                byte: (j % elems) as u32 * t.dtype.size(),
                expected: Value::Number(a[j]),
                found: Value::Number(b[j]),
            });
        }
    }
    Ok(())
}
