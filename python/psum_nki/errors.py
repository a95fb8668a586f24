"""Refusals and source locations (SPEC §9.3): what an error says and which
kernel line it names.

A kernel's *own files* are the files under its root (the directory of the
kernel file, or the root of the package it belongs to), outside any
``site-packages``; every location the tracer reports is the innermost frame in
one of them, written as the user named the kernel file.
"""

import inspect
import linecache
import os
import re
import sys


def show(value):
    """A kernel's value as an error message names it: a function or method by
    its name, else its repr, unless that is an object's address
    (``<… at 0x…>``), then what it is; at most 80 characters."""
    if inspect.ismethod(value) and getattr(value.__self__, "is_nki_tensor", False):
        return "a method of an NKI tensor"
    if inspect.isroutine(value):
        return "function %s" % (getattr(value, "__qualname__", None) or getattr(value, "__name__", "?"))
    text = repr(value)
    if " at 0x" in text:
        name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
        if callable(value) and isinstance(name, str):
            text = "function %s" % name
        else:
            text = getattr(type(value), "shown_as", None) or "a value of type %s" % type(value).__name__
    return text if len(text) <= 80 else text[:77] + "..."


class TraceError(Exception):
    """A failure reported as ``FILE:LINE: error: MESSAGE``.

    ``kind`` is ``unsupported`` (a construct the tracer refuses), ``invalid``
    (a kernel that breaks an NKI rule) or ``setup`` (the request itself).
    """

    def __init__(self, message, kind="unsupported", loc=None):
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.loc = kernel_loc() if loc is None else (loc or None)


class Unsupported(TraceError):
    """An API, argument or construct the tracer does not model."""

    def __init__(self, what):
        super().__init__(what, "unsupported")


class RefusedImport(Unsupported, ModuleNotFoundError):
    """An import of an ``nki`` submodule the tracer does not have (an
    ``ImportError``, so a kernel may catch it)."""


class UnknownAttribute(Unsupported, AttributeError):
    """An attribute of an NKI tensor the tracer does not know (an
    ``AttributeError``, so ``getattr(t, name, default)`` still works)."""


class Invalid(TraceError):
    """A kernel that breaks a rule of the NKI API."""

    def __init__(self, what):
        super().__init__(what, "invalid")


class _State:
    """What the running trace knows about the kernel's files and recorder."""

    def __init__(self):
        self.root = None
        self.kernel_dir = None
        self.display_dir = None
        self.recorder = None
        self._display = {}

    def reset(self, kernel_path, display, root):
        self.root = os.path.abspath(root)
        self.kernel_dir = os.path.dirname(os.path.abspath(kernel_path))
        self.display_dir = os.path.dirname(display)
        self._display = {os.path.abspath(kernel_path): display}
        self.recorder = None

    def display(self, filename):
        """How ``filename`` is written in locations, or None when it is not the kernel's."""
        if filename in self._display:
            return self._display[filename]
        shown = None
        path = os.path.abspath(filename)
        if path in self._display:
            shown = self._display[path]
        elif (
            self.root is not None
            and path.startswith(self.root + os.sep)
            and "site-packages" not in path
            and os.path.dirname(__file__) not in path
        ):
            rel = os.path.relpath(path, self.kernel_dir)
            shown = os.path.normpath(os.path.join(self.display_dir, rel)).replace(os.sep, "/")
        self._display[filename] = shown
        return shown


STATE = _State()


def kernel_frame(start=None):
    """The innermost frame of the kernel's own files, or None."""
    f = start if start is not None else sys._getframe(1)
    while f is not None:
        if STATE.display(f.f_code.co_filename) is not None:
            return f
        f = f.f_back
    return None


def frame_loc(frame):
    return "%s:%d" % (STATE.display(frame.f_code.co_filename), frame.f_lineno)


def kernel_loc():
    """``FILE:LINE`` of the kernel line being executed."""
    f = kernel_frame(sys._getframe(1))
    return None if f is None else frame_loc(f)


def traceback_loc(exc):
    """``FILE:LINE`` of the innermost kernel frame of an exception's traceback."""
    loc = None
    tb = exc.__traceback__
    while tb is not None:
        shown = STATE.display(tb.tb_frame.f_code.co_filename)
        if shown is not None:
            loc = "%s:%d" % (shown, tb.tb_lineno)
        tb = tb.tb_next
    return loc


ASSIGN = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?::[^=]*)?=[^=]")
FOR = re.compile(r"^\s*for\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\b")


def source_name(pattern, default):
    """A name from the kernel line being executed (an assignment target or a loop variable)."""
    f = kernel_frame(sys._getframe(1))
    if f is not None:
        m = pattern.match(linecache.getline(f.f_code.co_filename, f.f_lineno))
        if m:
            return m.group(1)
    return default
