#!/usr/bin/env python3
"""Where the wall time of one ``goldeval score --workers N`` goes, phase by phase and thread by thread (issue 31 item 2).

    python benchmarks/timeline_threads.py FILE --rounds 5 [--src OTHER/src] [--workers 1 2]

Each run is a fresh process (``goldeval score FILE --workers N -q --no-store --out …``) started by this script, with
the local engine's parts wrapped, in that process only, to stamp their wall start and end (``time.time()``, read
against the moment this script started the process) and their CPU (``time.thread_time()`` of the thread that runs
them): the imports, the first pass (``_first_pass``), the sha256 thread (``_FileHash.run``), every chunk scored
(``_score_chunk``, by thread), the main thread's reading of the chunks (``_span_blocks``), its waits for a chunk
(``Future.result``) and its taking them (``_Job.take``), ``run``, the CLI command, and the end of the process (seen
by this script). A part's "busy" wall minus its CPU is time its thread was runnable or waiting on the GIL but not
on a core. The source is not changed: the wrappers are set here, before ``goldeval.cli.main`` runs. The runs wait
for a quiet moment (``/proc/stat`` idle share ≥ 0.85 over 0.5 s), the worker counts alternate, and the table is the
median of each figure over the rounds. No number here is a pass/fail: read it beside benchmarks/README.md, "Issue
31 item 2, the serial parts".
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_quiet_pairs import idle_share  # (this folder is on sys.path when a script of it runs)

HERE = Path(__file__).resolve().parent

#: What runs in the measured process: the wrappers, then the CLI; the stamps go to argv[1] as JSON at exit.
CHILD = r'''
import json, sys, threading, time
EV = []
def stamp(name, w0, w1, cpu):
    EV.append((name, threading.current_thread().name, w0, w1, cpu))
START = time.time()
c0 = time.thread_time()
from goldeval.engines import local
from goldeval import cli
stamp("imports", START, time.time(), time.thread_time() - c0)
def wrap(obj, attr, name):
    orig = getattr(obj, attr)
    def f(*a, **k):
        w, c = time.time(), time.thread_time()
        try:
            return orig(*a, **k)
        finally:
            stamp(name, w, time.time(), time.thread_time() - c)
    setattr(obj, attr, f)
wrap(local, "_first_pass", "first pass")
wrap(local, "_score_chunk", "score a chunk")
wrap(local._Job, "take", "take a chunk")
wrap(local, "run", "run")
hash_run = local._FileHash.run
def hashed(self):
    w, c = time.time(), time.thread_time()
    hash_run(self)
    stamp("sha256", w, time.time(), time.thread_time() - c)
local._FileHash.run = hashed
span_blocks = local._span_blocks
def blocks(*a, **k):
    g = span_blocks(*a, **k)
    while True:
        w, c = time.time(), time.thread_time()
        x = next(g, None)
        stamp("read a chunk", w, time.time(), time.thread_time() - c)
        if x is None:
            return
        yield x
local._span_blocks = blocks
from concurrent.futures import Future
result = Future.result
def waited(self, timeout=None):
    w, c = time.time(), time.thread_time()
    try:
        return result(self, timeout)
    finally:
        if threading.current_thread() is threading.main_thread():
            stamp("wait for a chunk", w, time.time(), time.thread_time() - c)
Future.result = waited
w, c = time.time(), time.thread_time()
try:
    cli.main(sys.argv[2:])
except SystemExit:
    pass
stamp("CLI command", w, time.time(), time.thread_time() - c)
import atexit
atexit.register(lambda: json.dump(EV, open(sys.argv[1], "w")))
'''


def one_run(src: str, file: Path, workers: int, work: Path) -> dict:
    """One measured process: ``{"wall": s, "cpu": tree CPU s, "parts": {(part, thread): [start, end, busy, cpu, n]}}``."""
    stamps = work / f"stamps{workers}.json"
    env = dict(os.environ, PYTHONPATH=src)
    before = os.times()
    t0 = time.time()
    subprocess.run([sys.executable, "-c", CHILD, str(stamps), "score", str(file), "--workers", str(workers), "-q",
                    "--no-store", "--out", str(work / f"out{workers}.json")], env=env, check=True)
    t1 = time.time()
    after = os.times()
    parts: dict = {}
    for name, thread, a, b, cpu in json.loads(stamps.read_text()):
        thread = "scoring thread" if thread.startswith("goldeval-score") else thread
        key = f"{name} | {thread}" if thread != "scoring thread" else f"{name} | {thread} (each, mean)"
        p = parts.setdefault(key, [1e18, 0.0, 0.0, 0.0, set()])
        p[0], p[1] = min(p[0], a - t0), max(p[1], b - t0)
        p[2] += b - a
        p[3] += cpu
    n_scoring = len({t for _, t, *_ in json.loads(stamps.read_text()) if t.startswith("goldeval-score")}) or 1
    for key, p in parts.items():
        if "(each, mean)" in key:
            p[2] /= n_scoring
            p[3] /= n_scoring
    parts["process ends | (seen from outside)"] = [t1 - t0, t1 - t0, 0.0, 0.0, set()]
    cpu = (after.children_user + after.children_system) - (before.children_user + before.children_system)
    return {"wall": t1 - t0, "cpu": cpu, "parts": parts}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", type=Path)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--src", default=str(HERE.parent / "src"), help="the src folder timed (default: this tree's)")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--idle", type=float, default=0.85)
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="goldeval_timeline_"))
    runs: dict[int, list[dict]] = collections.defaultdict(list)
    loads = []
    for r in range(args.rounds):
        for w in args.workers if r % 2 == 0 else args.workers[::-1]:
            while idle_share() < args.idle:
                pass
            loads.append(" ".join(Path("/proc/loadavg").read_text().split()[:3]))
            runs[w].append(one_run(args.src, args.file, w, work))
    print(f"{args.file} ({args.src}); {args.rounds} rounds; load average before the runs: {loads[0]} … {loads[-1]}")
    print("seconds from the process's start (medians over the rounds); busy: wall inside the part; cpu: its thread's")
    for w, rs in sorted(runs.items()):
        walls = [x["wall"] for x in rs]
        cpus = [x["cpu"] for x in rs]
        print(f"\n--workers {w}: wall {statistics.median(walls):.3f} s ({min(walls):.3f}–{max(walls):.3f}), "
              f"tree CPU {statistics.median(cpus):.3f} s")
        print(f"{'part | thread':48s} {'start':>6s} {'end':>6s} {'busy':>6s} {'cpu':>6s}")
        keys = list(dict.fromkeys(k for x in rs for k in x["parts"]))
        rows = []
        for k in keys:
            vals = [x["parts"][k] for x in rs if k in x["parts"]]
            rows.append((statistics.median(v[0] for v in vals), k, vals))
        for _, k, vals in sorted(rows, key=lambda t: t[0]):
            med = [statistics.median(v[i] for v in vals) for i in range(4)]
            print(f"{k:48s} {med[0]:6.3f} {med[1]:6.3f} {med[2]:6.3f} {med[3]:6.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
