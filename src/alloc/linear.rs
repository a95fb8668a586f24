//! Program points (SPEC §3.1; seed: `Rep::linearize` / `flattern_loop`).
//!
//! Blocks are numbered in order; every instruction is one point; a loop
//! contributes a header point, its body once (recursively), and an end point.
//! A loop's header and end points belong to the enclosing nest, so the points
//! strictly between `header(L)` and `end(L)` are exactly the points inside `L`.
//! The bank-timeline pictures (SPEC §8) reuse this numbering.

use crate::entity::IdMap;
use crate::ir::{InstId, LoopId, Module, Stmt};

/// What a program point is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PointKind {
    /// An instruction.
    Inst(InstId),
    /// The header of a loop.
    Header(LoopId),
    /// The end of a loop.
    End(LoopId),
}

/// A statement list of the module: a block body or a loop body.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum BodyRef {
    /// `Module::blocks[n].body`.
    Block(u32),
    /// `Module::loops[l].body`.
    Loop(LoopId),
}

/// One program point: what it is, the body holding its statement (for a
/// header or end: the loop's statement, in the enclosing body) and the
/// statement's index there. Packed in 12 bytes (a large program has
/// millions of points): read it through [`Point::kind`], [`Point::body`]
/// and [`Point::index`].
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Point {
    /// The kind's tag above [`Point::ID_BITS`], its id below.
    kind: u32,
    /// [`Point::LOOP_BODY`] for a loop body, and the block or loop id.
    body: u32,
    index: u32,
}

const _: () = assert!(std::mem::size_of::<Point>() == 12);

impl BodyRef {
    /// The loop whose body this is (`None` for a block).
    pub(crate) fn as_loop(self) -> Option<LoopId> {
        match self {
            BodyRef::Block(_) => None,
            BodyRef::Loop(l) => Some(l),
        }
    }
}

impl Point {
    /// Instruction, loop and block ids are below `2^ID_BITS`.
    const ID_BITS: u32 = 30;
    /// The body bit of a loop body.
    const LOOP_BODY: u32 = 1 << 31;

    /// The point of `kind`, statement `index` of `body`.
    ///
    /// # Panics
    /// If an instruction, loop or block id is 2^30 or more (far beyond
    /// what fits in memory).
    pub(crate) fn new(kind: PointKind, body: BodyRef, index: u32) -> Point {
        let (tag, id) = match kind {
            PointKind::Inst(i) => (0, i.0),
            PointKind::Header(l) => (1, l.0),
            PointKind::End(l) => (2, l.0),
        };
        let body = match body {
            BodyRef::Block(b) => b,
            BodyRef::Loop(l) => l.0 | Point::LOOP_BODY,
        };
        assert!(
            id >> Point::ID_BITS == 0 && (body & !Point::LOOP_BODY) >> Point::ID_BITS == 0,
            "program point ids beyond 2^30"
        );
        Point {
            kind: tag << Point::ID_BITS | id,
            body,
            index,
        }
    }

    /// What it is.
    pub(crate) fn kind(self) -> PointKind {
        let id = self.kind & ((1 << Point::ID_BITS) - 1);
        match self.kind >> Point::ID_BITS {
            0 => PointKind::Inst(InstId(id)),
            1 => PointKind::Header(LoopId(id)),
            _ => PointKind::End(LoopId(id)),
        }
    }

    /// The body holding its statement.
    pub(crate) fn body(self) -> BodyRef {
        match self.body & Point::LOOP_BODY {
            0 => BodyRef::Block(self.body),
            _ => BodyRef::Loop(LoopId(self.body & !Point::LOOP_BODY)),
        }
    }

    /// The statement's index in its body.
    pub(crate) fn index(self) -> u32 {
        self.index
    }

    /// The innermost loop around it (`None` at top level): the loop whose
    /// body holds it.
    pub(crate) fn innermost(self) -> Option<LoopId> {
        self.body().as_loop()
    }
}

impl std::fmt::Debug for Point {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Point")
            .field("kind", &self.kind())
            .field("body", &self.body())
            .field("index", &self.index)
            .finish()
    }
}

/// The linearized program: points in order and the loop structure over them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Linear {
    /// Points in program order.
    pub points: Vec<Point>,
    /// The point of each instruction (by [`InstId`]), [`UNREACHED`] when
    /// none; read through [`Linear::point_of`].
    inst_point: IdMap<InstId, u32>,
    /// Header point of each loop (by [`LoopId`]; `u32::MAX` when unreachable).
    pub header: IdMap<LoopId, u32>,
    /// End point of each loop (by [`LoopId`]; `u32::MAX` when unreachable).
    pub end: IdMap<LoopId, u32>,
    /// The loop directly around each loop.
    pub parent: IdMap<LoopId, Option<LoopId>>,
    /// Nesting depth of each loop (an outermost loop has depth 1).
    pub depth: IdMap<LoopId, u32>,
    /// Product of the trip counts of each loop and the loops around it
    /// (saturating), by [`LoopId`]; see [`Linear::weight`].
    loop_weight: IdMap<LoopId, u64>,
}

