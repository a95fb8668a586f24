//! Static checks of a compiled program (SPEC §5.3): banks in range and
//! aligned, spill/reload declarations, and — on a loop-free, legalized
//! program — the accumulation flags and zero-region widths of §4.3.
//!
//! The matmul groups and clusters are recomputed here from the §4.3
//! definitions, independently of the legalization pass: groups are the §2.4
//! accumulation runs of each PSUM tensor; two groups cluster when their
//! zero-region bank windows overlap, their partition ranges overlap (quadrants,
//! or exact partitions when the first group is a column-tile group), and their
//! values overlap (interleaved, or the earlier group's value is read after
//! the later group's head). Per cluster:
//! - `start` appears at most on the cluster head, and only when the head's
//!   group has no init; a head whose group has no init must have `start`;
//! - `stop` appears exactly on the cluster tail;
//! - `acc` appears only on gen4, in a cluster whose groups all have inits,
//!   and then on all of its matmuls (none of which has `start`);
//! - `zr` is `bit_width(span − 1)`: span = the cluster's merged quadrant span
//!   for the head, the group's bank span for every other matmul.
//!
//! [`check_allocated`] is the part of these checks an allocated program
//! must pass before legalization (SPEC §4.3), which `legalize_program`
//! runs on its input.

use super::exec::{region_fits, InstNames, RunTracker};
use super::layout::{Layout, PlaceError};
use super::rects::RectMap;
use super::{spill_name, SpillRole};
use crate::arch::{self, bank_alignment, zero_region_bank_range, Arch, PSUM_BANK_SIZE};
use crate::ir::{Flags, InstId, InstKind, MatmulKind, Mem, Module, Region, TensorId};
use std::collections::HashMap;
use thiserror::Error;

/// A violated static property.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum StaticError {
    /// The module names an unknown arch.
    #[error("{0}")]
    Arch(String),
    /// A PSUM tensor without a bank, or with banks out of range.
    #[error(transparent)]
    Place(#[from] PlaceError),
    /// A multi-bank tensor at a base bank that is not a multiple of its alignment.
    #[error("PSUM tensor {tensor} occupies {banks} banks from bank {bank}, which is not a multiple of its alignment {alignment}")]
    Misaligned {
        /// The tensor.
        tensor: String,
        /// Its base bank.
        bank: u32,
        /// Banks it occupies.
        banks: u32,
        /// Required alignment.
        alignment: u32,
    },
    /// A tensor of the original that the result lacks.
    #[error("result lacks tensor {tensor} of the original")]
    MissingTensor {
        /// The tensor.
        tensor: String,
    },
    /// A result tensor that is neither in the original nor spill code nor a memloc piece.
    #[error("result declares {tensor}, which is not in the original and is not a spill, reload or memloc-split tensor")]
    UnexpectedTensor {
        /// The tensor.
        tensor: String,
    },
    /// A spill/reload/piece tensor with the wrong memory or shape.
    #[error("{tensor} must be a {mem} tensor of the shape and dtype of {base}")]
    SpillShape {
        /// The spill-code tensor.
        tensor: String,
        /// The tensor it copies.
        base: String,
        /// The memory it must be in.
        mem: Mem,
    },
    /// Two spill-code tensors with the same counter.
    #[error("spill-code tensors {tensor} and {other} share the counter {counter}")]
    DuplicateCounter {
        /// The later tensor.
        tensor: String,
        /// The earlier tensor.
        other: String,
        /// The shared counter.
        counter: u64,
    },
    /// An access outside its tensor.
    #[error("{inst}: access of {tensor} lies outside the tensor")]
    Access {
        /// The instruction.
        inst: String,
        /// The tensor.
        tensor: String,
    },
    /// A group whose banks no zero-region window covers.
    #[error("{inst}: accumulation group over banks {lo}..={hi} has no zero-region window")]
    NoZeroRegion {
        /// The group head.
        inst: String,
        /// Its id.
        inst_id: InstId,
        /// First bank.
        lo: u32,
        /// Last bank.
        hi: u32,
    },
    /// A wrong or missing `zr`.
    #[error("{inst}: zr={found} but §4.3.5 gives zr={expected} ({why})")]
    Zr {
        /// The matmul.
        inst: String,
        /// Its id.
        inst_id: InstId,
        /// The `zr` found (`none` when missing).
        found: String,
        /// The `zr` expected.
        expected: u32,
        /// Which span it derives from.
        why: String,
    },
    /// A wrong flag.
    #[error("{inst}: flags={flags}: {why}")]
    Flags {
        /// The matmul.
        inst: String,
        /// Its id.
        inst_id: InstId,
        /// Its flags.
        flags: String,
        /// What is wrong.
        why: String,
    },
}

