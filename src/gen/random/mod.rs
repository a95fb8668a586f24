//! Random valid programs (SPEC §7): the one generator behind the `random`
//! workload (`psum gen random`, and through it the benchmark programs of
//! [`super::scaling`]), the property tests and the fuzz targets.
//!
//! [`program`] is deterministic in its seed and draws from [`Rng`]. Its core
//! is the `random` workload: PSUM tensors `p0`, `p1`, … written in a
//! straight line, each by one or two accumulating matmuls per bank; before
//! each tensor is written, reads of random live tensors are issued until
//! about [`RandomConfig::pressure`] banks are live; a read is an
//! `act sinkS <- sinkS, pI, …` that sums tensors of one size into an SBUF
//! sink, and the sinks are stored to DRAM at the end, so every read reaches
//! the output. Time and memory are linear in the number of tensors.
//!
//! Every other feature is a knob of [`RandomConfig`] that draws from the PRNG
//! only when it is on, so with all of them off the program is exactly the
//! workload's: fresh operand slices, richer ways to write a life (whole or
//! per-bank chains, column halves, column tiles in the PE array, affine
//! per-iteration slices, memset or bias-copy inits, sub-bank and
//! partial-partition tensors), the writes of two tensors interleaved,
//! second lives whose first write covers the whole tensor (the memloc split
//! of SPEC §3.2), loop-carried values, loops of short-lived tensors, reads in
//! loops, several blocks, and for the text round trip (SPEC §2.5) labels,
//! `after=` edges, explicit `flags=`/`zr=`, `pos=` rows, the matmul kinds,
//! dtypes, shifted loop ranges and `bank=`/`addr=` attributes.
//!
//! Every program validates and reads only PSUM regions it wrote. With the
//! knobs of [`RandomConfig::rich`] every matmul reads a fresh operand slice
//! (while the operand pools fit SBUF), so no two matmuls share operands and
//! the simulator's value comparison is meaningful, and `compile` verifies the
//! program or refuses it with an allocation error. The `syntax` knob writes
//! flags and kinds at random, so its programs validate and round-trip but
//! need not compute what the flags say.

mod live;
mod operands;
mod reads;
mod shapes;
mod syntax;
mod writes;

pub use crate::alloc::support::rng::Rng;

use super::build::{in_range, Builder, GenError};
use crate::arch;
use crate::entity::IdMap;
use crate::ir::{Access, Affine, Inst, InstKind, Module, VarId};
use live::Reads;
use operands::Operands;
use shapes::{Psum, Unit, ACT_BANKS, BANK};

/// One architecture per generation, as [`Arches::Generations`] picks them.
pub const ARCHES: [&str; 4] = ["inf1", "trn1", "gen3", "core_v4"];

/// Loop variable names by nesting depth.
const LOOP_NAMES: [&str; 4] = ["k", "j", "i", "h"];

/// Which architecture a program targets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Arches {
    /// This codename.
    Fixed(String),
    /// One of [`ARCHES`] (one per generation), drawn per seed.
    Generations,
    /// One of every codename ([`arch::CODENAMES`]), drawn per seed.
    Codenames,
}

impl Arches {
    fn pick(&self, rng: &mut Rng) -> String {
        match self {
            Arches::Fixed(a) => a.clone(),
            Arches::Generations => rng.pick(&ARCHES).to_string(),
            Arches::Codenames => rng.pick(&arch::CODENAMES).to_string(),
        }
    }
}

/// Most PSUM tensors [`program`] makes: the program is built in memory
/// (up to 2.5 KB a tensor with every feature on), so a million stays within
/// a few GB.
pub const MAX_TENSORS: u32 = 1_000_000;

