//! Random valid allocation programs (text), for property tests: PSUM tensors
//! of 1..=`max_banks` banks written by matmuls with distinct operand slices
//! (one matmul per bank), read by `act`s; accumulation loops, read loops,
//! loops holding short-lived tensors (nested), loop-carried values, and whole overwrites of
//! consumed tensors (memloc split). About `pressure` tensors are live at once.

/// xorshift64*: small and deterministic.
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// True with probability `1/n`.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }
}

/// Shape of the generated program.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Arch codename (`inf1` programs use 64-partition PSUM tensors).
    pub arch: &'static str,
    /// Number of PSUM tensors declared.
    pub tensors: usize,
    /// Largest tensor, in banks (1..=3).
    pub max_banks: u32,
    /// Target number of tensors live at once.
    pub pressure: usize,
    /// Whether to emit loops.
    pub loops: bool,
}

const SLICES: usize = 120;

struct Gen {
    rng: Rng,
    cfg: Config,
    parts: u32,
    banks: Vec<u32>,
    out: String,
    depth: usize,
    next: usize,
    /// Live tensors and how many reads each still needs.
    live: Vec<(usize, u32)>,
    /// Tensors read to the end, available for a whole overwrite.
    consumed: Vec<usize>,
    slice: usize,
    vars: usize,
}

