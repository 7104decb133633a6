#!/usr/bin/env python3
"""Instructions a case of the judge command costs on one Spider prediction file, counted by Valgrind (issue 15,
item 4): a figure these noisy machines do not move.

    python benchmarks/count_judge_instructions.py [--before OLD/src] [--file spider_dinsql-gpt4_cases.jsonl] [--jobs 2]

The command is ``bench_judge_cli.py``'s: ``goldeval judge cases.jsonl attempts.jsonl --db-dir DATA/database
--timeout 10 --no-store -q --out FILE`` on the whole file (343 cases) and on its first case alone, each run once under
``valgrind --tool=callgrind``, which counts the instructions the process executes (the interpreter, SQLite, NumPy,
every thread: all of it). The cost of a case after start-up is ``(whole file - first case) / (cases - 1)``, in
millions of instructions; with ``--before`` the older tree (its ``src`` first on ``sys.path``) is counted too and the
ratio after / before printed. ``PYTHONHASHSEED=0`` makes the runs repeat; what still varies (thread wake-ups, the
time-limit callback) moves the figure by about 2 %.

An instruction count is a proxy: it ranks changes to Python code well, but not changes of build. sqlglot's
compiled parser (``sqlglot[c]``) runs 14 % fewer instructions on this file and is no faster in CPU seconds.
Confirm a gain with ``bench_judge_cli.py`` or ``bench_judge_inprocess.py`` before calling it one.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "examples" / "spider"))
sys.path.insert(0, str(HERE))

from bench_judge_cli import _RUN  # noqa: E402  (runs goldeval's CLI from a given src)

_REFS = re.compile(r"refs:\s+([\d,]+)")


def _count(cmd: list[str], valgrind_options: tuple[str, ...] = ()) -> int:
    """Instructions valgrind counts for one run of *cmd* (the whole process, unless *valgrind_options* narrow the
    collection, as count_judge_pass.py's do)."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *valgrind_options, *cmd],
                          capture_output=True, text=True, env=env)
    m = _REFS.search(proc.stderr)
    if proc.returncode != 0 or m is None:
        raise SystemExit(f"valgrind run failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr[-2000:]}")
    return int(m.group(1).replace(",", ""))


def main(argv: list[str] | None = None) -> int:
    from judge_spider import DEFAULT_DATA
    from to_cli import convert

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--file", default="spider_dinsql-gpt4_cases.jsonl")
    ap.add_argument("--before", type=Path, help="the src folder of an older tree, counted too")
    ap.add_argument("--python-before", default=sys.executable, help="the interpreter for --before")
    ap.add_argument("--jobs", type=int, default=2, help="valgrind runs at once (each is single-threaded)")
    args = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind); nothing counted.", file=sys.stderr)
        return 2
    rows = [json.loads(line) for line in (args.data / args.file).read_text(encoding="utf-8").splitlines() if line.strip()]
    trees = {"after": REPO / "src"}
    if args.before:
        trees = {"before": args.before.resolve(), **trees}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name, subset in (("full", rows), ("one", rows[:1])):
            cases, attempts = convert(subset)
            (work / f"{name}_cases.jsonl").write_text("".join(json.dumps(x) + "\n" for x in cases))
            (work / f"{name}_attempts.jsonl").write_text("".join(json.dumps(x) + "\n" for x in attempts))
        jobs = {}
        for tree, src in trees.items():
            py = args.python_before if tree == "before" else sys.executable
            for which in ("full", "one"):
                jobs[(tree, which)] = [py, "-c", _RUN, str(src), "judge", str(work / f"{which}_cases.jsonl"),
                                       str(work / f"{which}_attempts.jsonl"), "--db-dir", str(args.data / "database"),
                                       "--timeout", "10", "--no-store", "-q", "--out", str(work / f"{tree}_{which}.json")]
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            counts = dict(zip(jobs, pool.map(_count, jobs.values())))
    n = len(rows)
    print(f"{args.file}: {n} cases, instructions (valgrind callgrind), millions")
    per = {}
    for tree in trees:
        full, one = counts[(tree, "full")], counts[(tree, "one")]
        per[tree] = (full - one) / (n - 1)
        print(f"  {tree:6s}: whole file {full / 1e6:,.0f}; first case {one / 1e6:,.0f}; a case after start-up {per[tree] / 1e6:.3f}")
    if args.before:
        print(f"  after / before, a case after start-up: {per['after'] / per['before']:.3f}; "
              f"start-up: {counts[('after', 'one')] / counts[('before', 'one')]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
