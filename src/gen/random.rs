//! Random valid programs (issue #5): the generator behind the compile-and-verify
//! property test and the `compile` fuzz target.
//!
//! [`random_program`] is deterministic in its seed and uses a built-in
//! splitmix64 PRNG. Every program it builds passes validation and reads only
//! PSUM regions it wrote. Each PSUM tensor gets one or two lives (a second
//! life whose first write covers the whole tensor exercises the memloc split
//! of SPEC §3.2); a life writes the tensor as accumulation chains — whole
//! tensor, one chain per bank, column halves, column tiles in the PE array,
//! affine per-iteration slices — straight-line or in loops, optionally on top
//! of a memset or bias-copy init, and then reads it back into SBUF (and
//! DRAM). The lives of different tensors interleave instruction by
//! instruction, so PSUM pressure, spills and interleaved accumulation groups
//! all occur. Every matmul reads a fresh slice of its operand pools, so no
//! two matmuls share operands and value comparison is meaningful.

use crate::arch::{self, Arch};
use crate::ir::Module;
use std::fmt::Write as _;

/// Knobs of [`random_program`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RandomConfig {
    /// Architecture codename; `None` picks one of the four generations per seed.
    pub arch: Option<String>,
    /// Upper bound on the number of PSUM tensors (at least 1).
    pub max_tensors: u32,
    /// Upper bound on the matmuls of one accumulation chain (at least 1).
    pub max_chain: u32,
    /// Whether chains may be written as loops (with affine bounds).
    pub loops: bool,
    /// Whether PSUM tensors may span several banks.
    pub multi_bank: bool,
}

impl Default for RandomConfig {
    fn default() -> Self {
        RandomConfig {
            arch: None,
            max_tensors: 10,
            max_chain: 4,
            loops: true,
            multi_bank: true,
        }
    }
}

/// The built-in PRNG (splitmix64).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u32, hi: u32) -> u32 {
        lo + self.below(u64::from(hi - lo + 1)) as u32
    }

    /// True with probability `num/den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }

    /// A uniformly chosen element.
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
}

/// One architecture per generation, as [`RandomConfig::arch`] `None` picks them.
pub const ARCHES: [&str; 4] = ["inf1", "trn1", "gen3", "core_v4"];

/// Bytes per partition of one operand-pool tensor.
const POOL_BYTES: u32 = 16384;

/// The text of a random valid program (see the module doc).
pub fn random_program_text(seed: u64, cfg: &RandomConfig) -> String {
    let mut rng = Rng::new(seed);
    let name = match &cfg.arch {
        Some(a) => a.clone(),
        None => rng.pick(&ARCHES).to_string(),
    };
    let arch = arch::lookup(&name).unwrap_or_else(|_| arch::lookup("trn1").expect("trn1 exists"));
    let mut g = Gen {
        rng,
        arch,
        cfg: cfg.clone(),
        decls: Vec::new(),
        pools: Vec::new(),
        loops: 0,
    };
    g.program(&name)
}

/// A random valid program (see the module doc), deterministic in `seed`.
pub fn random_program(seed: u64, cfg: &RandomConfig) -> Module {
    let text = random_program_text(seed, cfg);
    match crate::text::parse(&text) {
        Ok(p) => p.module,
        Err(e) => panic!("generator bug: seed {seed} does not parse: {e}\n{text}"),
    }
}

/// A statement of a life: an instruction line or a loop over lines.
enum Unit {
    Line(String),
    Loop {
        var: String,
        trips: u32,
        body: Vec<String>,
    },
}

impl Unit {
    fn render(&self, indent: &str, out: &mut String) {
        match self {
            Unit::Line(l) => {
                let _ = writeln!(out, "{indent}{l}");
            }
            Unit::Loop { var, trips, body } => {
                let _ = writeln!(out, "{indent}loop {var} 0..{trips} {{");
                for l in body {
                    let _ = writeln!(out, "{indent}  {l}");
                }
                let _ = writeln!(out, "{indent}}}");
            }
        }
    }
}

/// An operand pool (`w*` stationary, `x*` moving): bf16 `[128, used]`.
struct Pool {
    name: String,
    used: u32,
}

