//! Where each tensor's elements live during execution: in its own storage
//! (virtual mode, SPEC §2.4, and every SBUF/DRAM tensor), or in the physical
//! PSUM of the arch at `bank·2048 + offset` (SPEC §4.4).

use super::rects::Rect;
use crate::arch::{Arch, PSUM_BANK_SIZE};
use crate::entity::IdMap;
use crate::ir::{Mem, Module, Region, Tensor, TensorId};
use thiserror::Error;

/// A PSUM tensor that cannot be placed in physical PSUM.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum PlaceError {
    /// No `bank=` on a PSUM tensor of an allocated program.
    #[error("PSUM tensor {tensor} has no bank")]
    NoBank {
        /// The tensor.
        tensor: String,
    },
    /// The tensor's banks run past the last bank.
    #[error(
        "PSUM tensor {tensor} at bank {bank} needs {banks} bank(s) but {arch} has {num_banks}"
    )]
    BankOutOfRange {
        /// The tensor.
        tensor: String,
        /// Its base bank.
        bank: u32,
        /// Banks it occupies.
        banks: u32,
        /// The arch codename.
        arch: String,
        /// Banks the arch has.
        num_banks: u32,
    },
    /// More partitions than PSUM has.
    #[error("PSUM tensor {tensor} has {partitions} partitions but PSUM has {part_size}")]
    TooManyPartitions {
        /// The tensor.
        tensor: String,
        /// Its partitions.
        partitions: u32,
        /// PSUM partitions of the arch.
        part_size: u32,
    },
}

#[derive(Clone, Copy)]
enum Place {
    Own,
    Psum { base: u32 },
}

/// Which buffer holds a tensor's storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Buf {
    /// The tensor's own row-major buffer.
    Own(TensorId),
    /// Physical PSUM.
    Psum,
}

/// The cells of one execution: a buffer per tensor that has its own
/// storage, and physical PSUM (SPEC §4.4). The simulator stores values, the
/// checker symbols.
pub(crate) struct Store<T> {
    /// Per tensor, its own row-major buffer (empty for tensors placed in PSUM).
    pub own: IdMap<TensorId, Vec<T>>,
    /// Physical PSUM cells.
    pub psum: Vec<T>,
}

impl<T> Store<T> {
    /// The buffer `b`.
    pub(crate) fn buf(&self, b: Buf) -> &[T] {
        match b {
            Buf::Own(t) => &self.own[t],
            Buf::Psum => &self.psum,
        }
    }

    /// The buffer `b`, mutably.
    pub(crate) fn buf_mut(&mut self, b: Buf) -> &mut [T] {
        match b {
            Buf::Own(t) => &mut self.own[t],
            Buf::Psum => &mut self.psum,
        }
    }
}

/// The cells of a region in a buffer, row by row: row `i` (partition
/// `p0 + i`) holds `len` cells `stride` apart from `first + i·pitch`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    /// The buffer.
    pub buf: Buf,
    /// First cell of the first row.
    pub first: usize,
    /// Distance between the first cells of consecutive rows.
    pub pitch: usize,
    /// Distance between consecutive cells of a row.
    pub stride: usize,
    /// Number of rows (partitions).
    pub rows: usize,
    /// Cells per row (elements).
    pub len: usize,
}

impl Span {
    /// Element indices `p·elems + e` of region `r` (fitting `t`) in `t`'s own buffer.
    pub(crate) fn elements(id: TensorId, t: &Tensor, r: &Region) -> Span {
        let ds = i64::from(t.dtype.size());
        let elems = t.elems() as usize;
        Span {
            buf: Buf::Own(id),
            first: r.p0 as usize * elems + (r.b0 / ds) as usize,
            pitch: elems,
            stride: 1,
            rows: (r.p1 - r.p0) as usize,
            len: ((r.b1 - r.b0) / ds) as usize,
        }
    }

    /// Number of cells.
    pub(crate) fn count(&self) -> usize {
        self.rows * self.len
    }

    /// The cell of element `j` of row `i`.
    pub(crate) fn cell(&self, i: usize, j: usize) -> usize {
        self.first + i * self.pitch + j * self.stride
    }

