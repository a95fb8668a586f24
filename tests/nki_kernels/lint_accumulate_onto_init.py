"""Hazard on NeuronCore-v2 and -v3: the accumulator is initialised by a memset
(or a copy of a bias) and every matmul asks accumulate=True; with
overwrite_first the first matmul overwrites instead (accumulate=False)."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(w, x, bias, init="memset", overwrite_first=False):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    if init == "memset":
        nisa.memset(dst=acc, value=0.0)
    else:
        nisa.tensor_copy(dst=acc, src=nl.load(bias))
    w_tile = nl.load(w)
    for k in nl.affine_range(2):
        x_tile = nl.load(x[k * 128:(k + 1) * 128, :])
        asked = k > 0 if overwrite_first else True
        nisa.nc_matmul(dst=acc, stationary=w_tile, moving=x_tile, accumulate=asked)
    nl.store(out, value=nl.copy(acc))
    return out
