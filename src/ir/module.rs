//! Control structure (SPEC §2): loops, statements, blocks and the
//! [`Module`] that owns every arena, with its walks and edits.

use super::{Affine, Inst, InstId, LoopId, Tensor, TensorId, Var, VarId};
use crate::entity::{IdMap, IdVec};
use serde::{Deserialize, Serialize};

/// The deepest loop nest accepted (keeps every recursive walk shallow).
pub const MAX_LOOP_DEPTH: usize = 100;

/// A counted loop `loop VAR LO..HI { … }`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Loop {
    /// The induction variable.
    pub var: VarId,
    /// First value.
    pub lo: i64,
    /// One past the last value.
    pub hi: i64,
    /// The kernel declared the iterations independent (NKI's `affine_range`,
    /// `loop VAR LO..HI affine`); it changes no meaning, the lints read it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub affine: bool,
    /// The body.
    pub body: Vec<Stmt>,
}

impl Loop {
    /// Number of iterations (`hi − lo`, 0 if empty).
    pub fn trip_count(&self) -> u64 {
        (self.hi - self.lo).max(0) as u64
    }
}

/// An element of a block or loop body.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stmt {
    /// An instruction.
    Inst(InstId),
    /// A nested loop.
    Loop(LoopId),
}

/// A named block; blocks run in order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Block {
    /// The block's name.
    pub name: String,
    /// Its statements in program order.
    pub body: Vec<Stmt>,
}

/// A whole program: one `arch` line, declarations, and blocks.
///
/// Arena order carries no meaning; program order is given by the block and
/// loop bodies. Equality ([`Module::same_program`]) compares programs, not
/// arena layouts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Module {
    /// The architecture codename as written (`trn1`).
    pub arch: String,
    /// Tensor declarations in order.
    pub tensors: IdVec<TensorId, Tensor>,
    /// Loop variables (one per loop).
    pub vars: IdVec<VarId, Var>,
    /// Instruction arena.
    pub insts: IdVec<InstId, Inst>,
    /// Loop arena.
    pub loops: IdVec<LoopId, Loop>,
    /// Blocks in execution order.
    pub blocks: Vec<Block>,
}

impl Module {
    /// An empty module for `arch`.
    pub fn new(arch: impl Into<String>) -> Self {
        Module {
            arch: arch.into(),
            ..Default::default()
        }
    }

    /// The tensor record for `id`.
    pub fn tensor(&self, id: TensorId) -> &Tensor {
        &self.tensors[id]
    }

    /// The instruction for `id`.
    pub fn inst(&self, id: InstId) -> &Inst {
        &self.insts[id]
    }

    /// The loop for `id`.
    pub fn loop_(&self, id: LoopId) -> &Loop {
        &self.loops[id]
    }

    /// Looks a tensor up by name (linear scan).
    pub fn tensor_by_name(&self, name: &str) -> Option<TensorId> {
        self.tensors
            .iter()
            .find(|(_, t)| t.name == name)
            .map(|(id, _)| id)
    }

    /// An index from tensor names to ids, for lookups in loops over many
    /// tensors ([`Module::tensor_by_name`] scans).
    pub fn name_index(&self) -> std::collections::HashMap<&str, TensorId> {
        self.tensors
            .iter()
            .map(|(id, t)| (t.name.as_str(), id))
            .collect()
    }

    /// Declares a tensor and returns its id.
    pub fn add_tensor(&mut self, t: Tensor) -> TensorId {
        self.tensors.push(t);
        TensorId::new(self.tensors.len() - 1)
    }

    /// Adds a loop variable and returns its id.
    pub fn add_var(&mut self, name: impl Into<String>) -> VarId {
        self.vars.push(Var { name: name.into() });
        VarId::new(self.vars.len() - 1)
    }

    /// Adds an instruction to the arena (not yet placed in any body).
    pub fn add_inst(&mut self, inst: Inst) -> InstId {
        self.insts.push(inst);
        InstId::new(self.insts.len() - 1)
    }

    /// Adds a loop to the arena (not yet placed in any body).
    pub fn add_loop(&mut self, l: Loop) -> LoopId {
        self.loops.push(l);
        LoopId::new(self.loops.len() - 1)
    }

    /// Visits every statement in program order with its loop nest
    /// (outermost first). `f` sees loops on entry ([`Visit::Enter`]) and exit
    /// ([`Visit::Exit`]) and each instruction ([`Visit::Inst`]).
    pub fn walk(&self, mut f: impl FnMut(Visit, &[LoopId])) {
        let mut nest = Vec::new();
        for (bi, b) in self.blocks.iter().enumerate() {
            f(Visit::BlockStart(bi), &nest);
            self.walk_body(&b.body, &mut nest, &mut f);
        }
    }

