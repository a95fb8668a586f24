//! Test support: a deterministic generator of random *valid* modules
//! (nested loops, affine bounds, every instruction kind, labels, `after=`,
//! flags, `zr`, `pos`, bank/addr attributes), for property tests.
//!
//! The module's arenas are built in program order, exactly as the parser
//! builds them, so `parse(print(m)) == m` holds with plain equality.

#![allow(dead_code)]

use psum::arch::{self, Arch};
use psum::gen::random::Rng;
use psum::ir::{
    Access, Affine, Block, DType, FlagSet, Flags, Inst, InstKind, Loop, Matmul, MatmulKind, Mem,
    Module, Stmt, Tensor, TensorId, VarId,
};

struct Gen {
    rng: Rng,
    arch: Arch,
    m: Module,
    /// Loop variables in scope with their `[lo, hi)`.
    scope: Vec<(VarId, i64, i64)>,
    written: Vec<bool>,
    labels: Vec<String>,
    budget: usize,
}

/// A random valid module with about `size` instructions.
pub fn random_module(seed: u64, size: usize) -> Module {
    let mut rng = Rng::new(seed);
    let codename = *rng.pick(&arch::CODENAMES);
    let arch = arch::lookup(codename).unwrap();
    let mut g = Gen {
        rng,
        arch,
        m: Module::new(codename),
        scope: Vec::new(),
        written: Vec::new(),
        labels: Vec::new(),
        budget: size.max(1),
    };
    g.declare();
    let blocks = g.rng.range(1, 3);
    for b in 0..blocks {
        let body = g.body(0);
        let name = if b == 0 {
            "main".to_string()
        } else {
            format!("b{b}.x_{b}")
        };
        g.m.blocks.push(Block { name, body });
    }
    g.m
}

impl Gen {
    fn declare(&mut self) {
        let part_size = self.arch.psum().part_size;
        let n_psum = self.rng.range(1, 4);
        for i in 0..n_psum {
            let partitions = *self.rng.pick(&[part_size, part_size, 32, 1]);
            let banks = self.rng.range(1, 2) as u32;
            let bank = self.rng.chance(1, 3).then(|| self.rng.range(0, 7) as u32);
            let name = *self.rng.pick(&["acc", "ps", "t.", "_p"]);
            self.tensor(
                format!("{name}{i}"),
                Mem::Psum,
                partitions,
                2048 * banks,
                DType::F32,
                bank,
                None,
            );
        }
        let n_sbuf = self.rng.range(2, 4);
        for i in 0..n_sbuf {
            let dtype = *self.rng.pick(&[DType::F32, DType::Bf16, DType::Fp8]);
            let addr = self.rng.chance(1, 3).then(|| self.rng.below(1 << 20));
            self.tensor(format!("s{i}"), Mem::Sbuf, 128, 8192, dtype, None, addr);
        }
        self.tensor(
            "out".to_string(),
            Mem::Dram,
            128,
            8192,
            DType::F32,
            None,
            None,
        );
    }

    #[allow(clippy::too_many_arguments)]
    fn tensor(
        &mut self,
        name: String,
        mem: Mem,
        partitions: u32,
        bytes: u32,
        dtype: DType,
        bank: Option<u32>,
        addr: Option<u64>,
    ) {
        self.m.add_tensor(Tensor {
            name,
            mem,
            partitions,
            bytes,
            dtype,
            bank,
            addr,
            loc: None,
        });
        self.written.push(false);
    }

    fn body(&mut self, depth: usize) -> Vec<Stmt> {
        let n = if depth == 0 {
            self.rng.range(1, self.budget as i64 + 1)
        } else {
            self.rng.range(1, 4)
        };
        let mut out = Vec::new();
        for _ in 0..n {
            if self.budget == 0 {
                break;
            }
            if depth < 3 && self.rng.chance(1, 4) {
                out.push(self.loop_(depth));
            } else {
                self.budget -= 1;
                out.push(Stmt::Inst(self.inst()));
            }
        }
        out
    }

