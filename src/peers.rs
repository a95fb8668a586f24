//! Problems shared with peer allocators (`psum bench --peers`).
//!
//! A [`Problem`] is a straight-line sequence of one-bank tensors, each
//! defined once and used one to three times, generated deterministically for
//! a tensor count and a peak demand. The same problem is built here as a psum
//! [`Module`] and, in the `peers` benchmark (`benches/peers.rs`), as a
//! regalloc2 `Function` with one register class of as many registers as
//! banks, so both allocators face the same interval graph: one program point
//! per step, a tensor live from its def to its last use (SPEC §3.1, §3.3).

use crate::alloc::Interval;
use crate::alloc::{self, AllocError, AllocOptions};
use crate::ir::{
    Access, Block, DType, Flags, Inst, InstKind, Matmul, MatmulKind, Mem, Module, Stmt, Tensor,
    TensorId,
};
use std::time::Instant;

/// Partitions of the SBUF operand tensors.
const PARTS: u32 = 128;

/// One step of a problem: one instruction, one program point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Tensor `t` is written (psum: `matmul t <- …`; regalloc2: a def of vreg `t`).
    Def(u32),
    /// Tensor `t` is read (psum: `act out <- out, t`; regalloc2: a use of vreg `t`).
    Use(u32),
}

/// A straight-line one-bank allocation problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Number of tensors; tensor `t` is defined before tensor `t + 1`.
    pub num_tensors: u32,
    /// The steps in program order.
    pub steps: Vec<Step>,
}

/// SplitMix64 (Steele, Lea & Flood 2014): a small deterministic generator.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`; the modulo bias is irrelevant here).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

impl Problem {
    /// Generates `n` tensors whose live count never exceeds `peak`.
    ///
    /// Each step defines a new tensor with probability 1/3 (while fewer than
    /// `peak` are live and tensors remain), else uses a uniformly chosen live
    /// tensor. With two uses per tensor on average the live count is then a
    /// driftless walk over `0..=peak`, so it reaches `peak` many times on any
    /// problem of a few hundred tensors or more.
    pub fn generate(n: u32, peak: u32, seed: u64) -> Problem {
        assert!(peak > 0, "peak demand must be positive");
        let mut rng = SplitMix64(seed);
        let mut steps = Vec::with_capacity(3 * n as usize);
        // (tensor, uses still to emit)
        let mut live: Vec<(u32, u64)> = Vec::with_capacity(peak as usize);
        let mut defined = 0;
        while defined < n || !live.is_empty() {
            let may_def = defined < n && live.len() < peak as usize;
            if may_def && (live.is_empty() || rng.below(3) == 0) {
                steps.push(Step::Def(defined));
                live.push((defined, 1 + rng.below(3)));
                defined += 1;
            } else {
                let i = rng.below(live.len() as u64) as usize;
                steps.push(Step::Use(live[i].0));
                live[i].1 -= 1;
                if live[i].1 == 0 {
                    live.swap_remove(i);
                }
            }
        }
        Problem {
            num_tensors: n,
            steps,
        }
    }

    /// Each tensor's closed live interval `[def, last use]` in steps, one bank.
    pub fn intervals(&self) -> Vec<Interval> {
        let mut ivs = vec![
            Interval {
                start: 0,
                end: 0,
                banks: 1,
            };
            self.num_tensors as usize
        ];
        for (p, step) in self.steps.iter().enumerate() {
            let p = u32::try_from(p).expect("step count fits u32");
            match *step {
                Step::Def(t) => {
                    ivs[t as usize].start = p;
                    ivs[t as usize].end = p;
                }
                Step::Use(t) => ivs[t as usize].end = p,
            }
        }
        ivs
    }

