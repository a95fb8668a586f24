//! The `qkv` workload.

use super::QkvParams;
use crate::gen::build::{aff, at, in_range, tiles, Builder, GenError, BANK, K_TILE};
use crate::ir::{DType, Module};

/// `qkv`: per token tile, `groups` [M tile, 512] accumulators (one bank
/// each) interleaved matmul by matmul over a chain of H/128 contraction
/// chunks, then evacuated side by side and stored. Needs `groups` banks.
pub(crate) fn qkv(p: &QkvParams) -> Result<Module, GenError> {
    let mut b = Builder::new(&p.arch)?;
    let mt = b.m_tile();
    let t_tiles = tiles("tokens", p.tokens, mt)?;
    let chain = tiles("hidden", p.hidden, K_TILE)?;
    let banks = b.arch.num_banks();
    let groups = in_range(
        "groups",
        p.groups,
        1,
        banks,
        "every group holds a bank at once",
    )?;
    let (mt64, tok, grp) = (u64::from(mt), u64::from(p.tokens), u64::from(groups));
    let bank = u64::from(BANK);

    let accs = b.psum_banks("qkv", mt, groups)?;
    // xT chunk c: hidden rows c*128.. as [128 partitions, tokens elements].
    let x_t = b.sbuf("xT", K_TILE, u64::from(chain) * tok * 2, DType::Bf16)?;
    // w chunk c, group g: [128 partitions, 512 output columns].
    let w = b.sbuf("w", K_TILE, u64::from(chain) * grp * 1024, DType::Bf16)?;
    let y = b.sbuf("y", mt, grp * bank, DType::F32)?;
    let inputs = b.dram_inputs(&[x_t, w])?;
    let out = b.dram("out", mt, u64::from(t_tiles) * grp * bank, DType::F32)?;

    b.load_inputs(&inputs);
    let t = b.open_loop("t", t_tiles);
    let c = b.open_loop("c", chain);
    for (g, &acc) in accs.iter().enumerate() {
        b.matmul(
            b.whole(acc),
            at(
                x_t,
                0..K_TILE,
                aff(0, &[(t, mt64 * 2), (c, tok * 2)]),
                mt64 * 2,
            ),
            at(w, 0..K_TILE, aff(g as u64 * 1024, &[(c, grp * 1024)]), 1024),
        );
    }
    b.close_loop();
    b.evacuate_side_by_side(y, &accs);
    b.store(out, aff(0, &[(t, grp * bank)]), y);
    b.close_loop();
    b.finish()
}
