"""The Python API's overhead over the command line (docs/PERFORMANCE.md):
times `psum.load(path).compile()` in this process against `psum compile PATH
-o /dev/null` (a process of the psum binary) on the same generated program,
alternately, several times, and prints the ratio of the medians and of the
fastest runs.

    cargo build --release && pip install .
    python benches/python_overhead.py [--binary target/release/psum]
        [--tensors 100000] [--rounds 5]

The program is `psum gen random --tensors N --seed 2 --multi-bank --loops`.
Both sides allocate, unroll, legalize and verify it; the command line also
starts a process and prints the program, the API frees its result in the
timed span (as the process does before it exits).
"""

import argparse
import os
import statistics
import subprocess
import tempfile
import time

import psum


def cli_seconds(binary: str, path: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([binary, "compile", path, "-o", os.devnull], check=True, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def api_seconds(path: str) -> float:
    t0 = time.perf_counter()
    compiled = psum.load(path).compile()
    assert compiled.verified
    del compiled
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", default="target/release/psum")
    ap.add_argument("--tensors", type=int, default=100000)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "random.psum")
        gen = ["gen", "random", "--tensors", str(a.tensors), "--seed", "2", "--multi-bank", "--loops", "-o", path]
        subprocess.run([a.binary, *gen], check=True)
        cli, api = [], []
        for r in range(a.rounds):
            cli.append(cli_seconds(a.binary, path))
            api.append(api_seconds(path))
            print("round %d: psum compile %.3f s, psum.load().compile() %.3f s" % (r + 1, cli[-1], api[-1]))
    for name, pick in (("median", statistics.median), ("fastest", min)):
        c, p = pick(cli), pick(api)
        print("%s: psum compile %.3f s, psum.load().compile() %.3f s, ratio %.3f" % (name, c, p, p / c))


if __name__ == "__main__":
    main()
