//! Access patterns (SPEC §2.2): the four affine bounds of a tensor
//! region, and the concrete regions they evaluate to.

use super::affine::eval;
use super::{Affine, Tensor, TensorId, Terms, VarId};
use serde::{Deserialize, Serialize};
use std::fmt;

/// An access pattern `NAME[p0:p1, b0:b1]`: partitions `[p0, p1)` and bytes
/// `[b0, b1)` within each partition, relative to the tensor.
///
/// The four bounds are stored split, so that a constant access whose bounds
/// fit in 32 bits (the common case) is 32 bytes and owns no heap memory;
/// read them with [`Access::p0`] and friends or [`Bound::of`]. Serializes as
/// `{tensor, p0, p1, b0, b1}`.
#[derive(Clone, PartialEq, Eq, Hash, Deserialize)]
#[serde(from = "AccessFields")]
pub struct Access {
    /// The tensor accessed.
    pub tensor: TensorId,
    /// The constant terms of p0, p1, b0, b1 when `wide` is `None`; all zero
    /// otherwise (canonical, so that derived equality is equality of bounds).
    narrow: [i32; 4],
    /// The bounds in full, `None` when all four are constants that fit in
    /// an `i32`; canonical: `Some` only if some bound needs it.
    wide: Option<Box<WideBounds>>,
}

/// The bounds of an [`Access`] that has variable terms or a constant
/// beyond `i32`.
#[derive(Clone, PartialEq, Eq, Hash)]
struct WideBounds {
    /// The constant terms of p0, p1, b0, b1.
    consts: [i64; 4],
    /// Their variable terms.
    terms: [Terms; 4],
}

const _: () = assert!(std::mem::size_of::<Access>() == 32);

/// The serde form of an [`Access`]: its bounds as [`Affine`]s.
#[derive(Serialize, Deserialize)]
#[serde(rename = "Access")]
struct AccessFields {
    tensor: TensorId,
    p0: Affine,
    p1: Affine,
    b0: Affine,
    b1: Affine,
}

impl From<AccessFields> for Access {
    fn from(f: AccessFields) -> Self {
        Access::new(f.tensor, f.p0, f.p1, f.b0, f.b1)
    }
}

impl Serialize for Access {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let [p0, p1, b0, b1] = self.bounds();
        let fields = AccessFields {
            tensor: self.tensor,
            p0,
            p1,
            b0,
            b1,
        };
        fields.serialize(s)
    }
}

impl fmt::Debug for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Access")
            .field("tensor", &self.tensor)
            .field("p0", &self.p0())
            .field("p1", &self.p1())
            .field("b0", &self.b0())
            .field("b1", &self.b1())
            .finish()
    }
}

impl Access {
    /// The access `[p0:p1, b0:b1]` of tensor `id`.
    pub fn new(id: TensorId, p0: Affine, p1: Affine, b0: Affine, b1: Affine) -> Self {
        let bounds = [p0, p1, b0, b1];
        let consts = bounds.each_ref().map(|a| a.constant);
        if bounds.iter().all(|a| a.terms.is_empty()) {
            return Access::from_consts(id, consts);
        }
        Access::boxed(id, consts, bounds.map(|a| a.terms))
    }

    /// The access with constant bounds `consts` (p0, p1, b0, b1), narrow when they fit.
    pub fn from_consts(id: TensorId, consts: [i64; 4]) -> Self {
        match consts.map(i32::try_from) {
            [Ok(p0), Ok(p1), Ok(b0), Ok(b1)] => Access {
                tensor: id,
                narrow: [p0, p1, b0, b1],
                wide: None,
            },
            _ => Access::boxed(id, consts, Default::default()),
        }
    }

    /// The access with its bounds boxed.
    fn boxed(id: TensorId, consts: [i64; 4], terms: [Terms; 4]) -> Self {
        Access {
            tensor: id,
            narrow: [0; 4],
            wide: Some(Box::new(WideBounds { consts, terms })),
        }
    }

    /// The constant terms of p0, p1, b0, b1.
    fn consts(&self) -> [i64; 4] {
        match &self.wide {
            None => self.narrow.map(i64::from),
            Some(w) => w.consts,
        }
    }

