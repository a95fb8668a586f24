//! The symbolic checker (SPEC §5.1), in the manner of regalloc2's checker.
//!
//! It executes RESULT once, dynamically (loops included), over two abstract
//! states, and reports the first instruction instance at which they disagree.
//!
//! **Logical tensors.** Every result tensor belongs to a *family*: a spill
//! tensor `X_SpillTensorCopyK` and a reload temporary `X_ReloadTensorCopyJ`
//! that RESULT declares but ORIGINAL does not, and whose shape and dtype are
//! X's, stand for X; every other tensor stands for itself. A family is
//! *tracked* when its base tensor is in PSUM.
//!
//! **Versions.** Every dynamic write to a tracked family creates a fresh
//! version `v = (family, instance, zero?)` — except a copy between two
//! members of one family over the same region, which carries the value and
//! creates nothing. `E[f][c]` is the latest version of element `c` of family
//! `f` under the virtual semantics of RESULT (§2.4).
//!
//! **Physical state.** `P[s]` is the symbol held by storage slot `s` — a
//! physical PSUM cell (`bank·2048 + offset`, §4.4) or an element of a tracked
//! SBUF/DRAM tensor: `Garbage` (PSUM at entry), `Zero(i)` (cleared by the
//! `start` of instance `i`) or `Val(v, c)` (version `v` of element `c`).
//! A write of element `c` of tensor `T` at slot `s` sets `P[s] = Val(v, c)`;
//! a `start` sets `P[s] = Zero(i)` for every slot of its destination
//! partitions in every bank its destination touches; a carrying copy sets
//! `P[dst] = P[src]`.
//!
//! **Invariants checked**, for every dynamic instance, in program order:
//! 1. *Reads*: every element `c` of a tracked tensor `T` read at slot `s`
//!    satisfies `P[s] = Val(E[fam T][c], c)` — the cell holds exactly T's
//!    latest write (by identity, not by value: two tensors with equal values
//!    are still told apart).
//! 2. *Assigning matmuls*: a matmul-family write that §2.4 makes an `=` (a
//!    run head without init), executed with explicit flags (so the hardware
//!    adds), finds `P[s]` zero-valued (`Zero(_)`, or a version written by a
//!    `memset … = 0`) in every destination slot, after its own `start`.
//! 3. *Accumulating matmuls*: a `+=` write finds `P[s] = Val(E[fam T][c], c)`,
//!    or, when `E[fam T][c]` is a zero-valued version, any zero-valued symbol.
//!
//! An `auto`-flagged matmul (an unlegalized program) assigns or accumulates as
//! §2.4 says, so only invariant 3 applies to it. A violation names the
//! instance, the tensor (and the tensor it stands for), the bank, partition
//! and byte, the expected symbol and what was found, including the instance
//! that clobbered the cell.

// A violation is reported once per run; its size does not matter.
#![allow(clippy::result_large_err)]

use super::exec::{cells, checked_region, for_each_step, BadAccess, Env, InstNames, RunTracker};
use super::layout::{Layout, PlaceError, Slot, Span, Store};
use super::Families;
use crate::arch;
use crate::ir::{Access, Flags, InstId, InstKind, Module, Region, TensorId, VarId};
use thiserror::Error;

/// The first violation the checker finds.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum CheckError {
    /// The module names an unknown arch.
    #[error("{0}")]
    Arch(String),
    /// A PSUM tensor cannot be placed in physical PSUM.
    #[error(transparent)]
    Place(#[from] PlaceError),
    /// An access outside its tensor.
    #[error("{0}")]
    Access(BadAccess),
    /// A read found something other than the tensor's latest write.
    #[error("{inst} reads {tensor}{stands_for} at {cell}: expected {expected}, found {found}")]
    Read {
        /// The reading instruction instance.
        inst: String,
        /// Its id (for source positions).
        inst_id: InstId,
        /// The tensor read.
        tensor: String,
        /// ` (standing for X)` for spill and reload tensors, else empty.
        stands_for: String,
        /// `bank B, partition P, byte O` (or `partition P, byte O` outside PSUM).
        cell: String,
        /// What the cell should hold.
        expected: String,
        /// What it holds.
        found: String,
        /// The instance that last wrote the cell, if any.
        clobberer: Option<String>,
    },
    /// A matmul found the wrong value under its destination.
    #[error(
        "{inst} ({how}) writes {tensor} at {cell}: expected {expected} underneath, found {found}"
    )]
    Accumulate {
        /// The matmul instance.
        inst: String,
        /// Its id (for source positions).
        inst_id: InstId,
        /// The destination tensor.
        tensor: String,
        /// How it executes: `flags=…` or `auto, accumulating`.
        how: String,
        /// `bank B, partition P, byte O`.
        cell: String,
        /// What the cell should hold before the add.
        expected: String,
        /// What it holds.
        found: String,
        /// The instance that last wrote or zeroed the cell, if any.
        clobberer: Option<String>,
    },
}

