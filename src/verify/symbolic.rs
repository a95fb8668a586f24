//! The symbolic simulator (SPEC §5.2, psum's own): the value check `verify`
//! runs by default. It executes ORIGINAL (virtual storage, §2.4) and RESULT
//! (physical PSUM, §4.4) like the exact simulator of [`super::sim`], but on
//! values that cost nothing per cell.
//!
//! **Values.** Every value is a polynomial hash over the prime field
//! `2^61 − 1`. A storage cell at partition `p`, byte `b` of a piece holds
//! `a·U^p·W^(b/ds) + c` for the piece's `(a, c)` and element size `ds`, with
//! `U`, `W` fixed random field elements: a piece of any size is two numbers,
//! and a write, copy or sum costs one operation per piece it touches.
//! - An input tensor is one piece whose `a` hashes its name; PSUM starts as
//!   a garbage piece (marked, so a mismatch says where it came from).
//! - `memset` writes the constant `c` (0 for zero, so that zero is the
//!   identity of accumulation), `copy`/`dma` move pieces (shifting `a` by
//!   the powers of `U`, `W` between the two places), `act` adds them.
//! - A matmul writes one fresh piece: `a` hashes the shapes and the
//!   *digests* of its two operands — `Σ value(i, j)·Z^i·Q^j` over each
//!   operand's cells, in closed form per piece — so its cost is one term per
//!   operand piece, not `K·M·N` multiply-adds. It assigns or accumulates
//!   (field addition) as the exact simulator does; `start` zeroes banks.
//!
//! Two programs that compute the same values compute the same hashes; two
//! that differ — a wrong operand, a dropped or extra accumulation, a lost
//! zero, a reload from the wrong copy — differ w.h.p. (a collision needs a
//! polynomial of degree at most the tensor size to vanish at random points:
//! probability below `2^-40` per comparison).

use super::exec::{checked_region, for_each_step, source_regions, Env, InstNames, RunTracker};
use super::layout::{Buf, Layout};
use super::rects::{Rect, RectMap};
use super::sim::{compared_tensors, input_tensors, splitmix, Mode, SimError, Value};
use crate::arch;
use crate::entity::IdMap;
use crate::ir::{Flags, InstId, InstKind, Module, Region, TensorId};

/// The field modulus, the Mersenne prime `2^61 − 1`.
const P: u64 = (1 << 61) - 1;

fn add(a: u64, b: u64) -> u64 {
    let s = a + b;
    if s >= P {
        s - P
    } else {
        s
    }
}

fn sub(a: u64, b: u64) -> u64 {
    if a >= b {
        a - b
    } else {
        a + P - b
    }
}

fn mul(a: u64, b: u64) -> u64 {
    let z = u128::from(a) * u128::from(b);
    add((z as u64) & P, (z >> 61) as u64)
}

fn pow(mut b: u64, mut e: u64) -> u64 {
    let mut r = 1;
    while e > 0 {
        if e & 1 == 1 {
            r = mul(r, b);
        }
        b = mul(b, b);
        e >>= 1;
    }
    r
}

/// A non-zero field element hashed from `words` (and the seed).
fn hash(seed: u64, words: &[u64]) -> u64 {
    let h = words
        .iter()
        .fold(splitmix(seed), |h, &w| splitmix(h ^ w.rotate_left(23)));
    (h % P).max(1)
}

/// Tags that keep the hashes of different constructions apart.
const MATMUL: u64 = 1;
const CONST: u64 = 2;
const INPUT: u64 = 3;
const RESHAPE: u64 = 4;
const MIXED: u64 = 5;
const GARBAGE: u64 = 6;
const ENGINE: u64 = 7;

/// Powers `r^e` of one base by two table lookups (`e < 2^20`).
struct Powers {
    lo: Vec<u64>,
    hi: Vec<u64>,
}

impl Powers {
    fn new(r: u64) -> Self {
        let table = |step: u64| {
            let mut t = Vec::with_capacity(1024);
            let mut x = 1;
            for _ in 0..1024 {
                t.push(x);
                x = mul(x, step);
            }
            t
        };
        Powers {
            lo: table(r),
            hi: table(pow(r, 1024)),
        }
    }

    fn get(&self, e: u64) -> u64 {
        if e < 1 << 20 {
            mul(self.lo[(e & 1023) as usize], self.hi[(e >> 10) as usize])
        } else {
            pow(self.lo[1], e)
        }
    }
}

