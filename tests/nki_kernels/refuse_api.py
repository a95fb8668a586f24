"""Refused: a public API the tracer does not model (collectives need other cores)."""
import nki
import nki.collectives as cc
import nki.language as nl


@nki.jit
def kernel(x):
    t = nl.load(x)
    cc.all_reduce(t)
    return t
