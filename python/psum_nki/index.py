"""Index expressions and masks (SPEC §9.2): ``nl.arange``, ``nl.mgrid`` and
``nl.ds`` build affine :class:`IndexExpr` objects over index variables;
comparing them builds a :class:`Pred`, the ``mask=`` of an instruction, which
:func:`region` turns into the boxes of index values it selects.

An index variable is keyed ``(base id, axis counted from the right)``, so that
an expression keeps its identity when it is broadcast against one of higher
rank, as numpy right-aligns shapes.
"""

import operator

from .errors import Invalid, Unsupported, show


def as_int(x, what):
    """``x`` as a Python int; a tile's value or a non-integer is refused."""
    if getattr(x, "is_nki_tensor", False):
        raise Unsupported("data-dependent %s (a tile's value used as an integer)" % what)
    if isinstance(x, (IndexExpr, Pred)):
        raise Unsupported("%s given as an index range" % what)
    try:
        return operator.index(x)
    except TypeError:
        if isinstance(x, float) and x.is_integer():
            return int(x)
        raise Unsupported("%s %s is not an integer" % (what, show(x))) from None


class Base:
    """The values ``0 … size-1`` of one ``nl.arange`` or ``nl.mgrid`` axis."""

    _next = 0

    def __init__(self, size):
        self.size = size
        self.id = Base._next
        Base._next += 1


class IndexExpr:
    """``const + Σ coef·var`` over index variables, an index of ``ndim`` dimensions."""

    __slots__ = ("const", "terms", "ndim", "bases")
    shown_as = "an index expression"

    def __init__(self, const, terms, ndim, bases):
        self.const = const
        self.terms = terms  # {key: coef}, key = (base id, axis - ndim)
        self.ndim = ndim
        self.bases = bases  # {base id: Base}

    @staticmethod
    def range(start, size, step=1):
        """``nl.arange``: a one-dimensional range."""
        b = Base(size)
        return IndexExpr(start, {(b.id, -1): step} if size > 1 or step else {}, 1, {b.id: b})

    @property
    def shape(self):
        sizes = [1] * self.ndim
        for (bid, neg), coef in self.terms.items():
            sizes[self.ndim + neg] = self.bases[bid].size
        return tuple(sizes)

    def size_of(self, key):
        return self.bases[key[0]].size

    def __getitem__(self, idx):
        """Places the expression's axes: ``[:, None]`` and the like."""
        if not isinstance(idx, tuple):
            idx = (idx,)
        out_ndim = len(idx)
        consumed = [i for i, x in enumerate(idx) if not (x is None)]
        if len(consumed) != self.ndim or any(
            not (isinstance(idx[i], slice) and idx[i] == slice(None)) for i in consumed
        ):
            raise Unsupported("indexing an index range other than by ':' and None")
        terms = {}
        for (bid, neg), coef in self.terms.items():
            at = consumed[self.ndim + neg]
            terms[(bid, at - out_ndim)] = coef
        return IndexExpr(self.const, terms, out_ndim, self.bases)

    def _combine(self, other, sign):
        if isinstance(other, IndexExpr):
            terms = dict(self.terms)
            for k, c in other.terms.items():
                terms[k] = terms.get(k, 0) + sign * c
            terms = {k: c for k, c in terms.items() if c}
            bases = dict(self.bases)
            bases.update(other.bases)
            return IndexExpr(self.const + sign * other.const, terms, max(self.ndim, other.ndim), bases)
        if getattr(other, "is_nki_tensor", False) or isinstance(other, DynamicIndex):
            return DynamicIndex.of(self, other)
        return IndexExpr(self.const + sign * as_int(other, "index offset"), dict(self.terms), self.ndim, self.bases)

    def __add__(self, o):
        return self._combine(o, 1)

    __radd__ = __add__

    def __sub__(self, o):
        return self._combine(o, -1)

    def __rsub__(self, o):
        return (-self)._combine(o, 1)

    def __neg__(self):
        return IndexExpr(-self.const, {k: -c for k, c in self.terms.items()}, self.ndim, self.bases)

    def __pos__(self):
        return self

    def __mul__(self, k):
        if isinstance(k, IndexExpr):
            raise Unsupported("a product of two index ranges (not affine)")
        k = as_int(k, "index multiplier")
        return IndexExpr(self.const * k, {t: c * k for t, c in self.terms.items() if c * k}, self.ndim, self.bases)

    __rmul__ = __mul__

    def __floordiv__(self, k):
        raise Unsupported("an index range divided (not affine)")

    __truediv__ = __mod__ = __rfloordiv__ = __rmod__ = __floordiv__

    def _cmp(self, other, op):
        if getattr(other, "is_nki_tensor", False):
            raise Unsupported("a mask comparing an index range with a tile's values")
        return Pred("cmp", self - other, op)

    def __lt__(self, o):
        return self._cmp(o, "<")

    def __le__(self, o):
        return self._cmp(o, "<=")

    def __gt__(self, o):
        return self._cmp(o, ">")

    def __ge__(self, o):
        return self._cmp(o, ">=")

    def __eq__(self, o):
        return self._cmp(o, "==")

    def __ne__(self, o):
        return self._cmp(o, "!=")

    __hash__ = object.__hash__

    def __bool__(self):
        raise Unsupported("an index range used as a Python condition")

    def __index__(self):
        raise Unsupported("an index range used as an integer")

    def __iter__(self):
        raise Unsupported("iterating over an index range")