struct Gen {
    rng: Rng,
    arch: Arch,
    cfg: RandomConfig,
    decls: Vec<String>,
    pools: Vec<Pool>,
    loops: u32,
}

/// One life of a PSUM tensor: its writes, then its reads.
struct Life {
    units: Vec<Unit>,
    /// The previous life of the same tensor, which must finish first.
    prev: Option<usize>,
}

/// A region `[p0:p1, b0:b1]` of a PSUM tensor, possibly affine in one loop var.
struct Region {
    p0: u32,
    p1: u32,
    b0: String,
    b1: String,
}

impl Gen {
    fn program(&mut self, arch_name: &str) -> String {
        let n = self.rng.range(1, self.cfg.max_tensors.max(1));
        let mut lives: Vec<Life> = Vec::new();
        for i in 0..n {
            let t = format!("t{i}");
            let (parts, bytes) = self.psum_shape();
            self.decls.push(format!("psum {t} [{parts}, {bytes}]"));
            let nlives = if self.rng.chance(1, 4) { 2 } else { 1 };
            for life in 0..nlives {
                let def = self.def(&t, parts, bytes, life > 0);
                let uses = self.use_(&t, parts, bytes, &format!("{t}_{life}"));
                let prev = (life > 0).then(|| lives.len() - 1);
                lives.push(Life {
                    units: def.into_iter().chain(uses).collect(),
                    prev,
                });
            }
        }
        // Interleave the lives unit by unit; a second life of a tensor waits
        // for its first to finish.
        let mut next = vec![0; lives.len()];
        let mut order = Vec::new();
        loop {
            let ready: Vec<usize> = (0..lives.len())
                .filter(|&i| {
                    next[i] < lives[i].units.len()
                        && lives[i]
                            .prev
                            .is_none_or(|p| next[p] == lives[p].units.len())
                })
                .collect();
            if ready.is_empty() {
                break;
            }
            let i = *self.rng.pick(&ready);
            order.push((i, next[i]));
            next[i] += 1;
        }
        let mut text = format!("arch {arch_name}\n\n");
        for p in &self.pools {
            let _ = writeln!(text, "sbuf {} [128, {}] bf16", p.name, p.used.max(2));
        }
        for d in &self.decls {
            let _ = writeln!(text, "{d}");
        }
        // Sometimes split the program into two blocks.
        let split = if order.len() > 1 && self.rng.chance(1, 3) {
            1 + self.rng.below(order.len() as u64 - 1) as usize
        } else {
            order.len()
        };
        for (b, part) in [&order[..split], &order[split..]].into_iter().enumerate() {
            if part.is_empty() {
                continue;
            }
            let _ = writeln!(text, "\nblock b{b} {{");
            for &(i, k) in part {
                lives[i].units[k].render("  ", &mut text);
            }
            let _ = writeln!(text, "}}");
        }
        text
    }

    /// Partitions and bytes of a PSUM tensor.
    fn psum_shape(&mut self) -> (u32, u32) {
        let max_m = self.arch.pe().cols.min(self.arch.psum().part_size);
        let parts = *self.rng.pick(&[max_m, max_m, max_m / 2, 32.min(max_m)]);
        let bytes = if self.cfg.multi_bank && self.rng.chance(1, 4) {
            2048 * self.rng.range(2, 3)
        } else {
            *self.rng.pick(&[512, 1024, 2048, 2048])
        };
        (parts, bytes)
    }

    /// Reserves `bytes × Π trips` bytes of a pool and returns the access
    /// `NAME[0:k, b0:b1]`, affine in `vars` (innermost last).
    fn operand(&mut self, pool: &str, k: u32, bytes: u32, vars: &[(String, u32)]) -> String {
        let total = bytes * vars.iter().map(|v| v.1).product::<u32>();
        let fits = |p: &Pool| p.name.starts_with(pool) && p.used + total <= POOL_BYTES;
        let idx = match self.pools.iter().position(fits) {
            Some(i) => i,
            None => {
                let n = self
                    .pools
                    .iter()
                    .filter(|p| p.name.starts_with(pool))
                    .count();
                self.pools.push(Pool {
                    name: format!("{pool}{n}"),
                    used: 0,
                });
                self.pools.len() - 1
            }
        };
        let base = self.pools[idx].used;
        self.pools[idx].used += total;
        let mut stride = bytes;
        let mut terms = String::new();
        for (v, trips) in vars.iter().rev() {
            terms = format!("{v}*{stride}+{terms}");
            stride *= trips;
        }
        let name = &self.pools[idx].name;
        format!("{name}[0:{k}, {terms}{base} : {terms}{}]", base + bytes)
    }

