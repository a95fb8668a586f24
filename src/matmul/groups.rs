//! Accumulation groups and their clusters (SPEC §4.3.1–3, seed 004
//! `collect_acc_grps`, `MatmulAccGrp`, the five overlap predicates and
//! `find_overlapped_psum_zero_region_groups`).
//!
//! Per PSUM tensor (declaration order), its matmul writers are split into
//! accumulation runs (SPEC §2.4); each run becomes an [`AccGroup`] carrying
//! the seed's geometry ranges. Groups are clustered with union-find: two
//! groups join when their zero-region bank windows intersect, their partition
//! ranges intersect (in quadrant or exact units, by the first group's
//! [`PartitionMode`]), and their values overlap in time (interleaved index
//! ranges, or the earlier group's result still read after the later head).

use super::cells::{self, Forward, Grid, GroupCells, NONE};
use super::error::MatmulError;
use super::lists::{flat_index, Lists};
use super::trace::{PsumAccess, Rect, Trace};
use crate::arch::{zero_region_bank_range, Arch, PSUM_BANK_SIZE};
use crate::ir::{Module, Region, TensorId};

/// How a group reasons about the partition axis (the seed's mode byte).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartitionMode {
    /// Every matmul is column-tiled: exact partition ranges.
    ColGroup,
    /// Otherwise: 32-partition PE quadrants.
    Quadrant,
}

/// One accumulation run with its geometry (the seed's `MatmulAccGrp`).
/// Ranges are closed `(lo, hi)`; ordinals are program positions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccGroup {
    /// The PSUM tensor written.
    pub tensor: TensorId,
    /// The tensor-relative region every matmul of the run writes.
    pub region: Region,
    /// The ordinal of the run's init (SPEC §2.4), if any.
    pub init: Option<usize>,
    /// Whether no earlier access of the tensor touches the run's region
    /// (its head writes PSUM nothing wrote).
    pub untouched: bool,
    /// Partition range.
    pub partitions: (i64, i64),
    /// Quadrant range (`partition >> 5`).
    pub quadrants: (i64, i64),
    /// Physical byte interval (`bank·2048 + offset`).
    pub bytes: (i64, i64),
    /// Bank range.
    pub banks: (i64, i64),
    /// Zero-region bank window (`zero_region_bank_range` of the bank range).
    pub zr_banks: (u32, u32),
    /// Index range `(head, tail)`.
    pub index: (usize, usize),
    /// Partition-axis mode.
    pub mode: PartitionMode,
}

/// Closed-interval intersection, the skeleton of the seed's four interval tests.
pub(crate) fn intervals_overlap<T: Ord>(a: (T, T), b: (T, T)) -> bool {
    a.0 <= b.1 && b.0 <= a.1
}

impl AccGroup {
    /// The first matmul's ordinal.
    pub fn head(&self) -> usize {
        self.index.0
    }

    /// The last matmul's ordinal.
    pub(crate) fn tail(&self) -> usize {
        self.index.1
    }

    /// Predicate 1: the zero-region bank windows intersect.
    pub(crate) fn is_zero_region_bank_overlap(&self, o: &AccGroup) -> bool {
        intervals_overlap(self.zr_banks, o.zr_banks)
    }

    /// Predicate 2: the quadrant ranges intersect.
    pub(crate) fn is_quadrant_overlap(&self, o: &AccGroup) -> bool {
        intervals_overlap(self.quadrants, o.quadrants)
    }

    /// Predicate 3: the exact partition ranges intersect.
    pub(crate) fn is_col_grp_overlap(&self, o: &AccGroup) -> bool {
        intervals_overlap(self.partitions, o.partitions)
    }

    /// Predicate 4: quadrant or col-group overlap, by `self`'s mode.
    pub(crate) fn is_partition_dim_overlap(&self, o: &AccGroup) -> bool {
        match self.mode {
            PartitionMode::Quadrant => self.is_quadrant_overlap(o),
            PartitionMode::ColGroup => self.is_col_grp_overlap(o),
        }
    }

    /// Predicate 5: the index ranges intersect (the groups interleave).
    pub fn is_index_overlap(&self, o: &AccGroup) -> bool {
        intervals_overlap(self.index, o.index)
    }
}

impl GroupCells for AccGroup {
    fn head(&self) -> usize {
        AccGroup::head(self)
    }

    /// The group's physical cells.
    fn rect(&self) -> Rect {
        Rect {
            p0: self.partitions.0,
            p1: self.partitions.1 + 1,
            x0: self.bytes.0,
            x1: self.bytes.1 + 1,
        }
    }

