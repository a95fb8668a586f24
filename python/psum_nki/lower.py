"""Lowering NKI calls to psum instructions (SPEC §9.2): the builders the
registrations of ``language`` and ``isa`` share.

An instruction is emitted over its operands' views; a ``mask=`` restricts it
to the boxes of index values the mask selects (one instruction per box), a
PSUM destination that is not one rectangle is written by one instruction per
exact rectangle, and the kind follows the accesses: ``copy``/``dma`` when the
element counts agree, ``act`` when every source has the destination's shape,
else ``engine``. A value-returning call writes a fresh tile; assigning it or
accumulating it into a tile moves that write to the target.
"""

import math

from . import access, core, dtypes
from .errors import STATE, Invalid, Unsupported, kernel_loc, show
from .index import IndexExpr, Pred, region
from .tiles import PSUM, SBUF, Tile, View, buffer_of



def is_tensor(x):
    return getattr(x, "is_nki_tensor", False)


def view_of(x):
    if isinstance(x, Tile):
        return x.view()
    if isinstance(x, View):
        return x
    return None


def tensor_arg(x, what):
    v = view_of(x)
    if v is None:
        raise Invalid("%s must be a tensor, not %s" % (what, show(x)))
    return v


#: The largest finite float32, the stand-in of an infinite fill value.
F32_MAX = 3.4028234663852886e38


def number(x, what):
    """A finite Python float from a scalar argument: an infinity (the start
    of a running maximum) becomes the largest finite float32 of its sign, a
    stand-in, since values are not PSUM traffic; NaN is refused."""
    if is_tensor(x) or isinstance(x, (IndexExpr, Pred)):
        raise Unsupported("%s given as a tensor where the tracer takes a number" % what)
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise Invalid("%s %s is not a number" % (what, show(x))) from None
    if math.isinf(v):
        return math.copysign(F32_MAX, v)
    if math.isnan(v):
        raise Unsupported("%s nan is not a number psum's memset takes" % what)
    return v


def recorder():
    rec = STATE.recorder
    if rec is None:
        raise Unsupported("an NKI instruction outside a traced kernel")
    return rec


# ---------------------------------------------------------------------------
# Masks


def mask_boxes(mask, operands):
    """Per-operand boxes (per-axis ``(lo, hi)`` or None) of each instruction a
    mask asks for: ``[None]`` for no mask, ``[]`` for a mask that is False."""
    if mask is None or mask is True:
        return [None]
    if mask is False:
        return []
    if not isinstance(mask, Pred):
        if type(mask).__name__ in ("bool_", "bool"):
            return [None] if bool(mask) else []
        raise Unsupported("mask=%s (a mask is an index predicate or a bool)" % show(mask))
    order, boxes = region(mask)
    sizes = mask.keys()
    axes = [mask_axes(v, order, sizes) for v in operands]
    placed = set(k for a in axes for k in a)
    if any(k not in placed for k in order):
        raise Unsupported("a mask over an index range that indexes none of the instruction's operands")
    dst = operands[0]
    out = []
    for box in boxes:
        ranges = dict(zip(order, box))
        per = []
        for v, at in zip(operands, axes):
            vb = [None] * len(v.shape)
            for key, k in at.items():
                lo, hi = ranges[key]
                r = vb[k]
                vb[k] = (lo, hi) if r is None else (max(r[0], lo), min(r[1], hi))
            per.append(vb)
        for v, vb in zip(operands[1:], per[1:]):
            if v.shape == dst.shape:
                for k, r in enumerate(per[0]):
                    if vb[k] is None:
                        vb[k] = r
        if any(r is not None and r[0] >= r[1] for vb in per for r in vb):
            continue
        item = tuple(None if all(r is None for r in vb) else tuple(vb) for vb in per)
        if item not in out:
            out.append(item)
    return out


def mask_axes(v, order, sizes):
    """{mask variable: axis of ``v``}: the axis indexed by the variable, else
    the axis at the variable's position (right-aligned) when the sizes agree,
    as NKI applies a mask to the instruction's index space."""
    out = {}
    for key in order:
        for k, ks in enumerate(v.keys):
            if key in ks:
                out[key] = k
                break
        else:
            k = len(v.shape) + key[1]
            if 0 <= k < len(v.shape) and v.shape[k] == sizes[key]:
                out[key] = k
    return out


# ---------------------------------------------------------------------------
# Emission


