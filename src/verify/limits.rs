//! What verification may cost (SPEC §5.4): every check executes both
//! programs instance by instance, so [`admit`] refuses, before anything
//! runs, a program with more dynamic instruction instances than `compile`
//! unrolls (§4.3), and for the exact simulator (§5.2, `--exact`) a run above
//! a work limit or one that would store more elements than
//! [`MAX_EXACT_CELLS`]. Costs are computed from the loop trip counts and the
//! constant access extents (§2.2), without executing anything.

use super::Simulator;
use crate::arch::{self, PSUM_BANK_SIZE};
use crate::ir::{Access, InstKind, Module, Visit};
use crate::unroll::{unrolled_count, UnrollError, MAX_UNROLLED_INSTS};

/// The default limit on the exact simulator's work (`--exact-limit`), in
/// element operations: ten billion, some seconds of multiply-adds.
pub const DEFAULT_EXACT_LIMIT: u128 = 10_000_000_000;

/// The most elements the exact simulator stores for the two programs
/// together (2 GiB of f64), whatever the work limit.
pub const MAX_EXACT_CELLS: u128 = 1 << 28;

/// Why verification refuses to run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    /// A program executes more instruction instances than `compile` unrolls.
    #[error("{error}")]
    Instructions {
        /// Whether the program is the result (else the original).
        result: bool,
        /// The count, as `compile` reports it.
        error: UnrollError,
    },
    /// The exact simulator's work is above the limit.
    #[error("the exact simulator would take {work} element operations (multiply-adds, element moves and stored elements of both programs), more than the limit of {limit}")]
    ExactWork {
        /// The work of both programs (saturating).
        work: u128,
        /// The limit.
        limit: u128,
    },
    /// The exact simulator would store more than [`MAX_EXACT_CELLS`] elements.
    #[error("the exact simulator would store {cells} elements of the two programs' tensors, more than the limit of {MAX_EXACT_CELLS}")]
    ExactStorage {
        /// Elements stored (saturating).
        cells: u128,
    },
}

/// Whether `original` and `result` may be verified with `simulator`;
/// `exact_limit` bounds the work of [`Simulator::Exact`] (`exact_work`).
pub fn admit(
    original: &Module,
    result: &Module,
    simulator: Simulator,
    exact_limit: u128,
) -> Result<(), LimitError> {
    admit_instances(original).map_err(|error| LimitError::Instructions {
        result: false,
        error,
    })?;
    admit_instances(result).map_err(|error| LimitError::Instructions {
        result: true,
        error,
    })?;
    if simulator == Simulator::Exact {
        let cells = stored_cells(original, false).saturating_add(stored_cells(result, true));
        if cells > MAX_EXACT_CELLS {
            return Err(LimitError::ExactStorage { cells });
        }
        let work = exact_work(original, false).saturating_add(exact_work(result, true));
        if work > exact_limit {
            return Err(LimitError::ExactWork {
                work,
                limit: exact_limit,
            });
        }
    }
    Ok(())
}

/// Whether `m` executes at most as many instruction instances as `compile`
/// unrolls (SPEC §4.3), which every check may visit one by one.
pub fn admit_instances(m: &Module) -> Result<(), UnrollError> {
    let count = unrolled_count(m);
    if count > MAX_UNROLLED_INSTS {
        return Err(UnrollError::TooManyInstructions { count });
    }
    Ok(())
}

/// The elements the exact simulator stores for `m`: every tensor's, and
/// with `physical` PSUM, the arch's physical PSUM instead of PSUM tensors'
/// (saturating).
pub(crate) fn stored_cells(m: &Module, physical: bool) -> u128 {
    let tensors = m
        .tensors
        .values()
        .filter(|t| !physical || t.mem != crate::ir::Mem::Psum);
    let own = tensors.fold(0u128, |acc, t| {
        acc.saturating_add(u128::from(t.partitions) * u128::from(t.elems()))
    });
    let psum = match arch::lookup(&m.arch) {
        Ok(a) if physical => {
            u128::from(a.num_banks()) * u128::from(a.psum().part_size) * u128::from(PSUM_BANK_SIZE)
        }
        _ => 0,
    };
    own.saturating_add(psum)
}