    fn loop_(&mut self, depth: usize) -> Stmt {
        let names = ["k", "i", "j", "n.0", "_m"];
        let name = names
            .iter()
            .find(|n| {
                !self
                    .scope
                    .iter()
                    .any(|(v, _, _)| self.m.vars[v.index()].name == **n)
            })
            .unwrap();
        let var = self.m.add_var(*name);
        let lo = self.rng.range(-2, 2);
        let hi = lo + self.rng.range(1, 4);
        let id = self.m.add_loop(Loop {
            var,
            lo,
            hi,
            body: Vec::new(),
        });
        self.scope.push((var, lo, hi));
        let body = self.body(depth + 1);
        self.scope.pop();
        self.m.loops[id.index()].body = body;
        Stmt::Loop(id)
    }

    /// A random `[lo, lo + extent)` inside `[0, size)` whose bounds are
    /// multiples of `align`, affine in the loop variables in scope.
    fn interval(&mut self, extent: i64, size: i64, align: i64) -> (Affine, Affine) {
        let mut lo = Affine::constant(0);
        let (mut min, mut max) = (0i64, 0i64);
        for &(v, vlo, vhi) in &self.scope.clone() {
            if !self.rng.chance(1, 3) {
                continue;
            }
            let c = align * *self.rng.pick(&[-2, -1, 1, 2, 3]);
            let (a, b) = (c * vlo, c * (vhi - 1));
            let (tmin, tmax) = (min + a.min(b), max + a.max(b));
            if tmax - tmin + extent <= size {
                lo.add_term(v, c);
                (min, max) = (tmin, tmax);
            }
        }
        let slack = (size - extent - (max - min)) / align;
        lo.constant = -min + align * self.rng.range(0, slack);
        let mut hi = lo.clone();
        hi.constant += extent;
        (lo, hi)
    }

    /// An access of `t` with `parts` partitions and `bytes` bytes.
    fn access(&mut self, t: TensorId, parts: i64, bytes: i64) -> Access {
        let tt = self.m.tensor(t).clone();
        let (p0, p1) = self.interval(parts, i64::from(tt.partitions), 1);
        let (b0, b1) = self.interval(bytes, i64::from(tt.bytes), i64::from(tt.dtype.size()));
        Access::new(t, p0, p1, b0, b1)
    }

    fn tensors_where(&self, f: impl Fn(&Tensor, bool) -> bool) -> Vec<TensorId> {
        (0..self.m.tensors.len())
            .map(TensorId::new)
            .filter(|t| f(self.m.tensor(*t), self.written[t.index()]))
            .collect()
    }

    /// A tensor that may be read now (PSUM only once written).
    fn readable(&mut self) -> TensorId {
        let ts = self.tensors_where(|t, w| t.mem != Mem::Psum || w);
        *self.rng.pick(&ts)
    }