/// A geometric series `Σ_{lo ≤ i < hi} r^i` of one base.
struct Series {
    pw: Powers,
    inv_r_minus_1: u64,
}

impl Series {
    fn new(r: u64) -> Self {
        Series {
            pw: Powers::new(r),
            inv_r_minus_1: pow(sub(r, 1), P - 2),
        }
    }

    fn sum(&self, lo: u32, hi: u32) -> u64 {
        let d = sub(self.pw.get(hi.into()), self.pw.get(lo.into()));
        mul(d, self.inv_r_minus_1)
    }
}

/// The random points of one comparison: the position bases `U` (partitions)
/// and `W` (elements), and the digest bases `Z`, `Q`.
struct Model {
    seed: u64,
    u: Powers,
    u_inv: Powers,
    w: Powers,
    w_inv: Powers,
    uz: Series,
    wq: Series,
    z: Series,
    q: Series,
}

impl Model {
    fn new(seed: u64) -> Self {
        let point = |k: u64| (splitmix(seed ^ splitmix(k)) % P).max(2);
        let (u, w, z, q) = (point(1), point(2), point(3), point(4));
        let inv = |x: u64| pow(x, P - 2);
        Model {
            seed,
            u: Powers::new(u),
            u_inv: Powers::new(inv(u)),
            w: Powers::new(w),
            w_inv: Powers::new(inv(w)),
            uz: Series::new(mul(u, z)),
            wq: Series::new(mul(w, q)),
            z: Series::new(z),
            q: Series::new(q),
        }
    }

    /// `U^dp · W^de`.
    fn shift(&self, dp: i64, de: i64) -> u64 {
        let up = if dp >= 0 {
            self.u.get(dp as u64)
        } else {
            self.u_inv.get(dp.unsigned_abs())
        };
        let we = if de >= 0 {
            self.w.get(de as u64)
        } else {
            self.w_inv.get(de.unsigned_abs())
        };
        mul(up, we)
    }

    fn hash(&self, words: &[u64]) -> u64 {
        hash(self.seed, words)
    }

    /// The digest `Σ value(i, j)·Z^i·Q^j` of a region given as pieces.
    fn digest(&self, pieces: &[Piece]) -> u64 {
        pieces.iter().fold(0, |d, p| {
            let geo = mul(self.uz.sum(p.i0, p.i1), self.wq.sum(p.j0, p.j1));
            let flat = mul(self.z.sum(p.i0, p.i1), self.q.sum(p.j0, p.j1));
            add(d, add(mul(p.a, geo), mul(p.c, flat)))
        })
    }
}

/// The value of a storage piece: cell `(p, b)` holds `a·U^p·W^(b/ds) + c`.
/// `ds` is 0 when `a` is (a constant reads the same at any element size);
/// `garbage` marks values computed from uninitialized PSUM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Val {
    a: u64,
    c: u64,
    ds: u32,
    garbage: bool,
}

impl Val {
    const ZERO: Val = Val {
        a: 0,
        c: 0,
        ds: 0,
        garbage: false,
    };

    fn new(a: u64, c: u64, ds: u32, garbage: bool) -> Val {
        Val {
            a,
            c,
            ds: if a == 0 { 0 } else { ds },
            garbage,
        }
    }
}

/// A rectangle of one region's elements, relative to the region's first
/// element: rows `[i0, i1)`, elements `[j0, j1)`, element `(i, j)` holding
/// `a·U^i·W^j + c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Piece {
    i0: u32,
    i1: u32,
    j0: u32,
    j1: u32,
    a: u64,
    c: u64,
    garbage: bool,
}

/// One program's execution state.
struct Run<'a> {
    m: &'a Module,
    model: &'a Model,
    names: InstNames,
    runs: RunTracker,
    layout: Layout,
    inputs: IdMap<TensorId, bool>,
    own: IdMap<TensorId, Option<RectMap<Val>>>,
    psum: Option<RectMap<Val>>,
    /// Per-operand piece buffers and source regions, reused.
    bufs: Vec<Vec<Piece>>,
    srcs: Vec<(TensorId, Region)>,
}

