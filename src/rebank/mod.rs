//! Rotation (SPEC §3.12, psum's own): the pass between allocation and
//! unrolling that places the allocated program's PSUM tensors again so
//! that no value waits for a drain another bank could have spared it
//! (SPEC §10), without touching the spill code.
//!
//! Two moves, each making candidate programs: `place::rotate` puts every
//! tensor, in order of start, in the free block released longest ago; and
//! modulo variable expansion (`expand`) gives the tensors private to a
//! loop (`private`) k copies, iteration i using copy i mod k, before the
//! same placement. Each candidate is compiled the rest of the way (unroll,
//! legalize) and measured: fewest avoidable reuse edges first, then the
//! largest least slack, the fewest estimated cycles (SPEC §11), the fewest
//! copies. A candidate whose estimate exceeds the allocator's own
//! placement's is never taken, and the allocator's placement stands when
//! no candidate beats it. After the placement alone, every loop is
//! expanded at once, each by its trips or the banks the tensors live across
//! it leave free; then, while an avoidable edge is left, one loop at a time,
//! innermost first, those with a tensor that has a value in an avoidable
//! edge of the best candidate so far, each from the largest k (its trips or
//! the bank count, whichever is less) down while each k scores better than
//! the one above, and the best expansion is kept when it beats the best so
//! far. The work is bounded by [`BUDGET`] instructions.

mod expand;
mod place;
mod private;

use crate::alloc::{self, AllocOptions, AllocOutcome, TensorReport};
use crate::arch::{self, Arch};
use crate::entity::IdMap;
use crate::ir::{LoopId, Mem, Module, Stmt, TensorId, Visit};
use crate::{estimate, matmul, reuse, unroll};
use std::cmp::Reverse;

/// Instructions (unrolled, summed over every program the search compiles
/// or replays) the search may spend.
pub(crate) const BUDGET: u128 = 1 << 21;

/// How a candidate compiles: what the search compares, in this order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Score {
    avoidable: usize,
    /// The least slack, `u32::MAX` without edges; more is better.
    least_slack: Reverse<u32>,
    cycles: u64,
    copies: u64,
}

/// A candidate's score, and which tensors (by id) have a value in one of
/// its avoidable edges.
struct Scored {
    score: Score,
    involved: IdMap<TensorId, bool>,
}

/// The search's state: what it may still spend, and the context.
struct Search {
    arch: Arch,
    opts: AllocOptions,
    num_banks: u32,
    budget: u128,
}

impl Search {
    /// Spends `n` instructions of the budget; false when they are not left.
    fn spend(&mut self, n: u128) -> bool {
        match self.budget.checked_sub(n) {
            Some(left) => {
                self.budget = left;
                true
            }
            None => false,
        }
    }

    /// The score of `m` (placed) with `copies` tensor copies, and which
    /// tensors have a value in an avoidable edge; `None` when the budget is
    /// spent or `m` does not compile.
    fn score(&mut self, m: &Module, copies: u64) -> Option<Scored> {
        if !self.spend(unroll::unrolled_count(m)) {
            return None;
        }
        let mut u = unroll::unroll(m).ok()?;
        matmul::legalize_program(&mut u, &self.arch).ok()?;
        let r = reuse::analyze(&u, self.num_banks);
        let mut involved = IdMap::with_len(m.tensors.len(), false);
        for e in r.edges.iter().filter(|e| e.avoidable) {
            for v in [e.from, e.to] {
                involved[r.values[v].tensor] = true;
            }
        }
        let sum = r.summary();
        let score = Score {
            avoidable: sum.avoidable,
            least_slack: Reverse(sum.least_slack.unwrap_or(u32::MAX)),
            cycles: estimate::estimate(&u).ok()?.cycles,
            copies,
        };
        Some(Scored { score, involved })
    }

    /// `m` placed by rotation, compacted first when `compact` (after an
    /// expansion, which leaves unreachable statements), or `None` when a
    /// tensor finds no block or the program's live ranges would split a
    /// tensor anew.
    fn placed(&self, m: &Module, compact: bool) -> Option<Module> {
        let tensors = m.tensors.len();
        let m = if compact { m.compacted() } else { m.clone() };
        let a = alloc::analyze(m, &self.opts).ok()?;
        if a.module.tensors.len() != tensors {
            return None;
        }
        let banks = place::rotate(&a, self.num_banks)?;
        let mut out = a.module;
        place::apply(&mut out, &banks);
        Some(out)
    }
}