    /// Calls `f(i, row)` for every row `i`, the row's cells of `buf` as a
    /// slice (strided rows are gathered into a copy).
    pub(crate) fn read_rows<T: Copy>(&self, buf: &[T], mut f: impl FnMut(usize, &[T])) {
        let mut tmp = Vec::new();
        for i in (0..self.rows).filter(|_| self.len > 0) {
            let s = self.cell(i, 0);
            if self.stride == 1 {
                f(i, &buf[s..s + self.len]);
            } else {
                tmp.clear();
                tmp.extend((0..self.len).map(|j| buf[s + j * self.stride]));
                f(i, &tmp);
            }
        }
    }

    /// Calls `f(i, row)` for every row `i`, the row's cells of `buf` as a
    /// mutable slice (strided rows go through a copy written back after `f`).
    pub(crate) fn write_rows<T: Copy>(&self, buf: &mut [T], mut f: impl FnMut(usize, &mut [T])) {
        let mut tmp = Vec::new();
        for i in (0..self.rows).filter(|_| self.len > 0) {
            let s = self.cell(i, 0);
            if self.stride == 1 {
                f(i, &mut buf[s..s + self.len]);
            } else {
                tmp.clear();
                tmp.extend((0..self.len).map(|j| buf[s + j * self.stride]));
                f(i, &mut tmp);
                for (j, &v) in tmp.iter().enumerate() {
                    buf[s + j * self.stride] = v;
                }
            }
        }
    }
}

/// The placement of every tensor of one module.
pub(crate) struct Layout {
    places: IdMap<TensorId, Place>,
    dsize: IdMap<TensorId, u32>,
    /// Byte granularity of a physical PSUM cell.
    pub gran: u32,
    /// Physical PSUM cells per partition.
    pub cells_per_part: usize,
    /// PSUM partitions.
    pub part_size: u32,
}

impl Layout {
    /// Every tensor in its own storage (SPEC §2.4).
    pub(crate) fn virtual_(m: &Module) -> Self {
        Layout {
            places: IdMap::with_len(m.tensors.len(), Place::Own),
            dsize: m.tensors.values().map(|t| t.dtype.size()).collect(),
            gran: 4,
            cells_per_part: 0,
            part_size: 0,
        }
    }

    /// PSUM tensors at their banks in physical PSUM (SPEC §4.4); a PSUM
    /// tensor no instruction accesses may have no bank, and then has storage
    /// of its own that nothing touches.
    pub(crate) fn physical(m: &Module, arch: &Arch) -> Result<Self, PlaceError> {
        let num_banks = arch.num_banks();
        let part_size = arch.psum().part_size;
        let mut gran = 4;
        let mut places = Vec::with_capacity(m.tensors.len());
        let used = m.accessed_tensors();
        for (t, used) in m.tensors.values().zip(used) {
            // An unused PSUM tensor needs no bank (SPEC §3.3); one it has must fit.
            if t.mem != Mem::Psum || (!used && t.bank.is_none()) {
                places.push(Place::Own);
                continue;
            }
            let bank = t.bank.ok_or_else(|| PlaceError::NoBank {
                tensor: t.name.clone(),
            })?;
            let banks = arch.aligned_bank_num(arch.bank_num(u64::from(t.bytes)));
            if u64::from(bank) + u64::from(banks) > u64::from(num_banks) {
                return Err(PlaceError::BankOutOfRange {
                    tensor: t.name.clone(),
                    bank,
                    banks,
                    arch: m.arch.clone(),
                    num_banks,
                });
            }
            if t.partitions > part_size {
                return Err(PlaceError::TooManyPartitions {
                    tensor: t.name.clone(),
                    partitions: t.partitions,
                    part_size,
                });
            }
            gran = gran.min(t.dtype.size());
            places.push(Place::Psum {
                base: bank * PSUM_BANK_SIZE,
            });
        }
        Ok(Layout {
            places: places.into_iter().collect(),
            dsize: m.tensors.values().map(|t| t.dtype.size()).collect(),
            gran,
            cells_per_part: (num_banks * PSUM_BANK_SIZE / gran) as usize,
            part_size,
        })
    }

