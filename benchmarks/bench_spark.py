"""Spark engine (local[2]) against the single-process CLI and --workers 2, on make_corpus.py free text.

Usage (after `pip install -e ".[spark]"`, Java 17 on the machine):

    python3 ../shared/bench/make_corpus.py --n 100000 --out /tmp/c100k.jsonl
    python3 ../shared/bench/make_corpus.py --n 1000000 --out /tmp/c1m.jsonl
    python benchmarks/bench_spark.py /tmp/c100k.jsonl /tmp/c1m.jsonl --repeats 3

Each contender is a fresh `goldeval score FILE --no-store --out /dev/null -q` process (Spark's JVM start-up
included, as a user pays it), run interleaved with the others, `--repeats` times per file; the table gives the
median wall time, min–max, rows per second, the ratio to the single-process CLI (the anchor, same file, same
round), and the peak RSS of the driver process (ru_maxrss of the goldeval process itself: for Spark that is the
Python driver, not the JVM or the Python workers, which are reported separately as children's peak). Every
contender's whole_note_f1_mean is checked equal to the anchor's, to the last digit.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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

_PEAK = ("import resource, runpy, sys; sys.argv = ['goldeval'] + sys.argv[1:];\n"
         "try:\n    runpy.run_module('goldeval', run_name='__main__')\n"
         "finally:\n    print('PEAK_RSS_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)")


def run_one(path: str, extra: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        t0 = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        p = subprocess.run([sys.executable, "-c", _PEAK, "score", path, "--no-store", "-q", "--out", out, *extra],
                           capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if p.returncode != 0:
            raise SystemExit(f"{extra}: exit {p.returncode}\n{p.stderr[-2000:]}")
        peak = next(int(line.split()[1]) for line in p.stderr.splitlines() if line.startswith("PEAK_RSS_KB"))
        with open(out) as fh:
            agg = json.load(fh)["aggregate"]
    return {"wall": wall, "peak_mib": peak / 1024, "f1": agg["whole_note_f1_mean"], "n": agg["n_rows"],
            "children_peak_mib": max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", default=None, help="also write the raw measurements here")
    args = ap.parse_args()
    raw: dict = {}
    for path in args.files:
        for r in range(args.repeats):
            for name, extra in CONTENDERS.items():  # interleaved: the machine's load falls on every contender alike
                m = run_one(path, extra)
                raw.setdefault(path, {}).setdefault(name, []).append(m)
                print(f"{os.path.basename(path)} round {r + 1} {name}: {m['wall']:.1f} s, driver peak {m['peak_mib']:.0f} MiB", flush=True)
    print()
    print("| file | rows | contender | wall median (min–max) | rows/s | ratio to 1 process (min–max) | driver peak RSS |")
    print("|---|---|---|---|---|---|---|")
    for path, by in raw.items():
        anchor = by["cli (1 process)"]
        for name, ms in by.items():
            assert all(m["f1"] == anchor[0]["f1"] for m in ms), f"{name}: a different whole_note_f1_mean"
            walls = [m["wall"] for m in ms]
            ratios = [m["wall"] / a["wall"] for m, a in zip(ms, anchor)]
            n = ms[0]["n"]
            print(f"| {os.path.basename(path)} | {n:,} | {name} | {statistics.median(walls):.1f} s ({min(walls):.1f}–{max(walls):.1f}) "
                  f"| {n / statistics.median(walls):,.0f} | {statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f}) "
                  f"| {statistics.median(m['peak_mib'] for m in ms):.0f} MiB |")
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
