"""psum from Python: PSUM bank allocation, spilling, accumulation-group
legalization and verification for Trainium-class kernels (docs/SPEC.md).

- :func:`trace` runs an NKI kernel under psum's tracer and returns its
  :class:`Program`; :func:`parse` and :func:`load` read a psum program.
- :meth:`Program.compile` runs ``psum compile`` (allocate, unroll, legalize,
  verify) and returns a :class:`Compiled`: its program text, the JSON report,
  the banks, the spills, the PSUM hazards and the bank timeline, which draws
  itself in Jupyter.
- :meth:`Program.alloc`, :meth:`Program.lint`, :meth:`Program.bound` and
  :meth:`Program.verify` run ``psum alloc``, ``lint``, ``bound`` and ``verify``.
- ``with psum.nki(): import my_kernels`` imports a kernel module without NKI.

Errors are :class:`Error` and its subclasses, with the command line's message
text and the file, line and column they point at. Compiling, allocating and
verifying release the GIL.
"""

import ast
import contextlib
import importlib.abc
import importlib.util
import inspect
import os
import sys
from typing import Any, Iterator, Optional, Sequence, Tuple

from . import _psum
from ._errors import (
    AllocationError,
    Error,
    InternalError,
    ParseError,
    TraceError,
    ValidationError,
    VerifyError,
)
from ._psum import Allocation, Compiled, Hazard, Program, Timeline, load, parse

__all__ = [
    "Allocation",
    "AllocationError",
    "Compiled",
    "Error",
    "Hazard",
    "InternalError",
    "ParseError",
    "Program",
    "TensorSpec",
    "Timeline",
    "TraceError",
    "ValidationError",
    "VerifyError",
    "load",
    "nki",
    "parse",
    "tensor",
    "trace",
]

#: The tracer's default address-space limit, in MiB (``psum trace --memory-limit``).
MEMORY_LIMIT_MIB = 4096


