#!/usr/bin/env python3
"""One worker against two, measured only in the machine's quiet moments (issue 31 item 2, on a shared machine).

    python benchmarks/bench_quiet_pairs.py FILE --seconds 900 [--before OLD/src] [--out pairs.jsonl]

Why: on a machine shared with other sessions, Linux's autogroup scheduler gives each session a fair share of the
cores, so while other sessions keep both cores busy a second worker gets no more CPU than one, and the wall ratio of
two workers to one is only their CPU ratio (bench_freetext_scale.py's paired rounds at load 4-7 read 0.87). This
script waits until the CPU idle share over the last 0.5 s (``/proc/stat``) is at least ``--idle`` (0.85), then runs
``goldeval score FILE --workers 1|2 -q --no-store`` of this tree (w1, w2) and, with ``--before``, of that tree (b1, b2),
each a fresh process measured over its whole process tree (``measure.py``), the order reversed every other pair; it
writes one JSON line a pair with the load average before and the idle share just after (a pair with ``idle_after`` <
0.7 was disturbed: leave it out). At the end it prints, over the undisturbed pairs, the median (min-max) of w1 wall /
w2 wall (and b1 / b2).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from measure import measure

HERE = Path(__file__).resolve().parent


def idle_share(dt: float = 0.5) -> float:
    """The share of CPU time spent idle (idle + iowait) over the next *dt* seconds, all CPUs."""
    def snap() -> tuple[int, int]:
        with open("/proc/stat") as fh:
            v = list(map(int, fh.readline().split()[1:]))
        return v[3] + v[4], sum(v)
    a = snap()
    time.sleep(dt)
    b = snap()
    return (b[0] - a[0]) / max(1, b[1] - a[1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", type=Path)
    ap.add_argument("--seconds", type=float, default=900, help="stop starting pairs after this long")
    ap.add_argument("--idle", type=float, default=0.85, help="idle share that starts a pair")
    ap.add_argument("--before", type=Path, default=None, help="another tree's src folder: its b1/b2 arms too")
    ap.add_argument("--out", type=Path, default=Path("quiet_pairs.jsonl"))
    ap.add_argument("--work", type=Path, default=Path("/tmp"))
    args = ap.parse_args(argv)
    trees = {"w": str(HERE.parent / "src")}
    if args.before is not None:
        trees["b"] = str(args.before)
    deadline = time.time() + args.seconds
    pairs: list[dict] = []
    while time.time() < deadline:
        if idle_share() < args.idle:
            continue
        res: dict = {"t": time.strftime("%H:%M:%S"), "load": " ".join(Path("/proc/loadavg").read_text().split()[:3])}
        order = [(t, w) for t in trees for w in ((1, 2) if len(pairs) % 2 == 0 else (2, 1))]
        for tag, w in order:
            env = dict(os.environ, PYTHONPATH=trees[tag])
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            m = measure([sys.executable, "-m", "goldeval", "score", str(args.file), "--workers", str(w), "-q", "--no-store",
                         "--out", str(args.work / f"quiet_{tag}{w}.json")], env)
            if m.exit_code != 0:
                raise SystemExit(f"{tag}{w} failed (exit {m.exit_code})")
            res[f"{tag}{w}"] = [round(m.wall_s, 3), round(m.cpu_s, 3), round(m.largest_rss_mib, 1)]
        res["idle_after"] = round(idle_share(), 2)
        pairs.append(res)
        with open(args.out, "a") as fh:
            fh.write(json.dumps(res) + "\n")
        print(json.dumps(res), flush=True)
    good = [p for p in pairs if p["idle_after"] >= 0.7]
    print(f"{len(good)} undisturbed pairs of {len(pairs)}")
    for tag in trees:
        r = [p[f"{tag}1"][0] / p[f"{tag}2"][0] for p in good]
        if r:
            print(f"{tag}1 wall / {tag}2 wall: {statistics.median(r):.2f} ({min(r):.2f}-{max(r):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
