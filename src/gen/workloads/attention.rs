//! The `attention` and `attention-bwd` workloads.

use super::{AttentionBwdParams, AttentionParams};
use crate::gen::build::{aff, at, in_range, tiles, Builder, GenError, BANK, K_TILE, TILE_N};
use crate::ir::{Affine, DType, Module, TensorId};

/// `attention`: per query tile, per 512-wide kv tile: scores `S = QKᵀ`
/// ([M tile, 512] f32, one bank), `P = act(S)`, PE transposes (`matmul.t`)
/// of P's square blocks into one bank, and `O += P·V` (the transposed blocks
/// stationary) accumulated over every kv tile; O is evacuated and stored per
/// query tile. Two banks live at most (O, and S or Pᵀ).
pub(crate) fn attention(p: &AttentionParams) -> Result<Module, GenError> {
    let mut b = Builder::new(&p.arch)?;
    let mt = b.m_tile();
    let q_tiles = tiles("seq-q", p.seq_q, mt)?;
    let kv_tiles = tiles("seq-k", p.seq_k, TILE_N)?;
    let d = in_range(
        "d",
        p.d,
        1,
        K_TILE,
        "the head dimension is the QKᵀ contraction",
    )?;
    let blocks = TILE_N / mt;
    let (mt64, d64) = (u64::from(mt), u64::from(d));

    let s = b.psum("s", mt, BANK.into())?;
    let pt = b.psum("pT", mt, BANK.into())?;
    let o = b.psum("o", mt, d64 * 4)?;
    let q_t = b.sbuf("qT", d, u64::from(p.seq_q) * 2, DType::Bf16)?;
    let k_t = b.sbuf("kT", d, u64::from(p.seq_k) * 2, DType::Bf16)?;
    // v block r holds kv rows r*mt.. : [mt partitions, d elements].
    let v = b.sbuf("v", mt, u64::from(p.seq_k / mt) * d64 * 2, DType::Bf16)?;
    let ident = b.sbuf("ident", mt, mt64 * 2, DType::Bf16)?;
    let probs = b.sbuf("p", mt, u64::from(TILE_N) * 2, DType::Bf16)?;
    let probs_t = b.sbuf("pTs", mt, u64::from(TILE_N) * 2, DType::Bf16)?;
    let o_sb = b.sbuf("os", mt, d64 * 4, DType::F32)?;
    let pairs = b.dram_inputs(&[q_t, k_t, v, ident])?;
    let out = b.dram("out", mt, u64::from(q_tiles) * d64 * 4, DType::F32)?;

    b.load_inputs(&pairs);
    let qi = b.open_loop("q", q_tiles);
    let g = b.open_loop("g", kv_tiles);
    b.matmul(
        b.whole(s),
        at(q_t, 0..d, aff(0, &[(qi, mt64 * 2)]), mt64 * 2),
        at(k_t, 0..d, aff(0, &[(g, 1024)]), 1024),
    );
    b.act(b.whole(probs), vec![b.whole(s)]);
    b.transpose_blocks(pt, probs, ident);
    b.act(b.whole(probs_t), vec![b.whole(pt)]);
    let v_tile = aff(0, &[(g, u64::from(blocks) * d64 * 2)]);
    b.block_matmuls(o, probs_t, v, v_tile, d64 * 2);
    b.close_loop();
    b.act(b.whole(o_sb), vec![b.whole(o)]);
    b.store(out, aff(0, &[(qi, d64 * 4)]), o_sb);
    b.close_loop();
    b.finish()
}

