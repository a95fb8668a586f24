"""Seed kernel of the tracer's mutation smoke test: masked row tiles,
index arithmetic, a reduction and a broadcast."""
import nki
import nki.language as nl


@nki.jit
def kernel(x, g):
    rows, cols = x.shape
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(cols)[None, :]
    gt = nl.load(g.reshape((1, cols))[nl.arange(1)[:, None], jf])
    for t in nl.affine_range((rows + 127) // 128):
        inside = t * 128 + ip < rows
        v = nl.load(x[t * 128 + ip, jf], mask=inside)
        s = nl.sum(nl.square(v), axis=[1], keepdims=True, mask=inside)
        r = nl.rsqrt(s / cols + 1e-5)
        y = nl.multiply(nl.multiply(v, r), gt.broadcast_to((128, cols)), mask=inside)
        nl.store(out[t * 128 + ip, jf], value=y, mask=inside)
    return out
