import nki
import nki.language as nl


@nki.jit
def kernel(x):
    t = nl.load(x)
return t
