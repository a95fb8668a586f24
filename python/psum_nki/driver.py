"""The in-process entry point (SPEC §9): :func:`trace` runs a kernel function
on tensor arguments under the stand-in modules and returns its psum program
and the warnings of the run. ``psum trace`` calls it in a subprocess."""

import inspect

from . import core, isa, language
from .errors import STATE, TraceError
from .tiles import HBM, Tile, View
from .toplevel import Kernel


class Traced:
    """A traced kernel: the program text, its architecture, the warnings
    ``[loc, message]`` and the ``affine_range`` loops left unrolled
    (``Recorder.unrolled_affine``, which psum's lint checks)."""

    def __init__(self, program, arch, warnings, affine):
        self.program = program
        self.arch = arch
        self.warnings = warnings
        self.affine = affine


def unwrap(kernel):
    """The function a decorated kernel wraps (``nki.jit``, ``baremetal``, …)."""
    while isinstance(kernel, Kernel):
        kernel = kernel.func
    return kernel


def set_geometry(geo):
    ts = language.tile_size
    ts.gemm_moving_fmax = 512
    ts.sbuf_fmax_bytes = geo["sbuf_bytes"] - geo["reserved"]
    ts.sbuf_fmax = ts.sbuf_fmax_bytes // 4
    ts.total_available_sbuf_size = ts.sbuf_fmax_bytes
    ts.sbuf_size_bytes = geo["sbuf_bytes"] * 128
    ts.psum_num_banks = geo["banks"]
    isa.Target.level = geo["level"]


def call_args(func, name, tensors, literals):
    """Keyword arguments for the kernel, by parameter name, and the input tiles."""
    params = inspect.signature(func).parameters
    for given in list(tensors) + list(literals):
        if given not in params:
            raise TraceError(
                "%s has no parameter '%s' (its parameters: %s)" % (name, given, ", ".join(params) or "none"),
                "setup",
                loc=False,
            )
    kwargs, inputs = {}, []
    for pname, p in params.items():
        if pname in tensors:
            dtype, shape = tensors[pname]
            t = Tile(tuple(shape), dtype, HBM, name=pname, loc=False)
            kwargs[pname] = t
            inputs.append(t)
        elif pname in literals:
            kwargs[pname] = literals[pname]
        elif p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TraceError(
                "parameter '%s' of %s needs --arg %s=DTYPE[D0,...] or --kwarg %s=VALUE" % (pname, name, pname, pname),
                "setup",
                loc=False,
            )
    return kwargs, inputs


def returned_tiles(value):
    if isinstance(value, Tile):
        return [value]
    if isinstance(value, View):
        return [value.tile]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in returned_tiles(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in returned_tiles(v)]
    return []


def trace(kernel, tensors, literals, geometry, grid=(), program_id=()):
    """Traces ``kernel`` on ``tensors`` ({name: (dtype, shape)}) and ``literals``
    ({name: value}) for the architecture ``geometry``; ``grid`` is the SPMD
    launch grid and ``program_id`` the instance traced (default all zeros)."""
    func = unwrap(kernel)
    if not callable(func):
        raise TraceError("the kernel is not a function", "setup", loc=False)
    name = getattr(func, "__name__", None) or "kernel"
    set_geometry(geometry)
    grid = tuple(grid)
    ids = tuple(program_id) or (0,) * len(grid)
    if len(ids) != len(grid) or any(not 0 <= i < d for i, d in zip(ids, grid)):
        raise TraceError("--program-id %s is not an instance of the grid %s" % (ids, grid), "setup", loc=False)
    language.GRID.dims, language.GRID.ids, language.GRID.used = grid, ids, False
    language.GRID.loc = None
    rec = core.Recorder()
    STATE.recorder = rec
    try:
        kwargs, inputs = call_args(func, name, tensors, literals)
        result = func(**kwargs)
        if rec.frames:
            raise TraceError(
                "a loop left early (break or return inside affine_range/sequential_range)",
                "unsupported",
                rec.frames[-1].loc,
            )
        outputs = [b for t in returned_tiles(result) for b in t.blocks.values()]
        blocks = [b for t in inputs for b in t.blocks.values()]
        block = name if name.isidentifier() else "kernel"
        text = core.program_text(geometry["codename"], block, blocks + outputs, rec)
        warnings = [[loc, message()] for loc, message in rec.warnings]
        affine = rec.unrolled_affine()
    finally:
        STATE.recorder = None
    if language.GRID.used and not grid:
        warnings.insert(0, [language.GRID.loc, "the kernel reads its SPMD program id: traced as program 0 of a 1-program grid (give --grid)"])
    return Traced(text, geometry["codename"], warnings, affine)