impl CheckError {
    /// The offending instruction, for pointing at its source line.
    pub fn inst(&self) -> Option<InstId> {
        match self {
            CheckError::Read { inst_id, .. } | CheckError::Accumulate { inst_id, .. } => {
                Some(*inst_id)
            }
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sym {
    Garbage,
    Zero { step: u32 },
    Val { version: u32, at: u32 },
}

struct Version {
    family: u32,
    step: u32,
    zero: bool,
}

/// Checks RESULT (§5.1). `original` decides which tensors are spill/reload
/// tensors (those it does not declare).
pub fn check(original: &Module, result: &Module) -> Result<(), CheckError> {
    let arch = arch::lookup(&result.arch).map_err(|e| CheckError::Arch(e.to_string()))?;
    let layout = Layout::physical(result, &arch)?;
    let fams = Families::new(original, result);
    let own = result
        .tensors
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let id = TensorId::new(i);
            if fams.tracked(id) && !layout.in_psum(id) {
                vec![Sym::Garbage; t.partitions as usize * t.elems() as usize]
            } else {
                Vec::new()
            }
        })
        .collect();
    let expected = fams
        .bases()
        .map(|b| {
            let t = result.tensor(b);
            vec![0u32; t.partitions as usize * t.elems() as usize]
        })
        .collect();
    let mut c = Checker {
        m: result,
        names: InstNames::new(result),
        runs: RunTracker::new(result),
        cells: Store {
            own,
            psum: vec![Sym::Garbage; layout.psum_cells()],
        },
        layout,
        fams,
        expected,
        versions: Vec::new(),
        steps: Vec::new(),
        bindings: Vec::new(),
    };
    for_each_step(result, |id, env| c.step(id, env))
}

struct Checker<'a> {
    m: &'a Module,
    names: InstNames,
    runs: RunTracker,
    layout: Layout,
    fams: Families,
    cells: Store<Sym>,
    /// Per family, per element: latest version + 1 (0 = never written).
    expected: Vec<Vec<u32>>,
    versions: Vec<Version>,
    /// Every dynamic instance so far: the instruction and its loop bindings in `bindings`.
    steps: Vec<(InstId, u32, u32)>,
    bindings: Vec<(VarId, i64)>,
}

