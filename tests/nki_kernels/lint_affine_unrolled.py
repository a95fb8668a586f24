"""Hazard: an affine_range loop whose iterations differ (so it is unrolled) and
all write one PSUM tile; and a tile allocated in each iteration, which is not shared."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray((128, 2048), dtype=nl.float32, buffer=nl.shared_hbm)
    stage = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    for i in nl.affine_range(2):
        x_tile = nl.load(x[i * 128:(i + 1) * 128, :])
        own = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
        nisa.tensor_copy(dst=own, src=x_tile)
        if i == 0:
            nisa.memset(dst=stage, value=0.0)
        else:
            nisa.tensor_copy(dst=stage, src=x_tile)
        nl.store(out[:, i * 512:(i + 1) * 512], value=nl.copy(stage))
        nl.store(out[:, 1024 + i * 512:1024 + (i + 1) * 512], value=nl.copy(own))
    return out
