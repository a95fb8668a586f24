//! The rotating placement of SPEC §3.12: every PSUM tensor of an allocated
//! program is placed again, in order of the start of its live range (§3.3),
//! in the free aligned block whose banks were released longest ago (a bank
//! never used before first, then the block whose latest release is the
//! earliest; ties: the lowest base). A tensor that finds no free block
//! leaves the program as it was.

use crate::alloc::Analysis;
use crate::arch::bank_alignment;
use crate::entity::IdMap;
use crate::ir::{Module, TensorId};

/// The banks of `a`'s nodes placed by rotation on `num_banks` banks, by
/// tensor (`None` for a tensor that is no node), or `None` when some node
/// finds no free block.
pub(crate) fn rotate(a: &Analysis, num_banks: u32) -> Option<IdMap<TensorId, Option<u32>>> {
    let nodes = a.live.nodes.as_slice();
    let mut order: Vec<usize> = (0..nodes.len()).collect();
    order.sort_by_key(|&n| (nodes[n].start, n));
    let lanes = num_banks as usize;
    // Per bank: the end of its holder, and the end of its last holder (-1: never used).
    let mut held: Vec<Option<u32>> = vec![None; lanes];
    let mut released: Vec<i64> = vec![-1; lanes];
    let mut banks = IdMap::with_len(a.module.tensors.len(), None);
    for n in order {
        let node = &nodes[n];
        for b in 0..lanes {
            if let Some(end) = held[b].filter(|&e| e < node.start) {
                released[b] = i64::from(end);
                held[b] = None;
            }
        }
        let size = node.banks.max(1);
        let align = bank_alignment(size).max(1);
        let best = (0..num_banks)
            .step_by(align as usize)
            .filter(|&base| base + size <= num_banks)
            .filter(|&base| (base..base + size).all(|b| held[b as usize].is_none()))
            .min_by_key(|&base| {
                let latest = (base..base + size).map(|b| released[b as usize]).max();
                (latest, base)
            })?;
        for b in best..best + size {
            held[b as usize] = Some(node.end);
        }
        banks[node.tensor] = Some(best);
    }
    Some(banks)
}

/// Writes `banks` into `m` (tensors with `None` keep theirs).
pub(crate) fn apply(m: &mut Module, banks: &IdMap<TensorId, Option<u32>>) {
    for (t, b) in m.tensors.values_mut().zip(banks.values()) {
        if b.is_some() {
            t.bank = *b;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc::{analyze, AllocOptions};

    /// Five one-bank tensors one after another, then two side by side.
    const SRC: &str = "arch trn1\npsum a [128, 2048]\npsum b [128, 2048]\npsum c [128, 2048]\n\
        psum d [128, 2048]\npsum e [128, 4096]\npsum f [128, 2048]\nsbuf w [128, 256] bf16\n\
        sbuf x [128, 1024] bf16\nsbuf y [128, 4096]\nblock main {\n  matmul a <- w, x\n  act y[0:128, 0:2048] <- a\n  \
        matmul b <- w, x\n  act y[0:128, 0:2048] <- b\n  matmul c <- w, x\n  act y[0:128, 0:2048] <- c\n  \
        matmul d <- w, x\n  act y[0:128, 0:2048] <- d\n  matmul f <- w, x\n  \
        matmul e[0:128, 0:2048] <- w, x\n  matmul e[0:128, 2048:4096] <- w, x\n  act y <- e\n  act y[0:128, 0:2048] <- f\n}\n";

    fn placed(banks: u32) -> Option<Vec<Option<u32>>> {
        let m = crate::text::parse(SRC).unwrap().module;
        let opts = AllocOptions {
            psum_banks: Some(banks),
            ..AllocOptions::default()
        };
        let placed = rotate(&analyze(m, &opts).unwrap(), banks)?;
        Some(placed.values().copied().collect())
    }

    #[test]
    fn every_bank_is_used_before_one_is_used_again() {
        // a, b, c, d take banks 0-3 never used before; f the one released
        // longest ago (0); e two banks aligned to 2: 2-3 were released
        // before 0-1 (held by f) could be.
        assert_eq!(
            placed(4).unwrap()[..6],
            [Some(0), Some(1), Some(2), Some(3), Some(2), Some(0)]
        );
        // With eight banks f and e take never-used banks.
        assert_eq!(
            placed(8).unwrap()[..6],
            [Some(0), Some(1), Some(2), Some(3), Some(6), Some(4)]
        );
    }

    #[test]
    fn a_tensor_without_a_free_block_leaves_the_placement_alone() {
        // f holds one bank of two while e needs an aligned pair.
        assert_eq!(placed(2), None);
    }
}
