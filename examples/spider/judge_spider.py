#!/usr/bin/env python3
"""Judge real text-to-SQL answers (Spider dev, GPT-4) by rule and compare with a Spider-style execution match.

    python examples/spider/judge_spider.py [--data ../shared/data/spider] [--file spider_dinsql-gpt4_cases.jsonl]
                                           [--out spider_judged.json] [--show 8]

Each row's ``pred_sql`` is re-executed read-only on its Spider SQLite database (``goldeval.answers.sql``); the
golden rows come from re-executing ``gold_sql`` the same way (the file's ``gold_rows`` are cut at 200). The golden
asks for an order only when the gold SQL has ORDER BY *and* the question asks for one (sorted, ascending,
descending, alphabetical, "from the oldest"…); Spider's rule is the ORDER BY alone. ``ORDER BY <output column>
LIMIT n`` makes a top-N golden (a valid tie-break passes).

The data are not copied into this repository. Spider (questions, SQL, databases): Yu et al., EMNLP 2018,
CC BY-SA 4.0; predictions: DIN-SQL (MIT), DAIL-SQL (Apache-2.0), GPT-4 outputs — see ``../shared/data/spider/README.md``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parents[2] / "shared" / "data" / "spider"

_ORDER_WORDS = re.compile(
    r"\b(order|ordered|sort|sorted|ascending|descending|alphabetical|alphabetically|ranked|rank"
    r"|from (?:the )?(?:highest|lowest|oldest|youngest|most|least|largest|smallest|biggest|newest|latest|earliest))\b",
    re.IGNORECASE,
)


def golden_spec(row: dict) -> dict:
    """The golden for one Spider row: canonical query, and ordered / top_n read from the gold SQL and question."""
    import sqlglot
    from sqlglot import exp

    golden: dict = {"kind": "value", "canonical_query": row["gold_sql"]}
    try:
        tree = sqlglot.parse_one(row["gold_sql"], read="sqlite")
    except Exception:
        return golden
    order = tree.args.get("order") if isinstance(tree, exp.Select) else None
    limit = tree.args.get("limit") if isinstance(tree, exp.Select) else None
    if order is None:
        return golden
    if limit is not None and isinstance(limit.expression, exp.Literal) and len(order.expressions) == 1:
        key = order.expressions[0]
        key_sql = key.this.sql(dialect="sqlite").lower().replace(" ", "")
        names = [c for c in row["gold_columns"]]
        for i, proj in enumerate(tree.expressions):
            if proj.sql(dialect="sqlite").lower().replace(" ", "") == key_sql or proj.alias_or_name.lower() == key_sql:
                golden["top_n"] = {"n": int(limit.expression.this), "by": names[i], "direction": "desc" if key.args.get("desc") else "asc"}
                break
    if _ORDER_WORDS.search(row["question"]) and limit is None:
        golden["ordered"] = True
    return golden


def main(argv: list[str] | None = None) -> int:
    from goldeval.answers.judge import AnswerConfig, judge_case
    from goldeval.answers.sql import ReadOnlyDatabase
    from goldeval.verdict import pass_rate

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--file", default="spider_dinsql-gpt4_cases.jsonl")
    ap.add_argument("--out", type=Path, default=None, help="write per-case verdicts and the comparison as JSON")
    ap.add_argument("--show", type=int, default=8, help="disagreements to print per kind")
    args = ap.parse_args(argv)
    path = args.data / args.file
    if not path.is_file():
        print(f"{path}: not found. Pass --data with the folder of the Spider files.", file=sys.stderr)
        return 2
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    dbs: dict[str, ReadOnlyDatabase] = {}
    cfg = AnswerConfig(timeout_s=10.0)
    table: Counter = Counter()
    examples: dict[str, list] = defaultdict(list)
    per_case = []
    outcomes = []
    for row in rows:
        db = dbs.get(row["db_id"])
        if db is None:
            db = dbs[row["db_id"]] = ReadOnlyDatabase(args.data / "database" / row["db_id"] / f"{row['db_id']}.sqlite", timeout_s=10.0)
        case = {"id": row["id"], "question": row["question"], "golden": golden_spec(row)}
        res = judge_case(case, {"id": row["id"], "final_query": row["pred_sql"]}, db=db, config=cfg)
        oc = res.outcome
        outcomes.append(oc)
        ours = oc.verdict.verdict if oc.verdict else "unscored"
        if oc.verdict and oc.verdict.needs_human and ours != "needs_human":
            ours = "needs_human"
        spider = "exec_match" if row["exec_match_spider_style"] else "exec_mismatch"
        table[(ours, spider)] += 1
        kind = None
        if ours == "match" and spider == "exec_mismatch":
            kind = "ours match, Spider-style mismatch"
        elif ours == "no_match" and spider == "exec_match":
            kind = "ours no_match, Spider-style match"
        elif ours in ("needs_human", "near_match", "unscored"):
            kind = f"ours {ours}"
        rec = {"id": row["id"], "db_id": row["db_id"], "question": row["question"], "gold_sql": row["gold_sql"],
               "pred_sql": row["pred_sql"], "spider_exec_match": row["exec_match_spider_style"], "ours": ours,
               "why": oc.verdict.why if oc.verdict else oc.reason, "mismatch": oc.verdict.mismatch if oc.verdict else None}
        per_case.append(rec)
        if kind:
            examples[kind].append(rec)
    for db in dbs.values():
        db.close()
    pr = pass_rate(outcomes)
    print(f"{args.file}: {len(rows)} cases")
    print(f"rule judge: match {pr.match}, no_match {pr.no_match}, near_match {pr.near_match}, needs_human {pr.needs_human}, "
          f"unscored {pr.unscored}; pass rate {pr.rate:.4f} (match / decided)")
    spider_n = sum(1 for r in rows if r["exec_match_spider_style"])
    print(f"Spider-style exec match: {spider_n} / {len(rows)} = {spider_n / len(rows):.4f}")
    print("\nours × Spider-style:")
    for (ours, spider), n in sorted(table.items()):
        print(f"  {ours:12s} {spider:14s} {n}")
    for kind, recs in examples.items():
        print(f"\n== {kind}: {len(recs)}")
        for r in recs[: args.show]:
            print(f"- {r['id']} [{r['db_id']}] {r['question']}")
            print(f"    gold: {r['gold_sql']}")
            print(f"    pred: {' '.join(r['pred_sql'].split())}")
            print(f"    why:  {r['why']}")
    if args.out:
        args.out.write_text(json.dumps({"file": args.file, "table": {f"{a}|{b}": n for (a, b), n in table.items()},
                                        "pass_rate": pr.to_dict(), "cases": per_case}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