/// Runs `original` virtually and `result` physically on the same symbolic
/// inputs and compares every SBUF and DRAM tensor the original declares.
pub(crate) fn compare(original: &Module, result: &Module, seed: u64) -> Result<(), SimError> {
    let model = Model::new(seed);
    let mut want = Run::new(original, Mode::Virtual, &model)?;
    for_each_step(original, |id, env| want.step(id, env))?;
    let mut got = Run::new(result, Mode::Physical, &model)?;
    for_each_step(result, |id, env| got.step(id, env))?;
    for (oid, rid) in compared_tensors(original, result)? {
        let t = original.tensor(oid);
        let a = want.own_map(oid);
        let b = got.own_map(rid);
        if let Some((p, x, va, vb)) = first_difference(a, b, t.partitions, t.bytes) {
            let value = |v: Val| Value::Symbol {
                digest: add(
                    mul(v.a, model.shift(p.into(), i64::from(x / v.ds.max(1)))),
                    v.c,
                ),
                garbage: v.garbage,
            };
            return Err(SimError::Mismatch {
                tensor: t.name.clone(),
                partition: p,
                byte: x,
                expected: value(va),
                found: value(vb),
            });
        }
    }
    Ok(())
}

/// The first cell (row-major) where two maps of the same shape differ, and
/// the two values there.
fn first_difference(
    a: &RectMap<Val>,
    b: &RectMap<Val>,
    rows: u32,
    width: u32,
) -> Option<(u32, u32, Val, Val)> {
    let mut first: Option<(u32, u32, Val, Val)> = None;
    a.visit(Rect::new(0, rows, 0, width), |q, &va| {
        b.visit(q, |s, &vb| {
            let earlier = first.is_none_or(|(p, x, _, _)| (s.p0, s.x0) < (p, x));
            if va != vb && earlier {
                first = Some((s.p0, s.x0, va, vb));
            }
        });
    });
    first
}

impl<'a> Run<'a> {
    fn new(m: &'a Module, mode: Mode, model: &'a Model) -> Result<Self, SimError> {
        let arch = arch::lookup(&m.arch).map_err(|e| SimError::Arch(e.to_string()))?;
        let layout = match mode {
            Mode::Virtual => Layout::virtual_(m),
            Mode::Physical => Layout::physical(m, &arch)?,
        };
        Ok(Run {
            m,
            model,
            names: InstNames::new(m),
            runs: RunTracker::new(m),
            inputs: input_tensors(m),
            own: IdMap::with_len(m.tensors.len(), None),
            psum: None,
            layout,
            bufs: Vec::new(),
            srcs: Vec::new(),
        })
    }

    /// The map of buffer `buf`, created on first use: an input's seeded
    /// piece, zero, or (physical PSUM) garbage.
    fn map(&mut self, buf: Buf) -> &mut RectMap<Val> {
        let (m, model) = (self.m, self.model);
        match buf {
            Buf::Own(t) => self.own[t].get_or_insert_with(|| {
                let tt = m.tensor(t);
                let init = if self.inputs[t] {
                    let name = tt.name.bytes().map(u64::from).collect::<Vec<_>>();
                    let a = model.hash(&[&[INPUT][..], &name].concat());
                    Val::new(a, 0, tt.dtype.size(), false)
                } else {
                    Val::ZERO
                };
                RectMap::new(tt.partitions, tt.bytes, init)
            }),
            Buf::Psum => {
                let (rows, width) = (self.layout.part_size, self.layout.psum_bytes());
                self.psum.get_or_insert_with(|| {
                    let a = model.hash(&[GARBAGE]);
                    RectMap::new(rows, width, Val::new(a, a, 4, true))
                })
            }
        }
    }

    fn own_map(&mut self, t: TensorId) -> &RectMap<Val> {
        self.map(Buf::Own(t))
    }

    /// Element size, base byte and buffer of `t`.
    fn place(&self, t: TensorId) -> (u32, u32, Buf) {
        let (buf, base) = self.layout.place(t);
        (self.m.tensor(t).dtype.size(), base, buf)
    }

