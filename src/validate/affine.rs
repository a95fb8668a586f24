//! Extremes of affine bounds over every iteration, and the iterations
//! that attain them: the witnesses errors name.

use super::context::{Cx, Iteration};
use crate::arch::PSUM_BANK_SIZE;
use crate::ir::{Access, Affine, Bound, VarId};

impl Cx<'_> {
    /// Whether access `a` of `t` passes every check of [`Cx::access`]:
    /// the common case, decided on the borrowed bounds without building
    /// expressions or iterations; a failure takes the general path for its
    /// diagnostic.
    pub(super) fn fits(&self, a: &Access, t: &crate::ir::Tensor) -> bool {
        let size = i64::from(t.dtype.size());
        let range = |v: VarId| self.range[v];
        let aligned = |b: Bound| {
            let (c, terms) = b.parts(a);
            let at_lo: i64 = c + terms.iter().map(|&(v, k)| k * range(v).0).sum::<i64>();
            at_lo % size == 0
                && terms.iter().all(|&(v, k)| {
                    let (lo, hi) = range(v);
                    hi - lo < 2 || k % size == 0
                })
        };
        let extent = |lo: Bound, hi: Bound| {
            let ((c0, t0), (c1, t1)) = (lo.parts(a), hi.parts(a));
            t0 == t1 && c1 > c0
        };
        let extreme = |b: Bound, max: bool| {
            let (c, terms) = b.parts(a);
            terms.iter().fold(i128::from(c), |acc, &(v, k)| {
                let (lo, hi) = range(v);
                acc + i128::from(k) * i128::from(if (k > 0) == max { hi - 1 } else { lo })
            })
        };
        aligned(Bound::B0)
            && aligned(Bound::B1)
            && extent(Bound::P0, Bound::P1)
            && extent(Bound::B0, Bound::B1)
            && extreme(Bound::P0, false) >= 0
            && extreme(Bound::P1, true) <= i128::from(t.partitions)
            && extreme(Bound::B0, false) >= 0
            && extreme(Bound::B1, true) <= i128::from(t.bytes)
    }

    /// The extreme value of `e` over all iterations (`max` or min) and an
    /// iteration attaining it.
    pub(super) fn extreme(&self, e: &Affine, max: bool) -> (i128, Iteration) {
        let mut value = i128::from(e.constant);
        let mut it = Vec::new();
        for &(v, c) in &e.terms {
            let (lo, hi) = self.range[v];
            let x = if (c > 0) == max { hi - 1 } else { lo };
            value += i128::from(c) * i128::from(x);
            it.push((v, x));
        }
        (value, it)
    }

    /// An iteration at which `[b0, b0 + extent)` crosses a bank boundary.
    /// Exact: explores the reachable residues of `b0` modulo the bank size
    /// (each variable contributes at most one period of residues).
    pub(super) fn bank_crossing(&self, b0: &Affine, extent: i64) -> Option<Iteration> {
        let bank = i64::from(PSUM_BANK_SIZE);
        if b0.terms.is_empty() {
            return (b0.constant.rem_euclid(bank) + extent > bank).then(Vec::new);
        }
        let mut reach: Vec<Option<Iteration>> = vec![None; PSUM_BANK_SIZE as usize];
        reach[b0.constant.rem_euclid(bank) as usize] = Some(Vec::new());
        for &(v, c) in &b0.terms {
            let step = c.rem_euclid(bank);
            let (lo, hi) = self.range[v];
            let period = if step == 0 { 1 } else { bank / gcd(step, bank) };
            let mut next: Vec<Option<Iteration>> = vec![None; reach.len()];
            for (r, w) in reach.iter().enumerate() {
                let Some(w) = w else { continue };
                for x in lo..hi.min(lo.saturating_add(period)) {
                    let nr = (r as i64 + step * x.rem_euclid(bank)).rem_euclid(bank) as usize;
                    if next[nr].is_none() {
                        let mut w2 = w.clone();
                        w2.push((v, x));
                        next[nr] = Some(w2);
                    }
                }
            }
            reach = next;
        }
        reach
            .into_iter()
            .enumerate()
            .filter(|(r, _)| *r as i64 + extent > bank)
            .filter_map(|(_, w)| w)
            .min_by(|a, b| a.iter().map(|p| p.1).cmp(b.iter().map(|p| p.1)))
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use crate::ir::InstId;
    use crate::text::parse;

    /// The residue search of `bank_crossing` agrees with enumerating every
    /// iteration, and its witness really crosses a bank.
    #[test]
    fn bank_crossing_matches_enumeration() {
        let mut seed = 0x1234_5678_u64;
        let mut next = |n: i64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as i64
        };
        let mut outcomes = [0; 2];
        for _ in 0..300 {
            let (ck, cj) = (4 * next(700) - 1400, 4 * next(300));
            let (klo, jlo) = (next(3), next(2));
            let (khi, jhi) = (klo + 1 + next(5), jlo + 1 + next(4));
            let extent = 4 * (1 + next(512));
            let c = 4 * next(1024) + 8192;
            let src = format!(
                "arch trn1\npsum acc [1, 65536]\nblock b {{\n  loop k {klo}..{khi} {{\n    loop j {jlo}..{jhi} {{\n      \
                 memset acc[0:1, k*{ck}+j*{cj}+{c} : k*{ck}+j*{cj}+{}] = 0\n    }}\n  }}\n}}\n",
                c + extent
            );
            let m = parse(&src).unwrap().module;
            let loop_of_var = structure(&m).unwrap();
            let cx = Cx::new(&m, arch::lookup("trn1").unwrap(), &loop_of_var);
            let b0 = m.insts[InstId(0)].kind.dst().b0();
            let crosses = |k: i64, j: i64| {
                let v = b0.eval(|v| if v.index() == 0 { k } else { j });
                v / 2048 != (v + extent - 1) / 2048
            };
            let any = (klo..khi).any(|k| (jlo..jhi).any(|j| crosses(k, j)));
            let found = cx.bank_crossing(&b0, extent);
            assert_eq!(found.is_some(), any, "{src}");
            outcomes[usize::from(any)] += 1;
            if let Some(it) = found {
                let val = |v: usize| it.iter().find(|p| p.0.index() == v).map_or(0, |p| p.1);
                let (k, j) = (val(0), val(1));
                let used = |v: usize| b0.terms.iter().any(|t| t.0.index() == v);
                let k = if used(0) { k } else { klo };
                let j = if used(1) { j } else { jlo };
                assert!(crosses(k, j), "witness k={k} j={j} does not cross\n{src}");
            }
        }
        assert!(outcomes[0] > 30 && outcomes[1] > 30, "{outcomes:?}");
    }
}
