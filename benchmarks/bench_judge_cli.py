#!/usr/bin/env python3
"""The judge command on a many-database set, and start-up (issue 15, items 4 and 5).

    python benchmarks/bench_judge_cli.py [--before OLD/src [--python-before PY]] [--rounds 5] [--file spider_dinsql-gpt4_cases.jsonl]

1. One Spider prediction file (343 questions on six databases) in **one** invocation:
   ``goldeval judge cases.jsonl attempts.jsonl --db-dir DATA/database --timeout 10 --no-store -q --out FILE``, the
   files written by ``examples/spider/to_cli.py``'s ``convert`` (each case names its database). Beside it, in the
   same rounds: the same command on the first case alone (start-up, reading, opening one database); the cost per
   case after start-up is ``(full - one) / 342``. With ``--before`` the same two commands run from that tree too
   (its ``src`` first on ``sys.path``), and the verdicts of the two trees are compared case by case.
2. Start-up: ``goldeval --help`` and ``python -c "import goldeval"``, against the anchor ``python -c pass`` (the
   interpreter alone), each a fresh process.

Every command once per round, rounds interleaved (the order alternates); wall seconds and CPU seconds (user +
system of the process, from ``wait4``: less moved by other processes than the wall clock), median (min–max). The
machine is shared: compare ratios, not seconds.
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
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "examples" / "spider"))

#: Runs goldeval's CLI from the tree whose ``src`` is argv[1] (checked), with the remaining arguments.
_RUN = (
    "import sys; src = sys.argv.pop(1); sys.path.insert(0, src)\n"
    "import goldeval\n"
    "assert goldeval.__file__.startswith(src), goldeval.__file__\n"
    "from goldeval.cli import main\n"
    "sys.argv[0] = 'goldeval'\n"
    "main()\n"
)


def _wall(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system of the process, from ``wait4``) of one run of *cmd*."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0  # reaped above
    return time.perf_counter() - t, usage.ru_utime + usage.ru_stime


def _spread(xs: list[float], unit: float = 1.0, fmt: str = ".3f") -> str:
    return f"{statistics.median(xs) * unit:{fmt}} ({min(xs) * unit:{fmt}}–{max(xs) * unit:{fmt}})"


def _verdicts(path: Path) -> dict[str, str]:
    res = json.loads(path.read_text())
    return {c["id"]: c.get("verdict") or c.get("status") for c in res["per_example"]}


def main(argv: list[str] | None = None) -> int:
    from judge_spider import DEFAULT_DATA
    from to_cli import convert

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--file", default="spider_dinsql-gpt4_cases.jsonl")
    ap.add_argument("--before", type=Path, help="the src folder of an older tree, timed in the same rounds")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--python-before", default=sys.executable,
                    help="the interpreter for --before (a venv with other library versions, e.g. sqlglot without sqlglotc)")
    args = ap.parse_args(argv)
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
        db_dir = str(args.data / "database")

        def judge(tree: str, which: str) -> list[str]:
            return [args.python_before if tree == "before" else sys.executable, "-c", _RUN, str(trees[tree]), "judge", str(work / f"{which}_cases.jsonl"),
                    str(work / f"{which}_attempts.jsonl"), "--db-dir", db_dir, "--timeout", "10", "--no-store", "-q",
                    "--out", str(work / f"{tree}_{which}.json")]

        jobs = {f"{t} {w}": judge(t, w) for t in trees for w in ("full", "one")}
        jobs["goldeval --help"] = [sys.executable, "-c", _RUN, str(trees["after"]), "--help"]
        jobs["import goldeval"] = [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(trees['after'])!r}); import goldeval"]
        jobs["python -c pass (anchor)"] = [sys.executable, "-c", "pass"]
        times: dict[str, list[float]] = {k: [] for k in jobs}
        cpu: dict[str, list[float]] = {k: [] for k in jobs}
        for r in range(args.rounds):
            for name in (list(jobs) if r % 2 == 0 else list(jobs)[::-1]):
                wall, used = _wall(jobs[name])
                times[name].append(wall)
                cpu[name].append(used)
        n = len(rows)
        print(f"{args.file}: {n} cases on {len({r['db_id'] for r in rows})} databases, one invocation; "
              f"wall s, median (min–max) of {args.rounds} rounds")
        for t in trees:
            full, one = times[f"{t} full"], times[f"{t} one"]
            per_case = [(f - o) / (n - 1) for f, o in zip(full, one)]
            print(f"  {t:6s}: {n} cases {_spread(full)} s; one case {_spread(one)} s; "
                  f"per case after start-up {_spread(per_case, 1e3, '.2f')} ms")
            full_c, one_c = cpu[f"{t} full"], cpu[f"{t} one"]
            per_case_c = [(f - o) / (n - 1) for f, o in zip(full_c, one_c)]
            print(f"  {t:6s}  CPU (user + system): {n} cases {_spread(full_c)} s; one case {_spread(one_c)} s; "
                  f"per case after start-up {_spread(per_case_c, 1e3, '.2f')} ms")
        if args.before:
            before, after = _verdicts(work / "before_full.json"), _verdicts(work / "after_full.json")
            moved = {k: (before[k], after.get(k)) for k in before if before[k] != after.get(k)}
            print(f"  verdicts before/after: {len(before)} / {len(after)} cases, {len(moved)} differ" + (f": {moved}" if moved else ""))
            ratios = [a / b for a, b in zip(times["after full"], times["before full"])]
            print(f"  after / before, {n} cases: {_spread(ratios, 1, '.2f')}")
            per = {t: [(f - o) for f, o in zip(times[f"{t} full"], times[f"{t} one"])] for t in trees}
            print(f"  after / before, per case after start-up (wall): {_spread([a / b for a, b in zip(per['after'], per['before'])], 1, '.2f')}")
            per = {t: [(f - o) for f, o in zip(cpu[f"{t} full"], cpu[f"{t} one"])] for t in trees}
            print(f"  after / before, per case after start-up (CPU): {_spread([a / b for a, b in zip(per['after'], per['before'])], 1, '.2f')}")
        anchor = times["python -c pass (anchor)"]
        print("start-up (fresh process each):")
        for name in ("goldeval --help", "import goldeval", "python -c pass (anchor)"):
            ratio = [x / a for x, a in zip(times[name], anchor)]
            print(f"  {name:26s} {_spread(times[name])} s  ×{statistics.median(ratio):.1f} the bare interpreter")
    return 0


if __name__ == "__main__":
    sys.exit(main())
