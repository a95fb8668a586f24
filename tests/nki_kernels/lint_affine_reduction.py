"""No hazard: affine_range iterations that add onto one PSUM tile (an
associative reduction), in a loop kept whole and in one unrolled (its
iterations differ)."""
import nki
import nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    total = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
    for i in nl.affine_range(4):
        total += nl.load(x[i * 128:(i + 1) * 128, :])
    for i in nl.affine_range(2):
        x_tile = nl.load(x[i * 128:(i + 1) * 128, :])
        if i == 0:
            total += x_tile
        else:
            total += nl.exp(x_tile)
    nl.store(out, value=nl.copy(total))
    return out
