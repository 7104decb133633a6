#!/usr/bin/env python3
"""The rule judge before and after a change, in one run: interleaved, medians, ratios (after / before).

    python benchmarks/bench_answers_ab.py --before /path/to/old/checkout [--after .] [--rounds 5] [--rows 100000]

Each round runs, for each tree in turn (before, after, alternating which goes first), in a fresh interpreter with
that tree's ``src`` first on ``sys.path``:

1. ``judge_answer`` on the 1e5-row × 10-column shuffled table of ``bench_answers.py`` (names kept), CPU seconds;
2. the 1,029 Spider rows (``examples/spider/spider_verdicts.py``: re-execution + judging), CPU seconds;
3. with ``--near-misses N``: each near miss of ``bench_answers.py`` (``NEAR_MISSES``, 10 columns) at N rows, CPU
   seconds, and its verdict and why (which must not change).

The machine is shared: the report gives the median of each and its min-max, and the ratio of medians.
The before tree needs ``src/goldeval`` (a ``git worktree add /tmp/before <commit>`` is enough; its compiled
``_fast`` module is not needed by the judge).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

_CHILD = r"""
import json, sys, time
sys.path.insert(0, {src!r})
sys.path.insert(1, {bench!r})
sys.path.insert(2, {spider!r})
import goldeval
assert goldeval.__file__.startswith({src!r}), goldeval.__file__
from bench_answers import make_table, shuffled
from goldeval.answers import judge_answer, JUDGE_VERSION
names, rows = make_table({rows}, 10, seed=1)
pn, pr = shuffled(names, rows, seed=2, rename=False)
golden = {{"kind": "value", "columns": names, "rows": rows}}
t = time.process_time()
v = judge_answer("q", golden, {{"columns": pn, "rows": pr}})
table = time.process_time() - t
from spider_verdicts import judge_rows, DEFAULT_DATA
t = time.process_time()
n = sum(1 for _ in judge_rows(DEFAULT_DATA))
spider = time.process_time() - t
near = {{}}
if {near}:
    from bench_answers import NEAR_MISSES
    for label, make in NEAR_MISSES.items():
        gn, gr, pn, pr = make({near}, 10, seed=1)
        t = time.process_time()
        nv = judge_answer("q", {{"kind": "value", "columns": gn, "rows": gr}}, {{"columns": pn, "rows": pr}})
        near[label] = [time.process_time() - t, nv.verdict, nv.why]
print(json.dumps({{"version": JUDGE_VERSION, "table_s": table, "verdict": v.verdict, "spider_s": spider, "spider_rows": n,
                  "near": near}}))
"""


def run(tree: Path, rows: int, near: int = 0) -> dict:
    code = _CHILD.format(src=str(tree / "src"), bench=str(HERE), spider=str(HERE.parent / "examples" / "spider"), rows=rows,
                         near=near)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, required=True)
    ap.add_argument("--after", type=Path, default=HERE.parent)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--near-misses", type=int, default=0, metavar="N", help="also time the near misses at N rows")
    args = ap.parse_args(argv)
    got: dict[str, list[dict]] = {"before": [], "after": []}
    for i in range(args.rounds):
        order = ("before", "after") if i % 2 == 0 else ("after", "before")
        for which in order:
            got[which].append(run(getattr(args, which).resolve(), args.rows, args.near_misses))
    for key, label in (("table_s", f"judge_answer, {args.rows:,} × 10 (CPU s)"), ("spider_s", "Spider 1,029 rows (CPU s)")):
        b = [r[key] for r in got["before"]]
        a = [r[key] for r in got["after"]]
        mb, ma = statistics.median(b), statistics.median(a)
        print(f"{label}: before {mb:.3f} [{min(b):.3f}-{max(b):.3f}] ({got['before'][0]['version']}), "
              f"after {ma:.3f} [{min(a):.3f}-{max(a):.3f}] ({got['after'][0]['version']}); after/before {ma / mb:.2f}")
    for label in got["after"][0]["near"]:
        b = [r["near"][label][0] for r in got["before"]]
        a = [r["near"][label][0] for r in got["after"]]
        mb, ma = statistics.median(b), statistics.median(a)
        same = got["before"][0]["near"][label][1:] == got["after"][0]["near"][label][1:]
        print(f"{label}, {args.near_misses:,} × 10 (CPU s): before {mb:.3f} [{min(b):.3f}-{max(b):.3f}], after {ma:.3f} "
              f"[{min(a):.3f}-{max(a):.3f}]; before/after {mb / ma:.1f}; verdict and why {'unchanged' if same else 'CHANGED'} "
              f"({got['after'][0]['near'][label][1]})")
    print(f"verdicts: before {got['before'][0]['verdict']}, after {got['after'][0]['verdict']}; rounds {args.rounds}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
