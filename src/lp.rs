//! The least split spill cost as a 0-1 linear program (`psum export
//! --split-lp`), in the CPLEX LP format that MILP solvers read (HiGHS,
//! CBC, SCIP, GLPK, Gurobi, CPLEX).
//!
//! Split spilling (SPEC §3.11) leaves a node out of PSUM over whole idle
//! ranges: it pays its save once and the reload after each range it lets
//! go, and holds its banks over its held stretches and the idle ranges it
//! keeps. The program is:
//!
//! - a binary `y<v>` per node `v` with an idle range (it is spilled), and
//!   `x<v>_<k>` per idle range `k` of `v` (let go), `x<v>_<k> ≤ y<v>`;
//! - per stretch of points where the held stretches and idle ranges over
//!   it hold more than `numBanks` banks, the idle ranges let go free at
//!   least the excess;
//! - the same in aligned blocks, for each block size `s` = 2, 4, … up to
//!   `numBanks` rounded up to a power of two: a node of more than `s / 2`
//!   banks is aligned to at least `s` (SPEC §1), so it starts where a
//!   block starts and keeps `⌈banks / s⌉` blocks from every other such
//!   node; over each point those nodes keep at most `⌈numBanks / s⌉`
//!   blocks;
//! - minimise `Σ save · y + Σ reload · x` (`--objective count`: `Σ y`, the
//!   fewest tensors spilled).
//!
//! With one-bank nodes any choice that meets the rows is placed by
//! colouring the intervals in order of start, so the optimum is the least
//! split spill cost. With larger nodes the rows count banks and blocks
//! point by point, but a piece keeps its banks while it lasts, so a choice
//! that meets them may still not be placed (fragmentation); and where some
//! node's spill code depends on loops (a save or a reload hoisted out of a
//! loop stretches its range) the spans relax it. The optimum is then a
//! lower bound, and the file's header says so. The stretches of points
//! are cut where a span starts or ends and merged while no idle range
//! starts or ends, so each row is one set of idle ranges, needing its
//! largest excess.

use crate::alloc::AllocProblem;
use crate::arch::{aligned_blocks, block_sizes};
use std::fmt::Write as _;
use std::ops::Range;
use thiserror::Error;

/// What the program minimises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Objective {
    /// The total spill cost in cycles (saves and reloads, SPEC §3.5).
    Cost,
    /// The number of tensors spilled.
    Count,
}

/// Why a problem has no split-spilling program.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum LpError {
    /// What no spilling removes exceeds the banks.
    #[error("what stays in PSUM even when spilled needs {needed} banks at point {point}, more than the {num_banks} there are")]
    Overfull {
        /// The first point where it does.
        point: u32,
        /// Banks needed there.
        needed: u32,
        /// Banks available.
        num_banks: u32,
    },
    /// What no spilling removes needs more aligned blocks than there are.
    #[error("what stays in PSUM even when spilled needs {needed} aligned blocks of {size} banks at point {point}, more than the {blocks} there are")]
    Unaligned {
        /// The first point where it does.
        point: u32,
        /// The block size.
        size: u32,
        /// Blocks needed there.
        needed: u32,
        /// Blocks of that size in the banks.
        blocks: u32,
    },
}

/// One node of the program: its tensor, its save and its idle ranges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LpNode {
    /// The node's tensor name.
    pub name: String,
    /// What its save costs.
    pub save: u64,
    /// Its idle ranges, in [`SplitLp::ranges`].
    pub ranges: Range<usize>,
}

/// One constraint: over the points `first..=last`, the idle ranges let go
/// of `ranges` (indices into [`SplitLp::ranges`]) free at least `need`
/// aligned blocks of `size` banks (banks when `size` is 1), each range
/// [`Row::coefficient`] of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// First point.
    pub first: u32,
    /// Last point.
    pub last: u32,
    /// The block size the row counts in.
    pub size: u32,
    /// The idle ranges over these points, each of a node of more than
    /// half a block.
    pub ranges: Vec<usize>,
    /// Blocks they must free.
    pub need: u32,
}

