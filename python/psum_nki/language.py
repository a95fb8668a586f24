"""``nki.language`` as registrations (SPEC §9.2): each public name with NKI's
signature (the newer form and the older one, with ``mask=``) and its
lowering."""

import builtins

from . import core, dtypes, lower
from .api import api, refuse, value
from .errors import FOR, Invalid, Unsupported, kernel_loc, source_name
from .index import IndexExpr, as_int, mgrid as _mgrid
from .tiles import BUFFERS, PSUM, SBUF, ParDim, Tile, buffer_of, product

L = "nki.language."

for _name in dtypes.TABLE:
    value(L + _name, dtypes.BY_NAME[_name])
value(L + "DType", dtypes.DType)
for _name, _buf in BUFFERS.items():
    value(L + _name, _buf)


class MemoryRegion:
    """The memories a tensor lives in."""

    sbuf = SBUF
    psum = PSUM
    private_hbm = BUFFERS["private_hbm"]
    shared_hbm = BUFFERS["shared_hbm"]
    hbm = BUFFERS["hbm"]


value(L + "MemoryRegion", MemoryRegion)


class NKIObject:
    """Base class of NKI configuration objects (keyword fields)."""

    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)


value(L + "NKIObject", NKIObject)
value(L + "NkiTensor", Tile)


class fp32:
    """FP32 constants."""

    min = -3.4028234663852886e38


value(L + "fp32", fp32)


class tile_size:
    """Hardware tile sizes; the driver sets the architecture's."""

    pmax = 128
    gemm_stationary_fmax = 128
    gemm_moving_fmax = 512
    psum_fmax = 512
    psum_fmax_bytes = 2048
    psum_bank_fmax = 512
    psum_bank_fmax_bytes = 2048
    psum_num_banks = 8
    psum_min_align = 4
    sbuf_min_align = 1
    bn_stats_fmax = 512
    sbuf_fmax = 0
    sbuf_fmax_bytes = 0
    sbuf_size_bytes = 0
    total_available_sbuf_size = 0


value(L + "tile_size", tile_size)


@api(L + "par_dim", "(n)")
def par_dim(a):
    return ParDim(a.n)


def _is(mem):
    def check(a):
        return lower.tensor_arg(a.x, "the tensor").tile.mem in mem

    return check


for _name, _mem in (("is_hbm", ("dram",)), ("is_on_chip", ("sbuf", "psum")), ("is_psum", ("psum",)), ("is_sbuf", ("sbuf",))):
    api(L + _name, "(x)")(_is(_mem))


# ---------------------------------------------------------------------------
# Loops and the SPMD grid


class Range:
    """An ``affine_range`` or ``sequential_range``: each iteration is recorded
    on its own, and the loop is folded when the iterations agree."""

    def __init__(self, kind, start, stop, step):
        if stop is None:
            start, stop = 0, start
        what = "%s bound" % kind
        for v in (start, stop, step):
            if getattr(v, "is_nki_tensor", False):
                raise Unsupported("a dynamic loop (%s_range over a tile's value)" % kind)
        self.lo, self.hi, self.step = as_int(start, what), as_int(stop, what), as_int(step, what)
        if self.step == 0:
            raise Invalid("%s_range step 0" % kind)
        self.kind = kind
        self.name = source_name(FOR, "i")
        self.loc = kernel_loc()

    def __iter__(self):
        values = list(builtins.range(self.lo, self.hi, self.step))
        rec = lower.recorder()
        frame = core.Frame(self.name, self.lo, self.step, len(values), self.kind, self.loc)
        rec.loop_begin(frame)
        for v in values:
            rec.loop_iteration()
            yield v
        rec.loop_end()

    def __len__(self):
        return len(builtins.range(self.lo, self.hi, self.step))


RANGE = "(start, stop=None, step=1)"


#: ``precise_schedule`` asks the scheduler to keep the iterations' order; it
#: changes when instructions run, not what they compute, so it has no effect
#: on the traced program.
@api(L + "affine_range", "(start, stop=None, step=1, precise_schedule=False)")
def affine_range(a):
    return Range("affine", a.start, a.stop, a.step)


@api(L + "sequential_range", RANGE)
def sequential_range(a):
    return Range("sequential", a.start, a.stop, a.step)


@api(L + "static_range", RANGE)
def static_range(a):
    if a.stop is None:
        return builtins.range(as_int(a.start, "static_range bound"))
    return builtins.range(as_int(a.start, "static_range bound"), as_int(a.stop, "static_range bound"), as_int(a.step, "static_range step"))


@api(L + "constants.sizeinbytes", "(dtype)")
def sizeinbytes(a):
    """The bytes of one element of ``dtype`` (``nki.language.constants``)."""
    return dtypes.lookup(a.dtype).size


