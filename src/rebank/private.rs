//! Which PSUM tensors the iterations of a loop keep to themselves (SPEC
//! §3.12): the tensors that modulo variable expansion may give one copy
//! per iteration class.
//!
//! A tensor is **private** to loop L at factor k when every access to it
//! lies in L and, running the program, every iteration of L reads only what
//! it wrote itself: each read finds every cell written earlier in the same
//! iteration, and each matmul that continues an accumulation run or
//! accumulates onto an init (§2.4) finds that run or init in the same
//! iteration. And iteration i may use copy i mod k: replayed with one copy
//! per class, where a copy's history is the iterations of its class, every
//! matmul assigns or accumulates as it does with one tensor. A `scope=` tile
//! normally is private to its loop; psum proves it for every tensor,
//! annotated or not.

use crate::entity::IdMap;
use crate::ir::{Access, InstKind, LoopId, Module, Region, Stmt, TensorId, VarId};

/// Dynamic instructions [`private_tensors`] replays at most; a larger
/// program has no private tensors.
pub(crate) const MAX_REPLAY: u128 = 1 << 22;
/// Accesses one tensor keeps in its history before it counts as shared.
const MAX_EVENTS: usize = 1024;
/// Rectangles a coverage test may split a read into.
const MAX_PIECES: usize = 4096;

/// What an access did.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Read,
    Matmul,
    Write,
}

/// One access in a tensor's history: region, kind, iteration of L.
#[derive(Clone, Copy)]
struct Event {
    region: Region,
    kind: Kind,
    iteration: u64,
}

/// How a matmul-family write combines with what its region holds (§2.4).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Combine {
    /// Heads a run with no init: `=`.
    Assign,
    /// Continues a run, or accumulates onto an init, of iteration `.0`.
    Onto(u64),
}

/// A tensor's history: its accesses, older ones covered by a later write
/// dropped (they can no longer be the latest access of any cell).
#[derive(Clone, Default)]
struct History {
    events: Vec<Event>,
}

impl History {
    /// How a matmul writing `r` combines: onto the latest access touching
    /// `r` when that is a matmul of exactly `r` or a write containing it.
    fn combine(&self, r: &Region) -> Combine {
        match self.events.iter().rev().find(|e| e.region.overlaps(r)) {
            Some(e) if e.kind == Kind::Matmul && e.region == *r => Combine::Onto(e.iteration),
            Some(e) if e.kind == Kind::Write && e.region.contains(r) => Combine::Onto(e.iteration),
            _ => Combine::Assign,
        }
    }

    /// Whether the writes of iteration `it` cover `r`.
    fn covered(&self, r: &Region, it: u64) -> bool {
        let mut pieces = vec![*r];
        for e in self
            .events
            .iter()
            .filter(|e| e.kind != Kind::Read && e.iteration == it)
        {
            pieces = pieces.iter().flat_map(|p| subtract(p, &e.region)).collect();
            if pieces.is_empty() {
                return true;
            }
            if pieces.len() > MAX_PIECES {
                return false;
            }
        }
        pieces.is_empty()
    }

    /// Records an access; false when the history grows past [`MAX_EVENTS`].
    fn push(&mut self, e: Event) -> bool {
        if e.kind != Kind::Read {
            self.events.retain(|old| !e.region.contains(&old.region));
        }
        self.events.push(e);
        self.events.len() <= MAX_EVENTS
    }
}

/// `p` minus `w`, as at most four rectangles.
fn subtract(p: &Region, w: &Region) -> Vec<Region> {
    if !p.overlaps(w) {
        return vec![*p];
    }
    let mut out = Vec::with_capacity(4);
    if p.p0 < w.p0 {
        out.push(Region { p1: w.p0, ..*p });
    }
    if w.p1 < p.p1 {
        out.push(Region { p0: w.p1, ..*p });
    }
    let (p0, p1) = (p.p0.max(w.p0), p.p1.min(w.p1));
    if p.b0 < w.b0 {
        out.push(Region {
            p0,
            p1,
            b1: w.b0,
            ..*p
        });
    }
    if w.b1 < p.b1 {
        out.push(Region {
            p0,
            p1,
            b0: w.b1,
            ..*p
        });
    }
    out
}

/// One candidate tensor under replay: its history with one tensor and with
/// one copy per class.
struct Candidate {
    tensor: TensorId,
    alive: bool,
    one: History,
    copies: Vec<History>,
}

/// The replay of [`private_tensors`].
struct Replay<'m> {
    m: &'m Module,
    target: LoopId,
    k: u64,
    env: IdMap<VarId, i64>,
    /// Index into `cands` of each tensor (`usize::MAX`: not a candidate).
    slot: IdMap<TensorId, usize>,
    cands: Vec<Candidate>,
    /// Inside the target loop: (iteration number, class of the iteration).
    inside: Option<(u64, usize)>,
    iterations: u64,
}