impl Search {
    /// Every loop of `m` with private tensors expanded at once, innermost
    /// first, each by its trips or the banks that the tensors live across
    /// all of it leave free, whichever is less; placed and scored, with the
    /// expanded program before placement.
    fn all_loops(&mut self, input: &Module, m: &Module) -> Option<(Scored, Module, Module)> {
        let a = alloc::analyze(m.clone(), &self.opts).ok()?;
        let mut out = m.clone();
        let mut within = inside(&out);
        let mut copies = 0;
        for l in loops_inside_out(m) {
            let trips = m.loop_(l).trip_count();
            let candidates = std::mem::take(&mut within[l]);
            if trips < 2 || candidates.is_empty() {
                continue;
            }
            let nodes = a.live.nodes.len() as u128;
            if !self.spend(unroll::unrolled_count(&out) + nodes) {
                break;
            }
            let (header, end) = (a.lin.header[l], a.lin.end[l]);
            let held: u32 = (a.live.nodes.values())
                .filter(|n| n.start <= header && n.end >= end)
                .map(|n| n.banks)
                .sum();
            let k = trips.min(u64::from(self.num_banks.saturating_sub(held)));
            if k < 2 {
                continue;
            }
            let private = private::private_tensors(&out, l, k, &candidates);
            if !private.is_empty() && expand::expand(&mut out, input, l, k, &private, true) {
                copies += (k - 1 + trips % k) * private.len() as u64;
                within = inside(&out);
            }
        }
        if copies == 0 {
            return None;
        }
        let p = self.placed(&out, true)?;
        let s = self.score(&p, copies)?;
        Some((s, p, out))
    }
}

/// The loops of `m` innermost first (post-order), with labels nowhere in
/// them (replicas would repeat a label).
fn loops_inside_out(m: &Module) -> Vec<LoopId> {
    fn visit(m: &Module, body: &[Stmt], out: &mut Vec<LoopId>) -> bool {
        let mut labelled = false;
        for s in body {
            match *s {
                Stmt::Inst(i) => {
                    let inst = m.inst(i);
                    labelled |= inst.label().is_some() || inst.after().is_some();
                }
                Stmt::Loop(l) => {
                    let inner = visit(m, &m.loop_(l).body, out);
                    if !inner {
                        out.push(l);
                    }
                    labelled |= inner;
                }
            }
        }
        labelled
    }
    let mut out = Vec::new();
    for b in &m.blocks {
        visit(m, &b.body, &mut out);
    }
    out
}

/// For each loop (by id), the PSUM tensors whose every access lies in it:
/// the tensors that may be private to it.
fn inside(m: &Module) -> IdMap<LoopId, Vec<TensorId>> {
    let mut by_loop = IdMap::with_len(m.loops.len(), Vec::new());
    for (t, loops) in enclosing_loops(m).iter() {
        for &l in loops.iter().flatten() {
            by_loop[l].push(t);
        }
    }
    by_loop
}

/// For each PSUM tensor, the loops around every one of its accesses
/// (outermost first): the loops it may be private to.
fn enclosing_loops(m: &Module) -> IdMap<TensorId, Option<Vec<LoopId>>> {
    let mut common: IdMap<TensorId, Option<Vec<LoopId>>> = IdMap::with_len(m.tensors.len(), None);
    m.walk(|v, nest| {
        let Visit::Inst(i) = v else {
            return;
        };
        let kind = &m.inst(i).kind;
        let mut note = |t: TensorId| {
            if m.tensor(t).mem != Mem::Psum {
                return;
            }
            let c = &mut common[t];
            match c {
                None => *c = Some(nest.to_vec()),
                Some(prefix) => {
                    let keep = prefix.iter().zip(nest).take_while(|(a, b)| a == b).count();
                    prefix.truncate(keep);
                }
            }
        };
        note(kind.dst().tensor);
        kind.for_each_src(|a| note(a.tensor));
    });
    common
}

