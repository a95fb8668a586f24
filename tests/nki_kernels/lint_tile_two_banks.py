"""No hazard: one PSUM tile of 1024 f32 per partition spans two banks, and each
matmul writes one of them."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(w, x):
    out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.psum)
    w_tile = nl.load(w)
    for n in nl.affine_range(2):
        x_tile = nl.load(x[:, n * 512:(n + 1) * 512])
        nisa.nc_matmul(dst=acc[:, n * 512:(n + 1) * 512], stationary=w_tile, moving=x_tile)
    nl.store(out, value=nl.copy(acc))
    return out
