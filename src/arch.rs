//! Hardware geometry (SPEC §1, seed 003 "SBUF / PSUM Bank Geometry").
//!
//! [`lookup`] maps the ten codenames the reference's `getArchModel` accepts to
//! one of four static [`Board`] records (Board → Device → Core, as in the
//! reference's `ctm.hpp` object tree). The derived bank arithmetic used by the
//! allocator and the matmul passes lives here too: [`Arch::bank_num`],
//! [`bank_alignment`], [`Arch::aligned_bank_num`] and [`zero_region_bank_range`].

use serde::Serialize;
use std::fmt;

/// The PSUM bank size in bytes per partition (`getPsumBankSize`), the same on every generation.
pub(crate) const PSUM_BANK_SIZE: u32 = 2048;

/// Default cycles per bank moved by one spill/reload TensorCopy (SPEC §1 **\[decision\]**).
pub(crate) const DEFAULT_SPILL_LATENCY: u64 = 64;

/// The ten accepted codenames, in table order (ties in "did you mean" go to the first).
pub const CODENAMES: [&str; 10] = [
    "tonga",
    "inf1",
    "inferentia",
    "sunda",
    "trainium",
    "trn1",
    "inf2",
    "cayman",
    "gen3",
    "core_v4",
];

/// Hardware generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Generation {
    /// Inferentia (ArchLevel 10).
    Gen1,
    /// Trainium (ArchLevel 20).
    Gen2,
    /// Gen3 (ArchLevel 30).
    Gen3,
    /// Gen4 (ArchLevel 40).
    Gen4,
}

impl Generation {
    /// All generations in order.
    pub const ALL: [Generation; 4] = [
        Generation::Gen1,
        Generation::Gen2,
        Generation::Gen3,
        Generation::Gen4,
    ];

    /// The reference's ArchLevel number.
    pub(crate) fn arch_level(self) -> u32 {
        match self {
            Generation::Gen1 => 10,
            Generation::Gen2 => 20,
            Generation::Gen3 => 30,
            Generation::Gen4 => 40,
        }
    }

    /// Human name of the generation.
    pub(crate) fn title(self) -> &'static str {
        match self {
            Generation::Gen1 => "gen1 (Inferentia)",
            Generation::Gen2 => "gen2 (Trainium)",
            Generation::Gen3 => "gen3",
            Generation::Gen4 => "gen4",
        }
    }

    /// The codenames that map to this generation, in table order.
    pub fn codenames(self) -> &'static [&'static str] {
        match self {
            Generation::Gen1 => &CODENAMES[0..3],
            Generation::Gen2 => &CODENAMES[3..7],
            Generation::Gen3 => &CODENAMES[7..9],
            Generation::Gen4 => &CODENAMES[9..10],
        }
    }
}

impl fmt::Display for Generation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.title())
    }
}

/// SBUF geometry record (`class Statebuf` in `ctm.hpp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Statebuf {
    /// Bytes per partition ("SB_SIZE").
    pub partition_size: u32,
    /// Number of partitions (128 on every generation).
    pub num_partitions: u32,
    /// Partition-quadrant midpoint.
    pub mid_partition: u32,
    /// Reserved bytes per partition.
    pub reserved_size: u32,
}

impl Statebuf {
    /// Total SBUF bytes (`partitionSize × numPartitions`).
    pub fn total_bytes(&self) -> u64 {
        u64::from(self.partition_size) * u64::from(self.num_partitions)
    }
}

/// PSUM geometry record (`class Psumbuf` in `ctm.hpp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Psumbuf {
    /// Number of 2 KiB banks.
    pub num_banks: u32,
    /// Number of PSUM partitions.
    pub part_size: u32,
    /// Bytes per partition per bank.
    pub bank_size: u32,
}

impl Psumbuf {
    /// PSUM bytes per partition (`numBanks × bankSize`).
    pub fn bytes_per_partition(&self) -> u32 {
        self.num_banks * self.bank_size
    }
}

