"""``nki.isa`` as the tracer implements it: each call records one psum
instruction (two for a reduction with ``reduce_res``). Both calling forms are
accepted: the newer one names the destination (``dst=``, or a tile as the
first argument), the older one returns a fresh tile."""

from . import language as nl
from .core import Unsupported
from .tiles import Tile, View


class engine:
    """Engine selectors (``nisa.engine.tensor`` …)."""

    tensor = "tensor"
    vector = "vector"
    scalar = "scalar"
    gpsimd = "gpsimd"
    unknown = "unknown"


tensor_engine = engine.tensor
vector_engine = engine.vector
scalar_engine = engine.scalar
gpsimd_engine = engine.gpsimd
unknown_engine = engine.unknown


class matmul_perf_mode:
    """Tensor Engine performance modes (no effect on PSUM)."""

    none = "none"
    double_row = "double_row"
    double_row_gen3 = "double_row_gen3"


class reduce_cmd:
    """Accumulator commands of the Scalar/Vector engines (no effect on PSUM)."""

    idle = "idle"
    reset = "reset"
    reset_reduce = "reset_reduce"
    reduce = "reduce"


def _is_tile(x):
    return isinstance(x, (Tile, View))


def _arg(kwargs, rest, name):
    """The argument ``name``: by keyword, else the next positional one."""
    if name in kwargs:
        return kwargs.pop(name)
    if not rest:
        raise Unsupported("a call without its %r argument" % name)
    return rest.pop(0)


def _split_dst(args, kwargs, n_tiles):
    """(dst, remaining positional args): the destination is ``dst=`` or, when
    more than ``n_tiles`` leading arguments are tiles, the first one."""
    if "dst" in kwargs:
        return kwargs.pop("dst"), list(args)
    lead = 0
    for a in args:
        if not _is_tile(a):
            break
        lead += 1
    if lead > n_tiles:
        return args[0], list(args[1:])
    return None, list(args)


def _pos(tile_position, tile_size):
    if not tile_position:
        return None
    r, c = (int(x) for x in tile_position)
    if tile_size:
        rs, cs = (int(x) for x in tile_size)
        return (r * rs, c * cs)
    return (r, c)


def nc_matmul(*args, **kwargs):
    """``dst = stationary.T @ moving`` (``matmul``)."""
    dst, rest = _split_dst(args, kwargs, 2)
    stationary = _arg(kwargs, rest, "stationary")
    moving = _arg(kwargs, rest, "moving")
    if kwargs.get("is_transpose"):
        return nc_transpose(stationary, dst=dst)
    pos = _pos(kwargs.get("tile_position"), kwargs.get("tile_size"))
    acc = kwargs.get("accumulate")
    return _matmul("matmul", dst, stationary, moving, pos, acc)


def nc_matmul_mx(*args, **kwargs):
    """The MX matmul of NeuronCore-v4 (``matmul.mx``); the scales are not PSUM traffic."""
    dst, rest = _split_dst(args, kwargs, 4)
    stationary = _arg(kwargs, rest, "stationary")
    moving = _arg(kwargs, rest, "moving")
    pos = _pos(kwargs.get("tile_position"), kwargs.get("tile_size"))
    return _matmul("matmul.mx", dst, stationary, moving, pos, kwargs.get("accumulate"))


def _matmul(op, dst, stationary, moving, pos, acc):
    s, m = nl.view_of(stationary), nl.view_of(moving)
    if acc is not None and not isinstance(acc, bool):
        raise Unsupported("accumulate=%r (a bool or None)" % (acc,))
    if dst is not None:
        nl.emit(op, nl.view_of(dst), [s, m], pos=pos, accumulate=acc)
        return dst
    cols = s.elements() // s.part_extent()
    n = m.elements() // m.part_extent()
    return nl.produce(op, [s, m], (cols, n), nl.float32, "psum", pos=pos, accumulate=acc)