/// The point of an instruction in no body.
const UNREACHED: u32 = u32::MAX;

impl Linear {
    /// Numbers the points of `m`.
    pub(crate) fn new(m: &Module) -> Linear {
        let mut lin = Linear::default();
        lin.renumber(m);
        lin
    }

    /// Numbers the points of `m` afresh, reusing this numbering's buffers
    /// (the allocator renumbers its growing program every iteration, and
    /// fresh buffers of that size would cost a page fault per 4 KiB).
    pub(crate) fn renumber(&mut self, m: &Module) {
        let nl = m.loops.len();
        let capacity = m.insts.len() + 2 * nl;
        self.points.clear();
        self.points.reserve(capacity);
        self.inst_point.reset(m.insts.len(), UNREACHED);
        self.header.reset(nl, u32::MAX);
        self.end.reset(nl, u32::MAX);
        self.parent.reset(nl, None);
        self.depth.reset(nl, 0);
        self.loop_weight.reset(nl, 1);
        for (bi, b) in m.blocks.iter().enumerate() {
            self.body(m, &b.body, BodyRef::Block(bi as u32), 0, 1);
        }
    }

    fn body(&mut self, m: &Module, body: &[Stmt], at: BodyRef, depth: u32, weight: u64) {
        for (index, s) in body.iter().enumerate() {
            let index = index as u32;
            let push = |lin: &mut Linear, kind| {
                lin.points.push(Point::new(kind, at, index));
                (lin.points.len() - 1) as u32
            };
            match *s {
                Stmt::Inst(i) => {
                    let p = push(self, PointKind::Inst(i));
                    self.inst_point[i] = p;
                }
                Stmt::Loop(l) => {
                    self.header[l] = push(self, PointKind::Header(l));
                    self.parent[l] = at.as_loop();
                    self.depth[l] = depth + 1;
                    let lp = m.loop_(l);
                    let w = weight.saturating_mul(lp.trip_count());
                    self.loop_weight[l] = w;
                    self.body(m, &lp.body, BodyRef::Loop(l), depth + 1, w);
                    self.end[l] = push(self, PointKind::End(l));
                }
            }
        }
    }

    /// `weight(p)`: the product of the trip counts of the loops around
    /// point `p` (saturating; 1 at top level).
    pub(crate) fn weight(&self, p: u32) -> u64 {
        (self.points[p as usize].innermost()).map_or(1, |l| self.loop_weight[l])
    }

    /// The point of instruction `i`, `None` when it is unreachable (or not
    /// in the module numbered).
    pub(crate) fn point_of(&self, i: InstId) -> Option<u32> {
        (self.inst_point.get(i).copied()).filter(|&p| p != UNREACHED)
    }

    /// Number of points.
    pub(crate) fn len(&self) -> usize {
        self.points.len()
    }

    /// Whether the module has any loop (when it has none, every nest is
    /// empty and the loop queries below have trivial answers).
    pub(crate) fn has_loops(&self) -> bool {
        !self.header.is_empty()
    }

    /// The loop nest of point `p`, outermost first.
    pub(crate) fn nest(&self, p: u32) -> Vec<LoopId> {
        let mut out = Vec::new();
        let mut l = self.points[p as usize].innermost();
        while let Some(x) = l {
            out.push(x);
            l = self.parent[x];
        }
        out.reverse();
        out
    }

    /// Nesting depth of point `p` (0 at top level).
    pub(crate) fn point_depth(&self, p: u32) -> u32 {
        self.points[p as usize]
            .innermost()
            .map_or(0, |l| self.depth[l])
    }

    /// Whether point `p` lies inside loop `l` (strictly between its header and end).
    pub(crate) fn inside(&self, l: LoopId, p: u32) -> bool {
        self.header[l] < p && p < self.end[l]
    }

    /// The loop at depth `d` (1-based) in the nest of point `p`, i.e. `nest(p)[d − 1]`.
    pub(crate) fn nest_at(&self, p: u32, d: u32) -> LoopId {
        let mut l = self.points[p as usize]
            .innermost()
            .expect("nest_at beyond the point's depth");
        while self.depth[l] > d {
            l = self.parent[l].expect("loop depth is consistent");
        }
        l
    }