    /// The cells a `start` on the head zeroes: its partitions × every byte
    /// of its banks (SPEC §4.4).
    fn zone(&self) -> Rect {
        let bank = i64::from(PSUM_BANK_SIZE);
        Rect {
            p0: self.partitions.0,
            p1: self.partitions.1 + 1,
            x0: self.banks.0 * bank,
            x1: (self.banks.1 + 1) * bank,
        }
    }
}

/// Value overlap (SPEC §4.3.3) of `earlier` and `later` (by head): `later`
/// opens while `earlier` still runs or while its result is still to be
/// read; `earlier_live_end` is the later of its tail and one before the
/// last read that needs its result.
pub(crate) fn is_value_overlap(
    earlier: &AccGroup,
    later: &AccGroup,
    earlier_live_end: usize,
) -> bool {
    earlier.head() <= later.head() && later.head() <= earlier_live_end
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum EventKind {
    Read,
    MatmulWrite,
    OtherWrite,
}

/// An access of one tensor, for finding the event most recently touching a
/// region. Regions are compared as physical cells: within one tensor that
/// is the same comparison.
struct Event {
    ord: usize,
    rect: Rect,
    kind: EventKind,
}

/// The sweep state of the tensor being swept.
#[derive(Default)]
struct TensorState {
    /// Groups (runs) that can still be extended.
    open: Vec<usize>,
    /// Recent events, oldest first; an event whose cells a later one
    /// contains can never again be the most recent to touch anything, and
    /// is dropped.
    events: Vec<Event>,
}

impl TensorState {
    fn clear(&mut self) {
        self.open.clear();
        self.events.clear();
    }

    fn push(&mut self, e: Event) {
        self.events.retain(|o| !e.rect.contains(&o.rect));
        self.events.push(e);
    }

    /// What a run over `rect` opening now starts on: its init (the most
    /// recent event touching `rect`, when it is a non-matmul write of a
    /// superset), and whether no event touches `rect` at all (an event
    /// dropped by [`TensorState::push`] lies inside one that is kept).
    fn onto(&self, rect: &Rect) -> (Option<usize>, bool) {
        match self.events.iter().rev().find(|e| e.rect.overlaps(rect)) {
            None => (None, true),
            Some(e) => {
                let init = e.kind == EventKind::OtherWrite && e.rect.contains(rect);
                (init.then_some(e.ord), false)
            }
        }
    }

    fn close_overlapping(&mut self, groups: &[AccGroup], rect: &Rect, keep: Option<usize>) {
        self.open
            .retain(|&k| Some(k) == keep || !groups[k].rect().overlaps(rect));
    }
}

/// Splits every PSUM tensor's matmul writers into accumulation runs (SPEC
/// §2.4) and folds each into its group, ordered by tensor declaration, then
/// program order; also returns the group of each ordinal ([`NONE`] for an
/// ordinal in no group). Runs of different tensors are independent, so the
/// sweep goes tensor by tensor.
fn accumulation_groups(
    m: &Module,
    trace: &Trace,
) -> Result<(Vec<AccGroup>, Vec<u32>), MatmulError> {
    // Each tensor's accesses in program order: (ordinal, read index, or
    // `NONE` for the ordinal's write).
    let by_tensor = Lists::grouped(m.tensors.len(), |emit| {
        for ord in 0..trace.len() {
            let o = flat_index(ord);
            for r in trace.reads.range(ord) {
                emit(trace.reads.items()[r].tensor.index(), (o, flat_index(r)));
            }
            if let Some(w) = trace.write(ord) {
                emit(w.tensor.index(), (o, NONE));
            }
        }
    });
    let mut st = TensorState::default();
    let matmuls = trace.facts.iter().filter(|f| f.matmul).count();
    let mut groups: Vec<AccGroup> = Vec::with_capacity(matmuls);
    let mut group_of = vec![NONE; trace.len()];
    for (t, accesses) in by_tensor.iter().enumerate() {
        st.clear();
        let mut onto = (None, false);
        let mut current = None;
        for &(ord, read) in accesses {
            let ord = ord as usize;
            let facts = trace.facts[ord];
            if current != Some(ord) {
                // Before the ordinal's reads: what a run it opens starts on.
                current = Some(ord);
                onto = trace
                    .write(ord)
                    .filter(|w| facts.matmul && w.tensor.index() == t)
                    .map_or((None, false), |w| st.onto(&w.rect));
            }
            if read != NONE {
                let rect = trace.reads.items()[read as usize].rect;
                st.close_overlapping(&groups, &rect, None);
                st.push(Event {
                    ord,
                    rect,
                    kind: EventKind::Read,
                });
                continue;
            }
            let Some(&w) = trace.write(ord) else { continue };
            let kind = if facts.matmul {
                let column_tiled = facts.column_tiled;
                let same = (st.open.iter().copied()).find(|&k| groups[k].rect() == w.rect);
                st.close_overlapping(&groups, &w.rect, same);
                let k = match same {
                    Some(k) => {
                        let g = &mut groups[k];
                        g.index.1 = ord;
                        if !column_tiled {
                            g.mode = PartitionMode::Quadrant;
                        }
                        k
                    }
                    None => {
                        st.open.push(groups.len());
                        groups.push(new_group(m, trace, w, onto, ord, column_tiled)?);
                        groups.len() - 1
                    }
                };
                group_of[ord] = flat_index(k);
                EventKind::MatmulWrite
            } else {
                st.close_overlapping(&groups, &w.rect, None);
                EventKind::OtherWrite
            };
            st.push(Event {
                ord,
                rect: w.rect,
                kind,
            });
        }
    }
    Ok((groups, group_of))
}

/// The group of a run that opens at `head` writing `w` onto `(init, untouched)`
/// (as [`TensorState::onto`] finds them).
fn new_group(
    m: &Module,
    trace: &Trace,
    w: PsumAccess,
    (init, untouched): (Option<usize>, bool),
    head: usize,
    column_tiled: bool,
) -> Result<AccGroup, MatmulError> {
    let rect = w.rect;
    let bank = i64::from(PSUM_BANK_SIZE);
    let base = m.tensor(w.tensor).bank.map_or(0, |b| i64::from(b) * bank);
    let partitions = (rect.p0, rect.p1 - 1);
    let bytes = (rect.x0, rect.x1 - 1);
    let banks = (bytes.0.div_euclid(bank), bytes.1.div_euclid(bank));
    let zr_banks = match (u32::try_from(banks.0), u32::try_from(banks.1)) {
        (Ok(lo), Ok(hi)) if hi < u32::MAX - 8 => zero_region_bank_range(lo, hi),
        _ => None,
    }
    .ok_or_else(|| MatmulError::ZeroRegionTooWide {
        inst: trace.name(m, head),
        lo: banks.0,
        hi: banks.1,
    })?;
    Ok(AccGroup {
        tensor: w.tensor,
        region: Region {
            p0: rect.p0,
            p1: rect.p1,
            b0: rect.x0 - base,
            b1: rect.x1 - base,
        },
        init,
        untouched,
        partitions,
        quadrants: (partitions.0 >> 5, partitions.1 >> 5),
        bytes,
        banks,
        zr_banks,
        index: (head, head),
        mode: if column_tiled {
            PartitionMode::ColGroup
        } else {
            PartitionMode::Quadrant
        },
    })
}

/// Disjoint-set forest over group indices (path halving, union by index).
struct UnionFind {
    parent: Vec<usize>,
}

impl UnionFind {
    fn new(n: usize) -> Self {
        UnionFind {
            parent: (0..n).collect(),
        }
    }

    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }

    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            self.parent[ra.max(rb)] = ra.min(rb);
        }
    }
}

