//! `legalize_mm_accumulation_groups` (SPEC §4.3.4–5, seed 004
//! `legalize_psum_accumulate_flag`, `set_psum_accumulate_flag`,
//! `set_psum_zero_region`; BackendPass order 94) and [`legalize_program`],
//! which runs §4.2 and §4.3 on an allocated loop-free program.
//!
//! Per cluster, walking its groups by head:
//! - a group with an init accumulates onto it (no `start`);
//! - the first group without an init gets `start` on its head, unless the
//!   cells that `start` would zero hold a value read later: then a
//!   `memset REGION = 0` goes right before the head, which accumulates;
//! - a later group without an init accumulates onto the head's zeroes when
//!   the head did `start`, its cells lie in the zeroed ones and nothing wrote
//!   them since the cluster head; otherwise it gets a memset too;
//! - the cluster's tail gets `stop`; on gen4 (ArchLevel 40), a cluster whose
//!   groups all have inits gets `acc` on every matmul and no `start`.
//!
//! Zero regions: the cluster head gets `bit_width(span − 1)` of the merged
//! quadrant span, every other matmul the same over its group's bank span.
//! A cluster whose matmuls all carry explicit flags is kept (a missing `zr`
//! is computed); a cluster mixing explicit and `auto` is re-derived with a
//! warning. Finally every unlabelled instruction is labelled with its
//! position, and the §4.2 edges become `after=%L`.

use super::cells::{live_in_zones, GroupCells, NONE};
use super::error::MatmulError;
use super::groups::{analyze, AccGroup, Analysis};
use super::order::order_column_tiled_mms;
use crate::arch::Arch;
use crate::entity::IdMap;
use crate::ir::{Access, FlagSet, Flags, Inst, InstId, InstKind, Matmul, Module, Stmt};
use crate::verify::statics::check_allocated;
use std::collections::HashSet;

/// One accumulation cluster (SPEC §4.3.3) as legalized.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cluster {
    /// Number of accumulation groups in it.
    pub groups: usize,
    /// Its matmuls in program order (ids stay valid in the legalized module).
    pub matmuls: Vec<InstId>,
    /// Closed bank range over its groups.
    pub banks: (i64, i64),
    /// Closed partition range over its groups.
    pub partitions: (i64, i64),
}

/// What [`legalize_program`] did (the SPEC §6 report keys it owns).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatmulReport {
    /// Ordered edges `(later, earlier)` as labels (§4.2).
    pub ordered_edges: Vec<(String, String)>,
    /// Final flags of every grouped matmul, in program order.
    pub flags: Vec<(String, FlagSet)>,
    /// The codegen's accumulate byte per matmul (bit0 start, bit1 stop,
    /// bit2 acc); `None` above ArchLevel 40, where the codegen skips it.
    pub isa_acc_byte: Option<Vec<(String, u8)>>,
    /// How many `memset … = 0` were inserted.
    pub memsets_inserted: usize,
    /// Number of accumulation groups.
    pub groups: usize,
    /// The clusters, ordered by head.
    pub clusters: Vec<Cluster>,
    /// Warnings (mixed explicit/auto clusters).
    pub warnings: Vec<String>,
}

impl MatmulReport {
    /// The report keys as JSON: `ordered_edges` (pairs `[later, earlier]`),
    /// `flags` and `isa_acc_byte` (maps label → value; the latter omitted
    /// when `None`), `memsets_inserted`, `groups`, `clusters`, `warnings`.
    pub fn to_json(&self) -> serde_json::Value {
        let mut o = serde_json::Map::new();
        o.insert(
            "ordered_edges".into(),
            serde_json::json!(self
                .ordered_edges
                .iter()
                .map(|(a, b)| [a, b])
                .collect::<Vec<_>>()),
        );
        o.insert(
            "flags".into(),
            self.flags
                .iter()
                .map(|(l, f)| (l.clone(), f.to_string().into()))
                .collect::<serde_json::Map<_, _>>()
                .into(),
        );
        if let Some(bytes) = &self.isa_acc_byte {
            o.insert(
                "isa_acc_byte".into(),
                bytes
                    .iter()
                    .map(|(l, b)| (l.clone(), (*b).into()))
                    .collect::<serde_json::Map<_, _>>()
                    .into(),
            );
        }
        o.insert("memsets_inserted".into(), self.memsets_inserted.into());
        o.insert("groups".into(), self.groups.into());
        o.insert("clusters".into(), self.clusters.len().into());
        o.insert("warnings".into(), serde_json::json!(self.warnings));
        o.into()
    }
}

