//! The engine model (SPEC §11, psum's own): an estimate of how long a
//! program runs on one NeuronCore, to compare placements of the same
//! program, not to predict a profile.
//!
//! Every instruction runs on one engine ([`Engine`]): matmuls on the Tensor
//! Engine, `act` with one source on the Scalar Engine, `copy`, `engine`,
//! `act` with several sources and `memset` of PSUM on the Vector Engine,
//! `memset` of SBUF on the GpSimd Engine, `dma` on the DMA queues. Each
//! engine runs its instructions in program order; an instruction starts
//! when its engine is free, when every earlier instruction it depends on
//! has finished — read after write, write after read and write after write
//! on a common PSUM bank, or on common bytes of an SBUF or DRAM tensor —
//! and, for a Vector or Scalar instruction that touches PSUM, when the
//! other of the two has left PSUM (they cannot access it in parallel). It
//! lasts what [`duration`] gives, from the public numbers in [`Clocks`].
//! Time is counted in cycles of the Scalar Engine's clock.

use crate::arch::{self, ArchError, Generation, PSUM_BANK_SIZE};
use crate::entity::IdMap;
use crate::ir::{Access, DType, InstKind, Mem, Module, Region, Stmt, TensorId, VarId};
use serde::Serialize;

/// The engines of a NeuronCore an instruction can run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Engine {
    /// The PE array: matmuls and PE transposes.
    Tensor,
    /// Reductions, element-wise work on several tiles, copies.
    Vector,
    /// Activations: element-wise work on one tile.
    Scalar,
    /// The general-purpose engine (no PSUM access).
    GpSimd,
    /// The DMA queues (DRAM and SBUF).
    Dma,
}

impl Engine {
    /// Every engine, in report order.
    pub const ALL: [Engine; 5] = [
        Engine::Tensor,
        Engine::Vector,
        Engine::Scalar,
        Engine::GpSimd,
        Engine::Dma,
    ];

    /// Its key in the report (`tensor`, `vector`, …).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Engine::Tensor => "tensor",
            Engine::Vector => "vector",
            Engine::Scalar => "scalar",
            Engine::GpSimd => "gpsimd",
            Engine::Dma => "dma",
        }
    }
}

/// The public numbers of one generation (SPEC §11 cites each one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clocks {
    /// Tensor Engine clock, MHz.
    pub tensor_mhz: u64,
    /// Vector Engine clock, MHz.
    pub vector_mhz: u64,
    /// Scalar Engine clock, MHz: the unit of the estimate.
    pub scalar_mhz: u64,
    /// GpSimd Engine clock, MHz.
    pub gpsimd_mhz: u64,
    /// Bandwidth of one DMA engine, MB/s.
    pub dma_mb_per_s: u64,
    /// DMA engines one transfer is spread over.
    pub dma_engines: u64,
}

/// Tensor Engine cycles a matmul takes at least (`MM_INIT_LATENCY`).
pub(crate) const MM_INIT_LATENCY: u64 = 64;
/// How much longer a matmul of FP32 inputs takes.
pub const FP32_MATMUL_FACTOR: u64 = 4;
/// Engine cycles to start an access to SBUF or PSUM.
pub const ACCESS_OVERHEAD: u64 = 60;
/// A DMA transfer this large reaches the bandwidth's ideal (bytes).
pub const IDEAL_TRANSFER: u64 = 32 * 1024;

