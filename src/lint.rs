//! PSUM hazard lints (SPEC §9.4): rules of the hardware that a program may
//! break while still meaning something to psum. [`lint`] finds them and
//! returns typed [`Lint`]s naming the instruction or tensor and, for traced
//! kernels, the kernel line (`loc=`).
//!
//! The accumulation rules are checked on the unrolled program, in dynamic
//! order, with the accumulation runs of SPEC §2.4; the others are static.
//! [`lint`] needs only a structurally sound module (any parsed one): it is
//! run before validation so that the hazards validation rejects outright (a
//! non-f32 or too wide matmul destination on gen2/gen3) are still named.

use crate::arch::{self, PSUM_BANK_SIZE};
use crate::ir::{DType, InstId, InstKind, LoopId, Mem, Module, Region, Stmt, TensorId};
use crate::text::access_to_string;
use crate::unroll;
use std::fmt;

/// One hazard.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Hazard {
    /// gen2/gen3: a matmul accumulation run starts on PSUM that a non-matmul
    /// instruction (memset, copy…) initialised; undefined on the hardware.
    AccumulateOntoInit {
        /// The matmul heading the run.
        inst: InstId,
        /// The instruction that wrote the PSUM it accumulates onto.
        init: InstId,
    },
    /// A matmul the kernel asked to accumulate (`accumulate=true`) is the
    /// first write of its chain, onto PSUM nothing wrote.
    AccumulateOntoUninit {
        /// The matmul.
        inst: InstId,
    },
    /// gen2/gen3: a matmul destination that is not f32.
    DstDtype {
        /// The matmul.
        inst: InstId,
        /// The destination's dtype.
        dtype: DType,
    },
    /// A PSUM tile larger than one 2 KiB bank per partition.
    TileCrossesBank {
        /// The tile.
        tensor: TensorId,
    },
    /// gen2/gen3: a matmul writing more than one bank.
    MatmulWiderThanBank {
        /// The matmul.
        inst: InstId,
    },
    /// Two iterations of an `affine` loop write one PSUM location of a tile
    /// they share, other than by matmul accumulation.
    AffineSameLocation {
        /// The writing instruction.
        inst: InstId,
        /// The affine loop whose iterations collide.
        loop_: LoopId,
    },
}

/// A hazard with the names it is reported with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lint {
    /// What is wrong.
    pub hazard: Hazard,
    /// The kernel line of the instruction or tile (`kernel.py:42`), when traced.
    pub loc: Option<String>,
    /// The one-line message.
    pub message: String,
}

impl fmt::Display for Lint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.loc {
            Some(loc) => write!(f, "{loc}: warning: {}", self.message),
            None => write!(f, "warning: {}", self.message),
        }
    }
}

/// Whether the program came from `psum trace` (some instruction or tensor has a `loc`).
pub fn is_traced(m: &Module) -> bool {
    m.insts.iter().any(|i| i.loc().is_some()) || m.tensors.iter().any(|t| t.loc.is_some())
}

