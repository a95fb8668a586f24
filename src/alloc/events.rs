//! The PSUM accesses of a program (SPEC §3.3): the access table of each
//! instruction's PSUM reads and writes, and the events of each PSUM
//! tensor in point order, kept by instruction so that they stay true when
//! spill code renumbers the points ([`Events::update`]). The memloc split
//! cuts tensors on them and liveness reads its live ranges from them.

use super::linear::{Linear, PointKind};
use super::spill::SpillShift;
use crate::entity::IdMap;
use crate::ir::{InstId, InstKind, Mem, Module, TensorId};

/// One instruction's access to a PSUM tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Event {
    /// The instruction's point.
    pub point: u32,
    /// The instruction.
    pub inst: InstId,
    /// It reads the tensor.
    pub read: bool,
    /// It writes the tensor.
    pub write: bool,
}

/// One instruction's access to one PSUM tensor, as the access table keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PsumAccess {
    tensor: TensorId,
    read: bool,
    write: bool,
}

/// The PSUM tensors each instruction reads and writes (by [`InstId`]), one
/// entry per tensor: the instructions boiled down to what liveness needs
/// when the events are collected afresh.
#[derive(Clone, Debug, Default)]
pub(crate) struct AccessTable {
    offsets: Vec<u32>,
    entries: Vec<PsumAccess>,
}

impl AccessTable {
    /// The table of every instruction of `m`, row `i` for [`InstId`] `i`.
    pub(crate) fn new(m: &Module) -> AccessTable {
        let is_psum: IdMap<TensorId, bool> =
            m.tensors.values().map(|t| t.mem == Mem::Psum).collect();
        let mut table = AccessTable {
            offsets: Vec::with_capacity(m.insts.len() + 1),
            entries: Vec::with_capacity(m.insts.len() * 2),
        };
        table.offsets.push(0);
        for inst in &m.insts {
            table.push(&inst.kind, &is_psum);
        }
        table
    }

    /// Appends the entries of the next instruction (sources in operand
    /// order, then the destination; a tensor met again is merged), of the
    /// tensors `psum` flags.
    fn push(&mut self, kind: &InstKind, psum: &IdMap<TensorId, bool>) {
        let first = self.entries.len();
        let mut note = |t: TensorId, read: bool, write: bool| {
            if !psum[t] {
                return;
            }
            match self.entries[first..].iter_mut().find(|e| e.tensor == t) {
                Some(e) => {
                    e.read |= read;
                    e.write |= write;
                }
                None => self.entries.push(PsumAccess {
                    tensor: t,
                    read,
                    write,
                }),
            }
        };
        kind.for_each_src(|s| note(s.tensor, true, false));
        note(kind.dst().tensor, false, true);
        self.offsets.push(self.entries.len() as u32);
    }

    /// The entries of row `k`.
    fn row(&self, k: usize) -> &[PsumAccess] {
        &self.entries[self.offsets[k] as usize..self.offsets[k + 1] as usize]
    }
}

/// How [`Events`] keeps one access: the instruction, not its point, so
/// that the record stays true when spill code renumbers the points. Packed
/// in 32 bits (a large program has tens of millions): the instruction's
/// index below [`Touch::READ`], then the read and write bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Touch(u32);

impl Touch {
    /// The read bit; instruction indices are below it.
    const READ: u32 = 1 << 30;
    /// The write bit.
    const WRITE: u32 = 1 << 31;

    fn new(inst: InstId, read: bool, write: bool) -> Touch {
        assert!(
            inst.0 < Touch::READ,
            "instruction {inst} is beyond the 2^30 that liveness records"
        );
        let bit = |on: bool, b: u32| if on { b } else { 0 };
        Touch(inst.0 | bit(read, Touch::READ) | bit(write, Touch::WRITE))
    }

    fn inst(self) -> InstId {
        InstId(self.0 & (Touch::READ - 1))
    }

    fn read(self) -> bool {
        self.0 & Touch::READ != 0
    }

    fn write(self) -> bool {
        self.0 & Touch::WRITE != 0
    }
}

/// The accesses of every PSUM tensor, in point order: one flat vector of
/// per-instruction records, a span of it per tensor. Points are looked up
/// in the current [`Linear`] when read ([`Events::of`]), so after spill
/// code only the tensors it touched need new spans ([`Events::update`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct Events {
    spans: IdMap<TensorId, (u32, u32)>,
    touches: Vec<Touch>,
}

