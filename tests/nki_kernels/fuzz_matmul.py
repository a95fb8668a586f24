"""Seed kernel of the tracer's mutation smoke test: a tiled matmul that
accumulates in PSUM and copies out through SBUF."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(a, b):
    K, M = a.shape
    _, N = b.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // 128):
        acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
        for k in nl.affine_range(K // 128):
            lhs = nl.load(a[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
            rhs = nl.load(b[k * 128:(k + 1) * 128, 0:512])
            acc += nisa.nc_matmul(lhs, rhs)
        res = nl.copy(acc, dtype=nl.float32)
        nl.store(out[m * 128:(m + 1) * 128, 0:N], value=res)
    return out