    /// Length of the common prefix of the loop nests of points `a` and `b`.
    pub(crate) fn common_depth(&self, a: u32, b: u32) -> u32 {
        let mut x = self.points[a as usize].innermost();
        let mut y = self.points[b as usize].innermost();
        let d = |l: Option<LoopId>| l.map_or(0, |l| self.depth[l]);
        while d(x) > d(y) {
            x = x.and_then(|l| self.parent[l]);
        }
        while d(y) > d(x) {
            y = y.and_then(|l| self.parent[l]);
        }
        while x != y {
            x = x.and_then(|l| self.parent[l]);
            y = y.and_then(|l| self.parent[l]);
        }
        d(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Access, Inst, InstKind, Loop, Mem, Tensor, TensorId};

    fn memset(m: &mut Module) -> InstId {
        m.add_inst(Inst::new(InstKind::Memset {
            dst: Access::rect(TensorId(0), 0, 1, 0, 4),
            value: 0.0,
        }))
    }

    #[test]
    fn headers_ends_nests_and_weights() {
        let mut m = Module::new("trn1");
        m.add_tensor(Tensor::new("s", Mem::Sbuf, 1, 4, Default::default()));
        let i0 = memset(&mut m);
        let i1 = memset(&mut m);
        let i2 = memset(&mut m);
        let i3 = memset(&mut m);
        let vi = m.add_var("i");
        let vj = m.add_var("j");
        let inner = m.add_loop(Loop {
            var: vj,
            lo: 0,
            hi: 3,
            affine: false,
            body: vec![Stmt::Inst(i2)],
        });
        let outer = m.add_loop(Loop {
            var: vi,
            lo: 0,
            hi: 4,
            affine: false,
            body: vec![Stmt::Inst(i1), Stmt::Loop(inner)],
        });
        m.blocks.push(crate::ir::Block {
            name: "a".into(),
            body: vec![Stmt::Inst(i0), Stmt::Loop(outer)],
        });
        m.blocks.push(crate::ir::Block {
            name: "b".into(),
            body: vec![Stmt::Inst(i3)],
        });
        let lin = Linear::new(&m);
        // i0=0, H(outer)=1, i1=2, H(inner)=3, i2=4, E(inner)=5, E(outer)=6, i3=7
        assert_eq!(lin.len(), 8);
        let points: Vec<_> = (0..5).map(|i| lin.point_of(InstId(i))).collect();
        assert_eq!(points, vec![Some(0), Some(2), Some(4), Some(7), None]);
        assert_eq!((lin.header[outer], lin.end[outer]), (1, 6));
        assert_eq!((lin.header[inner], lin.end[inner]), (3, 5));
        let weights: Vec<u64> = (0..8).map(|p| lin.weight(p)).collect();
        assert_eq!(weights, vec![1, 1, 4, 4, 12, 4, 1, 1]);
        assert_eq!(lin.nest(4), vec![outer, inner]);
        assert_eq!(lin.nest(3), vec![outer]);
        assert_eq!(lin.nest(6), Vec::<LoopId>::new());
        assert_eq!(lin.common_depth(4, 2), 1);
        assert_eq!(lin.common_depth(4, 7), 0);
        assert_eq!(lin.nest_at(4, 1), outer);
        assert!(lin.inside(outer, 5) && !lin.inside(inner, 5));
        assert_eq!(lin.points[7].body(), BodyRef::Block(1));
        assert_eq!(lin.points[5].body(), BodyRef::Loop(outer));
        assert_eq!(lin.points[5].index(), 1);
        assert_eq!(lin.points[5].kind(), PointKind::End(inner));
        assert_eq!(lin.points[1].kind(), PointKind::Header(outer));
        assert_eq!(lin.points[7].kind(), PointKind::Inst(InstId(3)));
    }

    /// A point gives back what it was built from, at the largest ids too,
    /// and prints as its three parts.
    #[test]
    fn point_packs_kind_body_and_index() {
        let top = (1 << 30) - 1;
        let kinds = [
            PointKind::Inst(InstId(top)),
            PointKind::Header(LoopId(0)),
            PointKind::End(LoopId(top)),
        ];
        let bodies = [
            BodyRef::Block(0),
            BodyRef::Block(top),
            BodyRef::Loop(LoopId(top)),
        ];
        for kind in kinds {
            for body in bodies {
                let p = Point::new(kind, body, u32::MAX);
                assert_eq!((p.kind(), p.body(), p.index()), (kind, body, u32::MAX));
            }
        }
        assert_eq!(
            format!(
                "{:?}",
                Point::new(PointKind::Inst(InstId(2)), BodyRef::Loop(LoopId(1)), 3)
            ),
            "Point { kind: Inst(InstId(2)), body: Loop(LoopId(1)), index: 3 }"
        );
    }
}
