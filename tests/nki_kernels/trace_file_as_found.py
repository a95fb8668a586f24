"""A kernel file as found in the wild: a missing framework, type annotations,
module-level code that runs the kernel on host data."""
import torch_neuron_missing as torch
from neuronxcc.nki.typing import tensor
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x: tensor[128, 512]):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.exp(nl.load(x)))
    return out


@nki.jit
def uses_torch(x):
    return torch.relu(nl.load(x))


print("running the kernel at import")
expected = kernel(torch.rand(128, 512))
assert expected is not None