/// PE array geometry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Pe {
    /// PE rows (the contraction dimension K).
    pub rows: u32,
    /// PE columns (the stationary free dimension M).
    pub cols: u32,
}

/// A compute engine record other than PE (`Pool`, `Act`, `Dve`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Engine {
    /// Partitions the engine processes at once (64 on gen1, 128 otherwise).
    pub partitions: u32,
}

/// One NeuronCore: its engines and the two memory records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Core {
    /// The PE (matmul) array.
    pub pe: Pe,
    /// Pool engine.
    pub pool: Engine,
    /// Activation engine.
    pub act: Engine,
    /// Vector engine.
    pub dve: Engine,
    /// PSUM geometry.
    pub psumbuf: Psumbuf,
    /// SBUF geometry.
    pub statebuf: Statebuf,
}

/// A device: one core in this model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Device {
    /// The core.
    pub core: Core,
}

/// A board: the root of the reference's geometry tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Board {
    /// The device.
    pub device: Device,
}

/// A resolved architecture: the codename as given, its generation and board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Arch {
    /// The codename that was looked up.
    pub codename: &'static str,
    /// Its generation.
    pub generation: Generation,
    /// The geometry tree.
    pub board: Board,
}

/// Why a codename was rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ArchError {
    /// Not one of the ten codenames.
    #[error("unknown architecture '{name}' (known: {known}){}", hint_text(.hint))]
    Unknown {
        /// What was asked for.
        name: String,
        /// The ten names, comma-separated.
        known: String,
        /// A suggestion, if any.
        hint: Option<String>,
    },
}

fn hint_text(hint: &Option<String>) -> String {
    hint.as_ref().map(|h| format!("; {h}")).unwrap_or_default()
}

/// Looks up a codename (exact, case-sensitive) and returns its architecture.
pub fn lookup(codename: &str) -> Result<Arch, ArchError> {
    let idx = CODENAMES
        .iter()
        .position(|&c| c == codename)
        .ok_or_else(|| unknown(codename))?;
    let generation = match idx {
        0..=2 => Generation::Gen1,
        3..=6 => Generation::Gen2,
        7..=8 => Generation::Gen3,
        _ => Generation::Gen4,
    };
    Ok(Arch {
        codename: CODENAMES[idx],
        generation,
        board: board(generation),
    })
}

fn unknown(name: &str) -> ArchError {
    let hint = if name == "core_v5" {
        Some(
            "0 && Unknown architecture: core_v5 is gen5 (ArchLevel 50), which has no board in this model"
                .to_string(),
        )
    } else {
        suggestion(name).map(|s| format!("did you mean '{s}'?"))
    };
    ArchError::Unknown {
        name: name.to_string(),
        known: CODENAMES.join(", "),
        hint,
    }
}