/// `attention-bwd`: the PSUM-pressure case. The dVᵀ and dKᵀ accumulators
/// `dv{g}`, `dk{g}` (one bank each per 512-wide kv tile g) accumulate over
/// the whole query loop. Per query tile, for each kv tile g (straight-line,
/// one set of PSUM tiles per g): `act P <- qk{g}`; `dp{g} = dO·Vᵀ`;
/// `act dS <- dp{g}, P`; `dv{g} += dOᵀ·P`; `dk{g} += Qᵀ·dS`; the next kv
/// tile's scores `qk{g+1}` are issued early (software pipelining); `matmul.t`
/// transposes dS's blocks into `dsT{g}`; and `dq += dS·K` (the transposed
/// blocks stationary) accumulates over every kv tile. The last query tile is
/// peeled off the loop, with its own PSUM tiles (suffix `_last`), so that
/// each accumulator is evacuated right after its final matmul.
///
/// At default size the transposes of the middle kv tile see the six
/// accumulators, dq, the prefetched `qk2` and `dsT1`: 9 banks on an 8-bank
/// PSUM. The accumulators are unspillable (each is read right after its last
/// write), while `qk2` is written well before its read, so spilling it
/// relieves the peak.
pub(crate) fn attention_bwd(p: &AttentionBwdParams) -> Result<Module, GenError> {
    let mut b = Builder::new(&p.arch)?;
    let mt = b.m_tile();
    let q_tiles = tiles("seq-q", p.seq_q, mt)?;
    let kv_tiles = tiles("seq-k", p.seq_k, TILE_N)?;
    let d = in_range(
        "d",
        p.d,
        1,
        mt,
        "dKᵀ and dVᵀ put the head dimension on PSUM partitions",
    )?;
    let max_kv = b.arch.num_banks().saturating_sub(2) / 2;
    in_range(
        "seq-k",
        p.seq_k,
        TILE_N,
        max_kv * TILE_N,
        "the dK/dV accumulators and two more banks must fit in PSUM",
    )?;
    let blocks = TILE_N / mt;
    let (mt64, d64, kv64) = (u64::from(mt), u64::from(d), u64::from(kv_tiles));
    let (bank, tile_b) = (u64::from(BANK), u64::from(TILE_N) * 2);

    let dv = b.psum_banks("dv", d, kv_tiles)?;
    let dk = b.psum_banks("dk", d, kv_tiles)?;
    let looped = if q_tiles > 1 {
        Some(BwdTiles::declare(&mut b, "", kv_tiles, d)?)
    } else {
        None
    };
    let last = BwdTiles::declare(&mut b, "_last", kv_tiles, d)?;
    let seq_q2 = u64::from(p.seq_q) * 2;
    let seq_k2 = u64::from(p.seq_k) * 2;
    let q_t = b.sbuf("qT", d, seq_q2, DType::Bf16)?;
    // Row-major tiles: tile r holds rows r*mt.. as [mt partitions, d elements].
    let q = b.sbuf("q", mt, u64::from(q_tiles) * d64 * 2, DType::Bf16)?;
    let k_t = b.sbuf("kT", d, seq_k2, DType::Bf16)?;
    let k = b.sbuf("k", mt, u64::from(p.seq_k / mt) * d64 * 2, DType::Bf16)?;
    let v_t = b.sbuf("vT", d, seq_k2, DType::Bf16)?;
    let do_t = b.sbuf("doT", d, seq_q2, DType::Bf16)?;
    let d_o = b.sbuf("do", mt, u64::from(q_tiles) * d64 * 2, DType::Bf16)?;
    let ident = b.sbuf("ident", mt, mt64 * 2, DType::Bf16)?;
    let probs = b.sbuf("p", mt, tile_b, DType::Bf16)?;
    let ds = b.sbuf("ds", mt, tile_b, DType::Bf16)?;
    let ds_ts = b.sbuf("dsTs", mt, tile_b, DType::Bf16)?;
    let dq_sb = b.sbuf("dqs", mt, d64 * 4, DType::F32)?;
    let dv_sb = b.sbuf("dvs", d, kv64 * bank, DType::F32)?;
    let dk_sb = b.sbuf("dks", d, kv64 * bank, DType::F32)?;
    let pairs = b.dram_inputs(&[q_t, q, k_t, k, v_t, do_t, d_o, ident])?;
    let dq_out = b.dram("dq_out", mt, u64::from(q_tiles) * d64 * 4, DType::F32)?;
    let dv_out = b.dram("dv_out", d, kv64 * bank, DType::F32)?;
    let dk_out = b.dram("dk_out", d, kv64 * bank, DType::F32)?;

    // One query tile `qi` (a loop variable or the peeled last index); with
    // `evacuate`, each accumulator is stored to SBUF after its matmul.
    let q_tile = |b: &mut Builder, qi: &Affine, tiles: &BwdTiles, evacuate: bool| {
        let q_rows = |t| at(t, 0..d, scale(qi, mt64 * 2), mt64 * 2);
        let q_block = |t| at(t, 0..mt, scale(qi, d64 * 2), d64 * 2);
        let kv_cols = |t, g: u32| at(t, 0..d, aff(u64::from(g) * 1024, &[]), 1024);
        let slot = |t, g: u32| at(t, 0..d, aff(u64::from(g) * bank, &[]), bank);
        b.matmul(b.whole(tiles.qk[0]), q_rows(q_t), kv_cols(k_t, 0));
        for g in 0..kv_tiles {
            let gi = g as usize;
            b.act(b.whole(probs), vec![b.whole(tiles.qk[gi])]);
            b.matmul(b.whole(tiles.dp[gi]), q_rows(do_t), kv_cols(v_t, g));
            b.act(b.whole(ds), vec![b.whole(tiles.dp[gi]), b.whole(probs)]);
            for (acc, rows, src, out) in [(dv[gi], d_o, probs, dv_sb), (dk[gi], q, ds, dk_sb)] {
                b.matmul(b.whole(acc), q_block(rows), b.whole(src));
                if evacuate {
                    b.act(slot(out, g), vec![b.whole(acc)]);
                }
            }
            if g + 1 < kv_tiles {
                b.matmul(b.whole(tiles.qk[gi + 1]), q_rows(q_t), kv_cols(k_t, g + 1));
            }
            b.transpose_blocks(tiles.ds_t[gi], ds, ident);
            b.act(b.whole(ds_ts), vec![b.whole(tiles.ds_t[gi])]);
            let k_tile = aff(u64::from(g * blocks) * d64 * 2, &[]);
            b.block_matmuls(tiles.dq, ds_ts, k, k_tile, d64 * 2);
        }
        b.act(b.whole(dq_sb), vec![b.whole(tiles.dq)]);
        b.store(dq_out, scale(qi, d64 * 4), dq_sb);
    };

    b.load_inputs(&pairs);
    if let Some(tiles) = &looped {
        let i = b.open_loop("i", q_tiles - 1);
        q_tile(&mut b, &Affine::var(i, 1), tiles, false);
        b.close_loop();
    }
    q_tile(
        &mut b,
        &Affine::constant(i64::from(q_tiles - 1)),
        &last,
        true,
    );
    b.dma(b.whole(dv_out), b.whole(dv_sb));
    b.dma(b.whole(dk_out), b.whole(dk_sb));
    b.finish()
}