/// Clusters `groups` (SPEC §4.3.3); `live_end[g]` as in [`is_value_overlap`],
/// `by_head` the group indices ordered by head. Returns the connected
/// components ordered by head, each ordered by head.
fn find_clusters(groups: &[AccGroup], live_end: &[usize], by_head: &[usize]) -> Lists<usize> {
    let mut uf = UnionFind::new(groups.len());
    let mut active: Vec<usize> = Vec::new();
    for &l in by_head {
        let later = &groups[l];
        active.retain(|&e| is_value_overlap(&groups[e], later, live_end[e]));
        for &e in &active {
            let earlier = &groups[e];
            if earlier.is_zero_region_bank_overlap(later)
                && (earlier.is_partition_dim_overlap(later)
                    || later.is_partition_dim_overlap(earlier))
            {
                uf.union(e, l);
            }
        }
        active.push(l);
    }
    // Number the components by their first group in head order.
    let mut cluster_of_root = vec![NONE; groups.len()];
    let mut clusters = 0;
    let mut cluster_of = vec![0usize; groups.len()];
    for &g in by_head {
        let r = uf.find(g);
        if cluster_of_root[r] == NONE {
            cluster_of_root[r] = flat_index(clusters);
            clusters += 1;
        }
        cluster_of[g] = cluster_of_root[r] as usize;
    }
    Lists::grouped(clusters, |emit| {
        for &g in by_head {
            emit(cluster_of[g], g);
        }
    })
}

