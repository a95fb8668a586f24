//! MiniMalloc interchange (`psum export --minimalloc`, `psum import --minimalloc`).
//!
//! MiniMalloc (Moffitt, "MiniMalloc: A Lightweight Memory Allocator for
//! Hardware-Accelerated Machine Learning", ASPLOS 2023) is an exact solver for
//! static buffer placement. PSUM allocation without spilling is that problem
//! with time in program points and space in banks, so the first iteration's
//! nodes (SPEC §3.3) can be handed to it as a CSV `id,lower,upper,size` — one
//! row per node, the live range half-open `[lower, upper)` (our closed
//! `[start, end]` becomes `[start, end + 1)`), `size` = `liveN` — with the
//! bank count as capacity. The solver's output adds an `offset` column, read
//! back here as base banks and checked against the placement rules of SPEC
//! §3.7: bases aligned to `bank_alignment(liveN)`, inside the bank count, and
//! no two interfering nodes sharing a bank.
//!
//! The library takes and returns strings; the CLI reads and writes the files
//! and gets the nodes from [`crate::alloc::problem`].

use crate::alloc::Buffer;
use crate::arch::bank_alignment;
use serde::Serialize;
use std::collections::HashMap;
use std::fmt::Write as _;
use thiserror::Error;

/// Writes the problem as a MiniMalloc input CSV (`id,lower,upper,size`).
pub fn to_minimalloc_csv(buffers: &[Buffer]) -> String {
    let mut out = String::from("id,lower,upper,size\n");
    for b in buffers {
        let iv = b.interval;
        let _ = writeln!(
            out,
            "{},{},{},{}",
            b.id,
            iv.start,
            u64::from(iv.end) + 1,
            iv.banks
        );
    }
    out
}

/// Why a MiniMalloc solution could not be read.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ImportError {
    /// The file has no header row.
    #[error("solution is empty: expected a header row with `id` and `offset` columns")]
    Empty,
    /// A required column is absent from the header.
    #[error("solution has no `{0}` column")]
    MissingColumn(&'static str),
    /// A row has the wrong number of fields.
    #[error("line {line}: expected {expected} fields, found {found}")]
    FieldCount {
        /// 1-based line number.
        line: usize,
        /// Fields in the header.
        expected: usize,
        /// Fields in this row.
        found: usize,
    },
    /// A numeric field does not parse as a non-negative integer.
    #[error("line {line}: `{column}` is not a non-negative integer: `{value}`")]
    BadInteger {
        /// 1-based line number.
        line: usize,
        /// Column name.
        column: &'static str,
        /// The text found.
        value: String,
    },
    /// A row names a node the problem does not have.
    #[error("line {line}: unknown id `{id}`")]
    UnknownId {
        /// 1-based line number.
        line: usize,
        /// The id found.
        id: String,
    },
    /// Two rows name the same node.
    #[error("line {line}: duplicate id `{id}`")]
    DuplicateId {
        /// 1-based line number.
        line: usize,
        /// The repeated id.
        id: String,
    },
    /// A node of the problem has no row.
    #[error("no offset for `{0}`")]
    MissingId(String),
    /// An echoed problem column disagrees with the problem (a stale solution).
    #[error("line {line}: `{id}` has {column}={found}, the problem says {expected}")]
    Mismatch {
        /// 1-based line number.
        line: usize,
        /// The node.
        id: String,
        /// Column name.
        column: &'static str,
        /// The problem's value.
        expected: u64,
        /// The solution's value.
        found: u64,
    },
}

/// A node's placement read from the solution.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Placement {
    /// The node.
    pub id: String,
    /// Base bank (the solution's `offset`).
    pub bank: u64,
    /// Banks held (`liveN`).
    pub banks: u32,
    /// Required base alignment, `bank_alignment(liveN)` (SPEC §1, §3.7).
    pub alignment: u32,
}

impl Placement {
    /// Whether the base bank is a multiple of the required alignment.
    pub(crate) fn is_aligned(&self) -> bool {
        self.bank % u64::from(self.alignment) == 0
    }
}

/// A MiniMalloc solution read back and checked against the bank rules.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ImportReport {
    /// Bank count the placements are checked against.
    pub num_banks: u32,
    /// One placement per node, in problem order.
    pub placements: Vec<Placement>,
    /// Nodes whose base is not aligned.
    pub misaligned: Vec<String>,
    /// Nodes that extend past the last bank.
    pub out_of_range: Vec<String>,
    /// Pairs of interfering nodes that share a bank (problem order).
    pub conflicts: Vec<(String, String)>,
}

impl ImportReport {
    /// Whether every offset respects the alignment.
    pub fn all_aligned(&self) -> bool {
        self.misaligned.is_empty()
    }

    /// Whether the solution is a valid PSUM allocation: aligned, in range,
    /// conflict-free.
    pub fn is_valid(&self) -> bool {
        self.misaligned.is_empty() && self.out_of_range.is_empty() && self.conflicts.is_empty()
    }

