"""``nki.isa`` as registrations (SPEC §9.2): each instruction with NKI's
signature, the newer form (``dst`` first) and the older one (a fresh tile
returned, with ``mask=`` and ``dtype=``), and its lowering."""

from . import lower
from .api import Named, api, refuse, value
from .errors import Invalid, Unsupported
from .index import IndexExpr, as_int
from .tiles import SBUF, Tile

I = "nki.isa."


class engine:
    """Engine selectors (no effect on PSUM)."""

    tensor = Named("engine.tensor")
    vector = Named("engine.vector")
    scalar = Named("engine.scalar")
    gpsimd = Named("engine.gpsimd")
    dma = Named("engine.dma")
    sync = Named("engine.sync")
    unknown = Named("engine.unknown")


class dge_mode:
    """DMA descriptor generation modes (no effect on PSUM)."""

    unknown = Named("dge_mode.unknown")
    swdge = Named("dge_mode.swdge")
    hwdge = Named("dge_mode.hwdge")
    none = Named("dge_mode.none")


class oob_mode:
    """Out-of-bounds index handling of indirect DMA (no effect on PSUM)."""

    error = Named("oob_mode.error")
    skip = Named("oob_mode.skip")


class reduce_cmd:
    """Accumulator-register commands of the Scalar/Vector engines."""

    idle = Named("reduce_cmd.idle")
    reset = Named("reduce_cmd.reset")
    reduce = Named("reduce_cmd.reduce")
    reset_reduce = Named("reduce_cmd.reset_reduce")
    load_reduce = Named("reduce_cmd.load_reduce")


class matmul_perf_mode:
    """Tensor Engine performance modes."""

    none = Named("matmul_perf_mode.none")
    double_row = Named("matmul_perf_mode.double_row")
    double_row_gen3 = Named("matmul_perf_mode.double_row_gen3")
    double_row_sw_interleave = Named("matmul_perf_mode.double_row_sw_interleave")


class nc_version:
    """NeuronCore versions."""

    gen2 = 2
    gen3 = 3
    gen4 = 4


class NkiValidationError(Exception):
    """An instruction's operands break its rules."""


class NkiInstruction:
    """The handle an ISA call returns in NKI; the tracer's calls return their result tile."""


class VirtualRegister:
    """``nisa.register_alloc``: a register holding a compile-time integer."""

    def __init__(self, x=None):
        self.value = x


class Target:
    """The NeuronCore version of the traced architecture (set by the driver)."""

    level = 20


for _name, _obj in (
    ("engine", engine),
    ("dge_mode", dge_mode),
    ("oob_mode", oob_mode),
    ("reduce_cmd", reduce_cmd),
    ("matmul_perf_mode", matmul_perf_mode),
    ("nc_version", nc_version),
    ("NkiValidationError", NkiValidationError),
    ("NkiInstruction", NkiInstruction),
    ("VirtualRegister", VirtualRegister),
):
    value(I + _name, _obj)
for _name in ("tensor", "vector", "scalar", "gpsimd", "dma", "unknown"):
    value(I + _name + "_engine", getattr(engine, _name))

NS = {"engine": engine, "dge_mode": dge_mode, "oob_mode": oob_mode, "reduce_cmd": reduce_cmd, "matmul_perf_mode": matmul_perf_mode}


def isa(name, sig, legacy=None, unmodelled=None):
    return api(I + name, sig, legacy, unmodelled, NS)


@isa("get_nc_version", "()")
def get_nc_version(a):
    return Target.level // 10


@isa("get_nc_sub_version", "()")
def get_nc_sub_version(a):
    return 0


def tiles_among(*xs):
    return [x for x in xs if lower.is_tensor(x)]


def shape_of(x):
    return lower.tensor_arg(x, "the operand").shape


# ---------------------------------------------------------------------------
# The Tensor Engine


def pe_position(tile_position, tile_size):
    """``pos=`` from ``tile_position`` (start row, start column in PE rows and
    columns), each a multiple of its ``tile_size`` entry."""
    if not tile_position and not tile_size:
        return None
    if not tile_position or not tile_size:
        raise Invalid("tile_position and tile_size are set together (tiling mode needs both)")
    if len(tile_position) != 2 or len(tile_size) != 2:
        raise Invalid("tile_position and tile_size are (row, column) pairs")
    r, c = (as_int(x, "tile_position") for x in tile_position)
    rs, cs = (as_int(x, "tile_size") for x in tile_size)
    for what, start, size in (("row", r, rs), ("column", c, cs)):
        if size <= 0 or start % size or not 0 <= start < 128:
            raise Invalid(
                "tile_position start %s %d is not a multiple of the tile_size %s %d within the 128x128 PE array"
                % (what, start, what, size)
            )
    return (r, c)


