//! PSUM hazard lints (SPEC §9.4): rules of the hardware that a program may
//! break while still meaning something to psum. [`lint`] finds them and
//! returns typed [`Lint`]s naming the instruction and, for traced kernels,
//! the kernel line (`loc=`).
//!
//! Each rule is one function of the rule list `RULES` and fires only where the public
//! NKI documentation sentence SPEC §9.4 quotes for it applies, on the
//! NeuronCore versions that sentence names (NeuronCore-v2 is gen2,
//! NeuronCore-v3 gen3, NeuronCore-v4 gen4). The accumulation rules read the
//! accumulation runs of SPEC §2.4 on the unrolled program, as
//! `matmul::groups` computes them for legalization; the others are static or
//! per unrolled instruction. [`lint`] needs only a structurally sound module
//! (any parsed one): it is run before validation so that the hazards
//! validation rejects outright (a non-f32 or too wide matmul destination on
//! gen2/gen3) are still named. [`lint_with`] also checks the `affine_range`
//! loops the tracer unrolled, which the program itself no longer shows.

use crate::arch::{self, Arch, PSUM_BANK_SIZE};
use crate::entity::IdMap;
use crate::ir::{Access, DType, InstId, LoopId, MatmulKind, Mem, Module, Region, Stmt, TensorId};
use crate::matmul::{groups, AccGroup, Trace};
use crate::text::{access_to_string, InstNames};
use crate::unroll;
use std::collections::HashSet;
use std::fmt;

/// One hazard.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Hazard {
    /// gen2/gen3: a matmul that asked `accumulate=true` heads an
    /// accumulation run onto PSUM a non-matmul instruction initialised.
    AccumulateOntoInit {
        /// The matmul heading the run.
        inst: InstId,
        /// The instruction that wrote the PSUM it accumulates onto.
        init: InstId,
    },
    /// A matmul that asked `accumulate=true` heads an accumulation run onto
    /// PSUM nothing wrote.
    AccumulateOntoUninit {
        /// The matmul.
        inst: InstId,
    },
    /// A matmul destination of a dtype the Tensor Engine does not write.
    DstDtype {
        /// The matmul.
        inst: InstId,
        /// The destination's dtype.
        dtype: DType,
    },
    /// gen2/gen3: a matmul writing more than one bank.
    MatmulWiderThanBank {
        /// The matmul.
        inst: InstId,
    },
    /// Two iterations of an `affine_range` loop write one PSUM location of
    /// a tile they share, other than by accumulation.
    AffineSameLocation {
        /// The writing instruction.
        inst: InstId,
        /// The affine loop whose iterations collide.
        loop_: AffineLoop,
    },
}

impl Hazard {
    /// The instruction the hazard is reported at.
    pub fn inst(&self) -> InstId {
        match *self {
            Hazard::AccumulateOntoInit { inst, .. }
            | Hazard::AccumulateOntoUninit { inst }
            | Hazard::DstDtype { inst, .. }
            | Hazard::MatmulWiderThanBank { inst }
            | Hazard::AffineSameLocation { inst, .. } => inst,
        }
    }
}

/// An `affine_range` loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AffineLoop {
    /// A loop of the program (`loop … affine`).
    Kept(LoopId),
    /// The loop at this index of the unrolled loops given to [`lint_with`].
    Unrolled(usize),
}

/// An `affine_range` loop the tracer unrolled (SPEC §9.2): what each of its
/// iterations issued.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnrolledAffine {
    /// The kernel line of the loop (`kernel.py:12`).
    pub loc: Option<String>,
    /// The instructions of each iteration, in iteration order.
    pub iterations: Vec<Vec<InstId>>,
}

/// A hazard with the names it is reported with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lint {
    /// What is wrong.
    pub hazard: Hazard,
    /// The kernel line of the instruction (`kernel.py:42`), when traced.
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
    m.insts.values().any(|i| i.loc().is_some()) || m.tensors.values().any(|t| t.loc.is_some())
}