impl StaticError {
    /// The offending instruction, for pointing at its source line.
    pub fn inst(&self) -> Option<InstId> {
        match self {
            StaticError::NoZeroRegion { inst_id, .. }
            | StaticError::Zr { inst_id, .. }
            | StaticError::Flags { inst_id, .. } => Some(*inst_id),
            _ => None,
        }
    }

    /// The result tensor the error is about, if any.
    pub(crate) fn tensor(&self) -> Option<&str> {
        match self {
            StaticError::Place(
                PlaceError::NoBank { tensor }
                | PlaceError::BankOutOfRange { tensor, .. }
                | PlaceError::TooManyPartitions { tensor, .. },
            )
            | StaticError::Misaligned { tensor, .. }
            | StaticError::UnexpectedTensor { tensor }
            | StaticError::SpillShape { tensor, .. }
            | StaticError::DuplicateCounter { tensor, .. } => Some(tensor),
            _ => None,
        }
    }
}

/// Runs the static checks of SPEC §5.3 on `result`, compiled from `original`.
pub fn check(original: &Module, result: &Module) -> Result<(), StaticError> {
    let arch = arch::lookup(&result.arch).map_err(|e| StaticError::Arch(e.to_string()))?;
    let layout = Layout::physical(result, &arch)?;
    check_alignment(result, &arch)?;
    check_declarations(original, result)?;
    if !result.has_loops() {
        check_flags(result, &arch, &layout, false)?;
    }
    Ok(())
}

/// What an allocated program must satisfy before legalization (SPEC §4.3):
/// every accessed PSUM tensor has a bank, every bank is in range and
/// aligned, and on a loop-free program every cluster whose matmuls all
/// carry explicit flags — which legalization keeps — has the flags §5.3
/// requires and, where given, the `zr` of §4.3.5.
pub fn check_allocated(m: &Module) -> Result<(), StaticError> {
    let arch = arch::lookup(&m.arch).map_err(|e| StaticError::Arch(e.to_string()))?;
    let layout = Layout::physical(m, &arch)?;
    check_alignment(m, &arch)?;
    let explicit = m.insts.values().any(|i| {
        i.kind
            .as_matmul()
            .is_some_and(|mm| matches!(mm.flags, Flags::Set(_)))
    });
    if explicit && !m.has_loops() {
        check_flags(m, &arch, &layout, true)?;
    }
    Ok(())
}

fn check_alignment(m: &Module, arch: &Arch) -> Result<(), StaticError> {
    for t in m.tensors.values().filter(|t| t.mem == Mem::Psum) {
        let banks = arch.aligned_bank_num(arch.bank_num(u64::from(t.bytes)));
        let alignment = bank_alignment(banks);
        let bank = t.bank.unwrap_or(0);
        if bank % alignment != 0 {
            return Err(StaticError::Misaligned {
                tensor: t.name.clone(),
                bank,
                banks,
                alignment,
            });
        }
    }
    Ok(())
}

