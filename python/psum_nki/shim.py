"""Installs the tracer as ``nki`` and ``neuronxcc.nki`` (``import nki.language
as nl`` and the older spellings then load it). A name the tracer does not
implement is refused when the kernel uses it, naming the API."""

import sys
import types

from . import isa, language
from .core import Unsupported
from .tiles import Buffer


class Kernel:
    """A decorated kernel: the function and the decorator's ``platform_target``."""

    def __init__(self, func, platform_target=None):
        self.func = func
        self.platform_target = platform_target
        self.__name__ = getattr(func, "__name__", "kernel")
        self.__wrapped__ = func

    def __call__(self, *args, **kwargs):
        return self.func(*args, **kwargs)

    def __getitem__(self, grid):
        return self


def _decorator(func=None, **kwargs):
    target = kwargs.get("platform_target")
    if func is None:
        return lambda f: Kernel(f, target)
    return Kernel(func, target)


def _module(name, doc, attrs):
    m = types.ModuleType(name, doc)

    def missing(attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise Unsupported("%s.%s is not supported by psum trace" % (name, attr))

    m.__getattr__ = missing
    m.__dict__.update(attrs)
    return m


def _public(mod):
    return {k: v for k, v in vars(mod).items() if not k.startswith("_")}


def _mod_alloc(mem):
    def mod_alloc(*, base_bank=0, base_addr=0, base_partition=0, num_bank_tiles=(), num_par_tiles=(), num_free_tiles=()):
        if base_addr or base_partition or num_par_tiles or num_free_tiles:
            raise Unsupported("direct allocation at a partition or byte offset (only banks are traced)")

        def bank(idx, pdim, fdim):
            shape = tuple(num_bank_tiles) or (1,) * len(idx)
            lin = 0
            for i, s in zip(idx, shape):
                lin = lin * s + i % s
            return base_bank + lin

        return Buffer("%s.mod_alloc" % mem, mem, bank if mem == "psum" else None)

    return mod_alloc


def _alloc(mem):
    def alloc(func):
        def bank(idx, pdim, fdim):
            placed = func(idx, pdim, fdim)
            if not isinstance(placed, (tuple, list)) or len(placed) != 3:
                raise Unsupported("an allocation callback that does not return (bank, partition, byte)")
            b, p, a = (int(x) for x in placed)
            if p or a:
                raise Unsupported("direct allocation at a partition or byte offset (only banks are traced)")
            return b

        return Buffer("%s.alloc" % mem, mem, bank if mem == "psum" else None)

    return alloc


def _identity_decorator(func=None, **kwargs):
    if func is None:
        return lambda f: f
    return func


def install():
    """Puts the stand-in modules in ``sys.modules`` (replacing any real NKI)."""
    nl = _module("nki.language", language.__doc__, _public(language))
    ni = _module("nki.isa", isa.__doc__, _public(isa))
    psum = _module("nki.compiler.psum", "Direct PSUM allocation.", {"alloc": _alloc("psum"), "mod_alloc": _mod_alloc("psum")})
    sbuf = _module("nki.compiler.sbuf", "Direct SBUF allocation.", {"alloc": _alloc("sbuf"), "mod_alloc": _mod_alloc("sbuf")})
    compiler = _module(
        "nki.compiler",
        "Compiler controls.",
        {
            "psum": psum,
            "sbuf": sbuf,
            "skip_middle_end_transformations": _identity_decorator,
            "enable_stack_allocator": _identity_decorator,
            "force_auto_alloc": _identity_decorator,
        },
    )
    top = {
        "language": nl,
        "isa": ni,
        "compiler": compiler,
        "jit": _decorator,
        "baremetal": _decorator,
        "benchmark": _decorator,
        "profile": _decorator,
        "trace": _decorator,
    }
    nki = _module("nki", "NKI, traced by psum.", top)
    nki.__path__ = []
    compiler.__path__ = []
    neuronxcc = _module("neuronxcc", "neuronxcc, traced by psum.", {"nki": nki})
    neuronxcc.__path__ = []
    for prefix, root in (("nki", nki), ("neuronxcc.nki", nki)):
        sys.modules[prefix] = root
        sys.modules[prefix + ".language"] = nl
        sys.modules[prefix + ".isa"] = ni
        sys.modules[prefix + ".compiler"] = compiler
        sys.modules[prefix + ".compiler.psum"] = psum
        sys.modules[prefix + ".compiler.sbuf"] = sbuf
    sys.modules["neuronxcc"] = neuronxcc