    /// Appends the pieces of region `r` of `t` to `out`.
    fn read(&mut self, t: TensorId, r: &Region, out: &mut Vec<Piece>) {
        let (ds, base, buf) = self.place(t);
        let (_, rect) = self.layout.rect(t, r);
        let (p0, e0) = (r.p0 as u32, r.b0 as u32 / ds);
        let model = self.model;
        let fa = model.shift(r.p0, i64::from(base / ds + e0));
        self.map(buf).visit(rect, |q, v| {
            let j0 = (q.x0 - base).div_ceil(ds) - e0;
            let j1 = (q.x1 - base).div_ceil(ds) - e0;
            if j0 >= j1 {
                return;
            }
            let a = if v.a == 0 || v.ds == ds {
                mul(v.a, fa)
            } else {
                // Bytes written at one element size, read at another.
                model.hash(&[MIXED, v.a, v.ds.into(), ds.into()])
            };
            out.push(Piece {
                i0: q.p0 - p0,
                i1: q.p1 - p0,
                j0,
                j1,
                a,
                c: v.c,
                garbage: v.garbage,
            });
        });
    }

    /// Writes (or, with `add`, adds) `pieces` to region `r` of `t`.
    fn write(&mut self, t: TensorId, r: &Region, pieces: &[Piece], add_to: bool) {
        let (ds, base, buf) = self.place(t);
        let (p0, e0) = (r.p0 as u32, r.b0 as u32 / ds);
        let model = self.model;
        let fa = model.shift(-r.p0, -i64::from(base / ds + e0));
        let map = self.map(buf);
        for p in pieces {
            let rect = Rect::new(
                p0 + p.i0,
                p0 + p.i1,
                base + (e0 + p.j0) * ds,
                base + (e0 + p.j1) * ds,
            );
            let v = Val::new(mul(p.a, fa), p.c, ds, p.garbage);
            if add_to {
                map.update(rect, |_, old| sum(model, *old, v));
            } else {
                map.set(rect, v);
            }
        }
    }

    fn shape_error(&self, id: InstId, env: &Env, what: String) -> SimError {
        SimError::shape(self.m, &self.names, id, env, what)
    }

    /// `[partitions, elements]` of region `r` of `t`.
    fn dims(&self, t: TensorId, r: &Region) -> (u32, u32) {
        let ds = i64::from(self.m.tensor(t).dtype.size());
        ((r.p1 - r.p0) as u32, ((r.b1 - r.b0) / ds) as u32)
    }

    fn step(&mut self, id: InstId, env: &Env) -> Result<(), SimError> {
        let m = self.m;
        let kind = &m.inst(id).kind;
        let mut srcs = std::mem::take(&mut self.srcs);
        source_regions(m, &self.names, id, env, &mut srcs).map_err(SimError::Access)?;
        let dst = kind.dst().tensor;
        let dr = checked_region(m, &self.names, id, env, kind.dst()).map_err(SimError::Access)?;
        let mut bufs = std::mem::take(&mut self.bufs);
        bufs.resize_with(bufs.len().max(srcs.len()), Vec::new);
        for (buf, (t, r)) in bufs.iter_mut().zip(&srcs) {
            buf.clear();
            self.read(*t, r, buf);
        }
        for (t, r) in &srcs {
            self.runs.read(m, *t, *r);
        }
        let (rows, elems) = self.dims(dst, &dr);
        let whole = |a: u64, c: u64, garbage: bool| Piece {
            i0: 0,
            i1: rows,
            j0: 0,
            j1: elems,
            a,
            c,
            garbage,
        };
        let result = match kind {
            InstKind::Matmul(mm) => {
                let (ks, ms) = self.dims(srcs[0].0, &srcs[0].1);
                let (km, ns) = self.dims(srcs[1].0, &srcs[1].1);
                if ks != km || ms != rows || ns != elems {
                    return Err(self.shape_error(
                        id,
                        env,
                        format!(
                            "matmul shapes disagree: stationary [{ks}, {ms}], moving [{km}, {ns}], destination [{rows}, {elems}]"
                        ),
                    ));
                }
                let (s, mv) = (self.model.digest(&bufs[0]), self.model.digest(&bufs[1]));
                let a = self
                    .model
                    .hash(&[MATMUL, ks.into(), ms.into(), ns.into(), s, mv]);
                let garbage = bufs[..2].iter().flatten().any(|p| p.garbage);
                let run = self.runs.matmul(m, dst, dr);
                let accumulate = match (mm.flags, self.layout.in_psum(dst)) {
                    (Flags::Set(fs), true) => {
                        if let Some(z) = self.layout.start_rect(dst, &dr).filter(|_| fs.start) {
                            self.map(Buf::Psum).set(z, Val::ZERO);
                        }
                        true
                    }
                    _ => run.accumulates(),
                };
                self.write(dst, &dr, &[whole(a, 0, garbage)], accumulate);
                Ok(())
            }
            InstKind::Engine { .. } => {
                // Every destination element depends on every source element.
                let mut words = vec![ENGINE, rows.into(), elems.into()];
                let mut garbage = false;
                for buf in &bufs[..srcs.len()] {
                    words.push(self.model.digest(buf));
                    garbage |= buf.iter().any(|p| p.garbage);
                }
                let a = self.model.hash(&words);
                self.runs.write(m, dst, dr);
                self.write(dst, &dr, &[whole(a, 0, garbage)], false);
                Ok(())
            }
            InstKind::Memset { value, .. } => {
                self.runs.write(m, dst, dr);
                let c = if *value == 0.0 {
                    0
                } else {
                    self.model.hash(&[CONST, value.to_bits()])
                };
                self.write(dst, &dr, &[whole(0, c, false)], false);
                Ok(())
            }
            InstKind::Copy { .. } | InstKind::Dma { .. } | InstKind::Act { .. } => {
                let n_dst = u64::from(rows) * u64::from(elems);
                for (k, (t, r)) in srcs.iter().enumerate() {
                    let (sr, se) = self.dims(*t, r);
                    let n = u64::from(sr) * u64::from(se);
                    if n != n_dst {
                        return Err(self.shape_error(
                            id,
                            env,
                            format!("{n} source elements for {n_dst} destination elements"),
                        ));
                    }
                    if (sr, se) != (rows, elems) {
                        // A reshaping copy: a fresh value hashed from the source's digest.
                        let d = self.model.digest(&bufs[k]);
                        let garbage = bufs[k].iter().any(|p| p.garbage);
                        let a = self.model.hash(&[RESHAPE, sr.into(), se.into(), d]);
                        bufs[k].clear();
                        bufs[k].push(whole(a, 0, garbage));
                    }
                }
                self.runs.write(m, dst, dr);
                match bufs[..srcs.len()].split_first() {
                    Some((first, rest)) => {
                        self.write(dst, &dr, first, false);
                        for buf in rest {
                            self.write(dst, &dr, buf, true);
                        }
                    }
                    None => self.write(dst, &dr, &[whole(0, 0, false)], false),
                }
                Ok(())
            }
        };
        self.bufs = bufs;
        self.srcs = srcs;
        result
    }
}