impl Replay<'_> {
    fn run(&mut self, body: &[Stmt]) {
        for s in body {
            match *s {
                Stmt::Inst(i) => {
                    let m = self.m;
                    self.step(&m.inst(i).kind);
                }
                Stmt::Loop(l) => {
                    let m = self.m;
                    let lp = m.loop_(l);
                    for v in lp.lo..lp.hi {
                        self.env[lp.var] = v;
                        if l == self.target {
                            self.inside =
                                Some((self.iterations, ((v - lp.lo) as u64 % self.k) as usize));
                            self.iterations += 1;
                        }
                        self.run(&lp.body);
                    }
                    if l == self.target {
                        self.inside = None;
                    }
                }
            }
        }
    }

    fn step(&mut self, kind: &InstKind) {
        let Some((it, class)) = self.inside else {
            return;
        };
        let env = &self.env;
        let region = |a: &Access| a.region(|v| env[v]);
        let mut reads: Vec<(usize, Region)> = Vec::new();
        kind.for_each_src(|a| {
            if let Some(&s) = self.slot.get(a.tensor).filter(|&&s| s != usize::MAX) {
                reads.push((s, region(a)));
            }
        });
        for (s, r) in reads {
            let c = &mut self.cands[s];
            let event = Event {
                region: r,
                kind: Kind::Read,
                iteration: it,
            };
            c.alive &= c.one.covered(&r, it) && c.one.push(event) && c.copies[class].push(event);
        }
        let dst = kind.dst();
        let Some(&s) = self.slot.get(dst.tensor).filter(|&&s| s != usize::MAX) else {
            return;
        };
        let r = region(dst);
        let c = &mut self.cands[s];
        let kind = match kind {
            InstKind::Matmul(_) => {
                let one = c.one.combine(&r);
                let copy = c.copies[class].combine(&r);
                let own = match one {
                    Combine::Assign => true,
                    Combine::Onto(i) => i == it,
                };
                c.alive &= one == copy && own;
                Kind::Matmul
            }
            _ => Kind::Write,
        };
        let event = Event {
            region: r,
            kind,
            iteration: it,
        };
        c.alive &= c.one.push(event) && c.copies[class].push(event);
    }
}

/// Of `candidates` (PSUM tensors whose every access lies in loop `l`),
/// those private to `l` at factor `k ≥ 1`, in the order given.
pub(crate) fn private_tensors(
    m: &Module,
    l: LoopId,
    k: u64,
    candidates: &[TensorId],
) -> Vec<TensorId> {
    if crate::unroll::unrolled_count(m) > MAX_REPLAY || k == 0 {
        return Vec::new();
    }
    let mut slot = IdMap::with_len(m.tensors.len(), usize::MAX);
    let mut cands = Vec::new();
    for &t in candidates {
        slot[t] = cands.len();
        cands.push(Candidate {
            tensor: t,
            alive: true,
            one: History::default(),
            copies: vec![History::default(); k as usize],
        });
    }
    if cands.is_empty() {
        return Vec::new();
    }
    let mut replay = Replay {
        m,
        target: l,
        k,
        env: IdMap::with_len(m.vars.len(), 0),
        slot,
        cands,
        inside: None,
        iterations: 0,
    };
    for b in &m.blocks {
        replay.run(&b.body);
    }
    (replay.cands.iter())
        .filter(|c| c.alive)
        .map(|c| c.tensor)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn private(src: &str, k: u64) -> Vec<String> {
        let m = crate::text::parse(src).unwrap().module;
        let l = LoopId::new(0);
        let inside = super::super::inside(&m);
        private_tensors(&m, l, k, &inside[l])
            .iter()
            .map(|&t| m.tensor(t).name.clone())
            .collect()
    }

    const DECLS: &str = "arch trn1\npsum s [128, 2048]\npsum o [128, 2048]\n\
        sbuf w [128, 256] bf16\nsbuf x [128, 4096] bf16\nsbuf y [128, 2048]\n";

    #[test]
    fn a_tile_written_then_read_in_each_iteration_is_private() {
        let src = format!(
            "{DECLS}block main {{\n  loop i 0..4 {{\n    matmul s <- w, x[0:128, i*1024:i*1024+1024]\n    \
             act y <- s\n    matmul o <- w, x[0:128, 0:1024]\n  }}\n  act y <- o\n}}\n"
        );
        // o is read after the loop: shared. s at every factor.
        assert_eq!(private(&src, 1), ["s"]);
        assert_eq!(private(&src, 3), ["s"]);
    }

    #[test]
    fn an_accumulator_across_iterations_is_not_private() {
        let src = format!(
            "{DECLS}block main {{\n  loop i 0..4 {{\n    matmul s <- w, x[0:128, i*1024:i*1024+1024]\n  }}\n  \
             act y <- s\n}}\n"
        );
        assert!(private(&src, 2).is_empty());
        let carried = format!(
            "{DECLS}block main {{\n  memset s = 0\n  loop i 0..4 {{\n    act y <- s\n    memset s = 1\n  }}\n}}\n"
        );
        assert!(private(&carried, 2).is_empty());
    }

    #[test]
    fn a_read_of_a_cell_the_iteration_did_not_write_is_shared() {
        // Iteration i writes half i of s and reads the first half.
        let src = format!(
            "{DECLS}block main {{\n  loop i 0..2 {{\n    memset s[0:128, i*1024:i*1024+1024] = 0\n    \
             act y[0:128, 0:1024] <- s[0:128, 0:1024]\n  }}\n}}\n"
        );
        assert!(private(&src, 2).is_empty());
        // Tiles written in quarters by an inner loop, then read whole.
        let quarters = format!(
            "{DECLS}block main {{\n  loop i 0..2 {{\n    loop j 0..4 {{\n      \
             matmul.t s[0:128, j*512:j*512+512] <- x[0:128, j*256:j*256+256], w\n    }}\n    \
             act y <- s\n  }}\n}}\n"
        );
        assert_eq!(private(&quarters, 2), ["s"]);
    }
}
