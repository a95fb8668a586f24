"""Seed kernel of the tracer's mutation smoke test: the destination-passing
ISA calls, a PE transpose and a sequential loop carrying a tile."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(q, w):
    d, n = q.shape
    out = nl.ndarray((n, d), dtype=nl.float32, buffer=nl.shared_hbm)
    qs = nl.ndarray((d, n), dtype=q.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=qs, src=q)
    ws = nl.ndarray((d, d), dtype=w.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ws, src=w)
    carry = nl.ndarray((128, d), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=carry, value=0.0)
    for i in nl.sequential_range(n // 128):
        ps = nl.ndarray((128, d), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=ps, stationary=qs[:, nl.ds(i * 128, 128)], moving=ws)
        tp = nl.ndarray((d, 128), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_transpose(dst=tp, data=qs[:, nl.ds(i * 128, 128)])
        nisa.tensor_tensor(dst=carry, data1=carry, data2=ps, op=nl.add)
        nisa.activation(dst=carry, op=nl.exp, data=carry, scale=0.5)
        nisa.dma_copy(dst=out[nl.ds(i * 128, 128), :], src=carry)
    return out