def rect_shape(a):
    """(partitions, elements per partition) of an access, in the elements the kernel accessed."""
    p0, p1, b0, b1 = (b[0] for b in a.bounds)
    return (p1 - p0, (b1 - b0) // a.esize)


def choose(op, dst, srcs):
    """The psum kind of an instruction asked as ``op`` over these accesses."""
    if op.startswith("matmul") or op == "memset":
        return op
    if op in ("copy", "dma") and len(srcs) == 1:
        d, s = rect_shape(dst), rect_shape(srcs[0])
        if d[0] * d[1] == s[0] * s[1]:
            return op
        return "engine"
    if op in ("act", "copy") and srcs and all(rect_shape(s) == rect_shape(dst) for s in srcs):
        return "act" if op == "act" or len(srcs) > 1 else "copy"
    return "engine"


def emit(op, dst, srcs, value=None, pos=None, accumulate=None, mask=None):
    """Records ``op dst <- srcs`` at the kernel line being executed; returns
    the ``(inst, box)`` list of what it emitted."""
    rec = recorder()
    dst = tensor_arg(dst, "the destination")
    srcs = [tensor_arg(s, "an operand") for s in srcs]
    reads = [r for v in [dst] + srcs for r in v.reads]
    loc = kernel_loc()
    out = []
    for boxes in mask_boxes(mask, [dst] + srcs):
        boxes = boxes or (None,) * (1 + len(srcs))
        d = access.accesses(dst, boxes[0])
        sacc = [access.accesses(s, b) for s, b in zip(srcs, boxes[1:])]
        sacc += [access.accesses(r) for r in reads]
        if op.startswith("matmul"):
            if len(d.accesses) != 1 or any(not s.exact or len(s.accesses) != 1 for s in sacc[:2]):
                raise Unsupported("a matmul operand that is not one rectangle of its tile")
        src_accesses = [a for s in sacc for a in s.accesses]
        for piece in d.accesses:
            kind = choose(op, piece, src_accesses)
            inst = core.Inst(kind, piece, src_accesses, loc, value, pos, accumulate)
            inst.asked = op
            rec.emit(inst)
            out.append((inst, boxes[0]))
    for s in srcs:
        s.tile.fresh = None
    return out


def inherit_keys(views, shape):
    """The index variables of a result's axes, from operands of the same shape."""
    keys = [set() for _ in shape]
    for v in views:
        if v.shape == tuple(shape):
            for k, ks in enumerate(v.keys):
                keys[k].update(ks)
    return [frozenset(k) for k in keys]


def produce(op, srcs, shape, dtype, buffer=None, mask=None, name=None, **kw):
    """A fresh tile written by ``op`` from ``srcs``: a value-returning NKI call."""
    srcs = [tensor_arg(s, "an operand") for s in srcs]
    t = Tile(shape, dtype, buffer_of(buffer), name, keys=inherit_keys(srcs, tuple(shape)))
    t.fresh = emit(op, t.view(), srcs, mask=mask, **kw)
    return t


def into(dst, op, srcs, mask=None, shape=None, dtype=None, buffer=None, **kw):
    """``op`` into ``dst`` (the newer form) or into a fresh tile (the older one)."""
    if dst is not None:
        emit(op, dst, srcs, mask=mask, **kw)
        return dst
    srcs_v = [tensor_arg(s, "an operand") for s in srcs]
    first = srcs_v[0]
    return produce(op, srcs_v, shape or first.shape, dtype or first.dtype, buffer, mask=mask, **kw)


def broadcast(shapes):
    """numpy's broadcast of tile shapes; a lower-rank shape that does not
    broadcast from the right is aligned at the partition dimension."""
    n = max(len(s) for s in shapes)
    for align in ("right", "left"):
        out = []
        ok = True
        for i in range(n):
            if align == "right":
                dims = [s[i - n + len(s)] for s in shapes if i - n + len(s) >= 0]
            else:
                dims = [s[i] if i < len(s) else 1 for s in shapes]
            big = set(d for d in dims if d != 1)
            if len(big) > 1:
                ok = False
                break
            out.append(big.pop() if big else 1)
        if ok:
            return tuple(out)
    raise Invalid("shapes %s do not broadcast" % (shapes,))


RANK = {"bool_": 0, "uint8": 1, "int8": 1, "uint16": 2, "int16": 2, "uint32": 3, "int32": 3}


def promote(views):
    """The highest-precision dtype among the operands (floats above integers)."""
    def rank(d):
        return (d.name not in RANK, d.size, RANK.get(d.name, 0))

    return max((v.dtype for v in views), key=rank)


def elementwise(args, dtype=None, mask=None, buffer=None):
    """An element-wise ``nl`` operation over its tile operands (scalars are immediates)."""
    for a in args:
        if isinstance(a, (IndexExpr, Pred)):
            raise Unsupported("an index range as the operand of an element-wise operation")
    tiles = [view_of(a) for a in args if is_tensor(a)]
    if not tiles:
        raise Unsupported("an element-wise operation without tensor operands")
    shape = broadcast([t.shape for t in tiles])
    return produce("act", tiles, shape, dtype or promote(tiles), buffer, mask=mask)


def reduce_shape(shape, axis, keepdims):
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    nd = len(shape)
    picked = set()
    for a in axes:
        a = int(a)
        if not -nd <= a < nd:
            raise Invalid("axis %d is out of range for a tile of shape %s" % (a, shape))
        picked.add(a % nd)
    out = [1 if i in picked else d for i, d in enumerate(shape) if keepdims or i not in picked or i == 0]
    if len(out) == 1:
        out.append(1)
    return tuple(out)


def reduction(x, axis, dtype=None, keepdims=False, mask=None, dst=None, buffer=None):
    v = tensor_arg(x, "the reduced operand")
    shape = reduce_shape(v.shape, axis, keepdims)
    if dst is not None:
        emit("engine", dst, [v], mask=mask)
        return dst
    return produce("engine", [v], shape, dtype or v.dtype, buffer, mask=mask)


# ---------------------------------------------------------------------------
# Assignment


def retarget(value, target):
    """Moves the writes of a fresh tile just produced to ``target``; whether it did."""
    v = view_of(value)
    if v is None or v.tile.fresh is None or not v.is_whole():
        return False
    fresh = v.tile.fresh
    if target.tile.mem != "psum" and any(i.op.startswith("matmul") for i, _ in fresh):
        return False
    body = recorder().body()
    if len(body) < len(fresh) or any(b is not f[0] for b, f in zip(body[len(body) - len(fresh) :], fresh)):
        return False
    same = v.shape == target.shape
    if not same:
        if v.part_extent() != target.part_extent() or v.elements() != target.elements():
            return False
        if any(box is not None for _, box in fresh):
            return False
    moved = []
    for inst, box in fresh:
        new = access.accesses(target, box if same else None)
        if len(new.accesses) != 1:
            return False
        moved.append(new.accesses[0])
    for (inst, _), dst in zip(fresh, moved):
        inst.dst = dst
        if v.tile.accumulates:
            inst.srcs = [dst] + inst.srcs
        inst.op = choose(inst.asked, dst, inst.srcs)
    v.tile.fresh = None
    return True


def assign(target, value):
    """``target[…] = value``."""
    target = tensor_arg(target, "the assignment target")
    if not is_tensor(value):
        if isinstance(value, (IndexExpr, Pred)):
            raise Unsupported("assigning an index range to a tile (use nisa.iota)")
        emit("memset", target, [], value=number(value, "the assigned value"))
        return
    if retarget(value, target):
        return
    emit("copy", target, [value])


def accumulate(target, value):
    """``target += value``: a matmul accumulates in place, anything else adds."""
    target = tensor_arg(target, "the accumulation target")
    v = view_of(value)
    if v is not None and v.tile.fresh and all(i.op.startswith("matmul") for i, _ in v.tile.fresh):
        if retarget(value, target):
            return
    emit("act", target, [target] + ([v] if v is not None else []))


# ---------------------------------------------------------------------------
# The Tensor Engine


def identity(dtype, n):
    """The identity tile PE transposes multiply by (one per dtype)."""
    rec = recorder()
    cache = rec.__dict__.setdefault("identities", {})
    key = dtypes.lookup(dtype).name
    if key not in cache:
        t = Tile((128, 128), dtype, SBUF, name="identity")
        for block in t.blocks.values():
            block.loc = None
            rec.allocs().remove(block)
            rec.top_allocs.append(block)
        cache[key] = t
    return cache[key][0:n, 0:n]


def pe_transpose(data, dst=None, mask=None):
    """A PE transpose: ``matmul.t`` of ``data`` against an identity tile,
    into PSUM of ``data``'s dtype."""
    v = tensor_arg(data, "the transposed operand")
    p = v.part_extent()
    f = v.elements() // p
    ident = identity(v.dtype, p)
    if dst is not None:
        emit("matmul.t", dst, [v, ident], mask=mask)
        return dst
    return produce("matmul.t", [v, ident], (f, p), v.dtype, PSUM, mask=mask)


def one_rectangle(v):
    """Whether a view is exactly one rectangle of its tensor."""
    a = access.accesses(v)
    return a.exact and len(a.accesses) == 1


def split_columns(d, m):
    """(destination, moving) pairs of one matmul: split along their leading
    free axis, while they are not each one rectangle and have the same free
    shape, since an output column depends on its moving column only."""
    if d.ndim < 3 or d.shape[1:] != m.shape[1:] or (one_rectangle(d) and one_rectangle(m)):
        return [(d, m)]
    return [pair for i in range(d.shape[1]) for pair in split_columns(d[:, i], m[:, i])]


def matmul(op, dst, stationary, moving, pos=None, accumulate=None, mask=None, dtype=None):
    """``dst = stationary.T @ moving`` (``op`` is ``matmul`` or ``matmul.mx``)."""
    s, m = tensor_arg(stationary, "stationary"), tensor_arg(moving, "moving")
    if accumulate is not None and not isinstance(accumulate, bool):
        raise Unsupported("accumulate=%s (a bool or None)" % show(accumulate))
    if dst is not None:
        d = tensor_arg(dst, "the destination")
        for dp, mp in split_columns(d, m) if mask is None else [(d, m)]:
            emit(op, dp, [s, mp], pos=pos, accumulate=accumulate, mask=mask)
        return dst
    cols = s.elements() // s.part_extent()
    n = m.elements() // m.part_extent()
    return produce(op, [s, m], (cols, n), dtype or dtypes.lookup("float32"), PSUM, mask=mask, pos=pos, accumulate=accumulate)
