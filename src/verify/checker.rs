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

use super::exec::{
    checked_region, for_each_step, source_regions, BadAccess, Env, InstNames, RunTracker,
};
use super::layout::{Buf, Layout, PlaceError};
use super::rects::{Rect, RectMap};
use super::Families;
use crate::arch::{self, PSUM_BANK_SIZE};
use crate::entity::IdMap;
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
    pub(crate) fn inst(&self) -> Option<InstId> {
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
    Zero {
        step: u32,
    },
    /// Element `p·elems + (b − origin) / dsize` of `version` at cell
    /// `(p, b)`, `origin` being the byte of the buffer where the version's
    /// tensor begins (so a carrying copy shifts it).
    Val {
        version: u32,
        origin: i64,
    },
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
    let n = result.tensors.len();
    let mut c = Checker {
        m: result,
        names: InstNames::new(result),
        runs: RunTracker::new(result),
        own: (0..n).map(|_| None).collect(),
        psum: RectMap::new(layout.part_size, layout.psum_bytes(), Sym::Garbage),
        expected: (0..n).map(|_| None).collect(),
        layout,
        fams,
        versions: Vec::new(),
        srcs: Vec::new(),
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
    /// Per tracked SBUF/DRAM tensor, its symbols (created on first access).
    own: IdMap<TensorId, Option<RectMap<Sym>>>,
    /// Physical PSUM's symbols.
    psum: RectMap<Sym>,
    /// Per family, in its base tensor's bytes: latest version + 1 (0 =
    /// never written); created on the family's first write.
    expected: Vec<Option<RectMap<u32>>>,
    versions: Vec<Version>,
    /// Source regions of the current instruction, reused.
    srcs: Vec<(TensorId, Region)>,
    /// Every dynamic instance so far: the instruction and its loop bindings in `bindings`.
    steps: Vec<(InstId, u32, u32)>,
    bindings: Vec<(VarId, i64)>,
}

/// What a check found wrong: the tensor's element `(p, e)` and the symbol there.
struct Violation {
    p: u32,
    e: u32,
    found: Sym,
    /// The latest version + 1 the family expects there.
    exp: u32,
    /// The physical byte of the cell (in its buffer).
    x: u32,
}

impl Checker<'_> {
    fn region(&self, id: InstId, env: &Env, a: &Access) -> Result<Region, CheckError> {
        checked_region(self.m, &self.names, id, env, a).map_err(CheckError::Access)
    }

    fn map(&mut self, buf: Buf) -> &mut RectMap<Sym> {
        match buf {
            Buf::Own(t) => {
                let tt = self.m.tensor(t);
                self.own[t]
                    .get_or_insert_with(|| RectMap::new(tt.partitions, tt.bytes, Sym::Garbage))
            }
            Buf::Psum => &mut self.psum,
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

    /// What symbol `s` at byte `x` of its buffer is, read as element `at` of
    /// family `fam` (as tensor `t`); and who put it there.
    fn describe_found(
        &self,
        s: Sym,
        fam: u32,
        at: u32,
        t: TensorId,
        p: u32,
        x: u32,
    ) -> (String, Option<String>) {
        match s {
            Sym::Garbage => ("uninitialized PSUM (garbage)".into(), None),
            Sym::Zero { step } => {
                let who = self.step_name(step);
                (format!("zero from the start of {who}"), Some(who))
            }
            Sym::Val { version, origin } => {
                let v = &self.versions[version as usize];
                let who = self.step_name(v.step);
                let mut d = self.describe_version(version);
                let tt = self.m.tensor(t);
                let e = tt.elems();
                let held = i64::from(p) * i64::from(e)
                    + (i64::from(x) - origin) / i64::from(tt.dtype.size());
                if v.family == fam && held != i64::from(at) {
                    let a = held.max(0) as u32;
                    d = format!(
                        "element [{}, byte {}] of {d}",
                        a / e,
                        a % e * tt.dtype.size()
                    );
                }
                (d, Some(who))
            }
        }
    }

    fn cell_name(&self, t: TensorId, p: u32, e: u32, x: u32) -> String {
        if self.layout.in_psum(t) {
            format!(
                "bank {}, partition {p}, byte {}",
                x / PSUM_BANK_SIZE,
                x % PSUM_BANK_SIZE
            )
        } else {
            format!("partition {p}, byte {}", e * self.m.tensor(t).dtype.size())
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
        let mut srcs = std::mem::take(&mut self.srcs);
        source_regions(m, &self.names, id, env, &mut srcs).map_err(CheckError::Access)?;
        let dst = kind.dst().tensor;
        let dr = self.region(id, env, kind.dst())?;
        for &(t, r) in &srcs {
            self.check_read(id, env, t, &r)?;
            self.runs.read(m, t, r);
        }
        let copied = srcs.first().map(|s| s.1);
        self.srcs = srcs;
        let off = self.bindings.len() as u32;
        self.bindings
            .extend(env.bound.iter().map(|&v| (v, env.values[v])));
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
                if tracked
                    && self.fams.of(src.tensor) == self.fams.of(dst)
                    && copied == Some(dr) =>
            {
                self.runs.write(m, dst, dr);
                self.carry(src.tensor, dst, &dr);
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

    /// A copy within one family: the destination cells take the source's symbols.
    fn carry(&mut self, src: TensorId, dst: TensorId, r: &Region) {
        let (sbuf, srect) = self.layout.rect(src, r);
        let (dbuf, drect) = self.layout.rect(dst, r);
        let shift = i64::from(drect.x0) - i64::from(srect.x0);
        let mut pieces = Vec::new();
        self.map(sbuf).visit(srect, |q, &s| pieces.push((q, s)));
        let map = self.map(dbuf);
        for (q, s) in pieces {
            let s = match s {
                Sym::Val { version, origin } => Sym::Val {
                    version,
                    origin: origin + shift,
                },
                other => other,
            };
            let x0 = (i64::from(q.x0) + shift) as u32;
            let x1 = (i64::from(q.x1) + shift) as u32;
            map.set(Rect::new(q.p0, q.p1, x0, x1), s);
        }
    }

    fn check_read(
        &mut self,
        id: InstId,
        env: &Env,
        t: TensorId,
        r: &Region,
    ) -> Result<(), CheckError> {
        if !self.fams.tracked(t) {
            return Ok(());
        }
        let (_, base) = self.layout.place(t);
        let origin = i64::from(base);
        let bad = self.first_violation(t, r, |_, found, exp| {
            exp != 0
                && found
                    == (Sym::Val {
                        version: exp - 1,
                        origin,
                    })
        });
        if let Some(v) = bad {
            let fam = self.fams.of(t);
            let at = v.p * self.m.tensor(t).elems() + v.e;
            let expected = if v.exp == 0 {
                format!("a write of {} (there was none)", self.family_name(fam))
            } else {
                self.describe_version(v.exp - 1)
            };
            let (found, clobberer) = self.describe_found(v.found, fam, at, t, v.p, v.x);
            return Err(CheckError::Read {
                inst: self.names.instance(self.m, id, env),
                inst_id: id,
                tensor: self.m.tensor(t).name.clone(),
                stands_for: self.stands_for(t),
                cell: self.cell_name(t, v.p, v.e, v.x),
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
                if let Some(z) = self.layout.start_rect(t, r).filter(|_| fs.start) {
                    self.psum.set(z, Sym::Zero { step });
                }
                true
            }
            Flags::Auto => false,
        };
        if explicit || accumulates {
            let (_, base) = self.layout.place(t);
            let origin = i64::from(base);
            let bad = self.first_violation(t, r, |c, found, exp| {
                if accumulates {
                    exp != 0
                        && (found
                            == (Sym::Val {
                                version: exp - 1,
                                origin,
                            })
                            || (c.versions[exp as usize - 1].zero && c.is_zero(found)))
                } else {
                    c.is_zero(found)
                }
            });
            if let Some(v) = bad {
                let fam = self.fams.of(t);
                let at = v.p * self.m.tensor(t).elems() + v.e;
                let expected = match (accumulates, v.exp) {
                    (false, _) => "zero".to_string(),
                    (true, 0) => format!("a write of {} (there was none)", self.family_name(fam)),
                    (true, _) => self.describe_version(v.exp - 1),
                };
                let (found, clobberer) = self.describe_found(v.found, fam, at, t, v.p, v.x);
                return Err(CheckError::Accumulate {
                    inst: self.names.instance(self.m, id, env),
                    inst_id: id,
                    tensor: self.m.tensor(t).name.clone(),
                    how: match flags {
                        Flags::Set(fs) => format!("flags={fs}"),
                        Flags::Auto => "flags=auto, accumulating".into(),
                    },
                    cell: self.cell_name(t, v.p, v.e, v.x),
                    expected,
                    found,
                    clobberer,
                });
            }
        }
        self.write(step, t, r, false);
        Ok(())
    }

    /// The map of family `f`'s latest versions, in its base tensor's bytes.
    fn expected_map(&mut self, f: u32) -> &mut RectMap<u32> {
        let base = self.m.tensor(self.fams.base(f));
        self.expected[f as usize]
            .get_or_insert_with(|| RectMap::new(base.partitions, base.bytes, 0))
    }

    fn write(&mut self, step: u32, t: TensorId, r: &Region, zero: bool) {
        let family = self.fams.of(t);
        self.versions.push(Version { family, step, zero });
        let version = (self.versions.len() - 1) as u32;
        self.expected_map(family).set(rect_of(r), version + 1);
        let (buf, rect) = self.layout.rect(t, r);
        let (_, base) = self.layout.place(t);
        self.map(buf).set(
            rect,
            Sym::Val {
                version,
                origin: i64::from(base),
            },
        );
    }

    /// The first element `(p, e)` of region `r` of tracked tensor `t`, in
    /// row-major order, whose cell symbol `found` and expected version + 1
    /// `exp` fail `ok(self, found, exp)`.
    fn first_violation(
        &mut self,
        t: TensorId,
        r: &Region,
        ok: impl Fn(&Self, Sym, u32) -> bool,
    ) -> Option<Violation> {
        let fam = self.fams.of(t);
        self.expected_map(fam);
        let (buf, rect) = self.layout.rect(t, r);
        self.map(buf);
        let (_, base) = self.layout.place(t);
        let cells = match buf {
            Buf::Own(t) => self.own[t].as_ref(),
            Buf::Psum => Some(&self.psum),
        };
        let (Some(cells), Some(expected)) = (cells, self.expected[fam as usize].as_ref()) else {
            return None;
        };
        let ds = self.m.tensor(t).dtype.size();
        let mut bad: Option<Violation> = None;
        cells.visit(rect, |q, &found| {
            let mine = Rect::new(q.p0, q.p1, q.x0 - base, q.x1 - base);
            expected.visit(mine, |s, &exp| {
                let first = (s.p0, s.x0.div_ceil(ds));
                let earlier = bad.as_ref().is_none_or(|b| first < (b.p, b.e));
                if earlier && s.x0.div_ceil(ds) < s.x1.div_ceil(ds) && !ok(self, found, exp) {
                    bad = Some(Violation {
                        p: first.0,
                        e: first.1,
                        found,
                        exp,
                        x: base + first.1 * ds,
                    });
                }
            });
        });
        bad
    }
}

fn rect_of(r: &Region) -> Rect {
    Rect::new(r.p0 as u32, r.p1 as u32, r.b0 as u32, r.b1 as u32)
}
