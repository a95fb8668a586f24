//! Full loop unrolling (SPEC §4.3 preamble), run by `compile` after
//! allocation and before the matmul passes, which work on loop-free programs.
//!
//! Every loop is replaced by one copy of its body per iteration, in order.
//! Access bounds are evaluated to constants. A labelled instruction's copies
//! get one `.V` suffix per enclosing loop, V the loop variable's value
//! (`%a` inside `loop i` and `loop j` becomes `%a.0.1`, …; a negative value
//! `-2` is written `n2`, as labels admit no `-`); unlabelled instructions
//! stay unlabelled. An `after=%L` is pointed at the copy of `L` in the
//! current iteration of the loops it shares with the instruction and the
//! last iteration of the others. The resulting instruction count is computed
//! arithmetically first, so an over-large program is rejected before any
//! memory is spent on it.

use crate::entity::IdMap;
use crate::ir::{Access, Block, Inst, InstId, LoopId, Module, Stmt, VarId, Visit};
use std::collections::{HashMap, HashSet};

/// The most instructions an unrolled program may have (SPEC §4.3).
pub const MAX_UNROLLED_INSTS: u128 = 10_000_000;

/// Why a module could not be unrolled.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UnrollError {
    /// The unrolled program would exceed [`MAX_UNROLLED_INSTS`].
    #[error(
        "unrolling would produce {count} instructions, more than the limit of {MAX_UNROLLED_INSTS}"
    )]
    TooManyInstructions {
        /// The instruction count after unrolling (saturating).
        count: u128,
    },
    /// Two unrolled copies (or a copy and another instruction) share a label.
    #[error("unrolling creates the label %{label} twice")]
    DuplicateLabel {
        /// The clashing label (without `%`).
        label: String,
    },
}

/// The number of instructions `m` has once fully unrolled (saturating).
pub fn unrolled_count(m: &Module) -> u128 {
    m.blocks
        .iter()
        .fold(0u128, |acc, b| acc.saturating_add(body_count(m, &b.body)))
}

fn body_count(m: &Module, body: &[Stmt]) -> u128 {
    body.iter().fold(0u128, |acc, s| {
        let n = match *s {
            Stmt::Inst(_) => 1,
            Stmt::Loop(l) => {
                let lp = m.loop_(l);
                u128::from(lp.trip_count()).saturating_mul(body_count(m, &lp.body))
            }
        };
        acc.saturating_add(n)
    })
}

/// Returns the loop-free program equivalent to `m` (SPEC §4.3).
///
/// ```
/// let src = "arch trn1\n\nsbuf x [128, 512]\n\nblock main {\n  loop i 0..3 {\n    act x[0:128, i*128 : i*128+128] <- x[0:128, i*128 : i*128+128]\n  }\n}\n";
/// let m = psum::text::parse(src)?.module;
/// let u = psum::unroll::unroll(&m)?;
/// assert_eq!(
///     psum::text::print(&u),
///     "arch trn1\n\nsbuf x [128, 512]\n\nblock main {\n  \
///      act x[0:128, 0:128] <- x[0:128, 0:128]\n  \
///      act x[0:128, 128:256] <- x[0:128, 128:256]\n  \
///      act x[0:128, 256:384] <- x[0:128, 256:384]\n}\n"
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn unroll(m: &Module) -> Result<Module, UnrollError> {
    unroll_with_origins(m).map(|(u, _)| u)
}

/// [`unroll`], also returning for every instruction of the unrolled module
/// (indexed by its [`InstId`]) the instruction of `m` it is a copy of.
pub fn unroll_with_origins(m: &Module) -> Result<(Module, Vec<InstId>), UnrollError> {
    let count = unrolled_count(m);
    if count > MAX_UNROLLED_INSTS {
        return Err(UnrollError::TooManyInstructions { count });
    }
    let mut u = Unroller {
        m,
        label_nests: HashMap::new(),
        env: IdMap::with_len(m.vars.len(), 0),
        nest: Vec::new(),
        labels: HashSet::new(),
        out: Module::new(m.arch.clone()),
        origins: Vec::with_capacity(usize::try_from(count).unwrap_or(0)),
    };
    u.out.tensors = m.tensors.clone();
    m.walk(|v, nest| {
        if let Visit::Inst(i) = v {
            if let Some(l) = m.inst(i).label() {
                u.label_nests.insert(l, nest.to_vec());
            }
        }
    });
    for b in &m.blocks {
        let mut body = Vec::new();
        u.expand(&b.body, &mut body)?;
        u.out.blocks.push(Block {
            name: b.name.clone(),
            body,
        });
    }
    Ok((u.out, u.origins))
}