/// Knobs of [`program`]. [`Default`] is the `random` workload's defaults
/// with every feature off.
#[derive(Clone, Debug, PartialEq)]
pub struct RandomConfig {
    /// The architecture (default `trn1`).
    pub arch: Arches,
    /// Number of fresh PSUM tensors (1..=[`MAX_TENSORS`]; default 24).
    pub tensors: u32,
    /// Target average number of live banks (default `None`: 1.5 × the bank
    /// count).
    pub pressure: Option<f64>,
    /// Largest tensor in banks, capped at the bank count and 4 (default 1);
    /// sizes are uniform in `1..=max_banks`.
    pub max_banks: u32,
    /// Most banks one read `act` batches, at most 4 (default 4); a larger
    /// tensor is read alone.
    pub read_banks: u32,
    /// Accumulation chains may be loops: the core's two-matmul chains, and
    /// with `writes` longer chains and affine slices (default false).
    pub loops: bool,
    /// Matmul operands are fresh slices of bump-allocated pools `wN`, `xN`
    /// instead of random slices of two shared tensors `w`, `x` (default false).
    pub fresh_operands: bool,
    /// Lives are written the rich ways of the module doc, and tensors come in
    /// sub-bank and partial-partition shapes (default false).
    pub writes: bool,
    /// Longest accumulation chain of `writes`, at most 4 (default 4).
    pub max_chain: u32,
    /// The writes of two tensors may interleave instruction by instruction
    /// (default false).
    pub interleave: bool,
    /// A tensor read to the end may be written again, whole (default false).
    pub second_lives: bool,
    /// A tensor may be initialized before a loop and rewritten in it, read
    /// at the top of the body (default false).
    pub carried: bool,
    /// A tensor may live inside one loop (maybe nesting its accumulation
    /// loop), and reads may be issued in loops (default false).
    pub local_loops: bool,
    /// The program may be split into several blocks (default false).
    pub blocks: bool,
    /// Text-format coverage: labels, `after=`, explicit flags and `zr`,
    /// `pos=` rows, every matmul kind, operand dtypes, shifted loop ranges,
    /// `bank=`/`addr=` attributes (default false).
    pub syntax: bool,
}

impl Default for RandomConfig {
    fn default() -> Self {
        RandomConfig {
            arch: Arches::Fixed("trn1".into()),
            tensors: 24,
            pressure: None,
            max_banks: 1,
            read_banks: ACT_BANKS,
            loops: false,
            fresh_operands: false,
            writes: false,
            max_chain: 4,
            interleave: false,
            second_lives: false,
            carried: false,
            local_loops: false,
            blocks: false,
            syntax: false,
        }
    }
}

impl RandomConfig {
    /// Every feature that keeps the compile-and-verify property, on small
    /// programs of every generation: 10 tensors of 1–3 banks, loops, fresh
    /// operands, rich writes, interleaving, second lives, loop-carried
    /// values, local loops and blocks.
    pub fn rich() -> Self {
        RandomConfig {
            arch: Arches::Generations,
            tensors: 10,
            max_banks: 3,
            loops: true,
            fresh_operands: true,
            writes: true,
            interleave: true,
            second_lives: true,
            carried: true,
            local_loops: true,
            blocks: true,
            ..RandomConfig::default()
        }
    }

    /// [`RandomConfig::rich`] with `syntax` and every codename: the programs
    /// of the text round-trip tests.
    pub fn syntax() -> Self {
        RandomConfig {
            arch: Arches::Codenames,
            syntax: true,
            ..RandomConfig::rich()
        }
    }
}

/// A random valid program (see the module doc), deterministic in `seed`.
///
/// ```
/// use psum::gen::random::{program, RandomConfig};
///
/// let cfg = RandomConfig::default();
/// let m = program(7, &cfg)?;
/// psum::validate::validate(&m)?;
/// // The same seed gives the same program.
/// assert_eq!(psum::text::print(&program(7, &cfg)?), psum::text::print(&m));
/// assert_eq!(m.tensors.len(), 30);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn program(seed: u64, cfg: &RandomConfig) -> Result<Module, GenError> {
    let mut rng = Rng::new(seed);
    let b = Builder::new(&cfg.arch.pick(&mut rng))?;
    let banks = b.arch.num_banks();
    let pressure = cfg.pressure.unwrap_or(1.5 * f64::from(banks));
    if !(pressure.is_finite() && pressure > 0.0) {
        return Err(GenError::BadPressure(pressure));
    }
    let n = in_range(
        "tensors",
        cfg.tensors,
        1,
        MAX_TENSORS,
        "a program needs a PSUM tensor, and is built in memory, up to 2.5 KB a tensor",
    )?;
    let g = Gen {
        cfg,
        rng,
        mt: b.m_tile(),
        max_banks: cfg.max_banks.clamp(1, banks.min(ACT_BANKS)),
        b,
        operands: Operands::default(),
        reads: Reads::default(),
        consumed: Vec::new(),
        labels: Vec::new(),
        blocks: 0,
    };
    g.run(n, pressure)
}

