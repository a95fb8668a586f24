"""The exceptions of the ``psum`` package: :class:`Error` and one subclass a
stage (tracing, parsing, validation, allocation, verification), each with the
command line's message text and, where known, the place it points at."""

from typing import Optional


class Error(Exception):
    """A psum error: ``str(e)`` is the message ``psum`` prints (``FILE:LINE:COL:
    error: …`` with the source line), ``file``, ``line`` and ``column`` (1-based)
    say where it points, each ``None`` when unknown."""

    def __init__(self, message: str, file: Optional[str] = None, line: Optional[int] = None, column: Optional[int] = None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.column = column

    def __str__(self) -> str:
        return self.message

    def __reduce__(self):
        return (type(self), (self.message, self.file, self.line, self.column))


class TraceError(Error):
    """The kernel could not be traced: the tracer refused a construct, the
    kernel raised, ran out of time or memory (at the kernel line), or Python
    could not be run."""


class ParseError(Error):
    """The program text does not parse (SPEC §2.6)."""


class ValidationError(Error):
    """The program parses but breaks a rule of SPEC §2."""


class AllocationError(Error):
    """PSUM allocation, unrolling or legalization failed (SPEC §3, §4)."""


class VerifyError(Error):
    """The result does not compute what the input computes (SPEC §5)."""


class InternalError(Error):
    """A failure inside psum itself (a Rust panic, with its message)."""