/// `bit_width(span − 1)`, 0 when `span ≤ 1` (the seed's `bsr` idiom).
pub(crate) fn zero_region_width(span: i64) -> u32 {
    if span <= 1 {
        0
    } else {
        u64::BITS - ((span - 1) as u64).leading_zeros()
    }
}

/// The decisions [`assign`] leaves to its caller, by group index and ordinal.
#[derive(Default)]
struct Plan {
    /// Groups that get a memset right before their head.
    memsets: Vec<usize>,
    /// Head ordinals of mixed explicit/auto clusters.
    mixed: Vec<usize>,
}

/// The matmul at ordinal `ord`, to edit.
fn matmul_mut<'m>(m: &'m mut Module, an: &Analysis, ord: usize) -> Option<&'m mut Matmul> {
    match &mut m.insts[an.trace.insts[ord]].kind {
        InstKind::Matmul(mm) => Some(mm),
        _ => None,
    }
}

/// The matmul ordinals of the groups of `cluster`, group after group.
fn cluster_matmuls<'a>(
    an: &'a Analysis,
    cluster: &'a [usize],
) -> impl Iterator<Item = usize> + Clone + 'a {
    cluster
        .iter()
        .flat_map(|&g| an.matmuls.get(g).iter().copied())
}

/// The zero-region widths of a cluster's matmuls (§4.3.5).
fn zero_regions<'a>(
    an: &'a Analysis,
    cluster: &'a [usize],
) -> impl Iterator<Item = (usize, u32)> + 'a {
    let groups = &an.groups;
    let head = groups[cluster[0]].head();
    let q_lo = cluster.iter().map(|&g| groups[g].quadrants.0).min();
    let q_hi = cluster.iter().map(|&g| groups[g].quadrants.1).max();
    let head_zr = zero_region_width(q_hi.unwrap_or(0) - q_lo.unwrap_or(0) + 1);
    cluster.iter().flat_map(move |&g| {
        let grp = &groups[g];
        let zr = zero_region_width(grp.banks.1 - grp.banks.0 + 1);
        an.matmuls
            .get(g)
            .iter()
            .map(move |&o| (o, if o == head { head_zr } else { zr }))
    })
}

/// Sets the flags and zero regions of every cluster's matmuls and decides
/// its memsets (§4.3.4–5).
fn assign(m: &mut Module, arch: &Arch, an: &Analysis) -> Plan {
    let groups = &an.groups;
    let mut plan = Plan::default();
    let mut derive = Vec::new();
    for cluster in an.clusters.iter() {
        let mms = cluster_matmuls(an, cluster);
        let explicit = mms.clone().filter(|&o| an.trace.facts[o].explicit).count();
        if explicit == mms.count() {
            for (o, zr) in zero_regions(an, cluster).filter(|&(o, _)| !an.trace.facts[o].has_zr) {
                if let Some(mm) = matmul_mut(m, an, o) {
                    mm.zr = Some(zr);
                }
            }
            continue;
        }
        if explicit > 0 {
            plan.mixed.push(groups[cluster[0]].head());
        }
        derive.push(cluster);
    }
    let all_acc =
        |c: &[usize]| arch.arch_level() == 40 && c.iter().all(|&g| groups[g].init.is_some());
    let queries: Vec<usize> = (derive.iter())
        .map(|c| c[0])
        .filter(|&g| groups[g].init.is_none())
        .collect();
    let mut wipes =
        live_in_zones(&an.trace, &an.grid, &an.accumulates, groups, &queries).into_iter();
    // The current cluster's matmuls by ordinal (a map costs more than a search).
    let mut flags: Vec<(usize, FlagSet)> = Vec::new();
    for cluster in derive {
        flags.clear();
        flags.extend(cluster_matmuls(an, cluster).map(|o| (o, FlagSet::NONE)));
        flags.sort_unstable_by_key(|f| f.0);
        let at = |flags: &mut Vec<(usize, FlagSet)>, o: usize| -> usize {
            flags.binary_search_by_key(&o, |f| f.0).unwrap_or_else(|i| {
                flags.insert(i, (o, FlagSet::NONE));
                i
            })
        };
        let first = &groups[cluster[0]];
        let head = first.head();
        // The liveness answer of this cluster's head (asked when it has no init).
        let wipes_live = first.init.is_none() && wipes.next().unwrap_or(false);
        if all_acc(cluster) {
            for f in &mut flags {
                f.1.acc = true;
            }
        } else {
            let mut started = false;
            if first.init.is_none() {
                if wipes_live {
                    plan.memsets.push(cluster[0]);
                } else {
                    started = true;
                    let i = at(&mut flags, head);
                    flags[i].1.start = true;
                }
            }
            for &g in &cluster[1..] {
                let grp = &groups[g];
                if grp.init.is_some() {
                    continue;
                }
                let untouched = an.forward.last_write_before_head[g].is_none_or(|w| w < head);
                if !(started && first.zone().contains(&grp.rect()) && untouched) {
                    plan.memsets.push(g);
                }
            }
        }
        let tail = cluster
            .iter()
            .map(|&g| groups[g].tail())
            .max()
            .unwrap_or(head);
        let i = at(&mut flags, tail);
        flags[i].1.stop = true;
        for &(o, fs) in &flags {
            if let Some(mm) = matmul_mut(m, an, o) {
                mm.flags = Flags::Set(fs);
            }
        }
        for (o, zr) in zero_regions(an, cluster) {
            if let Some(mm) = matmul_mut(m, an, o) {
                mm.zr = Some(zr);
            }
        }
    }
    plan
}

