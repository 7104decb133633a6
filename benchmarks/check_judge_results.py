"""Are `goldeval judge`'s results the same from two trees? The before / after check of the streaming judge (issue 15
item 1): the whole results JSON, `elapsed_sec` and the run block left out, compared as parsed JSON (key order
and layout aside: the streamed file puts one per_example entry a line).

Usage:

    git archive main src | tar -x -C /tmp/old       # the tree to compare against
    python benchmarks/check_judge_results.py --before /tmp/old/src [--n 3000] [--spider ../shared/data/spider]

Sets, each judged by both trees (`goldeval judge CASES ATTEMPTS --out R.json -q`, store on, a fresh GOLDEVAL_HOME):

- mixed: the clinic cases of examples/sql (match, no_match, near_match, needs_human, verified_wrong goldens) against
  arm_a and arm_b, repeated under new ids up to ``--n`` cases, with ``--db examples/sql/clinic.sqlite``; every
  7th attempt dropped (unscored: no attempt), plus rows that fail (not JSON, no id, a repeated id in either
  file, an attempt without a case); and the same files without ``--db`` (queries unscored);
- spider: each Spider prediction file (examples/spider/to_cli.py), ``--db-dir DATA/database --timeout 10``;
- stream: the mixed set with ``--out-format jsonl`` (after only), read back, against the before tree's JSON.

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


def _mixed(out_dir: Path, n: int) -> tuple[Path, Path]:
    cases = [json.loads(x) for x in (EX / "cases.jsonl").read_text().splitlines() if x.strip()]
    arms = [[json.loads(x) for x in (EX / f"arm_{a}.jsonl").read_text().splitlines() if x.strip()] for a in "ab"]
    by_id = [{r["id"]: r for r in arm} for arm in arms]
    c_lines, a_lines = [], []
    k = 0
    while len(c_lines) < n:
        for case in cases:
            arm = by_id[k % 2]
            cid = f"{case['id']}-{k}"
            c_lines.append(json.dumps({**case, "id": cid}))
            att = arm.get(case["id"])
            if att is not None and k % 7 != 3:
                a_lines.append(json.dumps({**att, "id": cid}))
            k += 1
    c_lines[5:5] = ["{not json", json.dumps({"question": "no id"}), c_lines[0]]  # bad JSON, no id, a repeated id
    a_lines[9:9] = ["[1, 2]", a_lines[0], json.dumps({"id": "orphan", "text": "7"})]  # not an object, repeated, orphan
    cp, ap = out_dir / "mixed_cases.jsonl", out_dir / "mixed_attempts.jsonl"
    cp.write_text("\n".join(c_lines) + "\n")
    ap.write_text("\n".join(a_lines) + "\n")
    return cp, ap


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
    ap.add_argument("--n", type=int, default=3000, help="cases of the mixed set")
    ap.add_argument("--spider", type=Path, default=REPO.parent / "shared" / "data" / "spider")
    args = ap.parse_args(argv)
    differ = 0
    with tempfile.TemporaryDirectory() as d:
        work = Path(d)
        cp, atp = _mixed(work, args.n)
        sets = [("mixed --db", [str(cp), str(atp), "--db", str(EX / "clinic.sqlite")]), ("mixed, no --db", [str(cp), str(atp)])]
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
