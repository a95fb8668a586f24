"""Kernels that fail in the ways a kernel can: each names its own line."""
import sys

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def exits(x):
    sys.exit(3)


@nki.jit
def nan_fill(x):
    return nl.full((128, 8), float("nan"), nl.float32)


@nki.jit
def nan_memset(x):
    t = nl.ndarray((128, 8), dtype=nl.float32)
    nisa.memset(dst=t, value=float("nan"))
    return t


@nki.jit
def negative_shape(x):
    return nl.zeros((-1, 8), dtype=nl.float32)


@nki.jit
def forever(x):
    while True:
        pass


@nki.jit
def hungry(x):
    hoard = []
    while True:
        hoard.append(bytearray(1 << 24))


@nki.jit(platform_target=["trn2"])
def listed_target(x):
    return nl.load(x)


@nki.jit
def missing_op(x):
    return nisa.activation(data=nl.load(x))


@nki.jit
def misspelt(x):
    return nl.zeros((128, 8), dtype=nl.float32, bufer=nl.psum)


@nki.jit
def bad_tile_position(w, x):
    return nisa.nc_matmul(nl.load(w), nl.load(x), tile_position=(32, 0), tile_size=(64, 128))
