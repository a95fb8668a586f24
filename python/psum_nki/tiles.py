"""NKI tensors as the tracer sees them: allocations (``Tile``), indexed views
(``View``) and index ranges (``nl.arange``, ``nl.mgrid``, ``nl.ds``)."""

import operator

from . import core
from .core import STATE, TraceError, Unsupported


class Buffer:
    """A memory (``nl.sbuf``, ``nl.psum``, ``nl.hbm``…) or a direct allocator for it."""

    def __init__(self, name, mem, banks=None):
        self.name = name
        self.mem = mem
        self.banks = banks

    def __repr__(self):
        return self.name


class ParDim:
    """``nl.par_dim(n)``: marks the partition dimension of a shape."""

    def __init__(self, n):
        self.n = as_int(n, "par_dim size")


def as_int(x, what):
    """``x`` as a Python int, refusing values that depend on tile data."""
    if isinstance(x, (View, Tile)):
        raise Unsupported("data-dependent %s (a tile's value used as an integer)" % what)
    try:
        return operator.index(x)
    except TypeError:
        raise Unsupported("%s %r is not an integer" % (what, x)) from None


class Tile:
    """One NKI tensor allocation: block dimensions, a partition dimension and
    free dimensions; each block is its own psum tensor."""

    def __init__(self, shape, dtype, buffer, name=None, loc=None):
        shape = tuple(shape)
        par_at = [i for i, d in enumerate(shape) if isinstance(d, ParDim)]
        if len(par_at) > 1:
            raise TraceError("a shape has one nl.par_dim", "invalid")
        mem = buffer.mem
        if mem == "dram" or not par_at:
            at = 0
        else:
            at = par_at[0]
        dims = [d.n if isinstance(d, ParDim) else as_int(d, "dimension") for d in shape]
        if not dims:
            raise Unsupported("a tensor without dimensions")
        if mem == "dram":
            at = 0
        self.block_shape = tuple(dims[:at])
        self.par = dims[at]
        self.free_shape = tuple(dims[at + 1 :])
        self.dtype = dtype
        self.dkey, self.dsize = core.dtype_info(dtype)
        self.mem = mem
        self.buffer = buffer
        rec = STATE.recorder
        self.loc = loc if loc is not None else core.kernel_loc()
        base = name or core.source_name(core._ASSIGN, "tile")
        free = 1
        for d in self.free_shape:
            free *= d
        nbytes = free * self.dsize
        self.blocks = {}
        for idx in block_indices(self.block_shape):
            bank = None
            if buffer.banks is not None:
                bank = buffer.banks(idx, self.par, nbytes)
            block_base = base if not idx else base + "_b" + "_".join(str(i) for i in idx)
            tile_loc = None if mem == "dram" else self.loc
            self.blocks[idx] = rec.new_tensor(
                block_base, mem, self.par, nbytes, self.dkey, tile_loc, bank
            )
        self.fresh = None

    @property
    def shape(self):
        return self.block_shape + (self.par,) + self.free_shape

    def view(self):
        dims = [["block", 0, n, True] for n in self.block_shape]
        dims.append(["par", 0, self.par, True])
        dims.extend(["free", 0, n, True] for n in self.free_shape)
        return View(self, dims)

    def __getitem__(self, idx):
        return self.view()[idx]

    def __setitem__(self, idx, value):
        self.view().__setitem__(idx, value)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.view(), name)

    # Python operators on a whole tile act as on its view.
    def __iadd__(self, other):
        self.view().__iadd__(other)
        return self

    def __isub__(self, other):
        self.view().assign(nl_op("subtract", self, other))
        return self

    def __imul__(self, other):
        self.view().assign(nl_op("multiply", self, other))
        return self

    def __add__(self, o):
        return nl_op("add", self, o)

    def __radd__(self, o):
        return nl_op("add", o, self)

    def __sub__(self, o):
        return nl_op("subtract", self, o)

    def __rsub__(self, o):
        return nl_op("subtract", o, self)

    def __mul__(self, o):
        return nl_op("multiply", self, o)

    def __rmul__(self, o):
        return nl_op("multiply", o, self)

    def __truediv__(self, o):
        return nl_op("divide", self, o)

    def __neg__(self):
        return nl_op("negative", self)

    def __bool__(self):
        raise Unsupported("data-dependent control flow (a tile's value used as a condition)")

    def __index__(self):
        raise Unsupported("data-dependent index (a tile's value used as an integer)")

    __int__ = __index__
    __float__ = __index__

    def __iter__(self):
        raise Unsupported("iterating over a tile's values")


def block_indices(shape):
    if not shape:
        return [()]
    out = []
    n = shape[0]
    for i in range(n):
        for rest in block_indices(shape[1:]):
            out.append((i,) + rest)
    return out


class IndexRange:
    """A contiguous range of indices (``nl.arange``, ``nl.mgrid``, ``nl.ds``), possibly offset."""

    def __init__(self, start, size):
        self.start = start
        self.size = size

    def __getitem__(self, idx):
        # nl.arange(n)[:, None] and [None, :] only place the range on an axis.
        return self

    def _shift(self, k, sign=1):
        if isinstance(k, IndexRange):
            raise Unsupported("an index built from two index ranges")
        return IndexRange(self.start + sign * as_int(k, "index offset"), self.size)

    def __add__(self, k):
        return self._shift(k)

    __radd__ = __add__

    def __sub__(self, k):
        return self._shift(k, -1)

    def __mul__(self, k):
        raise Unsupported("a strided index (an index range times %r)" % (k,))

    __rmul__ = __mul__


