//! Memloc split (SPEC §3.2 **\[decision\]**).
//!
//! A PSUM tensor is cut before every write W that is outside all loops,
//! covers the whole tensor, overwrites it without reading it (a non-matmul
//! write, or a matmul that starts an accumulation run with no init) and
//! comes after a read of the current piece. The pieces `NAME.0`, `NAME.1`,
//! … are declared in place of the tensor.

use super::liveness::{accesses, Access};
use crate::alloc::linear::Linear;
use crate::alloc::InputTensors;
use crate::entity::{IdMap, IdVec};
use crate::ir::{self, InstId, Mem, Module, Region, Tensor, TensorId, VarId};

/// Splits every PSUM tensor of `m` at its overwrite points; with the
/// input tensor of each piece.
pub(crate) fn memloc_split(mut m: Module) -> (Module, InputTensors) {
    let lin = Linear::new(&m);
    let accesses = accesses(&m, &lin);
    let mut last_value = IdMap::with_len(m.vars.len(), 0);
    for l in &m.loops {
        last_value[l.var] = l.hi - 1;
    }
    let cuts: IdMap<TensorId, Vec<u32>> = (m.tensors.iter())
        .map(|(i, t)| match t.mem {
            Mem::Psum => cut_points(&m, &lin, i, &accesses[i], &last_value),
            _ => Vec::new(),
        })
        .collect();
    if cuts.values().all(Vec::is_empty) {
        let n = m.tensors.len();
        return (m, InputTensors::new(Vec::new(), n));
    }
    let mut first_piece = IdMap::with_len(m.tensors.len(), 0);
    let mut tensors = Vec::new();
    let mut input = Vec::new();
    for ((i, t), c) in m.tensors.iter().zip(cuts.values()) {
        first_piece[i] = tensors.len();
        input.extend(std::iter::repeat_n(i, c.len() + 1));
        if c.is_empty() {
            tensors.push(t.clone());
            continue;
        }
        for piece in 0..=c.len() {
            tensors.push(Tensor {
                name: format!("{}.{piece}", t.name),
                ..t.clone()
            });
        }
    }
    m.tensors = IdVec::from(tensors);
    for (i, inst) in m.insts.values_mut().enumerate() {
        let point = lin.point_of(InstId::new(i));
        let rename = |t: &mut TensorId| {
            let c = &cuts[*t];
            let piece = point.map_or(0, |p| c.iter().filter(|&&x| x <= p).count());
            *t = TensorId::new(first_piece[*t] + piece);
        };
        rename(&mut inst.kind.dst_mut().tensor);
        inst.kind.for_each_src_mut(|a| rename(&mut a.tensor));
    }
    let split = m.tensors.len();
    (m, InputTensors::new(input, split))
}

/// The points of tensor `id` (accesses `acc`) before which a new piece starts.
fn cut_points(
    m: &Module,
    lin: &Linear,
    id: TensorId,
    acc: &[Access],
    last_value: &IdMap<VarId, i64>,
) -> Vec<u32> {
    let t = m.tensor(id);
    let whole = ir::Access::whole(id, t).region(|_| 0);
    let mut cuts = Vec::new();
    let mut read = false;
    for (k, a) in acc.iter().enumerate() {
        let kind = &m.inst(a.inst).kind;
        let overwrites = kind.as_matmul().is_none() || starts_run(m, &acc[..k], whole, last_value);
        if read
            && a.write
            && !a.read
            && lin.nest(a.point).is_empty()
            && kind.dst().is_whole(t)
            && overwrites
        {
            cuts.push(a.point);
            read = false;
        }
        read |= a.read;
    }
    cuts
}

/// Whether a matmul writing the whole tensor after the accesses `before`
/// starts an accumulation run: unless the access right before it writes
/// the tensor, as a matmul of the same whole region (the run goes on) or
/// as a non-matmul write covering it (an init), with the loop variables
/// at their last values.
fn starts_run(
    m: &Module,
    before: &[Access],
    whole: Region,
    last_value: &IdMap<VarId, i64>,
) -> bool {
    let Some(prev) = before.last().filter(|a| a.write) else {
        return true;
    };
    let kind = &m.inst(prev.inst).kind;
    let region = kind.dst().region(|v| last_value[v]);
    match kind.as_matmul() {
        Some(_) => region != whole,
        None => !region.contains(&whole),
    }
}