    /// The access covering the whole of `t` (printed as the bare name).
    pub fn whole(id: TensorId, t: &Tensor) -> Self {
        Access::rect(id, 0, t.partitions as i64, 0, t.bytes as i64)
    }

    /// A constant access `[p0:p1, b0:b1]` of tensor `id`.
    pub fn rect(id: TensorId, p0: i64, p1: i64, b0: i64, b1: i64) -> Self {
        Access::from_consts(id, [p0, p1, b0, b1])
    }

    /// First partition.
    pub fn p0(&self) -> Affine {
        Bound::P0.of(self)
    }

    /// One past the last partition.
    pub fn p1(&self) -> Affine {
        Bound::P1.of(self)
    }

    /// First byte within each partition.
    pub fn b0(&self) -> Affine {
        Bound::B0.of(self)
    }

    /// One past the last byte within each partition.
    pub fn b1(&self) -> Affine {
        Bound::B1.of(self)
    }

    /// The four bounds in [`Bound::ALL`] order.
    pub fn bounds(&self) -> [Affine; 4] {
        Bound::ALL.map(|b| b.of(self))
    }

    /// Adds `by` to every loop variable id in the bounds.
    pub(crate) fn offset_vars(&mut self, by: u32) {
        if let Some(wide) = &mut self.wide {
            for t in &mut wide.terms {
                t.offset_vars(by);
            }
        }
    }

    /// Rewrites each bound in place with `f(bound, expr)`, in [`Bound::ALL`] order.
    pub fn edit_bounds(&mut self, mut f: impl FnMut(Bound, &mut Affine)) {
        let mut bounds = self.bounds();
        for (b, e) in Bound::ALL.into_iter().zip(&mut bounds) {
            f(b, e);
        }
        let [p0, p1, b0, b1] = bounds;
        *self = Access::new(self.tensor, p0, p1, b0, b1);
    }

    /// True when the access is constant and covers all of `t`.
    pub fn is_whole(&self, t: &Tensor) -> bool {
        !self.is_affine() && self.consts() == [0, t.partitions as i64, 0, t.bytes as i64]
    }

    /// Partition extent `p1 − p0` (constant for valid programs; evaluated at all-zero vars).
    pub fn part_extent(&self) -> i64 {
        let c = self.consts();
        c[1] - c[0]
    }

    /// Byte extent `b1 − b0` (constant for valid programs; evaluated at all-zero vars).
    pub fn byte_extent(&self) -> i64 {
        let c = self.consts();
        c[3] - c[2]
    }

    /// Evaluates all four bounds for the current variable values.
    pub fn region(&self, value: impl Fn(VarId) -> i64) -> Region {
        let [p0, p1, b0, b1] = match &self.wide {
            None => self.narrow.map(i64::from),
            Some(w) => std::array::from_fn(|i| eval(w.consts[i], &w.terms[i], &value)),
        };
        Region { p0, p1, b0, b1 }
    }

    /// Whether any bound mentions a loop variable.
    pub fn is_affine(&self) -> bool {
        self.wide
            .as_ref()
            .is_some_and(|w| w.terms.iter().any(|t| !t.is_empty()))
    }
}

/// A concrete (evaluated) access region: partitions `[p0, p1)`, bytes `[b0, b1)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Region {
    /// First partition.
    pub p0: i64,
    /// One past the last partition.
    pub p1: i64,
    /// First byte.
    pub b0: i64,
    /// One past the last byte.
    pub b1: i64,
}

impl Region {
    /// Whether the two regions share at least one cell.
    pub fn overlaps(&self, o: &Region) -> bool {
        self.p0 < o.p1 && o.p0 < self.p1 && self.b0 < o.b1 && o.b0 < self.b1
    }
    /// Whether `self` contains every cell of `o`.
    pub fn contains(&self, o: &Region) -> bool {
        self.p0 <= o.p0 && o.p1 <= self.p1 && self.b0 <= o.b0 && o.b1 <= self.b1
    }
}

/// The four bounds of an [`Access`]; the discriminant is the bound's slot
/// in the access's storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bound {
    /// First partition.
    P0 = 0,
    /// One past the last partition.
    P1 = 1,
    /// First byte.
    B0 = 2,
    /// One past the last byte.
    B1 = 3,
}

impl Bound {
    /// All four, in text order.
    pub const ALL: [Bound; 4] = [Bound::P0, Bound::P1, Bound::B0, Bound::B1];

