"""The recorder: tensors, views, the instruction stream, loop folding, printing.

Loop variables are plain Python integers while the kernel runs, so every
index is concrete; an ``affine_range`` or ``sequential_range`` loop records
each iteration's instructions separately and folds them into one psum loop
when the iterations differ only in bounds that are affine in the iteration
number (and in tiles each iteration allocates for itself).
"""

# ---------------------------------------------------------------------------
# Affine bounds: (constant, ((var, coefficient), ...)) with vars sorted by id.


def aff_const(c):
    return (c, ())


def aff_add_var(a, var, coef):
    const, terms = a
    if coef == 0:
        return a
    d = dict(terms)
    d[var] = d.get(var, 0) + coef
    return (const, tuple(sorted(((v, c) for v, c in d.items() if c != 0), key=lambda t: t[0].id)))


def aff_text(a):
    const, terms = a
    out = ""
    for v, c in terms:
        mag = abs(c)
        if c < 0:
            out += "-"
        elif out:
            out += "+"
        out += v.name if mag == 1 else "%s*%d" % (v.name, mag)
    if not out:
        return str(const)
    if const > 0:
        return out + "+%d" % const
    if const < 0:
        return out + "-%d" % -const
    return out


class Var:
    """A psum loop variable."""

    _next = 0

    def __init__(self, name):
        self.name = name
        self.id = Var._next
        Var._next += 1


# ---------------------------------------------------------------------------
# Tensors


class IRTensor:
    """One psum tensor declaration (one block of an NKI tile)."""

    _next = 0

    def __init__(self, base, mem, partitions, nbytes, dtype, loc, bank=None):
        self.base = base
        self.mem = mem
        self.partitions = partitions
        self.bytes = nbytes
        self.dtype = dtype
        self.loc = loc
        self.bank = bank
        self.alias = None
        # The Var of the innermost folded loop whose iterations allocate the tile.
        self.scope = None
        self.name = None
        self.order = IRTensor._next
        IRTensor._next += 1

    def canon(self):
        t = self
        while t.alias is not None:
            t = t.alias
        return t

    def same_decl(self, other):
        return (self.mem, self.partitions, self.bytes, self.dtype, self.bank, self.loc) == (
            other.mem,
            other.partitions,
            other.bytes,
            other.dtype,
            other.bank,
            other.loc,
        )


class Access:
    """``tensor[p0:p1, b0:b1]`` with affine bounds; ``esize`` is the byte size
    of the elements the kernel accessed (its view's dtype, which a
    ``view(dtype)`` makes differ from the tensor's)."""

    __slots__ = ("tensor", "bounds", "esize")

    def __init__(self, tensor, bounds, esize):
        self.tensor = tensor
        self.bounds = bounds
        self.esize = esize

    def text(self):
        t = self.tensor.canon()
        consts = [b[0] for b in self.bounds]
        if all(not b[1] for b in self.bounds) and consts == [0, t.partitions, 0, t.bytes]:
            return t.name
        p0, p1, b0, b1 = (aff_text(b) for b in self.bounds)
        return "%s[%s:%s, %s:%s]" % (t.name, p0, p1, b0, b1)


class Inst:
    """One recorded instruction. ``iterations`` holds a ``(loop, n)`` pair for
    each unrolled ``affine_range`` loop whose iteration ``n`` issued it."""

    def __init__(self, op, dst, srcs, loc, value=None, pos=None, accumulate=None):
        self.op = op
        self.dst = dst
        self.srcs = srcs
        self.loc = loc
        self.value = value
        self.pos = pos
        self.accumulate = accumulate
        self.iterations = ()

    def accesses(self):
        return [self.dst] + list(self.srcs)

    def key(self):
        return (self.op, self.loc, self.value, self.pos, self.accumulate, len(self.srcs))


class LoopItem:
    """A folded psum loop."""

    def __init__(self, var, lo, hi, body, affine=False):
        self.var = var
        self.lo = lo
        self.hi = hi
        self.body = body
        self.affine = affine


# ---------------------------------------------------------------------------
# The recorder


class Frame:
    """An affine or sequential loop being traced: one body per iteration."""

    def __init__(self, name, lo, step, count, kind, loc):
        self.name = name
        self.lo = lo
        self.step = step
        self.count = count
        self.kind = kind
        self.loc = loc
        self.bodies = []
        self.allocs = []


