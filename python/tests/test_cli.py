"""The `psum` console command: the binary's command line, byte for byte,
with its exit codes."""

import psum
from conftest import REPO, console, run

ONE_SPILL = "examples/02_one_spill.psum"


def test_compile_prints_what_the_api_compiles():
    o = run([console(), "compile", ONE_SPILL])
    assert o.returncode == 0
    assert o.stdout.decode() == psum.load(REPO / ONE_SPILL).compile().text
    assert o.stderr.decode().startswith("psum compile: arch trn1, 8 PSUM banks, 15 instructions after unrolling\n")


def test_the_console_command_is_the_binary_byte_for_byte(binary):
    for args in (["compile", ONE_SPILL], ["fmt", ONE_SPILL, "--emit", "json"], ["bound", ONE_SPILL], ["arch"], ["--help"]):
        ours, theirs = run([console(), *args]), run([binary, *args])
        assert ours.stdout == theirs.stdout, args
        assert ours.returncode == theirs.returncode == 0
    for args in (["compile", "no/such.psum"], ["compile", ONE_SPILL, "--allocator", "linear"], ["nothing"]):
        ours, theirs = run([console(), *args]), run([binary, *args])
        assert (ours.stdout, ours.stderr, ours.returncode) == (theirs.stdout, theirs.stderr, theirs.returncode), args


def test_exit_codes_and_messages():
    missing = run([console(), "compile", "no/such.psum"])
    assert missing.returncode == 1
    assert missing.stdout == b""
    assert missing.stderr == b"no/such.psum: error: No such file or directory (os error 2)\n"
    usage = run([console(), "compile"])
    assert usage.returncode == 2
    assert usage.stderr.decode().startswith("error: the following required arguments were not provided:")
    assert "Usage: psum compile" in usage.stderr.decode()
    version = run([console(), "--version"])
    assert (version.returncode, version.stdout) == (0, b"psum 0.1.0\n")


def test_python_m_psum_runs_the_same_command(tmp_path):
    import sys

    out = tmp_path / "out.psum"
    o = run([sys.executable, "-m", "psum", "compile", ONE_SPILL, "-o", str(out)])
    assert o.returncode == 0
    assert out.read_text() == psum.load(REPO / ONE_SPILL).compile().text
    assert "Usage: psum fmt" in run([sys.executable, "-m", "psum", "fmt"]).stderr.decode()