impl Gen {
    fn line(&mut self, s: &str) {
        for _ in 0..self.depth + 1 {
            self.out.push_str("  ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    /// `x` slice bounds for one matmul, `k`-strided inside a loop of `trip`.
    fn operand(&mut self, var: Option<(&str, usize)>) -> String {
        let trip = var.map_or(1, |v| v.1);
        let base = self.slice % (SLICES - trip) * 1024;
        self.slice += trip;
        match var {
            None => format!("x[0:128, {base}:{}]", base + 1024),
            Some((k, _)) => format!("x[0:128, {k}*1024+{base}:{k}*1024+{}]", base + 1024),
        }
    }

    /// Writes every bank of tensor `t` with a matmul.
    fn define(&mut self, t: usize, var: Option<(&str, usize)>) {
        let b = self.banks[t];
        for j in 0..b {
            let dst = if b == 1 {
                format!("t{t}")
            } else {
                format!("t{t}[0:{}, {}:{}]", self.parts, j * 2048, (j + 1) * 2048)
            };
            let op = self.operand(var);
            self.line(&format!("matmul {dst} <- w, {op}"));
        }
    }

    fn read(&mut self, t: usize) {
        let b = self.banks[t];
        // Sometimes read a second live tensor of the same size alongside.
        let other = self
            .live
            .iter()
            .map(|&(u, _)| u)
            .find(|&u| u != t && self.banks[u] == b && self.rng.one_in(4));
        match other {
            Some(u) => self.line(&format!("act y{b} <- t{t}, t{u}")),
            None => self.line(&format!("act y{b} <- t{t}")),
        }
    }

    fn var(&mut self) -> (String, usize) {
        self.vars += 1;
        (format!("k{}", self.vars), 2 + self.rng.below(3))
    }

    fn open(&mut self, k: &str, trip: usize) {
        self.line(&format!("loop {k} 0..{trip} {{"));
        self.depth += 1;
    }

    fn close(&mut self) {
        self.depth -= 1;
        self.line("}");
    }

    fn fresh(&mut self) -> Option<usize> {
        (self.next < self.cfg.tensors).then(|| {
            self.next += 1;
            self.next - 1
        })
    }

    fn start_live(&mut self, t: usize) {
        let reads = 1 + self.rng.below(3) as u32;
        self.live.push((t, reads));
    }

    /// Reads live tensor number `i`; retires it after its last read.
    fn consume(&mut self, i: usize, in_loop: bool) {
        let t = self.live[i].0;
        if in_loop {
            let (k, trip) = self.var();
            self.open(&k, trip);
            self.read(t);
            self.close();
        } else {
            self.read(t);
        }
        self.live[i].1 -= 1;
        if self.live[i].1 == 0 {
            self.live.swap_remove(i);
            self.consumed.push(t);
        }
    }

    /// A loop holding a short-lived tensor, maybe reading an outer one and
    /// maybe nesting an accumulation loop.
    fn local_loop(&mut self, t: usize) {
        let (k, trip) = self.var();
        self.open(&k, trip);
        if self.rng.one_in(2) {
            let (j, tj) = self.var();
            self.open(&j, tj);
            self.define(t, Some((&j, tj)));
            self.close();
        } else {
            self.define(t, Some((&k, trip)));
        }
        if !self.live.is_empty() && self.rng.one_in(2) {
            let u = self.live[self.rng.below(self.live.len())].0;
            self.read(u);
        }
        self.read(t);
        self.close();
        self.consumed.push(t);
    }

    /// A tensor initialized before a loop and rewritten inside it, read at
    /// the top of the body (the previous iteration's value) and maybe below
    /// the write; it may stay live after the loop.
    fn carried_loop(&mut self, t: usize) {
        self.line(&format!("memset t{t} = 0"));
        let (k, trip) = self.var();
        self.open(&k, trip);
        self.read(t);
        self.define(t, Some((&k, trip)));
        if !self.live.is_empty() && self.rng.one_in(2) {
            let u = self.live[self.rng.below(self.live.len())].0;
            self.read(u);
        }
        let read_below = self.rng.one_in(2);
        if read_below {
            self.read(t);
        }
        self.close();
        if read_below && self.rng.one_in(2) {
            self.consumed.push(t);
        } else {
            self.start_live(t);
        }
    }

    fn step(&mut self) {
        let want_def = self.live.len() < self.cfg.pressure || self.live.is_empty();
        if want_def {
            if !self.consumed.is_empty() && self.rng.one_in(6) {
                let t = self
                    .consumed
                    .swap_remove(self.rng.below(self.consumed.len()));
                if self.banks[t] == 1 && self.rng.one_in(2) {
                    self.define(t, None);
                } else {
                    self.line(&format!("memset t{t} = 0"));
                }
                self.start_live(t);
                return;
            }
            let Some(t) = self.fresh() else { return };
            match (self.cfg.loops, self.rng.below(5)) {
                (true, 0) => {
                    let (k, trip) = self.var();
                    self.open(&k, trip);
                    self.define(t, Some((&k, trip)));
                    self.close();
                    self.start_live(t);
                }
                (true, 1) => self.local_loop(t),
                (true, 2) => self.carried_loop(t),
                _ => {
                    self.define(t, None);
                    self.start_live(t);
                }
            }
        } else {
            let i = self.rng.below(self.live.len());
            let in_loop = self.cfg.loops && self.rng.one_in(4);
            self.consume(i, in_loop);
        }
    }
}

/// A random valid program for `cfg`, deterministic in `seed`.
pub fn program(seed: u64, cfg: Config) -> String {
    let mut rng = Rng::new(seed);
    let banks = (0..cfg.tensors)
        .map(|_| 1 + rng.below(cfg.max_banks as usize) as u32)
        .collect();
    let parts = if cfg.arch == "inf1" { 64 } else { 128 };
    let mut g = Gen {
        rng,
        cfg,
        parts,
        banks,
        out: String::new(),
        depth: 0,
        next: 0,
        live: Vec::new(),
        consumed: Vec::new(),
        slice: 0,
        vars: 0,
    };
    while g.next < cfg.tensors {
        g.step();
    }
    while !g.live.is_empty() {
        g.consume(g.live.len() - 1, false);
    }
    let mut src = format!("arch {}\n\n", cfg.arch);
    for (t, b) in g.banks.iter().enumerate() {
        src.push_str(&format!("psum t{t} [{parts}, {}]\n", b * 2048));
    }
    let m = if parts == 64 { 64 } else { 128 };
    src.push_str(&format!("sbuf w [128, {}] bf16\n", m * 2));
    src.push_str(&format!("sbuf x [128, {}] bf16\n", SLICES * 1024));
    for b in 1..=cfg.max_banks {
        src.push_str(&format!("sbuf y{b} [{parts}, {}]\n", b * 2048));
    }
    src.push_str("\nblock main {\n");
    src.push_str(&g.out);
    src.push_str("}\n");
    src
}
