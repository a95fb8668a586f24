"""Direct PSUM allocation: the kernel places its PSUM tiles itself. Two
accumulators rotate over banks 2 and 3 (`mod_alloc` over a block dimension)
and the transpose tile sits in bank 7 through an allocation callback.
"""
import nki
import nki.compiler as ncc
import nki.isa as nisa
import nki.language as nl


def bank_seven(idx, pdim_size, fdim_size):
    return (7, 0, 0)


@nki.jit
def direct_alloc(x, w):
    K, N = x.shape
    out = nl.ndarray((128, N), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((2, nl.par_dim(128), 512), dtype=nl.float32,
                     buffer=ncc.psum.mod_alloc(base_bank=2, num_bank_tiles=(2,)))
    tp = nl.ndarray((128, 128), dtype=nl.float32, buffer=ncc.psum.alloc(bank_seven))
    w_tile = nl.load(w)
    nisa.nc_transpose(dst=tp, data=w_tile)
    wt = nl.copy(tp, dtype=nl.bfloat16)
    for n in nl.affine_range(N // 512):
        for k in nl.affine_range(K // 128):
            x_tile = nl.load(x[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
            nisa.nc_matmul(dst=acc[n % 2], stationary=wt, moving=x_tile)
        res = nl.copy(acc[n % 2])
        nl.store(out[:, n * 512:(n + 1) * 512], value=res)
    return out
