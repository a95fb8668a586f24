"""Breaks the Tensor Engine layout: a stationary tile of 256 columns."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(w, x):
    s = nl.load(w)
    m = nl.load(x)
    return nisa.nc_matmul(s, m)