/// Every hazard of `m`, in program order of the instruction. An unknown
/// architecture has none, a program too large to unroll no accumulation or
/// bank lints (validation reports both).
///
/// ```
/// // The Tensor Engine writes only f32 into PSUM.
/// let src = "arch trn1\n\npsum a [128, 512] bf16\nsbuf w [128, 128] bf16\nsbuf x [128, 512] bf16\n\nblock main {\n  matmul a <- w, x\n}\n";
/// let m = psum::text::parse(src)?.module;
/// let lints = psum::lint::lint(&m);
/// assert_eq!(lints.len(), 1);
/// assert_eq!(
///     lints[0].to_string(),
///     "warning: %0 (matmul) writes bf16 PSUM a; the matmul destination is f32 on trn1"
/// );
/// # Ok::<(), psum::text::ParseError>(())
/// ```
pub fn lint(m: &Module) -> Vec<Lint> {
    lint_with(m, &[])
}

/// [`lint`], and the iterations of `unrolled` loops that write one PSUM
/// location (the instruction ids are `m`'s).
pub fn lint_with(m: &Module, unrolled: &[UnrolledAffine]) -> Vec<Lint> {
    let Ok(arch) = arch::lookup(&m.arch) else {
        return Vec::new();
    };
    let cx = Cx::new(m, arch, unrolled);
    let mut out = Vec::new();
    for rule in RULES {
        rule(&cx, &mut out);
    }
    out.sort_by_key(|l| cx.names.position(l.hazard.inst()));
    out
}

