"""Direct allocation gone wrong: both blocks of the accumulator tile are
placed in bank 1 (mod_alloc with one bank tile) but are live together."""
import nki
import nki.compiler as ncc
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(w, x):
    out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((2, nl.par_dim(128), 512), dtype=nl.float32,
                     buffer=ncc.psum.mod_alloc(base_bank=1, num_bank_tiles=(1,)))
    w_tile = nl.load(w)
    for b in nl.affine_range(2):
        nisa.nc_matmul(dst=acc[b], stationary=w_tile, moving=nl.load(x[:, b * 512:(b + 1) * 512]))
    res = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.sbuf)
    for b in nl.affine_range(2):
        nisa.tensor_copy(dst=res[:, b * 512:(b + 1) * 512], src=acc[b])
    nl.store(out, value=res)
    return out
