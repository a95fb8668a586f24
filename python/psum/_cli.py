"""The ``psum`` console command: the command line of the Rust crate
(``psum::cli``), run in this process on ``sys.argv``, so its output and exit
codes are the ``psum`` binary's."""

import signal
import sys
from typing import Optional, Sequence

from . import _psum


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs ``psum`` on ``argv`` (default ``sys.argv``, the program name
    first) and returns its exit code (0, 1 or 2)."""
    # psum writes to the process's file descriptors: what Python buffered goes first.
    sys.stdout.flush()
    sys.stderr.flush()
    # Ctrl-C stops psum as it stops the binary, not at the next Python bytecode.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    return _psum.main(list(sys.argv if argv is None else argv))
