//! Affine expressions over loop variables (SPEC §2.2), canonical and
//! printed in the text syntax.

use super::{Var, VarId};
use crate::entity::IdVec;
use serde::{Deserialize, Serialize};
use std::fmt;

/// An integer affine expression `c + Σ coef·var` over loop variables.
///
/// Canonical form: terms sorted by [`VarId`], no zero coefficients, no
/// repeated variables. Construct through [`Affine::constant`] and the
/// arithmetic helpers to keep it canonical.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Affine {
    /// Variable terms `(var, coefficient)`, sorted by var, coefficients non-zero.
    pub terms: Terms,
    /// The constant term.
    pub constant: i64,
}

/// The variable terms of an [`Affine`]: a list of `(var, coefficient)` pairs
/// behind one thin pointer, so that an [`Affine`] is 16 bytes and a constant
/// expression (no terms, the common case) owns no heap memory.
///
/// Reads go through `Deref<Target = [(VarId, i64)]>`; equality, hashing,
/// `Debug` and serde behave exactly like the `Vec` it replaces.
#[derive(Clone, Default)]
#[allow(clippy::box_collection)] // the point: `Box<Vec<_>>` is one word, `Vec` and `Box<[_]>` are more
pub struct Terms(Option<Box<Vec<(VarId, i64)>>>);

impl Terms {
    /// Appends `term` as is, without canonicalizing (like `Vec::push`); build
    /// canonical expressions with [`Affine::add_term`] instead.
    pub fn push(&mut self, term: (VarId, i64)) {
        self.0.get_or_insert_with(Box::default).push(term);
    }

    /// Adds `by` to every variable id (their order, and so the canonical
    /// form, is kept).
    pub(crate) fn offset_vars(&mut self, by: u32) {
        for (v, _) in self.0.iter_mut().flat_map(|v| v.iter_mut()) {
            v.0 += by;
        }
    }

    /// Applies `f` to the backing vector, releasing it when left empty.
    fn edit(&mut self, f: impl FnOnce(&mut Vec<(VarId, i64)>)) {
        let v = self.0.get_or_insert_with(Box::default);
        f(v);
        if v.is_empty() {
            self.0 = None;
        }
    }
}

impl std::ops::Deref for Terms {
    type Target = [(VarId, i64)];

    fn deref(&self) -> &[(VarId, i64)] {
        self.0.as_deref().map_or(&[], Vec::as_slice)
    }
}

impl<'a> IntoIterator for &'a Terms {
    type Item = &'a (VarId, i64);
    type IntoIter = std::slice::Iter<'a, (VarId, i64)>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl From<Vec<(VarId, i64)>> for Terms {
    fn from(v: Vec<(VarId, i64)>) -> Self {
        Terms((!v.is_empty()).then(|| Box::new(v)))
    }
}

impl PartialEq for Terms {
    fn eq(&self, other: &Terms) -> bool {
        **self == **other
    }
}

impl Eq for Terms {}

impl std::hash::Hash for Terms {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (**self).hash(state);
    }
}

impl fmt::Debug for Terms {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

impl Serialize for Terms {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Terms {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::deserialize(d).map(Terms::from)
    }
}

impl Affine {
    /// The constant expression `c`.
    pub fn constant(c: i64) -> Self {
        Affine {
            terms: Terms::default(),
            constant: c,
        }
    }

    /// The expression `coef·var`.
    pub fn var(var: VarId, coef: i64) -> Self {
        let mut a = Affine::constant(0);
        a.add_term(var, coef);
        a
    }

    /// Adds `coef·var`, keeping the form canonical.
    pub fn add_term(&mut self, var: VarId, coef: i64) {
        match self.terms.binary_search_by_key(&var, |t| t.0) {
            Ok(i) => self.terms.edit(|t| {
                t[i].1 += coef;
                if t[i].1 == 0 {
                    t.remove(i);
                }
            }),
            Err(i) => {
                if coef != 0 {
                    self.terms.edit(|t| t.insert(i, (var, coef)));
                }
            }
        }
    }

    /// Adds `sign·other` to `self`.
    pub fn add_scaled(&mut self, other: &Affine, sign: i64) {
        self.constant += sign * other.constant;
        for &(v, c) in &other.terms {
            self.add_term(v, sign * c);
        }
    }