/// Every hazard of `m`, in program order of the instruction (tiles first).
/// An unknown architecture or a program too large to unroll has no
/// accumulation lints (validation reports those).
pub fn lint(m: &Module) -> Vec<Lint> {
    let Ok(arch) = arch::lookup(&m.arch) else {
        return Vec::new();
    };
    let cx = Cx::new(m);
    let gen23 = (20..40).contains(&arch.arch_level());
    let mut out = Vec::new();
    for (i, t) in m.tensors.iter().enumerate() {
        if t.mem == Mem::Psum && t.bytes > PSUM_BANK_SIZE {
            out.push(Lint {
                hazard: Hazard::TileCrossesBank {
                    tensor: TensorId::new(i),
                },
                loc: t.loc.clone(),
                message: format!(
                    "PSUM tile {} has {} bytes per partition and crosses a 2 KiB bank boundary (it spans {} banks)",
                    t.name,
                    t.bytes,
                    t.bytes.div_ceil(PSUM_BANK_SIZE)
                ),
            });
        }
    }
    for &id in &cx.order {
        let Some(mm) = m.inst(id).kind.as_matmul() else {
            continue;
        };
        let dt = m.tensor(mm.dst.tensor);
        let allowed = dt.dtype == DType::F32 || (dt.dtype == DType::Bf16 && !gen23);
        if dt.mem == Mem::Psum && !allowed && arch.arch_level() >= 20 {
            out.push(cx.at(
                id,
                Hazard::DstDtype {
                    inst: id,
                    dtype: dt.dtype,
                },
                format!(
                    "{} writes {} PSUM {}; the matmul destination is f32 on {}",
                    cx.name(id),
                    dt.dtype,
                    dt.name,
                    m.arch
                ),
            ));
        }
    }
    for b in &m.blocks {
        affine_writes(&cx, &b.body, &mut Vec::new(), &mut out);
    }
    let Ok((flat, origins)) = unroll::unroll_with_origins(m) else {
        return out;
    };
    let mut seen = std::collections::HashSet::new();
    let mut events: Vec<Vec<Event>> = vec![Vec::new(); m.tensors.len()];
    for (k, inst) in flat.insts.iter().enumerate() {
        let origin = origins[k];
        let region = |a: &crate::ir::Access| a.region(|_| 0);
        for s in inst.kind.srcs() {
            if m.tensor(s.tensor).mem == Mem::Psum {
                events[s.tensor.index()].push(Event::Read(region(s)));
            }
        }
        let dst = inst.kind.dst();
        if m.tensor(dst.tensor).mem != Mem::Psum {
            continue;
        }
        let r = region(dst);
        let list = &mut events[dst.tensor.index()];
        if let InstKind::Matmul(mm) = &inst.kind {
            if gen23 && r.b0 / i64::from(PSUM_BANK_SIZE) != (r.b1 - 1) / i64::from(PSUM_BANK_SIZE) {
                let h = Hazard::MatmulWiderThanBank { inst: origin };
                if seen.insert(h.clone()) {
                    let msg = format!(
                        "{} writes {} bytes per partition of {} across a bank boundary; a matmul output stays inside one 2 KiB bank on {}",
                        cx.name(origin),
                        r.b1 - r.b0,
                        access_to_string(m, &m.inst(origin).kind.dst().clone()),
                        m.arch
                    );
                    out.push(cx.at(origin, h, msg));
                }
            }
            let last = list.iter().rev().find(|e| e.region().overlaps(&r));
            let head = !matches!(last, Some(Event::Matmul(q)) if *q == r);
            if head {
                match last {
                    Some(Event::Write(w, init))
                        if w.contains(&r) && gen23 && mm.accumulate != Some(false) =>
                    {
                        let h = Hazard::AccumulateOntoInit {
                            inst: origin,
                            init: *init,
                        };
                        if seen.insert(h.clone()) {
                            let msg = format!(
                                "{} accumulates onto PSUM {} initialised by {} ({}); a matmul accumulating onto PSUM written by memset or copy is undefined on {}: let the first matmul of the group overwrite",
                                cx.name(origin),
                                m.tensor(dst.tensor).name,
                                cx.name(*init),
                                m.inst(*init).loc().unwrap_or("no loc"),
                                m.arch
                            );
                            out.push(cx.at(origin, h, msg));
                        }
                    }
                    None if mm.accumulate == Some(true) => {
                        let h = Hazard::AccumulateOntoUninit { inst: origin };
                        if seen.insert(h.clone()) {
                            let msg = format!(
                                "{} is the first write of its accumulation group and accumulates (accumulate=true) onto uninitialised PSUM {}; the first matmul must overwrite",
                                cx.name(origin),
                                m.tensor(dst.tensor).name
                            );
                            out.push(cx.at(origin, h, msg));
                        }
                    }
                    _ => {}
                }
            }
            list.push(Event::Matmul(r));
        } else {
            list.push(Event::Write(r, origin));
        }
    }
    out
}

/// The [`Hazard::AffineSameLocation`]s of `body`, inside the loops `nest`
/// (outermost first): a non-matmul write to a PSUM tile that the affine loop's
/// iterations share (the tile's `scope` is not that loop or one inside it)
/// whose regions in two consecutive iterations overlap. One lint per
/// instruction, for the innermost such loop.
fn affine_writes(cx: &Cx<'_>, body: &[Stmt], nest: &mut Vec<LoopId>, out: &mut Vec<Lint>) {
    let m = cx.m;
    for s in body {
        let id = match *s {
            Stmt::Loop(l) => {
                nest.push(l);
                affine_writes(cx, &m.loop_(l).body, nest, out);
                nest.pop();
                continue;
            }
            Stmt::Inst(id) => id,
        };
        let kind = &m.inst(id).kind;
        let dst = kind.dst();
        let t = m.tensor(dst.tensor);
        if kind.as_matmul().is_some() || t.mem != Mem::Psum {
            continue;
        }
        let var_name = |l: LoopId| m.vars[m.loop_(l).var.index()].name.as_str();
        for (depth, &l) in nest.iter().enumerate().rev() {
            let lp = m.loop_(l);
            let private = t
                .scope
                .as_deref()
                .is_some_and(|v| nest[depth..].iter().any(|&inner| var_name(inner) == v));
            if !lp.affine || lp.trip_count() < 2 || private {
                continue;
            }
            let at = |val: i64| dst.region(|v| if v == lp.var { val } else { 0 });
            if at(lp.lo).overlaps(&at(lp.lo + 1)) {
                let msg = format!(
                    "affine_range iterations write the same PSUM location {} (not by matmul accumulation); use sequential_range",
                    access_to_string(m, dst)
                );
                out.push(cx.at(id, Hazard::AffineSameLocation { inst: id, loop_: l }, msg));
                break;
            }
        }
    }
}

/// A PSUM access in dynamic order.
#[derive(Clone, Copy, Debug)]
enum Event {
    /// A matmul write.
    Matmul(Region),
    /// Another write, by this (source) instruction.
    Write(Region, InstId),
    /// A read.
    Read(Region),
}