    /// Number of physical PSUM cells (0 in virtual mode).
    pub(crate) fn psum_cells(&self) -> usize {
        self.cells_per_part * self.part_size as usize
    }

    /// Whether tensor `t` lives in physical PSUM.
    pub(crate) fn in_psum(&self, t: TensorId) -> bool {
        matches!(self.places[t], Place::Psum { .. })
    }

    /// The storage cells of region `r` (fitting `t`) of tensor `t`.
    pub(crate) fn span(&self, m: &Module, t: TensorId, r: &Region) -> Span {
        let own = Span::elements(t, m.tensor(t), r);
        match self.places[t] {
            Place::Own => own,
            Place::Psum { base } => {
                let e0 = (r.b0 / i64::from(self.dsize[t])) as u32;
                Span {
                    buf: Buf::Psum,
                    first: r.p0 as usize * self.cells_per_part
                        + ((base + e0 * self.dsize[t]) / self.gran) as usize,
                    pitch: self.cells_per_part,
                    stride: (self.dsize[t] / self.gran) as usize,
                    ..own
                }
            }
        }
    }

    /// The physical byte offset in its partition (including the bank) of element `e` of `t`.
    pub(crate) fn psum_byte(&self, t: TensorId, e: u32) -> Option<u32> {
        match self.places[t] {
            Place::Own => None,
            Place::Psum { base } => Some(base + e * self.dsize[t]),
        }
    }

    /// Physical PSUM cells of the partitions of `r` × every bank touched by
    /// the bytes of `r` in `t` — what a `start` zeroes (SPEC §4.4); `None`
    /// when `t` is not in PSUM or `r` has no bytes.
    pub(crate) fn start_span(&self, t: TensorId, r: &Region) -> Option<Span> {
        let z = self.start_rect(t, r)?;
        let (lo, hi) = ((z.x0 / self.gran) as usize, (z.x1 / self.gran) as usize);
        Some(Span {
            buf: Buf::Psum,
            first: r.p0 as usize * self.cells_per_part + lo,
            pitch: self.cells_per_part,
            stride: 1,
            rows: (r.p1 - r.p0) as usize,
            len: hi - lo,
        })
    }

    /// Bytes per partition of physical PSUM (0 in virtual mode).
    pub(crate) fn psum_bytes(&self) -> u32 {
        self.cells_per_part as u32 * self.gran
    }

    /// The buffer holding `t` and the byte of it where `t`'s bytes begin.
    pub(crate) fn place(&self, t: TensorId) -> (Buf, u32) {
        match self.places[t] {
            Place::Own => (Buf::Own(t), 0),
            Place::Psum { base } => (Buf::Psum, base),
        }
    }

    /// The buffer and the byte rectangle of region `r` (fitting `t`) of `t`.
    pub(crate) fn rect(&self, t: TensorId, r: &Region) -> (Buf, Rect) {
        let (buf, base) = self.place(t);
        let rect = Rect::new(
            r.p0 as u32,
            r.p1 as u32,
            base + r.b0 as u32,
            base + r.b1 as u32,
        );
        (buf, rect)
    }

    /// The byte rectangle of physical PSUM a `start` on region `r` of `t`
    /// zeroes: `r`'s partitions × every bank its bytes touch (SPEC §4.4);
    /// `None` when `t` is not in PSUM or `r` has no bytes.
    pub(crate) fn start_rect(&self, t: TensorId, r: &Region) -> Option<Rect> {
        let Place::Psum { base } = self.places[t] else {
            return None;
        };
        let (b0, b1) = (r.b0 as u32, r.b1 as u32);
        if b1 <= b0 {
            return None;
        }
        let lo = (base + b0) / PSUM_BANK_SIZE * PSUM_BANK_SIZE;
        let hi = ((base + b1 - 1) / PSUM_BANK_SIZE + 1) * PSUM_BANK_SIZE;
        Some(Rect::new(r.p0 as u32, r.p1 as u32, lo, hi))
    }
}
