"""Whole-program Python profiling cost: a call-heavy script (recursion and
methods) run plain, under `python3 -m cProfile`, and under
`python3 -m boardtrace -o` (a full timeline into a capture: its zstd
file, and with -z lz4 the faster one to write), alternated;
prints the wall time each adds and their ratio, and boardtrace's cost per
call, and under `python3 -m boardtrace -l -o` (a zone per line too); also
the CPU time each adds (all processes: the interpreter, and for
boardtrace the runtime's worker thread and the capture), which a busy
machine does not blur as it does wall time.

Usage: bench_python.py [--python PYTHON] PYTHONPATH CAPTURE [CALLS] [ROUNDS]

PYTHON is the interpreter to measure (default: the one running this), with
PYTHONPATH holding the extension built for it (for pyenv's 3.13 in the host
build: build/host/runtime/python/3.13)."""

import os
import resource
import subprocess
import sys
import tempfile
import time

ARGS = sys.argv[1:]
PYTHON = sys.executable
if ARGS[:1] == ["--python"] and len(ARGS) > 1:
    PYTHON = ARGS[1]
    del ARGS[:2]
if len(ARGS) < 2:
    sys.exit(__doc__.split("\n\n")[-2])
PYPATH, CAPTURE = (os.path.abspath(a) for a in ARGS[0:2])
CALLS = int(ARGS[2]) if len(ARGS) > 2 else 10_000_000
ROUNDS = int(ARGS[3]) if len(ARGS) > 3 else 3

SCRIPT = f"""
class Node:
    def __init__(self, v):
        self.v = v
    def value(self):
        return self.v

def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

def main(calls):
    done = 0
    node = Node(1)
    while done < calls:
        fib(20)            # 21891 calls
        for _ in range(1000):
            node.value()   # 1000 method calls
        done += 21891 + 1000
main({CALLS})
"""


def timed(args, env, cwd):
    """(wall s, CPU s of the run and every process it waited for). In CWD,
    the work folder: `-m boardtrace` looks in the current folder first, and
    ctest's (the build's runtime/python) holds the package of another
    Python."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(args, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu


def main():
    work = tempfile.mkdtemp(prefix="bt-bench-python-")
    script = os.path.join(work, "calls.py")
    with open(script, "w") as f:
        f.write(SCRIPT)
    env = dict(os.environ, PYTHONPATH=PYPATH, BOARDTRACE_CAPTURE=CAPTURE)
    py = PYTHON
    runs = {"plain": [], "cProfile": [], "boardtrace": [], "boardtrace -z lz4": [],
            "boardtrace -l": []}
    for _ in range(ROUNDS):
        runs["plain"].append(timed([py, script], env, work))
        runs["cProfile"].append(
            timed([py, "-m", "cProfile", "-o", os.path.join(work, "p.prof"), script], env, work))
        runs["boardtrace"].append(
            timed([py, "-m", "boardtrace", "-f", "-o", os.path.join(work, "t.tracy"), script], env, work))
        runs["boardtrace -z lz4"].append(
            timed([py, "-m", "boardtrace", "-f", "-z", "lz4", "-o", os.path.join(work, "z.tracy"),
                   script], env, work))
        runs["boardtrace -l"].append(
            timed([py, "-m", "boardtrace", "-f", "-l", "-o", os.path.join(work, "l.tracy"), script], env,
                  work))
    med = {k: sorted(w for w, _ in v)[len(v) // 2] for k, v in runs.items()}
    cpu = {k: sorted(c for _, c in v)[len(v) // 2] for k, v in runs.items()}
    added_c = med["cProfile"] - med["plain"]
    added_b = med["boardtrace"] - med["plain"]
    cpu_c = cpu["cProfile"] - cpu["plain"]
    cpu_b = cpu["boardtrace"] - cpu["plain"]
    version = subprocess.run([py, "-c", "import sys; print(sys.version.split()[0])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    print(f"Python {version} ({py}), the hook: "
          + ("sys.monitoring" if tuple(map(int, version.split(".")[:2])) >= (3, 12)
             else "the C profile function"))
    print(f"calls per run: about {CALLS}, {ROUNDS} alternated rounds, medians; "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    for k in runs:
        print(f"  {k:18s} {med[k]:.3f} s wall, {cpu[k]:.3f} s CPU")
    print(f"added wall: cProfile {added_c:.3f} s, boardtrace {added_b:.3f} s, "
          f"ratio {added_b / added_c:.2f} (goal <= 1.0)")
    print(f"added CPU:  cProfile {cpu_c:.3f} s, boardtrace {cpu_b:.3f} s, "
          f"ratio {cpu_b / cpu_c:.2f}")
    print(f"boardtrace cost per call: {added_b / CALLS * 1e9:.0f} ns wall, "
          f"{cpu_b / CALLS * 1e9:.0f} ns CPU "
          f"(cProfile {added_c / CALLS * 1e9:.0f} ns wall, {cpu_c / CALLS * 1e9:.0f} ns CPU)")
    added_z = med["boardtrace -z lz4"] - med["plain"]
    print(f"with -z lz4 (the larger file, faster to write): added wall {added_z:.3f} s, "
          f"ratio {added_z / added_c:.2f}")
    added_l = med["boardtrace -l"] - med["plain"]
    cpu_l = cpu["boardtrace -l"] - cpu["plain"]
    print(f"with -l: added wall {added_l:.3f} s ({added_l / added_c:.2f} x cProfile's, "
          f"{added_l / added_b:.2f} x without -l), added CPU {cpu_l:.3f} s "
          f"({cpu_l / cpu_c:.2f} x cProfile's)")
    print(f"trace: {os.path.getsize(os.path.join(work, 't.tracy'))} bytes (zstd), "
          f"{os.path.getsize(os.path.join(work, 'z.tracy'))} with -z lz4, "
          f"with -l {os.path.getsize(os.path.join(work, 'l.tracy'))} bytes")


main()