impl Checker<'_> {
    fn region(&self, id: InstId, env: &Env, a: &Access) -> Result<Region, CheckError> {
        checked_region(self.m, &self.names, id, env, a).map_err(CheckError::Access)
    }

    fn get(&self, s: Slot) -> Sym {
        match s {
            Slot::Own(t, i) => self.cells.own[t.index()][i],
            Slot::Psum(i) => self.cells.psum[i],
        }
    }

    fn set(&mut self, s: Slot, v: Sym) {
        match s {
            Slot::Own(t, i) => self.cells.own[t.index()][i] = v,
            Slot::Psum(i) => self.cells.psum[i] = v,
        }
    }

    fn is_zero(&self, s: Sym) -> bool {
        match s {
            Sym::Zero { .. } => true,
            Sym::Val { version, .. } => self.versions[version as usize].zero,
            Sym::Garbage => false,
        }
    }

    fn step_name(&self, step: u32) -> String {
        let (id, off, len) = self.steps[step as usize];
        let b = &self.bindings[off as usize..(off + len) as usize];
        self.names.instance_with(self.m, id, b)
    }

    fn family_name(&self, f: u32) -> &str {
        &self.m.tensor(self.fams.base(f)).name
    }

    fn describe_version(&self, version: u32) -> String {
        let v = &self.versions[version as usize];
        format!(
            "{} written by {}",
            self.family_name(v.family),
            self.step_name(v.step)
        )
    }

    /// What symbol `s` is, read as element `at` of family `fam`; and who put it there.
    fn describe_found(&self, s: Sym, fam: u32, at: u32, t: TensorId) -> (String, Option<String>) {
        match s {
            Sym::Garbage => ("uninitialized PSUM (garbage)".into(), None),
            Sym::Zero { step } => {
                let who = self.step_name(step);
                (format!("zero from the start of {who}"), Some(who))
            }
            Sym::Val { version, at: a } => {
                let v = &self.versions[version as usize];
                let who = self.step_name(v.step);
                let mut d = self.describe_version(version);
                if v.family == fam && a != at {
                    let e = self.m.tensor(t).elems();
                    d = format!(
                        "element [{}, byte {}] of {d}",
                        a / e,
                        a % e * self.m.tensor(t).dtype.size()
                    );
                }
                (d, Some(who))
            }
        }
    }

    fn cell_name(&self, t: TensorId, s: Slot, p: u32, e: u32) -> String {
        match s {
            Slot::Psum(i) => {
                let (p, bank, byte) = self.layout.describe_cell(i);
                format!("bank {bank}, partition {p}, byte {byte}")
            }
            Slot::Own(..) => format!("partition {p}, byte {}", e * self.m.tensor(t).dtype.size()),
        }
    }

    fn stands_for(&self, t: TensorId) -> String {
        let f = self.fams.of(t);
        let base = self.fams.base(f);
        if base == t {
            String::new()
        } else {
            format!(" (standing for {})", self.m.tensor(base).name)
        }
    }

    fn step(&mut self, id: InstId, env: &Env) -> Result<(), CheckError> {
        let m = self.m;
        let kind = &m.inst(id).kind;
        let mut srcs = Vec::new();
        for a in kind.srcs() {
            srcs.push((a.tensor, self.region(id, env, a)?));
        }
        let dst = kind.dst().tensor;
        let dr = self.region(id, env, kind.dst())?;
        for &(t, r) in &srcs {
            self.check_read(id, env, t, &r)?;
            self.runs.read(m, t, r);
        }
        let off = self.bindings.len() as u32;
        self.bindings
            .extend(env.bound.iter().map(|&v| (v, env.values[v.index()])));
        self.steps.push((id, off, env.bound.len() as u32));
        let step = (self.steps.len() - 1) as u32;
        let tracked = self.fams.tracked(dst);
        match kind {
            InstKind::Matmul(mm) => {
                let run = self.runs.matmul(m, dst, dr);
                if tracked {
                    self.matmul(id, env, step, dst, &dr, mm.flags, run.accumulates())?;
                }
            }
            InstKind::Copy { src, .. } | InstKind::Dma { src, .. }
                if tracked && self.fams.of(src.tensor) == self.fams.of(dst) && srcs[0].1 == dr =>
            {
                self.runs.write(m, dst, dr);
                let t = src.tensor;
                for (p, e) in cells(m.tensor(dst), &dr) {
                    let v = self.get(self.layout.slot(t, p, e));
                    self.set(self.layout.slot(dst, p, e), v);
                }
            }
            _ => {
                self.runs.write(m, dst, dr);
                if tracked {
                    let zero = matches!(kind, InstKind::Memset { value, .. } if *value == 0.0);
                    self.write(step, dst, &dr, zero);
                }
            }
        }
        Ok(())
    }

    fn check_read(&self, id: InstId, env: &Env, t: TensorId, r: &Region) -> Result<(), CheckError> {
        if !self.fams.tracked(t) {
            return Ok(());
        }
        let fam = self.fams.of(t);
        let w = self.m.tensor(t).elems();
        let bad = self.first_violation(t, r, |found, exp, at| {
            exp != 0
                && found
                    == (Sym::Val {
                        version: exp - 1,
                        at,
                    })
        });
        if let Some((p, e)) = bad {
            let at = p * w + e;
            let s = self.layout.slot(t, p, e);
            let found = self.get(s);
            let exp = self.expected[fam as usize][at as usize];
            let expected = if exp == 0 {
                format!("a write of {} (there was none)", self.family_name(fam))
            } else {
                self.describe_version(exp - 1)
            };
            let (found, clobberer) = self.describe_found(found, fam, at, t);
            return Err(CheckError::Read {
                inst: self.names.instance(self.m, id, env),
                inst_id: id,
                tensor: self.m.tensor(t).name.clone(),
                stands_for: self.stands_for(t),
                cell: self.cell_name(t, s, p, e),
                expected,
                found,
                clobberer,
            });
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn matmul(
        &mut self,
        id: InstId,
        env: &Env,
        step: u32,
        t: TensorId,
        r: &Region,
        flags: Flags,
        accumulates: bool,
    ) -> Result<(), CheckError> {
        let explicit = match flags {
            Flags::Set(fs) => {
                if let Some(span) = self.layout.start_span(t, r).filter(|_| fs.start) {
                    span.write_rows(&mut self.cells.psum, |_, row| row.fill(Sym::Zero { step }));
                }
                true
            }
            Flags::Auto => false,
        };
        if explicit || accumulates {
            let fam = self.fams.of(t);
            let w = self.m.tensor(t).elems();
            let bad = self.first_violation(t, r, |found, exp, at| {
                if accumulates {
                    exp != 0
                        && (found
                            == (Sym::Val {
                                version: exp - 1,
                                at,
                            })
                            || (self.versions[exp as usize - 1].zero && self.is_zero(found)))
                } else {
                    self.is_zero(found)
                }
            });
            if let Some((p, e)) = bad {
                let at = p * w + e;
                let s = self.layout.slot(t, p, e);
                let found = self.get(s);
                let exp = self.expected[fam as usize][at as usize];
                let expected = match (accumulates, exp) {
                    (false, _) => "zero".to_string(),
                    (true, 0) => format!("a write of {} (there was none)", self.family_name(fam)),
                    (true, _) => self.describe_version(exp - 1),
                };
                let (found, clobberer) = self.describe_found(found, fam, at, t);
                return Err(CheckError::Accumulate {
                    inst: self.names.instance(self.m, id, env),
                    inst_id: id,
                    tensor: self.m.tensor(t).name.clone(),
                    how: match flags {
                        Flags::Set(fs) => format!("flags={fs}"),
                        Flags::Auto => "flags=auto, accumulating".into(),
                    },
                    cell: self.cell_name(t, s, p, e),
                    expected,
                    found,
                    clobberer,
                });
            }
        }
        self.write(step, t, r, false);
        Ok(())
    }

    fn write(&mut self, step: u32, t: TensorId, r: &Region, zero: bool) {
        let family = self.fams.of(t);
        self.versions.push(Version { family, step, zero });
        let version = (self.versions.len() - 1) as u32;
        let elems = Span::elements(t, self.m.tensor(t), r);
        elems.write_rows(&mut self.expected[family as usize], |_, row| {
            row.fill(version + 1)
        });
        let span = self.layout.span(self.m, t, r);
        span.write_rows(self.cells.buf_mut(span.buf), |i, row| {
            let at0 = elems.cell(i, 0) as u32;
            for (at, c) in (at0..).zip(row) {
                *c = Sym::Val { version, at };
            }
        });
    }

    /// The first element `(p, e)` of region `r` of tracked tensor `t`, in
    /// row-major order, whose cell symbol `found`, expected version + 1 `exp`
    /// and element index `at` fail `ok(found, exp, at)`.
    fn first_violation(
        &self,
        t: TensorId,
        r: &Region,
        ok: impl Fn(Sym, u32, u32) -> bool,
    ) -> Option<(u32, u32)> {
        let elems = Span::elements(t, self.m.tensor(t), r);
        let expected = &self.expected[self.fams.of(t) as usize];
        let span = self.layout.span(self.m, t, r);
        let mut bad = None;
        span.read_rows(self.cells.buf(span.buf), |i, row| {
            if bad.is_some() {
                return;
            }
            let at0 = elems.cell(i, 0);
            let exp = &expected[at0..at0 + row.len()];
            if let Some(j) = (0..row.len()).find(|&j| !ok(row[j], exp[j], (at0 + j) as u32)) {
                let ds = i64::from(self.m.tensor(t).dtype.size());
                bad = Some(((r.p0 as usize + i) as u32, (r.b0 / ds) as u32 + j as u32));
            }
        });
        bad
    }
}
