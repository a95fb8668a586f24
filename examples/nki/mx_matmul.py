"""MX matmul on trn3 (NeuronCore-v4): MXFP8 operands, packed four to an
element, with their scales; the result accumulates over K into a bf16 PSUM
tile (gen4 allows a bf16 matmul destination).
"""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit(platform_target="trn3")
def mx_matmul(a, b, a_scale, b_scale):
    K, M = a.shape
    _, N = b.shape
    out = nl.ndarray((M, N), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    acc = nl.ndarray((M, N), dtype=nl.bfloat16, buffer=nl.psum)
    for k in nl.affine_range(K // 128):
        a_tile = nl.load(a[k * 128:(k + 1) * 128, :])
        b_tile = nl.load(b[k * 128:(k + 1) * 128, :])
        sa = nl.load(a_scale[k * 16:(k + 1) * 16, :])
        sb = nl.load(b_scale[k * 16:(k + 1) * 16, :])
        nisa.nc_matmul_mx(dst=acc, stationary=a_tile, moving=b_tile, stationary_scale=sa, moving_scale=sb)
    res = nl.copy(acc)
    nl.store(out, value=res)
    return out
