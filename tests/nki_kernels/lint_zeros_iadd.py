"""No hazard: the accumulator is zeroed by nl.zeros and the matmuls add onto it
with +=, the accumulation pattern of the NKI tutorials."""
import nki
import nki.language as nl


@nki.jit
def kernel(lhsT, rhs):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    res_psum = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
    for k in nl.affine_range(2):
        lhsT_tile = nl.load(lhsT[k * 128:(k + 1) * 128, :])
        rhs_tile = nl.load(rhs[k * 128:(k + 1) * 128, :])
        res_psum += nl.matmul(lhsT_tile, rhs_tile, transpose_x=True)
    nl.store(out, value=nl.copy(res_psum))
    return out