fn check_declarations(original: &Module, result: &Module) -> Result<(), StaticError> {
    let same_shape = |a: &crate::ir::Tensor, b: &crate::ir::Tensor| {
        (a.partitions, a.bytes, a.dtype) == (b.partitions, b.bytes, b.dtype)
    };
    let (orig_names, res_names) = (original.name_index(), result.name_index());
    // A memloc-split piece `X.N` of an original PSUM tensor X (SPEC §3.2).
    let piece_of = |name: &str| {
        let (base, n) = name.rsplit_once('.')?;
        let ok = !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit());
        let b = *orig_names.get(base).filter(|_| ok)?;
        (original.tensor(b).mem == Mem::Psum).then_some(b)
    };
    let split: std::collections::HashSet<TensorId> = result
        .tensors
        .values()
        .filter_map(|r| piece_of(&r.name))
        .collect();
    for (i, t) in original.tensors.values().enumerate() {
        let present = res_names.contains_key(t.name.as_str());
        let split = t.mem == Mem::Psum && split.contains(&TensorId::new(i));
        if !present && !split {
            return Err(StaticError::MissingTensor {
                tensor: t.name.clone(),
            });
        }
    }
    let mut counters: HashMap<u64, &str> = HashMap::new();
    for t in &result.tensors {
        if orig_names.contains_key(t.name.as_str()) {
            continue;
        }
        if let Some(b) = piece_of(&t.name) {
            let bt = original.tensor(b);
            if t.mem != Mem::Psum || !same_shape(t, bt) {
                return Err(StaticError::SpillShape {
                    tensor: t.name.clone(),
                    base: bt.name.clone(),
                    mem: Mem::Psum,
                });
            }
            continue;
        }
        let Some((base, role, k)) = spill_name(&t.name) else {
            return Err(StaticError::UnexpectedTensor {
                tensor: t.name.clone(),
            });
        };
        let Some(&b) = res_names.get(base) else {
            return Err(StaticError::UnexpectedTensor {
                tensor: t.name.clone(),
            });
        };
        let bt = result.tensor(b);
        let mem = match role {
            SpillRole::Spill => Mem::Sbuf,
            SpillRole::Reload => Mem::Psum,
        };
        if t.mem != mem || bt.mem != Mem::Psum || !same_shape(t, bt) {
            return Err(StaticError::SpillShape {
                tensor: t.name.clone(),
                base: bt.name.clone(),
                mem,
            });
        }
        if let Some(other) = counters.insert(k, &t.name) {
            return Err(StaticError::DuplicateCounter {
                tensor: t.name.clone(),
                other: other.to_string(),
                counter: k,
            });
        }
    }
    Ok(())
}

/// One accumulation run of matmuls (a `MatmulAccGrp`, §4.3.1).
struct Group {
    matmuls: Vec<(InstId, usize)>,
    init: bool,
    col_group: bool,
    parts: (i64, i64),
    quads: (i64, i64),
    banks: (u32, u32),
    zr_banks: (u32, u32),
    /// Largest ordinal of a read of a cell whose latest write is this group's.
    last_read: usize,
}

impl Group {
    fn head(&self) -> usize {
        self.matmuls[0].1
    }
    fn tail(&self) -> usize {
        self.matmuls[self.matmuls.len() - 1].1
    }
}

fn intersects<T: Ord + Copy>(a: (T, T), b: (T, T)) -> bool {
    a.0 <= b.1 && b.0 <= a.1
}

fn bit_width(x: u64) -> u32 {
    64 - x.leading_zeros()
}

