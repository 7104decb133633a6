"""Are `goldeval judge`'s results the same from two trees? The before / after check of the streaming judge (issue 15
item 1): the whole results JSON, `elapsed_sec` and the run block left out, compared as parsed JSON (key order
and layout aside: the streamed file puts one per_example entry a line).

Usage:

    git archive main src | tar -x -C /tmp/old       # the tree to compare against
    python benchmarks/check_judge_results.py --before /tmp/old/src [--n 3000] [--spider ../shared/data/spider]

Sets, each judged by both trees (`goldeval judge CASES ATTEMPTS --out R.json -q`, store on, a fresh GOLDEVAL_HOME):

- reported answers (``--n``, default 3,000): the clinic goldens of examples/sql with reported rows, values changed,
  text, queries without a database, missing attempts (match, no_match, needs_human, unscored; see
  :func:`_reported`), plus rows that fail in both files (not JSON, no id, a repeated id, an attempt without a case);
- clinic --db (``--n-db``, default 220; each case re-executes two queries): the clinic cases against arm_a and
  arm_b, ``--db examples/sql/clinic.sqlite``, every 7th attempt dropped, the same failing rows;
- spider: each Spider prediction file (examples/spider/to_cli.py), ``--db-dir DATA/database --timeout 10``;
- stream: the first set with ``--out-format jsonl`` (after only), read back, against the before tree's JSON.

Prints one line per set (IDENTICAL or the keys that differ) and exits 1 when any set differs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EX = REPO / "examples" / "sql"


def _read(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def _with_failures(out_dir: Path, stem: str, c_lines: list[str], a_lines: list[str]) -> tuple[Path, Path]:
    """Write the two files with rows that fail: bad JSON, no id and a repeated id among the cases; a line that is
    not an object, a repeated id and an attempt without a case among the attempts."""
    c_lines[5:5] = ["{not json", json.dumps({"question": "no id"}), c_lines[0]]
    a_lines[9:9] = ["[1, 2]", a_lines[0], json.dumps({"id": "orphan", "text": "7"})]
    cp, ap = out_dir / f"{stem}_cases.jsonl", out_dir / f"{stem}_attempts.jsonl"
    cp.write_text("\n".join(c_lines) + "\n")
    ap.write_text("\n".join(a_lines) + "\n")
    return cp, ap


def _clinic(out_dir: Path, n: int) -> tuple[Path, Path]:
    """The clinic cases against arm_a and arm_b (queries, re-executed with --db), repeated under new ids up to *n*
    cases; every 7th attempt dropped."""
    cases = _read(EX / "cases.jsonl")
    arms = [{r["id"]: r for r in _read(EX / f"arm_{a}.jsonl")} for a in "ab"]
    c_lines, a_lines = [], []
    for k in range(n):
        case = cases[k % len(cases)]
        cid = f"{case['id']}-{k}"
        c_lines.append(json.dumps({**case, "id": cid}))
        att = arms[(k // len(cases)) % 2].get(case["id"])
        if att is not None and k % 7 != 3:
            a_lines.append(json.dumps({**att, "id": cid}))
    return _with_failures(out_dir, "clinic", c_lines, a_lines)


def _reported(out_dir: Path, n: int) -> tuple[Path, Path]:
    """*n* cases from the clinic goldens (canonical queries dropped: nothing to run) with reported answers, by
    k % 6: the golden rows (match), one number changed (no_match), the arm's query (unscored without a
    database), no attempt (unscored), the first cell as text, the rows of another case (no_match); the criteria
    golden gives needs_human, the unanswerable one a refusal check."""
    cases = _read(EX / "cases.jsonl")
    arm = {r["id"]: r for r in _read(EX / "arm_a.jsonl")}
    c_lines, a_lines = [], []
    for k in range(n):
        case = cases[k % len(cases)]
        golden = {key: v for key, v in case["golden"].items() if key not in ("canonical_query", "rows_from")}
        cid = f"{case['id']}-{k}"
        c_lines.append(json.dumps({**case, "id": cid, "golden": golden}))
        rows = golden.get("rows") or [[None]]
        cols = golden.get("columns") or ["answer"]
        v = k % 6
        if v == 0:
            att = {"columns": cols, "rows": rows}
        elif v == 1:
            changed = [list(r) for r in rows]
            last = changed[0][-1]
            changed[0][-1] = last + 1 if isinstance(last, (int, float)) and not isinstance(last, bool) else f"{last}x"
            att = {"columns": cols, "rows": changed}
        elif v == 2:
            att = {"final_query": arm.get(case["id"], {}).get("final_query", "SELECT 1")}
        elif v == 3:
            continue
        elif v == 4:
            att = {"text": f"The answer is {rows[0][0]}."}
        else:
            other = (cases[(k + 1) % len(cases)]["golden"])
            att = {"columns": other.get("columns") or ["x"], "rows": other.get("rows") or [[1]]}
        a_lines.append(json.dumps({"id": cid, **att}))
    return _with_failures(out_dir, "reported", c_lines, a_lines)


def _load(path: Path) -> dict:
    text = path.read_text()
    try:
        return json.loads(text)
    except json.JSONDecodeError:  # --out-format jsonl
        lines = [json.loads(x) for x in text.splitlines() if x.strip()]
        return {**lines[-1], "per_example": lines[:-1]}


def _clean(r: dict) -> dict:
    r = {k: v for k, v in r.items() if k not in ("elapsed_sec", "run")}
    if isinstance(r.get("aggregate"), dict):
        r["aggregate"] = {k: v for k, v in r["aggregate"].items() if k != "elapsed_sec"}
    return r


def _judge(src: Path | None, args: list[str], out: Path, home: Path) -> int:
    env = {**os.environ, "GOLDEVAL_HOME": str(home)}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    p = subprocess.run([sys.executable, "-m", "goldeval", "judge", *args, "--out", str(out), "-q"], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode not in (0, 1):
        raise SystemExit(f"judge {' '.join(args)} ({src or 'this tree'}): exit {p.returncode}\n{p.stderr[-2000:]}")
    return p.returncode


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, required=True, help="the src folder of the tree to compare against")
    ap.add_argument("--n", type=int, default=3000, help="cases of the reported-answers set")
    ap.add_argument("--n-db", type=int, default=220, help="cases of the clinic set (re-executed on clinic.sqlite)")
    ap.add_argument("--spider", type=Path, default=REPO.parent / "shared" / "data" / "spider")
    args = ap.parse_args(argv)
    differ = 0
    with tempfile.TemporaryDirectory() as d:
        work = Path(d)
        rp, rap = _reported(work, args.n)
        cp, cap = _clinic(work, args.n_db)
        sets = [("reported answers", [str(rp), str(rap)]),
                ("clinic --db", [str(cp), str(cap), "--db", str(EX / "clinic.sqlite")])]
        for f in sorted(args.spider.glob("spider_*_cases.jsonl")):
            sd = work / f.stem
            subprocess.run([sys.executable, str(REPO / "examples" / "spider" / "to_cli.py"), "--data", str(args.spider),
                            "--file", f.name, "--out-dir", str(sd)], check=True, stdout=subprocess.DEVNULL)
            sets.append((f"spider {f.stem}", [str(sd / "cases.jsonl"), str(sd / "attempts.jsonl"), "--db-dir",
                                              str(args.spider / "database"), "--timeout", "10"]))
        for i, (name, jargs) in enumerate(sets):
            before, after = work / f"b{i}.json", work / f"a{i}.json"
            codes = (_judge(args.before.resolve(), jargs, before, work / f"hb{i}"), _judge(None, jargs, after, work / f"ha{i}"))
            extra = []
            if i == 0:  # the streamed jsonl form too
                jl = work / f"a{i}.jsonl"
                codes += (_judge(None, [*jargs, "--out-format", "jsonl"], jl, work / f"hj{i}"),)
                extra.append(jl)
            b = _clean(_load(before))
            bad = [k for other in [after, *extra] for k in sorted(set(b) | set(_clean(_load(other))))
                   if b.get(k) != _clean(_load(other)).get(k)]
            same_codes = len(set(codes)) == 1
            n = len(b.get("per_example") or [])
            agg = b.get("aggregate", {})
            line = (f"{name}: {n} cases (match {agg.get('match')}, no_match {agg.get('no_match')}, needs_human "
                    f"{agg.get('needs_human')}, unscored {agg.get('unscored')}, row failures {agg.get('n_row_failures')}), exit {codes}: ")
            if bad or not same_codes:
                differ += 1
                print(line + f"DIFFER in {sorted(set(bad))}" + ("" if same_codes else " (exit codes)"))
            else:
                print(line + "IDENTICAL")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
