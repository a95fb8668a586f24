"""Loading a kernel file as it is found (SPEC §9.1): inside its package when
it has one (so package-relative imports work), one top-level statement at a
time, so that module-level code that fails without the real NKI (a kernel
run on numpy inputs, a test harness) does not keep the named function from
being traced."""

import ast
import importlib
import importlib.machinery
import os
import sys
import types

from .errors import STATE, TraceError


class Limit(BaseException):
    """A resource limit reached while the kernel ran (not an exception the kernel may catch)."""


def package_of(path):
    """(directory for sys.path, dotted module name, the kernel's root directory)."""
    directory = os.path.dirname(path)
    parts = [os.path.splitext(os.path.basename(path))[0]]
    while os.path.isfile(os.path.join(directory, "__init__.py")):
        parts.insert(0, os.path.basename(directory))
        directory = os.path.dirname(directory)
    root = os.path.join(directory, parts[0]) if len(parts) > 1 else os.path.dirname(path)
    return directory, ".".join(parts), root


def syntax_error(e, display):
    loc = "%s:%d" % (display, e.lineno or 0)
    if e.offset:
        loc += ":%d" % e.offset
    return TraceError("%s: %s" % (type(e).__name__, e.msg), "invalid", loc=loc)


def defined(stmt):
    """The names a top-level statement defines."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    names = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).partition(".")[0] for a in node.names)
    return names


def load(path, display):
    """The kernel's module, with ``failed``: the top-level statements that raised."""
    path = os.path.abspath(path)
    directory, name, root = package_of(path)
    STATE.reset(path, display, root)
    for d in (os.path.dirname(path), directory):
        if d not in sys.path:
            sys.path.insert(0, d)
    with open(path, "rb") as f:
        source = f.read()
    try:
        tree = ast.parse(source, path)
        # What only the compiler finds ('return' outside a function) is a
        # syntax error of the whole file too, before any statement runs.
        compile(tree, path, "exec")
    except SyntaxError as e:
        raise syntax_error(e, display) from None
    parent = name.rpartition(".")[0]
    if parent:
        try:
            importlib.import_module(parent)
        except Exception:
            pass
    module = types.ModuleType(name)
    module.__file__ = path
    module.__package__ = parent
    module.__spec__ = importlib.machinery.ModuleSpec(name, None, origin=path)
    module.__builtins__ = __builtins__
    sys.modules[name] = module
    failed = []
    for stmt in tree.body:
        code = compile(ast.Module(body=[stmt], type_ignores=[]), path, "exec")
        try:
            exec(code, module.__dict__)
        except Limit:
            raise
        except SyntaxError as e:
            raise syntax_error(e, display) from None
        except (Exception, SystemExit) as e:
            failed.append((stmt.lineno, defined(stmt), e))
    module.failed = failed
    return module
