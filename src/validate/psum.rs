//! The PSUM read rule (SPEC §2.4): no cell is read before an earlier
//! instruction instance wrote it.

use super::context::Cx;
use super::error::{err, ValidateError, ValidateErrorKind};
use crate::entity::IdMap;
use crate::ir::{Access, Bound, InstId, Loc, LoopId, Mem, Stmt, TensorId, VarId};
use crate::verify::rects::{Rect, RectMap};

impl Cx<'_> {
    /// SPEC §2.4: every dynamic read of a PSUM region finds each of its
    /// cells written by an earlier instruction instance. The walk follows
    /// execution with the written cells of each PSUM tensor as a map of
    /// pieces; a loop whose body touches no PSUM is skipped, and a loop whose
    /// PSUM accesses do not move with its variable runs one iteration (a later
    /// one reads the same regions with at least as much written, and writes
    /// nothing new), so the walk is exact and costs at most what unrolling
    /// costs.
    pub(super) fn psum_reads(&self) -> Result<(), ValidateError> {
        let mut walk = ReadWalk {
            cx: self,
            loops: self.psum_loops(),
            written: (self.m.tensors.values())
                .map(|t| (t.mem == Mem::Psum).then(|| RectMap::new(t.partitions, t.bytes, false)))
                .collect(),
            env: IdMap::with_len(self.m.vars.len(), 0),
            steps: 0,
        };
        for b in &self.m.blocks {
            walk.body(&b.body)?;
        }
        Ok(())
    }

    /// Per loop: whether its body accesses PSUM, and whether one of those
    /// accesses has a bound that uses the loop's variable.
    fn psum_loops(&self) -> IdMap<LoopId, LoopPsum> {
        fn body(
            cx: &Cx<'_>,
            b: &[Stmt],
            out: &mut IdMap<LoopId, LoopPsum>,
            vars: &mut Vec<VarId>,
        ) -> bool {
            let mut touches = false;
            for s in b {
                match *s {
                    Stmt::Inst(i) => {
                        let kind = &cx.m.inst(i).kind;
                        for a in std::iter::once(kind.dst()).chain(kind.srcs()) {
                            if cx.m.tensor(a.tensor).mem != Mem::Psum {
                                continue;
                            }
                            touches = true;
                            for bound in Bound::ALL {
                                vars.extend(bound.parts(a).1.iter().map(|t| t.0));
                            }
                        }
                    }
                    Stmt::Loop(l) => {
                        let mark = vars.len();
                        let inner = body(cx, &cx.m.loop_(l).body, out, vars);
                        let var = cx.m.loop_(l).var;
                        out[l] = LoopPsum {
                            touches: inner,
                            moves: vars[mark..].contains(&var),
                        };
                        touches |= inner;
                    }
                }
            }
            touches
        }
        let mut out = IdMap::with_len(self.m.loops.len(), LoopPsum::default());
        let mut vars = Vec::new();
        for b in &self.m.blocks {
            body(self, &b.body, &mut out, &mut vars);
        }
        out
    }
}

/// What the read-before-write walk needs to know of a loop.
#[derive(Clone, Copy, Debug, Default)]
struct LoopPsum {
    /// Its body accesses PSUM.
    touches: bool,
    /// A PSUM access in its body moves with its variable.
    moves: bool,
}

/// The most PSUM instruction instances the read-before-write walk visits
/// (the unroll limit of SPEC §4.3: a program `compile` unrolls never reaches it).
pub const MAX_READ_CHECK_STEPS: u64 = crate::unroll::MAX_UNROLLED_INSTS as u64;

/// The read-before-write walk of [`Cx::psum_reads`].
struct ReadWalk<'c, 'm> {
    cx: &'c Cx<'m>,
    loops: IdMap<LoopId, LoopPsum>,
    /// Per PSUM tensor, which cells an instruction instance has written.
    written: IdMap<TensorId, Option<RectMap<bool>>>,
    /// Current value of every loop variable.
    env: IdMap<VarId, i64>,
    /// PSUM instruction instances visited.
    steps: u64,
}

impl ReadWalk<'_, '_> {
    fn body(&mut self, body: &[Stmt]) -> Result<(), ValidateError> {
        for s in body {
            match *s {
                Stmt::Inst(i) => self.inst(i)?,
                Stmt::Loop(l) => {
                    let lp = self.cx.m.loop_(l);
                    let info = self.loops[l];
                    if !info.touches {
                        continue;
                    }
                    let hi = if info.moves { lp.hi } else { lp.lo + 1 };
                    for v in lp.lo..hi {
                        self.env[lp.var] = v;
                        self.body(&lp.body)?;
                    }
                }
            }
        }
        Ok(())
    }

