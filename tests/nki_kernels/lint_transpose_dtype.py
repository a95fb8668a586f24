"""A PE transpose of bf16 data into a bf16 PSUM tile: the transpose mode of
NeuronCore-v3 writes it, NeuronCore-v2 writes f32 only."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.psum)
    nisa.nc_transpose(dst=t, data=nl.load(x))
    nl.store(out, value=nl.copy(t))
    return out
