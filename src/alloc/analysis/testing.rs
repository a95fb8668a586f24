//! Test support of the allocator's unit tests: analyzed random programs.

use super::Analysis;
use crate::alloc::linear::Linear;
use crate::alloc::liveness;
use crate::alloc::InputTensors;
use crate::gen::workloads::{random, RandomParams};

/// A `random` program of `tensors` mixed-bank tensors (with loops for an
/// odd `seed`), analyzed on all banks (no memloc split): the fixture of
/// the spill-code tests.
pub(crate) fn random_analyzed(tensors: u32, seed: u64) -> Analysis {
    let p = RandomParams {
        tensors,
        seed,
        loops: seed % 2 == 1,
        multi_bank: true,
        ..RandomParams::default()
    };
    let module = random(&p).unwrap();
    let arch = crate::arch::lookup(&module.arch).unwrap();
    let lin = Linear::new(&module);
    let live = liveness::live_ranges(&module, &lin, &arch, arch.num_banks()).unwrap();
    let input = InputTensors::new(Vec::new(), module.tensors.len());
    Analysis {
        module,
        arch,
        num_banks: arch.num_banks(),
        lin,
        live,
        input,
    }
}