/// A rule: appends the hazards it finds.
type Rule = fn(&Cx<'_>, &mut Vec<Lint>);

/// The rules of SPEC §9.4, in the order they report at one instruction.
const RULES: &[Rule] = &[
    accumulate_onto_init,
    accumulate_onto_uninit,
    dst_dtype,
    matmul_wider_than_bank,
    affine_same_location,
];

/// gen2/gen3: an `accumulate=true` matmul heading a run whose init (SPEC
/// §2.4) is a non-matmul write (nki.isa.nc_matmul, SPEC §9.4). A run the
/// kernel left to the compiler (`accumulate` unset, the `+=` form) is
/// legalized by SPEC §4.3.4 and is no hazard.
fn accumulate_onto_init(cx: &Cx<'_>, out: &mut Vec<Lint>) {
    if !cx.v2_or_v3() {
        return;
    }
    let mut seen = HashSet::new();
    for (run, head, flat) in cx.accumulating_heads() {
        let Some(init) = run.init.map(|o| flat.origin(o)) else {
            continue;
        };
        if seen.insert((head, init)) {
            let message = format!(
                "{} accumulates (accumulate=true) onto PSUM {}, which {} initialised; on {} a matmul \
                 accumulating onto PSUM a non-matmul instruction initialised is undefined: let the first \
                 matmul overwrite (accumulate=false)",
                cx.names.describe(head, false),
                cx.m.tensor(run.tensor).name,
                cx.names.describe(init, true),
                cx.m.arch
            );
            out.push(cx.at(
                head,
                Hazard::AccumulateOntoInit { inst: head, init },
                message,
            ));
        }
    }
}

/// Any version: an `accumulate=true` matmul heading a run onto PSUM nothing
/// wrote (nki.isa.nc_matmul, SPEC §9.4).
fn accumulate_onto_uninit(cx: &Cx<'_>, out: &mut Vec<Lint>) {
    let mut seen = HashSet::new();
    for (run, head, _) in cx.accumulating_heads() {
        if run.untouched && seen.insert(head) {
            let message = format!(
                "{} accumulates (accumulate=true) onto PSUM {}, which nothing wrote before; accumulating \
                 onto uninitialised PSUM is undefined: let the first matmul overwrite (accumulate=false)",
                cx.names.describe(head, false),
                cx.m.tensor(run.tensor).name
            );
            out.push(cx.at(head, Hazard::AccumulateOntoUninit { inst: head }, message));
        }
    }
}

/// gen2–gen4: a matmul destination of a dtype the version does not write
/// (nki.isa.nc_matmul and the architecture guides, SPEC §9.4): f32 on gen2;
/// f32, or the 16-bit dtype of the data a PE transpose moves, on gen3; and
/// bf16 too on gen4.
fn dst_dtype(cx: &Cx<'_>, out: &mut Vec<Lint>) {
    let level = cx.arch.arch_level();
    if level < 20 {
        return;
    }
    for &id in cx.names.order() {
        let Some(mm) = cx.m.inst(id).kind.as_matmul() else {
            continue;
        };
        let dt = cx.m.tensor(mm.dst.tensor);
        let data = cx.m.tensor(mm.stationary.tensor).dtype;
        let transposed = mm.kind == MatmulKind::Transpose
            && level >= 30
            && matches!(dt.dtype, DType::Bf16 | DType::F16)
            && dt.dtype == data;
        let allowed =
            dt.dtype == DType::F32 || (dt.dtype == DType::Bf16 && level >= 40) || transposed;
        if dt.mem == Mem::Psum && !allowed {
            let expected = match (level >= 40, mm.kind == MatmulKind::Transpose && level >= 30) {
                (true, false) => "f32 or bf16",
                (false, false) => "f32",
                (true, true) => "f32, bf16 or the transposed data's 16-bit dtype",
                (false, true) => "f32 or the transposed data's 16-bit dtype",
            };
            let message = format!(
                "{} writes {} PSUM {}; the matmul destination is {expected} on {}",
                cx.names.describe(id, false),
                dt.dtype,
                dt.name,
                cx.m.arch
            );
            let hazard = Hazard::DstDtype {
                inst: id,
                dtype: dt.dtype,
            };
            out.push(cx.at(id, hazard, message));
        }
    }
}

/// gen2/gen3: a matmul whose destination crosses a bank boundary
/// (nki.isa.nc_matmul, SPEC §9.4); on gen4 a matmul may write all eight banks.
fn matmul_wider_than_bank(cx: &Cx<'_>, out: &mut Vec<Lint>) {
    let Some(flat) = cx.flat.as_ref().filter(|_| cx.v2_or_v3()) else {
        return;
    };
    let bank = i64::from(PSUM_BANK_SIZE);
    let mut seen = HashSet::new();
    for (ord, facts) in flat.trace.facts.iter().enumerate() {
        let Some(w) = flat.trace.write(ord).filter(|_| facts.matmul) else {
            continue;
        };
        let origin = flat.origin(ord);
        if w.rect.x0.div_euclid(bank) != (w.rect.x1 - 1).div_euclid(bank) && seen.insert(origin) {
            let dst = cx.m.inst(origin).kind.dst();
            let message = format!(
                "{} writes {} bytes per partition of {} across a bank boundary; a matmul output stays \
                 inside one 2 KiB bank on {}",
                cx.names.describe(origin, false),
                w.rect.x1 - w.rect.x0,
                access_to_string(cx.m, dst),
                cx.m.arch
            );
            out.push(cx.at(
                origin,
                Hazard::MatmulWiderThanBank { inst: origin },
                message,
            ));
        }
    }
}

/// Any version: two iterations of an `affine_range` loop write one location
/// of a PSUM tile they share, other than by an accumulation (a matmul, or a
/// write that reads its own destination, `t += u`): a loop-carried
/// dependency (nki.language.affine_range, SPEC §9.4). A kept loop compares
/// its first two iterations (other loop variables fixed), a tile whose
/// `scope` is that loop or one inside it being each iteration's own; an
/// unrolled one compares each iteration with the earlier ones, once per
/// kernel line.
fn affine_same_location(cx: &Cx<'_>, out: &mut Vec<Lint>) {
    for b in &cx.m.blocks {
        kept_affine_writes(cx, &b.body, &mut Vec::new(), out);
    }
    for (k, lp) in cx.unrolled.iter().enumerate() {
        let mut earlier: Vec<(TensorId, Region)> = Vec::new();
        let mut reported = HashSet::new();
        for iteration in &lp.iterations {
            let mut mine = Vec::new();
            for &id in iteration {
                let Some(dst) = cx.shared_psum_write(id) else {
                    continue;
                };
                let r = dst.region(|_| 0);
                let hit = earlier
                    .iter()
                    .any(|(t, q)| *t == dst.tensor && q.overlaps(&r));
                let line =
                    cx.m.inst(id)
                        .loc()
                        .map_or_else(|| format!("{id:?}"), str::to_string);
                if hit && reported.insert(line) {
                    out.push(cx.affine_lint(id, AffineLoop::Unrolled(k)));
                }
                mine.push((dst.tensor, r));
            }
            earlier.extend(mine);
        }
    }
}

/// The kept-loop half of [`affine_same_location`] over `body`, inside the
/// loops `nest` (outermost first): one lint per instruction, for the
/// innermost affine loop whose iterations collide.
fn kept_affine_writes(cx: &Cx<'_>, body: &[Stmt], nest: &mut Vec<LoopId>, out: &mut Vec<Lint>) {
    let m = cx.m;
    for s in body {
        let id = match *s {
            Stmt::Loop(l) => {
                nest.push(l);
                kept_affine_writes(cx, &m.loop_(l).body, nest, out);
                nest.pop();
                continue;
            }
            Stmt::Inst(id) => id,
        };
        let Some(dst) = cx.shared_psum_write(id) else {
            continue;
        };
        let t = m.tensor(dst.tensor);
        let var_name = |l: LoopId| m.vars[m.loop_(l).var].name.as_str();
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
                out.push(cx.affine_lint(id, AffineLoop::Kept(l)));
                break;
            }
        }
    }
}

