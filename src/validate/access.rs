//! The rules every access obeys (SPEC §2.3): dtype alignment, constant
//! non-empty extents, bounds for every iteration.

use super::context::{Cx, Iteration};
use super::error::{err, ValidateError, ValidateErrorKind};
use crate::ir::{Access, Bound, InstId, Loc};
use crate::text::access_to_string;

impl Cx<'_> {
    pub(super) fn elems(&self, a: &Access) -> i64 {
        a.byte_extent() / i64::from(self.m.tensor(a.tensor).dtype.size())
    }

    /// Alignment, constant non-empty extents and bounds of operand `k`.
    pub(super) fn access(&self, id: InstId, k: usize, a: &Access) -> Result<(), ValidateError> {
        let t = self.m.tensor(a.tensor);
        if self.fits(a, t) {
            return Ok(());
        }
        let text = || access_to_string(self.m, a);
        let vars = &self.m.vars;
        let size = i64::from(t.dtype.size());
        for b in [Bound::B0, Bound::B1] {
            let e = b.of(a);
            let bad_var = e.terms.iter().find(|&&(v, c)| {
                let (lo, hi) = self.range[v];
                hi - lo >= 2 && c % size != 0
            });
            let mut it: Iteration = e.terms.iter().map(|&(v, _)| (v, self.range[v].0)).collect();
            if e.eval(|v| self.range[v].0) % size == 0 {
                let Some(&(bv, _)) = bad_var else { continue };
                it.iter_mut().filter(|p| p.0 == bv).for_each(|p| p.1 += 1);
            }
            let value = e.eval(|v| it.iter().find(|p| p.0 == v).map_or(0, |p| p.1));
            return err(
                Loc::Bound(id, k, b),
                ValidateErrorKind::Misaligned {
                    inst: self.inst_name(id),
                    access: text(),
                    bound: b,
                    expr: e.display(vars).to_string(),
                    value,
                    at: self.iteration_text(&it),
                    dtype: t.dtype,
                },
            );
        }
        for (dim, lo, hi, b) in [
            ("partition", a.p0(), a.p1(), Bound::P1),
            ("byte", a.b0(), a.b1(), Bound::B1),
        ] {
            let mut extent = hi;
            extent.add_scaled(&lo, -1);
            let Some(n) = extent.as_const() else {
                return err(
                    Loc::Bound(id, k, b),
                    ValidateErrorKind::VaryingExtent {
                        inst: self.inst_name(id),
                        access: text(),
                        dim,
                    },
                );
            };
            if n <= 0 {
                return err(
                    Loc::Operand(id, k),
                    ValidateErrorKind::EmptyAccess {
                        inst: self.inst_name(id),
                        access: text(),
                    },
                );
            }
        }
        let checks = [
            (Bound::P0, false, 0),
            (Bound::P1, true, t.partitions),
            (Bound::B0, false, 0),
            (Bound::B1, true, t.bytes),
        ];
        for (b, upper, limit) in checks {
            let e = b.of(a);
            let (value, it) = self.extreme(&e, upper);
            let bad = if upper {
                value > i128::from(limit)
            } else {
                value < 0
            };
            if bad {
                let limit = if upper {
                    let what = if b == Bound::P1 {
                        "partitions"
                    } else {
                        "bytes"
                    };
                    format!("beyond the {limit} {what} of '{}'", t.name)
                } else {
                    "below 0".to_string()
                };
                return err(
                    Loc::Bound(id, k, b),
                    ValidateErrorKind::OutOfBounds {
                        inst: self.inst_name(id),
                        access: text(),
                        bound: b,
                        expr: e.display(vars).to_string(),
                        value: i64::try_from(value).unwrap_or(if upper {
                            i64::MAX
                        } else {
                            i64::MIN
                        }),
                        at: self.iteration_text(&it),
                        limit,
                    },
                );
            }
        }
        Ok(())
    }
}