/// The printed text of [`program`].
pub fn program_text(seed: u64, cfg: &RandomConfig) -> Result<String, GenError> {
    program(seed, cfg).map(|m| crate::text::print(&m))
}

struct Gen<'c> {
    cfg: &'c RandomConfig,
    rng: Rng,
    b: Builder,
    /// The M tile: PSUM partitions and PE columns a matmul output may use.
    mt: u32,
    max_banks: u32,
    operands: Operands,
    reads: Reads,
    /// Tensors read to the end, waiting for a second life.
    consumed: Vec<Psum>,
    /// Labels given so far (`syntax`).
    labels: Vec<String>,
    /// Blocks ended so far.
    blocks: u32,
}

impl Gen<'_> {
    fn run(mut self, n: u32, pressure: f64) -> Result<Module, GenError> {
        let cfg = self.cfg;
        let mb = self.max_banks as usize;
        self.b.module.tensors.reserve(n as usize + 2 * mb + 4);
        self.b.module.insts.reserve(n as usize * 5 / 2);
        let mut psum = Vec::with_capacity(n as usize);
        for i in 0..n {
            let banks = 1 + self.rng.below(self.max_banks.into()) as u32;
            let (parts, bytes) = if cfg.writes {
                self.shape(banks)
            } else {
                (self.mt, banks * BANK)
            };
            let tensor = self.b.psum(format!("p{i}"), parts, bytes.into())?;
            psum.push(Psum {
                tensor,
                parts,
                bytes,
                banks,
                need: self.b.arch.aligned_bank_num(banks),
                life: 0,
            });
        }
        // The sinks: one per tensor size, 512 and 1024 bytes with `writes`.
        let sizes = self.max_banks * (self.max_banks + 1) / 2;
        let sinks = BANK * sizes + if cfg.writes { 512 + 1024 } else { 0 };
        let inputs = self
            .operands
            .declare(&mut self.b, cfg.fresh_operands, cfg.syntax, sinks)?;
        if !cfg.writes {
            for s in 1..=self.max_banks {
                self.reads.sink(&mut self.b, self.mt, s * BANK, true)?;
            }
        }
        let pairs = self.b.dram_inputs(&inputs)?;
        self.reads.declare_outs(&mut self.b)?;
        self.b.load_inputs(&pairs);

        let floor = pressure.floor();
        let mut next = 0;
        while next < psum.len() {
            let first = if cfg.second_lives && !self.consumed.is_empty() && self.rng.chance(1, 6) {
                let i = self.rng.index(self.consumed.len());
                self.consumed.swap_remove(i)
            } else {
                next += 1;
                psum[next - 1]
            };
            let partner =
                (cfg.interleave && next < psum.len() && self.rng.chance(1, 3)).then(|| {
                    next += 1;
                    psum[next - 1]
                });
            let need = first.need + partner.map_or(0, |p| p.need);
            let target = floor as u32 + u32::from(self.rng.unit() < pressure - floor);
            while !self.reads.none_live() && 2 * self.reads.live_banks + need > 2 * target {
                self.read_one()?;
            }
            self.flush();
            if cfg.blocks && self.rng.chance(1, 2 * u64::from(n)) {
                let name = self.block_name();
                self.b.end_block(name);
                self.blocks += 1;
            }
            self.define(first, partner)?;
        }
        while !self.reads.none_live() {
            self.read_one()?;
        }
        self.flush();
        debug_assert_eq!(self.reads.live_banks, 0);
        for (sink, out) in self.reads.stores() {
            let (dst, src) = (self.b.whole(out), self.b.whole(sink));
            self.emit(InstKind::Dma { dst, src });
        }
        if cfg.syntax {
            self.attributes();
        }
        self.operands.finish(&mut self.b.module);
        let name = self.block_name();
        self.b.finish_as(&name)
    }

    fn block_name(&self) -> String {
        match self.blocks {
            0 => "main".to_string(),
            n => format!("b{n}"),
        }
    }

    /// Writes the next life of `p` (with `partner`'s interleaved) and makes
    /// the tensors live.
    fn define(&mut self, p: Psum, partner: Option<Psum>) -> Result<(), GenError> {
        let cfg = self.cfg;
        if partner.is_none() && p.life == 0 && (cfg.carried || cfg.local_loops) {
            match self.rng.below(4) {
                0 if cfg.local_loops => return self.local_loop(p),
                1 if cfg.carried => return self.carried_loop(p),
                _ => {}
            }
        }
        let mut units = self.write(p)?;
        if let Some(q) = partner {
            let other = self.write(q)?;
            units = self.merge(vec![units, other]);
        }
        for u in units {
            self.emit_unit(u);
        }
        self.start_live(p);
        if let Some(q) = partner {
            self.start_live(q);
        }
        Ok(())
    }

    /// The number of loops open.
    fn depth(&self) -> usize {
        self.b.open_loops().count()
    }

    /// Opens a loop of `trips` iterations at the current depth (from 0, or
    /// with `syntax` from a random bound in `-2..=2`).
    fn open(&mut self, trips: u32) {
        let depth = self.depth();
        let lo = if self.cfg.syntax {
            self.rng.range(-2i64, 2)
        } else {
            0
        };
        let name = LOOP_NAMES[depth.min(LOOP_NAMES.len() - 1)];
        self.b.open_range(name, lo, lo + i64::from(trips));
    }

    fn emit_unit(&mut self, u: Unit) {
        match u {
            Unit::Inst(kind) => self.emit(kind),
            Unit::Loop { trips, body } => {
                self.open(trips);
                for u in body {
                    self.emit_unit(u);
                }
                self.b.close_loop();
            }
        }
    }

    /// Appends `kind`, its depth-named loops bound to the open loops.
    fn emit(&mut self, mut kind: InstKind) {
        let loops: IdMap<VarId, (VarId, i64)> =
            self.b.open_loops().map(|l| (l.var, l.lo)).collect();
        if !loops.is_empty() {
            bind(kind.dst_mut(), &loops);
            kind.for_each_src_mut(|a| bind(a, &loops));
        }
        let mut inst = Inst::new(kind);
        if self.cfg.syntax {
            self.decorate(&mut inst);
        }
        self.b.emit_inst(inst);
    }
}