/// The numbers of generation `g`: NeuronCore-v2 (Trainium, Inferentia2)
/// for gen1 and gen2, NeuronCore-v3 (Trainium2) for gen3, NeuronCore-v4
/// (Trainium3) for gen4.
pub(crate) fn clocks(g: Generation) -> Clocks {
    match g {
        Generation::Gen1 | Generation::Gen2 => Clocks {
            tensor_mhz: 2800,
            vector_mhz: 1120,
            scalar_mhz: 1400,
            gpsimd_mhz: 1400,
            dma_mb_per_s: 27_200,
            dma_engines: 16,
        },
        Generation::Gen3 => Clocks {
            tensor_mhz: 2400,
            vector_mhz: 960,
            scalar_mhz: 1200,
            gpsimd_mhz: 1200,
            dma_mb_per_s: 27_200,
            dma_engines: 16,
        },
        Generation::Gen4 => Clocks {
            tensor_mhz: 2400,
            vector_mhz: 1200,
            scalar_mhz: 1200,
            gpsimd_mhz: 1200,
            dma_mb_per_s: 38_400,
            dma_engines: 16,
        },
    }
}

impl Clocks {
    /// `cycles` of a clock of `mhz` in Scalar Engine cycles, rounded up.
    fn in_scalar_cycles(&self, cycles: u64, mhz: u64) -> u64 {
        (cycles * self.scalar_mhz).div_ceil(mhz)
    }

    /// Fixed cost of a DMA transfer, Scalar Engine cycles: a ninth of the
    /// time one DMA engine takes over [`IDEAL_TRANSFER`] bytes, so that a
    /// transfer of that size runs at 90% of the bandwidth.
    pub fn dma_fixed(&self) -> u64 {
        (IDEAL_TRANSFER * self.scalar_mhz).div_ceil(9 * self.dma_mb_per_s)
    }
}

/// The engine `kind` runs on, in `m`.
pub(crate) fn engine_of(m: &Module, kind: &InstKind) -> Engine {
    match kind {
        InstKind::Matmul(_) => Engine::Tensor,
        InstKind::Act { srcs, .. } if srcs.len() == 1 => Engine::Scalar,
        InstKind::Memset { dst, .. } if m.tensor(dst.tensor).mem != Mem::Psum => Engine::GpSimd,
        InstKind::Dma { .. } => Engine::Dma,
        _ => Engine::Vector,
    }
}

/// Elements per partition of region `r` of tensor `t` (the free size).
fn free_size(m: &Module, t: TensorId, r: &Region) -> u64 {
    let size = u64::from(m.tensor(t).dtype.size().max(1));
    (r.b1 - r.b0).max(0) as u64 / size
}

/// How long instruction `kind` lasts once started, in Scalar Engine
/// cycles, with its accesses evaluated to `regions` (destination first,
/// then the sources in operand order):
/// - Tensor: `max(N, MM_INIT_LATENCY)` Tensor Engine cycles, N the moving
///   tensor's free size, times [`FP32_MATMUL_FACTOR`] for FP32 inputs
///   (not TF32, which runs at the BF16 rate);
/// - Vector, Scalar, GpSimd: [`ACCESS_OVERHEAD`] plus the free sizes of its
///   sources (of its destination for a memset), in the engine's cycles;
/// - DMA: [`Clocks::dma_fixed`] plus the bytes moved over the bandwidth
///   of all DMA engines.
pub fn duration(m: &Module, c: &Clocks, kind: &InstKind, regions: &[Region]) -> u64 {
    let engine = engine_of(m, kind);
    match kind {
        InstKind::Matmul(mm) => {
            let n = free_size(m, mm.moving.tensor, &regions[2]);
            let factor = if m.tensor(mm.moving.tensor).dtype == DType::F32 {
                FP32_MATMUL_FACTOR
            } else {
                1
            };
            c.in_scalar_cycles(n.max(MM_INIT_LATENCY) * factor, c.tensor_mhz)
        }
        InstKind::Dma { .. } => {
            let r = &regions[0];
            let bytes = ((r.p1 - r.p0).max(0) * (r.b1 - r.b0).max(0)) as u64;
            c.dma_fixed() + (bytes * c.scalar_mhz).div_ceil(c.dma_engines * c.dma_mb_per_s)
        }
        _ => {
            let accesses = kind.srcs().zip(&regions[1..]);
            let mut n: u64 = accesses.map(|(a, r)| free_size(m, a.tensor, r)).sum();
            if let InstKind::Memset { dst, .. } = kind {
                n = free_size(m, dst.tensor, &regions[0]);
            }
            let mhz = match engine {
                Engine::Scalar => c.scalar_mhz,
                Engine::GpSimd => c.gpsimd_mhz,
                _ => c.vector_mhz,
            };
            c.in_scalar_cycles(ACCESS_OVERHEAD + n, mhz)
        }
    }
}

