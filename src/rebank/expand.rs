//! Modulo variable expansion (Lam, PLDI 1988) of one loop (SPEC §3.12):
//! the body of `loop v LO..HI` (n trips) is replicated k times over a loop
//! of ⌊n/k⌋ trips, replica r standing for iteration `LO + k·v + r`, then
//! the n mod k iterations left over follow as replicas of their own; the
//! loop is replaced by its replicas when ⌊n/k⌋ is 1. Iteration i uses copy
//! i mod k of every tensor private to the loop ([`super::private`]): copy
//! 0 is the tensor itself, the others are new declarations of its shape.

use crate::ir::{Access, Affine, Inst, LoopId, Module, Stmt, TensorId, VarId};
use crate::verify::spill_name;
use std::collections::{HashMap, HashSet};

/// How one replica rewrites what it copies.
struct Replica<'a> {
    /// The loop variable and what stands for it: `coef·var + offset`
    /// (`coef` 0: the constant `offset`).
    var: VarId,
    coef: i64,
    offset: i64,
    /// Tensor renaming of the replica's class.
    rename: &'a HashMap<TensorId, TensorId>,
}

impl Replica<'_> {
    fn affine(&self, a: &Affine) -> Affine {
        let mut out = Affine::constant(a.constant);
        for &(v, c) in &a.terms {
            if v == self.var {
                out.constant += c * self.offset;
                out.add_term(v, c * self.coef);
            } else {
                out.add_term(v, c);
            }
        }
        out
    }

    fn access(&self, a: &mut Access) {
        a.edit_bounds(|_, e| *e = self.affine(e));
        if let Some(&t) = self.rename.get(&a.tensor) {
            a.tensor = t;
        }
    }

    /// Copies `body` into `m`'s arenas, rewritten.
    fn copy(&self, m: &mut Module, body: &[Stmt]) -> Vec<Stmt> {
        body.iter()
            .map(|s| match *s {
                Stmt::Inst(i) => {
                    let mut inst: Inst = m.inst(i).clone();
                    self.access(inst.kind.dst_mut());
                    inst.kind.for_each_src_mut(|a| self.access(a));
                    Stmt::Inst(m.add_inst(inst))
                }
                Stmt::Loop(l) => {
                    let mut lp = m.loop_(l).clone();
                    let inner = std::mem::take(&mut lp.body);
                    lp.body = self.copy(m, &inner);
                    Stmt::Loop(m.add_loop(lp))
                }
            })
            .collect()
    }
}

/// The name of a new copy of `name`: a reload temporary gets the next free
/// spill-code counter (it still stands for its tensor, SPEC §5.1); any
/// other tensor `X`, or memloc piece `X.N` of an input tensor `X`, becomes
/// `X.M`, M the least number giving a name neither `m` nor `input` has.
fn copy_name(name: &str, input: &Module, taken: &mut HashSet<String>, counter: &mut u64) -> String {
    if let Some((base, crate::verify::SpillRole::Reload, _)) = spill_name(name) {
        let fresh = format!("{base}_ReloadTensorCopy{counter}");
        *counter += 1;
        taken.insert(fresh.clone());
        return fresh;
    }
    let base = match name.rsplit_once('.') {
        Some((b, n))
            if input.tensor_by_name(name).is_none()
                && !n.is_empty()
                && n.bytes().all(|c| c.is_ascii_digit())
                && input.tensor_by_name(b).is_some() =>
        {
            b
        }
        _ => name,
    };
    let fresh = (1..)
        .map(|m| format!("{base}.{m}"))
        .find(|n| !taken.contains(n))
        .unwrap_or_default();
    taken.insert(fresh.clone());
    fresh
}

/// Where loop `l` sits: the body holding it (`None`: block `b`) and its index.
fn position(m: &Module, l: LoopId) -> Option<(Option<LoopId>, usize, usize)> {
    fn find(
        m: &Module,
        body: &[Stmt],
        l: LoopId,
        owner: Option<LoopId>,
    ) -> Option<(Option<LoopId>, usize)> {
        for (i, s) in body.iter().enumerate() {
            if let Stmt::Loop(x) = *s {
                if x == l {
                    return Some((owner, i));
                }
                if let Some(found) = find(m, &m.loop_(x).body, l, Some(x)) {
                    return Some(found);
                }
            }
        }
        None
    }
    m.blocks
        .iter()
        .enumerate()
        .find_map(|(b, blk)| find(m, &blk.body, l, None).map(|(o, i)| (o, b, i)))
}

