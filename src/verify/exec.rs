//! Dynamic execution order and the accumulation-run rule (SPEC §2.4), shared
//! by the simulator, the checker and the static checks.
//!
//! [`for_each_step`] runs a module's blocks and loops in dynamic program order
//! and hands every instruction instance to a callback with the current loop
//! variable values. [`RunTracker`] decides, instance by instance, whether a
//! matmul-family write starts an accumulation run (`=`), starts one on top of
//! an init (`+=`), or continues a run (`+=`).

use super::rects::{Rect, RectMap};
use crate::entity::IdMap;
use crate::ir::{Access, InstId, Module, Region, Stmt, Tensor, TensorId, VarId};
use std::fmt;

/// The loop variables bound at one dynamic instruction instance.
#[derive(Clone, Debug, Default)]
pub(crate) struct Env {
    /// Current value of every variable (indexed by [`VarId`]; unbound are 0).
    pub values: IdMap<VarId, i64>,
    /// Bound variables, outermost first.
    pub bound: Vec<VarId>,
}

impl Env {
    /// Evaluates `a` to a concrete region.
    pub(crate) fn region(&self, a: &Access) -> Region {
        a.region(|v| self.values.get(v).copied().unwrap_or(0))
    }
}

/// Calls `f` for every dynamic instruction instance of `m`, in order.
pub(crate) fn for_each_step<E>(
    m: &Module,
    mut f: impl FnMut(InstId, &Env) -> Result<(), E>,
) -> Result<(), E> {
    let mut env = Env {
        values: IdMap::with_len(m.vars.len(), 0),
        bound: Vec::new(),
    };
    for b in &m.blocks {
        run_body(m, &b.body, &mut env, &mut f)?;
    }
    Ok(())
}

fn run_body<E>(
    m: &Module,
    body: &[Stmt],
    env: &mut Env,
    f: &mut impl FnMut(InstId, &Env) -> Result<(), E>,
) -> Result<(), E> {
    for s in body {
        match *s {
            Stmt::Inst(i) => f(i, env)?,
            Stmt::Loop(l) => {
                let lp = m.loop_(l);
                env.bound.push(lp.var);
                for v in lp.lo..lp.hi {
                    env.values[lp.var] = v;
                    run_body(m, &lp.body, env, f)?;
                }
                env.bound.pop();
            }
        }
    }
    Ok(())
}

/// How instructions are named in diagnostics: `%label`, or `%N` with N the
/// instruction's program position (as the printer numbers them). Names are
/// made when asked for (a diagnostic names a few instructions of millions).
pub(crate) struct InstNames {
    positions: IdMap<InstId, u32>,
}

impl InstNames {
    /// Numbers every instruction reachable in `m`.
    pub(crate) fn new(m: &Module) -> Self {
        let mut positions = IdMap::with_len(m.insts.len(), u32::MAX);
        for (pos, id) in m.insts_in_order().into_iter().enumerate() {
            positions[id] = pos as u32;
        }
        InstNames { positions }
    }

    /// The static name of `id`.
    pub(crate) fn get(&self, m: &Module, id: InstId) -> String {
        let inst = m.inst(id);
        let name = match inst.label() {
            Some(l) => format!("%{l}"),
            None => format!("%{}", self.positions[id]),
        };
        match inst.loc() {
            Some(loc) => format!("{name} at {loc}"),
            None => name,
        }
    }

    /// The name of one dynamic instance: `%a (k=1, j=0)` inside loops.
    pub(crate) fn instance(&self, m: &Module, id: InstId, env: &Env) -> String {
        let b: Vec<(VarId, i64)> = env.bound.iter().map(|&v| (v, env.values[v])).collect();
        self.instance_with(m, id, &b)
    }

    /// The name of one dynamic instance given its loop bindings, outermost first.
    pub(crate) fn instance_with(
        &self,
        m: &Module,
        id: InstId,
        bindings: &[(VarId, i64)],
    ) -> String {
        let mut s = self.get(m, id);
        if !bindings.is_empty() {
            let iters: Vec<String> = bindings
                .iter()
                .map(|(v, x)| format!("{}={x}", m.vars[*v].name))
                .collect();
            s.push_str(&format!(" ({})", iters.join(", ")));
        }
        s
    }
}

/// A region that does not fit its tensor (or is misaligned).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadAccess {
    /// The instruction instance.
    pub inst: String,
    /// The tensor.
    pub tensor: String,
    /// The evaluated region.
    pub region: Region,
}

impl fmt::Display for BadAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = &self.region;
        write!(
            f,
            "{}: access {}[{}:{}, {}:{}] lies outside the tensor or splits an element",
            self.inst, self.tensor, r.p0, r.p1, r.b0, r.b1
        )
    }
}

/// Evaluates access `a` of instruction `id` under `env`, or says which
/// instance reaches outside its tensor.
pub(crate) fn checked_region(
    m: &Module,
    names: &InstNames,
    id: InstId,
    env: &Env,
    a: &Access,
) -> Result<Region, BadAccess> {
    let r = env.region(a);
    let t = m.tensor(a.tensor);
    if region_fits(t, &r) {
        Ok(r)
    } else {
        Err(BadAccess {
            inst: names.instance(m, id, env),
            tensor: t.name.clone(),
            region: r,
        })
    }
}