def nc_transpose(*args, **kwargs):
    """A transpose: on the Tensor Engine (the default) a ``matmul.t`` against
    an identity, on the Vector Engine an engine op."""
    dst, rest = _split_dst(args, kwargs, 1)
    data = _arg(kwargs, rest, "data")
    if kwargs.get("engine") == engine.vector:
        v = nl.view_of(data)
        p = v.part_extent()
        shape = (v.elements() // p, p)
        return nl.compute([v], None, None, dst, shape=shape, force_engine=True)
    return nl.pe_transpose(data, dst)


def tensor_copy(*args, **kwargs):
    dst, rest = _split_dst(args, kwargs, 1)
    src = _arg(kwargs, rest, "src")
    v = nl.view_of(src)
    if dst is not None:
        nl.emit("copy", nl.view_of(dst), [v])
        return dst
    return nl.produce("copy", [v], v.shape, kwargs.get("dtype") or v.dtype, "sbuf")


def _reduce_into(reduce_res, result):
    if reduce_res is not None:
        nl.emit("engine", nl.view_of(reduce_res), [nl.view_of(result)])


def activation(*args, **kwargs):
    """``op(data * scale + bias)``; a ``reduce_res`` adds a reduction of the result."""
    if "dst" in kwargs:
        dst, rest = kwargs.pop("dst"), list(args)
    elif args and _is_tile(args[0]):
        dst, rest = args[0], list(args[1:])
    else:
        dst, rest = None, list(args)
    kwargs.pop("op", None) if "op" in kwargs else rest.pop(0)
    data = _arg(kwargs, rest, "data")
    bias = kwargs.get("bias", rest[0] if rest else None)
    scale = kwargs.get("scale", 1.0)
    operands = [data] + [x for x in (bias, scale) if _is_tile(x)]
    out = nl.compute(operands, kwargs.get("dtype"), None, dst)
    _reduce_into(kwargs.get("reduce_res"), out)
    return out


def activation_reduce(*args, **kwargs):
    return activation(*args, **kwargs)


def tensor_tensor(*args, **kwargs):
    dst, rest = _split_dst(args, kwargs, 2)
    data1 = _arg(kwargs, rest, "data1")
    data2 = _arg(kwargs, rest, "data2")
    return nl.compute([data1, data2], kwargs.get("dtype"), None, dst)


def tensor_scalar(*args, **kwargs):
    dst, rest = _split_dst(args, kwargs, 1)
    data = _arg(kwargs, rest, "data")
    operands = [data]
    for key, at in (("operand0", 1), ("operand1", 3)):
        x = kwargs.get(key, rest[at] if len(rest) > at else None)
        if _is_tile(x):
            operands.append(x)
    return nl.compute(operands, kwargs.get("dtype"), None, dst)


def tensor_reduce(*args, **kwargs):
    if "dst" in kwargs:
        dst, rest = kwargs.pop("dst"), list(args)
    elif len(args) >= 2 and _is_tile(args[0]):
        dst, rest = args[0], list(args[1:])
    else:
        dst, rest = None, list(args)
    kwargs.pop("op", None) if "op" in kwargs else rest.pop(0)
    data = _arg(kwargs, rest, "data")
    axis = kwargs.get("axis", rest[0] if rest else 1)
    keep = kwargs.get("keepdims", False)
    return nl.reduction(data, axis, kwargs.get("dtype"), None, keep, dst)


def memset(*args, **kwargs):
    """``memset``: new form ``memset(dst, value)``, old form ``memset(shape, value, dtype)``."""
    dst = kwargs.pop("dst", None)
    rest = list(args)
    if dst is None and rest and _is_tile(rest[0]):
        dst = rest.pop(0)
    if dst is not None:
        value = kwargs.get("value", rest[0] if rest else 0)
        nl.emit("memset", nl.view_of(dst), [], value=float(value))
        return dst
    shape = kwargs.get("shape", rest[0] if rest else None)
    value = kwargs.get("value", rest[1] if len(rest) > 1 else 0)
    dtype = kwargs.get("dtype", rest[2] if len(rest) > 2 else nl.float32)
    return nl.full(shape, value, dtype, kwargs.get("buffer"))


def dma_copy(*args, **kwargs):
    dst = kwargs.pop("dst", None)
    rest = list(args)
    if dst is None:
        dst = rest.pop(0)
    src = _arg(kwargs, rest, "src")
    nl.emit("dma", nl.view_of(dst), [nl.view_of(src)])
    return dst


def reciprocal(*args, **kwargs):
    dst, rest = _split_dst(args, kwargs, 1)
    data = _arg(kwargs, rest, "data")
    return nl.compute([data], kwargs.get("dtype"), None, dst)