fn collect_groups(
    m: &Module,
    arch: &Arch,
    layout: &Layout,
    names: &InstNames,
) -> Result<Vec<Group>, StaticError> {
    let mut runs = RunTracker::new(m);
    let mut groups: Vec<Group> = Vec::new();
    // Per run (numbered densely from 0): 1 + its group (0: not yet seen).
    let mut of_run: Vec<usize> = Vec::new();
    // Per physical PSUM cell: 1 + the group whose matmul wrote it last (0: none).
    let mut writer = RectMap::new(layout.part_size, layout.psum_bytes(), 0u32);
    let fits = |id: InstId, t: TensorId, r: &Region| {
        if region_fits(m.tensor(t), r) {
            Ok(())
        } else {
            Err(StaticError::Access {
                inst: names.get(m, id),
                tensor: m.tensor(t).name.clone(),
            })
        }
    };
    for (ord, id) in m.insts_in_order().into_iter().enumerate() {
        let kind = &m.inst(id).kind;
        for a in kind.srcs() {
            let r = a.region(|_| 0);
            fits(id, a.tensor, &r)?;
            runs.read(m, a.tensor, r);
            if layout.in_psum(a.tensor) {
                writer.visit(layout.rect(a.tensor, &r).1, |_, &g| {
                    if let Some(g) = (g as usize).checked_sub(1) {
                        groups[g].last_read = groups[g].last_read.max(ord);
                    }
                });
            }
        }
        let dst = kind.dst();
        let r = dst.region(|_| 0);
        fits(id, dst.tensor, &r)?;
        let group = match kind {
            InstKind::Matmul(mm) if layout.in_psum(dst.tensor) && r.p0 < r.p1 && r.b0 < r.b1 => {
                let step = runs.matmul(m, dst.tensor, r);
                let run = step.run as usize;
                if of_run.len() <= run {
                    of_run.resize(run + 1, 0);
                }
                if of_run[run] == 0 {
                    let base = layout.psum_byte(dst.tensor, 0).unwrap_or(0);
                    let (lo, hi) = (base + r.b0 as u32, base + r.b1 as u32 - 1);
                    let banks = (lo / PSUM_BANK_SIZE, hi / PSUM_BANK_SIZE);
                    groups.push(Group {
                        matmuls: Vec::new(),
                        init: step.init,
                        col_group: true,
                        parts: (r.p0, r.p1 - 1),
                        quads: (r.p0 >> 5, (r.p1 - 1) >> 5),
                        banks,
                        zr_banks: zero_region_bank_range(banks.0, banks.1)
                            .unwrap_or((u32::MAX, u32::MAX)),
                        last_read: 0,
                    });
                    of_run[run] = groups.len();
                }
                let g = of_run[run] - 1;
                let st = &mm.stationary;
                let k = st.part_extent();
                let cols = st.byte_extent() / i64::from(m.tensor(st.tensor).dtype.size());
                let col_tile = mm.kind == MatmulKind::Plain
                    && u32::try_from(k).is_ok_and(|k| {
                        u32::try_from(cols).is_ok_and(|c| arch.is_column_tile(k, c))
                    });
                let gr = &mut groups[g];
                gr.col_group &= col_tile;
                gr.matmuls.push((id, ord));
                if gr.zr_banks.0 == u32::MAX {
                    return Err(StaticError::NoZeroRegion {
                        inst: names.get(m, gr.matmuls[0].0),
                        inst_id: gr.matmuls[0].0,
                        lo: gr.banks.0,
                        hi: gr.banks.1,
                    });
                }
                Some(g)
            }
            InstKind::Matmul(_) => {
                runs.matmul(m, dst.tensor, r);
                None
            }
            _ => {
                runs.write(m, dst.tensor, r);
                None
            }
        };
        if layout.in_psum(dst.tensor) {
            let g = group.map_or(0, |g| g as u32 + 1);
            writer.set(layout.rect(dst.tensor, &r).1, g);
        }
    }
    Ok(groups)
}

/// Connected components of the §4.3.3 clustering relation, as lists of
/// group indices sorted by head ordinal; clusters ordered by head ordinal.
fn clusters(groups: &[Group]) -> Vec<Vec<usize>> {
    let n = groups.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&g| groups[g].head());
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    let pdim = |a: &Group, b: &Group| {
        if a.col_group {
            intersects(a.parts, b.parts)
        } else {
            intersects(a.quads, b.quads)
        }
    };
    for (i, &a) in order.iter().enumerate() {
        let ga = &groups[a];
        // Later groups whose head comes before the earlier group's value is dead.
        let reach = (ga.tail() + 1).max(ga.last_read);
        for &b in order[i + 1..]
            .iter()
            .take_while(|&&b| groups[b].head() < reach)
        {
            let gb = &groups[b];
            if intersects(ga.zr_banks, gb.zr_banks) && (pdim(ga, gb) || pdim(gb, ga)) {
                let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
                parent[ra] = rb;
            }
        }
    }
    // Clusters numbered by their first group in head order, which is the
    // order of their heads; each lists its groups in head order.
    let mut cluster_of_root = vec![usize::MAX; n];
    let mut out: Vec<Vec<usize>> = Vec::new();
    for &g in &order {
        let r = find(&mut parent, g);
        if cluster_of_root[r] == usize::MAX {
            cluster_of_root[r] = out.len();
            out.push(Vec::new());
        }
        out[cluster_of_root[r]].push(g);
    }
    out
}

