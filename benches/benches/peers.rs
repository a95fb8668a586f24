//! psum against regalloc2 on the same problems (`psum bench --peers`).
//!
//! Each [`Problem`] (straight-line one-bank tensors, each defined once and
//! used one to three times) is allocated in one process by psum's fast mode
//! (briggs), psum's mincost, regalloc2's Ion and regalloc2's fastalloc. For regalloc2 the problem is a
//! one-block `Function`: a def of vreg `t` per `Step::Def(t)`, a register use
//! per `Step::Use(t)`, then a return; one register class (`Int`) with as many
//! registers as banks, spill slots of size 1. Every regalloc2 output goes
//! through regalloc2's own checker before it is counted.
//!
//! psum's output goes through `psum::verify` (checker, simulator, static
//! checks), and its spilled tensors are compared with the exact lower bound
//! of `psum bound` ([`min_spills_one_bank`]).
//!
//! `cargo bench --bench peers` (cargo passes `--bench`) prints the full table
//! at 10k and 100k tensors, peak demand 8 and 16 on trn1's 8 banks, with its
//! targets (psum faster than Ion; within 10% of the bound at peak 16) marked
//! met or MISSED; run without `--bench` (`cargo test` in `benches/`) it runs one
//! small problem per peak demand and asserts
//! psum spills nothing when the peak fits and never beats the bound.

use psum::alloc::{AllocOptions, Allocator};
use psum::bound::min_spills_one_bank;
use psum::peers::{run_psum, Problem, PsumRun, Step};
use psum::verify::verify;
use regalloc2::checker::Checker;
use regalloc2::{
    Algorithm, Allocation, AllocationKind, Block, Edit, Function, Inst, InstRange, MachineEnv,
    Operand, PReg, PRegSet, RegClass, RegallocOptions, VReg,
};
use std::time::Instant;

/// A problem as a regalloc2 client function: one block, one instruction per
/// step, then a return.
struct Straight {
    operands: Vec<Operand>,
    /// Start of each instruction's operands in `operands`, plus the end.
    offsets: Vec<usize>,
    num_vregs: usize,
}

impl Straight {
    fn new(p: &Problem) -> Self {
        let vreg = |t: u32| VReg::new(t as usize, RegClass::Int);
        let mut operands = Vec::with_capacity(p.steps.len());
        let mut offsets = Vec::with_capacity(p.steps.len() + 2);
        for step in &p.steps {
            offsets.push(operands.len());
            operands.push(match *step {
                Step::Def(t) => Operand::reg_def(vreg(t)),
                Step::Use(t) => Operand::reg_use(vreg(t)),
            });
        }
        // The return, with no operands.
        offsets.push(operands.len());
        offsets.push(operands.len());
        Straight {
            operands,
            offsets,
            num_vregs: p.num_tensors as usize,
        }
    }
}

impl Function for Straight {
    fn num_insts(&self) -> usize {
        self.offsets.len() - 1
    }
    fn num_blocks(&self) -> usize {
        1
    }
    fn entry_block(&self) -> Block {
        Block::new(0)
    }
    fn block_insns(&self, _: Block) -> InstRange {
        InstRange::new(Inst::new(0), Inst::new(self.num_insts()))
    }
    fn block_succs(&self, _: Block) -> &[Block] {
        &[]
    }
    fn block_preds(&self, _: Block) -> &[Block] {
        &[]
    }
    fn block_params(&self, _: Block) -> &[VReg] {
        &[]
    }
    fn is_ret(&self, insn: Inst) -> bool {
        insn.index() + 1 == self.num_insts()
    }
    fn is_branch(&self, _: Inst) -> bool {
        false
    }
    fn branch_blockparams(&self, _: Block, _: Inst, _: usize) -> &[VReg] {
        &[]
    }
    fn inst_operands(&self, insn: Inst) -> &[Operand] {
        &self.operands[self.offsets[insn.index()]..self.offsets[insn.index() + 1]]
    }
    fn inst_clobbers(&self, _: Inst) -> PRegSet {
        PRegSet::empty()
    }
    fn num_vregs(&self) -> usize {
        self.num_vregs
    }
    fn spillslot_size(&self, _: RegClass) -> usize {
        1
    }
}

/// One `Int` register per bank, no dedicated scratch register (regalloc2
/// finds one when a move cycle needs it).
fn machine_env(banks: u32) -> MachineEnv {
    let mut regs = PRegSet::empty();
    for b in 0..banks as usize {
        regs.add(PReg::new(b, RegClass::Int));
    }
    MachineEnv {
        preferred_regs_by_class: [regs, PRegSet::empty(), PRegSet::empty()],
        non_preferred_regs_by_class: [PRegSet::empty(); 3],
        scratch_by_class: [None; 3],
        fixed_stack_slots: Vec::new(),
    }
}

