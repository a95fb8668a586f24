"""The recorder: tensors, views, the instruction stream, loop folding, printing.

Loop variables are plain Python integers while the kernel runs, so every
index is concrete; an ``affine_range`` or ``sequential_range`` loop records
each iteration's instructions separately and folds them into one psum loop
when the iterations differ only in bounds that are affine in the iteration
number (and in tiles each iteration allocates for itself).
"""

import linecache
import os
import re
import sys

PSUM_BANK_BYTES = 2048

# NKI dtype names and the psum keyword and byte size of each.
DTYPES = {
    "float32": ("f32", 4),
    "bfloat16": ("bf16", 2),
    "float16": ("f16", 2),
    "tfloat32": ("tf32", 4),
    "float8_e4m3": ("fp8", 1),
    "float8_e4m3fn": ("fp8", 1),
    "float8_e5m2": ("fp8_e5m2", 1),
    "float8_e8m0fnu": ("u8", 1),
    "float8_e4m3fn_x4": ("fp8x4", 4),
    "float8_e5m2_x4": ("fp8x4", 4),
    "float4_e2m1fn_x4": ("fp4x4", 2),
    "int8": ("i8", 1),
    "uint8": ("u8", 1),
    "bool_": ("u8", 1),
    "int16": ("i16", 2),
    "uint16": ("u16", 2),
    "int32": ("i32", 4),
    "uint32": ("u32", 4),
}


class TraceError(Exception):
    """A failure the driver reports as ``FILE:LINE: error: MESSAGE``.

    ``kind`` is ``unsupported`` (a construct the tracer refuses) or
    ``invalid`` (a kernel that breaks an NKI rule the tracer checks).
    """

    def __init__(self, message, kind="unsupported", loc=None):
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.loc = loc if loc is not None else kernel_loc()


class Unsupported(TraceError):
    """An API, argument or construct the tracer does not support."""

    def __init__(self, what):
        super().__init__(what, "unsupported")


def dtype_info(dtype):
    """The (psum keyword, byte size) of an NKI dtype (a name string or a stand-in)."""
    name = getattr(dtype, "nki_name", None) or getattr(dtype, "__name__", None) or str(dtype)
    name = name.replace("nl.", "").replace("np.", "")
    if name in DTYPES:
        return DTYPES[name]
    raise Unsupported("dtype %r" % (dtype,))


# ---------------------------------------------------------------------------
# Source locations


class _State:
    """What the current trace knows: the kernel file and the recorder."""

    kernel_file = None
    display_file = None
    recorder = None


STATE = _State()


def kernel_frame():
    """The innermost frame of the running kernel's own file, or None."""
    f = sys._getframe(1)
    target = STATE.kernel_file
    while f is not None:
        if target is not None and os.path.abspath(f.f_code.co_filename) == target:
            return f
        f = f.f_back
    return None


def kernel_loc():
    """``FILE:LINE`` of the kernel line being executed (FILE as the user named it)."""
    f = kernel_frame()
    if f is None:
        return None
    return "%s:%d" % (STATE.display_file, f.f_lineno)


_ASSIGN = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?::[^=]*)?=[^=]")
_FOR = re.compile(r"^\s*for\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\b")


def source_name(pattern, default):
    """A name taken from the kernel line being executed (an assignment target or a loop variable)."""
    f = kernel_frame()
    if f is not None:
        m = pattern.match(linecache.getline(f.f_code.co_filename, f.f_lineno))
        if m:
            return m.group(1)
    return default


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
    """``tensor[p0:p1, b0:b1]`` with affine bounds."""

    __slots__ = ("tensor", "bounds")

    def __init__(self, tensor, bounds):
        self.tensor = tensor
        self.bounds = bounds

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
            accs.append(Access(a.tensor, tuple(bounds)))
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