refuse(L + "dynamic_range", "a loop whose bounds are runtime values (psum programs have static loops)")
refuse(L + "fori_loop", "a loop whose trip count is a runtime value")
refuse(L + "while_loop", "a loop whose condition is a runtime value")


class Grid:
    """The launch grid of the traced program (``--grid``) and its instance (``--program-id``)."""

    dims = ()
    ids = ()
    used = False
    loc = None


GRID = Grid()


def _used():
    if not GRID.used:
        GRID.used = True
        GRID.loc = kernel_loc()


def _axis(axis):
    axis = as_int(axis, "grid axis")
    _used()
    if not GRID.dims:
        return None
    if not 0 <= axis < len(GRID.dims):
        raise Invalid("axis %d of a %d-dimensional launch grid" % (axis, len(GRID.dims)))
    return axis


@api(L + "program_id", "(axis=0)")
def program_id(a):
    axis = _axis(a.axis)
    return 0 if axis is None else GRID.ids[axis]


@api(L + "num_programs", "(axes=None)")
def num_programs(a):
    if a.axes is None:
        _used()
        return product(GRID.dims) if GRID.dims else 1
    axes = a.axes if isinstance(a.axes, (tuple, list)) else (a.axes,)
    total = 1
    for ax in axes:
        axis = _axis(ax)
        total *= 1 if axis is None else GRID.dims[axis]
    return total


@api(L + "program_ndim", "()")
def program_ndim(a):
    _used()
    return len(GRID.dims)


class SpmdDim:
    """``nl.spmd_dim`` / ``nl.nc``: a launch-grid dimension (its size is the product)."""

    def __init__(self, sizes):
        self.size = product(int(getattr(s, "size", s)) for s in sizes)

    def __index__(self):
        return self.size


@api(L + "spmd_dim", "(*sizes)")
def spmd_dim(a):
    return SpmdDim(a.sizes)


@api(L + "nc", "(n)")
def nc(a):
    return SpmdDim((a.n,))


@api(L + "device_print", "(prefix, x=None, *, mask=None)")
def device_print(a):
    return None


@api(L + "no_reorder", "()")
def no_reorder(a):
    """A block whose instructions keep their order (psum keeps program order)."""
    import contextlib

    return contextlib.nullcontext()


# ---------------------------------------------------------------------------
# Index ranges


@api(L + "arange", "(*args)")
def arange(a):
    args = a.args
    if not 1 <= len(args) <= 3:
        raise Invalid("nl.arange takes (stop), (start, stop) or (start, stop, step)")
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) > 2 else 1)
    start, stop, step = as_int(start, "arange bound"), as_int(stop, "arange bound"), as_int(step, "arange step")
    n = len(builtins.range(start, stop, step))
    if n <= 0:
        raise Invalid("nl.arange(%d, %d, %d) is empty" % (start, stop, step))
    return IndexExpr.range(start, n, step)


class _MGrid:
    """``nl.mgrid[…]``."""

    def __getitem__(self, idx):
        return _mgrid(idx)


value(L + "mgrid", _MGrid())


@api(L + "ds", "(start, size)")
def ds(a):
    start, size = as_int(a.start, "nl.ds start"), as_int(a.size, "nl.ds size")
    return slice(start, start + size)


# ---------------------------------------------------------------------------
# Allocation

CREATE = "(shape, dtype, buffer=None, name='', *, lazy_initialization=False)"


@api(L + "ndarray", CREATE)
def ndarray(a):
    return Tile(a.shape, a.dtype, buffer_of(a.buffer), a.name or None)


def _fill(shape, fill, dtype, buffer, name):
    v = lower.number(fill, "the fill value")
    t = Tile(shape, dtype, buffer_of(buffer), name or None)
    for idx in t.blocks:
        view = t.view()
        lower.emit("memset", view[idx] if idx else view, [], value=v)
    return t


@api(L + "zeros", CREATE)
def zeros(a):
    return _fill(a.shape, 0, a.dtype, a.buffer, a.name)


@api(L + "ones", CREATE)
def ones(a):
    return _fill(a.shape, 1, a.dtype, a.buffer, a.name)


@api(L + "full", "(shape, fill_value, dtype, buffer=None, name='', *, lazy_initialization=False)")
def full(a):
    return _fill(a.shape, a.fill_value, a.dtype, a.buffer, a.name)


@api(L + "rand", "(shape, dtype=float32, *, buffer=None, name='')", ns={"float32": dtypes.BY_NAME["float32"]})
def rand(a):
    return _fill(a.shape, 0, a.dtype, a.buffer, a.name)


LIKE = "(a, dtype=None, *, buffer=None, name='')"