/// Runs §4.2 (ordered edges) and §4.3 (groups, clusters, flags, memsets,
/// zero regions) on an allocated loop-free program — refusing first, with
/// [`check_allocated`], one that allocation could not have produced or
/// that keeps an illegal explicit cluster — then labels every
/// unlabelled instruction `N` (its final program position) and records the
/// edges as `after=%L`.
///
/// ```
/// let src = "arch trn1
///
/// psum a [128, 2048]
/// psum b [128, 2048]
/// sbuf w [128, 256] bf16
/// sbuf x [128, 1024] bf16
/// sbuf y [128, 2048]
///
/// block main {
///   matmul a <- w, x
///   act y <- a
///   matmul b <- w, x
///   act y <- b
/// }
/// ";
/// let input = psum::text::parse(src)?.module;
/// let mut m = psum::alloc::allocate(&input, &Default::default())?.module;
/// let report = psum::matmul::legalize_program(&mut m, &psum::arch::lookup("trn1")?)?;
/// assert_eq!(report.groups, 2);
/// assert_eq!(report.memsets_inserted, 0);
/// // Each matmul is an accumulation group of its own, its zero region two banks wide.
/// let out = psum::text::print(&m);
/// assert!(out.contains("%0: matmul a <- w, x flags=start|stop zr=2\n  %1: act y <- a\n"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn legalize_program(m: &mut Module, arch: &Arch) -> Result<MatmulReport, MatmulError> {
    if m.has_loops() {
        return Err(MatmulError::HasLoops);
    }
    check_allocated(m).map_err(MatmulError::Input)?;
    let edges = order_column_tiled_mms(m, arch)?;
    let an = analyze(m, arch)?;
    let plan = assign(m, arch, &an);
    insert_memsets(m, &an, &plan.memsets);
    // What the report needs of the analysis, taken before it is dropped so
    // that the labels below reuse its memory.
    let mut scratch = Vec::new();
    let clusters: Vec<Cluster> = (an.clusters.iter())
        .map(|c| cluster(&an, c, &mut scratch))
        .collect();
    // Grouped matmuls in program order: memsets shift positions, not order.
    let grouped: Vec<InstId> = (0..an.trace.len())
        .filter(|&o| an.group_of[o] != NONE)
        .map(|o| an.trace.insts[o])
        .collect();
    let mixed: Vec<InstId> = plan.mixed.iter().map(|&o| an.trace.insts[o]).collect();
    let groups = an.groups.len();
    drop(an);
    label_positions(m);
    let label = |m: &Module, i: InstId| m.inst(i).label().unwrap_or_default().to_string();
    let mut ordered_edges = Vec::with_capacity(edges.len());
    for &(later, earlier) in &edges {
        let l = label(m, earlier);
        m.insts[later].set_after(Some(l.clone()));
        ordered_edges.push((label(m, later), l));
    }
    let flags: Vec<(String, FlagSet)> = (grouped.into_iter())
        .filter_map(|i| match m.inst(i).kind.as_matmul()?.flags {
            Flags::Set(fs) => Some((label(m, i), fs)),
            Flags::Auto => None,
        })
        .collect();
    let warnings = mixed
        .iter()
        .map(|&i| {
            format!(
                "cluster headed by %{} mixes explicit and auto flags; its flags were re-derived",
                label(m, i)
            )
        })
        .collect();
    Ok(MatmulReport {
        ordered_edges,
        isa_acc_byte: (arch.arch_level() <= 40).then(|| {
            flags
                .iter()
                .map(|(l, f)| (l.clone(), f.isa_byte()))
                .collect()
        }),
        flags,
        memsets_inserted: plan.memsets.len(),
        groups,
        clusters,
        warnings,
    })
}

