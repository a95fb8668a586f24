"""``nki.language`` as the tracer implements it, and the instruction builders
that ``nki.isa`` shares."""

import builtins

from . import core
from .core import STATE, TraceError, Unsupported
from .tiles import Buffer, Grid, IndexRange, ParDim, Tile, View, as_int

# Dtypes are their NKI names.
float32 = "float32"
bfloat16 = "bfloat16"
float16 = "float16"
tfloat32 = "tfloat32"
float8_e4m3 = "float8_e4m3"
float8_e4m3fn = "float8_e4m3fn"
float8_e5m2 = "float8_e5m2"
float8_e8m0fnu = "float8_e8m0fnu"
float8_e4m3fn_x4 = "float8_e4m3fn_x4"
float8_e5m2_x4 = "float8_e5m2_x4"
float4_e2m1fn_x4 = "float4_e2m1fn_x4"
int8 = "int8"
uint8 = "uint8"
int16 = "int16"
uint16 = "uint16"
int32 = "int32"
uint32 = "uint32"
bool_ = "bool_"

sbuf = Buffer("nl.sbuf", "sbuf")
psum = Buffer("nl.psum", "psum")
hbm = Buffer("nl.hbm", "dram")
shared_hbm = Buffer("nl.shared_hbm", "dram")
private_hbm = Buffer("nl.private_hbm", "dram")


class tile_size:
    """Hardware tile sizes; the driver sets the arch-dependent ones."""

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


def par_dim(n):
    return ParDim(n)


# ---------------------------------------------------------------------------
# Loops


class _Range:
    """An ``affine_range`` or ``sequential_range``: each iteration is recorded
    on its own, and the loop is folded when the iterations agree."""

    def __init__(self, kind, args):
        if len(args) == 1:
            lo, hi, step = 0, args[0], 1
        elif len(args) == 2:
            lo, hi, step = args[0], args[1], 1
        else:
            lo, hi, step = args
        what = "%s bound" % kind
        for v in (lo, hi, step):
            if isinstance(v, (Tile, View)):
                raise Unsupported("a dynamic loop (%s_range over a tile's value)" % kind)
        self.lo, self.hi, self.step = as_int(lo, what), as_int(hi, what), as_int(step, what)
        self.kind = kind
        self.name = core.source_name(core._FOR, "i")
        self.loc = core.kernel_loc()

    def __iter__(self):
        values = list(builtins.range(self.lo, self.hi, self.step))
        rec = STATE.recorder
        frame = core.Frame(self.name, self.lo, self.step, len(values), self.kind, self.loc)
        rec.loop_begin(frame)
        for v in values:
            rec.loop_iteration()
            yield v
        rec.loop_end()


def affine_range(*args, **kwargs):
    return _Range("affine", args)


def sequential_range(*args, **kwargs):
    return _Range("sequential", args)


def static_range(*args, **kwargs):
    return builtins.range(*(as_int(a, "static_range bound") for a in args))


def dynamic_range(*args, **kwargs):
    raise Unsupported("a dynamic loop (nl.dynamic_range)")


def program_id(axis=0):
    return 0


def num_programs(axis=0):
    return 1


def program_ndim():
    return 0


def device_print(*args, **kwargs):
    return None


# ---------------------------------------------------------------------------
# Index ranges


def arange(*args):
    if len(args) == 1:
        lo, hi = 0, args[0]
    else:
        lo, hi = args[0], args[1]
    lo, hi = as_int(lo, "arange bound"), as_int(hi, "arange bound")
    return IndexRange(lo, hi - lo)


class _MGrid:
    def __getitem__(self, idx):
        if not isinstance(idx, tuple):
            idx = (idx,)
        out = []
        for s in idx:
            if not isinstance(s, slice) or s.step not in (None, 1):
                raise Unsupported("nl.mgrid takes unit-step slices")
            lo = 0 if s.start is None else as_int(s.start, "mgrid bound")
            out.append(IndexRange(lo, as_int(s.stop, "mgrid bound") - lo))
        return Grid(out)


mgrid = _MGrid()


def ds(start, size):
    return IndexRange(as_int(start, "nl.ds start"), as_int(size, "nl.ds size"))


# ---------------------------------------------------------------------------
# Allocation


def _buffer(buffer):
    if buffer is None:
        return sbuf
    if not isinstance(buffer, Buffer):
        raise Unsupported("buffer %r" % (buffer,))
    return buffer


def ndarray(shape, dtype, buffer=None, name="", **kwargs):
    return Tile(shape, dtype, _buffer(buffer), name or None)


empty = ndarray


def full(shape, fill_value, dtype, buffer=None, name="", **kwargs):
    t = Tile(shape, dtype, _buffer(buffer), name or None)
    for idx in t.blocks:
        v = t.view()
        if idx:
            v = v[idx]
        emit("memset", v, [], value=float(fill_value))
    return t


def zeros(shape, dtype, buffer=None, name="", **kwargs):
    return full(shape, 0, dtype, buffer, name)


