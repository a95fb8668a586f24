"""psum.trace and psum.nki: kernels traced from a path and from a function
object give the program `psum trace` prints; hazards, spills and errors come
back at the kernel's lines."""

import importlib
import sys
import types

import psum
import pytest
from conftest import KERNELS, REPO, console, run

K_SUM_ARGS = ["--arg", "a_t=bfloat16[256,128]", "--arg", "b=bfloat16[256,512]"]
HAZARD = (
    "%2 (matmul) accumulates (accumulate=true) onto PSUM acc, which nothing wrote before; "
    "accumulating onto uninitialised PSUM is undefined: let the first matmul overwrite (accumulate=false)"
)


def psum_trace(function, *args):
    """stdout of `psum trace KERNELS FUNCTION ARGS…`, which must succeed."""
    o = run([console(), "trace", KERNELS, function, *args])
    assert o.returncode == 0, o.stderr.decode()
    return o.stdout.decode()


@pytest.fixture
def matmuls(in_repo, monkeypatch):
    """The test kernels' module, imported under psum's NKI stand-ins."""
    monkeypatch.syspath_prepend(str(REPO / "python/tests/kernels"))
    sys.modules.pop("matmuls", None)
    with psum.nki():
        module = importlib.import_module("matmuls")
    yield module
    sys.modules.pop("matmuls", None)


def test_a_kernel_from_its_path_traces_as_psum_trace_does(in_repo):
    p = psum.trace(
        KERNELS + ":k_sum",
        psum.tensor([256, 128], "bfloat16"),
        b=psum.tensor((256, 512), "bfloat16"),
    )
    assert p.text == psum_trace("k_sum", *K_SUM_ARGS)
    assert p.file == "<trace of k_sum>"
    assert p.arch == "trn1"
    assert p.warnings == []
    assert 'matmul acc <- a_tile, b_tile loc="python/tests/kernels/matmuls.py:16"' in p.text


def test_a_function_object_with_numpy_arrays_traces_the_same(matmuls):
    np = pytest.importorskip("numpy")
    ml_dtypes = pytest.importorskip("ml_dtypes")
    a_t = np.zeros((256, 128), dtype=ml_dtypes.bfloat16)
    b = np.ones((256, 512), dtype=ml_dtypes.bfloat16)
    assert psum.trace(matmuls.k_sum, a_t, b).text == psum_trace("k_sum", *K_SUM_ARGS)
    f32 = psum.trace(matmuls.k_sum, np.zeros((384, 128), np.float32), b=np.zeros((384, 512), np.float32))
    assert f32.text == psum_trace("k_sum", "--arg", "a_t=float32[384,128]", "--arg", "b=float32[384,512]")


def test_decorated_and_plain_functions_unwrap_to_their_file(matmuls):
    assert type(matmuls.k_sum).__name__ == "Kernel"
    assert psum._kernel_function(matmuls.k_sum) == (KERNELS, "k_sum")
    assert psum._kernel_function(matmuls.refuses) == (KERNELS, "refuses")
    with pytest.raises(psum.TraceError, match="not defined at the top level"):
        psum.trace(lambda x: x)


class GenericKernel:
    """A decorated kernel as a real NKI's ``nki.jit`` makes one: the function in ``func``."""

    def __init__(self, func):
        self.func = func

    def __call__(self, *args, **kwargs):
        return self.func(*args, **kwargs)


def test_a_kernel_wrapped_as_a_real_nki_wraps_it_traces_its_function(matmuls):
    plain = matmuls.k_sum.func
    assert type(plain).__name__ == "function"
    args = (psum.tensor([256, 128], "bfloat16"), psum.tensor([256, 512], "bfloat16"))
    expected = psum_trace("k_sum", *K_SUM_ARGS)
    assert psum.trace(plain, *args).text == expected
    assert psum.trace(GenericKernel(plain), *args).text == expected
    assert psum.trace(GenericKernel(matmuls.k_sum), *args).text == expected


def test_literals_arch_and_grid_reach_the_tracer(matmuls):
    w, x = psum.tensor([128, 128], "bfloat16"), psum.tensor([128, 4608], "bfloat16")
    p = psum.trace(matmuls.live_tiles, w, x, tiles=9)
    args = ["--arg", "w=bfloat16[128,128]", "--arg", "x=bfloat16[128,4608]"]
    assert p.text == psum_trace("live_tiles", *args, "--kwarg", "tiles=9")
    assert psum.trace(matmuls.live_tiles, w, x, tiles=9, arch="trn2").arch == "cayman"
    grid = psum.trace(matmuls.k_sum, psum.tensor([256, 128], "bfloat16"), psum.tensor([256, 512], "bfloat16"), grid=[2])
    assert grid.text == psum_trace("k_sum", *K_SUM_ARGS, "--grid", "2")
    with pytest.raises(psum.TraceError, match="is neither a tensor nor a Python literal"):
        psum.trace(matmuls.live_tiles, w, x, tiles=object())


