//! psum against regalloc2 on the same problems (issue #8; `psum bench --peers`).
//!
//! Each [`Problem`] (straight-line one-bank tensors, each defined once and
//! used one to three times) is allocated in one process by psum's fast mode,
//! regalloc2's Ion and regalloc2's fastalloc. For regalloc2 the problem is a
//! one-block `Function`: a def of vreg `t` per `Step::Def(t)`, a register use
//! per `Step::Use(t)`, then a return; one register class (`Int`) with as many
//! registers as banks, spill slots of size 1. Every regalloc2 output goes
//! through regalloc2's own checker before it is counted.
//!
//! `cargo bench --bench peers` (cargo passes `--bench`) prints the full table
//! at 10k and 100k tensors; run without `--bench` (as `cargo test` does) it
//! checks one small problem per peak demand and prints its rows.

use psum::peers::{Problem, Step};
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

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (sizes, reps): (&[u32], usize) = if full {
        (&[10_000, 100_000], 3)
    } else {
        (&[1_000], 1)
    };
    let banks = 8;
    let env = machine_env(banks);
    for &n in sizes {
        for peak in [8, 16] {
            let problem = Problem::generate(n, peak, 1);
            let func = Straight::new(&problem);
            for algorithm in [Algorithm::Ion, Algorithm::Fastalloc] {
                let r =
                    run_regalloc2(&func, &env, algorithm, reps).unwrap_or_else(|e| panic!("{e}"));
                println!(
                    "{n} {peak} {algorithm:?} {:.2} ms stores {} reloads {} moves {}",
                    r.ms, r.stores, r.reloads, r.moves
                );
            }
        }
    }
}