    /// The bound's constant term and variable terms in `a`, borrowed.
    pub fn parts(self, a: &Access) -> (i64, &[(VarId, i64)]) {
        let i = self as usize;
        match &a.wide {
            None => (a.narrow[i].into(), &[]),
            Some(w) => (w.consts[i], &w.terms[i]),
        }
    }

    /// The bound's expression in `a` (allocation-free when it is constant).
    pub fn of(self, a: &Access) -> Affine {
        let i = self as usize;
        match &a.wide {
            None => Affine::constant(a.narrow[i].into()),
            Some(w) => Affine {
                terms: w.terms[i].clone(),
                constant: w.consts[i],
            },
        }
    }
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Bound::P0 => "p0",
            Bound::P1 => "p1",
            Bound::B0 => "b0",
            Bound::B1 => "b1",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;

    #[test]
    fn access_reads_serializes_and_debugs_as_four_affines() {
        let k = Affine::var(VarId(0), 4);
        let (c0, c2, c8) = (
            Affine::constant(0),
            Affine::constant(2),
            Affine::constant(8),
        );
        let a = Access::new(TensorId(1), c0.clone(), c2, k.clone(), c8);
        assert!(a.is_affine());
        assert_eq!((a.p0(), a.b0()), (c0, k));
        let json = serde_json::to_string(&a).unwrap();
        assert_eq!(
            json,
            r#"{"tensor":1,"p0":{"terms":[],"constant":0},"p1":{"terms":[],"constant":2},"b0":{"terms":[[0,4]],"constant":0},"b1":{"terms":[],"constant":8}}"#
        );
        assert_eq!(serde_json::from_str::<Access>(&json).unwrap(), a);
        assert_eq!(
            format!("{a:?}"),
            "Access { tensor: TensorId(1), p0: Affine { terms: [], constant: 0 }, \
             p1: Affine { terms: [], constant: 2 }, b0: Affine { terms: [(VarId(0), 4)], constant: 0 }, \
             b1: Affine { terms: [], constant: 8 } }"
        );
        let mut c = a;
        c.edit_bounds(|_, e| *e = e.substitute(VarId(0), 1));
        assert_eq!(c, Access::rect(TensorId(1), 0, 2, 4, 8));
        assert!(!c.is_affine());
    }

    /// Constants beyond `i32` move the bounds to the heap without changing
    /// what the access means, and equality does not see where they live.
    #[test]
    fn access_with_wide_constants_reads_as_written() {
        let big = i64::from(i32::MAX) + 1;
        let a = Access::rect(TensorId(2), 0, 4, big, big + 8);
        assert!(a.wide.is_some());
        assert!(!a.is_affine());
        assert_eq!(
            (a.b0(), a.byte_extent(), a.part_extent()),
            (Affine::constant(big), 8, 4)
        );
        assert_eq!(
            a.region(|_| 0),
            Region {
                p0: 0,
                p1: 4,
                b0: big,
                b1: big + 8
            }
        );
        let json = serde_json::to_string(&a).unwrap();
        assert_eq!(serde_json::from_str::<Access>(&json).unwrap(), a);
        let mut b = a.clone();
        b.edit_bounds(|bound, e| {
            if matches!(bound, Bound::B0 | Bound::B1) {
                *e = Affine::constant(e.constant - big);
            }
        });
        assert_eq!(b, Access::rect(TensorId(2), 0, 4, 0, 8));
        assert!(b.wide.is_none());
        let neg = Access::rect(TensorId(2), i64::from(i32::MIN) - 1, 0, 0, 1);
        assert_eq!(neg.p0(), Affine::constant(i64::from(i32::MIN) - 1));
    }

    #[test]
    fn region_overlap_contains() {
        let a = Region {
            p0: 0,
            p1: 64,
            b0: 0,
            b1: 2048,
        };
        let b = Region {
            p0: 64,
            p1: 128,
            b0: 0,
            b1: 2048,
        };
        assert!(!a.overlaps(&b));
        let c = Region {
            p0: 0,
            p1: 128,
            b0: 0,
            b1: 2048,
        };
        assert!(c.contains(&a) && c.contains(&b) && !a.contains(&c));
        assert!(c.overlaps(&a));
    }
}
