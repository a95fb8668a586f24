//! The `gemm` workload.

use super::GemmParams;
use crate::gen::build::{aff, at, tiles, Builder, GenError, BANK, K_TILE, TILE_N};
use crate::ir::{DType, Module};

/// `gemm M N K`: loops over M tiles, 512-column N tiles (one bank each) and
/// K chunks of 128 partitions; the K loop accumulates into one PSUM tile,
/// which is evacuated and stored per (M, N) tile. One bank of PSUM.
pub(crate) fn gemm(p: &GemmParams) -> Result<Module, GenError> {
    let mut b = Builder::new(&p.arch)?;
    let mt = b.m_tile();
    let m_tiles = tiles("m", p.m, mt)?;
    let n_tiles = tiles("n", p.n, TILE_N)?;
    let k_tiles = tiles("k", p.k, K_TILE)?;
    let (m, n) = (u64::from(p.m), u64::from(p.n));
    let kt = u64::from(k_tiles);

    let acc = b.psum("acc", mt, BANK.into())?;
    // lhsT chunk c holds K rows c*128.. of Aᵀ: [128 partitions, M elements].
    let lhs_t = b.sbuf("lhsT", K_TILE, kt * m * 2, DType::Bf16)?;
    let rhs = b.sbuf("rhs", K_TILE, kt * n * 2, DType::Bf16)?;
    let res = b.sbuf("res", mt, BANK.into(), DType::F32)?;
    let inputs = b.dram_inputs(&[lhs_t, rhs])?;
    let out = b.dram("out", mt, u64::from(m_tiles) * n * 4, DType::F32)?;

    b.load_inputs(&inputs);
    let mi = b.open_loop("m", m_tiles);
    let ni = b.open_loop("n", n_tiles);
    let ki = b.open_loop("k", k_tiles);
    let mtb = u64::from(mt) * 2;
    b.matmul(
        b.whole(acc),
        at(lhs_t, 0..K_TILE, aff(0, &[(mi, mtb), (ki, m * 2)]), mtb),
        at(rhs, 0..K_TILE, aff(0, &[(ni, 1024), (ki, n * 2)]), 1024),
    );
    b.close_loop();
    b.act(b.whole(res), vec![b.whole(acc)]);
    b.store(out, aff(0, &[(mi, n * 4), (ni, BANK.into())]), res);
    b.close_loop();
    b.close_loop();
    b.finish()
}