/// The "did you mean" codename for an unknown name: a well-known product name
/// first (`trn2` → `cayman`, `trn3` → `core_v4`), else the closest codename
/// within edit distance 2 (ties: the first in table order).
pub(crate) fn suggestion(name: &str) -> Option<&'static str> {
    match name {
        "trn2" => return Some("cayman"),
        "trn3" => return Some("core_v4"),
        _ => {}
    }
    let mut best: Option<(usize, &'static str)> = None;
    for &c in &CODENAMES {
        let d = edit_distance(name, c);
        if d <= 2 && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The static board for a generation (the immediates of seed 003).
pub(crate) fn board(g: Generation) -> Board {
    let (sb_size, banks, psum_parts, pe_cols, engine_parts) = match g {
        Generation::Gen1 => (98304, 4, 64, 64, 64),
        Generation::Gen2 => (196608, 8, 128, 128, 128),
        Generation::Gen3 => (229376, 8, 128, 128, 128),
        Generation::Gen4 => (262144, 8, 128, 128, 128),
    };
    let engine = Engine {
        partitions: engine_parts,
    };
    Board {
        device: Device {
            core: Core {
                pe: Pe {
                    rows: 128,
                    cols: pe_cols,
                },
                pool: engine,
                act: engine,
                dve: engine,
                psumbuf: Psumbuf {
                    num_banks: banks,
                    part_size: psum_parts,
                    bank_size: PSUM_BANK_SIZE,
                },
                statebuf: Statebuf {
                    partition_size: sb_size,
                    num_partitions: 128,
                    mid_partition: 64,
                    reserved_size: 16384,
                },
            },
        },
    }
}

/// `bank_alignment(banks)`: 1 for ≤ 1 bank, else the next power of two
/// (SPEC §1 **\[decision\]**).
pub fn bank_alignment(banks: u32) -> u32 {
    if banks <= 1 {
        1
    } else {
        banks.next_power_of_two()
    }
}

/// The aligned blocks of `size` banks (a power of two) that a tensor of
/// `banks` banks keeps from every other tensor of more than half a block:
/// `⌈banks / size⌉`, or 0 when it has at most half a block. Such a tensor
/// is aligned to at least `size` ([`bank_alignment`]), so it starts where
/// a block starts; `⌈numBanks / size⌉` blocks hold all of them at a point.
pub(crate) fn aligned_blocks(banks: u32, size: u32) -> u32 {
    if 2 * banks > size {
        banks.div_ceil(size)
    } else {
        0
    }
}

/// The sizes `1, 2, 4, …` up to `num_banks` rounded up to a power of two:
/// banks, then each block size that [`aligned_blocks`] counts in.
pub(crate) fn block_sizes(num_banks: u32) -> impl Iterator<Item = u32> {
    let last = num_banks.next_power_of_two();
    std::iter::successors(Some(1u32), |&s| Some(2 * s)).take_while(move |&s| s <= last)
}

/// Seed 004's `zero_region_bank_range(lo, hi)`: the smallest aligned window of
/// 1, 2, 4 or 8 banks containing `[lo, hi]`; `None` when 16 would be needed.
#[allow(clippy::int_plus_one)] // the seed's comparison, kept verbatim
pub fn zero_region_bank_range(lo: u32, hi: u32) -> Option<(u32, u32)> {
    (0..4).find_map(|k| {
        let win = 1u32 << k;
        let a = lo - lo % win;
        (a + win - 1 >= hi).then_some((a, a + win - 1))
    })
}

impl Arch {
    /// The core record.
    pub fn core(&self) -> &Core {
        &self.board.device.core
    }
    /// PSUM geometry.
    pub(crate) fn psum(&self) -> &Psumbuf {
        &self.board.device.core.psumbuf
    }
    /// SBUF geometry.
    pub(crate) fn sbuf(&self) -> &Statebuf {
        &self.board.device.core.statebuf
    }
    /// PE geometry.
    pub(crate) fn pe(&self) -> &Pe {
        &self.board.device.core.pe
    }
    /// The reference's ArchLevel (10, 20, 30, 40).
    pub(crate) fn arch_level(&self) -> u32 {
        self.generation.arch_level()
    }
    /// Number of PSUM banks.
    pub fn num_banks(&self) -> u32 {
        self.psum().num_banks
    }
    /// Largest matmul free size N (elements): 4096 on gen4 (all eight banks), else 512 (one bank).
    pub(crate) fn max_matmul_n(&self) -> u32 {
        if self.arch_level() >= 40 {
            4096
        } else {
            512
        }
    }
    /// `bank_num(bytes) = ceil(bytes / bankSize)` (`getPsumBankNum`); 0 bytes → 0 banks.
    pub fn bank_num(&self, bytes: u64) -> u32 {
        u32::try_from(bytes.div_ceil(u64::from(self.psum().bank_size))).unwrap_or(u32::MAX)
    }
    /// `getAlignedPsumBankNum`: `banks` up to ArchLevel 39, else rounded up to
    /// [`bank_alignment`].
    pub fn aligned_bank_num(&self, banks: u32) -> u32 {
        if self.arch_level() <= 39 {
            banks
        } else {
            let a = bank_alignment(banks);
            banks.div_ceil(a) * a
        }
    }
    /// Whether a plain matmul with this tile is column-tiled (SPEC §4.2): 128
    /// rows and `1 ≤ cols < PE cols`.
    pub fn is_column_tile(&self, rows: u32, cols: u32) -> bool {
        rows == 128 && cols >= 1 && cols < self.pe().cols
    }
}

/// Renders the geometry tree of one architecture as text (`psum arch NAME`).
pub fn describe(a: &Arch) -> String {
    let c = a.core();
    let sb = &c.statebuf;
    let ps = &c.psumbuf;
    let mut s = String::new();
    use std::fmt::Write as _;
    let _ = writeln!(
        s,
        "{} — {}, ArchLevel {}",
        a.codename,
        a.generation,
        a.arch_level()
    );
    let _ = writeln!(s, "Board");
    let _ = writeln!(s, "└─ Device");
    let _ = writeln!(s, "   └─ Core");
    let _ = writeln!(
        s,
        "      ├─ Pe        rows {} × cols {}",
        c.pe.rows, c.pe.cols
    );
    let _ = writeln!(s, "      ├─ Pool      partitions {}", c.pool.partitions);
    let _ = writeln!(s, "      ├─ Act       partitions {}", c.act.partitions);
    let _ = writeln!(s, "      ├─ Dve       partitions {}", c.dve.partitions);
    let _ = writeln!(
        s,
        "      ├─ Psumbuf   numBanks {}, partSize {}, bankSize {} ({} KiB per partition)",
        ps.num_banks,
        ps.part_size,
        ps.bank_size,
        ps.bytes_per_partition() / 1024
    );
    let _ = writeln!(
        s,
        "      └─ Statebuf  partitionSize {}, numPartitions {}, midPartition {}, reservedSize {} ({} MiB total)",
        sb.partition_size,
        sb.num_partitions,
        sb.mid_partition,
        sb.reserved_size,
        sb.total_bytes() >> 20
    );
    s
}

/// Renders the list of generations and codenames (`psum arch`).
pub fn describe_all() -> String {
    let mut s = String::new();
    for g in Generation::ALL {
        let b = board(g);
        let c = &b.device.core;
        s.push_str(&format!(
            "{:<18} ArchLevel {}  codenames: {:<30} PSUM {} banks × {} partitions, PE {}×{}, SBUF {} MiB\n",
            g.title(),
            g.arch_level(),
            g.codenames().join(", "),
            c.psumbuf.num_banks,
            c.psumbuf.part_size,
            c.pe.rows,
            c.pe.cols,
            c.statebuf.total_bytes() >> 20
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ten_codenames_four_generations() {
        let gens: Vec<_> = CODENAMES
            .iter()
            .map(|c| lookup(c).unwrap().arch_level())
            .collect();
        assert_eq!(gens, [10, 10, 10, 20, 20, 20, 20, 30, 30, 40]);
    }

    #[test]
    fn records_match_spec_table() {
        let t = |n| {
            let a = lookup(n).unwrap();
            (
                a.sbuf().partition_size,
                a.sbuf().num_partitions,
                a.sbuf().mid_partition,
                a.sbuf().reserved_size,
                a.psum().num_banks,
                a.psum().part_size,
                a.psum().bank_size,
                a.pe().rows,
                a.pe().cols,
            )
        };
        assert_eq!(t("inf1"), (98304, 128, 64, 16384, 4, 64, 2048, 128, 64));
        assert_eq!(t("trn1"), (196608, 128, 64, 16384, 8, 128, 2048, 128, 128));
        assert_eq!(t("gen3"), (229376, 128, 64, 16384, 8, 128, 2048, 128, 128));
        assert_eq!(
            t("core_v4"),
            (262144, 128, 64, 16384, 8, 128, 2048, 128, 128)
        );
        let mib: Vec<u64> = Generation::ALL
            .iter()
            .map(|&g| board(g).device.core.statebuf.total_bytes() >> 20)
            .collect();
        assert_eq!(mib, [12, 24, 28, 32]);
        assert_eq!(lookup("tonga").unwrap().psum().bytes_per_partition(), 8192);
        assert_eq!(lookup("sunda").unwrap().psum().bytes_per_partition(), 16384);
        assert_eq!(lookup("inferentia").unwrap().core().act.partitions, 64);
    }

    #[test]
    fn unknown_names_and_hints() {
        let msg = |n: &str| lookup(n).unwrap_err().to_string();
        assert!(msg("trn2").contains("did you mean 'cayman'?"));
        assert!(msg("trn3").contains("did you mean 'core_v4'?"));
        assert!(msg("trn1x").contains("unknown architecture 'trn1x'"));
        assert!(msg("trn1x").contains("did you mean 'trn1'?"));
        assert!(msg("core_v5").contains("0 && Unknown architecture"));
        assert!(msg("core_v5").contains("no board"));
        assert!(msg("banana").contains(
            "tonga, inf1, inferentia, sunda, trainium, trn1, inf2, cayman, gen3, core_v4"
        ));
        assert!(!msg("banana").contains("did you mean"));
        // Ties go to the first codename in table order: "inf" is 1 from inf1 and inf2.
        assert_eq!(suggestion("inf"), Some("inf1"));
        assert_eq!(suggestion("TRN1"), None);
    }

    #[test]
    fn bank_arithmetic_edges() {
        let trn1 = lookup("trn1").unwrap();
        let v4 = lookup("core_v4").unwrap();
        assert_eq!(trn1.bank_num(0), 0);
        assert_eq!(trn1.bank_num(1), 1);
        assert_eq!(trn1.bank_num(2048), 1);
        assert_eq!(trn1.bank_num(2049), 2);
        assert_eq!(trn1.bank_num(4096), 2);
        assert_eq!(trn1.bank_num(6144), 3);
        assert_eq!(bank_alignment(0), 1);
        assert_eq!(bank_alignment(1), 1);
        assert_eq!(bank_alignment(2), 2);
        assert_eq!(bank_alignment(3), 4);
        assert_eq!(bank_alignment(5), 8);
        assert_eq!(bank_alignment(8), 8);
        assert_eq!(trn1.aligned_bank_num(3), 3);
        assert_eq!(v4.aligned_bank_num(3), 4);
        assert_eq!(v4.aligned_bank_num(1), 1);
        assert_eq!(v4.aligned_bank_num(5), 8);
        assert_eq!(v4.aligned_bank_num(0), 0);
    }

    #[test]
    fn zero_region_ranges() {
        assert_eq!(zero_region_bank_range(0, 0), Some((0, 0)));
        assert_eq!(zero_region_bank_range(3, 3), Some((3, 3)));
        assert_eq!(zero_region_bank_range(2, 3), Some((2, 3)));
        assert_eq!(zero_region_bank_range(1, 2), Some((0, 3)));
        assert_eq!(zero_region_bank_range(0, 2), Some((0, 3)));
        assert_eq!(zero_region_bank_range(3, 4), Some((0, 7)));
        assert_eq!(zero_region_bank_range(0, 7), Some((0, 7)));
        assert_eq!(zero_region_bank_range(7, 8), None);
        assert_eq!(zero_region_bank_range(4, 11), None);
    }

    #[test]
    fn column_tile_predicate() {
        let trn1 = lookup("trn1").unwrap();
        let inf1 = lookup("inf1").unwrap();
        assert!(trn1.is_column_tile(128, 64));
        assert!(trn1.is_column_tile(128, 127));
        assert!(!trn1.is_column_tile(128, 128));
        assert!(!trn1.is_column_tile(64, 64));
        assert!(!trn1.is_column_tile(128, 0));
        assert!(inf1.is_column_tile(128, 63));
        assert!(!inf1.is_column_tile(128, 64));
    }
}
