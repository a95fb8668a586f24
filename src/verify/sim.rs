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

use super::exec::{cells, for_each_step, region_fits, BadAccess, Env, InstNames, RunTracker};
use super::layout::{Layout, PlaceError, Slot};
use crate::arch;
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
        expected: f64,
        /// The result's value.
        found: f64,
    },
}

/// The final contents of every tensor after a run.
pub struct Memory {
    layout: Layout,
    own: Vec<Vec<f64>>,
    psum: Vec<f64>,
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
        self.gather(m, t, &whole)
    }

    fn get(&self, s: Slot) -> f64 {
        match s {
            Slot::Own(t, i) => self.own[t.index()][i],
            Slot::Psum(i) => self.psum[i],
        }
    }

    fn set(&mut self, s: Slot, v: f64) {
        match s {
            Slot::Own(t, i) => self.own[t.index()][i] = v,
            Slot::Psum(i) => self.psum[i] = v,
        }
    }

    fn gather(&self, m: &Module, t: TensorId, r: &Region) -> Vec<f64> {
        cells(m.tensor(t), r)
            .map(|(p, e)| self.get(self.layout.slot(t, p, e)))
            .collect()
    }
}

fn splitmix(mut z: u64) -> u64 {
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
pub fn input_tensors(m: &Module) -> Vec<bool> {
    let mut seen = vec![false; m.tensors.len()];
    let mut input: Vec<bool> = m.tensors.iter().map(|t| t.mem == Mem::Dram).collect();
    for id in m.insts_in_order() {
        let k = &m.inst(id).kind;
        for s in k.srcs() {
            let i = s.tensor.index();
            if !seen[i] {
                seen[i] = true;
                input[i] |= m.tensors[i].mem == Mem::Sbuf;
            }
        }
        seen[k.dst().tensor.index()] = true;
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
        .enumerate()
        .map(|(i, t)| {
            if layout.in_psum(TensorId::new(i)) {
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
        mem: Memory { layout, own, psum },
    };
    for_each_step(m, |id, env| sim.step(id, env))?;
    Ok(sim.mem)
}

struct Sim<'a> {
    m: &'a Module,
    names: InstNames,
    runs: RunTracker,
    mem: Memory,
}

impl Sim<'_> {
    fn region(&self, id: InstId, env: &Env, a: &Access) -> Result<Region, SimError> {
        let r = env.region(a);
        let t = self.m.tensor(a.tensor);
        if region_fits(t, &r) {
            Ok(r)
        } else {
            Err(SimError::Access(BadAccess {
                inst: self.names.instance(self.m, id, env),
                tensor: t.name.clone(),
                region: r,
            }))
        }
    }

    fn shape_error(&self, id: InstId, env: &Env, what: String) -> SimError {
        SimError::Shape {
            inst: self.names.instance(self.m, id, env),
            what,
        }
    }

    fn step(&mut self, id: InstId, env: &Env) -> Result<(), SimError> {
        let m = self.m;
        let kind = &m.inst(id).kind;
        let srcs = kind
            .srcs()
            .into_iter()
            .map(|a| Ok((a.tensor, self.region(id, env, a)?)))
            .collect::<Result<Vec<_>, SimError>>()?;
        let dst = kind.dst();
        let dr = self.region(id, env, dst)?;
        let values: Vec<Vec<f64>> = srcs
            .iter()
            .map(|(t, r)| self.mem.gather(m, *t, r))
            .collect();
        for (t, r) in &srcs {
            self.runs.read(m, *t, *r);
        }
        let n_dst = cells(m.tensor(dst.tensor), &dr).count();
        let out = match kind {
            InstKind::Matmul(mm) => {
                let product = self.product(id, env, &srcs, &values, dst.tensor, &dr)?;
                let run = self.runs.matmul(m, dst.tensor, dr);
                let accumulate = match (mm.flags, self.mem.layout.in_psum(dst.tensor)) {
                    (Flags::Set(fs), true) => {
                        if fs.start {
                            self.zero_banks(dst.tensor, &dr);
                        }
                        true
                    }
                    _ => run.accumulates(),
                };
                if accumulate {
                    let old = self.mem.gather(m, dst.tensor, &dr);
                    product.iter().zip(old).map(|(p, o)| o + p).collect()
                } else {
                    product
                }
            }
            InstKind::Memset { value, .. } => {
                self.runs.write(m, dst.tensor, dr);
                vec![*value; n_dst]
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
                (0..n_dst)
                    .map(|i| values.iter().map(|v| v[i]).sum())
                    .collect()
            }
        };
        let layout = &self.mem.layout;
        let slots: Vec<Slot> = cells(m.tensor(dst.tensor), &dr)
            .map(|(p, e)| layout.slot(dst.tensor, p, e))
            .collect();
        for (s, v) in slots.into_iter().zip(out) {
            self.mem.set(s, v);
        }
        Ok(())
    }

    /// `Σ_k S[k, m] · M[k, n]` as a row-major `[M, N]` block.
    fn product(
        &self,
        id: InstId,
        env: &Env,
        srcs: &[(TensorId, Region)],
        values: &[Vec<f64>],
        dst: TensorId,
        dr: &Region,
    ) -> Result<Vec<f64>, SimError> {
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
        let (s, mv) = (&values[0], &values[1]);
        let mut out = vec![0.0; md * nd];
        for (mi, row) in out.chunks_mut(nd.max(1)).enumerate().take(md) {
            for k in 0..ks {
                let a = s[k * ms + mi];
                for (o, b) in row.iter_mut().zip(&mv[k * ns..(k + 1) * ns]) {
                    *o += a * b;
                }
            }
        }
        Ok(out)
    }

    fn zero_banks(&mut self, t: TensorId, r: &Region) {
        let cells =
            self.mem
                .layout
                .start_cells(t, r.p0 as u32, r.p1 as u32, r.b0 as u32, r.b1 as u32);
        for c in cells {
            self.mem.psum[c] = 0.0;
        }
    }
}

/// Runs `original` virtually and `result` physically on the same inputs and
/// compares every SBUF and DRAM tensor the original declares, exactly.
pub fn compare(original: &Module, result: &Module, seed: u64) -> Result<(), SimError> {
    let want = run(original, Mode::Virtual, seed)?;
    let got = run(result, Mode::Physical, seed)?;
    for (i, t) in original.tensors.iter().enumerate() {
        if t.mem == Mem::Psum {
            continue;
        }
        let Some(rid) = result.tensor_by_name(&t.name) else {
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
        let a = want.tensor(original, TensorId::new(i));
        let b = got.tensor(result, rid);
        let elems = t.elems() as usize;
        if let Some(j) = (0..a.len()).find(|&j| a[j] != b[j]) {
            return Err(SimError::Mismatch {
                tensor: t.name.clone(),
                partition: (j / elems) as u32,
                byte: (j % elems) as u32 * t.dtype.size(),
                expected: a[j],
                found: b[j],
            });
        }
    }
    Ok(())
}
