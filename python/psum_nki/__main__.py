"""The driver ``psum trace`` runs: ``python3 -m psum_nki REQUEST_JSON``.

REQUEST_JSON names the kernel file, the function, its ``--arg`` tensors and
``--kwarg`` literals, the architecture (or none, to take the kernel's
``platform_target``) and the geometry of every architecture. One JSON object
goes to stdout: ``{"program", "arch", "warnings", "affine"}`` or ``{"error"}``;
``affine`` lists the ``affine_range`` loops left unrolled (``Recorder.unrolled_affine``).
"""

import ast
import importlib.util
import inspect
import json
import os
import sys
import traceback

from . import core, language, shim
from .core import STATE, TraceError
from .tiles import Tile


def fail(message, loc=None, kind="exception"):
    print(json.dumps({"error": {"message": message, "loc": loc, "kind": kind}}))
    sys.exit(0)


def exception_loc(exc):
    """``FILE:LINE`` of the innermost kernel frame of a traceback."""
    loc = None
    for frame, line in traceback.walk_tb(exc.__traceback__):
        if os.path.abspath(frame.f_code.co_filename) == STATE.kernel_file:
            loc = "%s:%d" % (STATE.display_file, line)
    return loc


def guarded(run):
    """``run()``, reporting a refusal or an exception at its kernel line."""
    try:
        return run()
    except TraceError as e:
        fail(e.message, e.loc, e.kind)
    except SystemExit:
        raise
    except BaseException as e:
        fail("%s: %s" % (type(e).__name__, e), exception_loc(e))


def load_kernel(path, function):
    spec = importlib.util.spec_from_file_location("psum_traced_kernel", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(path))
    spec.loader.exec_module(module)
    if not hasattr(module, function):
        fail("no function '%s' in %s" % (function, STATE.display_file), kind="setup")
    return getattr(module, function)


def set_tile_sizes(geo):
    ts = language.tile_size
    ts.gemm_moving_fmax = 512
    ts.sbuf_fmax_bytes = geo["sbuf_bytes"] - geo["reserved"]
    ts.sbuf_fmax = ts.sbuf_fmax_bytes // 4
    ts.total_available_sbuf_size = ts.sbuf_fmax_bytes
    ts.sbuf_size_bytes = geo["sbuf_bytes"] * 128
    ts.psum_num_banks = geo["banks"]


def call_args(func, request):
    """Positional and keyword arguments for the kernel, by parameter name."""
    params = inspect.signature(func).parameters
    tensors = {a["name"]: a for a in request["args"]}
    literals = {}
    for kw in request["kwargs"]:
        try:
            literals[kw["name"]] = ast.literal_eval(kw["value"])
        except (ValueError, SyntaxError):
            fail("--kwarg %s=%s is not a Python literal" % (kw["name"], kw["value"]), kind="setup")
    for name in list(tensors) + list(literals):
        if name not in params:
            fail(
                "%s has no parameter '%s' (its parameters: %s)"
                % (request["function"], name, ", ".join(params) or "none"),
                kind="setup",
            )
    kwargs = {}
    inputs = []
    for name, p in params.items():
        if name in tensors:
            a = tensors[name]
            t = Tile(tuple(a["shape"]), a["dtype"], language.hbm, name=name, loc=None)
            kwargs[name] = t
            inputs.append(t)
        elif name in literals:
            kwargs[name] = literals[name]
        elif p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            fail(
                "parameter '%s' of %s needs --arg %s=DTYPE[D0,...] or --kwarg %s=VALUE"
                % (name, request["function"], name, name),
                kind="setup",
            )
    return kwargs, inputs


def returned_tiles(value):
    if isinstance(value, Tile):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in returned_tiles(v)]
    return []


def main():
    request = json.loads(sys.argv[1])
    shim.install()
    STATE.kernel_file = os.path.abspath(request["kernel"])
    STATE.display_file = request["display"]
    kernel = guarded(lambda: load_kernel(STATE.kernel_file, request["function"]))
    func = getattr(kernel, "func", kernel)
    if not callable(func):
        fail("'%s' is not a function" % request["function"], kind="setup")
    target = request["arch"] or getattr(kernel, "platform_target", None) or "trn1"
    geo = request["archs"].get(target)
    if geo is None:
        fail("platform_target '%s' names no architecture psum knows" % target, kind="setup")
    set_tile_sizes(geo)
    rec = core.Recorder()
    STATE.recorder = rec
    kwargs, inputs = guarded(lambda: call_args(func, request))
    result = guarded(lambda: func(**kwargs))
    if rec.frames:
        fail(
            "a loop left early (break or return inside affine_range/sequential_range)",
            rec.frames[-1].loc,
            "unsupported",
        )
    outputs = [b for t in returned_tiles(result) for b in t.blocks.values()]
    inputs = [b for t in inputs for b in t.blocks.values()]
    block = func.__name__ if func.__name__.isidentifier() else "kernel"
    text = core.program_text(geo["codename"], block, inputs + outputs, rec)
    warnings = [[loc, message()] for loc, message in rec.warnings]
    reply = {"program": text, "arch": geo["codename"], "warnings": warnings}
    reply["affine"] = rec.unrolled_affine()
    print(json.dumps(reply))


main()
