"""The Python operators of NKI tensors (SPEC §9.2), installed on
:class:`~psum_nki.tiles.Tile` and :class:`~psum_nki.tiles.View` from the
registry: ``a + b`` is ``nl.add(a, b)``, ``t[…] = v`` an assignment,
``t += v`` an accumulation, as jax installs its array methods."""

from . import lower
from .api import REGISTRY
from .errors import Unsupported
from .index import DynamicIndex, IndexExpr
from .tiles import Tile, View

BINARY = {
    "add": "add",
    "sub": "subtract",
    "mul": "multiply",
    "truediv": "divide",
    "pow": "power",
    "mod": "mod",
    "and": "bitwise_and",
    "or": "bitwise_or",
    "xor": "bitwise_xor",
    "lshift": "left_shift",
    "rshift": "right_shift",
    "lt": "less",
    "le": "less_equal",
    "gt": "greater",
    "ge": "greater_equal",
}
REFLECTED = ("add", "sub", "mul", "truediv", "pow", "mod", "and", "or", "xor")
UNARY = {"neg": "negative", "abs": "abs", "invert": "invert"}
# Operators that, with an index expression, build a data-dependent index.
INDEX_ARITHMETIC = ("add", "subtract", "multiply")


def _nl(name):
    return REGISTRY["nki.language." + name].value


def _binary(name):
    def op(self, other):
        if isinstance(other, (IndexExpr, DynamicIndex)) and name in INDEX_ARITHMETIC:
            return DynamicIndex.of(self, other)
        return _nl(name)(self, other)

    return op


def _reflected(name):
    def op(self, other):
        if isinstance(other, (IndexExpr, DynamicIndex)) and name in INDEX_ARITHMETIC:
            return DynamicIndex.of(other, self)
        return _nl(name)(other, self)

    return op


def _inplace(name):
    def op(self, other):
        target = lower.view_of(self)
        lower.assign(target, _nl(name)(target, other))
        return self

    return op


def _compare(name):
    """``tile == number`` and ``tile != number``: element-wise (``nl.equal``,
    ``nl.not_equal``); against anything else, identity, as for any object."""

    def op(self, other):
        if isinstance(other, (bool, int, float)) or type(other).__module__ == "numpy":
            return _nl(name)(self, other)
        return NotImplemented

    return op


def _iadd(self, other):
    lower.accumulate(lower.view_of(self), other)
    return self


def _setitem(self, idx, value):
    target = lower.view_of(self)[idx]
    if value is target or (isinstance(value, View) and value.same_as(target)):
        return
    lower.assign(target, value)


def _refuse(what):
    def op(self, *args):
        raise Unsupported(what)

    return op


def _broadcast_to(self, shape):
    return _nl("broadcast_to")(self, shape=shape)


_data_condition = _refuse("data-dependent control flow (a tile's value used as a condition)")


def _truth(self):
    """An HBM tensor is a handle whose values the kernel never sees while it
    is traced (``if bias:`` asks whether an optional tensor was passed): true;
    an on-chip tile's truth would be its values."""
    if self.buffer.mem == "dram":
        return True
    return _data_condition(self)


def install():
    """Puts the operators on Tile and View."""
    for cls in (Tile, View):
        for py, name in BINARY.items():
            setattr(cls, "__%s__" % py, _binary(name))
        for py in REFLECTED:
            setattr(cls, "__r%s__" % py, _reflected(BINARY[py]))
        for py, name in UNARY.items():
            setattr(cls, "__%s__" % py, lambda self, n=name: _nl(n)(self))
        cls.__eq__ = _compare("equal")
        cls.__ne__ = _compare("not_equal")
        cls.__iadd__ = _iadd
        for py in ("sub", "mul", "truediv"):
            setattr(cls, "__i%s__" % py, _inplace(BINARY[py]))
        cls.__setitem__ = _setitem
        cls.__bool__ = _truth
        cls.__index__ = _refuse("data-dependent index (a tile's value used as an integer)")
        cls.__int__ = cls.__index__
        cls.__float__ = cls.__index__
        cls.__iter__ = _refuse("iterating over a tile's values")
        cls.broadcast_to = _broadcast_to