impl Row {
    /// The blocks of the row's size a node of `banks` banks keeps from
    /// every other node of more than half a block: `⌈banks / size⌉`, or 0
    /// when it has at most half a block.
    pub fn coefficient(&self, banks: u32) -> u32 {
        aligned_blocks(banks, self.size)
    }
}

/// The split-spilling problem of a program as a 0-1 program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitLp {
    /// The arch codename.
    pub arch: String,
    /// Banks available.
    pub num_banks: u32,
    /// Whether every node holds one bank.
    pub one_bank: bool,
    /// Whether no node's spill code depends on loops.
    pub loop_free: bool,
    /// The nodes, in node order.
    pub nodes: Vec<LpNode>,
    /// Every idle range: its closed point range, its node and the reload
    /// its going costs.
    pub ranges: Vec<IdleRange>,
    /// The constraints: the bank rows in point order, then the rows of
    /// each block size, the smallest first.
    pub rows: Vec<Row>,
}

/// One idle range of a node ([`SplitLp::ranges`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdleRange {
    /// First point.
    pub lo: u32,
    /// Last point.
    pub hi: u32,
    /// Its node, in [`SplitLp::nodes`].
    pub node: usize,
    /// Banks its node holds.
    pub banks: u32,
    /// What the reload after it costs.
    pub reload: u64,
}

impl SplitLp {
    /// The program of `p`'s first iteration.
    pub fn new(p: &AllocProblem) -> Result<SplitLp, LpError> {
        let mut nodes = Vec::with_capacity(p.buffers.len());
        let mut ranges = Vec::new();
        for (v, (b, s)) in p.buffers.iter().zip(&p.split).enumerate() {
            let from = ranges.len();
            ranges.extend(s.idle.iter().map(|&((lo, hi), reload)| IdleRange {
                lo,
                hi,
                node: v,
                banks: b.interval.banks,
                reload,
            }));
            nodes.push(LpNode {
                name: b.id.clone(),
                save: s.save,
                ranges: from..ranges.len(),
            });
        }
        let held: Vec<((u32, u32), u32)> = (p.buffers.iter().zip(&p.split))
            .flat_map(|(b, s)| s.held.iter().map(|&span| (span, b.interval.banks)))
            .collect();
        let mut rows = Vec::new();
        for size in block_sizes(p.num_banks) {
            rows.extend(rows_of_size(&held, &ranges, p.num_banks, size)?);
        }
        let one_bank = p.buffers.iter().all(|b| b.interval.banks == 1);
        Ok(SplitLp {
            arch: p.arch.clone(),
            num_banks: p.num_banks,
            one_bank,
            loop_free: p.split_exact,
            nodes,
            ranges,
            rows,
        })
    }