/// What the model estimates for a program.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Estimate {
    /// When the last instruction finishes, in Scalar Engine cycles.
    pub cycles: u64,
    /// Time each engine spends running instructions, in [`Engine::ALL`] order.
    pub busy: [u64; 5],
}

impl Serialize for Estimate {
    /// `{estimated_cycles, engine_busy_cycles: {tensor, vector, …}}`.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let busy: serde_json::Map<String, serde_json::Value> = Engine::ALL
            .iter()
            .zip(self.busy)
            .map(|(e, b)| (e.name().to_string(), b.into()))
            .collect();
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("estimated_cycles", &self.cycles)?;
        map.serialize_entry("engine_busy_cycles", &busy)?;
        map.end()
    }
}

/// The accesses to one SBUF or DRAM tensor that later ones may depend on.
#[derive(Default)]
struct Records {
    /// `(region, finish, write)`; reads of one region merge.
    list: Vec<(Region, u64, bool)>,
}

/// Records kept per tensor before they merge into one over the whole tensor.
const MAX_RECORDS: usize = 64;

impl Records {
    /// The latest finish among the accesses `r` must wait for.
    fn wait(&self, r: &Region, write: bool) -> u64 {
        (self.list.iter())
            .filter(|(q, _, w)| (write || *w) && q.overlaps(r))
            .map(|&(_, f, _)| f)
            .max()
            .unwrap_or(0)
    }

    /// Notes an access of `r` finishing at `finish`.
    fn note(&mut self, r: Region, finish: u64, write: bool) {
        if write {
            self.list.retain(|(q, _, _)| !r.contains(q));
        } else if let Some(e) = (self.list.iter_mut()).find(|(q, _, w)| !*w && *q == r) {
            e.1 = e.1.max(finish);
            return;
        }
        self.list.push((r, finish, write));
        if self.list.len() > MAX_RECORDS {
            let (mut hull, mut last) = (r, 0);
            for (q, f, _) in &self.list {
                hull = Region {
                    p0: hull.p0.min(q.p0),
                    p1: hull.p1.max(q.p1),
                    b0: hull.b0.min(q.b0),
                    b1: hull.b1.max(q.b1),
                };
                last = last.max(*f);
            }
            self.list = vec![(hull, last, true)];
        }
    }
}

/// The running state of [`estimate`].
struct Machine<'m> {
    m: &'m Module,
    clocks: Clocks,
    /// Bank of each PSUM tensor (`None`: the tensor is its own storage).
    banks: IdMap<TensorId, Option<u32>>,
    engine_free: [u64; 5],
    busy: [u64; 5],
    /// When the Vector or Scalar Engine leaves PSUM.
    psum_port: u64,
    /// Per PSUM bank: last write's finish, latest read since.
    bank_write: Vec<u64>,
    bank_read: Vec<u64>,
    /// Per SBUF or DRAM tensor (and unplaced PSUM tensor).
    records: IdMap<TensorId, Records>,
    env: IdMap<VarId, i64>,
    end: u64,
}

