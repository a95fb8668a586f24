"""Hazard on trn1: one matmul writes 1024 f32 per partition, two banks."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(w, x):
    out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=acc, stationary=nl.load(w), moving=nl.load(x))
    nl.store(out, value=nl.copy(acc))
    return out