class DynamicIndex:
    """An index computed from a tile's values (``idx_tile[0, j] + i_f``): the
    tiles it reads, and its shape as an index (it broadcasts with the others)."""

    def __init__(self, reads, shape):
        self.reads = reads
        self.shape = shape

    @staticmethod
    def of(a, b):
        parts = [x for x in (a, b) if isinstance(x, (IndexExpr, DynamicIndex)) or getattr(x, "is_nki_tensor", False)]
        reads = []
        for x in parts:
            if isinstance(x, DynamicIndex):
                reads.extend(x.reads)
            elif not isinstance(x, IndexExpr):
                reads.append(x)
        shapes = [x.shape for x in parts]
        n = max(len(s) for s in shapes)
        shape = tuple(
            max(s[i - n + len(s)] if i - n + len(s) >= 0 else 1 for s in shapes) for i in range(n)
        )
        return DynamicIndex(reads, shape)

    def _combine(self, other):
        return DynamicIndex.of(self, other)

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _combine

    def __bool__(self):
        raise Unsupported("data-dependent control flow (an index computed from a tile's values)")


class Grid(tuple):
    """``nl.mgrid[…]``: a tuple of index expressions, also readable as ``.p`` and ``.x``."""

    @property
    def p(self):
        return self[0]

    @property
    def x(self):
        return self[1]

    @property
    def y(self):
        return self[2]

    @property
    def z(self):
        return self[3]


def mgrid(slices):
    """The expressions of ``nl.mgrid[s0, s1, …]``, one per slice, each placed on its axis."""
    if not isinstance(slices, tuple):
        slices = (slices,)
    n = len(slices)
    out = []
    for i, s in enumerate(slices):
        if not isinstance(s, slice):
            raise Unsupported("nl.mgrid takes slices")
        lo = 0 if s.start is None else as_int(s.start, "mgrid bound")
        hi = as_int(s.stop, "mgrid bound")
        step = 1 if s.step is None else as_int(s.step, "mgrid step")
        if step <= 0 or hi <= lo:
            raise Invalid("nl.mgrid[%d:%d:%d] is empty" % (lo, hi, step))
        b = Base(len(range(lo, hi, step)))
        out.append(IndexExpr(lo, {(b.id, i - n): step}, n, {b.id: b}))
    return Grid(out)