def _like(a):
    v = lower.tensor_arg(a.a, "the template tensor")
    return v.shape, a.dtype or v.dtype, buffer_of(a.buffer, v.buffer), a.name


@api(L + "empty_like", LIKE)
def empty_like(a):
    shape, dt, buf, name = _like(a)
    return Tile(shape, dt, buf, name or None)


@api(L + "zeros_like", LIKE)
def zeros_like(a):
    shape, dt, buf, name = _like(a)
    return _fill(shape, 0, dt, buf, name)


@api(L + "shared_constant", "(constant, dtype=None)")
def shared_constant(a):
    """A constant in DRAM filled by the host (its values are not PSUM traffic)."""
    c = a.constant
    shape = getattr(c, "shape", None)
    if shape is None:
        shape = _nested_shape(c)
    dt = a.dtype or getattr(c, "dtype", None) or "float32"
    return Tile(tuple(shape), dt, BUFFERS["shared_hbm"], name=source_name_or("constant"))


def _nested_shape(c):
    shape = []
    while isinstance(c, (list, tuple)):
        shape.append(len(c))
        c = c[0] if c else None
    if not shape:
        raise Invalid("nl.shared_constant takes an array")
    return shape


def source_name_or(default):
    from .errors import ASSIGN

    return source_name(ASSIGN, default)


@api(L + "shared_identity_matrix", "(n, dtype='uint8')")
def shared_identity_matrix(a):
    n = as_int(a.n, "identity size")
    return Tile((n, n), a.dtype, BUFFERS["shared_hbm"], name=source_name_or("identity"))


@api(L + "static_cast", "(input_data, dtype)")
def static_cast(a):
    return a.input_data


@api(L + "finfo", "(dtype)")
def finfo(a):
    """numpy's finfo of a float dtype (needs numpy, as numpy's own does)."""
    import numpy

    return numpy.finfo(dtypes.lookup(a.dtype).dtype)


# ---------------------------------------------------------------------------
# Memory movement and the Tensor Engine


@api(L + "load", "(src, dtype=None, *, mask=None)")
def load(a):
    v = lower.tensor_arg(a.src, "src")
    return lower.produce("dma", [v], v.shape, a.dtype or v.dtype, SBUF, mask=a.mask)


@api(L + "store", "(dst, value, *, mask=None)")
def store(a):
    d = lower.tensor_arg(a.dst, "dst")
    if not lower.is_tensor(a.value):
        lower.emit("memset", d, [], value=lower.number(a.value, "the stored value"), mask=a.mask)
        return None
    lower.emit("dma", d, [a.value], mask=a.mask)
    return None


@api(L + "load_transpose2d", "(src, dtype=None, *, mask=None)")
def load_transpose2d(a):
    v = lower.tensor_arg(a.src, "src")
    if v.ndim != 2:
        raise Invalid("nl.load_transpose2d takes a 2-D tensor, not %s" % (v.shape,))
    return lower.produce("dma", [v], (v.shape[1], v.shape[0]), a.dtype or v.dtype, SBUF, mask=a.mask)


@api(L + "copy", "(src, dtype=None, *, mask=None)")
def copy(a):
    v = lower.tensor_arg(a.src, "src")
    return lower.produce("copy", [v], v.shape, a.dtype or v.dtype, SBUF, mask=a.mask)


@api(L + "matmul", "(x, y, *, transpose_x=False, mask=None)")
def matmul(a):
    """``x @ y`` on the Tensor Engine; without ``transpose_x``, ``x`` is first
    transposed on the PE and copied back to SBUF."""
    xv, yv = lower.tensor_arg(a.x, "x"), lower.tensor_arg(a.y, "y")
    if not a.transpose_x:
        xt_psum = lower.pe_transpose(xv)
        xt = lower.produce("copy", [xt_psum.view()], xt_psum.shape, xv.dtype, SBUF)
        xv = xt.view()
    return lower.matmul("matmul", None, xv, yv, mask=a.mask)


@api(L + "transpose", "(x, dtype=None, *, mask=None)")
def transpose(a):
    return lower.pe_transpose(a.x, mask=a.mask)


# ---------------------------------------------------------------------------
# Element-wise, reductions, and the rest of the math

UNARY = "(x, dtype=None, *, mask=None)"
BINARY = "(x, y, dtype=None, *, mask=None)"
BOOL_BINARY = "(x, y, dtype=bool, *, mask=None)"


def _elementwise(names):
    def op(a):
        args = [getattr(a, n) for n in names]
        dt = a.dtype if a.dtype is not bool else "bool_"
        return lower.elementwise(args, dt, a.mask)

    return op