class Recorder:
    """The instruction stream of one trace."""

    def __init__(self):
        self.top = []
        self.top_allocs = []
        self.frames = []
        self.tensors = []
        # (loc, message thunk): messages name tensors, which are named when printed.
        self.warnings = []
        # (loc, iteration count) of each affine_range loop left unrolled.
        self.unrolled = []

    def body(self):
        return self.frames[-1].bodies[-1] if self.frames else self.top

    def allocs(self):
        return self.frames[-1].allocs[-1] if self.frames else self.top_allocs

    def new_tensor(self, base, mem, partitions, nbytes, dtype, loc, bank=None):
        t = IRTensor(base, mem, partitions, nbytes, dtype, loc, bank)
        self.tensors.append(t)
        self.allocs().append(t)
        return t

    def emit(self, inst):
        self.body().append(inst)
        return inst

    def last_inst(self):
        b = self.body()
        return b[-1] if b and isinstance(b[-1], Inst) else None

    # Loops ------------------------------------------------------------------

    def loop_begin(self, frame):
        self.frames.append(frame)

    def loop_iteration(self):
        f = self.frames[-1]
        f.bodies.append([])
        f.allocs.append([])

    def loop_end(self):
        f = self.frames.pop()
        folded = fold(f) if f.count >= 2 else None
        if folded is not None:
            item, kept = folded
            item.affine = f.kind == "affine"
            for t in kept:
                if t.scope is None:
                    t.scope = item.var
            self.body().append(item)
            self.allocs().extend(kept)
            return
        if f.kind == "affine":
            # psum's lint checks the iterations (SPEC §9.4): tag what each issued.
            k = len(self.unrolled)
            self.unrolled.append((f.loc, len(f.bodies)))
            for n, body in enumerate(f.bodies):
                for inst in walk(body):
                    inst.iterations += ((k, n),)
        for body, allocs in zip(f.bodies, f.allocs):
            self.body().extend(body)
            self.allocs().extend(allocs)

    def unrolled_affine(self):
        """Each unrolled affine_range loop as ``{"loc", "iterations"}``, an
        iteration being the positions of its instructions in the printed
        program; loops with fewer than two printed iterations are left out
        (a folded outer loop prints one iteration's copy)."""
        loops = [[[] for _ in range(count)] for _, count in self.unrolled]
        for position, inst in enumerate(walk(self.top)):
            for k, n in inst.iterations:
                loops[k][n].append(position)
        return [
            {"loc": loc, "iterations": its}
            for (loc, _), its in zip(self.unrolled, loops)
            if sum(1 for it in its if it) >= 2
        ]


def walk(body):
    for item in body:
        if isinstance(item, LoopItem):
            yield from walk(item.body)
        else:
            yield item


# ---------------------------------------------------------------------------
# Folding


def flatten(body, tensor_index, var_index, consts, shape):
    """Appends the structure of ``body`` to ``shape`` and its bound constants to ``consts``.

    Tensors allocated inside the iteration are named by their position in
    ``tensor_index``; loop variables by their position in ``var_index``.
    """
    for item in body:
        if isinstance(item, LoopItem):
            var_index[item.var] = len(var_index)
            shape.append(("loop", item.lo, item.hi))
            flatten(item.body, tensor_index, var_index, consts, shape)
            shape.append(("end",))
            continue
        shape.append(item.key())
        for a in item.accesses():
            t = a.tensor.canon()
            tkey = ("local", tensor_index[id(t)]) if id(t) in tensor_index else ("outer", id(t))
            terms = []
            for const, ts in a.bounds:
                consts.append(const)
                terms.append(tuple((var_index.get(v, ("free", v.id)), c) for v, c in ts))
            shape.append((tkey, tuple(terms)))


