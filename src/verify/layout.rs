//! Where each tensor's elements live during execution: in its own storage
//! (virtual mode, SPEC §2.4, and every SBUF/DRAM tensor), or in the physical
//! PSUM of the arch at `bank·2048 + offset` (SPEC §4.4).

use crate::arch::{Arch, PSUM_BANK_SIZE};
use crate::ir::{Mem, Module, TensorId};
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

/// A storage slot: an element of a tensor's own buffer, or a physical PSUM cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Slot {
    /// Element `idx` (row-major) of the tensor's own buffer.
    Own(TensorId, usize),
    /// Physical PSUM cell `idx` (`partition · cells_per_part + byte / gran`).
    Psum(usize),
}

/// The placement of every tensor of one module.
pub(crate) struct Layout {
    places: Vec<Place>,
    elems: Vec<u32>,
    dsize: Vec<u32>,
    /// Byte granularity of a physical PSUM cell.
    pub gran: u32,
    /// Physical PSUM cells per partition.
    pub cells_per_part: usize,
    /// PSUM partitions.
    pub part_size: u32,
}

impl Layout {
    /// Every tensor in its own storage (SPEC §2.4).
    pub fn virtual_(m: &Module) -> Self {
        Layout {
            places: vec![Place::Own; m.tensors.len()],
            elems: m.tensors.iter().map(|t| t.elems()).collect(),
            dsize: m.tensors.iter().map(|t| t.dtype.size()).collect(),
            gran: 4,
            cells_per_part: 0,
            part_size: 0,
        }
    }

    /// PSUM tensors at their banks in physical PSUM (SPEC §4.4).
    pub fn physical(m: &Module, arch: &Arch) -> Result<Self, PlaceError> {
        let num_banks = arch.num_banks();
        let part_size = arch.psum().part_size;
        let mut gran = 4;
        let mut places = Vec::with_capacity(m.tensors.len());
        for t in &m.tensors {
            if t.mem != Mem::Psum {
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
            places,
            elems: m.tensors.iter().map(|t| t.elems()).collect(),
            dsize: m.tensors.iter().map(|t| t.dtype.size()).collect(),
            gran,
            cells_per_part: (num_banks * PSUM_BANK_SIZE / gran) as usize,
            part_size,
        })
    }

    /// Number of physical PSUM cells (0 in virtual mode).
    pub fn psum_cells(&self) -> usize {
        self.cells_per_part * self.part_size as usize
    }

    /// Whether tensor `t` lives in physical PSUM.
    pub fn in_psum(&self, t: TensorId) -> bool {
        matches!(self.places[t.index()], Place::Psum { .. })
    }

    /// The slot of element `(p, e)` of tensor `t`.
    pub fn slot(&self, t: TensorId, p: u32, e: u32) -> Slot {
        let i = t.index();
        match self.places[i] {
            Place::Own => Slot::Own(t, (p * self.elems[i] + e) as usize),
            Place::Psum { base } => Slot::Psum(
                p as usize * self.cells_per_part
                    + ((base + e * self.dsize[i]) / self.gran) as usize,
            ),
        }
    }

    /// The physical byte offset in its partition (including the bank) of element `e` of `t`.
    pub fn psum_byte(&self, t: TensorId, e: u32) -> Option<u32> {
        match self.places[t.index()] {
            Place::Own => None,
            Place::Psum { base } => Some(base + e * self.dsize[t.index()]),
        }
    }

    /// Physical PSUM cells of partitions `[p0, p1)` × every bank touched by
    /// tensor bytes `[b0, b1)` of `t` — what a `start` zeroes (SPEC §4.4).
    pub fn start_cells(&self, t: TensorId, p0: u32, p1: u32, b0: u32, b1: u32) -> Vec<usize> {
        let Place::Psum { base } = self.places[t.index()] else {
            return Vec::new();
        };
        if b1 <= b0 {
            return Vec::new();
        }
        let lo = (base + b0) / PSUM_BANK_SIZE * PSUM_BANK_SIZE / self.gran;
        let hi = ((base + b1 - 1) / PSUM_BANK_SIZE + 1) * PSUM_BANK_SIZE / self.gran;
        (p0..p1)
            .flat_map(|p| {
                let row = p as usize * self.cells_per_part;
                (lo as usize..hi as usize).map(move |c| row + c)
            })
            .collect()
    }

    /// `(partition, bank, byte within bank)` of a physical cell.
    pub fn describe_cell(&self, cell: usize) -> (u32, u32, u32) {
        let p = (cell / self.cells_per_part) as u32;
        let byte = (cell % self.cells_per_part) as u32 * self.gran;
        (p, byte / PSUM_BANK_SIZE, byte % PSUM_BANK_SIZE)
    }
}