class Pred:
    """A mask: comparisons of index expressions joined by ``&``, ``|`` and ``~``."""

    __slots__ = ("kind", "a", "b")
    shown_as = "an index predicate"

    def __init__(self, kind, a, b=None):
        self.kind = kind  # "cmp" (a: IndexExpr, b: op against 0), "and", "or", "not"
        self.a = a
        self.b = b

    def _join(self, other, kind):
        if isinstance(other, bool):
            if kind == "and":
                return self if other else False
            return True if other else self
        if not isinstance(other, Pred):
            raise Unsupported("a mask combining an index predicate with %s" % show(other))
        return Pred(kind, self, other)

    def __and__(self, o):
        return self._join(o, "and")

    __rand__ = __and__

    def __or__(self, o):
        return self._join(o, "or")

    __ror__ = __or__

    def __invert__(self):
        return Pred("not", self)

    def __bool__(self):
        raise Unsupported("an index predicate used as a Python condition")

    def keys(self):
        """{key: size} of the index variables the predicate reads."""
        if self.kind == "cmp":
            return {k: self.a.size_of(k) for k in self.a.terms}
        out = dict(self.a.keys())
        if self.b is not None:
            out.update(self.b.keys())
        return out

    def intervals(self, fixed, last, n):
        """The sorted disjoint ``[lo, hi)`` values of ``last`` (of ``n``) where the
        predicate holds, the other variables at ``fixed``."""
        if self.kind == "and":
            return intersect(self.a.intervals(fixed, last, n), self.b.intervals(fixed, last, n))
        if self.kind == "or":
            return union(self.a.intervals(fixed, last, n), self.b.intervals(fixed, last, n))
        if self.kind == "not":
            return complement(self.a.intervals(fixed, last, n), n)
        c = self.a.const + sum(coef * fixed[k] for k, coef in self.a.terms.items() if k != last)
        k = self.a.terms.get(last, 0)
        return compare(c, k, self.b, n)


def _less(c, k, n):
    """Values t in [0, n) with c + k·t < 0."""
    if k == 0:
        return [(0, n)] if c < 0 else []
    if k > 0:
        hi = min(n, -(c // k))
        return [(0, hi)] if hi > 0 else []
    lo = max(0, c // -k + 1)
    return [(lo, n)] if lo < n else []


def compare(c, k, op, n):
    """Values t in [0, n) with ``c + k·t OP 0``."""
    if op == "<":
        return _less(c, k, n)
    if op == "<=":
        return _less(c - 1, k, n)
    if op == ">":
        return _less(-c, -k, n)
    if op == ">=":
        return _less(-c - 1, -k, n)
    eq = intersect(_less(c - 1, k, n), _less(-c - 1, -k, n))
    return eq if op == "==" else complement(eq, n)


def intersect(a, b):
    out = []
    i = j = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo < hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def union(a, b):
    out = []
    for lo, hi in sorted(a + b):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def complement(a, n):
    out, at = [], 0
    for lo, hi in a:
        if lo > at:
            out.append((at, lo))
        at = hi
    if at < n:
        out.append((at, n))
    return out


ENUMERATION_LIMIT = 1 << 20


def region(pred):
    """The boxes ``{key: (lo, hi)}`` of index values where ``pred`` holds."""
    keys = pred.keys()
    order = sorted(keys)
    if not order:
        return None
    last = order[-1]
    prefix = order[:-1]
    count = 1
    for k in prefix:
        count *= keys[k]
    if count > ENUMERATION_LIMIT:
        raise Unsupported("a mask over more than %d index combinations" % ENUMERATION_LIMIT)
    boxes = []
    fixed = {}

    def walk(i):
        if i == len(prefix):
            for lo, hi in pred.intervals(fixed, last, keys[last]):
                boxes.append(tuple((fixed[k], fixed[k] + 1) for k in prefix) + ((lo, hi),))
            return
        for v in range(keys[prefix[i]]):
            fixed[prefix[i]] = v
            walk(i + 1)

    walk(0)
    for j in range(len(order) - 2, -1, -1):
        boxes = merge_along(boxes, j)
    return order, sorted(boxes)


def merge_along(boxes, j):
    """Coalesces boxes that differ only in coordinate ``j`` and touch there."""
    boxes = sorted(boxes, key=lambda b: (b[:j] + b[j + 1 :], b[j]))
    out = []
    for b in boxes:
        if out:
            p = out[-1]
            if p[:j] + p[j + 1 :] == b[:j] + b[j + 1 :] and p[j][1] == b[j][0]:
                out[-1] = p[:j] + ((p[j][0], b[j][1]),) + p[j + 1 :]
                continue
        out.append(b)
    return out