/// What the rules read: the module, its architecture and names, and the
/// unrolled program.
struct Cx<'m> {
    m: &'m Module,
    arch: Arch,
    names: InstNames<'m>,
    unrolled: &'m [UnrolledAffine],
    /// `None` when the program is too large to unroll.
    flat: Option<Flat>,
}

/// The unrolled program with its trace and accumulation runs.
struct Flat {
    /// The instruction of `m` each unrolled instruction copies, by id.
    origins: IdMap<InstId, InstId>,
    trace: Trace,
    /// `None` when a run is wider than a zero region can be (validation
    /// rejects its tensor).
    runs: Option<Vec<AccGroup>>,
}

impl Flat {
    /// The instruction of the original program the unrolled one at `ord` copies.
    fn origin(&self, ord: usize) -> InstId {
        self.origins[self.trace.insts[ord]]
    }
}

impl<'m> Cx<'m> {
    fn new(m: &'m Module, arch: Arch, unrolled: &'m [UnrolledAffine]) -> Self {
        let flat = unroll::unroll_with_origins(m)
            .ok()
            .and_then(|(flat, origins)| {
                let trace = Trace::unallocated(&flat, &arch).ok()?;
                let runs = groups::runs(&flat, &trace).ok();
                Some(Flat {
                    origins: origins.into_iter().collect(),
                    trace,
                    runs,
                })
            });
        Cx {
            m,
            arch,
            names: InstNames::new(m),
            unrolled,
            flat,
        }
    }

    /// NeuronCore-v2 or -v3.
    fn v2_or_v3(&self) -> bool {
        (20..40).contains(&self.arch.arch_level())
    }