def ones(shape, dtype, buffer=None, name="", **kwargs):
    return full(shape, 1, dtype, buffer, name)


def _like(x):
    v = view_of(x)
    return v.shape, v.dtype, v.buffer


def empty_like(x, dtype=None, buffer=None, name="", **kwargs):
    shape, dt, buf = _like(x)
    return ndarray(shape, dtype or dt, buffer or buf, name)


ndarray_like = empty_like


def zeros_like(x, dtype=None, buffer=None, name="", **kwargs):
    shape, dt, buf = _like(x)
    return zeros(shape, dtype or dt, buffer or buf, name)


def ones_like(x, dtype=None, buffer=None, name="", **kwargs):
    shape, dt, buf = _like(x)
    return ones(shape, dtype or dt, buffer or buf, name)


def full_like(x, fill_value, dtype=None, buffer=None, name="", **kwargs):
    shape, dt, buf = _like(x)
    return full(shape, fill_value, dtype or dt, buffer or buf, name)


# ---------------------------------------------------------------------------
# Instruction builders


def view_of(x):
    if isinstance(x, Tile):
        return x.view()
    if isinstance(x, View):
        return x
    return None


def is_tile(x):
    return isinstance(x, (Tile, View))


def emit(op, dst, srcs, value=None, pos=None, accumulate=None):
    """Records ``op dst <- srcs`` at the kernel line being executed."""
    for s in srcs:
        s.tile.fresh = None
    inst = core.Inst(
        op,
        dst.access(),
        [s.access() for s in srcs],
        core.kernel_loc(),
        value,
        pos,
        accumulate,
    )
    STATE.recorder.emit(inst)
    return inst


def produce(op, srcs, shape, dtype, mem, **kw):
    """A fresh tile written by ``op`` from ``srcs``: a value-returning NKI call."""
    buf = {"psum": psum, "sbuf": sbuf}[mem] if isinstance(mem, str) else mem
    t = Tile(shape, dtype, buf)
    inst = emit(op, t.view(), srcs, **kw)
    t.fresh = inst
    return t


def engine_op(dst, srcs):
    """``act`` when every source has the destination's shape, else ``engine``."""
    shape = (dst.part_extent(), dst.elements())
    same = builtins.all((s.part_extent(), s.elements()) == shape for s in srcs)
    return "act" if same and srcs else "engine"


def broadcast(shapes):
    n = builtins.max(len(s) for s in shapes)
    out = []
    for i in builtins.range(n):
        dims = [s[i - n + len(s)] for s in shapes if i - n + len(s) >= 0]
        big = [d for d in dims if d != 1]
        if len(set(big)) > 1:
            raise TraceError("shapes %s do not broadcast" % (shapes,), "invalid")
        out.append(big[0] if big else 1)
    return tuple(out)


def compute(args, dtype=None, buffer=None, dst=None, shape=None, force_engine=False):
    """An engine instruction over the tile operands among ``args`` (scalars
    are immediates), into ``dst`` or a fresh tile."""
    srcs = [view_of(a) for a in args if is_tile(a)]
    if not srcs:
        raise Unsupported("an operation without tile operands")
    if dst is not None:
        target = view_of(dst)
        op = "engine" if force_engine else engine_op(target, srcs)
        emit(op, target, srcs)
        return target
    if shape is None:
        shape = broadcast([s.shape for s in srcs])
    dt = dtype or srcs[0].dtype
    buf = _buffer(buffer)
    t = Tile(shape, dt, buf)
    target = t.view()
    op = "engine" if force_engine else engine_op(target, srcs)
    t.fresh = emit(op, target, srcs)
    return t


def reduce_shape(shape, axis, keepdims):
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    axes = [a % len(shape) for a in (as_int(a, "axis") for a in axes)]
    out = []
    for i, d in enumerate(shape):
        if i in axes:
            if keepdims or i == 0:
                out.append(1)
        else:
            out.append(d)
    if len(out) == 1:
        out.append(1)
    return tuple(out)


def reduction(x, axis, dtype=None, buffer=None, keepdims=False, dst=None):
    v = view_of(x)
    if v is None:
        raise Unsupported("a reduction of a non-tile")
    return compute(
        [v],
        dtype,
        buffer,
        dst,
        shape=reduce_shape(v.shape, axis, keepdims),
        force_engine=True,
    )


def whole(v):
    """Whether view ``v`` covers its whole (single-block) tile."""
    return builtins.all(d[1] == 0 and (d[0] == "block" or d[2] == n) for d, n in zip(v.dims, full_dims(v.tile)))


def full_dims(t):
    return list(t.block_shape) + [t.par] + list(t.free_shape)


def retarget(value, target):
    """Moves the write of a fresh tile produced by the previous instruction to
    ``target``; returns whether it did."""
    v = view_of(value)
    if v is None or v.tile.fresh is None or not whole(v):
        return False
    inst = v.tile.fresh
    if STATE.recorder.last_inst() is not inst:
        return False
    if v.elements() != target.elements() or v.part_extent() != target.part_extent():
        return False
    inst.dst = target.access()
    v.tile.fresh = None
    return True


