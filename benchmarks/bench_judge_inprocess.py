#!/usr/bin/env python3
"""The per-case CPU of the judge on one Spider prediction file, in process (issue 15 item 4), two trees interleaved.

    python benchmarks/bench_judge_inprocess.py --before OLD/src [--rounds 8] [--file spider_dinsql-gpt4_cases.jsonl]
        [--before-python OTHER/bin/python]

Each round runs one fresh interpreter per tree (the order alternates), with that tree's ``src`` first on
``sys.path``: it judges the file's first case through ``goldeval.pipeline.files.judge_file`` (imports, the first
database opened: start-up), then all 343 cases once more in a cold pass (every gold query prepared and parsed for
the first time in that process, as in one ``goldeval judge --db-dir`` invocation) and prints the CPU seconds
(``time.process_time``) of that pass alone. What ``bench_judge_cli.py`` computes as ``(343 cases − first case) /
342`` from two processes, measured inside one: less moved by a loaded machine (one process, no start-up
difference), but without the CLI's reading, records and results file. Reports per tree the median, min and max
ms a case, and the after / before ratio per round and of the minima (on a shared machine the minimum is the
round least disturbed). Compare ratios, not milliseconds. ``--before-python`` runs the older tree with another
interpreter (e.g. a venv whose sqlglot is another build), so two environments compare on one tree too.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "examples" / "spider"))

#: argv: src, full cases, full attempts, first-case cases, first-case attempts, database folder.
_CHILD = r"""
import sys, time
src = sys.argv[1]; sys.path.insert(0, src)
import goldeval
assert goldeval.__file__.startswith(src), goldeval.__file__
from goldeval.answers import AnswerConfig
from goldeval.pipeline.files import judge_file
cfg = AnswerConfig(timeout_s=10.0, db_dir=sys.argv[6])
judge_file(sys.argv[4], sys.argv[5], config=cfg)
t = time.process_time()
judge_file(sys.argv[2], sys.argv[3], config=cfg)
print(time.process_time() - t)
"""


def main(argv: list[str] | None = None) -> int:
    from judge_spider import DEFAULT_DATA
    from to_cli import convert

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--file", default="spider_dinsql-gpt4_cases.jsonl")
    ap.add_argument("--before", type=Path, required=True, help="the src folder of the older tree")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--before-python", default=sys.executable,
                    help="the interpreter for the older tree (default: this one); e.g. one whose sqlglot differs")
    args = ap.parse_args(argv)
    rows = [json.loads(line) for line in (args.data / args.file).read_text(encoding="utf-8").splitlines() if line.strip()]
    trees = {"before": args.before.resolve(), "after": REPO / "src"}
    python = {"before": args.before_python, "after": sys.executable}
    res: dict[str, list[float]] = {k: [] for k in trees}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name, subset in (("full", rows), ("one", rows[:1])):
            cases, attempts = convert(subset)
            (work / f"{name}_cases.jsonl").write_text("".join(json.dumps(x) + "\n" for x in cases))
            (work / f"{name}_attempts.jsonl").write_text("".join(json.dumps(x) + "\n" for x in attempts))
        files = [str(work / f) for f in ("full_cases.jsonl", "full_attempts.jsonl", "one_cases.jsonl", "one_attempts.jsonl")]
        for r in range(args.rounds):
            for name in (list(trees) if r % 2 == 0 else list(trees)[::-1]):
                out = subprocess.run([python[name], "-c", _CHILD, str(trees[name]), *files, str(args.data / "database")],
                                     capture_output=True, text=True, check=True).stdout
                res[name].append(float(out.strip().splitlines()[-1]) / len(rows) * 1e3)
    print(f"{args.file}: {len(rows)} cases, a cold pass after the first case, CPU ms a case, {args.rounds} rounds")
    for name, xs in res.items():
        print(f"  {name:6s}: median {statistics.median(xs):.2f} (min {min(xs):.2f}, max {max(xs):.2f})")
    ratio = [a / b for a, b in zip(res["after"], res["before"])]
    print(f"  after / before per round: {statistics.median(ratio):.2f} ({min(ratio):.2f}–{max(ratio):.2f}); "
          f"of the minima: {min(res['after']) / min(res['before']):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