/// One `.V` label suffix; a negative value `-V` is written `.nV`, since
/// labels admit no `-`.
fn label_part(v: i64) -> String {
    if v < 0 {
        format!(".n{}", v.unsigned_abs())
    } else {
        format!(".{v}")
    }
}

struct Unroller<'m> {
    m: &'m Module,
    /// Loop nest (outermost first) of each labelled instruction.
    label_nests: HashMap<&'m str, Vec<LoopId>>,
    /// Current value of every loop variable.
    env: IdMap<VarId, i64>,
    /// Loops currently being expanded, outermost first.
    nest: Vec<LoopId>,
    /// Labels emitted so far.
    labels: HashSet<String>,
    out: Module,
    /// Source instruction of each emitted instruction.
    origins: Vec<InstId>,
}

impl Unroller<'_> {
    fn expand(&mut self, body: &[Stmt], out_body: &mut Vec<Stmt>) -> Result<(), UnrollError> {
        for s in body {
            match *s {
                Stmt::Inst(i) => {
                    let inst = self.instantiate(i)?;
                    let id = self.out.add_inst(inst);
                    debug_assert_eq!(id.index(), self.origins.len());
                    self.origins.push(i);
                    out_body.push(Stmt::Inst(id));
                }
                Stmt::Loop(l) => {
                    let lp = self.m.loop_(l);
                    self.nest.push(l);
                    for v in lp.lo..lp.hi {
                        self.env[lp.var] = v;
                        self.expand(&lp.body, out_body)?;
                    }
                    self.nest.pop();
                }
            }
        }
        Ok(())
    }

    /// The `.V.W…` suffix of the current copy of an instruction in `nest`.
    fn suffix(&self) -> String {
        self.nest
            .iter()
            .map(|&l| label_part(self.env[self.m.loop_(l).var]))
            .collect()
    }

    /// The suffix naming the copy of an `after=` target in loops `tnest`:
    /// the current iteration of the loops that enclose this instruction too,
    /// the last iteration of the others.
    fn target_suffix(&self, tnest: &[LoopId]) -> String {
        let shared = tnest
            .iter()
            .zip(&self.nest)
            .take_while(|(a, b)| a == b)
            .count();
        tnest
            .iter()
            .enumerate()
            .map(|(depth, &l)| {
                let lp = self.m.loop_(l);
                label_part(if depth < shared {
                    self.env[lp.var]
                } else {
                    lp.hi - 1
                })
            })
            .collect()
    }

    fn instantiate(&mut self, id: InstId) -> Result<Inst, UnrollError> {
        let src = self.m.inst(id);
        let mut inst = src.clone();
        let env = &self.env;
        let eval = |a: &mut Access| {
            let r = a.region(|v| env[v]);
            *a = Access::rect(a.tensor, r.p0, r.p1, r.b0, r.b1);
        };
        eval(inst.kind.dst_mut());
        inst.kind.for_each_src_mut(eval);
        if let Some(l) = src.label() {
            let label = format!("{l}{}", self.suffix());
            if !self.labels.insert(label.clone()) {
                return Err(UnrollError::DuplicateLabel { label });
            }
            inst.set_label(Some(label));
        }
        if let Some(target) = src.after() {
            if let Some(tnest) = self.label_nests.get(target) {
                inst.set_after(Some(format!("{target}{}", self.target_suffix(tnest))));
            }
        }
        Ok(inst)
    }
}
