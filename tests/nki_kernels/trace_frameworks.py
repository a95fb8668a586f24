"""Kernels written against the frameworks and names around NKI: the older
SDK's torch_neuronx decorator, an undocumented nki submodule (refused where
the kernel uses what it would define, caught where the kernel catches it),
an optional HBM argument tested for presence, operators passed in."""
from torch_neuronx import nki_jit
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa
from neuronxcc.nki.language.constants import sizeinbytes

try:
    from neuronxcc.nki._private_helpers import fast_path
except ImportError:
    fast_path = None


@nki_jit
def framework_jit(x, out):
    nl.store(out, value=nl.exp(nl.load(x)))


def uses_private(x):
    width = 1024 // sizeinbytes(x.dtype)
    return nl.load(x[:, 0:width])


def caught(x):
    assert fast_path is None
    return nl.load(x)


def optional_bias(x, bias=None):
    t = nl.load(x)
    if bias:
        t = nl.add(t, nl.load(bias))
    return t


def operator_argument(x, op):
    return nisa.tensor_scalar(nl.load(x), op0=op, operand0=2.0)