    /// The program in CPLEX LP format, minimising `objective`.
    pub fn render(&self, objective: Objective) -> String {
        let mut out = String::new();
        let what = match objective {
            Objective::Cost => "the least split spill cost in cycles",
            Objective::Count => "the fewest tensors spilled under split spilling",
        };
        let _ = writeln!(out, "\\ psum split-spilling program (SPEC 3.11): {what}");
        let _ = writeln!(
            out,
            "\\ {}, {} banks, {} nodes, {} idle ranges",
            self.arch,
            self.num_banks,
            self.nodes.len(),
            self.ranges.len()
        );
        if self.exact() {
            out.push_str("\\ exact: one-bank nodes, no spill code depends on loops\n");
        }
        if !self.one_bank {
            out.push_str(
                "\\ a lower bound: rows count banks and aligned blocks, not fragmentation\n",
            );
        }
        if !self.loop_free {
            out.push_str("\\ a lower bound: some spill code depends on loops\n");
        }
        let _ = writeln!(
            out,
            "\\ y<v>: node v spilled; x<v>_<k>: its k-th idle range out of PSUM"
        );
        let spillable = || (self.nodes.iter().enumerate()).filter(|(_, n)| !n.ranges.is_empty());
        for (v, n) in spillable() {
            let _ = writeln!(out, "\\ y{v}: {}", n.name);
        }
        out.push_str("Minimize\n obj:");
        let mut terms = Terms::new(&mut out);
        for (v, n) in spillable() {
            match objective {
                Objective::Cost => {
                    terms.add(&format!("{} y{v}", n.save));
                    for (k, r) in self.ranges[n.ranges.clone()].iter().enumerate() {
                        terms.add(&format!("{} x{v}_{k}", r.reload));
                    }
                }
                Objective::Count => terms.add(&format!("y{v}")),
            }
        }
        terms.finish();
        out.push_str("\nSubject To\n");
        for row in &self.rows {
            let _ = match row.size {
                1 => write!(out, " p{}_{}:", row.first, row.last),
                size => write!(out, " p{}_{}_by{size}:", row.first, row.last),
            };
            let mut terms = Terms::new(&mut out);
            for &r in &row.ranges {
                match row.coefficient(self.ranges[r].banks) {
                    1 => terms.add(&self.var(r)),
                    c => terms.add(&format!("{c} {}", self.var(r))),
                }
            }
            terms.finish();
            let _ = writeln!(out, " >= {}", row.need);
        }
        for (v, n) in spillable() {
            for (k, r) in n.ranges.clone().enumerate() {
                let _ = writeln!(out, " g{v}_{k}: {} - y{v} <= 0", self.var(r));
            }
        }
        out.push_str("Binaries\n");
        for (v, n) in spillable() {
            let _ = write!(out, " y{v}");
            for k in 0..n.ranges.len() {
                let _ = write!(out, " x{v}_{k}");
            }
            out.push('\n');
        }
        out.push_str("End\n");
        out
    }

    /// Whether the optimum is the least split spill cost, rather than a
    /// lower bound on it: every node holds one bank (so any choice that
    /// meets the rows is placed) and no spill code depends on loops.
    pub fn exact(&self) -> bool {
        self.one_bank && self.loop_free
    }

    /// The variable of idle range `r`.
    fn var(&self, r: usize) -> String {
        let v = self.ranges[r].node;
        format!("x{v}_{}", r - self.nodes[v].ranges.start)
    }
}

/// A sum of terms written a few to a line, each line after the first
/// indented (an LP file's lines continue until the next keyword or name).
struct Terms<'a> {
    out: &'a mut String,
    on_line: usize,
    any: bool,
}

impl<'a> Terms<'a> {
    /// Terms on a line at most.
    const PER_LINE: usize = 8;

    fn new(out: &'a mut String) -> Self {
        Terms {
            out,
            on_line: 0,
            any: false,
        }
    }

    fn add(&mut self, term: &str) {
        if self.on_line == Self::PER_LINE {
            self.out.push_str("\n ");
            self.on_line = 0;
        }
        self.out.push_str(if self.any { " + " } else { " " });
        self.out.push_str(term);
        self.on_line += 1;
        self.any = true;
    }

    /// Ends the sum (an empty one is 0).
    fn finish(self) {
        if !self.any {
            self.out.push_str(" 0");
        }
    }
}