/// Rotates the placement of `outcome` (the allocation of `input`, SPEC
/// §3.12): replaces its program and the rows of its report when a
/// candidate beats the allocator's placement; the spill code, the spill
/// cost and the log stay as they are.
pub(crate) fn rotate(input: &Module, outcome: &mut AllocOutcome, opts: &AllocOptions) {
    let Ok(arch) = arch::lookup(&outcome.module.arch) else {
        return;
    };
    let num_banks = outcome.report.num_banks;
    let mut search = Search {
        arch,
        opts: AllocOptions {
            psum_banks: Some(num_banks),
            parallel: false,
            ..*opts
        },
        num_banks,
        budget: BUDGET,
    };
    let Some(base) = search.score(&outcome.module, 0) else {
        return;
    };
    let base_cycles = base.score.cycles;
    // The best candidate so far: its score, which tensors its avoidable
    // edges involve, and the placed program (`None`: the allocator's).
    let mut best: (Scored, Option<Module>) = (base, None);
    let beats = |s: &Score, best: &Score| s.cycles <= base_cycles && s < best;
    if let Some(p) = search.placed(&outcome.module, false) {
        if let Some(s) = search
            .score(&p, 0)
            .filter(|s| beats(&s.score, &best.0.score))
        {
            best = (s, Some(p));
        }
    }
    let mut current = outcome.module.clone();
    let mut copies = 0;
    if best.0.score.avoidable > 0 {
        if let Some((s, p, expanded)) = search.all_loops(input, &current) {
            if beats(&s.score, &best.0.score) {
                copies = s.score.copies;
                current = expanded;
                best = (s, Some(p));
            }
        }
    }
    let mut within = inside(&current);
    for l in loops_inside_out(&current) {
        if best.0.score.avoidable == 0 {
            break;
        }
        let trips = current.loop_(l).trip_count();
        let candidates = std::mem::take(&mut within[l]);
        let involved = |t: &TensorId| best.0.involved.get(*t).copied().unwrap_or(false);
        if trips < 2 || !candidates.iter().any(involved) {
            continue;
        }
        // From the largest k down, while each k scores better than the last.
        let mut chosen: Option<(Scored, Module, Module)> = None;
        let mut last: Option<Score> = None;
        for k in (2..=trips.min(u64::from(num_banks))).rev() {
            if !search.spend(unroll::unrolled_count(&current)) {
                break;
            }
            let private = private::private_tensors(&current, l, k, &candidates);
            if private.is_empty() {
                continue;
            }
            let added = copies + (k - 1 + trips % k) * private.len() as u64;
            let placed = [true, false].into_iter().find_map(|inline| {
                let mut expanded = current.clone();
                expand::expand(&mut expanded, input, l, k, &private, inline);
                Some((search.placed(&expanded, true)?, expanded))
            });
            let Some((p, expanded)) = placed else {
                continue;
            };
            let Some(s) = search.score(&p, added) else {
                break;
            };
            if last.is_some_and(|l| s.score > l) {
                break;
            }
            last = Some(s.score);
            let better = chosen.as_ref().is_none_or(|c| s.score < c.0.score);
            if beats(&s.score, &best.0.score) && better {
                chosen = Some((s, p, expanded));
            }
        }
        if let Some((s, p, expanded)) = chosen {
            copies = s.score.copies;
            current = expanded;
            best = (s, Some(p));
            within = inside(&current);
        }
    }
    if let (_, Some(m)) = best {
        let expanded = copies > 0;
        let old = std::mem::take(&mut outcome.report.tensors);
        outcome.report.tensors = rows(&m, &old, expanded, &search.opts);
        outcome.module = m;
    }
}

/// The report rows of the rotated program `m` (SPEC §6 `tensors`): banks
/// from `m`; intervals and spill marks as `old` has them, or, when loops
/// were expanded, intervals of `m`'s own live ranges, a copy marked
/// spilled as its tensor is.
fn rows(
    m: &Module,
    old: &[TensorReport],
    expanded: bool,
    opts: &AllocOptions,
) -> Vec<TensorReport> {
    let arch = arch::lookup(&m.arch).ok();
    let analysis = if expanded {
        alloc::analyze(m.clone(), opts).ok()
    } else {
        None
    };
    let interval_of = |t: TensorId| {
        let a = analysis.as_ref()?;
        let n = a.live.nodes.values().find(|n| n.tensor == t)?;
        Some([n.start, n.end])
    };
    let by_name: std::collections::HashMap<&str, &TensorReport> =
        old.iter().map(|r| (r.name.as_str(), r)).collect();
    (m.tensors.values().enumerate())
        .filter(|(_, t)| t.mem == Mem::Psum)
        .map(|(i, t)| {
            let base = by_name.get(t.name.as_str()).copied();
            let banks = arch.map_or(0, |a| a.aligned_bank_num(a.bank_num(u64::from(t.bytes))));
            TensorReport {
                name: t.name.clone(),
                bank: t.bank,
                banks,
                interval: if expanded {
                    interval_of(TensorId::new(i))
                } else {
                    base.and_then(|b| b.interval)
                },
                spilled: base.is_some_and(|b| b.spilled),
            }
        })
        .collect()
}