impl Event {
    fn region(&self) -> &Region {
        match self {
            Event::Matmul(r) | Event::Write(r, _) | Event::Read(r) => r,
        }
    }
}

/// Names instructions as the printer numbers them.
struct Cx<'m> {
    m: &'m Module,
    order: Vec<InstId>,
    pos: Vec<usize>,
}

impl<'m> Cx<'m> {
    fn new(m: &'m Module) -> Self {
        let order = m.insts_in_order();
        let mut pos = vec![0; m.insts.len()];
        for (n, &i) in order.iter().enumerate() {
            pos[i.index()] = n;
        }
        Cx { m, order, pos }
    }

    /// `%N (matmul)` or `%label (matmul)`.
    fn name(&self, id: InstId) -> String {
        let inst = self.m.inst(id);
        match inst.label() {
            Some(l) => format!("%{l} ({})", inst.kind.mnemonic()),
            None => format!("%{} ({})", self.pos[id.index()], inst.kind.mnemonic()),
        }
    }

    fn at(&self, id: InstId, hazard: Hazard, message: String) -> Lint {
        Lint {
            hazard,
            loc: self.m.inst(id).loc().map(str::to_string),
            message,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lints(src: &str) -> Vec<Hazard> {
        lint(&crate::text::parse(src).unwrap().module)
            .into_iter()
            .map(|l| l.hazard)
            .collect()
    }

    const INIT: &str = "psum acc [128, 2048]\nsbuf w [128, 256] bf16\nsbuf x [128, 1024] bf16\nsbuf y [128, 2048]\n\
         block b {\n  memset acc = 0\n  loop k 0..2 {\n    matmul acc <- w, x\n  }\n  copy y <- acc\n}\n";

    #[test]
    fn accumulating_onto_a_memset_is_a_gen2_gen3_hazard() {
        let h = Hazard::AccumulateOntoInit {
            inst: InstId(1),
            init: InstId(0),
        };
        assert_eq!(
            lints(&format!("arch trn1\n{INIT}")),
            std::slice::from_ref(&h)
        );
        assert_eq!(lints(&format!("arch gen3\n{INIT}")), [h]);
        assert_eq!(lints(&format!("arch core_v4\n{INIT}")), []);
        let overwrite = INIT.replace("<- w, x", "<- w, x accumulate=false");
        assert_eq!(lints(&format!("arch trn1\n{overwrite}")), []);
    }

    #[test]
    fn accumulate_true_on_the_first_write_is_a_hazard() {
        let src = INIT
            .replace("  memset acc = 0\n", "")
            .replace("<- w, x", "<- w, x accumulate=true");
        assert_eq!(
            lints(&format!("arch core_v4\n{src}")),
            [Hazard::AccumulateOntoUninit { inst: InstId(0) }]
        );
        let auto = INIT.replace("  memset acc = 0\n", "");
        assert_eq!(lints(&format!("arch trn1\n{auto}")), []);
    }

    #[test]
    fn affine_iterations_writing_one_shared_psum_location() {
        let src = |decl: &str, range: &str, dst: &str| {
            format!(
                "arch trn1\npsum acc [128, 2048]{decl}\nsbuf x [128, 2048]\nsbuf y [128, 8192]\n\
                 block b {{\n  loop i {range} {{\n    copy {dst} <- x\n    copy y[0:128, 2048*i:2048*i+2048] <- acc\n  }}\n}}\n"
            )
        };
        let hit = [Hazard::AffineSameLocation {
            inst: InstId(0),
            loop_: LoopId(0),
        }];
        assert_eq!(lints(&src("", "0..4 affine", "acc")), hit);
        assert_eq!(lints(&src("", "0..4", "acc")), []);
        assert_eq!(lints(&src("", "0..1 affine", "acc")), []);
        assert_eq!(lints(&src(" scope=i", "0..4 affine", "acc")), []);
        assert_eq!(lints(&src(" scope=j", "0..4 affine", "acc")), hit);
        let half = src("", "0..2 affine", "acc[0:128, 1024*i:1024*i+1024]");
        assert_eq!(lints(&half.replace("<- x", "<- x[0:128, 0:1024]")), []);
        let overlapping = src("", "0..2 affine", "acc[0:128, 512*i:512*i+1024]");
        assert_eq!(
            lints(&overlapping.replace("<- x", "<- x[0:128, 0:1024]")),
            hit
        );
    }

    #[test]
    fn wide_tiles_and_destinations_and_dtypes() {
        let src = "arch trn1\npsum acc [128, 4096] bf16\nsbuf w [128, 256] bf16\nsbuf x [128, 2048] bf16\n\
                   block b {\n  matmul acc[0:128, 1024:3072] <- w, x\n}\n";
        assert_eq!(
            lints(src),
            [
                Hazard::TileCrossesBank {
                    tensor: TensorId(0)
                },
                Hazard::DstDtype {
                    inst: InstId(0),
                    dtype: DType::Bf16
                },
                Hazard::MatmulWiderThanBank { inst: InstId(0) },
            ]
        );
    }
}
