#!/usr/bin/env python3
"""Spider per case against a plain exec-match loop on the same rows, in one process (issue 31 item 5).

    python benchmarks/bench_spider_exec_match.py [--rounds 6] [--file spider_dinsql-gpt4_cases.jsonl]
        [--data ../shared/data/spider] [--before OLD/src]

The anchor is the loop any Spider user writes: one read-only ``sqlite3`` connection per database, the gold SQL and
the predicted SQL executed, ``fetchall()``, and the two results compared as sorted row multisets (rows sorted by
``repr``; a query that fails is a no-match). goldeval's side is ``goldeval.pipeline.files.judge_file`` on the same
rows (``examples/spider/to_cli.py``'s case and attempt files, databases by ``--db-dir``), the library call behind
``goldeval judge --db-dir``.

Each round is one fresh interpreter per tree with that tree's ``src`` first on ``sys.path``. Start-up first and
not counted: the imports, goldeval's first case judged (its database opened), the anchor's connections opened and
its first row run. Then the anchor's pass and goldeval's pass over every row, each once (goldeval's cold: every
gold query prepared for the first time in that process, as in one ``goldeval judge`` invocation), in an order
that alternates by round. CPU is ``time.process_time()`` plus the children's (``RUSAGE_CHILDREN``: none are
started below 10,000 rows, counted anyway), a case = the pass's CPU / the rows. Memory is the process tree's
peak RSS (``ru_maxrss`` of self and children). Reports per tree the goldeval / anchor ratio per round (median,
range) and of the minima, the ms a case, the load average before and after. Compare ratios, not milliseconds.
``--before`` adds another tree (e.g. main's ``src``) in the same interleaved rounds; ``--gc-freeze`` moves start-up's
objects out of the collector's reach after start-up, as ``goldeval judge`` does before its first case.

``--per-database`` times each database's rows as a pass of its own (goldeval's cold on that database, the
anchor's, their order and the databases' alternating by round) and reports the ratio per database and of the sums.

``--instructions`` counts instead of timing (a figure the machine's load does not move): each side's pass alone,
after the same start-up, under ``valgrind --tool=callgrind`` with collection only inside ``operator.call`` (the
pass is run through it), once per tree and side (``PYTHONHASHSEED=0``; two runs at a time). Reports the
instructions a case of each side and their ratio goldeval / anchor per tree. An instruction count ranks Python
changes; it does not weigh SQLite's and the interpreter's instructions as the CPU does (count_judge_instructions.py).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "examples" / "spider"))

#: argv: src, spider rows (JSONL), cases, attempts, first-case cases, first-case attempts, database folder, anchor
#: first, gc.freeze() after start-up, and (optional) the one side to run inside operator.call (--instructions).
_CHILD = r"""
import gc, json, operator, resource, sys, time
src = sys.argv[1]; sys.path.insert(0, src)
import sqlite3
from collections import Counter
import goldeval
assert goldeval.__file__.startswith(src), goldeval.__file__
from goldeval.answers import AnswerConfig
from goldeval.pipeline.files import judge_file
rows = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8") if l.strip()]
dbdir = sys.argv[7]
cons = {}

def con_of(name):
    c = cons.get(name)
    if c is None:
        c = cons[name] = sqlite3.connect(f"file:{dbdir}/{name}/{name}.sqlite?mode=ro", uri=True)
        c.text_factory = lambda b: b.decode(errors="replace")
    return c

def anchor(rs):
    hits = 0
    for r in rs:
        con = con_of(r["db_id"])
        try:
            g = con.execute(r["gold_sql"]).fetchall()
            p = con.execute(r["pred_sql"]).fetchall()
        except sqlite3.Error:
            continue
        hits += sorted(g, key=repr) == sorted(p, key=repr)
    return hits

def cpu():
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + c.ru_utime + c.ru_stime

cfg = AnswerConfig(timeout_s=10.0, db_dir=dbdir)
judge_file(sys.argv[5], sys.argv[6], config=cfg)  # start-up: imports, the first case's database
for name in sorted({r["db_id"] for r in rows}):
    con_of(name)
anchor(rows[:1])
if sys.argv[9] == "1":
    gc.freeze()  # what `goldeval judge` does at the end of its start-up (cli/judge.py), for both sides
