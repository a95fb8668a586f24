"""Compiling releases the GIL: another Python thread runs while a large
compile is in progress, and compiles from several threads agree."""

import threading
import time

import psum
import pytest
from conftest import console, run


@pytest.fixture(scope="module")
def large(tmp_path_factory):
    path = tmp_path_factory.mktemp("large") / "random.psum"
    o = run([console(), "gen", "random", "--tensors", "20000", "--seed", "2", "--multi-bank", "--loops", "-o", str(path)])
    assert o.returncode == 0, o.stderr.decode()
    return psum.load(path)


def test_another_thread_runs_while_a_large_compile_is_in_progress(large):
    span = {}
    ticks = []
    done = threading.Event()

    def compile_large():
        span["start"] = time.monotonic_ns()
        span["compiled"] = large.compile()
        span["end"] = time.monotonic_ns()
        done.set()

    worker = threading.Thread(target=compile_large)
    worker.start()
    while not done.is_set():
        ticks.append(time.monotonic_ns())
    worker.join()
    # With the GIL held through the compile, no tick could fall inside it.
    assert any(span["start"] < t < span["end"] for t in ticks)
    assert span["compiled"].verified is True


def test_compiles_from_several_threads_agree(large):
    results = [None] * 3

    def compile_into(i):
        results[i] = large.compile(allocator="mincost", verify=False).text

    threads = [threading.Thread(target=compile_into, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results[0] == results[1] == results[2] == large.compile(allocator="mincost", verify=False).text
