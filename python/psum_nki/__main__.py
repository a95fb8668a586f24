"""The driver ``psum trace`` runs: ``python3 -m psum_nki REQUEST REPLY``.

REQUEST (a JSON file) names the kernel file, the function, its ``--arg``
tensors and ``--kwarg`` literals, the architecture (or none, to take the
kernel's ``platform_target``), the launch grid, the limits and the geometry
of every architecture. The reply goes to the file REPLY, never to the
kernel's stdout (which is sent to stderr): ``{"program", "arch", "warnings",
"affine"}`` (``affine``: the ``affine_range`` loops left unrolled,
``Recorder.unrolled_affine``), ``{"error": {message, loc, kind}}`` or
``{"api": [lines]}``.
"""

import ast
import json
import os
import re
import signal
import sys
import traceback


def reply(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f)


def error(message, loc=None, kind="exception", detail=None):
    return {"error": {"message": message, "loc": loc, "kind": kind, "detail": detail}}


def limit_memory(mib):
    try:
        import resource
    except ImportError:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    want = mib << 20
    if hard != resource.RLIM_INFINITY:
        want = min(want, hard)
    if soft == resource.RLIM_INFINITY or want < soft:
        resource.setrlimit(resource.RLIMIT_AS, (want, hard))


#: The module spellings a ``--kwarg`` value may name an attribute of.
ALIASES = {"np": "numpy", "nl": "nki.language", "nisa": "nki.isa", "ni": "nki.isa"}


def literal(kw):
    """The value of a ``--kwarg``: a Python literal, or a dotted name of numpy
    or of the NKI modules (``np.add``, ``nl.max``, ``nisa.reduce_cmd.reduce``)."""
    text = kw["value"].strip()
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        pass
    parts = text.split(".")
    if len(parts) >= 2 and all(p.isidentifier() for p in parts):
        head = ALIASES.get(parts[0], parts[0])
        if head in ("numpy", "nki") or head.startswith(("nki.", "neuronxcc.nki")) or head == "neuronxcc":
            import importlib

            try:
                obj = importlib.import_module(head)
            except ImportError:
                raise TraceErrorSetup(
                    "--kwarg %s=%s names %s, which %s cannot import (PSUM_PYTHON names the Python psum runs)"
                    % (kw["name"], kw["value"], head, sys.executable)
                ) from None
            try:
                for attr in parts[1:]:
                    obj = getattr(obj, attr)
                return obj
            except Exception:
                pass
    raise TraceErrorSetup(
        "--kwarg %s=%s is neither a Python literal nor a name in numpy or the NKI modules" % (kw["name"], kw["value"])
    ) from None


class TraceErrorSetup(Exception):
    pass


def undefined_by_failure(e, failed):
    """The error of the failed top-level statement that would have defined the
    name ``e`` (a NameError) misses (a refused import, say), else ``e``."""
    match = re.match(r"name '([^']+)' is not defined", str(e))
    name = getattr(e, "name", None) or (match.group(1) if match else None)
    for _line, names, exc in failed:
        if name in names:
            return exc
    return e


def run(request):
    from . import api, driver, loader, shim
    from .errors import TraceError

    if request.get("api"):
        shim.install()
        return {"api": api.listing()}

    class Timeout(loader.Limit):
        pass

    def on_alarm(signum, frame):
        raise Timeout()

    if request.get("timeout"):
        signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, float(request["timeout"]))
    if request.get("memory_mib"):
        limit_memory(int(request["memory_mib"]))
    from .errors import traceback_loc

    installed = shim.install()
    try:
        literals = {kw["name"]: literal(kw) for kw in request["kwargs"]}
        module = loader.load(request["kernel"], request["display"])
        fn = request["function"]
        if not hasattr(module, fn):
            for line, names, exc in module.failed:
                if fn in names:
                    raise exc
            return error("no function '%s' in %s" % (fn, request["display"]), kind="setup")
        kernel = getattr(module, fn)
        target = request["arch"] or getattr(kernel, "platform_target", None) or "trn1"
        if not isinstance(target, str):
            return error("platform_target %r names no architecture" % (target,), kind="setup")
        geo = request["archs"].get(target)
        if geo is None:
            return error("platform_target '%s' names no architecture psum knows" % target, kind="setup")
        tensors = {a["name"]: (a["dtype"], a["shape"]) for a in request["args"]}
        try:
            traced = driver.trace(kernel, tensors, literals, geo, request.get("grid") or (), request.get("program_id") or ())
        except NameError as e:
            raise undefined_by_failure(e, module.failed) from None
        return {"program": traced.program, "arch": traced.arch, "warnings": traced.warnings, "affine": traced.affine}
    except TraceErrorSetup as e:
        return error(str(e), kind="setup")
    except TraceError as e:
        return error(e.message, e.loc, e.kind)
    except Timeout as e:
        return error(
            "the kernel did not finish within %g s (psum trace --timeout)" % request["timeout"],
            traceback_loc(e),
            "limit",
        )
    except MemoryError as e:
        return error(
            "MemoryError: the kernel exceeded the tracer's memory limit of %d MiB" % request["memory_mib"],
            traceback_loc(e),
            "limit",
        )
    except RecursionError as e:
        return error("RecursionError: %s" % e, traceback_loc(e))
    except (Exception, SystemExit) as e:
        frames = traceback.extract_tb(e.__traceback__)
        here = os.path.dirname(os.path.abspath(__file__))
        inner = frames[-1].filename if frames else ""
        message = "%s: %s" % (type(e).__name__, e)
        if os.path.dirname(os.path.abspath(inner)) == here and not isinstance(e, SystemExit):
            return error(message, traceback_loc(e), "internal", "".join(traceback.format_exception(type(e), e, e.__traceback__)))
        return error(message, traceback_loc(e))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        shim.uninstall(installed)


def main():
    request_path, reply_path = sys.argv[1], sys.argv[2]
    with open(request_path) as f:
        request = json.load(f)
    # The kernel's prints go to stderr (fd 1 becomes a copy of fd 2, so a
    # kernel that closes its stdout closes neither); the reply has a file of its own.
    os.dup2(2, 1)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 3000))
    try:
        out = run(request)
    except BaseException as e:
        out = error("%s: %s" % (type(e).__name__, e), None, "internal", "".join(traceback.format_exception(type(e), e, e.__traceback__)))
    reply(reply_path, out)
    sys.stderr.flush()
    os._exit(0)


main()