/// Expands loop `l` of `m` by `k` (2 ≤ k ≤ trips), giving every tensor of
/// `private` k − 1 new copies, named against `input` (the compile input).
/// With `inline`, a loop left with one trip is replaced by its replicas.
/// The old statements stay in the arenas, unreachable (see
/// [`Module::compacted`]). Returns false, changing nothing, when `l` is not
/// reachable.
pub(crate) fn expand(
    m: &mut Module,
    input: &Module,
    l: LoopId,
    k: u64,
    private: &[TensorId],
    inline: bool,
) -> bool {
    let Some((owner, block, index)) = position(m, l) else {
        return false;
    };
    let lp = m.loop_(l).clone();
    let (n, k_i) = (lp.trip_count(), k as i64);
    let (full, rest) = (n / k, n % k);
    let mut taken: HashSet<String> = (m.tensors.values().chain(&input.tensors))
        .map(|t| t.name.clone())
        .collect();
    let mut counter = 1
        + (m.tensors.values())
            .filter_map(|t| spill_name(&t.name).map(|(_, _, c)| c))
            .max()
            .unwrap_or(0);
    // Classes 0..k for the loop's replicas, then one per iteration left over.
    let mut classes: Vec<HashMap<TensorId, TensorId>> = vec![HashMap::new(); (k + rest) as usize];
    for &t in private {
        classes[0].insert(t, t);
        for class in classes.iter_mut().skip(1) {
            let mut decl = m.tensor(t).clone();
            decl.name = copy_name(&decl.name, input, &mut taken, &mut counter);
            decl.bank = None;
            class.insert(t, m.add_tensor(decl));
        }
    }
    let replica = |r: u64, coef: i64, offset: i64| Replica {
        var: lp.var,
        coef,
        offset,
        rename: &classes[r as usize],
    };
    let mut replaced = Vec::new();
    if full == 1 && inline {
        for r in 0..k {
            replaced.extend(replica(r, 0, lp.lo + r as i64).copy(m, &lp.body));
        }
    } else if full >= 1 {
        let mut body = Vec::new();
        for r in 0..k {
            body.extend(replica(r, k_i, lp.lo + r as i64).copy(m, &lp.body));
        }
        let mut new = lp.clone();
        (new.lo, new.hi, new.body) = (0, full as i64, body);
        replaced.push(Stmt::Loop(m.add_loop(new)));
    }
    for r in 0..rest {
        let offset = lp.lo + (full * k + r) as i64;
        replaced.extend(replica(k + r, 0, offset).copy(m, &lp.body));
    }
    let body = match owner {
        Some(o) => &mut m.loops[o].body,
        None => &mut m.blocks[block].body,
    };
    body.splice(index..=index, replaced);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "arch trn1\npsum s [128, 2048] bank=1\nsbuf w [128, 256] bf16\n\
        sbuf x [128, 5120] bf16\nsbuf y [128, 2048]\nblock main {\n  loop i 1..6 {\n    \
        matmul s <- w, x[0:128, i*1024-1024:i*1024]\n    act y <- s\n  }\n}\n";

    fn expanded(k: u64, inline: bool) -> String {
        let mut m = crate::text::parse(SRC).unwrap().module;
        let input = m.clone();
        assert!(expand(
            &mut m,
            &input,
            LoopId::new(0),
            k,
            &[TensorId::new(0)],
            inline
        ));
        crate::text::print(&m.compacted())
    }

    #[test]
    fn two_copies_over_two_trips_and_a_remainder() {
        let out = expanded(2, true);
        assert!(out.contains("psum s [128, 2048] bank=1\n"), "{out}");
        assert!(
            out.contains("psum s.1 [128, 2048]\npsum s.2 [128, 2048]\n"),
            "{out}"
        );
        let body = &out[out.find("block main").unwrap()..];
        assert_eq!(
            body,
            "block main {\n  loop i 0..2 {\n    matmul s <- w, x[0:128, i*2048:i*2048+1024]\n    \
             act y <- s\n    matmul s.1 <- w, x[0:128, i*2048+1024:i*2048+2048]\n    act y <- s.1\n  }\n  \
             matmul s.2 <- w, x[0:128, 4096:5120]\n  act y <- s.2\n}\n"
        );
    }

    #[test]
    fn a_loop_of_one_trip_is_replaced_by_its_replicas() {
        let out = expanded(5, true);
        let body = &out[out.find("block main").unwrap()..];
        assert!(!body.contains("loop"), "{body}");
        assert!(
            body.contains("matmul s.4 <- w, x[0:128, 4096:5120]\n  act y <- s.4\n"),
            "{body}"
        );
        let kept = expanded(5, false);
        assert!(kept.contains("loop i 0..1 {"), "{kept}");
    }

    #[test]
    fn copies_of_reload_temporaries_take_fresh_counters() {
        let input = crate::text::parse(SRC).unwrap().module;
        let mut taken = HashSet::new();
        let mut counter = 7;
        assert_eq!(
            copy_name("t_ReloadTensorCopy3", &input, &mut taken, &mut counter),
            "t_ReloadTensorCopy7"
        );
        assert_eq!(copy_name("s", &input, &mut taken, &mut counter), "s.1");
        assert_eq!(copy_name("s", &input, &mut taken, &mut counter), "s.2");
        // A memloc piece of s copies as s.M too; a tensor of the input
        // named like a piece keeps its whole name as the base.
        assert_eq!(copy_name("s.0", &input, &mut taken, &mut counter), "s.3");
        assert_eq!(copy_name("q.0", &input, &mut taken, &mut counter), "q.0.1");
    }
}
