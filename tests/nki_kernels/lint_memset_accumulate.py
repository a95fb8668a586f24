"""Hazard on trn1: the accumulator is zeroed by nl.zeros (a memset) and the
matmuls accumulate onto it."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(w, x):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
    w_tile = nl.load(w)
    for k in nl.affine_range(2):
        x_tile = nl.load(x[k * 128:(k + 1) * 128, :])
        acc += nisa.nc_matmul(w_tile, x_tile)
    nl.store(out, value=nl.copy(acc))
    return out
