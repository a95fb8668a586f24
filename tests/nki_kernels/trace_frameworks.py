"""Kernels written against the frameworks and names around NKI: the older
SDK's torch_neuronx decorator, nki.language.constants, an undocumented nki
submodule (caught where the kernel catches it),
an optional HBM argument tested for presence, operators passed in, a
running maximum that starts at minus infinity."""
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


def element_sizes(x):
    width = 16 // sizeinbytes(x.dtype)
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


def running_max(x):
    m = nl.full((128, 1), float("-inf"), dtype=nl.float32)
    for i in nl.sequential_range(2):
        m[...] = nl.maximum(m, nl.max(nl.load(x[:, i * 4:(i + 1) * 4]), axis=1, keepdims=True))
    return m