def assign(target, value):
    """``target[...] = value``."""
    if not is_tile(value):
        if isinstance(value, (int, float)):
            emit("memset", target, [], value=float(value))
            return
        raise Unsupported("assigning %r to a tile" % (value,))
    if retarget(value, target):
        return
    src = view_of(value)
    if (src.part_extent(), src.elements()) == (target.part_extent(), target.elements()):
        emit("copy", target, [src])
    else:
        emit("engine", target, [src])


def accumulate(target, value):
    """``target += value``: a matmul accumulates in place, anything else adds."""
    v = view_of(value)
    if v is not None and v.tile.fresh is not None and v.tile.fresh.op.startswith("matmul"):
        if retarget(value, target):
            return
    srcs = [target] + ([v] if v is not None else [])
    emit(engine_op(target, srcs), target, srcs)


def pe_transpose(data, dst=None):
    """A PE transpose: ``matmul.t`` of ``data`` against an identity tile."""
    v = view_of(data)
    p = v.part_extent()
    f = v.elements() // p
    ident = identity(v.tile.dtype, p)
    if dst is not None:
        emit("matmul.t", view_of(dst), [v, ident])
        return view_of(dst)
    return produce("matmul.t", [v, ident], (f, p), float32, "psum")


def identity(dtype, n):
    """The identity tile PE transposes multiply by (one per dtype)."""
    rec = STATE.recorder
    key = ("identity", dtype)
    cache = getattr(rec, "identities", None)
    if cache is None:
        cache = rec.identities = {}
    if key not in cache:
        t = Tile((128, 128), dtype, sbuf, name="identity")
        for block in t.blocks.values():
            block.loc = None
            rec.allocs().remove(block)
            rec.top_allocs.append(block)
        cache[key] = t
    return cache[key][0:n, 0:n]


# ---------------------------------------------------------------------------
# Memory movement and the Tensor Engine


def load(src, dtype=None, mask=None, **kwargs):
    v = view_of(src)
    return produce("dma", [v], v.shape, dtype or v.dtype, "sbuf")


def store(dst, value, mask=None, **kwargs):
    d = view_of(dst)
    if not is_tile(value):
        raise Unsupported("storing a non-tile value")
    emit("dma", d, [view_of(value)])


def copy(x, dtype=None, mask=None, **kwargs):
    v = view_of(x)
    return produce("copy", [v], v.shape, dtype or v.dtype, "sbuf")


def matmul(x, y, transpose_x=False, mask=None, **kwargs):
    """``x @ y`` on the Tensor Engine; without ``transpose_x``, ``x`` is first
    transposed on the PE and copied back to SBUF."""
    xv, yv = view_of(x), view_of(y)
    if not transpose_x:
        xt_psum = pe_transpose(xv)
        xt = produce("copy", [xt_psum.view()], xt_psum.shape, xv.dtype, "sbuf")
        xv = xt.view()
    m = xv.elements() // xv.part_extent()
    n = yv.elements() // yv.part_extent()
    return produce("matmul", [xv, yv], (m, n), float32, "psum")


def transpose(x, dtype=None, mask=None, **kwargs):
    return pe_transpose(x)


def _elementwise(name):
    def op(*args, dtype=None, buffer=None, mask=None, **kwargs):
        return compute(args, dtype, buffer)

    op.__name__ = name
    return op


for _name in (
    "add subtract multiply divide maximum minimum power fmod exp log tanh sigmoid relu gelu "
    "gelu_dx gelu_apprx_tanh silu silu_dx softplus mish sqrt rsqrt square abs negative "
    "reciprocal sin cos tan arctan erf erf_dx sign ceil floor trunc equal not_equal greater "
    "greater_equal less less_equal logical_and logical_or logical_xor logical_not "
    "bitwise_and bitwise_or bitwise_xor invert left_shift right_shift where"
).split():
    globals()[_name] = _elementwise(_name)


def _reduction(name):
    def op(x, axis, dtype=None, buffer=None, mask=None, keepdims=False, **kwargs):
        return reduction(x, axis, dtype, buffer, keepdims)

    op.__name__ = name
    return op


for _name in "max min sum mean prod all any".split():
    globals()[_name] = _reduction(_name)


def softmax(x, axis, dtype=None, compute_dtype=None, mask=None, **kwargs):
    return compute([x], dtype, None, shape=view_of(x).shape, force_engine=True)


def broadcast_to(x, shape, **kwargs):
    return compute([x], None, None, shape=tuple(shape), force_engine=True)


def loop_reduce(x, op, loop_indices, dtype=None, mask=None, **kwargs):
    """Reduces ``x`` into itself across the iterations of ``loop_indices``."""
    v = view_of(x)
    emit("engine", v, [v])
    return x
