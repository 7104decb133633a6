#!/usr/bin/env python3
"""Turn one Spider prediction file into the case and attempt files of ``goldeval judge``, each case naming its
database, so the whole file (343 questions on six databases) is judged by one command:

    python examples/spider/to_cli.py --file spider_dinsql-gpt4_cases.jsonl --out-dir /tmp/spider-din
    goldeval judge /tmp/spider-din/cases.jsonl /tmp/spider-din/attempts.jsonl \\
        --db-dir ../shared/data/spider/database --timeout 10 --out din.json

Cases: ``{"id", "question", "db": <db_id>, "golden": <judge_spider.golden_spec(row)>}``; attempts:
``{"id", "final_query": <pred_sql>, "model"}``. ``--db-dir`` resolves ``concert_singer`` to
``concert_singer/concert_singer.sqlite`` (Spider's layout) and opens each database once. The verdicts are those of
``judge_spider.py`` (which calls the library case by case); ``tests/e2e/test_db_dir.py`` checks they agree.

The data are not copied into this repository. Spider (questions, SQL, databases): Yu et al., EMNLP 2018,
CC BY-SA 4.0; predictions: DIN-SQL (MIT), DAIL-SQL (Apache-2.0), GPT-4 outputs — see ``../shared/data/spider/README.md``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from judge_spider import DEFAULT_DATA, golden_spec  # noqa: E402


def convert(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    """(cases, attempts) for Spider prediction rows."""
    cases = [{"id": r["id"], "question": r["question"], "db": r["db_id"], "golden": golden_spec(r)} for r in rows]
    attempts = [{"id": r["id"], "final_query": r["pred_sql"], "model": r.get("model")} for r in rows]
    return cases, attempts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--file", default="spider_dinsql-gpt4_cases.jsonl")
    ap.add_argument("--out-dir", type=Path, required=True, help="folder for cases.jsonl and attempts.jsonl (created)")
    args = ap.parse_args(argv)
    path = args.data / args.file
    if not path.is_file():
        print(f"{path}: not found. Pass --data with the folder of the Spider files.", file=sys.stderr)
        return 2
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    cases, attempts = convert(rows)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for name, items in (("cases.jsonl", cases), ("attempts.jsonl", attempts)):
        target = args.out_dir / name
        if target.resolve() == path.resolve():
            print(f"{target}: is the input file; choose another --out-dir.", file=sys.stderr)
            return 2
        target.write_text("".join(json.dumps(x) + "\n" for x in items), encoding="utf-8")
    print(f"{len(cases)} cases on {len({c['db'] for c in cases})} databases -> {args.out_dir}/cases.jsonl, attempts.jsonl")
    print(f"goldeval judge {args.out_dir}/cases.jsonl {args.out_dir}/attempts.jsonl --db-dir {args.data / 'database'} --timeout 10")
    return 0


if __name__ == "__main__":
    sys.exit(main())