out = {}
if len(sys.argv) > 10 and sys.argv[10].endswith(".json"):  # --per-database: each database's rows as a pass of its own
    parts = json.load(open(sys.argv[10], encoding="utf-8"))
    for part in (parts if sys.argv[8] == "1" else parts[::-1]):
        sub = [json.loads(l) for l in open(part["rows"], encoding="utf-8") if l.strip()]
        for side in (("anchor", "goldeval") if sys.argv[8] == "1" else ("goldeval", "anchor")):
            t = cpu()
            if side == "anchor":
                anchor(sub)
            else:
                judge_file(part["cases"], part["attempts"], config=cfg)
            out.setdefault(part["db"], {})[side] = (cpu() - t) * 1e3
        out[part["db"]]["n"] = len(sub)
    print(json.dumps(out))
    sys.exit(0)
if len(sys.argv) > 10:  # --instructions: this side's pass alone, inside operator.call (valgrind collects only there)
    operator.call(anchor, rows) if sys.argv[10] == "anchor" else operator.call(judge_file, sys.argv[3], sys.argv[4], config=cfg)
    sys.exit(0)
for side in (("anchor", "goldeval") if sys.argv[8] == "1" else ("goldeval", "anchor")):
    t = cpu()
    if side == "anchor":
        out["anchor_matches"] = anchor(rows)
    else:
        res = judge_file(sys.argv[3], sys.argv[4], config=cfg)
        out["goldeval_match"] = res["aggregate"]["match"]
    out[side] = (cpu() - t) / len(rows) * 1e3
