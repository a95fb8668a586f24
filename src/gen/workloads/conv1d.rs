//! The `conv1d` workload.

use super::Conv1dParams;
use crate::gen::build::{aff, at, in_range, tiles, Builder, GenError, BANK, K_TILE, TILE_N};
use crate::ir::{DType, Module};

/// `conv1d`: output tiles of 512 positions are assigned round-robin to
/// `accumulators` PSUM tiles; each round accumulates every accumulator over
/// a chain of C_in/128 chunks × taps (interleaved across accumulators at each
/// step; tap t reads the input window shifted by t), then evacuates them.
pub(crate) fn conv1d(p: &Conv1dParams) -> Result<Module, GenError> {
    let mut b = Builder::new(&p.arch)?;
    let mt = b.m_tile();
    let banks = b.arch.num_banks();
    let accs_n = in_range(
        "accumulators",
        p.accumulators,
        1,
        banks,
        "every accumulator holds a bank at once",
    )?;
    let chunks = tiles("c-in", p.c_in, K_TILE)?;
    let o_tiles = tiles("c-out", p.c_out, mt)?;
    let taps = in_range("taps", p.taps, 1, u32::MAX, "a filter has at least one tap")?;
    let rounds = tiles("length", p.length, TILE_N * accs_n)?;
    let (mt64, co, a64) = (u64::from(mt), u64::from(p.c_out), u64::from(accs_n));
    let (len, bank) = (u64::from(p.length), u64::from(BANK));
    // Input positions with the taps - 1 halo.
    let padded = len + u64::from(taps) - 1;

    let accs = b.psum_banks("acc", mt, accs_n)?;
    // x chunk c: channels c*128.. as [128 partitions, padded positions].
    let x = b.sbuf("x", K_TILE, u64::from(chunks) * padded * 2, DType::Bf16)?;
    // w tap t, chunk c: [128 input channels, c_out output channels].
    let w = b.sbuf("w", K_TILE, u64::from(taps * chunks) * co * 2, DType::Bf16)?;
    let y = b.sbuf("y", mt, a64 * bank, DType::F32)?;
    let inputs = b.dram_inputs(&[x, w])?;
    let out = b.dram("out", mt, u64::from(o_tiles) * len * 4, DType::F32)?;

    b.load_inputs(&inputs);
    let o = b.open_loop("o", o_tiles);
    let r = b.open_loop("r", rounds);
    let c = b.open_loop("c", chunks);
    let t = b.open_loop("t", taps);
    for (a, &acc) in accs.iter().enumerate() {
        let w_off = aff(
            0,
            &[(t, u64::from(chunks) * co * 2), (c, co * 2), (o, mt64 * 2)],
        );
        let x_off = aff(a as u64 * 1024, &[(c, padded * 2), (r, a64 * 1024), (t, 2)]);
        b.matmul(
            b.whole(acc),
            at(w, 0..K_TILE, w_off, mt64 * 2),
            at(x, 0..K_TILE, x_off, 1024),
        );
    }
    b.close_loop();
    b.close_loop();
    b.evacuate_side_by_side(y, &accs);
    b.store(out, aff(0, &[(o, len * 4), (r, a64 * bank)]), y);
    b.close_loop();
    b.close_loop();
    b.finish()
}