    fn loop_var(&mut self) -> String {
        self.loops += 1;
        format!("k{}", self.loops - 1)
    }

    /// One matmul line into `dst` (`[m, n_bytes]`), operands fresh from the pools.
    fn matmul(
        &mut self,
        dst: &str,
        k: u32,
        m: u32,
        n_bytes: u32,
        pos_col: u32,
        vars: &[(String, u32)],
    ) -> String {
        let st = self.operand("w", k, m * 2, vars);
        let mv = self.operand("x", k, n_bytes / 2, vars);
        let pos = if pos_col > 0 {
            format!(" pos=0,{pos_col}")
        } else {
            String::new()
        };
        format!("matmul {dst} <- {st}, {mv}{pos}")
    }

    fn contraction(&mut self) -> u32 {
        *self.rng.pick(&[4, 8, 8, 16, 32, 64])
    }

    /// The writes of one life of tensor `t`.
    fn def(&mut self, t: &str, parts: u32, bytes: u32, second: bool) -> Vec<Unit> {
        let gen4 = self.arch.arch_level() >= 40;
        let banks = bytes.div_ceil(2048);
        let cols = self.arch.pe().cols;
        let mut out = Vec::new();
        let kind = self.rng.below(5);
        let chain = self.rng.range(1, self.cfg.max_chain.max(1));
        if kind == 0 && parts == cols.min(self.arch.psum().part_size) && bytes <= 2048 && !second {
            // Column tiles: two halves of the partitions side by side in the PE array.
            let half = parts / 2;
            let init = self.init(t, &format!("{t}[0:{parts}, 0:{bytes}]"), parts, bytes);
            out.extend(init);
            let vars = self.maybe_loop(chain);
            let mut body = Vec::new();
            let steps = if vars.is_empty() { chain } else { 1 };
            for _ in 0..steps {
                for h in 0..2 {
                    let dst = format!("{t}[{}:{}, 0:{bytes}]", h * half, (h + 1) * half);
                    body.push(self.matmul(&dst, 128, half, bytes, h * half, &vars));
                }
            }
            out.extend(self.wrap(body, &vars));
            return out;
        }
        // Regions written, each by its own chain.
        let regions: Vec<Region> = if banks > 1 && !(gen4 && kind == 1) {
            (0..banks)
                .map(|b| Region {
                    p0: 0,
                    p1: parts,
                    b0: (b * 2048).to_string(),
                    b1: ((b + 1) * 2048).to_string(),
                })
                .collect()
        } else if kind == 2 && bytes >= 1024 && !second {
            let h = bytes / 2;
            vec![
                Region {
                    p0: 0,
                    p1: parts,
                    b0: "0".into(),
                    b1: h.to_string(),
                },
                Region {
                    p0: 0,
                    p1: parts,
                    b0: h.to_string(),
                    b1: bytes.to_string(),
                },
            ]
        } else {
            vec![Region {
                p0: 0,
                p1: parts,
                b0: "0".into(),
                b1: bytes.to_string(),
            }]
        };
        if kind == 3 && regions.len() > 1 && self.cfg.loops {
            // Affine destination: one loop over the regions, each accumulated.
            let j = self.loop_var();
            let rb = bytes / regions.len() as u32;
            let mut vars = vec![(j.clone(), regions.len() as u32)];
            let inner = self.maybe_loop(chain);
            vars.extend(inner.iter().cloned());
            let k = self.contraction();
            let dst = format!("{t}[0:{parts}, {j}*{rb} : {j}*{rb}+{rb}]");
            let steps = if inner.is_empty() { chain } else { 1 };
            let body: Vec<String> = (0..steps)
                .map(|_| self.matmul(&dst, k, parts, rb, 0, &vars))
                .collect();
            let body = if inner.is_empty() {
                body
            } else {
                let mut s = String::new();
                self.wrap(body, &inner)[0].render("", &mut s);
                s.lines().map(str::to_string).collect()
            };
            out.push(Unit::Loop {
                var: j,
                trips: regions.len() as u32,
                body,
            });
            return out;
        }
        let interleave = regions.len() > 1 && self.rng.chance(1, 2);
        let k = self.contraction();
        let mut chains: Vec<Vec<Unit>> = Vec::new();
        for r in &regions {
            let dst = format!("{t}[{}:{}, {}:{}]", r.p0, r.p1, r.b0, r.b1);
            let rbytes: u32 = r.b1.parse::<u32>().unwrap_or(0) - r.b0.parse::<u32>().unwrap_or(0);
            let mut units = self.init(t, &dst, parts, rbytes);
            let vars = self.maybe_loop(chain);
            if vars.is_empty() {
                for _ in 0..chain {
                    units.push(Unit::Line(self.matmul(&dst, k, parts, rbytes, 0, &[])));
                }
            } else {
                let body = vec![self.matmul(&dst, k, parts, rbytes, 0, &vars)];
                units.extend(self.wrap(body, &vars));
            }
            chains.push(units);
        }
        if interleave {
            let mut idx = vec![0; chains.len()];
            loop {
                let live: Vec<usize> = (0..chains.len())
                    .filter(|&c| idx[c] < chains[c].len())
                    .collect();
                if live.is_empty() {
                    break;
                }
                let c = *self.rng.pick(&live);
                let u = std::mem::replace(&mut chains[c][idx[c]], Unit::Line(String::new()));
                out.push(u);
                idx[c] += 1;
            }
        } else {
            out.extend(chains.into_iter().flatten());
        }
        out
    }