def accumulate_of(a):
    """What the kernel asked for: ``accumulate=``, or the overwrite/accumulate
    bits of ``psum_accumulate_flag`` (bit 0 overwrites, bit 2 accumulates)."""
    if a.accumulate is not None:
        return a.accumulate
    flag = a.psum_accumulate_flag
    if flag is None:
        return None
    flag = as_int(flag, "psum_accumulate_flag")
    if flag & 1:
        return False
    return True


MATMUL = (
    "(dst, stationary, moving, is_stationary_onezero=False, is_moving_onezero=False, is_transpose=False, "
    "tile_position=(), tile_size=(), accumulate=None, psum_accumulate_flag=None, "
    "perf_mode=matmul_perf_mode.none, name=None)"
)
MATMUL_LEGACY = (
    "(stationary, moving, *, is_stationary_onezero=False, is_moving_onezero=False, is_transpose=False, "
    "tile_position=(), tile_size=(), perf_mode=matmul_perf_mode.none, mask=None)"
)


@isa("nc_matmul", MATMUL, MATMUL_LEGACY)
def nc_matmul(a):
    """``dst = stationary.T @ moving`` (``matmul``); ``double_row`` performance
    mode contracts over the partitions and the first free dimension (2), as
    two accumulating matmuls."""
    if a.is_transpose:
        return lower.pe_transpose(a.stationary, a.dst, mask=a.mask)
    pos = pe_position(a.tile_position, a.tile_size)
    acc = accumulate_of(a)
    mode = getattr(a.perf_mode, "text", a.perf_mode)
    if mode is None or str(mode).rpartition(".")[2] == "none":
        return lower.matmul("matmul", a.dst, a.stationary, a.moving, pos, acc, a.mask)
    s, m = lower.tensor_arg(a.stationary, "stationary"), lower.tensor_arg(a.moving, "moving")
    if s.ndim < 3 or m.ndim < 3 or s.shape[1] != 2 or m.shape[1] != 2:
        raise Invalid("double-row matmul takes [K, 2, …] stationary and moving tiles")
    out = a.dst
    for j in (0, 1):
        out = lower.matmul("matmul", out, s[:, j], m[:, j], pos, acc if j == 0 else True, a.mask)
    return out


@isa(
    "nc_matmul_mx",
    "(dst, stationary, moving, stationary_scale, moving_scale, tile_position=None, tile_size=None, "
    "accumulate=None, psum_accumulate_flag=None, name=None)",
)
def nc_matmul_mx(a):
    """The MX matmul of NeuronCore-v4 (``matmul.mx``); the scales are not PSUM traffic."""
    pos = pe_position(a.tile_position, a.tile_size)
    return lower.matmul("matmul.mx", a.dst, a.stationary, a.moving, pos, accumulate_of(a), None)


