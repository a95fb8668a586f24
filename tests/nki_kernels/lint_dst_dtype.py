"""Hazard on trn1: a bf16 matmul destination (f32 only before NeuronCore-v4)."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(w, x):
    out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    acc = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.psum)
    nisa.nc_matmul(dst=acc, stationary=nl.load(w), moving=nl.load(x))
    nl.store(out, value=nl.copy(acc))
    return out