    fn walk_body(
        &self,
        body: &[Stmt],
        nest: &mut Vec<LoopId>,
        f: &mut impl FnMut(Visit, &[LoopId]),
    ) {
        for s in body {
            match *s {
                Stmt::Inst(i) => f(Visit::Inst(i), nest),
                Stmt::Loop(l) => {
                    f(Visit::Enter(l), nest);
                    nest.push(l);
                    self.walk_body(&self.loops[l].body, nest, f);
                    nest.pop();
                    f(Visit::Exit(l), nest);
                }
            }
        }
    }

    /// Instructions in program order (each loop body once).
    pub fn insts_in_order(&self) -> Vec<InstId> {
        let mut out = Vec::new();
        self.walk(|v, _| {
            if let Visit::Inst(i) = v {
                out.push(i);
            }
        });
        out
    }

    /// Per tensor, whether a placed instruction accesses it.
    pub fn accessed_tensors(&self) -> Vec<bool> {
        let mut used = vec![false; self.tensors.len()];
        self.walk(|v, _| {
            if let Visit::Inst(i) = v {
                let kind = &self.inst(i).kind;
                for a in std::iter::once(kind.dst()).chain(kind.srcs()) {
                    if let Some(u) = used.get_mut(a.tensor.index()) {
                        *u = true;
                    }
                }
            }
        });
        used
    }

    /// Whether the program has any loop.
    pub fn has_loops(&self) -> bool {
        self.blocks
            .iter()
            .any(|b| b.body.iter().any(|s| matches!(s, Stmt::Loop(_))))
    }

    /// Rebuilds the arenas in program order, dropping unreachable entries.
    /// Two modules that print the same compare equal after compaction.
    pub fn compacted(&self) -> Module {
        let mut out = Module {
            arch: self.arch.clone(),
            tensors: self.tensors.clone(),
            ..Default::default()
        };
        let mut var_map = IdMap::with_len(self.vars.len(), None);
        let blocks = self
            .blocks
            .iter()
            .map(|b| Block {
                name: b.name.clone(),
                body: self.compact_body(&b.body, &mut out, &mut var_map),
            })
            .collect();
        out.blocks = blocks;
        out
    }

    fn compact_body(
        &self,
        body: &[Stmt],
        out: &mut Module,
        var_map: &mut IdMap<VarId, Option<VarId>>,
    ) -> Vec<Stmt> {
        body.iter()
            .map(|s| match *s {
                Stmt::Inst(i) => {
                    let mut inst = self.insts[i].clone();
                    remap_inst_vars(&mut inst, var_map);
                    Stmt::Inst(out.add_inst(inst))
                }
                Stmt::Loop(l) => {
                    let lp = &self.loops[l];
                    let nv = out.add_var(self.vars[lp.var].name.clone());
                    var_map[lp.var] = Some(nv);
                    let id = out.add_loop(Loop {
                        var: nv,
                        lo: lp.lo,
                        hi: lp.hi,
                        affine: lp.affine,
                        body: Vec::new(),
                    });
                    let b = self.compact_body(&lp.body, out, var_map);
                    out.loops[id].body = b;
                    Stmt::Loop(id)
                }
            })
            .collect()
    }

    /// Program equality: same arch, declarations and statements in program
    /// order, regardless of arena layout.
    pub fn same_program(&self, other: &Module) -> bool {
        self.compacted() == other.compacted()
    }
}

fn remap_inst_vars(inst: &mut Inst, var_map: &IdMap<VarId, Option<VarId>>) {
    let remap = |a: &mut Affine| {
        let terms = std::mem::take(&mut a.terms);
        for &(v, c) in &terms {
            a.add_term(var_map[v].unwrap_or(v), c);
        }
    };
    inst.kind.dst_mut().edit_bounds(|_, a| remap(a));
    for s in inst.kind.srcs_mut() {
        s.edit_bounds(|_, a| remap(a));
    }
}
/// One step of [`Module::walk`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Visit {
    /// Start of block `n` (blocks run in order).
    BlockStart(usize),
    /// Entering a loop (its header).
    Enter(LoopId),
    /// An instruction.
    Inst(InstId),
    /// Leaving a loop (its end).
    Exit(LoopId),
}
