//! `order_column_tiled_mms` (SPEC §4.2, seed 004 §order_column_tiled_mms,
//! BackendPass order 91).
//!
//! A column-tiled matmul is a plain `matmul` whose tile (K×M) uses all 128 PE
//! rows and `1 ≤ M < PE cols` columns. Per block, a group opens at a
//! column-tiled matmul at `pos=0,0`, extends over the following column-tiled
//! matmuls with the same tile shape, and closes at anything else (which is
//! then re-examined as a new start) and at the block's end. Each group of two
//! or more yields the ordered edges `group[i] → group[i−1]`.

use super::error::MatmulError;
use crate::arch::Arch;
use crate::ir::{InstId, Matmul, MatmulKind, Module, Stmt};

/// The tile shape `(K, M)`: PE rows and columns the matmul uses.
pub(crate) fn tile(mm: &Matmul) -> (i64, i64) {
    (mm.stationary.part_extent(), mm.dst.part_extent())
}

/// The seed's `isColumnTiledMatmul`: plain `matmul`, 128 rows, a partial column slice.
pub fn is_column_tiled(mm: &Matmul, arch: &Arch) -> bool {
    let (k, cols) = tile(mm);
    mm.kind == MatmulKind::Plain
        && match (u32::try_from(k), u32::try_from(cols)) {
            (Ok(k), Ok(cols)) => arch.is_column_tile(k, cols),
            _ => false,
        }
}

/// The seed's `isStartOfColumnTiledGroup`: column-tiled at `pos=0,0`.
pub(crate) fn is_start_of_column_tiled_group(mm: &Matmul, arch: &Arch) -> bool {
    is_column_tiled(mm, arch) && mm.pos == (0, 0)
}

/// The column-tiled groups of a loop-free program, in program order
/// (including groups of one).
pub fn column_tiled_groups(m: &Module, arch: &Arch) -> Result<Vec<Vec<InstId>>, MatmulError> {
    if m.has_loops() {
        return Err(MatmulError::HasLoops);
    }
    let mut groups = Vec::new();
    for b in &m.blocks {
        let mut group: Vec<InstId> = Vec::new();
        let mut key = (0, 0);
        for s in &b.body {
            let Stmt::Inst(id) = *s else { continue };
            let mm = m.inst(id).kind.as_matmul();
            if !group.is_empty() {
                if mm.is_some_and(|mm| is_column_tiled(mm, arch) && tile(mm) == key) {
                    group.push(id);
                    continue;
                }
                groups.push(std::mem::take(&mut group));
            }
            if let Some(mm) = mm.filter(|mm| is_start_of_column_tiled_group(mm, arch)) {
                key = tile(mm);
                group.push(id);
            }
        }
        if !group.is_empty() {
            groups.push(group);
        }
    }
    Ok(groups)
}

/// The ordered edges `(later, earlier)` of a loop-free program (SPEC §4.2).
pub fn order_column_tiled_mms(
    m: &Module,
    arch: &Arch,
) -> Result<Vec<(InstId, InstId)>, MatmulError> {
    Ok(column_tiled_groups(m, arch)?
        .iter()
        .flat_map(|g| g.windows(2).map(|w| (w[1], w[0])))
        .collect())
}