/// The constraints in blocks of `size` banks of `held` stretches (with
/// their banks) and idle `ranges` on `num_banks` banks (see the module
/// doc).
fn rows_of_size(
    held: &[((u32, u32), u32)],
    ranges: &[IdleRange],
    num_banks: u32,
    size: u32,
) -> Result<Vec<Row>, LpError> {
    let held: Vec<((u32, u32), u32)> = (held.iter())
        .map(|&(span, banks)| (span, aligned_blocks(banks, size)))
        .filter(|&(_, b)| b > 0)
        .collect();
    let counted: Vec<usize> = (0..ranges.len())
        .filter(|&r| aligned_blocks(ranges[r].banks, size) > 0)
        .collect();
    let idle = (counted.iter()).map(|&r| {
        (
            (ranges[r].lo, ranges[r].hi),
            aligned_blocks(ranges[r].banks, size),
        )
    });
    let mut cuts: Vec<u32> = (held.iter().copied().chain(idle.clone()))
        .flat_map(|((lo, hi), _)| [lo, hi + 1])
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    let at = |p: u32| cuts.binary_search(&p).expect("every end is a cut");
    // Per cut: the change in blocks of held stretches and of idle ranges
    // there, and whether an idle range starts or ends there.
    let mut held_delta = vec![0i64; cuts.len()];
    let mut idle_delta = vec![0i64; cuts.len()];
    let mut idle_edge = vec![false; cuts.len()];
    for &((lo, hi), banks) in &held {
        held_delta[at(lo)] += i64::from(banks);
        held_delta[at(hi + 1)] -= i64::from(banks);
    }
    for ((lo, hi), banks) in idle {
        for (c, d) in [(at(lo), 1), (at(hi + 1), -1)] {
            idle_delta[c] += d * i64::from(banks);
            idle_edge[c] = true;
        }
    }
    let k = i64::from(num_banks.div_ceil(size));
    let (mut held_now, mut idle_now) = (0i64, 0i64);
    let mut rows: Vec<Row> = Vec::new();
    // The row of each stretch between cuts, if it is over the banks.
    let mut row_of: Vec<Option<usize>> = vec![None; cuts.len()];
    for c in 0..cuts.len().saturating_sub(1) {
        held_now += held_delta[c];
        idle_now += idle_delta[c];
        if held_now > k {
            let (point, needed) = (cuts[c], held_now as u32);
            return Err(match size {
                1 => LpError::Overfull {
                    point,
                    needed,
                    num_banks,
                },
                _ => LpError::Unaligned {
                    point,
                    size,
                    needed,
                    blocks: num_banks.div_ceil(size),
                },
            });
        }
        let excess = held_now + idle_now - k;
        if excess <= 0 {
            continue;
        }
        let last = cuts[c + 1] - 1;
        let open = rows
            .last_mut()
            .filter(|r| !idle_edge[c] && r.last + 1 == cuts[c]);
        match open {
            Some(row) => {
                row.last = last;
                row.need = row.need.max(excess as u32);
            }
            None => rows.push(Row {
                first: cuts[c],
                last,
                size,
                ranges: Vec::new(),
                need: excess as u32,
            }),
        }
        row_of[c] = Some(rows.len() - 1);
    }
    for &r in &counted {
        let range = &ranges[r];
        let mut last_row = None;
        for &row in row_of[at(range.lo)..at(range.hi + 1)].iter().flatten() {
            if last_row != Some(row) {
                rows[row].ranges.push(r);
                last_row = Some(row);
            }
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc::{Buffer, Interval, SplitSpans};

    /// A node's held stretches, its idle ranges with their reloads, and its
    /// save.
    type Spans<'a> = (&'a [(u32, u32)], &'a [((u32, u32), u64)], u64);

    /// A problem of one-bank nodes on `num_banks` banks.
    fn problem(num_banks: u32, nodes: &[Spans]) -> AllocProblem {
        problem_of_banks(num_banks, &vec![1; nodes.len()], nodes)
    }

    /// A problem on `num_banks` banks of nodes of `banks` banks each.
    fn problem_of_banks(num_banks: u32, banks: &[u32], nodes: &[Spans]) -> AllocProblem {
        let buffers = (nodes.iter().zip(banks).enumerate())
            .map(|(v, ((held, idle, _), &banks))| {
                let ends = held.iter().copied().chain(idle.iter().map(|&(r, _)| r));
                let start = ends.clone().map(|r| r.0).min().expect("a span");
                let end = ends.map(|r| r.1).max().expect("a span");
                Buffer {
                    id: format!("t{v}"),
                    interval: Interval { start, end, banks },
                }
            })
            .collect();
        let split = (nodes.iter())
            .map(|&(held, idle, save)| SplitSpans {
                held: held.to_vec(),
                idle: idle.to_vec(),
                save,
            })
            .collect();
        AllocProblem {
            arch: "trn1".into(),
            num_banks,
            buffers,
            costs: Vec::new(),
            split,
            split_exact: true,
        }
    }

    /// Stretches over the banks with the same idle ranges make one row,
    /// needing the largest excess; an idle range's start or end cuts it.
    #[test]
    fn rows_merge_while_no_idle_range_starts_or_ends() {
        let p = problem(
            1,
            &[
                (&[(0, 0), (9, 9)], &[((1, 8), 5)], 3),
                (&[(2, 3)], &[], 0),
                (&[(4, 6)], &[((7, 8), 2)], 1),
            ],
        );
        let lp = SplitLp::new(&p).expect("fits once spilled");
        let rows: Vec<(u32, u32, Vec<usize>, u32)> = (lp.rows.iter())
            .map(|r| (r.first, r.last, r.ranges.clone(), r.need))
            .collect();
        assert_eq!(rows, [(2, 6, vec![0], 1), (7, 8, vec![0, 1], 1)]);
        assert!(lp
            .render(Objective::Cost)
            .contains(" p2_6: x0_0 >= 1\n p7_8: x0_0 + x2_0 >= 1\n"));
    }

    /// Held stretches that alone overfill the banks have no program.
    #[test]
    fn held_stretches_over_the_banks_are_refused() {
        let p = problem(1, &[(&[(0, 4)], &[], 0), (&[(3, 6)], &[], 0)]);
        assert_eq!(
            SplitLp::new(&p),
            Err(LpError::Overfull {
                point: 3,
                needed: 2,
                num_banks: 1
            })
        );
    }

    /// Two 3-bank nodes and a 2-bank one fit 8 banks by count, but the
    /// 3-bank nodes take both blocks of four and leave no aligned pair:
    /// a row in pairs (a 3-bank node keeps two, a 2-bank one one) needs
    /// one more than the bank row does, and the blocks of four need none.
    #[test]
    fn rows_count_aligned_blocks() {
        let p = problem_of_banks(
            8,
            &[3, 3, 2],
            &[
                (&[(0, 0), (4, 4)], &[((1, 3), 7)], 5),
                (&[(0, 0), (4, 4)], &[((1, 3), 7)], 5),
                (&[(2, 2)], &[], 0),
            ],
        );
        let lp = SplitLp::new(&p).expect("fits once spilled");
        let rows: Vec<(u32, u32, u32, Vec<usize>, u32)> = (lp.rows.iter())
            .map(|r| (r.size, r.first, r.last, r.ranges.clone(), r.need))
            .collect();
        assert_eq!(rows, [(2, 2, 2, vec![0, 1], 1)]);
        assert!(lp
            .render(Objective::Cost)
            .contains(" p2_2_by2: 2 x0_0 + 2 x1_0 >= 1\n"));
    }

    /// Held stretches that alone need more aligned blocks than there are
    /// have no program, though they fit the banks by count.
    #[test]
    fn held_stretches_over_the_blocks_are_refused() {
        let p = problem_of_banks(
            8,
            &[3, 3, 2],
            &[
                (&[(0, 4)], &[], 0),
                (&[(2, 6)], &[], 0),
                (&[(3, 3)], &[], 0),
            ],
        );
        assert_eq!(
            SplitLp::new(&p),
            Err(LpError::Unaligned {
                point: 3,
                size: 2,
                needed: 5,
                blocks: 4
            })
        );
    }
}
