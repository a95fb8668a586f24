"""Refused: a loop whose trip count is a tile's value."""
import nki
import nki.language as nl


@nki.jit
def kernel(x, count):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    n = nl.load(count)
    for i in nl.sequential_range(n):
        nl.store(out, value=nl.load(x))
    return out
