"""NKI tensors as the tracer sees them (SPEC §9.2): allocations
(:class:`Tile`), their views (:class:`View`), memories (:class:`Buffer`).

A tile's elements are stored row-major over all its dimensions (block
dimensions, the partition dimension, the free dimensions). A view is an affine
map from its own index space to that storage: ``offset + Σ stride·t`` over its
axes, so slices, integer indices, index expressions, ``reshape`` and ``.ap``
all compose into one form. The Python operators on tiles and views are
installed by ``ops``.
"""

from . import dtypes
from .errors import STATE, Invalid, Unsupported, UnknownAttribute, kernel_loc, show, source_name, ASSIGN
from .index import DynamicIndex, IndexExpr, as_int


class Buffer:
    """A memory (``nl.sbuf``, ``nl.psum``, ``nl.hbm``…) or a direct allocator for it."""

    def __init__(self, name, mem, banks=None):
        self.name = name
        self.mem = mem
        self.banks = banks

    def __repr__(self):
        return self.name

    def __eq__(self, other):
        if isinstance(other, str):
            return other in (self.name, self.name.replace("nl.", ""), self.mem)
        return self is other

    __hash__ = object.__hash__


SBUF = Buffer("nl.sbuf", "sbuf")
PSUM = Buffer("nl.psum", "psum")
HBM = Buffer("nl.hbm", "dram")
SHARED_HBM = Buffer("nl.shared_hbm", "dram")
PRIVATE_HBM = Buffer("nl.private_hbm", "dram")
BUFFERS = {"sbuf": SBUF, "psum": PSUM, "hbm": HBM, "shared_hbm": SHARED_HBM, "private_hbm": PRIVATE_HBM}


def buffer_of(buffer, default=None):
    """The :class:`Buffer` named by ``buffer`` (a Buffer or its name), ``default`` for None."""
    if buffer is None:
        return default or SBUF
    if isinstance(buffer, Buffer):
        return buffer
    name = getattr(buffer, "name", buffer)
    if isinstance(name, str) and name.replace("nl.", "") in BUFFERS:
        return BUFFERS[name.replace("nl.", "")]
    raise Unsupported("buffer %s" % show(buffer))


class ParDim:
    """``nl.par_dim(n)``: marks the partition dimension of a shape."""

    def __init__(self, n):
        self.n = as_int(n, "par_dim size")

    def __index__(self):
        return self.n

    def __int__(self):
        return self.n


def row_major(shape):
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return tuple(reversed(strides))


def product(xs):
    n = 1
    for x in xs:
        n *= x
    return n


class Tile:
    """One NKI tensor allocation: block dimensions, a partition dimension and
    free dimensions; each block is its own psum tensor."""

    is_nki_tensor = True
    # Set on the result of nl.loop_reduce: assigning it accumulates into the target.
    accumulates = False

    def __init__(self, shape, dtype, buffer, name=None, loc=None, keys=None, blocks=None):
        if isinstance(shape, (int, ParDim)):
            shape = (shape,)
        shape = tuple(shape)
        par_at = [i for i, d in enumerate(shape) if isinstance(d, ParDim)]
        if len(par_at) > 1:
            raise Invalid("a shape has one nl.par_dim")
        dims = [d.n if isinstance(d, ParDim) else as_int(d, "dimension") for d in shape]
        if not dims:
            raise Unsupported("a tensor without dimensions")
        for d in dims:
            if d <= 0:
                raise Invalid("dimension %d of shape %s is not positive" % (d, tuple(dims)))
        mem = buffer.mem
        at = 0 if mem == "dram" or not par_at else par_at[0]
        self.dims = tuple(dims)
        self.block_shape = tuple(dims[:at])
        self.par = dims[at]
        self.free_shape = tuple(dims[at + 1 :])
        self.free = product(self.free_shape)
        self.dtype = dtypes.lookup(dtype)
        self.dkey, self.dsize = self.dtype.key, self.dtype.size
        self.mem = mem
        self.buffer = buffer
        self.keys = keys or [frozenset()] * len(dims)
        self.fresh = None
        self.loc = loc if loc is not None else kernel_loc()
        if blocks is not None:
            self.blocks = blocks
            return
        rec = STATE.recorder
        if rec is None:
            raise Unsupported("an NKI tensor created outside a traced kernel")
        base = name or source_name(ASSIGN, "tile")
        nbytes = self.free * self.dsize
        if nbytes > (1 << 31) or self.par > (1 << 31):
            raise Invalid("a tensor of %d partitions of %d bytes is too large" % (self.par, nbytes))
        self.blocks = {}
        for idx in block_indices(self.block_shape):
            bank = None
            if buffer.banks is not None:
                bank = buffer.banks(idx, self.par, nbytes)
            block_base = base if not idx else base + "_b" + "_".join(str(i) for i in idx)
            tile_loc = None if mem == "dram" else self.loc
            self.blocks[idx] = rec.new_tensor(block_base, mem, self.par, nbytes, self.dkey, tile_loc, bank)

    @property
    def shape(self):
        return self.dims

    @property
    def ndim(self):
        return len(self.dims)

    def view(self, dtype=None):
        """The whole tile as a view; ``view(dtype)`` reinterprets it as ``dtype``."""
        if dtype is not None:
            return self.alias(dtype).view()
        return View(self, self.dims, row_major(self.dims), 0, list(self.keys))

    def alias(self, dtype):
        """The same storage read as ``dtype`` (``Tile.view(dtype)``): the last dimension scales."""
        new = dtypes.lookup(dtype)
        nbytes = self.dims[-1] * self.dsize
        if nbytes % new.size:
            raise Invalid("a last dimension of %d bytes does not hold whole %s elements" % (nbytes, new.name))
        dims = self.dims[:-1] + (nbytes // new.size,)
        shape = list(dims)
        if self.block_shape and self.mem != "dram":
            shape[len(self.block_shape)] = ParDim(shape[len(self.block_shape)])
        return Tile(tuple(shape), new, self.buffer, loc=self.loc, blocks=self.blocks)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.view(), name)

    def __getitem__(self, idx):
        return self.view()[idx]

    def __setitem__(self, idx, value):
        self.view().__setitem__(idx, value)

    def __len__(self):
        return self.dims[0]

    def __repr__(self):
        return "<NKI tensor %s %s in %s>" % (self.dims, self.dtype, self.buffer)


