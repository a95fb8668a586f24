//! [`super::Allocator::Kept`] (SPEC §9.5, `psum compile --keep-banks`): a
//! placement the program makes itself, checked instead of allocating.
//! Kernels that allocate PSUM directly carry `bank=` on their tiles, and
//! [`allocate`] proves that no two tiles live at the same time share a
//! bank, with the live ranges of SPEC §3.3 (after the memloc split of
//! §3.2, whose pieces keep their tensor's bank); the outcome is the
//! program as it is, with a report of its banks.

use super::analysis::{analyze, Analysis};
use super::log::hundredths;
use super::setup::unused_warnings;
use super::support::threads::PARALLEL_MIN_NODES;
use super::{liveness, outcome, AllocError, AllocOptions, AllocOutcome, AllocReport};
use crate::entity::IdMap;
use crate::ir::{Mem, Module};

/// A placed tile as a problem names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    /// The tensor's name (a memloc-split piece `NAME.K` is named so).
    pub name: String,
    /// Where the kernel allocated it, when traced.
    pub loc: Option<String>,
}

impl std::fmt::Display for Placed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.loc {
            Some(loc) => write!(f, "{} ({loc})", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// What is wrong with a kept placement.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlacementError {
    /// A PSUM tile with no `bank=`.
    #[error(
        "PSUM tile {0} has no bank= (--keep-banks checks a placement the program makes itself)"
    )]
    Unplaced(Placed),
    /// A tile whose banks run past the last one.
    #[error(
        "PSUM tile {tile} at bank {bank} needs {banks} banks, past the {num_banks} banks of PSUM"
    )]
    OutOfRange {
        /// The tile.
        tile: Placed,
        /// Its base bank.
        bank: u32,
        /// Banks it occupies.
        banks: u32,
        /// Banks available.
        num_banks: u32,
    },
    /// Two tiles live at once in one bank.
    #[error(
        "PSUM tiles {a} and {b} are both live at points {start}..={end} and share bank {bank}"
    )]
    Overlap {
        /// The earlier tile.
        a: Placed,
        /// The later tile.
        b: Placed,
        /// A shared bank.
        bank: u32,
        /// First point where both are live.
        start: u32,
        /// Last such point.
        end: u32,
    },
}

/// Every problem of a kept placement, in node order (one per line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeptErrors(pub Vec<PlacementError>);

impl std::fmt::Display for KeptErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for KeptErrors {}

impl KeptErrors {
    /// Each problem as an `error: …` line, as `psum compile --keep-banks` prints them.
    pub fn rendered(&self) -> String {
        let lines: Vec<String> = self.0.iter().map(|p| format!("error: {p}")).collect();
        lines.join("\n")
    }
}

/// The outcome of keeping the `bank=` placement of `m` (a validated
/// module), or every problem of it.
pub(super) fn allocate(m: Module, opts: &AllocOptions) -> Result<AllocOutcome, AllocError> {
    let a = analyze(m.clone(), opts)?;
    let problems = check(&a);
    if !problems.is_empty() {
        return Err(KeptErrors(problems).into());
    }
    let parallel = opts.parallel && a.module.tensors.len() >= PARALLEL_MIN_NODES;
    let peak = liveness::peak_demand(a.live.nodes.as_slice(), a.lin.len()).0;
    let pct = hundredths(peak, a.num_banks) as f64 / 100.0;
    let report = AllocReport {
        arch: a.module.arch.clone(),
        num_banks: a.num_banks,
        tensors: outcome::rows(&a.module, &a.arch, &a.live, &[], parallel),
        spilled: Vec::new(),
        spill_cost_cycles: 0,
        iterations: 0,
        best_heuristic: 0,
        demand_pct: pct,
        utilization_pct: pct,
    };
    Ok(AllocOutcome {
        module: m,
        report,
        log: Vec::new(),
        trace: Vec::new(),
        warnings: unused_warnings(&a),
    })
}

/// Every problem of the `bank=` placement of `a`'s nodes (the memloc
/// pieces keep their tensor's bank), in node order; empty when the
/// placement is sound.
fn check(a: &Analysis) -> Vec<PlacementError> {
    let mut errors = Vec::new();
    let mut placed = Vec::new();
    let past_last =
        |bank: u32, banks: u32| u64::from(bank) + u64::from(banks) > u64::from(a.num_banks);
    let mut has_node = IdMap::with_len(a.module.tensors.len(), false);
    for n in a.live.nodes.values() {
        has_node[n.tensor] = true;
        let t = a.module.tensor(n.tensor);
        let tile = Placed {
            name: t.name.clone(),
            loc: t.loc.clone(),
        };
        match t.bank {
            None => errors.push(PlacementError::Unplaced(tile)),
            Some(bank) if past_last(bank, n.banks) => errors.push(PlacementError::OutOfRange {
                tile,
                bank,
                banks: n.banks,
                num_banks: a.num_banks,
            }),
            Some(bank) => placed.push((tile, bank, n)),
        }
    }
    // An unused tile needs no bank (SPEC §3.3), but one it is given must fit.
    for (t, _) in (a.module.tensors.values().zip(has_node.values()))
        .filter(|(t, &node)| !node && t.mem == Mem::Psum)
    {
        let banks = a.arch.aligned_bank_num(a.arch.bank_num(u64::from(t.bytes)));
        if let Some(bank) = t.bank.filter(|&b| past_last(b, banks)) {
            let tile = Placed {
                name: t.name.clone(),
                loc: t.loc.clone(),
            };
            errors.push(PlacementError::OutOfRange {
                tile,
                bank,
                banks,
                num_banks: a.num_banks,
            });
        }
    }
    for (i, (a, ab, ai)) in placed.iter().enumerate() {
        for (b, bb, bi) in &placed[i + 1..] {
            let (start, end) = (ai.start.max(bi.start), ai.end.min(bi.end));
            let (lo, hi) = ((*ab).max(*bb), (ab + ai.banks).min(bb + bi.banks));
            if start <= end && lo < hi {
                errors.push(PlacementError::Overlap {
                    a: a.clone(),
                    b: b.clone(),
                    bank: lo,
                    start,
                    end,
                });
            }
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(src: &str) -> Vec<String> {
        let m = crate::text::parse(src).unwrap().module;
        crate::validate::validate(&m).unwrap();
        match allocate(m, &AllocOptions::default()) {
            Err(AllocError::Kept(KeptErrors(problems))) => {
                problems.iter().map(|e| e.to_string()).collect()
            }
            got => {
                assert!(got.is_ok(), "{got:?}");
                Vec::new()
            }
        }
    }

    const TWO: &str = "arch trn1\npsum a [128, 2048] bank=B1 loc=\"k.py:3\"\npsum b [128, 2048] bank=B2\n\
        sbuf w [128, 256] bf16\nsbuf x [128, 1024] bf16\nsbuf y [128, 2048]\nblock main {\n  matmul a <- w, x\n  \
        matmul b <- w, x\n  act y <- a, b\n}\n";

    #[test]
    fn live_tiles_in_one_bank_overlap() {
        let src = TWO.replace("B1", "2").replace("B2", "2");
        assert_eq!(
            problems(&src),
            ["PSUM tiles a (k.py:3) and b are both live at points 1..=2 and share bank 2"]
        );
        assert!(problems(&TWO.replace("B1", "2").replace("B2", "3")).is_empty());
        assert_eq!(
            problems(&TWO.replace("B1", "7").replace(" bank=B2", "")),
            ["PSUM tile b has no bank= (--keep-banks checks a placement the program makes itself)"]
        );
    }
}