rss = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
out["peak_rss_mib"] = rss / 1024
print(json.dumps(out))
"""


def main(argv: list[str] | None = None) -> int:
    from to_cli import convert

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "spider")
    ap.add_argument("--file", default="spider_dinsql-gpt4_cases.jsonl")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--before", type=Path, help="the src folder of another tree, measured in the same rounds")
    ap.add_argument("--gc-freeze", action="store_true",
                    help="gc.freeze() after start-up, as the judge command does before its first case")
    ap.add_argument("--instructions", action="store_true",
                    help="count each side's instructions under valgrind (callgrind) instead of timing the rounds")
    ap.add_argument("--per-database", action="store_true",
                    help="time each database's rows as a pass of its own (anchor and goldeval, order alternating), "
                         "and report the ratio per database and of the sums")
    args = ap.parse_args(argv)
    path = args.data / args.file
    if not path.is_file():
        print(f"{path}: not found. Pass --data with the folder of the Spider files.", file=sys.stderr)
        return 2
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    trees = {"after": REPO / "src"}
    if args.before:
        trees = {"before": args.before.resolve(), **trees}
    res: dict[str, list[dict[str, float]]] = {k: [] for k in trees}
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        for name, subset in (("full", rows), ("one", rows[:1])):
            cases, attempts = convert(subset)
            (work / f"{name}_cases.jsonl").write_text("".join(json.dumps(x) + "\n" for x in cases), encoding="utf-8")
            (work / f"{name}_attempts.jsonl").write_text("".join(json.dumps(x) + "\n" for x in attempts), encoding="utf-8")
        files = [str(work / f) for f in ("rows.jsonl", "full_cases.jsonl", "full_attempts.jsonl", "one_cases.jsonl",
                                          "one_attempts.jsonl")]
        if args.instructions:
            return _instructions(trees, files, args, len(rows))
        if args.per_database:
            return _per_database(trees, files, args, rows, work)
        for r in range(args.rounds):
            for name in (list(trees) if r % 2 == 0 else list(trees)[::-1]):
                out = subprocess.run([sys.executable, "-c", _CHILD, str(trees[name]), *files, str(args.data / "database"),
                                      "1" if r % 2 == 0 else "0", "1" if args.gc_freeze else "0"], capture_output=True, text=True, check=True).stdout
                res[name].append(json.loads(out.strip().splitlines()[-1]))
    load.append(os.getloadavg()[0])
    print(f"{args.file}: {len(rows)} rows, CPU ms a case after start-up (process tree), {args.rounds} interleaved rounds, "
          f"load average {load[0]:.2f} before, {load[1]:.2f} after" + (", gc.freeze() after start-up" if args.gc_freeze else ""))
    for name, xs in res.items():
        ratio = [x["goldeval"] / x["anchor"] for x in xs]
        a, g = [x["anchor"] for x in xs], [x["goldeval"] for x in xs]
        print(f"  {name:6s}: goldeval {statistics.median(g):.3f} ms (min {min(g):.3f}), anchor {statistics.median(a):.3f} ms "
              f"(min {min(a):.3f}); goldeval / anchor per round {statistics.median(ratio):.2f} "
              f"({min(ratio):.2f}–{max(ratio):.2f}), of the minima {min(g) / min(a):.2f}; "
              f"peak RSS {max(x['peak_rss_mib'] for x in xs):.0f} MiB; matches: goldeval {xs[0]['goldeval_match']}, "
              f"anchor {xs[0]['anchor_matches']}")
    return 0



def _per_database(trees: dict[str, Path], files: list[str], args: argparse.Namespace, rows: list[dict[str, Any]],
                  work: Path) -> int:
    """``--per-database``: after the same start-up, each database's rows as a pass of their own, goldeval's cold on
    that database (its first open in the process, as in a run), the anchor's on its connection; the databases'
    order and the two sides' order alternate by round. Reports per tree and database the goldeval / anchor ratio
    per round (median, range), and the same for the sums over the databases ("all")."""
    from to_cli import convert

    parts = []
    for db in sorted({r["db_id"] for r in rows}):
        sub = [r for r in rows if r["db_id"] == db]
        cases, attempts = convert(sub)
        names = {k: work / f"{db}_{k}.jsonl" for k in ("rows", "cases", "attempts")}
        for k, xs in (("rows", sub), ("cases", cases), ("attempts", attempts)):
            names[k].write_text("".join(json.dumps(x) + "\n" for x in xs), encoding="utf-8")
        parts.append({"db": db, **{k: str(v) for k, v in names.items()}})
    manifest = work / "parts.json"
    manifest.write_text(json.dumps(parts), encoding="utf-8")
    res: dict[str, list[dict[str, Any]]] = {k: [] for k in trees}
    load = [os.getloadavg()[0]]
    for r in range(args.rounds):
        for name in (list(trees) if r % 2 == 0 else list(trees)[::-1]):
            out = subprocess.run([sys.executable, "-c", _CHILD, str(trees[name]), *files, str(args.data / "database"),
                                  "1" if r % 2 == 0 else "0", "1" if args.gc_freeze else "0", str(manifest)],
                                 capture_output=True, text=True, check=True).stdout
            res[name].append(json.loads(out.strip().splitlines()[-1]))
    load.append(os.getloadavg()[0])
    print(f"{args.file}: {len(rows)} rows, each database a pass of its own, CPU after start-up, {args.rounds} "
          f"interleaved rounds, load average {load[0]:.2f} before, {load[1]:.2f} after"
          + (", gc.freeze() after start-up" if args.gc_freeze else ""))
    for name, xs in res.items():
        for db in [p["db"] for p in parts] + ["all"]:
            if db == "all":
                g = [sum(x[p["db"]]["goldeval"] for p in parts) for x in xs]
                a = [sum(x[p["db"]]["anchor"] for p in parts) for x in xs]
                n = len(rows)
            else:
                g, a, n = [x[db]["goldeval"] for x in xs], [x[db]["anchor"] for x in xs], xs[0][db]["n"]
            ratio = [gi / ai for gi, ai in zip(g, a)]
            print(f"  {name:6s} {db:30s} {n:4d} rows: goldeval {statistics.median(g) / n:.3f} ms a case, anchor "
                  f"{statistics.median(a) / n:.3f}; goldeval / anchor per round {statistics.median(ratio):.2f} "
                  f"({min(ratio):.2f}–{max(ratio):.2f})")
    return 0


def _instructions(trees: dict[str, Path], files: list[str], args: argparse.Namespace, n: int) -> int:
    """``--instructions``: each tree's anchor and goldeval pass counted alone (see the module docstring)."""
    import shutil
    from concurrent.futures import ThreadPoolExecutor

    sys.path.insert(0, str(HERE))
    from count_judge_instructions import _count

    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind); nothing counted.", file=sys.stderr)
        return 2
    jobs = [(name, side) for name in trees for side in ("anchor", "goldeval")]

    def one(job: tuple[str, str]) -> int:
        name, side = job
        cmd = [sys.executable, "-c", _CHILD, str(trees[name]), *files, str(args.data / "database"), "1",
               "1" if args.gc_freeze else "0", side]
        return _count(cmd, ("--collect-atstart=no", "--toggle-collect=_operator_call"))

    load = os.getloadavg()[0]
    with ThreadPoolExecutor(2) as pool:
        counts = dict(zip(jobs, pool.map(one, jobs)))
    print(f"{args.file}: {n} rows, instructions of each side's pass alone (callgrind), load average {load:.2f} before")
    for name in trees:
        a, g = counts[(name, "anchor")], counts[(name, "goldeval")]
        print(f"  {name:6s}: goldeval {g / n / 1e6:.3f} M a case, anchor {a / n / 1e6:.3f} M a case; goldeval / anchor {g / a:.2f}")
    if "before" in trees:
        print(f"  goldeval after / before: {counts[('after', 'goldeval')] / counts[('before', 'goldeval')]:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