    /// Human-readable summary: one line per problem, then a verdict.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for p in &self.placements {
            if !p.is_aligned() {
                let _ = writeln!(
                    out,
                    "{}: bank {} is not a multiple of its alignment {} ({} banks)",
                    p.id, p.bank, p.alignment, p.banks
                );
            }
        }
        for id in &self.out_of_range {
            let _ = writeln!(out, "{id}: extends past bank {}", self.num_banks - 1);
        }
        for (a, b) in &self.conflicts {
            let _ = writeln!(out, "{a} and {b} are live together and share a bank");
        }
        let _ = writeln!(
            out,
            "{} nodes: {}",
            self.placements.len(),
            if self.all_aligned() {
                "every offset respects the bank alignment"
            } else {
                "some offsets break the bank alignment"
            }
        );
        let _ = writeln!(
            out,
            "{}",
            if self.is_valid() {
                "valid PSUM allocation"
            } else {
                "not a valid PSUM allocation"
            }
        );
        out
    }
}

/// Reads a MiniMalloc solution CSV (header with at least `id` and `offset`;
/// `lower`, `upper`, `size`, when present, must match the problem) and checks
/// the offsets as base banks on `num_banks` banks.
pub fn import_minimalloc(
    buffers: &[Buffer],
    csv: &str,
    num_banks: u32,
) -> Result<ImportReport, ImportError> {
    let mut lines = csv
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (_, header) = lines.next().ok_or(ImportError::Empty)?;
    let names: Vec<&str> = header.split(',').map(str::trim).collect();
    let col = |name: &str| names.iter().position(|&c| c == name);
    let id_col = col("id").ok_or(ImportError::MissingColumn("id"))?;
    let offset_col = col("offset").ok_or(ImportError::MissingColumn("offset"))?;
    let echoed: Vec<(&'static str, usize)> = ["lower", "upper", "size"]
        .into_iter()
        .filter_map(|c| col(c).map(|i| (c, i)))
        .collect();

    let index: HashMap<&str, usize> = buffers
        .iter()
        .enumerate()
        .map(|(i, b)| (b.id.as_str(), i))
        .collect();
    let mut bank: Vec<Option<u64>> = vec![None; buffers.len()];
    for (i, row) in lines {
        let line = i + 1;
        let fields: Vec<&str> = row.split(',').map(str::trim).collect();
        if fields.len() != names.len() {
            return Err(ImportError::FieldCount {
                line,
                expected: names.len(),
                found: fields.len(),
            });
        }
        let id = fields[id_col];
        let &b = index.get(id).ok_or_else(|| ImportError::UnknownId {
            line,
            id: id.to_string(),
        })?;
        if bank[b].is_some() {
            return Err(ImportError::DuplicateId {
                line,
                id: id.to_string(),
            });
        }
        let iv = buffers[b].interval;
        for &(column, c) in &echoed {
            let found = parse(fields[c], line, column)?;
            let expected = match column {
                "lower" => u64::from(iv.start),
                "upper" => u64::from(iv.end) + 1,
                _ => u64::from(iv.banks),
            };
            if found != expected {
                return Err(ImportError::Mismatch {
                    line,
                    id: id.to_string(),
                    column,
                    expected,
                    found,
                });
            }
        }
        bank[b] = Some(parse(fields[offset_col], line, "offset")?);
    }

    let placements = buffers
        .iter()
        .zip(&bank)
        .map(|(buf, bank)| {
            let bank = bank.ok_or_else(|| ImportError::MissingId(buf.id.clone()))?;
            Ok(Placement {
                id: buf.id.clone(),
                bank,
                banks: buf.interval.banks,
                alignment: bank_alignment(buf.interval.banks),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let misaligned = placements
        .iter()
        .filter(|p| !p.is_aligned())
        .map(|p| p.id.clone())
        .collect();
    let out_of_range = placements
        .iter()
        .filter(|p| bank_range(p).1 > u64::from(num_banks))
        .map(|p| p.id.clone())
        .collect();
    let conflicts = conflicts(buffers, &placements);
    Ok(ImportReport {
        num_banks,
        placements,
        misaligned,
        out_of_range,
        conflicts,
    })
}

fn parse(field: &str, line: usize, column: &'static str) -> Result<u64, ImportError> {
    field.parse().map_err(|_| ImportError::BadInteger {
        line,
        column,
        value: field.to_string(),
    })
}

/// Pairs of nodes whose closed intervals intersect and whose bank ranges
/// overlap, found by a sweep in start order; each pair is listed once, the
/// earlier node (problem order) first, pairs sorted.
fn conflicts(buffers: &[Buffer], placements: &[Placement]) -> Vec<(String, String)> {
    let mut order: Vec<usize> = (0..buffers.len()).collect();
    order.sort_by_key(|&i| (buffers[i].interval.start, i));
    let mut live: Vec<usize> = Vec::new();
    let mut pairs = Vec::new();
    for i in order {
        let start = buffers[i].interval.start;
        live.retain(|&j| buffers[j].interval.end >= start);
        let (lo, hi) = bank_range(&placements[i]);
        for &j in &live {
            let (jlo, jhi) = bank_range(&placements[j]);
            if lo < jhi && jlo < hi {
                pairs.push((i.min(j), i.max(j)));
            }
        }
        live.push(i);
    }
    pairs.sort_unstable();
    pairs
        .into_iter()
        .map(|(a, b)| (buffers[a].id.clone(), buffers[b].id.clone()))
        .collect()
}

/// The banks `[first, end)` of a placement; `end` saturates, so a base
/// near `u64::MAX` still lies past every bank.
fn bank_range(p: &Placement) -> (u64, u64) {
    (p.bank, p.bank.saturating_add(u64::from(p.banks)))
}
