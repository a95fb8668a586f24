//! Checking a placement the program makes itself (SPEC §9.5, `psum compile
//! --keep-banks`): kernels that allocate PSUM directly carry `bank=` on
//! their tiles, and [`check`] proves that no two tiles live at the same
//! time share a bank, with the live ranges of SPEC §3.3 (after the memloc
//! split of §3.2, whose pieces keep their tensor's bank).

use crate::alloc::{AllocError, AllocOptions};
use crate::ir::{Module, TensorId};

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
    /// The live ranges could not be computed.
    #[error(transparent)]
    Alloc(#[from] AllocError),
}

/// The tensor a problem node names: itself, or the tensor of a memloc-split piece.
fn tensor_of(m: &Module, name: &str) -> Option<TensorId> {
    m.tensor_by_name(name)
        .or_else(|| name.rsplit_once('.').and_then(|(b, _)| m.tensor_by_name(b)))
}

/// Every problem of the `bank=` placement of `m` (a validated module), in
/// node order; empty when the placement is sound.
pub fn check(m: &Module, opts: &AllocOptions) -> Vec<PlacementError> {
    let problem = match crate::alloc::problem(m, opts) {
        Ok(p) => p,
        Err(e) => return vec![e.into()],
    };
    let mut errors = Vec::new();
    let mut placed = Vec::new();
    for b in &problem.buffers {
        let Some(t) = tensor_of(m, &b.id).map(|t| m.tensor(t)) else {
            continue;
        };
        let tile = Placed {
            name: b.id.clone(),
            loc: t.loc.clone(),
        };
        match t.bank {
            None => errors.push(PlacementError::Unplaced(tile)),
            Some(bank) if bank + b.interval.banks > problem.num_banks => {
                errors.push(PlacementError::OutOfRange {
                    tile,
                    bank,
                    banks: b.interval.banks,
                    num_banks: problem.num_banks,
                })
            }
            Some(bank) => placed.push((tile, bank, b.interval)),
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
        check(&m, &AllocOptions::default())
            .iter()
            .map(|e| e.to_string())
            .collect()
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