    /// Every run whose head asked `accumulate=true`, with the head's origin
    /// and the unrolled program the run is of.
    fn accumulating_heads(&self) -> impl Iterator<Item = (&AccGroup, InstId, &Flat)> + '_ {
        self.flat.iter().flat_map(move |f| {
            f.runs.iter().flatten().filter_map(move |run| {
                let head = f.origin(run.head());
                let asked = self.m.inst(head).kind.as_matmul()?.accumulate;
                (asked == Some(true)).then_some((run, head, f))
            })
        })
    }

    /// The destination of `id` when it is a PSUM write that is not an
    /// accumulation (a matmul, or a write reading its own destination).
    fn shared_psum_write(&self, id: InstId) -> Option<&'m Access> {
        let kind = &self.m.inst(id).kind;
        let dst = kind.dst();
        let accumulates = kind.as_matmul().is_some() || kind.srcs().any(|s| s == dst);
        (self.m.tensor(dst.tensor).mem == Mem::Psum && !accumulates).then_some(dst)
    }

    fn affine_lint(&self, id: InstId, loop_: AffineLoop) -> Lint {
        let message = format!(
            "affine_range iterations write the same PSUM location {} (not by accumulation); use \
             sequential_range",
            access_to_string(self.m, self.m.inst(id).kind.dst())
        );
        self.at(id, Hazard::AffineSameLocation { inst: id, loop_ }, message)
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

    fn hazards(src: &str) -> Vec<Hazard> {
        lint(&crate::text::parse(src).unwrap().module)
            .into_iter()
            .map(|l| l.hazard)
            .collect()
    }

    /// An accumulator initialised by `memset`, then two matmuls with `ACC`.
    fn init_then(acc: &str) -> String {
        format!(
            "psum acc [128, 2048]\nsbuf w [128, 256] bf16\nsbuf x [128, 1024] bf16\nsbuf y [128, 2048]\n\
             block b {{\n  memset acc = 0\n  loop k 0..2 {{\n    matmul acc <- w, x{acc}\n  }}\n  copy y <- acc\n}}\n"
        )
    }

    #[test]
    fn accumulate_true_onto_a_memset_is_a_gen2_gen3_hazard() {
        let h = Hazard::AccumulateOntoInit {
            inst: InstId(1),
            init: InstId(0),
        };
        let asked = init_then(" accumulate=true");
        assert_eq!(
            hazards(&format!("arch trn1\n{asked}")),
            std::slice::from_ref(&h)
        );
        assert_eq!(hazards(&format!("arch gen3\n{asked}")), [h]);
        assert_eq!(hazards(&format!("arch core_v4\n{asked}")), []);
        // Left to the compiler (the `+=` form) or overwriting: no hazard.
        for acc in ["", " accumulate=false"] {
            assert_eq!(hazards(&format!("arch trn1\n{}", init_then(acc))), []);
        }
    }

    #[test]
    fn accumulate_true_on_the_first_write_is_a_hazard_everywhere() {
        let src = init_then(" accumulate=true").replace("  memset acc = 0\n", "");
        for arch in ["trn1", "gen3", "core_v4"] {
            assert_eq!(
                hazards(&format!("arch {arch}\n{src}")),
                [Hazard::AccumulateOntoUninit { inst: InstId(0) }]
            );
        }
        let auto = init_then("").replace("  memset acc = 0\n", "");
        assert_eq!(hazards(&format!("arch trn1\n{auto}")), []);
    }

    #[test]
    fn affine_iterations_writing_one_shared_psum_location() {
        let src = |decl: &str, range: &str, write: &str| {
            format!(
                "arch trn1\npsum acc [128, 2048]{decl}\nsbuf x [128, 2048]\nsbuf y [128, 8192]\n\
                 block b {{\n  loop i {range} {{\n    {write}\n    copy y[0:128, 2048*i:2048*i+2048] <- acc\n  }}\n}}\n"
            )
        };
        let hit = [Hazard::AffineSameLocation {
            inst: InstId(0),
            loop_: AffineLoop::Kept(LoopId(0)),
        }];
        let copy = "copy acc <- x";
        assert_eq!(hazards(&src("", "0..4 affine", copy)), hit);
        assert_eq!(hazards(&src("", "0..4", copy)), []);
        assert_eq!(hazards(&src("", "0..1 affine", copy)), []);
        assert_eq!(hazards(&src(" scope=i", "0..4 affine", copy)), []);
        assert_eq!(hazards(&src(" scope=j", "0..4 affine", copy)), hit);
        // An accumulation `acc += x` is an associative reduction.
        assert_eq!(hazards(&src("", "0..4 affine", "act acc <- acc, x")), []);
        let half = "copy acc[0:128, 1024*i:1024*i+1024] <- x[0:128, 0:1024]";
        assert_eq!(hazards(&src("", "0..2 affine", half)), []);
        let overlapping = "copy acc[0:128, 512*i:512*i+1024] <- x[0:128, 0:1024]";
        assert_eq!(hazards(&src("", "0..2 affine", overlapping)), hit);
    }

    #[test]
    fn unrolled_affine_iterations_are_compared_once_per_kernel_line() {
        // Iteration 0 zeroes acc and copies into its own tile, 1 and 2 copy
        // into acc (line 7, reported once) and add onto it (line 8).
        let src = "arch trn1\npsum acc [128, 2048]\npsum own [128, 2048]\npsum own_1 [128, 2048]\n\
                   sbuf x [128, 2048]\nblock b {\n  memset acc = 0 loc=\"k.py:5\"\n  copy own <- x loc=\"k.py:4\"\n\
                   copy own_1 <- x loc=\"k.py:4\"\n  copy acc <- x loc=\"k.py:7\"\n  copy acc <- x loc=\"k.py:7\"\n\
                   act acc <- acc, x loc=\"k.py:8\"\n  act acc <- acc, x loc=\"k.py:8\"\n}\n";
        let m = crate::text::parse(src).unwrap().module;
        let order = m.insts_in_order();
        let unrolled = [UnrolledAffine {
            loc: Some("k.py:3".into()),
            iterations: vec![
                vec![order[0], order[1]],
                vec![order[2], order[3], order[5]],
                vec![order[4], order[6]],
            ],
        }];
        let lints = lint_with(&m, &unrolled);
        assert_eq!(
            lints.iter().map(|l| l.hazard.clone()).collect::<Vec<_>>(),
            [Hazard::AffineSameLocation {
                inst: order[3],
                loop_: AffineLoop::Unrolled(0),
            }]
        );
        assert_eq!(
            lints[0].to_string(),
            "k.py:7: warning: affine_range iterations write the same PSUM location acc (not by \
             accumulation); use sequential_range"
        );
        assert!(lint(&m).is_empty());
    }

    #[test]
    fn destination_dtypes_by_version() {
        let src = |arch: &str, kind: &str, dtype: &str, data: &str| {
            format!(
                "arch {arch}\npsum acc [128, 1024] {dtype}\nsbuf w [128, 256] {data}\nsbuf x [128, 1024] {data}\n\
                 block b {{\n  {kind} acc <- w, x\n}}\n"
            )
        };
        let bad = |dtype| {
            vec![Hazard::DstDtype {
                inst: InstId(0),
                dtype,
            }]
        };
        assert_eq!(
            hazards(&src("trn1", "matmul", "bf16", "bf16")),
            bad(DType::Bf16)
        );
        assert_eq!(
            hazards(&src("gen3", "matmul", "bf16", "bf16")),
            bad(DType::Bf16)
        );
        assert_eq!(hazards(&src("core_v4", "matmul", "bf16", "bf16")), []);
        assert_eq!(
            hazards(&src("core_v4", "matmul", "f16", "f16")),
            bad(DType::F16)
        );
        assert_eq!(hazards(&src("inf1", "matmul", "bf16", "bf16")), []);
        // A PE transpose writes its data's 16-bit dtype from NeuronCore-v3 on.
        assert_eq!(
            hazards(&src("trn1", "matmul.t", "bf16", "bf16")),
            bad(DType::Bf16)
        );
        assert_eq!(hazards(&src("gen3", "matmul.t", "bf16", "bf16")), []);
        assert_eq!(hazards(&src("gen3", "matmul.t", "f16", "f16")), []);
        assert_eq!(
            hazards(&src("gen3", "matmul.t", "bf16", "f16")),
            bad(DType::Bf16)
        );
    }

    #[test]
    fn a_matmul_across_a_bank_on_gen2_gen3() {
        let src = |arch: &str, dst: &str| {
            format!(
                "arch {arch}\npsum acc [128, 4096]\nsbuf w [128, 256] bf16\nsbuf x [128, 2048] bf16\n\
                 block b {{\n  matmul {dst} <- w, x[0:128, 0:1024]\n}}\n"
            )
        };
        let wide = [Hazard::MatmulWiderThanBank { inst: InstId(0) }];
        assert_eq!(hazards(&src("trn1", "acc[0:128, 1024:3072]")), wide);
        assert_eq!(hazards(&src("gen3", "acc[0:128, 1024:3072]")), wide);
        assert_eq!(hazards(&src("core_v4", "acc[0:128, 1024:3072]")), []);
        // A tile over two banks is no hazard; each matmul inside one bank.
        assert_eq!(hazards(&src("trn1", "acc[0:128, 2048:4096]")), []);
    }
}