impl Events {
    /// Collects the PSUM accesses of the reachable instructions of `m`.
    pub(crate) fn new(m: &Module, lin: &Linear) -> Events {
        Events::from_table(&AccessTable::new(m), m.tensors.len(), lin)
    }

    /// Collects the accesses of `table`'s reachable instructions (`tensors`
    /// tensors) in point order: one pass over the points to count per
    /// tensor, one to place (a counting sort, so each span comes out sorted).
    pub(crate) fn from_table(table: &AccessTable, tensors: usize, lin: &Linear) -> Events {
        let rows = lin.points.iter().filter_map(|p| match p.kind() {
            PointKind::Inst(i) => Some((i, table.row(i.index()))),
            _ => None,
        });
        let mut spans = IdMap::with_len(tensors, (0, 0));
        let mut counted = 0;
        for (_, row) in rows.clone() {
            for e in row {
                spans[e.tensor].1 += 1;
                counted += 1;
            }
        }
        let mut at = 0;
        for span in spans.values_mut() {
            let n = span.1;
            *span = (at, at);
            at += n;
        }
        let mut touches = vec![Touch(0); counted];
        for (i, row) in rows {
            for e in row {
                let end = &mut spans[e.tensor].1;
                touches[*end as usize] = Touch::new(i, e.read, e.write);
                *end += 1;
            }
        }
        Events { spans, touches }
    }

    /// The events after the spill code `shift` describes, from those
    /// before it (the same as [`Events::new`] on the module
    /// with the code, of `tensors` tensors). The code renames reads of the
    /// spilled tensors only and adds copies that touch only spilled and new
    /// tensors, so every other tensor keeps its events. A spilled tensor
    /// keeps its events up to its last write, is then read by its save and
    /// keeps the reads before its first reload; a reload temporary is
    /// written by its copy and read by the groups it serves.
    /// Both get new spans at the end of the records, which the spill code
    /// describes without a look at the instructions.
    pub(crate) fn update(&mut self, tensors: usize, shift: &SpillShift) {
        self.spans.resize(tensors, (0, 0));
        let spilled = shift.spilled.iter().zip(&shift.saves).zip(&shift.kept);
        for ((&t, &save), &reads) in spilled {
            let at = self.touches.len() as u32;
            let (from, to) = self.spans[t];
            let (from, to) = (from as usize, to as usize);
            let kept = self.touches[from..to].iter().rposition(|x| x.write());
            let kept = kept.expect("a spilled tensor is written");
            self.touches.extend_from_within(from..=from + kept);
            self.touches.push(Touch::new(save, true, false));
            let reads = from + kept + 1..from + kept + 1 + reads as usize;
            self.touches.extend_from_within(reads);
            self.spans[t] = (at, self.touches.len() as u32);
        }
        for r in &shift.reloads {
            let at = self.touches.len() as u32;
            self.touches.push(Touch::new(r.copy, false, true));
            let reads = &shift.reads[r.reads.start as usize..r.reads.end as usize];
            (self.touches).extend(reads.iter().map(|&i| Touch::new(i, true, false)));
            self.spans[r.tensor] = (at, self.touches.len() as u32);
        }
    }

    /// The accesses of tensor `t`, in point order, with their points in `lin`.
    pub(crate) fn of<'a>(
        &'a self,
        t: TensorId,
        lin: &'a Linear,
    ) -> impl DoubleEndedIterator<Item = Event> + ExactSizeIterator + Clone + 'a {
        let (a, b) = self.spans[t];
        self.touches[a as usize..b as usize].iter().map(|&x| Event {
            point: lin
                .point_of(x.inst())
                .expect("events are of reachable instructions"),
            inst: x.inst(),
            read: x.read(),
            write: x.write(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A touch gives back its instruction and both bits, at the largest
    /// instruction it can hold too.
    #[test]
    fn touch_packs_instruction_and_bits() {
        for inst in [InstId(0), InstId(7), InstId(Touch::READ - 1)] {
            for (read, write) in [(false, false), (true, false), (false, true), (true, true)] {
                let t = Touch::new(inst, read, write);
                assert_eq!((t.inst(), t.read(), t.write()), (inst, read, write));
            }
        }
        assert_eq!(std::mem::size_of::<Touch>(), 4);
    }
}
