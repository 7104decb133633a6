"""Spark engine (local[2]) against the single-process CLI and --workers 2, on make_corpus.py free text.

Usage (after `pip install -e ".[spark]"`, Java 17 on the machine):

    python3 ../shared/bench/make_corpus.py --n 100000 --out /tmp/c100k.jsonl
    python3 ../shared/bench/make_corpus.py --n 1000000 --out /tmp/c1m.jsonl
    python benchmarks/bench_spark.py /tmp/c100k.jsonl /tmp/c1m.jsonl:1 --repeats 3

(``FILE:N`` runs N rounds of that file instead of ``--repeats``: a 1M-row Spark round takes minutes.)

Each contender is a fresh `goldeval score FILE --no-store --out /dev/null -q` process (Spark's JVM start-up
included, as a user pays it), run interleaved with the others, `--repeats` times per file; the table gives the
median wall time, min–max, rows per second, the ratio to the single-process CLI (the anchor, same file, same
round), and two peaks of resident memory:

- driver: the goldeval Python process's own high-water mark (``VmHWM`` of ``/proc/self/status``, read as it exits;
  for Spark that is the Python driver, not the JVM or the Python workers);
- tree: ``/usr/bin/time -v``'s "Maximum resident set size", the largest process of the whole invocation (the driver,
  a worker, or Spark's JVM).

Not ``ru_maxrss``: Linux keeps a process's ``ru_maxrss`` across ``exec`` and a forked child starts with its parent's
high-water mark, so a goldeval process started from a bench process that had just read a 1M-row results file
reported that bench process's 1.2 GB. The bench therefore never loads a whole results file: each contender writes
``--out-format jsonl`` and only the last line (the aggregate) is read. Every contender's whole_note_f1_mean is checked
equal to the anchor's, to the last digit. The 1-minute load average is read before and after each run (the machine
may be shared: the table is only as good as the load it was measured under) and printed with the table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

CONTENDERS = {
    "cli (1 process)": ["--workers", "1"],
    "cli --workers 2": ["--workers", "2"],
    "spark local[2]": ["--engine", "spark", "--spark-master", "local[2]"],
}

_PEAK = ("import runpy, sys; sys.argv = ['goldeval'] + sys.argv[1:];\n"
         "try:\n    runpy.run_module('goldeval', run_name='__main__')\n"
         "finally:\n    hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0].split()[1]\n"
         "    print('PEAK_RSS_KB', hwm, file=sys.stderr)")
TIME = "/usr/bin/time"


def _last_line(path: str) -> bytes:
    """The last line of *path*, read from its end (the results' aggregate line of --out-format jsonl)."""
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        size = fh.tell()
        block = b""
        while size > 0 and block.count(b"\n") < 2:
            step = min(size, 1 << 16)
            size -= step
            fh.seek(size)
            block = fh.read(step) + block
        return block.rstrip(b"\n").rsplit(b"\n", 1)[-1]


def run_one(path: str, extra: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.jsonl")
        cmd = [sys.executable, "-c", _PEAK, "score", path, "--no-store", "-q", "--out", out, "--out-format", "jsonl", *extra]
        timed = os.path.exists(TIME)
        if timed:
            cmd = [TIME, "-v", *cmd]
        load0 = os.getloadavg()[0]
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        load1 = os.getloadavg()[0]
        if p.returncode != 0:
            raise SystemExit(f"{extra}: exit {p.returncode}\n{p.stderr[-2000:]}")
        peak = next(int(line.split()[1]) for line in p.stderr.splitlines() if line.startswith("PEAK_RSS_KB"))
        tree = next((int(line.rsplit(":", 1)[1]) for line in p.stderr.splitlines()
                     if line.strip().startswith("Maximum resident set size")), None) if timed else None
        agg = json.loads(_last_line(out))["aggregate"]
    return {"wall": wall, "peak_mib": peak / 1024, "tree_peak_mib": None if tree is None else tree / 1024,
            "f1": agg["whole_note_f1_mean"], "n": agg["n_rows"], "load": (load0, load1)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+", help="JSONL files, each as PATH or PATH:ROUNDS")
    ap.add_argument("--repeats", type=int, default=3, help="rounds of a file given without :ROUNDS")
    ap.add_argument("--json", default=None, help="also write the raw measurements here")
    args = ap.parse_args()
    raw: dict = {}
    for spec in args.files:
        path, _, rounds = spec.rpartition(":") if spec.rpartition(":")[2].isdigit() else (spec, "", "")
        for r in range(int(rounds) if rounds else args.repeats):
            for name, extra in CONTENDERS.items():  # interleaved: the machine's load falls on every contender alike
                m = run_one(path, extra)
                raw.setdefault(path, {}).setdefault(name, []).append(m)
                print(f"{os.path.basename(path)} round {r + 1} {name}: {m['wall']:.1f} s, driver peak {m['peak_mib']:.0f} MiB, "
                      f"tree peak {m['tree_peak_mib'] or 0:.0f} MiB, load {m['load'][0]:.1f} -> {m['load'][1]:.1f}", flush=True)
    print()
    print("| file | rows | contender | wall median (min–max) | rows/s | ratio to 1 process (min–max) | driver peak RSS | largest process |")
    print("|---|---|---|---|---|---|---|---|")
    for path, by in raw.items():
        anchor = by["cli (1 process)"]
        for name, ms in by.items():
            assert all(m["f1"] == anchor[0]["f1"] for m in ms), f"{name}: a different whole_note_f1_mean"
            walls = [m["wall"] for m in ms]
            ratios = [m["wall"] / a["wall"] for m, a in zip(ms, anchor)]
            n = ms[0]["n"]
            print(f"| {os.path.basename(path)} | {n:,} | {name} | {statistics.median(walls):.1f} s ({min(walls):.1f}–{max(walls):.1f}) "
                  f"| {n / statistics.median(walls):,.0f} | {statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f}) "
                  f"| {statistics.median(m['peak_mib'] for m in ms):.0f} MiB "
                  f"| {statistics.median(m['tree_peak_mib'] or 0 for m in ms):.0f} MiB |")
    loads = [x for by in raw.values() for ms in by.values() for m in ms for x in m["load"]]
    rounds = {os.path.basename(p): len(by["cli (1 process)"]) for p, by in raw.items()}
    print()
    print(f"rounds: {rounds}; 1-minute load average around the runs: median {statistics.median(loads):.1f}, "
          f"{min(loads):.1f}-{max(loads):.1f}")
    if len(raw) >= 2:
        small, big = list(raw)[0], list(raw)[-1]
        print()
        for name in CONTENDERS:
            g = statistics.median(m["wall"] for m in raw[big][name]) / statistics.median(m["wall"] for m in raw[small][name])
            print(f"growth {os.path.basename(small)} -> {os.path.basename(big)}, {name}: x{g:.1f} wall")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(raw, fh, indent=1)


if __name__ == "__main__":
    main()