@isa(
    "nc_transpose",
    "(dst, data, engine=engine.unknown, name=None)",
    "(data, *, mask=None, dtype=None, engine=engine.unknown)",
)
def nc_transpose(a):
    """On the Tensor Engine (the default) a ``matmul.t`` against an identity;
    on the Vector Engine an ``engine`` op."""
    if a.engine is engine.vector:
        v = lower.tensor_arg(a.data, "data")
        p = v.part_extent()
        return lower.into(a.dst, "engine", [v], a.mask, (v.elements() // p, p), a.dtype)
    return lower.pe_transpose(a.data, a.dst, mask=a.mask)


# ---------------------------------------------------------------------------
# Vector, Scalar and GpSimd engines

ACT = "(dst, op, data, bias=None, scale=1.0, reduce_op=None, reduce_res=None, reduce_cmd=reduce_cmd.idle, name=None)"
ACT_LEGACY = "(op, data, bias=None, scale=1.0, *, reduce_op=None, reduce_res=None, reduce_cmd=reduce_cmd.idle, mask=None, dtype=None)"


def _activation(a):
    srcs = [a.data] + tiles_among(a.bias, a.scale)
    out = lower.into(a.dst, "act", srcs, a.mask, shape_of(a.data), a.dtype)
    if a.reduce_res is not None:
        lower.emit("engine", a.reduce_res, [out], mask=a.mask)
    return out


@isa("activation", ACT, ACT_LEGACY)
def activation(a):
    """``op(data * scale + bias)``; a ``reduce_res`` adds a reduction of the result."""
    return _activation(a)


@isa(
    "activation_reduce",
    "(dst, op, data, reduce_op, reduce_res, bias=None, scale=1.0, name=None)",
    "(op, data, *, reduce_op, reduce_res, bias=None, scale=1.0, mask=None, dtype=None)",
)
def activation_reduce(a):
    return _activation(a)


@isa(
    "activate2",
    "(dst, op, data, imm0, imm1, op0, op1, relu_param=0.0, reverse0=False, reverse1=False, reduce_op=None, "
    "reduce_res=None, reduce_cmd=reduce_cmd.idle, name=None)",
)
def activate2(a):
    srcs = [a.data] + tiles_among(a.imm0, a.imm1, a.relu_param)
    lower.emit("act", a.dst, srcs)
    if a.reduce_res is not None:
        lower.emit("engine", a.reduce_res, [a.dst])
    return a.dst


@isa(
    "tensor_tensor",
    "(dst, data1, data2, op, engine=engine.unknown, name=None)",
    "(data1, data2, op, *, dtype=None, mask=None, engine=engine.unknown)",
)
def tensor_tensor(a):
    return lower.into(a.dst, "act", [a.data1, a.data2], a.mask, shape_of(a.data1), a.dtype)


SCALAR = (
    "(dst, data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False, "
    "engine=engine.unknown, name=None)"
)
SCALAR_LEGACY = (
    "(data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False, *, dtype=None, mask=None, "
    "engine=engine.unknown)"
)


@isa("tensor_scalar", SCALAR, SCALAR_LEGACY)
def tensor_scalar(a):
    srcs = [a.data] + tiles_among(a.operand0, a.operand1)
    return lower.into(a.dst, "act", srcs, a.mask, shape_of(a.data), a.dtype)


@isa(
    "tensor_scalar_reduce",
    "(dst, data, op0, operand0, reduce_op, reduce_res, reverse0=False, name=None)",
    "(*, data, op0, operand0, reduce_op, reduce_res, reverse0=False, dtype=None, mask=None)",
)
def tensor_scalar_reduce(a):
    out = lower.into(a.dst, "act", [a.data] + tiles_among(a.operand0), a.mask, shape_of(a.data), a.dtype)
    lower.emit("engine", a.reduce_res, [out], mask=a.mask)
    return out


@isa(
    "tensor_scalar_cumulative",
    "(dst, src, op0, op1, imm0, imm1=None, reduce_cmd=reduce_cmd.idle, name=None)",
)
def tensor_scalar_cumulative(a):
    """A running reduction along the free dimension (``engine``)."""
    lower.emit("engine", a.dst, [a.src] + tiles_among(a.imm0, a.imm1))
    return a.dst


@isa(
    "scalar_tensor_tensor",
    "(dst, data, op0, operand0, op1, operand1, reverse0=False, reverse1=False, name=None)",
    "(*, data, op0, operand0, op1, operand1, reverse0=False, reverse1=False, dtype=None, mask=None)",
)
def scalar_tensor_tensor(a):
    srcs = [a.data] + tiles_among(a.operand0, a.operand1)
    return lower.into(a.dst, "act", srcs, a.mask, shape_of(a.data), a.dtype)


@isa(
    "tensor_tensor_scan",
    "(dst, data0, data1, initial, op0, op1, reverse0=False, reverse1=False, name=None)",
    "(data0, data1, initial, op0, op1, reverse0=False, reverse1=False, *, dtype=None, mask=None)",
)
def tensor_tensor_scan(a):
    """A scan along the free dimension: each result depends on the earlier ones (``engine``)."""
    srcs = [a.data0, a.data1] + tiles_among(a.initial)
    return lower.into(a.dst, "engine", srcs, a.mask, shape_of(a.data0), a.dtype)


@isa(
    "tensor_reduce",
    "(dst, op, data, axis, negate=False, keepdims=False, name=None)",
    "(op, data, axis, *, mask=None, dtype=None, negate=False, keepdims=False)",
)
def tensor_reduce(a):
    return lower.reduction(a.data, a.axis, a.dtype, a.keepdims, a.mask, a.dst)


@isa(
    "tensor_partition_reduce",
    "(dst, op, data, name=None)",
    "(op, data, *, mask=None, dtype=None)",
)
def tensor_partition_reduce(a):
    v = lower.tensor_arg(a.data, "data")
    return lower.into(a.dst, "engine", [v], a.mask, (1,) + v.shape[1:], a.dtype)


@isa(
    "tensor_copy",
    "(dst, src, engine=engine.unknown, name=None)",
    "(src, *, mask=None, dtype=None, engine=engine.unknown)",
)
def tensor_copy(a):
    return lower.into(a.dst, "copy", [a.src], a.mask, None, a.dtype)


@isa(
    "tensor_copy_dynamic_src",
    "(dst, src, engine=engine.unknown, name=None)",
    "(src, *, mask=None, dtype=None, engine=engine.unknown)",
)
def tensor_copy_dynamic_src(a):
    return lower.into(a.dst, "copy", [a.src], a.mask, None, a.dtype)


@isa("tensor_copy_dynamic_dst", "(dst, src, engine=engine.unknown, name=None)", "(*, dst, src, mask=None, engine=engine.unknown)")
def tensor_copy_dynamic_dst(a):
    return lower.into(a.dst, "copy", [a.src], a.mask)


@isa("tensor_copy_predicated", "(dst, src, predicate, reverse_pred=False, name=None, *, mask=None)")
def tensor_copy_predicated(a):
    """``dst = predicate ? src : dst``: reads the destination as well."""
    srcs = [a.dst] + tiles_among(a.src) + [a.predicate]
    lower.emit("act", a.dst, srcs, mask=a.mask)
    return a.dst


SELECT = (
    "(dst, predicate, on_true, on_false, reduce_res=None, reduce_cmd=reduce_cmd.idle, reduce_op=np.amax, "
    "reverse_pred=False, name=None, *, mask=None)"
)


@isa("select_reduce", SELECT)
def select_reduce(a):
    srcs = [a.predicate, a.on_true] + tiles_among(a.on_false)
    lower.emit("act", a.dst, srcs, mask=a.mask)
    if a.reduce_res is not None:
        lower.emit("engine", a.reduce_res, [a.dst], mask=a.mask)
    return a.dst


@isa(
    "range_select",
    "(dst, on_true_tile, comp_op0, comp_op1, bound0, bound1, reduce_cmd=reduce_cmd.idle, reduce_res=None, "
    "reduce_op=np.amax, range_start=0.0, on_false_value=0.0, name=None)",
    "(on_true_tile, comp_op0, comp_op1, bound0, bound1, *, reduce_cmd=reduce_cmd.idle, reduce_res=None, "
    "reduce_op=np.amax, range_start=0.0, on_false_value=0.0, mask=None, dtype=None)",
)
def range_select(a):
    srcs = [a.on_true_tile] + tiles_among(a.bound0, a.bound1)
    out = lower.into(a.dst, "engine", srcs, a.mask, shape_of(a.on_true_tile), a.dtype)
    if a.reduce_res is not None:
        lower.emit("engine", a.reduce_res, [out], mask=a.mask)
    return out


@isa(
    "affine_select",
    "(dst, pattern, offset, channel_multiplier, on_true_tile, on_false_value, cmp_op=np.equal, name=None)",
    "(pred, on_true_tile, on_false_value, *, mask=None, dtype=None)",
)
def affine_select(a):
    """Every element is written (from ``on_true_tile`` or ``on_false_value``), so
    the predicate does not restrict the write: a copy of ``on_true_tile``."""
    return lower.into(a.dst, "copy", [a.on_true_tile], a.mask, shape_of(a.on_true_tile), a.dtype)


@isa("iota", "(dst, pattern, offset, channel_multiplier=0, name=None)", "(expr, dtype, *, mask=None)")
def iota(a):
    """Generated constants (a ``memset`` stand-in: their values are not PSUM traffic)."""
    if a.form == "legacy":
        if not isinstance(a.expr, IndexExpr):
            raise Invalid("nisa.iota takes an expression of nl.arange indices")
        t = Tile(a.expr.shape if len(a.expr.shape) > 1 else a.expr.shape + (1,), a.dtype, SBUF)
        t.fresh = lower.emit("memset", t.view(), [], value=0.0, mask=a.mask)
        return t
    lower.emit("memset", a.dst, [], value=0.0)
    return a.dst


@isa("memset", "(dst, value, engine=engine.unknown, name=None)", "(shape, value, dtype, *, mask=None, engine=engine.unknown)")
def memset(a):
    v = lower.number(a.value, "the memset value")
    if a.form == "legacy":
        t = Tile(a.shape, a.dtype, SBUF)
        t.fresh = lower.emit("memset", t.view(), [], value=v, mask=a.mask)
        return t
    lower.emit("memset", a.dst, [], value=v)
    return a.dst


@isa("reciprocal", "(dst, data, name=None)", "(data, *, dtype=None, mask=None, engine=engine.unknown)")
def reciprocal(a):
    return lower.into(a.dst, "act", [a.data], a.mask, None, a.dtype)


EXP = "max_value=0.0, reduce_res=None, reduce_cmd=reduce_cmd.idle, reduce_init=0.0, name=None)"


@isa("exponential", "(dst, src, " + EXP, "(dst, data, " + EXP)
def exponential(a):
    src = a.src if a.src is not None else a.data
    lower.emit("act", a.dst, [src] + tiles_among(a.max_value, a.reduce_init))
    if a.reduce_res is not None:
        lower.emit("engine", a.reduce_res, [a.dst])
    return a.dst


@isa("dropout", "(dst, data, prob, name=None)", "(data, prob, *, mask=None, dtype=None)")
def dropout(a):
    return lower.into(a.dst, "act", [a.data] + tiles_among(a.prob), a.mask, shape_of(a.data), a.dtype)


@isa("bn_stats", "(dst, data, name=None)", "(data, *, mask=None, dtype=None)")
def bn_stats(a):
    v = lower.tensor_arg(a.data, "data")
    return lower.into(a.dst, "engine", [v], a.mask, (v.part_extent(), 6), a.dtype)


@isa("bn_aggr", "(dst, data, name=None)", "(data, *, mask=None, dtype=None)")
def bn_aggr(a):
    v = lower.tensor_arg(a.data, "data")
    return lower.into(a.dst, "engine", [v], a.mask, (v.part_extent(), 2), a.dtype)


@isa("max8", "(dst, src, name=None)", "(*, src, mask=None, dtype=None)")
def max8(a):
    v = lower.tensor_arg(a.src, "src")
    return lower.into(a.dst, "engine", [v], a.mask, (v.part_extent(), 8), a.dtype)


@isa("nc_find_index8", "(dst, data, vals, name=None)", "(*, data, vals, mask=None, dtype=None)")
def nc_find_index8(a):
    v = lower.tensor_arg(a.data, "data")
    return lower.into(a.dst, "engine", [v, a.vals], a.mask, (v.part_extent(), 8), a.dtype or "uint32")


@isa("nc_match_replace8", "(dst, data, vals, imm, dst_idx=None, name=None)", "(*, data, vals, imm, dst_idx=None, mask=None, dtype=None)")
def nc_match_replace8(a):
    out = lower.into(a.dst, "engine", [a.data, a.vals], a.mask, shape_of(a.data), a.dtype)
    if a.dst_idx is not None:
        lower.emit("engine", a.dst_idx, [a.data, a.vals])
    return out


@isa("local_gather", "(dst, src_buffer, index, num_elem_per_idx=1, num_valid_indices=None, name=None)",
     "(src_buffer, index, num_elem_per_idx=1, num_valid_indices=None, *, mask=None)")
def local_gather(a):
    i = lower.tensor_arg(a.index, "index")
    n = as_int(a.num_elem_per_idx, "num_elem_per_idx")
    return lower.into(a.dst, "engine", [a.src_buffer, i], a.mask, (i.part_extent(), (i.elements() // i.part_extent()) * n))


@isa("nc_n_gather", "(dst, data, indices, name=None)")
def nc_n_gather(a):
    return lower.into(a.dst, "engine", [a.data, a.indices])


@isa("nc_stream_shuffle", "(dst, src, shuffle_mask, name=None)", "(src, dst, shuffle_mask, *, dtype=None, mask=None)")
def nc_stream_shuffle(a):
    lower.emit("engine", a.dst, [a.src], mask=a.mask)
    return a.dst


@isa("sequence_bounds", "(dst, segment_ids, name=None)", "(*, segment_ids, dtype=None)")
def sequence_bounds(a):
    v = lower.tensor_arg(a.segment_ids, "segment_ids")
    return lower.into(a.dst, "engine", [v], None, (1, 2, v.elements()), a.dtype)


@isa("quantize_mx", "(dst, src, dst_scale, name=None)")
def quantize_mx(a):
    lower.emit("engine", a.dst, [a.src])
    lower.emit("engine", a.dst_scale, [a.src])
    return a.dst


@isa("nonzero_with_count", "(dst, src, index_offset=0, padding_val=-1, name=None)")
def nonzero_with_count(a):
    lower.emit("engine", a.dst, [a.src])
    return a.dst


@isa("topk", "(val_dst, idx_dst, src, n, sorted=False, name=None)")
def topk(a):
    lower.emit("engine", a.val_dst, [a.src])
    lower.emit("engine", a.idx_dst, [a.src])
    return a.val_dst, a.idx_dst


# ---------------------------------------------------------------------------
# DMA


@isa(
    "dma_copy",
    "(dst, src, dst_rmw_op=None, oob_mode=oob_mode.error, dge_mode=dge_mode.unknown, name=None, *, mask=None)",
)
def dma_copy(a):
    """``dst = src`` (``dma``); with ``dst_rmw_op`` the destination is read too."""
    if a.dst_rmw_op is not None:
        lower.emit("engine", a.dst, [a.dst, a.src], mask=a.mask)
    else:
        lower.emit("dma", a.dst, [a.src], mask=a.mask)
    return a.dst


def _permuted(shape, axes):
    if axes is None:
        axes = {2: (1, 0), 3: (2, 1, 0), 4: (3, 1, 2, 0)}.get(len(shape))
        if axes is None:
            raise Invalid("dma_transpose takes a 2-D, 3-D or 4-D tile, not %s" % (shape,))
    return tuple(shape[i] for i in axes)


@isa("dma_transpose", "(dst, src, axes=None, dge_mode=dge_mode.unknown, name=None)", "(src, *, axes=None, mask=None, dtype=None)")
def dma_transpose(a):
    v = lower.tensor_arg(a.src, "src")
    return lower.into(a.dst, "engine", [v], a.mask, _permuted(v.shape, a.axes), a.dtype)


@isa("dma_compute", "(dst, srcs, scales, reduce_op, name=None)")
def dma_compute(a):
    lower.emit("act", a.dst, list(a.srcs))
    return a.dst


# ---------------------------------------------------------------------------
# Random numbers, registers, other cores


@isa("rng", "(dst, engine=engine.vector, name=None)")
def rng(a):
    """Random bits (a ``memset`` stand-in: their values are not PSUM traffic)."""
    lower.emit("memset", a.dst, [], value=0.0)
    return a.dst


@isa("rand2", "(dst, min, max, name=None)")
def rand2(a):
    """Uniform random numbers (a ``memset`` stand-in unless a bound is a tile)."""
    bounds = tiles_among(a.min, a.max)
    if bounds:
        lower.emit("engine", a.dst, bounds)
    else:
        lower.emit("memset", a.dst, [], value=0.0)
    return a.dst


@isa("set_rng_seed", "(src_seeds, name=None)")
def set_rng_seed(a):
    """Seeds the generator: no PSUM effect (the seed tile is read by no instruction psum models)."""
    return None


@isa("rand_set_state", "(src_seeds, engine=engine.gpsimd, name=None)")
def rand_set_state(a):
    return None


@isa("rand_get_state", "(dst, engine=engine.gpsimd, name=None)")
def rand_get_state(a):
    lower.emit("memset", a.dst, [], value=0.0)
    return a.dst


@isa("register_alloc", "(x=None)")
def register_alloc(a):
    return VirtualRegister(None if a.x is None else as_int(a.x, "register value"))


@isa("register_move", "(dst, src)", "(dst, imm)")
def register_move(a):
    v = a.src if a.form != "legacy" else a.imm
    a.dst.value = v.value if isinstance(v, VirtualRegister) else as_int(v, "register value")


@isa("register_store", "(dst, src)")
def register_store(a):
    v = a.src.value if isinstance(a.src, VirtualRegister) else None
    if v is None:
        raise Unsupported("storing a register whose value is not a compile-time integer")
    lower.emit("memset", a.dst, [], value=float(v))


refuse(I + "register_load", "a register loaded from memory holds a runtime value (dynamic control flow)")


@isa("core_barrier", "(data, cores, engine=engine.unknown, name=None)")
def core_barrier(a):
    """A barrier between NeuronCores: nothing within the traced one."""
    return None


refuse(I + "sendrecv", "data exchanged with another NeuronCore (the program is one core's)")