/// The flag and `zr` rules of §5.3 on every cluster whose matmuls all carry
/// explicit flags; with `zr_optional`, a missing `zr` passes (legalization
/// computes it).
fn check_flags(
    m: &Module,
    arch: &Arch,
    layout: &Layout,
    zr_optional: bool,
) -> Result<(), StaticError> {
    let names = InstNames::new(m);
    let groups = collect_groups(m, arch, layout, &names)?;
    let gen4 = arch.arch_level() == 40;
    let mut members: Vec<(usize, InstId, usize)> = Vec::new();
    let mut set = Vec::new();
    for cluster in clusters(&groups) {
        members.clear();
        members.extend(
            cluster
                .iter()
                .flat_map(|&g| groups[g].matmuls.iter().map(move |&(id, o)| (g, id, o))),
        );
        members.sort_by_key(|x| x.2);
        set.clear();
        let explicit = members.iter().all(|&(_, id, _)| {
            match m.inst(id).kind.as_matmul().map(|mm| (mm.flags, mm.zr)) {
                Some((Flags::Set(fs), zr)) => {
                    set.push((fs, zr));
                    true
                }
                _ => false,
            }
        });
        if !explicit {
            continue;
        }
        let first = &groups[cluster[0]];
        let head = members[0].1;
        let tail = members[members.len() - 1].1;
        let qspan = cluster
            .iter()
            .map(|&g| groups[g].quads.1)
            .max()
            .unwrap_or(0)
            - cluster
                .iter()
                .map(|&g| groups[g].quads.0)
                .min()
                .unwrap_or(0)
            + 1;
        let all_init = cluster.iter().all(|&g| groups[g].init);
        let use_memset = gen4 && all_init;
        let acc_count = set.iter().filter(|(fs, _)| fs.acc).count();
        for (i, &(g, id, _)) in members.iter().enumerate() {
            let (fs, zr) = set[i];
            let err = |why: String| StaticError::Flags {
                inst: names.get(m, id),
                inst_id: id,
                flags: fs.to_string(),
                why,
            };
            let is_head = i == 0;
            if fs.start && !is_head {
                return Err(err(format!(
                    "start on a matmul that is not the head of its accumulation cluster (head {})",
                    names.get(m, head)
                )));
            }
            if fs.start && groups[g].init {
                return Err(err("start on a group that accumulates onto an init".into()));
            }
            if is_head && !fs.start && !first.init {
                return Err(err(
                    "cluster head has neither start nor an init to accumulate onto".into(),
                ));
            }
            if fs.stop != (id == tail) {
                return Err(err(if fs.stop {
                    format!(
                        "stop on a matmul that is not the tail of its cluster (tail {})",
                        names.get(m, tail)
                    )
                } else {
                    "the tail of its accumulation cluster lacks stop".into()
                }));
            }
            if fs.acc && !use_memset {
                return Err(err(
                    "acc outside a gen4 cluster whose groups all have an init".into(),
                ));
            }
            if use_memset && acc_count != 0 && !fs.acc {
                return Err(err(
                    "gen4 cluster with acc on some matmuls lacks it on this one".into(),
                ));
            }
            let (expected, why) = if is_head {
                (
                    bit_width(qspan.saturating_sub(1) as u64),
                    format!("cluster head, quadrant span {qspan}"),
                )
            } else {
                let bspan = groups[g].banks.1 - groups[g].banks.0 + 1;
                (
                    bit_width(u64::from(bspan - 1)),
                    format!("bank span {bspan}"),
                )
            };
            if zr.map_or(!zr_optional, |z| z != expected) {
                return Err(StaticError::Zr {
                    inst: names.get(m, id),
                    inst_id: id,
                    found: zr.map_or("none".to_string(), |z| z.to_string()),
                    expected,
                    why,
                });
            }
        }
    }
    Ok(())
}
