"""Two 64-row matmuls in the two halves of the PE array (row tiling)."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(w, x):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    for half in nl.affine_range(2):
        s = nl.load(w[half * 64:(half + 1) * 64, :])
        m = nl.load(x[half * 64:(half + 1) * 64, :])
        nisa.nc_matmul(acc[half * 64:(half + 1) * 64, :], s[:, 0:64], m,
                       tile_position=(half * 64, 0), tile_size=(64, 128))
    nl.store(out, value=nl.copy(acc))
    return out