/// The accumulation runs (SPEC §2.4) of the program `trace` traces, by tensor
/// declaration then program order (what the hazard lints of SPEC §9.4 read;
/// `trace` may be [`Trace::unallocated`]).
pub(crate) fn runs(m: &Module, trace: &Trace) -> Result<Vec<AccGroup>, MatmulError> {
    Ok(accumulation_groups(m, trace)?.0)
}

/// The groups and clusters of an allocated loop-free program, with the cell
/// facts the flag assignment needs.
pub struct Analysis {
    /// Accumulation groups, by tensor declaration then program order.
    pub groups: Vec<AccGroup>,
    /// The matmul ordinals of each group, ascending.
    pub matmuls: Lists<usize>,
    /// Clusters (indices into `groups`), ordered by head ordinal, each
    /// ordered by head ordinal.
    pub clusters: Lists<usize>,
    pub(crate) trace: Trace,
    pub(crate) grid: Grid,
    pub(crate) forward: Forward,
    /// The group of each ordinal ([`NONE`] for an ordinal in no group).
    pub(crate) group_of: Vec<u32>,
    /// Whether each ordinal's write reads its destination first.
    pub(crate) accumulates: Vec<bool>,
}

/// Groups and clusters the matmuls of an allocated loop-free program (SPEC §4.3.1–3).
pub fn analyze(m: &Module, arch: &Arch) -> Result<Analysis, MatmulError> {
    let trace = Trace::new(m, arch)?;
    let (groups, group_of) = accumulation_groups(m, &trace)?;
    let mut by_head = Vec::with_capacity(groups.len());
    let mut accumulates = vec![false; trace.len()];
    for (o, &g) in group_of.iter().enumerate() {
        if g == NONE {
            continue;
        }
        let grp = &groups[g as usize];
        if o == grp.head() {
            by_head.push(g as usize);
        }
        accumulates[o] = o != grp.head() || grp.init.is_some();
    }
    let matmuls = Lists::grouped(groups.len(), |emit| {
        for (o, &g) in group_of.iter().enumerate() {
            if g != NONE {
                emit(g as usize, o);
            }
        }
    });
    let grid = Grid::new(trace.accesses().map(|a| a.rect));
    let forward = cells::forward(&trace, &grid, &group_of, &groups, &by_head);
    let live_end: Vec<usize> = groups
        .iter()
        .zip(&forward.last_needed)
        .map(|(g, n)| n.map_or(g.tail(), |n| g.tail().max(n.saturating_sub(1))))
        .collect();
    let clusters = find_clusters(&groups, &live_end, &by_head);
    Ok(Analysis {
        groups,
        matmuls,
        clusters,
        trace,
        grid,
        forward,
        group_of,
        accumulates,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A group with the given partition, bank and index ranges (one bank wide
    /// per bank listed, zero-region window computed).
    fn grp(
        parts: (i64, i64),
        banks: (i64, i64),
        index: (usize, usize),
        mode: PartitionMode,
    ) -> AccGroup {
        let bank = i64::from(PSUM_BANK_SIZE);
        AccGroup {
            tensor: TensorId(0),
            region: Region {
                p0: parts.0,
                p1: parts.1 + 1,
                b0: 0,
                b1: (banks.1 - banks.0 + 1) * bank,
            },
            init: None,
            untouched: true,
            partitions: parts,
            quadrants: (parts.0 >> 5, parts.1 >> 5),
            bytes: (banks.0 * bank, (banks.1 + 1) * bank - 1),
            banks,
            zr_banks: zero_region_bank_range(banks.0 as u32, banks.1 as u32).unwrap(),
            index,
            mode,
        }
    }

    use PartitionMode::{ColGroup, Quadrant};

    #[test]
    fn interval_overlap_touching_disjoint_nested() {
        assert!(intervals_overlap((0, 3), (3, 5)));
        assert!(intervals_overlap((3, 5), (0, 3)));
        assert!(!intervals_overlap((0, 3), (4, 5)));
        assert!(!intervals_overlap((4, 5), (0, 3)));
        assert!(intervals_overlap((0, 7), (2, 3)));
        assert!(intervals_overlap((2, 3), (0, 7)));
        assert!(intervals_overlap((2, 2), (2, 2)));
    }

    #[test]
    fn zero_region_bank_overlap() {
        let b1 = grp((0, 127), (1, 1), (0, 0), Quadrant);
        let b2 = grp((0, 127), (2, 2), (1, 1), Quadrant);
        let b12 = grp((0, 127), (1, 2), (2, 2), Quadrant);
        let b0 = grp((0, 127), (0, 0), (3, 3), Quadrant);
        assert!(!b1.is_zero_region_bank_overlap(&b2));
        // Banks 1..2 need the window 0..3, which touches both and nests bank 0.
        assert_eq!(b12.zr_banks, (0, 3));
        assert!(b12.is_zero_region_bank_overlap(&b1));
        assert!(b12.is_zero_region_bank_overlap(&b2));
        assert!(b0.is_zero_region_bank_overlap(&b12));
        assert!(!b0.is_zero_region_bank_overlap(&b1));
    }

    #[test]
    fn quadrant_and_col_group_overlap() {
        let lo = grp((0, 63), (0, 0), (0, 0), ColGroup);
        let hi = grp((64, 127), (0, 0), (1, 1), ColGroup);
        let mid = grp((40, 50), (0, 0), (2, 2), Quadrant);
        let touch = grp((63, 63), (0, 0), (3, 3), ColGroup);
        assert!(!lo.is_quadrant_overlap(&hi));
        assert!(!lo.is_col_grp_overlap(&hi));
        assert!(lo.is_col_grp_overlap(&touch));
        assert!(!hi.is_col_grp_overlap(&touch));
        // 40..50 is quadrant 1, which 0..63 (quadrants 0..1) contains.
        assert!(lo.is_quadrant_overlap(&mid));
        // Partitions 32..39 vs 40..50: no exact overlap, same quadrant.
        let q1 = grp((32, 39), (0, 0), (4, 4), ColGroup);
        assert!(!q1.is_col_grp_overlap(&mid));
        assert!(q1.is_quadrant_overlap(&mid));
        // Predicate 4 dispatches on the first group's mode.
        assert!(!q1.is_partition_dim_overlap(&mid));
        assert!(mid.is_partition_dim_overlap(&q1));
        assert!(!lo.is_partition_dim_overlap(&hi));
        assert!(!hi.is_partition_dim_overlap(&lo));
    }

    #[test]
    fn index_and_value_overlap() {
        let a = grp((0, 127), (0, 0), (0, 4), Quadrant);
        let b = grp((0, 127), (0, 0), (4, 6), Quadrant);
        let c = grp((0, 127), (0, 0), (5, 9), Quadrant);
        let d = grp((0, 127), (0, 0), (1, 2), Quadrant);
        assert!(a.is_index_overlap(&b));
        assert!(!a.is_index_overlap(&c));
        assert!(a.is_index_overlap(&d) && d.is_index_overlap(&a));
        assert!(is_value_overlap(&a, &b, 4));
        assert!(!is_value_overlap(&a, &c, 4));
        // a's result is read at ordinal 6 (after c's head 5): live_end 5.
        assert!(is_value_overlap(&a, &c, 5));
        assert!(!is_value_overlap(&c, &a, 9));
    }

    #[test]
    fn clusters_are_connected_components_by_head() {
        // g0 and g2 interleave on bank 0; g1 is on bank 1; g3 reuses bank 0 later.
        let groups = vec![
            grp((0, 127), (0, 0), (0, 4), Quadrant),
            grp((0, 127), (1, 1), (1, 1), Quadrant),
            grp((0, 127), (0, 0), (2, 6), Quadrant),
            grp((0, 127), (0, 0), (8, 9), Quadrant),
        ];
        let by_head = [0, 1, 2, 3];
        let clusters = |live_end: &[usize]| -> Vec<Vec<usize>> {
            find_clusters(&groups, live_end, &by_head)
                .iter()
                .map(<[usize]>::to_vec)
                .collect()
        };
        assert_eq!(clusters(&[4, 1, 6, 9]), vec![vec![0, 2], vec![1], vec![3]]);
        // If g2's result is still read after g3 opens, g3 joins, and the
        // transitive chain pulls all three bank-0 groups together.
        assert_eq!(clusters(&[4, 1, 8, 9]), vec![vec![0, 2, 3], vec![1]]);
    }
}