/// Inserts `memset REGION = 0` right before the head of each group of `memsets`.
fn insert_memsets(m: &mut Module, an: &Analysis, memsets: &[usize]) {
    if memsets.is_empty() {
        return;
    }
    let mut memset_before: IdMap<InstId, Option<InstId>> = IdMap::with_len(m.insts.len(), None);
    for &g in memsets {
        let grp = &an.groups[g];
        let r = grp.region;
        let memset = m.add_inst(Inst::new(InstKind::Memset {
            dst: Access::rect(grp.tensor, r.p0, r.p1, r.b0, r.b1),
            value: 0.0,
        }));
        memset_before[an.trace.insts[grp.head()]] = Some(memset);
    }
    for b in &mut m.blocks {
        let body = std::mem::take(&mut b.body);
        b.body = body
            .into_iter()
            .flat_map(|s| {
                let pre = match s {
                    Stmt::Inst(i) => memset_before.get(i).copied().flatten().map(Stmt::Inst),
                    Stmt::Loop(_) => None,
                };
                pre.into_iter().chain([s])
            })
            .collect();
    }
}

/// The report entry of the cluster of groups `c`; `scratch` is a reused buffer.
fn cluster(an: &Analysis, c: &[usize], scratch: &mut Vec<usize>) -> Cluster {
    let groups = || c.iter().map(|&g| &an.groups[g]);
    scratch.clear();
    scratch.extend(cluster_matmuls(an, c));
    if c.len() > 1 {
        scratch.sort_unstable();
    }
    let span = |f: fn(&AccGroup) -> (i64, i64)| {
        groups()
            .map(f)
            .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))
            .unwrap_or_default()
    };
    Cluster {
        groups: c.len(),
        matmuls: scratch.iter().map(|&o| an.trace.insts[o]).collect(),
        banks: span(|g| g.banks),
        partitions: span(|g| g.partitions),
    }
}

/// Labels every unlabelled instruction with its program position (SPEC §4.3:
/// unlabelled instructions print as `%N`). When another instruction already
/// carries the label `N`, the first free `N.1`, `N.2`, … is used instead.
fn label_positions(m: &mut Module) {
    let order = m.insts_in_order();
    // A generated label `N` or `N.k` can only collide with a label given in
    // the input made of digits and dots: positions differ, and `N.k` has a
    // dot that `M` lacks.
    let taken: HashSet<String> = order
        .iter()
        .filter_map(|&i| m.inst(i).label())
        .filter(|l| l.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
        .map(str::to_string)
        .collect();
    for (position, i) in order.into_iter().enumerate() {
        if m.inst(i).label().is_some() {
            continue;
        }
        let mut l = position.to_string();
        let mut k = 0;
        while taken.contains(&l) {
            k += 1;
            l = format!("{position}.{k}");
        }
        m.insts[i].set_label(Some(l));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_region_width_is_bit_width_of_span_minus_one() {
        let w: Vec<u32> = (0..=9).map(zero_region_width).collect();
        assert_eq!(w, [0, 0, 1, 2, 2, 3, 3, 3, 3, 4]);
    }
}
