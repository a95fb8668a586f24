"""Kernels that print, replace or close the standard streams: they trace."""
import io
import os
import sys

import nki
import nki.language as nl


@nki.jit
def prints(x):
    print("debug", x.shape)
    return nl.load(x)


@nki.jit
def replaces_stdout(x):
    sys.stdout = io.StringIO()
    return nl.load(x)


@nki.jit
def closes_stdout(x):
    sys.stdout.close()
    return nl.load(x)


@nki.jit
def closes_fd1(x):
    os.close(1)
    return nl.load(x)


class Callable:
    def __call__(self, x):
        return nl.load(x)


callable_object = Callable()
