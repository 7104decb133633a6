#!/usr/bin/env python3
"""Memory and speed of `goldeval score` and `goldeval labels` on short-row corpora, before and after streaming
(issue 15), with anchors measured in the same run, interleaved, medians and min-max of --repeat runs.

    python benchmarks/bench_streaming.py --before /path/to/old/src [--sizes 10000,1000000] [--repeat 3]

``--before`` is the ``src`` folder of the version to compare with (e.g. ``git archive 3e24824 | tar -x -C /tmp/base``
plus a copy of the built ``_fast`` extension); "after" is the installed goldeval. Corpora come from
``make_short_corpus.py`` (written once into ``--work``).

Rows printed:
1. ``goldeval score FILE --out /dev/null`` (``--no-store`` and with a fresh store): peak RSS of the largest process
   (``benchmarks/measure.py``), wall seconds. Anchor: a SQuAD-style scorer (the SQuAD v1.1 script's normalisation
   and ``f1_score``, from ``benchmarks/squad.py``, streaming the file, running sums) in its own process. Before
   issue 31 this anchor built its punctuation set once per character, about 10× slower than the real script: the
   ratios printed before then overstate goldeval.
2. ``goldeval labels FILE --positive label003 --out /dev/null``: same measures. Anchor: scikit-learn's
   ``precision_recall_fscore_support`` and ``cohen_kappa_score`` on the file's labels (read with orjson) in its
   own process.
Ratios are anchor / goldeval for time (> 1: goldeval faster).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from measure import measure as tree_measure
from squad import SQUAD_FUNCTIONS

HERE = Path(__file__).resolve().parent

SQUAD = SQUAD_FUNCTIONS + r'''
import sys, orjson
total = n = 0
with open(sys.argv[1], "rb") as fh:
    for line in fh:
        row = orjson.loads(line)
        total += f1_score(row["prediction"], row["reference"]); n += 1
print(total / n)
'''

SKLEARN = r'''
import sys, orjson
from sklearn.metrics import cohen_kappa_score, precision_recall_fscore_support
gold, pred = [], []
with open(sys.argv[1], "rb") as fh:
    for line in fh:
        row = orjson.loads(line)
        gold.append(row["gold"]); pred.append(row["pred"])
print(precision_recall_fscore_support(gold, pred, labels=["label003"], average=None)[:3], cohen_kappa_score(gold, pred))
'''


def measure(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MiB of the largest process of the tree, exit code) of one command
    (:func:`measure.measure`: every descendant waited for, a forkserver's workers and the store's writer too)."""
    m = tree_measure(argv, env)
    return m.wall_s, m.largest_rss_mib, m.exit_code


def summary(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}–{max(values):.2f})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, required=True, help="src folder of the version to compare with")
    ap.add_argument("--sizes", default="10000,1000000")
    ap.add_argument("--label-rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "goldeval-bench-streaming")
    ap.add_argument("--score-args", default="", help="extra arguments of every `goldeval score` run, e.g. '--workers 1'")
    ap.add_argument("--no-labels", action="store_true", help="leave out the labels rows")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",")]
    corpora = {}
    for n in sizes:
        p = args.work / f"short_{n}.jsonl"
        if not p.exists():
            subprocess.run([sys.executable, str(HERE / "make_short_corpus.py"), "--n", str(n), "--out", str(p)], check=True)
        corpora[n] = p
    labels = args.work / f"labels_{args.label_rows}.jsonl"
    if not labels.exists() and not args.no_labels:
        subprocess.run([sys.executable, str(HERE / "make_short_corpus.py"), "--labels", "--n", str(args.label_rows),
                        "--out", str(labels)], check=True)
    squad = args.work / "squad_anchor.py"
    squad.write_text(SQUAD)
    skl = args.work / "sklearn_anchor.py"
    skl.write_text(SKLEARN)
    base_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    before_env = {**base_env, "PYTHONPATH": str(args.before)}
    ge = [sys.executable, "-m", "goldeval"]

    def store_args(tag: str, store: bool) -> list[str]:
        if not store:
            return ["--no-store"]
        db = args.work / f"store-{tag}-{time.monotonic_ns()}.db"
        return ["--store", str(db)]

    jobs: list[tuple[str, list[str], dict[str, str] | None, bool]] = []
    for n, p in corpora.items():
        for store in (False, True):
            s = "store" if store else "no-store"
            extra = args.score_args.split()
            jobs.append((f"score {n:,} {s} before", [*ge, "score", str(p), "--out", os.devnull, "-q", *extra], before_env, store))
            jobs.append((f"score {n:,} {s} after", [*ge, "score", str(p), "--out", os.devnull, "-q", *extra], base_env, store))
        jobs.append((f"score {n:,} anchor SQuAD-style", [sys.executable, str(squad), str(p)], base_env, None))
    for store in (False, True) if not args.no_labels else ():
        s = "store" if store else "no-store"
        cmd = [*ge, "labels", str(labels), "--positive", "label003", "--out", os.devnull]
        jobs.append((f"labels {args.label_rows:,} {s} before", cmd, before_env, store))
        jobs.append((f"labels {args.label_rows:,} {s} after", cmd, base_env, store))
    if not args.no_labels:
        jobs.append((f"labels {args.label_rows:,} anchor sklearn", [sys.executable, str(skl), str(labels)], base_env, None))

    results: dict[str, list[tuple[float, float]]] = {name: [] for name, *_ in jobs}
    for _ in range(args.repeat):  # interleaved: every job once per round
        for name, cmd, env, store in jobs:
            full = cmd + (store_args(name.replace(" ", "_"), store) if store is not None else [])
            wall, mib, code = measure(full, env or base_env)
            if code not in (0, 1):
                print(f"{name}: exit {code}", file=sys.stderr)
            results[name].append((wall, mib))
    print(f"{'run':44s} {'wall s: median (min–max)':>28s} {'peak RSS MiB: median (min–max)':>32s}")
    for name, vals in results.items():
        print(f"{name:44s} {summary([v[0] for v in vals]):>28s} {summary([v[1] for v in vals]):>32s}")
    for key in results:
        if key.endswith(" after"):
            before = key[:-6] + " before"
            anchor = next(k for k in results if k.startswith(key.split()[0] + " " + key.split()[1]) and "anchor" in k)
            a = [v[0] for v in results[anchor]]
            t = [v[0] for v in results[key]]
            b = [v[0] for v in results[before]]
            print(f"{key[:-6]:38s} anchor/after time {statistics.median(a) / statistics.median(t):.2f}× "
                  f"({min(a) / max(t):.2f}–{max(a) / min(t):.2f}); before/after time "
                  f"{statistics.median(b) / statistics.median(t):.2f}×; RSS before/after "
                  f"{statistics.median([v[1] for v in results[before]]) / statistics.median([v[1] for v in results[key]]):.1f}×")
    return 0


if __name__ == "__main__":
    sys.exit(main())
