"""Shared fixtures of the psum package's tests: the repository, the console
command installed beside this interpreter, and the psum binary built by cargo
(``$PSUM_BIN``, which .ci/run sets) to compare against."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
KERNELS = "python/tests/kernels/matmuls.py"


def console() -> str:
    """The ``psum`` console command of the environment running the tests."""
    return str(Path(sys.executable).parent / "psum")


def run(argv, cwd=REPO, **kwargs):
    """Runs ``argv`` in the repository, capturing bytes."""
    return subprocess.run(argv, cwd=cwd, capture_output=True, stdin=subprocess.DEVNULL, **kwargs)


@pytest.fixture
def in_repo(monkeypatch):
    """Runs the test from the repository root (kernel paths are shown relative to it)."""
    monkeypatch.chdir(REPO)
    return REPO


@pytest.fixture
def binary():
    """The psum binary cargo built (``$PSUM_BIN``), for byte-for-byte comparisons."""
    path = os.environ.get("PSUM_BIN")
    if not path:
        pytest.skip("PSUM_BIN names no psum binary")
    return str(Path(path).resolve())