    fn rect(&self, a: &Access) -> Rect {
        let r = a.region(|v| self.env[v]);
        Rect::new(r.p0 as u32, r.p1 as u32, r.b0 as u32, r.b1 as u32)
    }

    fn inst(&mut self, id: InstId) -> Result<(), ValidateError> {
        let m = self.cx.m;
        let kind = &m.inst(id).kind;
        let dst = kind.dst();
        let psum = |a: &Access| m.tensor(a.tensor).mem == Mem::Psum;
        if !psum(dst) && !kind.srcs().any(psum) {
            return Ok(());
        }
        self.steps += 1;
        if self.steps > MAX_READ_CHECK_STEPS {
            return err(
                Loc::Inst(id),
                ValidateErrorKind::ReadCheckLimit(MAX_READ_CHECK_STEPS),
            );
        }
        for (k, s) in kind.srcs().enumerate() {
            let Some(written) = &self.written[s.tensor] else {
                continue;
            };
            let mut all = true;
            written.visit(self.rect(s), |_, &w| all &= w);
            if !all {
                return err(
                    Loc::Operand(id, k + 1),
                    ValidateErrorKind::ReadBeforeWrite(m.tensor(s.tensor).name.clone()),
                );
            }
        }
        let r = self.rect(dst);
        if let Some(written) = &mut self.written[dst.tensor] {
            written.set(r, true);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use crate::text::parse;

    fn read_error(src: &str) -> Option<(Loc, String)> {
        let m = parse(src).unwrap().module;
        validate(&m).err().map(|e| (e.loc, e.to_string()))
    }

    /// The read rule is per cell and per iteration (SPEC §2.4).
    #[test]
    fn psum_reads_follow_the_cells_written_so_far() {
        let head =
            "arch trn1\npsum c [128, 4096]\nsbuf w [128, 256] bf16\nsbuf x [128, 1024] bf16\n\
                    sbuf z [128, 2048]\nblock b {\n";
        let mm = |at: &str| format!("matmul c[0:128, {at}] <- w, x\n");
        let unwritten = "read of PSUM tensor c before any write".to_string();
        let read = |inst: usize| Some((Loc::Operand(InstId::new(inst), 1), unwritten.clone()));
        // One half written, the other read.
        let src = format!("{head}{}act z <- c[0:128, 0:2048]\n}}\n", mm("2048:4096"));
        assert_eq!(read_error(&src), read(1));
        // Both halves, by the iterations of a loop.
        let src = format!(
            "{head}loop k 0..2 {{\n{}}}\nact z <- c[0:128, 0:2048]\nact z <- c[0:128, 2048:4096]\n}}\n",
            mm("k*2048:k*2048+2048")
        );
        assert_eq!(read_error(&src), None);
        // A read of the half the next iteration writes.
        let src = format!(
            "{head}loop k 0..2 {{\n{}act z <- c[0:128, 2048:4096]\n}}\n}}\n",
            mm("k*2048:k*2048+2048")
        );
        assert_eq!(read_error(&src), read(1));
        // In a loop of 2^24 trips whose accesses do not move (one iteration
        // is walked): the half the iteration before wrote, then the half
        // the next iteration writes.
        let src = format!(
            "{head}{}loop k 0..16777216 {{\nloop j 0..2 {{\n\
             act z <- c[0:128, j*2048:j*2048+2048]\n{}}}\n}}\n}}\n",
            mm("0:2048"),
            mm("2048:4096")
        );
        assert_eq!(read_error(&src), None);
        let src = src.replacen(
            "c[0:128, j*2048:j*2048+2048]",
            "c[0:128, 2048-j*2048:4096-j*2048]",
            1,
        );
        assert_eq!(read_error(&src), read(1));
    }

    /// A walk past the unroll limit is refused at the instruction it reached.
    #[test]
    fn the_read_walk_is_bounded() {
        let src = "arch trn1\npsum c [1, 67108864]\nsbuf z [1, 4]\nblock b {\n\
                   loop k 0..16777216 {\nmemset c[0:1, k*4:k*4+4] = 0\nact z <- c[0:1, k*4:k*4+4]\n}\n}\n";
        assert_eq!(
            read_error(src),
            Some((
                Loc::Inst(InstId::new(0)),
                "checking that PSUM is written before it is read would step through more than \
                 10000000 instructions"
                    .to_string()
            ))
        );
    }
}
