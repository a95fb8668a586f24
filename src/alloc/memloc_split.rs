//! Memloc split (SPEC §3.2 **\[decision\]**; seed: `psum_memloc_split`, run
//! between the two `renumber_locations` calls of `PSUM_Allocator::allocate`).
//!
//! A PSUM tensor reused for unrelated values is cut before every write that
//! starts a fresh value: a write outside all loops that covers the whole
//! tensor, overwrites it (a non-matmul write, or a matmul that starts an
//! accumulation run with no init, SPEC §2.4) without reading it, and follows
//! a read of the current piece. The pieces become tensors `NAME.0`, `NAME.1`,
//! … declared in place of the original; a tensor with no cut keeps its name.

use super::events::{AccessTable, Event, Events};
use super::linear::Linear;
use super::support::threads;
use super::InputTensors;
use crate::entity::{IdMap, IdVec};
use crate::ir::{Access, InstId, InstKind, Mem, Module, Region, Tensor, TensorId, VarId};
use std::ops::Range;

/// Splits every PSUM tensor of `m` at its overwrite points, in place
/// (`m` unchanged when there are none); `lin` and `table` describe `m`.
/// A split renames tensors but keeps every statement, so `lin` describes
/// the result too, which comes with its PSUM accesses and the input
/// tensor of each piece. On `parallel`, two threads look for the cuts, half
/// the tensors each.
pub(crate) fn memloc_split(
    mut m: Module,
    lin: &Linear,
    table: AccessTable,
    parallel: bool,
) -> (Module, Events, InputTensors) {
    let events = Events::from_table(&table, m.tensors.len(), lin);
    let mut last_value = IdMap::with_len(m.vars.len(), 0i64);
    for l in &m.loops {
        last_value[l.var] = l.hi - 1;
    }
    // The tensors with cuts (few or none), with them.
    let cut = |ids: Range<usize>| -> Vec<(usize, Vec<u32>)> {
        (ids.filter(|&ti| m.tensors[TensorId::new(ti)].mem == Mem::Psum))
            .map(|ti| {
                let ev = events.of(TensorId::new(ti), lin);
                (
                    ti,
                    cut_points(&m, lin, ev, &m.tensors[TensorId::new(ti)], &last_value),
                )
            })
            .filter(|(_, c)| !c.is_empty())
            .collect()
    };
    let n = m.tensors.len();
    let (early, late) = threads::in_halves(parallel, n, cut);
    if early.is_empty() && late.is_empty() {
        return (m, events, InputTensors::new(Vec::new(), n));
    }
    drop((events, table));
    let mut cuts = IdMap::with_len(n, Vec::new());
    for (ti, c) in early.into_iter().chain(late) {
        cuts[TensorId::new(ti)] = c;
    }
    let old = std::mem::take(&mut m.tensors);
    let mut base: IdVec<TensorId, usize> = IdVec::with_capacity(old.len());
    let mut input = Vec::with_capacity(old.len());
    for (i, (t, c)) in old.into_vec().into_iter().zip(cuts.values()).enumerate() {
        base.push(m.tensors.len());
        input.extend(std::iter::repeat_n(TensorId::new(i), c.len() + 1));
        if c.is_empty() {
            m.tensors.push(t);
        } else {
            for piece in 0..=c.len() {
                m.tensors.push(Tensor {
                    name: format!("{}.{piece}", t.name),
                    ..t.clone()
                });
            }
        }
    }
    for (ii, inst) in m.insts.values_mut().enumerate() {
        let point = lin.point_of(InstId::new(ii));
        let rename = |a: &mut Access| {
            let c = &cuts[a.tensor];
            let piece = point.map_or(0, |p| c.partition_point(|&x| x <= p));
            a.tensor = TensorId::new(base[a.tensor] + piece);
        };
        rename(inst.kind.dst_mut());
        inst.kind.for_each_src_mut(rename);
    }
    let events = Events::new(&m, lin);
    let pieces = InputTensors::new(input, m.tensors.len());
    (m, events, pieces)
}

/// The points of tensor `t` (accesses `ev`) before which a new piece starts.
fn cut_points(
    m: &Module,
    lin: &Linear,
    ev: impl Iterator<Item = Event>,
    t: &Tensor,
    last_value: &IdMap<VarId, i64>,
) -> Vec<u32> {
    let whole = Region {
        p0: 0,
        p1: i64::from(t.partitions),
        b0: 0,
        b1: i64::from(t.bytes),
    };
    let mut cuts = Vec::new();
    let mut read_since_cut = false;
    let mut prev: Option<Event> = None;
    for e in ev {
        let kind = &m.inst(e.inst).kind;
        let is_cut = read_since_cut
            && e.write
            && !e.read
            && lin.points[e.point as usize].innermost().is_none()
            && kind.dst().is_whole(t)
            && prev.is_some_and(|p| overwrites(m, kind, &p, whole, last_value));
        if is_cut {
            cuts.push(e.point);
            read_since_cut = false;
        }
        read_since_cut |= e.read;
        prev = Some(e);
    }
    cuts
}

/// Whether the whole-tensor write `kind` overwrites rather than continues:
/// a non-matmul write always does; a matmul does unless the tensor's latest
/// event (`prev`, evaluated at the last iteration of its loops) is a matmul
/// write of the same region (the run continues) or a non-matmul write
/// covering it (an init).
fn overwrites(
    m: &Module,
    kind: &InstKind,
    prev: &Event,
    whole: Region,
    last_value: &IdMap<VarId, i64>,
) -> bool {
    if kind.as_matmul().is_none() || !prev.write {
        return true;
    }
    let pk = &m.inst(prev.inst).kind;
    let region = pk.dst().region(|v| last_value[v]);
    if pk.as_matmul().is_some() {
        region != whole
    } else {
        !region.contains(&whole)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two threads, half the tensors each, cut what one thread cuts: `t`
    /// in the first half and `u` in the second are each cut once.
    #[test]
    fn halves_cut_as_one_thread_does() {
        let src = "arch trn1

psum t [128, 2048]
sbuf w [128, 256] bf16
sbuf x [128, 4096] bf16
psum u [128, 2048]
sbuf y [128, 2048]

block main {
  matmul t <- w, x[0:128, 0:1024]
  matmul u <- w, x[0:128, 1024:2048]
  act y <- t, u
  matmul t <- w, x[0:128, 2048:3072]
  memset u = 0
  act y <- t, u
}
";
        let m = crate::text::parse(src).expect("the program parses").module;
        let lin = Linear::new(&m);
        let split = |parallel| {
            let (m, events, _) = memloc_split(m.clone(), &lin, AccessTable::new(&m), parallel);
            assert_eq!(
                format!("{events:?}"),
                format!("{:?}", Events::new(&m, &lin))
            );
            m
        };
        let one = split(false);
        let names: Vec<&str> = one.tensors.values().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["t.0", "t.1", "w", "x", "u.0", "u.1", "y"]);
        assert_eq!(split(true), one);
    }
}
