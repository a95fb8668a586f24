//! Aligned-block placement (SPEC §3.7): a node of `liveN` banks takes an
//! aligned block of them. Three ways to choose blocks share this module:
//! mincost's buddy choice of one free block ([`free_block`], by bit masks
//! of the banks held, [`block`]), exact's search over every base for every
//! live range ([`place_all`]), and the check that a placement fits
//! ([`fits`]).

use super::liveness::Node;
use crate::arch::bank_alignment;
use std::collections::HashSet;

/// The aligned block of `banks` banks from bank `base`, as a bit mask.
pub(super) fn block(base: u32, banks: u32) -> u64 {
    (u64::MAX >> (64 - banks)) << base
}

/// The free aligned block of `banks` banks (of `num_banks`, `busy` held)
/// a piece takes, by its base: the one whose enclosing block of twice its
/// size is the fullest, then of four times, and so on; among equals, the
/// highest when `high`, else the lowest. `None` when none is free.
pub(super) fn free_block(busy: u64, banks: u32, high: bool, num_banks: u32) -> Option<u32> {
    if banks > num_banks {
        return None;
    }
    let align = bank_alignment(banks);
    let mut best: Option<([u8; 8], u32)> = None;
    for b in (0..=num_banks.saturating_sub(banks)).step_by(align as usize) {
        if busy & block(b, banks) != 0 {
            continue;
        }
        let mut held = [0u8; 8];
        let mut size = 2 * align;
        for h in &mut held {
            if size / 2 >= num_banks {
                break;
            }
            let lo = b - b % size;
            let hi = (lo + size).min(num_banks);
            *h = (busy & block(lo, hi - lo)).count_ones() as u8;
            size *= 2;
        }
        if best.is_none_or(|(h, _)| held > h || (held == h && high)) {
            best = Some((held, b));
        }
    }
    best.map(|(_, b)| b)
}

/// Whether giving `nodes` the base banks `bank` puts no two live ranges
/// that meet on a common bank.
pub(super) fn fits(nodes: &[Node], bank: &[Option<u32>], num_banks: u32) -> bool {
    let mut order: Vec<usize> = (0..nodes.len()).collect();
    order.sort_by_key(|&v| nodes[v].start);
    let mut busy_until: Vec<Option<u32>> = vec![None; num_banks as usize];
    for v in order {
        let (n, Some(b)) = (&nodes[v], bank[v]) else {
            return false;
        };
        if b % bank_alignment(n.banks) != 0 || b + n.banks > num_banks {
            return false;
        }
        for x in b..b + n.banks {
            let slot = &mut busy_until[x as usize];
            if slot.is_some_and(|e| e >= n.start) {
                return false;
            }
            *slot = Some(slot.map_or(n.end, |e| e.max(n.end)));
        }
    }
    true
}

/// A placement of every node of `nodes` in aligned banks, trying every
/// base for each node in order of start, or `None` when there is none.
/// A state known to fail (the next node, and when each bank is free
/// again) is not tried twice.
pub(super) fn place_all(nodes: &[Node], num_banks: u32) -> Option<Vec<Option<u32>>> {
    let mut order: Vec<usize> = (0..nodes.len()).collect();
    order.sort_by_key(|&v| (nodes[v].start, v));
    let mut p = Placer {
        order,
        nodes,
        num_banks,
        busy: vec![None; num_banks as usize],
        bank: vec![None; nodes.len()],
        failed: HashSet::new(),
    };
    p.place_from(0).then_some(p.bank)
}

/// The state of [`place_all`]'s search.
struct Placer<'a> {
    order: Vec<usize>,
    nodes: &'a [Node],
    num_banks: u32,
    /// The last point of each bank's current holder.
    busy: Vec<Option<u32>>,
    bank: Vec<Option<u32>>,
    /// States from which no placement exists: the next node's position
    /// and each bank's holder's last point (`None`: free at its start).
    failed: HashSet<(usize, Vec<Option<u32>>)>,
}

impl Placer<'_> {
    fn place_from(&mut self, i: usize) -> bool {
        let Some(&v) = self.order.get(i) else {
            return true;
        };
        let n = self.nodes[v];
        if n.banks > self.num_banks {
            return false;
        }
        let state: Vec<Option<u32>> = (self.busy.iter())
            .map(|e| e.filter(|&e| e >= n.start))
            .collect();
        if self.failed.contains(&(i, state.clone())) {
            return false;
        }
        let step = bank_alignment(n.banks) as usize;
        for b in (0..=self.num_banks - n.banks).step_by(step) {
            let block = b as usize..(b + n.banks) as usize;
            if state[block.clone()].iter().any(Option::is_some) {
                continue;
            }
            let saved: Vec<Option<u32>> = self.busy[block.clone()].to_vec();
            self.busy[block.clone()].fill(Some(n.end));
            self.bank[v] = Some(b);
            if self.place_from(i + 1) {
                return true;
            }
            self.busy[block].copy_from_slice(&saved);
        }
        self.bank[v] = None;
        self.failed.insert((i, state));
        false
    }
}