/// The exact simulator's work for `m` (SPEC §5.4), in element operations:
/// per instruction instance, K·M·N multiply-adds for a matmul, the
/// destination's elements for a memset, copy or DMA, times the sources for
/// an `act`, the sources' and the destination's for an `engine`; plus the
/// elements stored ([`stored_cells`]). Saturating.
pub(crate) fn exact_work(m: &Module, physical: bool) -> u128 {
    let elems = |a: &Access| {
        let ds = i64::from(m.tensor(a.tensor).dtype.size());
        u128::try_from(a.part_extent().max(0)).unwrap_or(0)
            * u128::try_from((a.byte_extent() / ds).max(0)).unwrap_or(0)
    };
    let mut total = stored_cells(m, physical);
    m.walk(|v, nest| {
        let Visit::Inst(i) = v else { return };
        let kind = &m.inst(i).kind;
        let dst = elems(kind.dst());
        let work = match kind {
            InstKind::Matmul(mm) => {
                let k = u128::try_from(mm.stationary.part_extent().max(0)).unwrap_or(0);
                let cols = |a: &Access| elems(a) / k.max(1);
                k.saturating_mul(cols(&mm.stationary))
                    .saturating_mul(cols(&mm.moving))
            }
            InstKind::Memset { .. } | InstKind::Copy { .. } | InstKind::Dma { .. } => dst,
            InstKind::Act { srcs, .. } => dst.saturating_mul(srcs.len() as u128),
            InstKind::Engine { srcs, .. } => {
                srcs.iter().fold(dst, |acc, s| acc.saturating_add(elems(s)))
            }
        };
        let trips = nest.iter().fold(1u128, |acc, &l| {
            acc.saturating_mul(u128::from(m.loop_(l).trip_count()))
        });
        total = total.saturating_add(work.saturating_mul(trips));
    });
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::parse;

    const LOOP: &str = "arch trn1\npsum acc [128, 2048]\nsbuf w [128, 256] bf16\n\
        sbuf x [128, 1024] bf16\nsbuf y [128, 2048]\nblock main {\n  loop k 0..3 {\n    \
        matmul acc <- w, x\n  }\n  act y <- acc, acc\n  engine y[0:1, 0:4] <- w[0:2, 0:4]\n}\n";

    #[test]
    fn exact_work_counts_each_instance() {
        let m = parse(LOOP).unwrap().module;
        let stored = 128 * 512 + 128 * 128 + 128 * 512 + 128 * 512;
        assert_eq!(stored_cells(&m, false), stored);
        // 3 matmuls of K=128, M=128, N=512; an act of two sources; an
        // engine of 4 source and 1 destination elements.
        let ops = 3 * 128 * 128 * 512 + 2 * 128 * 512 + 4 + 1;
        assert_eq!(exact_work(&m, false), stored + ops);
        let physical = stored - 128 * 512 + 8 * 128 * 2048;
        assert_eq!(stored_cells(&m, true), physical);
        let both = exact_work(&m, false) + exact_work(&m, true);
        assert_eq!(admit(&m, &m, Simulator::Exact, both), Ok(()));
        assert_eq!(
            admit(&m, &m, Simulator::Exact, both - 1),
            Err(LimitError::ExactWork {
                work: both,
                limit: both - 1
            })
        );
        assert_eq!(admit(&m, &m, Simulator::Symbolic, 0), Ok(()));
    }

    #[test]
    fn instance_and_storage_limits_refuse() {
        let long = LOOP.replace("0..3", "0..10000001");
        let m = parse(&long).unwrap().module;
        let short = parse(LOOP).unwrap().module;
        assert_eq!(
            admit(&short, &m, Simulator::Symbolic, 0),
            Err(LimitError::Instructions {
                result: true,
                error: UnrollError::TooManyInstructions { count: 10_000_003 }
            })
        );
        let big = LOOP.replace(
            "sbuf y [128, 2048]",
            "dram big [128, 4000000000] bf16\nsbuf y [128, 2048]",
        );
        let m = parse(&big).unwrap().module;
        let cells = stored_cells(&m, false) + stored_cells(&m, true);
        assert_eq!(
            cells,
            2 * 128 * 2_000_000_000 + stored_cells(&short, false) + stored_cells(&short, true)
        );
        assert_eq!(
            admit(&m, &m, Simulator::Exact, u128::MAX),
            Err(LimitError::ExactStorage { cells })
        );
        assert_eq!(admit(&m, &m, Simulator::Symbolic, 0), Ok(()));
    }
}