/// What one regalloc2 algorithm did: best time of the repetitions, and its
/// inserted moves by kind.
struct Ra2Run {
    ms: f64,
    stores: usize,
    reloads: usize,
    moves: usize,
}

fn run_regalloc2(
    func: &Straight,
    env: &MachineEnv,
    algorithm: Algorithm,
    reps: usize,
) -> Result<Ra2Run, String> {
    let options = RegallocOptions {
        algorithm,
        ..RegallocOptions::default()
    };
    let mut best = f64::INFINITY;
    let mut output = None;
    for _ in 0..reps {
        let t = Instant::now();
        let out = regalloc2::run(func, env, &options).map_err(|e| e.to_string())?;
        best = best.min(t.elapsed().as_secs_f64() * 1e3);
        output = Some(out);
    }
    let out = output.expect("at least one repetition");
    let mut checker = Checker::new(func, env);
    checker.prepare(&out);
    checker
        .run()
        .map_err(|e| format!("regalloc2 checker ({algorithm:?}): {e:?}"))?;
    let (mut stores, mut reloads, mut moves) = (0, 0, 0);
    for (_, Edit::Move { from, to }) in &out.edits {
        match (kind(*from), kind(*to)) {
            (AllocationKind::Reg, AllocationKind::Stack) => stores += 1,
            (AllocationKind::Stack, AllocationKind::Reg) => reloads += 1,
            _ => moves += 1,
        }
    }
    Ok(Ra2Run {
        ms: best,
        stores,
        reloads,
        moves,
    })
}

fn kind(a: Allocation) -> AllocationKind {
    a.kind()
}

/// One problem's results from all four allocators.
struct Row {
    tensors: u32,
    peak: u32,
    bound: usize,
    psum: PsumRun,
    mincost: PsumRun,
    ion: Ra2Run,
    fast: Ra2Run,
}

/// Allocates one problem with all four, checking every output.
fn measure(n: u32, peak: u32, banks: u32, reps: usize) -> Row {
    let problem = Problem::generate(n, peak, 1);
    let bound = min_spills_one_bank(&problem.intervals(), banks)
        .expect("one-bank problem")
        .len();
    let module = problem.to_module(ARCH);
    // One thread, as Ion and fastalloc run.
    let one_thread = AllocOptions {
        parallel: false,
        ..AllocOptions::default()
    };
    let psum_with = |allocator| {
        let opts = AllocOptions {
            allocator,
            ..one_thread
        };
        let (run, result) = run_psum(&module, &opts, reps)
            .unwrap_or_else(|e| panic!("psum {allocator:?} on {n} tensors, peak {peak}: {e}"));
        if let Some(e) = verify(&module, &result).first_error() {
            panic!("psum {allocator:?} verify on {n} tensors, peak {peak}: {e}");
        }
        run
    };
    let func = Straight::new(&problem);
    let env = machine_env(banks);
    let ra2 = |algorithm| {
        run_regalloc2(&func, &env, algorithm, reps)
            .unwrap_or_else(|e| panic!("{n} tensors, peak {peak}: {e}"))
    };
    Row {
        tensors: n,
        peak,
        bound,
        ion: ra2(Algorithm::Ion),
        fast: ra2(Algorithm::Fastalloc),
        psum: psum_with(Allocator::Briggs),
        mincost: psum_with(Allocator::Mincost),
    }
}

/// `a / b` as a speed ratio.
fn ratio(a: f64, b: f64) -> String {
    format!("{:.2}×", a / b)
}

/// Spilled tensors over the lower bound, as a percentage excess.
fn excess(spilled: usize, bound: usize) -> f64 {
    if bound == 0 {
        if spilled == 0 {
            0.0
        } else {
            f64::INFINITY
        }
    } else {
        100.0 * (spilled as f64 - bound as f64) / bound as f64
    }
}

