"""From views to psum accesses (SPEC §9.2): the ``[p0:p1, b0:b1]`` rectangles
of the IR tensor (one block of a tile) that a view touches.

A view whose elements form a rectangle of partitions × bytes is exact. A
PSUM view that does not is split into exact rectangles; an SBUF or DRAM view
that does not becomes its bounding rectangle, a sound over-approximation
(it claims to touch what it may not).
"""

from . import core
from .errors import Invalid, Unsupported
from .tiles import product

PIECE_LIMIT = 1 << 16


class Accessed:
    """The accesses of one view: IR rectangles, and whether they are exact."""

    __slots__ = ("accesses", "exact", "elements")

    def __init__(self, accesses, exact, elements):
        self.accesses = accesses
        self.exact = exact
        self.elements = elements


def span(axes):
    """(min, max, contiguous) of ``{Σ c·t}`` over axes ``[(c, n)]``, t in [0, n)."""
    lo = hi = 0
    reach = 0
    contiguous = True
    for c, n in sorted(axes, key=lambda a: abs(a[0])):
        if abs(c) > reach + 1:
            contiguous = False
        reach += abs(c) * (n - 1)
        lo += min(0, c * (n - 1))
        hi += max(0, c * (n - 1))
    return lo, hi, contiguous


def restrict(view, box):
    """(offset, [(stride, size)]) of ``view`` restricted to ``box`` (per-axis ``(lo, hi)`` or None)."""
    offset = view.offset
    axes = []
    for k, (n, s) in enumerate(zip(view.shape, view.strides)):
        lo, hi = (0, n) if box is None or box[k] is None else box[k]
        offset += s * lo
        if hi - lo > 1 and s != 0:
            axes.append((s, hi - lo))
    for s, n in view.spans:
        if n > 1:
            axes.append((s, n))
    return offset, axes


def check_bounds(view, box):
    """Refuses index values outside their dimension, where they are accessed."""
    for const, terms, size in view.checks:
        lo = hi = const
        for axis, coef in terms:
            a, b = (0, view.shape[axis]) if box is None or box[axis] is None else box[axis]
            lo += min(coef * a, coef * (b - 1))
            hi += max(coef * a, coef * (b - 1))
        if lo < 0 or hi >= size:
            raise Invalid("index values [%d, %d] are out of range for a dimension of size %d" % (lo, hi, size))


def accesses(view, box=None):
    """The :class:`Accessed` of ``view`` (restricted to ``box``)."""
    check_bounds(view, box)
    t = view.tile
    offset, axes = restrict(view, box)
    elements = product(n for _, n in axes)
    S = max(t.free, 1)
    B = t.par * S
    lo, hi, _ = span(axes)
    lo += offset
    hi += offset
    block = lo // B
    if hi // B != block:
        raise Unsupported("an instruction on several blocks of a tile at once (index the block dimensions)")
    idx = []
    rem = block
    for d in reversed(t.block_shape):
        idx.append(rem % d)
        rem //= d
    tensor = t.blocks[tuple(reversed(idx))]
    local = offset - block * B
    p0, f0 = divmod(local, S)
    part = [(c // S, n) for c, n in axes if c % S == 0]
    free = [(c, n) for c, n in axes if c % S != 0]
    flo, fhi, fcont = span(free)
    size = t.dsize
    if 0 <= f0 + flo and f0 + fhi < S:
        plo, phi, pcont = span(part)
        rect = (p0 + plo, p0 + phi + 1, (f0 + flo) * size, (f0 + fhi + 1) * size)
        if pcont and fcont:
            return Accessed([rectangle(tensor, rect, size)], True, elements)
    else:
        rect = (lo // S - block * t.par, hi // S - block * t.par + 1, 0, S * size)
        if rect[1] - rect[0] == 1:
            rect = (rect[0], rect[1], (lo % S) * size, (hi % S + 1) * size)
    if t.mem != "psum":
        return Accessed([rectangle(tensor, rect, size)], False, elements)
    return Accessed(pieces(tensor, local, axes, S, size), True, elements)


def rectangle(tensor, rect, size):
    return core.Access(tensor, tuple(core.aff_const(c) for c in rect), size)


def pieces(tensor, local, axes, S, size):
    """The exact rectangles of a PSUM view whose elements are not one rectangle."""
    count = product(n for _, n in axes)
    if count > PIECE_LIMIT:
        raise Unsupported("a PSUM access of %d scattered elements (more than %d)" % (count, PIECE_LIMIT))
    rows = {}
    offsets = [local]
    for c, n in axes:
        offsets = [o + c * i for o in offsets for i in range(n)]
    for o in offsets:
        p, f = divmod(o, S)
        rows.setdefault(p, set()).add(f)
    runs_of = {}
    for p, fs in rows.items():
        fs = sorted(fs)
        runs, start, prev = [], fs[0], fs[0]
        for f in fs[1:]:
            if f != prev + 1:
                runs.append((start, prev + 1))
                start = f
            prev = f
        runs.append((start, prev + 1))
        runs_of[p] = tuple(runs)
    out = []
    ps = sorted(runs_of)
    i = 0
    while i < len(ps):
        j = i
        while j + 1 < len(ps) and ps[j + 1] == ps[j] + 1 and runs_of[ps[j + 1]] == runs_of[ps[i]]:
            j += 1
        for a, b in runs_of[ps[i]]:
            out.append(rectangle(tensor, (ps[i], ps[j] + 1, a * size, b * size), size))
        i = j + 1
    return out