    /// The constant value, when the expression has no variable terms.
    pub fn as_const(&self) -> Option<i64> {
        self.terms.is_empty().then_some(self.constant)
    }

    /// Evaluates with `value(var)` giving each variable's current value.
    pub fn eval(&self, value: impl Fn(VarId) -> i64) -> i64 {
        eval(self.constant, &self.terms, value)
    }

    /// Replaces `var` by the constant `val`.
    pub fn substitute(&self, var: VarId, val: i64) -> Affine {
        let mut out = Affine::constant(self.constant);
        for &(v, c) in &self.terms {
            if v == var {
                out.constant += c * val;
            } else {
                out.add_term(v, c);
            }
        }
        out
    }

    /// Prints in canonical text syntax (`k*1024+256`), naming variables via `vars`.
    pub fn display<'a>(&'a self, vars: &'a IdVec<VarId, Var>) -> impl fmt::Display + 'a {
        AffineDisplay { a: self, vars }
    }
}

/// Evaluates `constant + Σ coef·value(var)` over `terms`.
pub(super) fn eval(constant: i64, terms: &[(VarId, i64)], value: impl Fn(VarId) -> i64) -> i64 {
    terms
        .iter()
        .fold(constant, |acc, &(v, c)| acc + c * value(v))
}

struct AffineDisplay<'a> {
    a: &'a Affine,
    vars: &'a IdVec<VarId, Var>,
}

impl fmt::Display for AffineDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        self.a.write_text(&mut s, self.vars);
        f.write_str(&s)
    }
}

impl Affine {
    /// Appends the canonical text syntax (`k*1024+256`) to `out`, naming
    /// variables via `vars`; what [`Affine::display`] shows.
    pub fn write_text(&self, out: &mut String, vars: &IdVec<VarId, Var>) {
        write_affine(out, self.constant, &self.terms, vars);
    }
}

/// Appends `constant + Σ coef·var` over `terms` in canonical text syntax.
pub(crate) fn write_affine(
    out: &mut String,
    constant: i64,
    terms: &[(VarId, i64)],
    vars: &IdVec<VarId, Var>,
) {
    let mut num = itoa::Buffer::new();
    let mut first = true;
    for &(v, c) in terms {
        let mag = c.unsigned_abs();
        if c < 0 {
            out.push('-');
        } else if !first {
            out.push('+');
        }
        out.push_str(&vars[v].name);
        if mag != 1 {
            out.push('*');
            out.push_str(num.format(mag));
        }
        first = false;
    }
    if first || constant < 0 {
        out.push_str(num.format(constant));
    } else if constant > 0 {
        out.push('+');
        out.push_str(num.format(constant));
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use crate::entity::IdVec;

    #[test]
    fn affine_canonical_and_display() {
        let vars = IdVec::from(vec![Var { name: "k".into() }, Var { name: "j".into() }]);
        let mut a = Affine::constant(256);
        a.add_term(VarId(0), 1024);
        assert_eq!(a.display(&vars).to_string(), "k*1024+256");
        a.add_term(VarId(1), -1);
        assert_eq!(a.display(&vars).to_string(), "k*1024-j+256");
        a.add_term(VarId(0), -1024);
        assert_eq!(*a.terms, [(VarId(1), -1)]);
        assert_eq!(Affine::constant(-3).display(&vars).to_string(), "-3");
        assert_eq!(Affine::var(VarId(0), 1).display(&vars).to_string(), "k");
        assert_eq!(a.eval(|_| 5), 251);
        assert_eq!(a.substitute(VarId(1), 6).as_const(), Some(250));
    }

    #[test]
    fn terms_stay_thin_and_vec_like() {
        let mut a = Affine::var(VarId(2), 3);
        a.add_term(VarId(2), -3);
        assert_eq!(a, Affine::constant(0));
        assert!(a.terms.0.is_none());
        a.terms.push((VarId(1), 0));
        assert_eq!(format!("{:?}", a.terms), "[(VarId(1), 0)]");
        let json = serde_json::to_string(&Affine::var(VarId(1), -2)).unwrap();
        assert_eq!(json, r#"{"terms":[[1,-2]],"constant":0}"#);
        let back: Affine = serde_json::from_str(r#"{"terms":[],"constant":5}"#).unwrap();
        assert!(back.terms.0.is_none());
        assert_eq!(back, Affine::constant(5));
    }
}