class TensorSpec:
    """A kernel's tensor argument by shape and NKI dtype name, made by :func:`tensor`."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: Sequence[int], dtype: str):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dtype

    def __repr__(self) -> str:
        return "psum.tensor(%r, %r)" % (self.shape, self.dtype)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TensorSpec) and (self.shape, self.dtype) == (other.shape, other.dtype)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype))


def _dtype_name(dtype: Any) -> str:
    """The NKI name of a dtype: a name, a numpy or ml_dtypes dtype or type, an
    NKI dtype (``nl.bfloat16``) or a torch dtype (``torch.bfloat16``)."""
    if isinstance(dtype, str):
        return dtype
    for attr in ("name", "__name__"):
        name = getattr(dtype, attr, None)
        if isinstance(name, str):
            return name
    return str(dtype).rsplit(".", 1)[-1]


def tensor(shape: Sequence[int], dtype: Any = "float32") -> TensorSpec:
    """A tensor argument for :func:`trace` without an array: ``shape`` and
    ``dtype`` (an NKI dtype name such as ``"bfloat16"``, or a numpy, NKI or
    torch dtype)."""
    return TensorSpec(shape, _dtype_name(dtype))


def _unwrap(kernel: Any) -> Any:
    """The plain function a decorated kernel wraps (psum's ``nki.jit`` stand-in,
    a real NKI's ``nki.jit``, ``functools.wraps``)."""
    seen = set()
    while not inspect.isfunction(kernel) and id(kernel) not in seen:
        seen.add(id(kernel))
        for attr in ("__wrapped__", "func", "fn"):
            inner = getattr(kernel, attr, None)
            if inner is not None and inner is not kernel:
                kernel = inner
                break
        else:
            break
    return kernel


def _display(path: str) -> str:
    """How the kernel file is named in ``loc=`` attributes: relative to the
    working directory when it is under it, else absolute."""
    rel = os.path.relpath(path)
    return path if rel.startswith(os.pardir) else rel


def _kernel_function(kernel: Any) -> Tuple[str, str]:
    """(kernel file as shown, function name) of a ``"FILE:FUNCTION"`` string or
    a function object."""
    if isinstance(kernel, (str, os.PathLike)):
        spec = os.fspath(kernel)
        path, sep, function = spec.rpartition(":")
        if not sep or not path or not function.isidentifier():
            raise TraceError("error: kernel %r: expected 'path/to/kernel.py:function'" % spec)
        return path, function
    func = _unwrap(kernel)
    if not inspect.isfunction(func):
        raise TraceError("error: %r is not a kernel function (nor FILE:FUNCTION)" % (kernel,))
    if func.__qualname__ != func.__name__:
        raise TraceError(
            "error: %s is not defined at the top level of its module (psum traces module-level kernels)"
            % func.__qualname__
        )
    path = inspect.getsourcefile(func)
    if path is None or not os.path.isfile(path):
        raise TraceError("error: the source file of %s is not available" % func.__name__)
    return _display(os.path.abspath(path)), func.__name__


def _positional_names(path: str, function: str) -> Optional[list]:
    """The positional parameters of ``def function`` at the top of ``path``, or
    ``None`` when the file has no such definition."""
    try:
        with open(path, "rb") as f:
            tree = ast.parse(f.read(), path)
    except (OSError, SyntaxError, ValueError):
        return None
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == function:
            return [a.arg for a in stmt.args.posonlyargs + stmt.args.args]
    return None


def _literal(name: str, value: Any) -> str:
    """``value`` as the Python literal the tracer reads (``--kwarg``)."""
    text = repr(value)
    try:
        same = ast.literal_eval(text) == value
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        same = False
    if not same:
        raise TraceError("error: argument %s=%s is neither a tensor nor a Python literal" % (name, text))
    return text


def _classify(name: str, value: Any, tensors: list, literals: list) -> None:
    """Files one kernel argument as a tensor (``--arg``) or a literal (``--kwarg``)."""
    if isinstance(value, TensorSpec):
        tensors.append((name, value.dtype, list(value.shape)))
        return
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is not None and dtype is not None and not isinstance(value, type):
        dims = tuple(int(d) for d in shape)
        if dims:
            tensors.append((name, _dtype_name(dtype), list(dims)))
            return
        value = value.item() if hasattr(value, "item") else value
    literals.append((name, _literal(name, value)))


def trace(
    kernel: Any,
    *args: Any,
    arch: Optional[str] = None,
    grid: Optional[Sequence[int]] = None,
    timeout: float = 60,
    program_id: Optional[Sequence[int]] = None,
    memory_limit: int = MEMORY_LIMIT_MIB,
    **kwargs: Any,
) -> Program:
    """Runs an NKI kernel under psum's tracer (SPEC §9) and returns its program,
    whose text is what ``psum trace`` prints for the same kernel.

    ``kernel`` is ``"path/to/kernel.py:function"`` or a module-level function
    (plain, or decorated by psum's ``nki.jit`` stand-in or a real NKI's). The
    arguments bind to the kernel's parameters, positionally or by name: numpy
    (or torch) arrays and :func:`tensor` specs are tensors (shape and dtype
    taken from them, as ``--arg``), other values Python literals (``--kwarg``).
    ``arch`` is an architecture name (default: the kernel's
    ``platform_target``, else trn1), ``grid`` the SPMD launch grid and
    ``program_id`` the instance traced; ``timeout`` (seconds) and
    ``memory_limit`` (MiB) bound the run. The kernel runs in a child process of
    this interpreter (``sys.executable``), so it needs no NKI. Raises
    :class:`TraceError` at the kernel line.
    """
    path, function = _kernel_function(kernel)
    tensors, literals = [], []
    if args:
        names = _positional_names(path, function)
        if names is None or len(args) > len(names):
            raise TraceError(
                "error: %s takes %s positional parameters; pass the arguments by name"
                % (function, "unknown" if names is None else len(names))
            )
        for name, value in zip(names, args):
            if name in kwargs:
                raise TraceError("error: %s got two values for parameter '%s'" % (function, name))
            _classify(name, value, tensors, literals)
    for name, value in kwargs.items():
        _classify(name, value, tensors, literals)
    return _psum._trace(
        sys.executable,
        path,
        function,
        tensors,
        literals,
        arch,
        [int(d) for d in grid or ()],
        [int(i) for i in program_id or ()],
        float(timeout),
        int(memory_limit),
    )


class _Embedded(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves the tracer package embedded in the native module as ``psum._nki``."""

    PACKAGE = __name__ + "._nki"

    def __init__(self) -> None:
        self.sources = {name[:-3]: text for name, text in _psum._tracer_sources() if name != "__main__.py"}

    def find_spec(self, fullname, path=None, target=None):
        if fullname == self.PACKAGE:
            return importlib.util.spec_from_loader(fullname, self, origin="psum_nki/__init__.py", is_package=True)
        prefix = self.PACKAGE + "."
        if fullname.startswith(prefix) and fullname[len(prefix):] in self.sources:
            name = fullname[len(prefix):]
            return importlib.util.spec_from_loader(fullname, self, origin="psum_nki/%s.py" % name)
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        name = module.__name__[len(self.PACKAGE) + 1:] or "__init__"
        code = compile(self.sources[name], "<psum_nki/%s.py>" % name, "exec")
        exec(code, module.__dict__)


def _shim() -> Any:
    """The stand-in NKI modules' installer (``psum_nki.shim``)."""
    if not any(isinstance(f, _Embedded) for f in sys.meta_path):
        sys.meta_path.append(_Embedded())
    return importlib.import_module(_Embedded.PACKAGE + ".shim")


@contextlib.contextmanager
def nki() -> Iterator[None]:
    """Within the block, ``nki``, ``nki.language``, ``nki.isa``, … (and the
    older ``neuronxcc.nki`` spellings) are psum's stand-ins, so a kernel module
    imports without NKI::

        with psum.nki():
            import my_kernels
        psum.trace(my_kernels.matmul, a, b)

    On leaving it, ``sys.modules`` holds again what it held before: a real NKI
    imported in the same process keeps working.
    """
    shim = _shim()
    installed = shim.install(placeholders=False)
    try:
        yield
    finally:
        shim.uninstall(installed)
