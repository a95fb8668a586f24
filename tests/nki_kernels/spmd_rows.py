"""An SPMD kernel: each program adds one 128-row tile of a [256, 1024] pair."""
import nki
import nki.language as nl


@nki.jit
def kernel(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    rows = nl.program_id(0) * 128
    cols = nl.program_id(1) * 512
    i_p = rows + nl.arange(128)[:, None]
    i_f = cols + nl.arange(512)[None, :]
    t = nl.add(nl.load(a[i_p, i_f]), nl.load(b[i_p, i_f]))
    nl.store(out[i_p, i_f], value=t)
    return out
