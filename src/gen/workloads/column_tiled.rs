//! The `column-tiled` workload.

use super::ColumnTiledParams;
use crate::gen::build::{aff, at, in_range, tiles, Builder, GenError, BANK, K_TILE, TILE_N};
use crate::ir::{DType, MatmulKind, Module};

/// `column-tiled`: per 512-column output tile, `tiles` column-tiled matmuls
/// (tile 128 × cols, at PE positions `0, i*cols`) write the partition slices
/// of one bank side by side, accumulated over K chunks of 128; the bank is
/// evacuated and stored. Each N tile's matmuls form column-tiled groups (SPEC §4.2).
pub(crate) fn column_tiled(p: &ColumnTiledParams) -> Result<Module, GenError> {
    let mut b = Builder::new(&p.arch)?;
    let mt = b.m_tile();
    let pe_cols = b.arch.pe().cols;
    let cols = in_range(
        "cols",
        p.cols,
        1,
        pe_cols - 1,
        "a column tile is narrower than the PE array",
    )?;
    let n_tiles = in_range(
        "tiles",
        p.tiles,
        1,
        mt / cols,
        "the tiles must fit the PE columns and PSUM partitions",
    )?;
    let n_blocks = tiles("n", p.n, TILE_N)?;
    let k_tiles = tiles("k", p.k, K_TILE)?;
    let m = cols * n_tiles;
    let (m64, n, cb) = (u64::from(m), u64::from(p.n), u64::from(cols) * 2);

    let acc = b.psum("acc", m, BANK.into())?;
    // w chunk c: [128 partitions, m columns], column tile i at i*cols.
    let w = b.sbuf("w", K_TILE, u64::from(k_tiles) * m64 * 2, DType::Bf16)?;
    let x = b.sbuf("x", K_TILE, u64::from(k_tiles) * n * 2, DType::Bf16)?;
    let y = b.sbuf("y", m, BANK.into(), DType::F32)?;
    let inputs = b.dram_inputs(&[w, x])?;
    let out = b.dram("out", m, n * 4, DType::F32)?;

    b.load_inputs(&inputs);
    let nb = b.open_loop("n", n_blocks);
    let k = b.open_loop("k", k_tiles);
    for i in 0..n_tiles {
        b.matmul_at(
            MatmulKind::Plain,
            at(acc, i * cols..(i + 1) * cols, aff(0, &[]), BANK.into()),
            at(w, 0..K_TILE, aff(u64::from(i) * cb, &[(k, m64 * 2)]), cb),
            at(x, 0..K_TILE, aff(0, &[(k, n * 2), (nb, 1024)]), 1024),
            (0, i * cols),
        );
    }
    b.close_loop();
    b.act(b.whole(y), vec![b.whole(acc)]);
    b.store(out, aff(0, &[(nb, BANK.into())]), y);
    b.close_loop();
    b.finish()
}