/// The PSUM tiles of one query tile of [`attention_bwd`]: scores, dP and
/// transposed dS per kv tile, and the dQ accumulator.
struct BwdTiles {
    qk: Vec<TensorId>,
    dp: Vec<TensorId>,
    ds_t: Vec<TensorId>,
    dq: TensorId,
}

impl BwdTiles {
    /// Declares `qk{g}{suffix}`, `dp{g}{suffix}`, `dsT{g}{suffix}` per kv
    /// tile g, then `dq{suffix}`.
    fn declare(b: &mut Builder, suffix: &str, kv_tiles: u32, d: u32) -> Result<BwdTiles, GenError> {
        let mt = b.m_tile();
        let (mut qk, mut dp, mut ds_t) = (Vec::new(), Vec::new(), Vec::new());
        for g in 0..kv_tiles {
            qk.push(b.psum(format!("qk{g}{suffix}"), mt, BANK.into())?);
            dp.push(b.psum(format!("dp{g}{suffix}"), mt, BANK.into())?);
            ds_t.push(b.psum(format!("dsT{g}{suffix}"), mt, BANK.into())?);
        }
        let dq = b.psum(format!("dq{suffix}"), mt, u64::from(d) * 4)?;
        Ok(BwdTiles { qk, dp, ds_t, dq })
    }
}

/// `k·a`.
fn scale(a: &Affine, k: u64) -> Affine {
    let mut out = Affine::constant(a.constant * k as i64);
    for &(v, c) in &a.terms {
        out.add_term(v, c * k as i64);
    }
    out
}