/// The sum of two piece values (a matmul accumulating, an `act`).
fn sum(model: &Model, x: Val, y: Val) -> Val {
    let garbage = x.garbage || y.garbage;
    if x.a == 0 || y.a == 0 || x.ds == y.ds {
        Val::new(add(x.a, y.a), add(x.c, y.c), x.ds.max(y.ds), garbage)
    } else {
        let a = model.hash(&[MIXED, x.a, y.a, x.ds.into(), y.ds.into()]);
        Val::new(a, add(x.c, y.c), y.ds, garbage)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_arithmetic() {
        assert_eq!(mul(P - 1, P - 1), 1);
        assert_eq!(add(P - 1, 1), 0);
        assert_eq!(sub(0, 1), P - 1);
        let r = 0x1234_5678_9abc;
        assert_eq!(mul(r, pow(r, P - 2)), 1);
        let pw = Powers::new(r);
        for e in [0, 1, 1023, 1024, 123_456, (1 << 20) + 7] {
            assert_eq!(pw.get(e), pow(r, e), "r^{e}");
        }
        let s = Series::new(r);
        let direct = (3..10).fold(0, |acc, i| add(acc, pow(r, i)));
        assert_eq!(s.sum(3, 10), direct);
        assert_eq!(s.sum(4, 4), 0);
    }

    /// The digest of a region does not depend on how it is cut into pieces.
    #[test]
    fn digests_ignore_the_cut() {
        let model = Model::new(7);
        let piece = |i0, i1, j0, j1, a, c| Piece {
            i0,
            i1,
            j0,
            j1,
            a,
            c,
            garbage: false,
        };
        let (a, c) = (12345, 678);
        let whole = model.digest(&[piece(0, 4, 0, 10, a, c)]);
        let cut = model.digest(&[
            piece(0, 4, 0, 3, a, c),
            piece(0, 1, 3, 10, a, c),
            piece(1, 4, 3, 10, a, c),
        ]);
        assert_eq!(whole, cut);
        let other = model.digest(&[piece(0, 4, 0, 10, a, add(c, 1))]);
        assert_ne!(whole, other);
    }
}
