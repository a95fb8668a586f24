"""``python -m psum``: the ``psum`` command line."""

import sys

from ._cli import main

sys.exit(main(["psum", *sys.argv[1:]]))
