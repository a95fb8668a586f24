"""Blocked matmul for trn2: each M tile keeps BLOCKS PSUM accumulators live
across the whole K loop (a block tile: one [128, 512] tile per block), using
the value-returning matmul with `+=`.
"""
from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit(platform_target="trn2")
def blocked_matmul(lhsT, rhs, BLOCKS=4):
    K, M = lhsT.shape
    _, N = rhs.shape
    TK, TM, TN = 128, 128, 512
    assert N == BLOCKS * TN, "N must be BLOCKS * 512"
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // TM):
        acc = nl.ndarray((BLOCKS, nl.par_dim(TM), TN), dtype=nl.float32, buffer=nl.psum)
        for k in nl.affine_range(K // TK):
            lhs = nl.load(lhsT[k * TK:(k + 1) * TK, m * TM:(m + 1) * TM])
            for b in nl.affine_range(BLOCKS):
                rhs_tile = nl.load(rhs[k * TK:(k + 1) * TK, b * TN:(b + 1) * TN])
                acc[b] += nisa.nc_matmul(lhs, rhs_tile)
        for b in nl.affine_range(BLOCKS):
            res = nl.copy(acc[b], dtype=nl.float32)
            nl.store(out[m * TM:(m + 1) * TM, b * TN:(b + 1) * TN], value=res)
    return out
