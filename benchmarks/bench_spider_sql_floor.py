#!/usr/bin/env python3
"""What the SQL alone of a goldeval Spider pass costs against the plain exec-match loop (issue 31 item 5).

    python benchmarks/bench_spider_sql_floor.py [--file spider_dinsql-gpt4_cases.jsonl] [--data ../shared/data/spider]
        [--rounds 9]

``bench_spider_exec_match.py`` compares goldeval's whole judge with the anchor (one read-only ``sqlite3``
connection per database, the gold and the predicted SQL executed, ``fetchall()``, the two results compared as
sorted row multisets). This script asks how much of that ratio is SQL: in one fresh interpreter, after the same
start-up, goldeval's pass (``pipeline.files.judge_file``, as there) is run once with ``ReadOnlyDatabase.execute``
noting every statement it is handed and on which database file (the golden's and the answer's queries, the column
gate's reads, the doubts' probes, the tie pools: everything the judge asks the database). Then, in rounds whose
order alternates, three passes each on new connections (cold: nothing prepared, no page read):

* ``anchor``: the anchor loop over the case file's rows;
* ``plain``: goldeval's statements, in order, on plain ``sqlite3`` connections (``execute`` and ``fetchall``): the
  SQL's own cost, what no Python of the judge can remove;
* ``guarded``: the same statements through ``ReadOnlyDatabase.execute``, the judge's guard (the authorizer, the
  progress handler's time limit, the signals held back, the fetch bounded in rows and bytes).

CPU is ``time.process_time()`` of the pass. Reports the statements' count and, per round, ``plain / anchor`` and
``guarded / anchor`` (median and range): the share of a goldeval / anchor ratio that the SQL takes, so that what is
left for the judge's Python is read off as the whole ratio minus it. Compare ratios, not milliseconds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "examples" / "spider"))

#: argv: src, spider rows (JSONL), cases, attempts, first-case cases, first-case attempts, database folder, rounds.
_CHILD = r"""
import json, sqlite3, statistics, sys, time
src = sys.argv[1]; sys.path.insert(0, src)
import goldeval
assert goldeval.__file__.startswith(src), goldeval.__file__
from goldeval.answers import AnswerConfig, ReadOnlyDatabase
from goldeval.pipeline.files import judge_file
rows = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8") if l.strip()]
dbdir, rounds = sys.argv[7], int(sys.argv[8])
cfg = AnswerConfig(timeout_s=10.0, db_dir=dbdir)
judge_file(sys.argv[5], sys.argv[6], config=cfg)  # start-up, as in bench_spider_exec_match.py
seen = []
execute = ReadOnlyDatabase.execute
def noted(self, sql):
    seen.append((str(self.path), sql))
    return execute(self, sql)
ReadOnlyDatabase.execute = noted
res = judge_file(sys.argv[3], sys.argv[4], config=cfg)
ReadOnlyDatabase.execute = execute
files = sorted({p for p, _ in seen})

def anchor():
    cons = {}
    for r in rows:
        if r["db_id"] not in cons:
            c = cons[r["db_id"]] = sqlite3.connect(f"file:{dbdir}/{r['db_id']}/{r['db_id']}.sqlite?mode=ro", uri=True)
            c.text_factory = lambda b: b.decode(errors="replace")
    t = time.process_time()
    for r in rows:
        con = cons[r["db_id"]]
        try:
            g = con.execute(r["gold_sql"]).fetchall()
            p = con.execute(r["pred_sql"]).fetchall()
        except sqlite3.Error:
            continue
        sorted(g, key=repr) == sorted(p, key=repr)
    return time.process_time() - t

def plain():
    cons = {f: sqlite3.connect("file:" + f + "?mode=ro", uri=True) for f in files}
    t = time.process_time()
    for f, q in seen:
        try:
            cons[f].execute(q).fetchall()
        except sqlite3.Error:
            pass
    return time.process_time() - t

def guarded():
    cons = {f: ReadOnlyDatabase(f, timeout_s=10.0) for f in files}
    t = time.process_time()
    for f, q in seen:
        try:
            cons[f].execute(q)
        except Exception:
            pass
    return time.process_time() - t

out = {"statements": len(seen), "anchor_statements": 2 * len(rows), "plain": [], "guarded": []}
arms = [("anchor", anchor), ("plain", plain), ("guarded", guarded)]
for r in range(rounds):
    got = {name: f() for name, f in (arms if r % 2 == 0 else arms[::-1])}
    out["plain"].append(got["plain"] / got["anchor"])
    out["guarded"].append(got["guarded"] / got["anchor"])
    out.setdefault("anchor_ms", []).append(got["anchor"] / len(rows) * 1e3)
print(json.dumps(out))
"""


def main(argv: list[str] | None = None) -> int:
    import statistics

    from to_cli import convert

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "spider")
    ap.add_argument("--file", default="spider_dinsql-gpt4_cases.jsonl")
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args(argv)
    path = args.data / args.file
    if not path.is_file():
        print(f"{path}: not found. Pass --data with the folder of the Spider files.", file=sys.stderr)
        return 2
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
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
        out = json.loads(subprocess.run([sys.executable, "-c", _CHILD, str(REPO / "src"), *files, str(args.data / "database"),
                                         str(args.rounds)], capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1])
    load.append(os.getloadavg()[0])

    def spread(xs: list[float]) -> str:
        return f"{statistics.median(xs):.2f} ({min(xs):.2f}–{max(xs):.2f})"

    print(f"{args.file}: {len(rows)} rows, {args.rounds} interleaved rounds, load average {load[0]:.2f} before, "
          f"{load[1]:.2f} after; anchor {statistics.median(out['anchor_ms']):.3f} ms a case")
    print(f"  goldeval's statements: {out['statements']} (the anchor's: {out['anchor_statements']})")
    print(f"  plain / anchor:   {spread(out['plain'])}   (goldeval's SQL on plain connections)")
    print(f"  guarded / anchor: {spread(out['guarded'])}   (the same through ReadOnlyDatabase.execute)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