def block_indices(shape):
    if not shape:
        return [()]
    return [(i,) + rest for i in range(shape[0]) for rest in block_indices(shape[1:])]


class View:
    """Part of a tile: axes of ``shape``, element ``offset + Σ strides[k]·t[k]``.

    ``keys[k]`` are the index variables (of ``nl.arange``/``nl.mgrid``) that
    axis ``k`` came from, which masks refer to; ``spans`` are dimensions an
    indirect (data-dependent) index covers whole, ``reads`` the index tiles
    it reads, and ``checks`` the index bounds left to check where an
    instruction (and its mask) accesses the view.
    """

    is_nki_tensor = True

    def __init__(self, tile, shape, strides, offset, keys, spans=(), reads=(), checks=()):
        self.tile = tile
        self.shape = tuple(shape)
        self.strides = tuple(strides)
        self.offset = offset
        self.keys = keys
        self.spans = tuple(spans)
        self.reads = tuple(reads)
        # Index bounds checked where the instruction runs (a mask may keep
        # out-of-range values from being accessed): (const, ((axis, coef), …), size).
        self.checks = tuple(checks)

    @property
    def dtype(self):
        return self.tile.dtype

    @property
    def buffer(self):
        return self.tile.buffer

    @property
    def ndim(self):
        return len(self.shape)

    def view_of(self):
        return self

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise UnknownAttribute("'%s' is not an attribute of an NKI tensor psum trace knows" % name)

    def elements(self):
        return product(self.shape)

    def part_extent(self):
        return self.shape[0] if self.shape else 1

    def is_whole(self):
        t = self.tile
        return self.offset == 0 and self.shape == t.dims and self.strides == row_major(t.dims) and not self.spans

    def is_contiguous(self):
        """Whether the view's elements are consecutive in storage, in row-major order."""
        want = row_major(self.shape)
        return all(n == 1 or s == w for n, s, w in zip(self.shape, self.strides, want))

    def same_as(self, other):
        return (
            isinstance(other, View)
            and other.tile.blocks is self.tile.blocks
            and (other.shape, other.strides, other.offset, other.spans)
            == (self.shape, self.strides, self.offset, self.spans)
        )

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return "<NKI view %s of %r>" % (self.shape, self.tile)

    def __getitem__(self, idx):
        return index_view(self, idx)

    def reshape(self, *shape, **kwargs):
        """``reshape(shape)``: a view of the same elements in another shape (row-major)."""
        if "shape" in kwargs:
            shape = (kwargs.pop("shape"),)
        if kwargs:
            raise Invalid("reshape() got an unexpected keyword argument '%s' (it takes: shape)" % next(iter(kwargs)))
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = [as_int(d, "reshape dimension") for d in shape]
        total = self.elements()
        if shape.count(-1) == 1:
            known = product(d for d in shape if d != -1)
            shape[shape.index(-1)] = total // known if known else 0
        if any(d <= 0 for d in shape) or product(shape) != total:
            raise Invalid("cannot reshape a view of shape %s into %s" % (self.shape, tuple(shape)))
        if self.spans or not self.is_contiguous():
            raise Unsupported("reshape of a view that is not contiguous in its tile")
        return View(self.tile, shape, row_major(shape), self.offset, [frozenset()] * len(shape))

    def ap(self, pattern, offset=0, dtype=None, **kwargs):
        """``.ap(pattern, offset, dtype)``: the hardware access pattern ``[[stride, num], …]``
        (partition first) over the tensor's elements, from ``offset``; with
        ``dtype``, over the whole tensor's storage read as ``dtype``."""
        if kwargs:
            name = next(iter(kwargs))
            raise Unsupported("the .ap() keyword '%s' (pattern, offset and dtype are modelled)" % name)
        if dtype is not None and dtypes.lookup(dtype) != self.dtype:
            return self.view(dtype).ap(pattern, offset)
        if not isinstance(pattern, (list, tuple)) or not pattern:
            raise Invalid(".ap() takes a list of [stride, num] pairs")
        shape, strides = [], []
        for entry in pattern:
            if not isinstance(entry, (list, tuple)) or len(entry) != 2:
                raise Invalid(".ap() pattern entry %s is not [stride, num]" % show(entry))
            stride, num = as_int(entry[0], "access pattern stride"), as_int(entry[1], "access pattern size")
            if num <= 0:
                raise Invalid(".ap() pattern size %d is not positive" % num)
            shape.append(num)
            strides.append(stride)
        start = self.offset + as_int(offset, "access pattern offset")
        v = View(self.tile, shape, strides, start, [frozenset()] * len(shape))
        lo, hi = v.element_range()
        if lo < 0 or hi >= product(self.tile.dims):
            raise Invalid(".ap() pattern reaches elements [%d, %d] outside the tensor's %d" % (lo, hi, product(self.tile.dims)))
        return v

    def view(self, dtype=None):
        """``view(dtype)``: the whole tensor reinterpreted as ``dtype``."""
        if dtype is None:
            return self
        if not self.is_whole():
            raise Unsupported("view(dtype) of part of a tensor")
        return self.tile.alias(dtype).view()

    def element_range(self):
        lo = hi = self.offset
        for n, s in zip(self.shape, self.strides):
            lo += min(0, s * (n - 1))
            hi += max(0, s * (n - 1))
        return lo, hi