impl Machine<'_> {
    /// The PSUM banks `r` of placed tensor `t` touches.
    fn banks_of(&self, t: TensorId, r: &Region) -> Option<std::ops::Range<usize>> {
        let base = self.banks[t]? as i64;
        let bank = i64::from(PSUM_BANK_SIZE);
        let lo = base + r.b0.max(0) / bank;
        let hi = (base + (r.b1.max(1) - 1) / bank + 1).min(self.bank_write.len() as i64);
        Some(lo as usize..(hi as usize).max(lo as usize))
    }

    fn run(&mut self, body: &[Stmt]) {
        for s in body {
            match *s {
                Stmt::Inst(i) => {
                    let m = self.m;
                    self.step(&m.inst(i).kind)
                }
                Stmt::Loop(l) => {
                    let m = self.m;
                    let lp = m.loop_(l);
                    for v in lp.lo..lp.hi {
                        self.env[lp.var] = v;
                        self.run(&lp.body);
                    }
                }
            }
        }
    }

    fn step(&mut self, kind: &InstKind) {
        let env = &self.env;
        let region = |a: &Access| a.region(|v| env[v]);
        let accesses: Vec<(&Access, Region, bool)> = std::iter::once(kind.dst())
            .map(|a| (a, region(a), true))
            .chain(kind.srcs().map(|a| (a, region(a), false)))
            .collect();
        let regions: Vec<Region> = accesses.iter().map(|a| a.1).collect();
        let engine = engine_of(self.m, kind);
        let dur = duration(self.m, &self.clocks, kind, &regions);
        let mut start = self.engine_free[engine as usize];
        let mut touches_psum = false;
        for &(a, r, write) in &accesses {
            match self.banks_of(a.tensor, &r) {
                Some(banks) => {
                    touches_psum = true;
                    for b in banks.clone() {
                        start = start.max(self.bank_write[b]);
                        if write {
                            start = start.max(self.bank_read[b]);
                        }
                    }
                }
                None => start = start.max(self.records[a.tensor].wait(&r, write)),
            }
        }
        let ported = touches_psum && matches!(engine, Engine::Vector | Engine::Scalar);
        if ported {
            start = start.max(self.psum_port);
        }
        let finish = start + dur;
        for &(a, r, write) in accesses.iter().rev() {
            match self.banks_of(a.tensor, &r) {
                Some(banks) => {
                    for b in banks {
                        if write {
                            self.bank_write[b] = finish;
                            self.bank_read[b] = 0;
                        } else {
                            self.bank_read[b] = self.bank_read[b].max(finish);
                        }
                    }
                }
                None => self.records[a.tensor].note(r, finish, write),
            }
        }
        if ported {
            self.psum_port = finish;
        }
        self.engine_free[engine as usize] = finish;
        self.busy[engine as usize] += dur;
        self.end = self.end.max(finish);
    }
}