    /// Loop variables for a chain of `chain` matmuls written as a loop (or none).
    fn maybe_loop(&mut self, chain: u32) -> Vec<(String, u32)> {
        if self.cfg.loops && chain > 1 && self.rng.chance(1, 2) {
            vec![(self.loop_var(), chain)]
        } else {
            Vec::new()
        }
    }

    fn wrap(&mut self, body: Vec<String>, vars: &[(String, u32)]) -> Vec<Unit> {
        match vars.first() {
            None => body.into_iter().map(Unit::Line).collect(),
            Some((v, trips)) => vec![Unit::Loop {
                var: v.clone(),
                trips: *trips,
                body,
            }],
        }
    }

    /// An optional init of `dst` (`[parts, bytes]`): a memset or a bias copy.
    fn init(&mut self, t: &str, dst: &str, parts: u32, bytes: u32) -> Vec<Unit> {
        match self.rng.below(6) {
            0 => vec![Unit::Line(format!("memset {dst} = 0"))],
            1 => vec![Unit::Line(format!(
                "memset {dst} = {}",
                self.rng.range(1, 3)
            ))],
            2 => {
                let b = format!("bias_{t}_{}", self.decls.len());
                self.decls.push(format!("sbuf {b} [{parts}, {bytes}]"));
                vec![Unit::Line(format!("copy {dst} <- {b}"))]
            }
            _ => Vec::new(),
        }
    }

    /// The reads of one life: evacuate to SBUF, sometimes store to DRAM.
    fn use_(&mut self, t: &str, parts: u32, bytes: u32, tag: &str) -> Vec<Unit> {
        let y = format!("y_{tag}");
        self.decls.push(format!("sbuf {y} [{parts}, {bytes}]"));
        let mut out = vec![Unit::Line(if self.rng.chance(1, 2) {
            format!("act {y} <- {t}")
        } else {
            format!("copy {y} <- {t}")
        })];
        if self.rng.chance(1, 2) {
            let o = format!("out_{tag}");
            self.decls.push(format!("dram {o} [{parts}, {bytes}]"));
            out.push(Unit::Line(format!("dma {o} <- {y}")));
        }
        out
    }
}