    fn inst(&mut self) -> psum::ir::InstId {
        let kind = match self.rng.below(5) {
            0 | 1 => self.matmul(),
            2 => {
                let dst = TensorId::new(self.rng.index(self.m.tensors.len()));
                let dt = self.m.tensor(dst).clone();
                let parts = self.rng.range(1, i64::from(dt.partitions));
                let bytes = i64::from(dt.dtype.size()) * self.rng.range(1, i64::from(dt.elems()));
                let value = *self.rng.pick(&[0.0, 1.0, -1.5, 0.25, 1e10, -3.0, 0.1]);
                InstKind::Memset {
                    dst: self.access(dst, parts, bytes),
                    value,
                }
            }
            k => {
                let dst = TensorId::new(self.rng.index(self.m.tensors.len()));
                let nsrc = if k == 3 { self.rng.range(1, 3) } else { 1 };
                let srcs: Vec<TensorId> = (0..nsrc).map(|_| self.readable()).collect();
                let all: Vec<&Tensor> = std::iter::once(dst)
                    .chain(srcs.iter().copied())
                    .map(|t| self.m.tensor(t))
                    .collect();
                let max_p = all.iter().map(|t| t.partitions).min().unwrap();
                let max_e = all.iter().map(|t| t.elems()).min().unwrap();
                let parts = self.rng.range(1, i64::from(max_p));
                let elems = self.rng.range(1, i64::from(max_e));
                let mut acc = |t: TensorId| {
                    let size = i64::from(self.m.tensor(t).dtype.size());
                    self.access(t, parts, elems * size)
                };
                let dst_a = acc(dst);
                let src_a: Vec<Access> = srcs.iter().map(|&t| acc(t)).collect();
                match k {
                    3 => InstKind::Act {
                        dst: dst_a,
                        srcs: src_a,
                    },
                    _ if self.rng.chance(1, 2) => InstKind::Copy {
                        dst: dst_a,
                        src: src_a[0].clone(),
                    },
                    _ => InstKind::Dma {
                        dst: dst_a,
                        src: src_a[0].clone(),
                    },
                }
            }
        };
        self.written[kind.dst().tensor.index()] = true;
        let label = self.rng.chance(1, 3).then(|| {
            let l = format!(
                "{}{}",
                self.rng.pick(&["", "a", "mm.", "x_"]),
                self.labels.len()
            );
            self.labels.push(l.clone());
            l
        });
        let after = (!self.labels.is_empty() && self.rng.chance(1, 4))
            .then(|| self.rng.pick(&self.labels).clone());
        let mut inst = Inst::new(kind);
        inst.set_label(label);
        inst.set_after(after);
        self.m.add_inst(inst)
    }

    fn matmul(&mut self) -> InstKind {
        let psum = self.tensors_where(|t, _| t.mem == Mem::Psum);
        let sbuf = self.tensors_where(|t, _| t.mem == Mem::Sbuf);
        let dst = *self.rng.pick(&psum);
        let dt = self.m.tensor(dst).clone();
        let cols = self.arch.pe().cols;
        let m = self.rng.range(1, i64::from(dt.partitions.min(cols)));
        let k = *self.rng.pick(&[128, 128, 64, 1]);
        let n = *self.rng.pick(&[512, 512, 256, 1]);
        // Destination: one bank's worth of bytes; the offset steps whole banks
        // so it never crosses a bank boundary.
        let (p0, p1) = self.interval(m, i64::from(dt.partitions), 1);
        let banks = i64::from(dt.bytes) / 2048;
        let (mut b0, _) = self.interval(2048, banks * 2048, 2048);
        b0.constant += 4 * self.rng.range(0, (2048 - 4 * n) / 4);
        let mut b1 = b0.clone();
        b1.constant += 4 * n;
        let dst_a = Access::new(dst, p0, p1, b0, b1);
        let s = *self.rng.pick(&sbuf);
        let mv = *self.rng.pick(&sbuf);
        let (ss, ms) = (
            i64::from(self.m.tensor(s).dtype.size()),
            i64::from(self.m.tensor(mv).dtype.size()),
        );
        let stationary = self.access(s, k, m * ss);
        let moving = self.access(mv, k, n * ms);
        let pos = (
            self.rng.range(0, 128 - k) as u32 * u32::from(self.rng.chance(1, 3)),
            self.rng.range(0, i64::from(cols) - m) as u32 * u32::from(self.rng.chance(1, 3)),
        );
        let flags = match self.rng.below(4) {
            0 | 1 => Flags::Auto,
            _ => Flags::Set(FlagSet {
                start: self.rng.chance(1, 2),
                acc: self.rng.chance(1, 2),
                stop: self.rng.chance(1, 2),
            }),
        };
        let zr = self.rng.chance(1, 3).then(|| self.rng.range(0, 3) as u32);
        let kind = *self.rng.pick(&[
            MatmulKind::Plain,
            MatmulKind::Plain,
            MatmulKind::Sparse,
            MatmulKind::Mx,
            MatmulKind::Transpose,
        ]);
        InstKind::Matmul(Box::new(Matmul {
            kind,
            dst: dst_a,
            stationary,
            moving,
            pos,
            flags,
            zr,
            accumulate: None,
        }))
    }
}
