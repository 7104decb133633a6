#!/usr/bin/env python3
"""Every verdict dict of two trees, compared one by one (issue 15: a faster judge must not move one verdict).

    python benchmarks/judge_identity.py --before /path/to/old/src [--after src] [--python-before PY] [--keep DIR]

Each tree runs in a fresh interpreter with its ``src`` first on ``sys.path`` and dumps, one JSON line per item:

1. the 1,029 Spider rows (three prediction files; ``examples/spider/spider_verdicts.py``'s golden and read-only
   re-execution, the databases opened once each): ``judge_case(...)``'s ``outcome.to_dict()`` (the whole
   ``Verdict.to_dict()``: details, why, doubts, pairing) and its ``materials`` (what an LLM judge is given:
   the golden as filled in by the canonical query, tie rows, the breakdown);
2. the same 1,029 rows through the command, one invocation per prediction file (``goldeval judge cases.jsonl
   attempts.jsonl --db-dir DATA/database --no-store``, the files of ``examples/spider/to_cli.py``): each
   ``per_example`` entry of the results file;
3. every handed ``answer_judge`` case (``../shared/cases/*.jsonl``) and every hand-checked one
   (``tests/cases/answers_hand.jsonl``): ``judge_answer(...).to_dict()``.

The two dumps are compared item by item (``==`` on the parsed JSON); the report gives the count of equal items
and, for each item that differs, the first keys that differ. Exit 0 only when every item is equal and both dumps
hold the same items.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_judge_cli import _RUN  # goldeval's CLI from the tree whose ``src`` is argv[1] (benchmarks/ is on sys.path)

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

_CHILD = r"""
import json, sys
src, spider, data, hand, shared, out = sys.argv[1:7]
sys.path.insert(0, src)
sys.path.insert(1, spider)
import goldeval
assert goldeval.__file__.startswith(src), goldeval.__file__
from pathlib import Path
from spider_verdicts import judged_rows
from goldeval.answers import judge_answer

def plain(x):
    return json.loads(json.dumps(x, sort_keys=True, default=repr))

with open(out, "w", encoding="utf-8") as fh:
    for name, row, res in judged_rows(Path(data)):
        fh.write(json.dumps({"key": f"{name}:{row['id']}", "outcome": plain(res.outcome.to_dict()),
                             "materials": plain(res.materials)}, sort_keys=True) + "\n")
    files = sorted(Path(shared).glob("*.jsonl")) + [Path(hand)]
    for f in files:
        for line in f.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            c = json.loads(line)
            if c.get("scorer", "answer_judge") != "answer_judge":
                continue
            i = c["input"]
            try:
                v = judge_answer(i["question"], i["golden"], i["prediction"], must_not_use=i.get("must_not_use", []),
                                 final_query=i.get("final_query"), rubric=i.get("rubric", []))
                d = plain(v.to_dict())
            except Exception as exc:
                d = {"raised": type(exc).__name__, "message": str(exc)}
            fh.write(json.dumps({"key": f"{f.name}:{c['case_id']}", "outcome": d}, sort_keys=True) + "\n")
"""




def dump(src: Path, out: Path, data: Path, shared: Path, python: str = sys.executable) -> None:
    """Write *src*'s dump to *out* (fresh interpreters of *python*; raises CalledProcessError when one fails)."""
    sys.path.insert(0, str(REPO / "examples" / "spider"))
    from spider_verdicts import FILES
    from to_cli import convert

    subprocess.run([python, "-c", _CHILD, str(src.resolve()), str(REPO / "examples" / "spider"), str(data),
                    str(REPO / "tests" / "cases" / "answers_hand.jsonl"), str(shared), str(out)], check=True)
    with tempfile.TemporaryDirectory() as tmp, out.open("a", encoding="utf-8") as fh:
        for name in FILES:
            rows = [json.loads(x) for x in (data / name).read_text(encoding="utf-8").splitlines() if x.strip()]
            cases, attempts = convert(rows)
            c, a, res = Path(tmp, "cases.jsonl"), Path(tmp, "attempts.jsonl"), Path(tmp, "out.json")
            c.write_text("".join(json.dumps(x) + "\n" for x in cases), encoding="utf-8")
            a.write_text("".join(json.dumps(x) + "\n" for x in attempts), encoding="utf-8")
            subprocess.run([python, "-c", _RUN, str(src.resolve()), "judge", str(c), str(a), "--db-dir",
                            str(data / "database"), "--timeout", "10", "--no-store", "-q", "--out", str(res)],
                           check=False, stdout=subprocess.DEVNULL)
            results = json.loads(res.read_text(encoding="utf-8"))
            for item in results["per_example"]:
                fh.write(json.dumps({"key": f"cli:{name}:{item['id']}", "outcome": item}, sort_keys=True) + "\n")


def _load(path: Path) -> dict[str, dict]:
    return {r["key"]: r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


def _first_diffs(a, b, prefix: str = "", limit: int = 4) -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                out += _first_diffs(a.get(k), b.get(k), f"{prefix}.{k}", limit)
            if len(out) >= limit:
                break
        return out[:limit]
    return [f"{prefix}: {json.dumps(a)[:160]} != {json.dumps(b)[:160]}"]


def compare(before: Path, after: Path) -> tuple[int, list[str]]:
    """(count of equal items, report lines) for two dumps."""
    b, a = _load(before), _load(after)
    lines = []
    if set(a) != set(b):
        lines.append(f"items differ: {len(set(b) - set(a))} only before, {len(set(a) - set(b))} only after")
    equal = 0
    for k in b:
        if k in a and a[k] == b[k]:
            equal += 1
        elif k in a:
            lines.append(f"- {k}: " + "; ".join(_first_diffs(b[k], a[k])))
    def part(test) -> str:
        keys = [k for k in b if test(k)]
        return f"{sum(1 for k in keys if a.get(k) == b[k])} of {len(keys)}"

    lines.insert(0, f"{equal} of {len(b)} items equal (Spider rows, library: {part(lambda k: k.startswith('spider_'))}; "
                    f"Spider rows, goldeval judge --db-dir: {part(lambda k: k.startswith('cli:'))}; handed and "
                    f"hand-checked cases: {part(lambda k: not k.startswith(('spider_', 'cli:')))})")
    return equal, lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, required=True, help="the src folder of the reference tree")
    ap.add_argument("--after", type=Path, default=REPO / "src")
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "spider")
    ap.add_argument("--shared-cases", type=Path, default=REPO.parent / "shared" / "cases")
    ap.add_argument("--python-before", default=sys.executable,
                    help="the interpreter for the reference tree (a venv with other library versions, e.g. sqlglot)")
    ap.add_argument("--keep", type=Path, help="a folder to keep both dumps in (before.jsonl, after.jsonl)")
    args = ap.parse_args(argv)
    if not (args.data / "database").is_dir():
        print(f"{args.data}: no Spider databases there. Pass --data with the folder of the Spider files.", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        where = args.keep or Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        for name, src, python in (("before", args.before, args.python_before), ("after", args.after, sys.executable)):
            dump(src, where / f"{name}.jsonl", args.data, args.shared_cases, python)
        equal, lines = compare(where / "before.jsonl", where / "after.jsonl")
        n = len(_load(where / "before.jsonl"))
    print("\n".join(lines))
    return 0 if equal == n and len(lines) == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