/// Replaces `out` by the evaluated source regions of instruction `id`, in
/// operand order, or says which instance reaches outside its tensor.
pub(crate) fn source_regions(
    m: &Module,
    names: &InstNames,
    id: InstId,
    env: &Env,
    out: &mut Vec<(TensorId, Region)>,
) -> Result<(), BadAccess> {
    out.clear();
    let mut checked = Ok(());
    m.inst(id).kind.for_each_src(|a| {
        if checked.is_ok() {
            checked = checked_region(m, names, id, env, a).map(|r| out.push((a.tensor, r)));
        }
    });
    checked
}

/// Whether `r` lies inside `t` with element-aligned byte bounds.
pub(crate) fn region_fits(t: &Tensor, r: &Region) -> bool {
    let ds = i64::from(t.dtype.size());
    0 <= r.p0
        && r.p0 <= r.p1
        && r.p1 <= i64::from(t.partitions)
        && 0 <= r.b0
        && r.b0 <= r.b1
        && r.b1 <= i64::from(t.bytes)
        && r.b0 % ds == 0
        && r.b1 % ds == 0
}

/// What the 2.4 run rule says about one matmul-family write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RunStep {
    /// The accumulation run this write belongs to (numbered from 0).
    pub run: u32,
    /// Whether it is the first write of its run.
    pub head: bool,
    /// Whether the run starts on top of an init (a covering non-matmul write).
    pub init: bool,
}

impl RunStep {
    /// Whether the write accumulates (`+=`) rather than assigns (`=`).
    pub(crate) fn accumulates(&self) -> bool {
        !self.head || self.init
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum EventKind {
    Read,
    Write,
    Matmul,
}

struct Event {
    region: Region,
    kind: EventKind,
    run: u32,
}

/// Tracks the 2.4 accumulation runs of every PSUM tensor of a module: per
/// cell, the most recent event (read, non-matmul write, matmul write) that
/// touched it, as a map of pieces created on the tensor's first access.
pub(crate) struct RunTracker {
    /// Per tensor: last event id (1-based, 0 = none) per byte; `None` until
    /// first touched (and always for non-PSUM tensors).
    last: IdMap<TensorId, Option<RectMap<u32>>>,
    psum: IdMap<TensorId, bool>,
    events: Vec<Event>,
    runs: u32,
}

fn rect_of(r: &Region) -> Rect {
    Rect::new(r.p0 as u32, r.p1 as u32, r.b0 as u32, r.b1 as u32)
}

impl RunTracker {
    /// A tracker for the PSUM tensors of `m`, nothing touched yet.
    pub(crate) fn new(m: &Module) -> Self {
        RunTracker {
            last: (0..m.tensors.len()).map(|_| None).collect(),
            psum: m
                .tensors
                .values()
                .map(|t| t.mem == crate::ir::Mem::Psum)
                .collect(),
            events: Vec::new(),
            runs: 0,
        }
    }

    fn latest(&self, t: TensorId, r: &Region) -> Option<&Event> {
        let last = self.last[t].as_ref()?;
        let mut id = 0;
        last.visit(rect_of(r), |_, &e| id = id.max(e));
        id.checked_sub(1).map(|i| &self.events[i as usize])
    }

    fn record(&mut self, m: &Module, t: TensorId, r: Region, kind: EventKind, run: u32) {
        if !self.psum[t] {
            return;
        }
        self.events.push(Event {
            region: r,
            kind,
            run,
        });
        let id = self.events.len() as u32;
        let tt = m.tensor(t);
        self.last[t]
            .get_or_insert_with(|| RectMap::new(tt.partitions, tt.bytes, 0))
            .set(rect_of(&r), id);
    }

    /// A read of region `r` (already checked to fit) of tensor `t`.
    pub(crate) fn read(&mut self, m: &Module, t: TensorId, r: Region) {
        self.record(m, t, r, EventKind::Read, u32::MAX);
    }

    /// A non-matmul write.
    pub(crate) fn write(&mut self, m: &Module, t: TensorId, r: Region) {
        self.record(m, t, r, EventKind::Write, u32::MAX);
    }

    /// A matmul-family write; returns its place in the run structure.
    pub(crate) fn matmul(&mut self, m: &Module, t: TensorId, r: Region) -> RunStep {
        let step = match self.latest(t, &r) {
            Some(ev) if ev.kind == EventKind::Matmul && ev.region == r => RunStep {
                run: ev.run,
                head: false,
                init: false,
            },
            prev => {
                let init =
                    prev.is_some_and(|ev| ev.kind == EventKind::Write && ev.region.contains(&r));
                self.runs += 1;
                RunStep {
                    run: self.runs - 1,
                    head: true,
                    init,
                }
            }
        };
        self.record(m, t, r, EventKind::Matmul, step.run);
        step
    }
}