def index_view(v, idx):
    """``v[idx]`` with numpy's rules: slices and ``None`` are basic, integers and
    index expressions (and data-dependent index tiles) broadcast together."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    consuming = [x for x in idx if x is not None and x is not Ellipsis]
    ellipsis = [i for i, x in enumerate(idx) if x is Ellipsis]
    if ellipsis:
        at = ellipsis[0]
        fill = v.ndim - len(consuming)
        idx = idx[:at] + (slice(None),) * fill + idx[at + 1 :]
    elif len(consuming) < v.ndim:
        idx = idx + (slice(None),) * (v.ndim - len(consuming))
    if len([x for x in idx if x is not None]) > v.ndim:
        raise Invalid("too many indices (%d) for a tensor of shape %s" % (len(consuming), v.shape))

    def advanced(x):
        return not isinstance(x, slice) and x is not None

    adv_at = [i for i, x in enumerate(idx) if advanced(x)]
    exprs = [x for x in idx if isinstance(x, (IndexExpr, DynamicIndex)) or getattr(x, "is_nki_tensor", False)]
    bshape = broadcast_index_shapes(exprs)
    nb = len(bshape)
    adjacent = bool(adv_at) and adv_at == list(range(adv_at[0], adv_at[-1] + 1))
    shape, strides, keys = [], [], []
    bstrides = [0] * nb
    bkeys = [set() for _ in range(nb)]
    offset = v.offset
    spans = list(v.spans)
    reads = list(v.reads)
    axis = 0
    pending = []  # (size, stride, keys) of basic axes; "ADV" where the broadcast axes go
    image = []  # per old axis: (const, [(ref, coef)]), ref ("P", pending index) or ("B", b)
    checks = []  # (const, [(ref, coef)], size)
    for i, x in enumerate(idx):
        if adjacent and i == adv_at[0]:
            pending.append("ADV")
        if x is None:
            pending.append((1, 0, frozenset()))
            continue
        n, s, k = v.shape[axis], v.strides[axis], v.keys[axis]
        axis += 1
        if isinstance(x, slice):
            start, stop, step = x.start, x.stop, x.step
            step = 1 if step is None else as_int(step, "slice step")
            if step == 0:
                raise Invalid("a slice step of 0")
            lo = None if start is None else as_int(start, "slice bound")
            hi = None if stop is None else as_int(stop, "slice bound")
            if lo is not None and lo < 0:
                lo += n
            if hi is not None and hi < 0:
                hi += n
            past_end = step > 0 and lo is not None and 0 <= lo < n and hi is not None and hi > n
            if not past_end and (
                (lo is not None and not 0 <= lo <= n) or (hi is not None and not 0 <= hi <= n)
            ):
                raise Invalid("slice [%s:%s] is out of range for a dimension of size %d" % (start, stop, n))
            # A slice past the end (nl.ds(p * 128, 128) over fewer rows) is
            # checked where it is accessed, after the mask, like an index.
            r = range(lo, hi, step) if past_end else range(*slice(lo, hi, step).indices(n))
            if len(r) == 0:
                raise Invalid("slice [%s:%s] of a dimension of size %d is empty" % (start, stop, n))
            if past_end:
                checks.append((r.start, [(("P", len(pending)), r.step)], n))
            offset += s * r.start
            whole = r.start == 0 and r.step == 1 and len(r) == n
            image.append((r.start, [(("P", len(pending)), r.step)]))
            pending.append((len(r), s * r.step, k if whole else frozenset()))
        elif isinstance(x, IndexExpr):
            lo, hi = expr_range(x)
            offset += s * x.const
            refs = []
            for key, coef in x.terms.items():
                b = nb + key[1]
                bstrides[b] += s * coef
                bkeys[b].add(key)
                refs.append((("B", b), coef))
            image.append((x.const, refs))
            if lo < 0 or hi >= n:
                checks.append((x.const, refs, n))
        elif getattr(x, "is_nki_tensor", False) or isinstance(x, DynamicIndex):
            if v.tile.mem == "psum":
                raise Unsupported("an indirect (data-dependent) index into a PSUM tensor")
            spans.append((s, n))
            for r in x.reads if isinstance(x, DynamicIndex) else (x,):
                reads.append(r.view() if isinstance(r, Tile) else r)
            image.append((0, []))
        else:
            j = as_int(x, "index")
            if j < 0:
                j += n
            if not 0 <= j < n:
                raise Invalid("index %d is out of range for a dimension of size %d" % (j, n))
            offset += s * j
            image.append((j, []))
    if exprs and not adjacent:
        pending.insert(0, "ADV")
    out = []
    where = {}
    for p, item in enumerate(pending):
        if item == "ADV":
            for b in range(nb):
                where[("B", b)] = len(out)
                out.append(("B", b))
        else:
            where[("P", p)] = len(out)
            out.append(item)
    for const, terms, size in v.checks:
        c, refs = const, []
        for old, coef in terms:
            ic, irefs = image[old]
            c += coef * ic
            refs.extend((r, coef * ic2) for r, ic2 in irefs)
        checks.append((c, refs, size))
    final = tuple(
        (c, tuple((where[r], coef) for r, coef in refs if r in where), size) for c, refs, size in checks
    )
    for item in out:
        if isinstance(item[0], str):
            b = item[1]
            shape.append(bshape[b])
            strides.append(bstrides[b] if bshape[b] > 1 else 0)
            keys.append(frozenset(bkeys[b]))
        else:
            shape.append(item[0])
            strides.append(item[1])
            keys.append(item[2])
    if len(shape) == 1 and v.ndim > 1 and v.tile.mem != "dram" and isinstance(idx[0], (slice, IndexExpr)):
        # An on-chip tile keeps a free dimension: t[:, j] is [P, 1].
        shape.append(1)
        strides.append(0)
        keys.append(frozenset())
    return View(v.tile, shape, strides, offset, keys, spans, reads, final)


def expr_range(e):
    lo = hi = e.const
    for key, coef in e.terms.items():
        n = e.size_of(key)
        lo += min(0, coef * (n - 1))
        hi += max(0, coef * (n - 1))
    return lo, hi


def broadcast_index_shapes(exprs):
    """The broadcast shape of index expressions and index tiles (right-aligned)."""
    shapes = [x.shape for x in exprs]
    if not shapes:
        return ()
    n = max(len(s) for s in shapes)
    out = []
    for i in range(n):
        dims = {s[i - n + len(s)] for s in shapes if i - n + len(s) >= 0} - {1}
        if len(dims) > 1:
            raise Invalid("index shapes %s do not broadcast" % (shapes,))
        out.append(dims.pop() if dims else 1)
    return tuple(out)
