"""A kernel that raises: its own shape check fails."""
import nki
import nki.language as nl


def check(K):
    assert K % 128 == 0, "K must be a multiple of 128, got %d" % K


@nki.jit
def kernel(x):
    K, N = x.shape
    check(K)
    return x