/// Estimates the running time of `m` (loops run as they would, every
/// iteration), its PSUM tensors in their banks; a PSUM tensor without a
/// bank is its own storage. Errors: an unknown arch.
///
/// ```
/// let src = "arch trn1
///
/// psum a [128, 2048]
/// psum b [128, 2048]
/// sbuf w [128, 256] bf16
/// sbuf x [128, 1024] bf16
/// sbuf y [128, 2048]
///
/// block main {
///   matmul a <- w, x
///   act y <- a
///   matmul b <- w, x
///   act y <- b
/// }
/// ";
/// let m = psum::text::parse(src)?.module;
/// let e = psum::estimate::estimate(&m)?;
/// // Two matmuls on the Tensor Engine, two activations on the Scalar Engine.
/// assert_eq!(e.cycles, 1400);
/// assert_eq!(e.busy, [512, 0, 1144, 0, 0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn estimate(m: &Module) -> Result<Estimate, ArchError> {
    let arch = arch::lookup(&m.arch)?;
    let banks: IdMap<TensorId, Option<u32>> = (m.tensors.values())
        .map(|t| if t.mem == Mem::Psum { t.bank } else { None })
        .collect();
    let num_banks = banks
        .values()
        .zip(&m.tensors)
        .filter_map(|(b, t)| Some(b.as_ref()? + arch.bank_num(u64::from(t.bytes))))
        .max()
        .unwrap_or(0)
        .max(arch.num_banks()) as usize;
    let mut machine = Machine {
        m,
        clocks: clocks(arch.generation),
        banks,
        engine_free: [0; 5],
        busy: [0; 5],
        psum_port: 0,
        bank_write: vec![0; num_banks],
        bank_read: vec![0; num_banks],
        records: (0..m.tensors.len()).map(|_| Records::default()).collect(),
        env: IdMap::with_len(m.vars.len(), 0),
        end: 0,
    };
    for b in &m.blocks {
        machine.run(&b.body);
    }
    Ok(Estimate {
        cycles: machine.end,
        busy: machine.busy,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(src: &str) -> Estimate {
        estimate(&crate::text::parse(src).unwrap().module).unwrap()
    }

    /// trn1: a bf16 matmul of N = 512 takes 512 Tensor cycles = 256 Scalar
    /// cycles; draining the bank with `act` takes 60 + 512 Scalar cycles; a
    /// copy of it on the Vector Engine (60 + 512) · 1400 / 1120 = 715.
    const TWO: &str = "arch trn1\npsum a [128, 2048] bank=0\npsum b [128, 2048] bank=B\n\
        sbuf w [128, 256] bf16\nsbuf x [128, 1024] bf16\nsbuf y [128, 2048]\nsbuf z [128, 2048]\n\
        block main {\n  matmul a <- w, x flags=start|stop\n  act y <- a\n  \
        matmul b <- w, x flags=start|stop\n  copy z <- b\n}\n";

    #[test]
    fn a_matmul_into_the_bank_it_drains_waits_for_the_drain() {
        // Same bank: the second matmul waits for `act` (write after read),
        // the copy for the matmul: 256 + 572 + 256 + 715.
        let same = est(&TWO.replace('B', "0"));
        assert_eq!(same.cycles, 256 + 572 + 256 + 715);
        assert_eq!(same.busy, [512, 715, 572, 0, 0]);
        // Another bank: the second matmul follows the first at once; the
        // copy waits for it (512) and for `act` to leave PSUM (828).
        let apart = est(&TWO.replace('B', "1"));
        assert_eq!(apart.cycles, 828 + 715);
        assert_eq!(apart.busy, same.busy);
    }

    #[test]
    fn dma_and_fp32_matmuls_follow_the_table() {
        // 128 × 2048 bytes over 16 engines of 27.2 GB/s at 1.4 GHz:
        // ceil(262144 · 1400 / 435200) = 844, plus the fixed 188.
        assert_eq!(clocks(Generation::Gen2).dma_fixed(), 188);
        let src = "arch trn1\npsum a [128, 2048] bank=3\nsbuf w [128, 512]\nsbuf x [128, 2048]\n\
            dram x_in [128, 2048]\nsbuf y [128, 2048]\nblock main {\n  dma x <- x_in\n  \
            matmul a <- w, x flags=start|stop\n  act y <- a\n}\n";
        // fp32 moving of N = 512: 4 · 512 Tensor cycles = 1024.
        let e = est(src);
        assert_eq!(e.cycles, 1032 + 1024 + 572);
        assert_eq!(e.busy, [1024, 0, 572, 0, 1032]);
    }

    #[test]
    fn loops_run_every_iteration_and_sbuf_slices_are_apart() {
        // Four matmuls accumulate into one bank (write after write), each
        // N = 128 bf16 → 128 Tensor cycles = 64; the memset of an SBUF
        // tile runs on GpSimd beside them: 60 + 512 cycles.
        let src = "arch trn1\npsum a [128, 512] bank=0\nsbuf w [128, 256] bf16\n\
            sbuf x [128, 1024] bf16\nsbuf y [128, 512]\nsbuf z [128, 2048]\nblock main {\n  \
            loop k 0..4 {\n    matmul a <- w, x[0:128, k*256:k*256+256]\n  }\n  memset z = 0\n  \
            act y <- a\n}\n";
        let e = est(src);
        assert_eq!(e.busy, [256, 0, 60 + 128, 572, 0]);
        assert_eq!(e.cycles, 572);
    }
}