fn render(rows: &[Row], banks: u32, reps: usize) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "psum (briggs fast mode, mincost) vs regalloc2 {RA2_VERSION} (Ion, fastalloc) on straight-line one-bank \
         tensors, {banks} banks ({ARCH}), best of {reps} run(s); every output checked \
         (psum verify; regalloc2's checker)\n"
    );
    let _ = writeln!(
        s,
        "| tensors | peak demand | briggs | mincost | Ion | fastalloc | Ion / briggs | fastalloc / briggs | Ion / mincost | fastalloc / mincost |"
    );
    let _ = writeln!(s, "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    for r in rows {
        let _ = writeln!(
            s,
            "| {} | {} | {:.1} ms | {:.1} ms | {:.1} ms | {:.1} ms | {} | {} | {} | {} |",
            r.tensors,
            r.peak,
            r.psum.ms,
            r.mincost.ms,
            r.ion.ms,
            r.fast.ms,
            ratio(r.ion.ms, r.psum.ms),
            ratio(r.fast.ms, r.psum.ms),
            ratio(r.ion.ms, r.mincost.ms),
            ratio(r.fast.ms, r.mincost.ms)
        );
    }
    let _ = writeln!(
        s,
        "\n| tensors | peak demand | lower bound | briggs spilled | briggs saves + reloads | \
         mincost spilled | mincost saves + reloads | \
         Ion stores + reloads (moves) | fastalloc stores + reloads (moves) |"
    );
    let _ = writeln!(s, "|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    for r in rows {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} ({:+.1}%) | {} + {} | {} ({:+.1}%) | {} + {} | {} + {} ({}) | {} + {} ({}) |",
            r.tensors,
            r.peak,
            r.bound,
            r.psum.spilled,
            excess(r.psum.spilled, r.bound),
            r.psum.saves,
            r.psum.reloads,
            r.mincost.spilled,
            excess(r.mincost.spilled, r.bound),
            r.mincost.saves,
            r.mincost.reloads,
            r.ion.stores,
            r.ion.reloads,
            r.ion.moves,
            r.fast.stores,
            r.fast.reloads,
            r.fast.moves
        );
    }
    let _ = writeln!(s, "\nTargets:");
    let fits: Vec<&Row> = rows.iter().filter(|r| r.peak <= banks).collect();
    let spills: Vec<String> = fits.iter().map(|r| r.psum.spilled.to_string()).collect();
    let _ = writeln!(
        s,
        "- peak demand <= banks, psum spills nothing: {} (spilled {}; Ion stores {})",
        verdict(fits.iter().all(|r| r.psum.spilled == 0)),
        spills.join(", "),
        fits.iter()
            .map(|r| r.ion.stores.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let ratios: Vec<String> = rows.iter().map(|r| ratio(r.ion.ms, r.psum.ms)).collect();
    let _ = writeln!(
        s,
        "- psum faster than Ion at every size: {} (Ion / psum {})",
        verdict(rows.iter().all(|r| r.psum.ms < r.ion.ms)),
        ratios.join(", ")
    );
    let _ = writeln!(
        s,
        "- mincost faster than Ion and fastalloc at every size: {} (Ion / mincost {}; fastalloc / mincost {})",
        verdict(rows.iter().all(|r| r.mincost.ms < r.ion.ms.min(r.fast.ms))),
        rows.iter().map(|r| ratio(r.ion.ms, r.mincost.ms)).collect::<Vec<_>>().join(", "),
        rows.iter().map(|r| ratio(r.fast.ms, r.mincost.ms)).collect::<Vec<_>>().join(", ")
    );
    let over: Vec<&Row> = rows.iter().filter(|r| r.peak == 2 * banks).collect();
    let _ = writeln!(
        s,
        "- peak demand {}, psum spilled within 10% of the lower bound: {} ({})",
        2 * banks,
        verdict(over.iter().all(|r| excess(r.psum.spilled, r.bound) <= 10.0)),
        over.iter()
            .map(|r| format!("{:+.1}% at {}", excess(r.psum.spilled, r.bound), r.tensors))
            .collect::<Vec<_>>()
            .join(", ")
    );
    s
}

fn verdict(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "MISSED"
    }
}

const ARCH: &str = "trn1";
const RA2_VERSION: &str = "0.15.2";

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (sizes, reps): (&[u32], usize) = if full {
        (&[10_000, 100_000], 3)
    } else {
        (&[300], 1)
    };
    let banks = psum::arch::lookup(ARCH).expect("known arch").num_banks();
    let mut rows = Vec::new();
    for &n in sizes {
        for peak in [banks, 2 * banks] {
            rows.push(measure(n, peak, banks, reps));
        }
    }
    print!("{}", render(&rows, banks, reps));
    if !full {
        // The smoke check `cargo test` (in `benches/`) runs: exact spill counts on the small problem.
        for r in &rows {
            for (name, run) in [("briggs", &r.psum), ("mincost", &r.mincost)] {
                assert!(run.spilled >= r.bound, "{name} beat the lower bound");
                if r.peak <= banks {
                    assert_eq!(run.spilled, 0, "{name} spilled at peak {}", r.peak);
                }
            }
        }
    }
}
