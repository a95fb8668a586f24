"""Refused: an API the tracer does not implement."""
import nki
import nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load_transpose2d(x)
    nl.store(out, value=t)
    return out
