//! Structural soundness (SPEC §2.5, §2.6): what a module read from JSON
//! can get wrong and one read from text cannot.

use super::error::{err, malformed, ValidateError, ValidateErrorKind};
use crate::entity::IdMap;
use crate::ir::MAX_LOOP_DEPTH;
use crate::ir::{Bound, InstId, InstKind, Loc, LoopId, Module, Stmt, VarId};
use crate::text::lexer::{is_label, is_name};

/// Largest magnitude of an affine coefficient or constant, so that every
/// evaluation over valid loop ranges fits in `i64`.
pub const MAX_AFFINE: i64 = 1 << 32;

/// Largest magnitude of a loop bound.
pub const MAX_LOOP_BOUND: i64 = 1 << 24;

/// [`validate_structure`]; returns the loop that binds each variable.
pub(super) fn structure(m: &Module) -> Result<IdMap<VarId, Option<LoopId>>, ValidateError> {
    struct S<'m> {
        m: &'m Module,
        inst_seen: IdMap<InstId, bool>,
        loop_seen: IdMap<LoopId, bool>,
        loop_of_var: IdMap<VarId, Option<LoopId>>,
        scope: Vec<VarId>,
    }
    impl S<'_> {
        fn body(&mut self, body: &[Stmt]) -> Result<(), ValidateError> {
            for s in body {
                match *s {
                    Stmt::Inst(i) => {
                        if self.inst_seen.get(i) != Some(&false) {
                            return malformed(
                                Loc::Module,
                                format!("instruction {i} is out of range or placed twice"),
                            );
                        }
                        self.inst_seen[i] = true;
                        self.inst(i)?;
                    }
                    Stmt::Loop(l) => {
                        if self.loop_seen.get(l) != Some(&false) {
                            return malformed(
                                Loc::Module,
                                format!("{l} is out of range or placed twice"),
                            );
                        }
                        self.loop_seen[l] = true;
                        let v = self.m.loops[l].var;
                        let Some(var) = self.m.vars.get(v) else {
                            return malformed(
                                Loc::Loop(l),
                                format!("loop variable {v} is out of range"),
                            );
                        };
                        if !is_name(&var.name) {
                            return malformed(
                                Loc::Loop(l),
                                format!("bad loop variable name {:?}", var.name),
                            );
                        }
                        if self.scope.len() >= MAX_LOOP_DEPTH {
                            return malformed(
                                Loc::Loop(l),
                                format!("loops nested deeper than {MAX_LOOP_DEPTH}"),
                            );
                        }
                        if self.loop_of_var[v].is_some() {
                            return malformed(
                                Loc::Loop(l),
                                format!("loop variable {v} is bound by two loops"),
                            );
                        }
                        if self.scope.iter().any(|&s| self.m.vars[s].name == var.name) {
                            return malformed(
                                Loc::Loop(l),
                                format!(
                                    "loop variable '{}' shadows the variable of an enclosing loop",
                                    var.name
                                ),
                            );
                        }
                        let lp = &self.m.loops[l];
                        if let Some(&value) =
                            [lp.lo, lp.hi].iter().find(|b| b.abs() > MAX_LOOP_BOUND)
                        {
                            return err(
                                Loc::LoopRange(l),
                                ValidateErrorKind::OutOfRange {
                                    what: "loop bound",
                                    value,
                                    max: MAX_LOOP_BOUND,
                                },
                            );
                        }
                        self.loop_of_var[v] = Some(l);
                        self.scope.push(v);
                        self.body(&self.m.loops[l].body)?;
                        self.scope.pop();
                    }
                }
            }
            Ok(())
        }

        fn inst(&self, i: InstId) -> Result<(), ValidateError> {
            let inst = &self.m.insts[i];
            for l in inst.label().into_iter().chain(inst.after()) {
                if !is_label(l) {
                    return malformed(Loc::Inst(i), format!("bad label {l:?}"));
                }
            }
            if let Some(loc) = inst.loc().filter(|l| !is_loc(l)) {
                return malformed(Loc::Inst(i), format!("bad location {loc:?}"));
            }
            if let InstKind::Act { srcs, .. } | InstKind::Engine { srcs, .. } = &inst.kind {
                if srcs.is_empty() {
                    return malformed(
                        Loc::Inst(i),
                        format!("{} without sources", inst.kind.mnemonic()),
                    );
                }
            }
            let accesses = std::iter::once(inst.kind.dst()).chain(inst.kind.srcs());
            for (k, a) in accesses.enumerate() {
                if a.tensor.index() >= self.m.tensors.len() {
                    return malformed(
                        Loc::Operand(i, k),
                        format!("tensor {} is out of range", a.tensor),
                    );
                }
                if !a.is_affine() {
                    // Constant bounds are canonical and bind no variable.
                    let r = a.region(|_| 0);
                    if [r.p0, r.p1, r.b0, r.b1]
                        .iter()
                        .all(|c| c.abs() <= MAX_AFFINE)
                    {
                        continue;
                    }
                }
                for b in Bound::ALL {
                    let (constant, terms) = b.parts(a);
                    let sorted = terms.windows(2).all(|w| w[0].0 < w[1].0);
                    if !sorted || terms.iter().any(|t| t.1 == 0) {
                        return malformed(
                            Loc::Bound(i, k, b),
                            format!("bound {b} is not in canonical form"),
                        );
                    }
                    let numbers = terms.iter().map(|t| ("coefficient", t.1));
                    let big = std::iter::once(("constant", constant))
                        .chain(numbers)
                        .find(|n| n.1.abs() > MAX_AFFINE);
                    if let Some((what, value)) = big {
                        return err(
                            Loc::Bound(i, k, b),
                            ValidateErrorKind::OutOfRange {
                                what,
                                value,
                                max: MAX_AFFINE,
                            },
                        );
                    }
                    if let Some((v, _)) = terms.iter().find(|t| !self.scope.contains(&t.0)) {
                        return malformed(
                            Loc::Bound(i, k, b),
                            format!("bound {b} uses {v}, which no enclosing loop binds"),
                        );
                    }
                }
            }
            Ok(())
        }
    }
    for t in &m.tensors {
        if !is_name(&t.name) {
            return malformed(Loc::Module, format!("bad tensor name {:?}", t.name));
        }
        if let Some(loc) = t.loc.as_deref().filter(|l| !is_loc(l)) {
            return malformed(Loc::Module, format!("bad location {loc:?}"));
        }
    }
    if m.blocks.is_empty() {
        return malformed(Loc::Module, "no block".to_string());
    }
    let mut s = S {
        m,
        inst_seen: IdMap::with_len(m.insts.len(), false),
        loop_seen: IdMap::with_len(m.loops.len(), false),
        loop_of_var: IdMap::with_len(m.vars.len(), None),
        scope: Vec::new(),
    };
    for b in &m.blocks {
        if !is_name(&b.name) {
            return malformed(Loc::Module, format!("bad block name {:?}", b.name));
        }
        s.body(&b.body)?;
    }
    Ok(s.loop_of_var)
}

/// Whether `s` prints as a `"…"` string the lexer reads back (SPEC §2.1).
fn is_loc(s: &str) -> bool {
    !s.contains(['"', '\n'])
}