/// Rewrites the depth-named loop variables of `a` to the open `loops`
/// (`(var, lo)`, outermost first): `c·d` becomes `c·(var − lo)`.
fn bind(a: &mut Access, loops: &IdMap<VarId, (VarId, i64)>) {
    if !a.is_affine() {
        return;
    }
    a.edit_bounds(|_, e| {
        let mut out = Affine::constant(e.constant);
        for &(d, c) in &e.terms {
            let (var, lo) = loops[d];
            out.add_term(var, c);
            out.constant -= c * lo;
        }
        *e = out;
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Region, TensorId};

    /// With the rich knobs, no two matmul instances (after unrolling) read
    /// overlapping operand bytes, and every program validates.
    #[test]
    fn rich_operands_are_fresh() {
        for seed in 0..200 {
            let m = program(seed, &RandomConfig::rich()).unwrap();
            crate::validate::validate(&m).unwrap();
            let u = crate::unroll::unroll(&m).unwrap();
            let mut seen: Vec<(TensorId, Region)> = Vec::new();
            for i in u.insts_in_order() {
                let Some(mm) = u.inst(i).kind.as_matmul() else {
                    continue;
                };
                for a in [&mm.stationary, &mm.moving] {
                    let r = a.region(|_| 0);
                    let clash = seen.iter().find(|(t, s)| *t == a.tensor && s.overlaps(&r));
                    assert!(
                        clash.is_none(),
                        "seed {seed}: {r:?} of {} read twice",
                        u.tensor(a.tensor).name
                    );
                    seen.push((a.tensor, r));
                }
            }
            assert!(!seen.is_empty(), "seed {seed}: no matmul");
        }
    }

    /// The knobs draw only when on: the program does not depend on
    /// `max_chain` while chains are off.
    #[test]
    fn knobs_off_ignore_max_chain() {
        let base = RandomConfig::default();
        let other = RandomConfig {
            max_chain: 2,
            ..base.clone()
        };
        assert_eq!(program_text(5, &base), program_text(5, &other));
    }
}