class Grid(tuple):
    """``nl.mgrid[...]``: a tuple of ranges, also readable as ``.p`` and ``.x``."""

    @property
    def p(self):
        return self[0]

    @property
    def x(self):
        return self[1]


class View:
    """A rectangular part of a ``Tile``: dims are ``[kind, start, size, kept]``."""

    def __init__(self, tile, dims):
        self.tile = tile
        self.dims = dims

    @property
    def dtype(self):
        return self.tile.dtype

    @property
    def shape(self):
        return tuple(d[2] for d in self.dims if d[3])

    @property
    def buffer(self):
        return self.tile.buffer

    def __getitem__(self, idx):
        if not isinstance(idx, tuple):
            idx = (idx,)
        open_dims = [d for d in self.dims if d[3]]
        if Ellipsis in idx:
            at = idx.index(Ellipsis)
            fill = len(open_dims) - (len(idx) - 1)
            idx = idx[:at] + (slice(None),) * fill + idx[at + 1 :]
        if len(idx) > len(open_dims):
            raise TraceError(
                "too many indices (%d) for a tile of shape %s" % (len(idx), self.shape),
                "invalid",
            )
        dims = [list(d) for d in self.dims]
        open_dims = [d for d in dims if d[3]]
        for d, ix in zip(open_dims, idx):
            start, size, keep = index_item(ix, d[2])
            d[1] += start
            d[2] = size
            d[3] = keep
        return View(self.tile, dims)

    def __setitem__(self, idx, value):
        target = self[idx]
        if value is target or (isinstance(value, View) and value.same_as(target)):
            return
        target.assign(value)

    def same_as(self, other):
        return other.tile is self.tile and other.dims == self.dims

    def block(self):
        """The psum tensor of the selected block."""
        blocks = [d for d in self.dims if d[0] == "block"]
        if any(d[2] != 1 for d in blocks):
            raise Unsupported(
                "an instruction on several blocks of a tile at once (index the block dimensions)"
            )
        return self.tile.blocks[tuple(d[1] for d in blocks)]

    def elements(self):
        n = 1
        for d in self.dims:
            if d[0] != "block":
                n *= d[2]
        return n

    def part_extent(self):
        return [d for d in self.dims if d[0] == "par"][0][2]

    def access(self):
        """The psum access ``[p0:p1, b0:b1]`` of this view (contiguous free bytes)."""
        t = self.block()
        par = [d for d in self.dims if d[0] == "par"][0]
        free = [d for d in self.dims if d[0] == "free"]
        full = self.tile.free_shape
        # Row-major contiguity: dims before the first partial one have size 1,
        # dims after it are whole.
        partial = [i for i, d in enumerate(free) if d[2] != full[i]]
        if partial:
            first = partial[0]
            for i, d in enumerate(free):
                if i < first and d[2] != 1:
                    raise Unsupported("a non-contiguous free-dimension access")
                if i > first and d[2] != full[i]:
                    raise Unsupported("a non-contiguous free-dimension access")
        offset = 0
        for i, d in enumerate(free):
            offset = offset * full[i] + d[1]
        count = 1
        for d in free:
            count *= d[2]
        size = self.tile.dsize
        b0 = offset * size
        return core.Access(
            t,
            (
                core.aff_const(par[1]),
                core.aff_const(par[1] + par[2]),
                core.aff_const(b0),
                core.aff_const(b0 + count * size),
            ),
        )

    def assign(self, value):
        from . import language

        language.assign(self, value)

    def __iadd__(self, other):
        from . import language

        language.accumulate(self, other)
        return self

    def __isub__(self, other):
        self.assign(nl_op("subtract", self, other))
        return self

    def __imul__(self, other):
        self.assign(nl_op("multiply", self, other))
        return self

    __add__ = Tile.__add__
    __radd__ = Tile.__radd__
    __sub__ = Tile.__sub__
    __rsub__ = Tile.__rsub__
    __mul__ = Tile.__mul__
    __rmul__ = Tile.__rmul__
    __truediv__ = Tile.__truediv__
    __neg__ = Tile.__neg__
    __bool__ = Tile.__bool__
    __index__ = Tile.__index__
    __int__ = Tile.__int__
    __float__ = Tile.__float__
    __iter__ = Tile.__iter__


def nl_op(name, *args):
    from . import language

    return getattr(language, name)(*args)


def index_item(ix, extent):
    """(start, size, kept) of one index item over a dimension of ``extent``."""
    if isinstance(ix, (View, Tile)):
        raise Unsupported("data-dependent index (a tile used as an index)")
    if isinstance(ix, IndexRange):
        start, size, keep = ix.start, ix.size, True
    elif isinstance(ix, slice):
        if ix.step not in (None, 1):
            raise Unsupported("a strided slice (step %r)" % (ix.step,))
        lo = 0 if ix.start is None else as_int(ix.start, "slice bound")
        hi = extent if ix.stop is None else as_int(ix.stop, "slice bound")
        if lo < 0:
            lo += extent
        if hi < 0:
            hi += extent
        start, size, keep = lo, hi - lo, True
    else:
        i = as_int(ix, "index")
        if i < 0:
            i += extent
        start, size, keep = i, 1, False
    if start < 0 or size <= 0 or start + size > extent:
        raise TraceError(
            "index [%d:%d] is out of range for a dimension of size %d" % (start, start + size, extent),
            "invalid",
        )
    return start, size, keep