    /// Builds the problem as a one-block psum module for `arch`.
    ///
    /// Tensor `t` is `psum tT [1, 4]`: one f32 element, which still takes a
    /// whole bank (`liveN = 1`, SPEC §3.3), so the allocation problem is the
    /// same as with full `[128, 2048]` tiles while the independent checker and
    /// simulator (SPEC §5) stay cheap at 100k tensors. It is written by a
    /// matmul `[1, 1] × [1, 1]` whose operands are elements of `sbuf w` and
    /// `sbuf x` that no other matmul reads (so values tell tensors apart), and
    /// read by `act out <- out, tT`, which folds every value read into one
    /// SBUF accumulator.
    pub fn to_module(&self, arch: &str) -> Module {
        let cols = self.num_tensors.div_ceil(PARTS).max(1);
        let mut m = Module::new(arch);
        let tensor = Tensor::new;
        let w = m.add_tensor(tensor("w".into(), Mem::Sbuf, PARTS, 2 * cols, DType::Bf16));
        let x = m.add_tensor(tensor("x".into(), Mem::Sbuf, PARTS, 2 * cols, DType::Bf16));
        let out = m.add_tensor(tensor("out".into(), Mem::Sbuf, 1, 4, DType::F32));
        let first = m.tensors.len();
        for t in 0..self.num_tensors {
            m.add_tensor(tensor(format!("t{t}"), Mem::Psum, 1, 4, DType::F32));
        }
        let psum = |t: u32| TensorId::new(first + t as usize);
        let whole = |m: &Module, id: TensorId| Access::whole(id, m.tensor(id));
        // Operand element of matmul `t`: partition t % 128, column t / 128.
        let operand = |id: TensorId, t: u32| {
            let (p, c) = (i64::from(t % PARTS), 2 * i64::from(t / PARTS));
            Access::rect(id, p, p + 1, c, c + 2)
        };
        let mut body = Vec::with_capacity(self.steps.len());
        for step in &self.steps {
            let kind = match *step {
                Step::Def(t) => InstKind::Matmul(Box::new(Matmul {
                    kind: MatmulKind::Plain,
                    dst: whole(&m, psum(t)),
                    stationary: operand(w, t),
                    moving: operand(x, t),
                    pos: (0, 0),
                    flags: Flags::Auto,
                    zr: None,
                    accumulate: None,
                })),
                Step::Use(t) => InstKind::Act {
                    dst: whole(&m, out),
                    srcs: vec![whole(&m, out), whole(&m, psum(t))],
                },
            };
            body.push(Stmt::Inst(m.add_inst(Inst::new(kind))));
        }
        m.blocks.push(Block {
            name: "main".to_string(),
            body,
        });
        m
    }
}

/// What psum's allocator did on one module.
#[derive(Clone, Debug, PartialEq)]
pub struct PsumRun {
    /// Best wall time of the repetitions, in milliseconds.
    pub ms: f64,
    /// Tensors spilled (over all iterations).
    pub spilled: usize,
    /// Inserted saves (`copy SBUF <- PSUM`).
    pub saves: usize,
    /// Inserted reloads (`copy PSUM <- SBUF`).
    pub reloads: usize,
    /// Spill fixpoint iterations.
    pub iterations: u32,
}

/// Allocates `m` `reps` times (at least once) with `opts`, timing each run
/// of [`alloc::allocate_owned`] on a copy made before the clock starts (as
/// regalloc2's input `Function` is built before it runs); returns the best
/// time, the counts, and the allocated module.
pub fn run_psum(
    m: &Module,
    opts: &AllocOptions,
    reps: usize,
) -> Result<(PsumRun, Module), AllocError> {
    let mut best = f64::INFINITY;
    let mut outcome = None;
    for _ in 0..reps.max(1) {
        let input = m.clone();
        let t = Instant::now();
        let out = alloc::allocate_owned(input, opts)?;
        best = best.min(t.elapsed().as_secs_f64() * 1e3);
        outcome = Some(out);
    }
    let out = outcome.expect("at least one repetition");
    let (mut saves, mut reloads) = (0, 0);
    for i in out.module.insts_in_order() {
        if let InstKind::Copy { dst, src } = &out.module.inst(i).kind {
            match (
                out.module.tensor(dst.tensor).mem,
                out.module.tensor(src.tensor).mem,
            ) {
                (Mem::Sbuf, Mem::Psum) => saves += 1,
                (Mem::Psum, Mem::Sbuf) => reloads += 1,
                _ => {}
            }
        }
    }
    let run = PsumRun {
        ms: best,
        spilled: out.report.spilled.len(),
        saves,
        reloads,
        iterations: out.report.iterations,
    };
    Ok((run, out.module))
}
