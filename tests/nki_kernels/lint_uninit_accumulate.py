"""Hazard: every matmul asks to accumulate, the first one onto PSUM nothing wrote."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(w, x):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    w_tile = nl.load(w)
    for k in nl.affine_range(2):
        x_tile = nl.load(x[k * 128:(k + 1) * 128, :])
        nisa.nc_matmul(dst=acc, stationary=w_tile, moving=x_tile, accumulate=True)
    nl.store(out, value=nl.copy(acc))
    return out
