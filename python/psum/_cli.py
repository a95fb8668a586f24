"""The ``psum`` console command: the command line of the Rust crate
(``psum::cli``), run in this process on ``sys.argv``, so its output and exit
codes are the ``psum`` binary's."""

import signal
import sys

from . import _psum


def main() -> int:
    """Runs ``psum`` on ``sys.argv`` and returns its exit code (0, 1 or 2)."""
    # psum writes to the process's file descriptors: what Python buffered goes first.
    sys.stdout.flush()
    sys.stderr.flush()
    # Ctrl-C stops psum as it stops the binary, not at the next Python bytecode.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    return _psum.main(sys.argv)