UNARY_OPS = (
    "exp log tanh sigmoid relu gelu gelu_dx gelu_apprx_tanh gelu_apprx_sigmoid gelu_apprx_sigmoid_dx silu silu_dx "
    "softplus mish sqrt rsqrt square abs negative reciprocal sin cos tan arctan erf erf_dx sign ceil floor trunc "
    "invert bypass"
)
BINARY_OPS = "add subtract multiply divide maximum minimum power fmod mod bitwise_and bitwise_or bitwise_xor left_shift right_shift abs_max abs_min"
BOOL_OPS = "equal not_equal greater greater_equal less less_equal logical_and logical_or logical_xor"
for _name in UNARY_OPS.split():
    api(L + _name, UNARY)(_elementwise(("x",)))
for _name in BINARY_OPS.split():
    api(L + _name, BINARY)(_elementwise(("x", "y")))
for _name in BOOL_OPS.split():
    api(L + _name, BOOL_BINARY)(_elementwise(("x", "y")))
api(L + "logical_not", "(x, dtype=bool, *, mask=None)")(_elementwise(("x",)))
api(L + "prelu", "(x, alpha, dtype=None, *, mask=None)")(_elementwise(("x", "alpha")))
api(L + "where", "(condition, x, y, dtype=None, *, mask=None)")(_elementwise(("condition", "x", "y")))


@api(L + "dropout", "(x, rate, dtype=None, *, mask=None)")
def dropout(a):
    return lower.elementwise([a.x, a.rate], a.dtype, a.mask)


REDUCE = "(x, axis, dtype=None, *, mask=None, keepdims=False)"


def _reduce(a):
    dt = a.dtype if a.dtype is not bool else "bool_"
    return lower.reduction(a.x, a.axis, dt, a.keepdims, a.mask)


for _name in "max min sum mean prod all var average".split():
    api(L + _name, "(x, axis, dtype=bool, *, mask=None, keepdims=False)" if _name == "all" else REDUCE)(_reduce)


@api(L + "softmax", "(x, axis, dtype=None, *, compute_dtype=None, mask=None)")
def softmax(a):
    v = lower.tensor_arg(a.x, "x")
    return lower.produce("engine", [v], v.shape, a.dtype or v.dtype, SBUF, mask=a.mask)


@api(L + "rms_norm", "(x, w, axis, n, epsilon=1e-06, *, dtype=None, compute_dtype=None, mask=None)")
def rms_norm(a):
    v = lower.tensor_arg(a.x, "x")
    w = lower.tensor_arg(a.w, "w")
    return lower.produce("engine", [v, w], v.shape, a.dtype or v.dtype, SBUF, mask=a.mask)


@api(L + "broadcast_to", "(src, shape)")
def broadcast_to(a):
    v = lower.tensor_arg(a.src, "src")
    shape = tuple(as_int(d, "broadcast dimension") for d in a.shape)
    if v.shape == shape:
        return a.src
    return lower.produce("engine", [v], shape, v.dtype, SBUF)


@api(L + "expand_dims", "(data, axis)")
def expand_dims(a):
    v = lower.tensor_arg(a.data, "data")
    axes = a.axis if isinstance(a.axis, (tuple, list)) else (a.axis,)
    shape, strides, keys = list(v.shape), list(v.strides), list(v.keys)
    for ax in sorted(as_int(x, "axis") % (len(shape) + len(axes)) for x in axes):
        shape.insert(ax, 1)
        strides.insert(ax, 0)
        keys.insert(ax, frozenset())
    from .tiles import View

    return View(v.tile, shape, strides, v.offset, keys, v.spans, v.reads)


@api(L + "gather_flattened", "(data, indices, *, mask=None, dtype=None)")
def gather_flattened(a):
    d, i = lower.tensor_arg(a.data, "data"), lower.tensor_arg(a.indices, "indices")
    return lower.produce("engine", [d, i], i.shape, a.dtype or d.dtype, SBUF, mask=a.mask)


@api(L + "loop_reduce", "(x, op, loop_indices, *, dtype=None, mask=None)")
def loop_reduce(a):
    """``t[…] = nl.loop_reduce(x, op, …)`` reduces ``x`` into ``t`` across the
    loop's iterations: the assignment reads ``t`` as well."""
    v = lower.tensor_arg(a.x, "x")
    t = lower.produce("act", [v], v.shape, a.dtype or v.dtype, SBUF, mask=a.mask)
    t.accumulates = True
    return t


@api(L + "random_seed", "(seed, *, mask=None)")
def random_seed(a):
    if lower.is_tensor(a.seed):
        lower.tensor_arg(a.seed, "seed")
    return None


refuse(L + "atomic_rmw", "read-modify-write of HBM at dynamic indices")
refuse(L + "all_reduce", "a reduction across SPMD programs (the program is one NeuronCore's instance)")
