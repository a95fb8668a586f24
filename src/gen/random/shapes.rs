//! The generator's vocabulary: the hardware sizes it draws within, a PSUM
//! tensor and the life being written ([`Psum`]), a statement not yet
//! emitted ([`Unit`]) and a loop an operand strides over ([`Strided`]).

use crate::arch::PSUM_BANK_SIZE;
use crate::ir::{InstKind, TensorId};

/// Bytes per partition of one PSUM bank.
pub(super) const BANK: u32 = PSUM_BANK_SIZE;
/// PE rows: the contraction (K) of the core's matmuls.
pub(super) const K_TILE: u32 = 128;
/// Most PSUM banks one read `act` sums: every instruction's operands then
/// fit PSUM on every generation (gen1 has four banks). Also the largest
/// tensor.
pub(super) const ACT_BANKS: u32 = 4;
/// A PSUM tensor of the program and the life being written.
#[derive(Clone, Copy, Debug)]
pub(super) struct Psum {
    pub(super) tensor: TensorId,
    pub(super) parts: u32,
    pub(super) bytes: u32,
    /// Banks it spans.
    pub(super) banks: u32,
    /// Banks it occupies (`aligned_bank_num`).
    pub(super) need: u32,
    /// 0 for the first life, 1 for the second.
    pub(super) life: u8,
}

/// A statement not yet emitted. Its accesses name loops by nesting depth at
/// emission, `VarId::new(d)` for the `d`-th enclosing loop (outermost 0),
/// so that variables enter the arena in program order when it is emitted.
pub(super) enum Unit {
    Inst(InstKind),
    Loop { trips: u32, body: Vec<Unit> },
}

/// A loop the operands of a matmul stride over: its depth and trip count.
#[derive(Clone, Copy, Debug)]
pub(super) struct Strided {
    pub(super) depth: usize,
    pub(super) trips: u32,
}
