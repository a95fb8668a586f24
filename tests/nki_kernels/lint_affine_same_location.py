"""Hazard: the iterations of an affine_range loop all copy into one PSUM tile
(the iterations of a sequential_range loop may)."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(x, sequential=False):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    stage = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    loop = nl.sequential_range if sequential else nl.affine_range
    for i in loop(4):
        x_tile = nl.load(x[i * 128:(i + 1) * 128, :])
        nisa.tensor_copy(dst=stage, src=x_tile)
        nl.store(out, value=nl.copy(stage))
    return out