def fold(frame):
    """The folded loop of ``frame`` and the tensors it keeps, or None when the
    iterations do not share one body."""
    flats = []
    for body, allocs in zip(frame.bodies, frame.allocs):
        canon_allocs = [t for t in allocs if t.alias is None]
        index = {id(t): i for i, t in enumerate(canon_allocs)}
        consts, shape = [], []
        flatten(body, index, {}, consts, shape)
        flats.append((canon_allocs, consts, shape))
    allocs0, c0, s0 = flats[0]
    c1 = flats[1][1]
    if len(c0) != len(c1):
        return None
    step = [b - a for a, b in zip(c0, c1)]
    # Accesses keep their extents across iterations (p0 and p1, b0 and b1 move together).
    if any(step[i] != step[i + 1] for i in range(0, len(step), 2)):
        return None
    for n, (allocs, consts, shape) in enumerate(flats):
        if shape != s0 or len(allocs) != len(allocs0):
            return None
        if any(not a.same_decl(b) for a, b in zip(allocs, allocs0)):
            return None
        if any(c != a + n * d for c, a, d in zip(consts, c0, step)):
            return None
    var = Var(frame.name)
    lo = frame.lo if frame.step == 1 else 0
    it = iter(step)
    body = rebuild(frame.bodies[0], var, lo, it)
    for allocs, _, _ in flats[1:]:
        for t, t0 in zip(allocs, allocs0):
            t.alias = t0
    return LoopItem(var, lo, lo + frame.count, body), allocs0


def rebuild(body, var, lo, steps):
    """``body`` with each bound constant ``c`` (in flatten order) replaced by
    ``c + d·(var − lo)``, ``d`` its change per iteration."""
    out = []
    for item in body:
        if isinstance(item, LoopItem):
            out.append(LoopItem(item.var, item.lo, item.hi, rebuild(item.body, var, lo, steps), item.affine))
            continue
        accs = []
        for a in item.accesses():
            bounds = []
            for const, ts in a.bounds:
                d = next(steps)
                b = aff_add_var((const - d * lo, ts), var, d)
                bounds.append(b)
            accs.append(Access(a.tensor, tuple(bounds), a.esize))
        inst = Inst(item.op, accs[0], accs[1:], item.loc, item.value, item.pos, item.accumulate)
        inst.iterations = item.iterations
        out.append(inst)
    return out


# ---------------------------------------------------------------------------
# Printing


def program_text(arch, block, args, rec):
    """The psum program: ``arch``, the declarations referenced, one block."""
    used = {}
    for inst in walk(rec.top):
        for a in inst.accesses():
            t = a.tensor.canon()
            used[id(t)] = t
    for t in args:
        used[id(t)] = t
    decls = sorted(used.values(), key=lambda t: t.order)
    taken = set()
    for t in decls:
        name = t.base
        n = 1
        while name in taken:
            name = "%s_%d" % (t.base, n)
            n += 1
        taken.add(name)
        t.name = name
    body = []
    write_body(body, rec.top, 1, [])
    lines = ["arch %s" % arch, ""]
    for t in decls:
        line = "%s %s [%d, %d]" % (t.mem, t.name, t.partitions, t.bytes)
        if t.dtype != "f32":
            line += " " + t.dtype
        if t.bank is not None:
            line += " bank=%d" % t.bank
        if t.loc is not None:
            line += ' loc="%s"' % t.loc
        if t.scope is not None:
            line += " scope=%s" % t.scope.name
        lines.append(line)
    lines.append("")
    lines.append("block %s {" % block)
    lines.extend(body)
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_body(lines, body, depth, scope):
    pad = "  " * depth
    for item in body:
        if isinstance(item, LoopItem):
            name = item.var.name
            n = 1
            while name in scope:
                name = "%s_%d" % (item.var.name, n)
                n += 1
            item.var.name = name
            affine = " affine" if item.affine else ""
            lines.append("%sloop %s %d..%d%s {" % (pad, name, item.lo, item.hi, affine))
            write_body(lines, item.body, depth + 1, scope + [name])
            lines.append("%s}" % pad)
            continue
        if item.op == "memset":
            text = "memset %s = %s" % (item.dst.text(), number_text(item.value))
        else:
            text = "%s %s <- %s" % (
                item.op,
                item.dst.text(),
                ", ".join(s.text() for s in item.srcs),
            )
        if item.pos is not None and item.pos != (0, 0):
            text += " pos=%d,%d" % item.pos
        if item.accumulate is not None:
            text += " accumulate=%s" % ("true" if item.accumulate else "false")
        if item.loc is not None:
            text += ' loc="%s"' % item.loc
        lines.append(pad + text)


def number_text(v):
    v = float(v)
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return repr(v)
