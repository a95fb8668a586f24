"""Kernels the psum package's tests trace (written for these tests)."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def k_sum(a_t, b):
    """out = a_t.T @ b for a_t [K, 128], b [K, 512]: K/128 matmuls into one PSUM tile."""
    k_total = a_t.shape[0]
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    for k in nl.affine_range(k_total // 128):
        a_tile = nl.load(a_t[k * 128:(k + 1) * 128, :])
        b_tile = nl.load(b[k * 128:(k + 1) * 128, :])
        nisa.nc_matmul(dst=acc, stationary=a_tile, moving=b_tile)
    nl.store(out, value=nl.copy(acc))
    return out


@nki.jit
def first_accumulates(w, x):
    """A hazard: the first matmul asks to accumulate onto PSUM nothing wrote."""
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    w_tile = nl.load(w)
    x_tile = nl.load(x)
    nisa.nc_matmul(dst=acc, stationary=w_tile, moving=x_tile, accumulate=True)
    nl.store(out, value=nl.copy(acc))
    return out


@nki.jit
def live_tiles(w, x, tiles=4):
    """`tiles` one-bank PSUM tiles live at once: on trn1's 8 banks, 9 spill one."""
    out = nl.ndarray((128, 512 * tiles), dtype=nl.float32, buffer=nl.shared_hbm)
    w_tile = nl.load(w)
    accs = []
    for t in range(tiles):
        acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=acc, stationary=w_tile, moving=nl.load(x[:, t * 512:(t + 1) * 512]))
        accs.append(acc)
    for t in range(tiles):
        nl.store(out[:, t * 512:(t + 1) * 512], value=nl.copy(accs[t]))
    return out


def refuses(x):
    """Raises at its second line."""
    rows = x.shape[0]
    raise ValueError("rows=%d is not supported" % rows)


def spins(x):
    """Never returns."""
    while True:
        pass