def test_a_spill_and_a_hazard_come_back_at_the_kernel_lines(matmuls):
    w = psum.tensor([128, 128], "bfloat16")
    nine = psum.trace(matmuls.live_tiles, w, psum.tensor([128, 4608], "bfloat16"), tiles=9).compile()
    assert nine.spills == ["acc", "acc_1"]
    assert nine.hazards == []
    eight = psum.trace(matmuls.live_tiles, w, psum.tensor([128, 4096], "bfloat16"), tiles=8).compile()
    assert eight.spills == []

    p = psum.trace(matmuls.first_accumulates, w, psum.tensor([128, 512], "bfloat16"))
    [h] = p.lint()
    assert (h.kind, h.file, h.line, h.message) == ("accumulate_onto_uninit", KERNELS, 28, HAZARD)
    assert str(h) == "%s:28: warning: %s" % (KERNELS, HAZARD)
    assert repr(h) == "<psum.Hazard accumulate_onto_uninit: %s>" % h
    [c] = p.compile().hazards
    assert (c.file, c.line, c.message) == (KERNELS, 28, HAZARD)
    o = run([console(), "trace", KERNELS, "first_accumulates", "--arg", "w=bfloat16[128,128]", "--arg", "x=bfloat16[128,512]"])
    assert o.stdout.decode() == p.text
    assert o.stderr.decode() == str(h) + "\n"


def test_a_hazard_of_a_program_without_kernel_lines_names_the_program_line():
    text = psum.trace(KERNELS + ":first_accumulates", w=psum.tensor([128, 128], "bfloat16"), x=psum.tensor([128, 512], "bfloat16")).text
    bare = "\n".join(line.split(' loc="')[0] for line in text.splitlines()) + "\n"
    [h] = psum.parse(bare, file="bare.psum").lint()
    assert (h.file, h.line, h.message) == ("bare.psum", 14, HAZARD)


def test_trace_error_carries_the_kernel_line_and_the_cli_text(matmuls):
    with pytest.raises(psum.TraceError) as e:
        psum.trace(matmuls.refuses, psum.tensor([128, 4], "float32"))
    assert (e.value.file, e.value.line, e.value.column) == (KERNELS, 51, None)
    o = run([console(), "trace", KERNELS, "refuses", "--arg", "x=float32[128,4]"])
    assert o.returncode == 1
    assert str(e.value) + "\n" == o.stderr.decode()
    assert str(e.value) == "%s:51: error: ValueError: rows=128 is not supported" % KERNELS


def test_trace_errors_without_a_kernel_line(matmuls):
    with pytest.raises(psum.TraceError) as e:
        psum.trace(matmuls.refuses, y=psum.tensor([128, 4], "float32"))
    assert str(e.value) == "%s: error: refuses has no parameter 'y' (its parameters: x)" % KERNELS
    assert (e.value.file, e.value.line) == (None, None)
    with pytest.raises(psum.TraceError, match="expected 'path/to/kernel.py:function'"):
        psum.trace("matmuls.py")
    with pytest.raises(psum.TraceError, match="did not finish within 1 s"):
        psum.trace(matmuls.spins, psum.tensor([1], "float32"), timeout=1)
    with pytest.raises(psum.TraceError, match="^error: unknown architecture 'trn9'"):
        psum.trace(matmuls.k_sum, arch="trn9")


def test_nki_leaves_sys_modules_as_it_found_them(monkeypatch):
    for name in [n for n in sys.modules if n == "nki" or n.startswith(("nki.", "neuronxcc"))]:
        monkeypatch.delitem(sys.modules, name)
    with psum.nki():
        import neuronxcc.nki.language as nl
        import nki

        assert nki.language is nl
        assert nl.psum is not None
    assert not [n for n in sys.modules if n == "nki" or n.startswith(("nki.", "neuronxcc"))]

    real = types.ModuleType("nki")
    monkeypatch.setitem(sys.modules, "nki", real)
    with psum.nki():
        assert sys.modules["nki"] is not real
    assert sys.modules["nki"] is real
