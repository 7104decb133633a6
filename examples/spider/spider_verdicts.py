#!/usr/bin/env python3
"""Per-row rule verdicts over all three Spider prediction sets (1,029 rows), and the diff of two such dumps.

    python examples/spider/spider_verdicts.py dump --out /tmp/spider-before.jsonl [--data ../shared/data/spider]
    python examples/spider/spider_verdicts.py diff /tmp/spider-before.jsonl /tmp/spider-after.jsonl [--markdown]

``dump`` judges every row of the three files exactly as ``judge_spider.py`` does (same golden, same read-only
re-execution) and writes one JSON line per row: ``file``, ``id``, ``verdict`` (``needs_human`` also when a decided
verdict is flagged), ``raw_verdict``, ``confidence``, ``gold_status``, ``gold_note``, ``why``, ``mismatch``, the
judge version, and ``set_equal`` (the predicted rows equal the golden's as a set while their multisets differ:
the multiplicity kind of issue 11). ``diff`` prints the verdict and gold_status counts of both dumps and every
row whose verdict or gold_status changed, with both whys.

Data: Spider (Yu et al., EMNLP 2018, CC BY-SA 4.0) and the published GPT-4 predictions; see
``../shared/data/spider/README.md``. Nothing is copied into this repository.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
DEFAULT_DATA = HERE.parents[2] / "shared" / "data" / "spider"
FILES = ("spider_dinsql-gpt4_cases.jsonl", "spider_dailsql-gpt4_cases.jsonl", "spider_gpt4-zeroshot_cases.jsonl")


def _key(v):
    return json.dumps(v, sort_keys=True, default=str)


def judged_rows(data: Path, files=FILES):
    """Yield ``(file name, Spider row, CaseResult)`` for every row of *files*, in file then row order: the row's
    predicted query re-executed read-only on its database (opened once per database) and judged against its golden
    (``judge_spider.golden_spec``)."""
    from judge_spider import golden_spec

    from goldeval.answers import AnswerConfig, ReadOnlyDatabase, judge_case

    dbs: dict[str, ReadOnlyDatabase] = {}
    cfg = AnswerConfig(timeout_s=10.0)
    try:
        for name in files:
            for line in (data / name).read_text(encoding="utf-8").splitlines():
                if not line.strip():
                    continue
                row = json.loads(line)
                db = dbs.get(row["db_id"])
                if db is None:
                    db = dbs[row["db_id"]] = ReadOnlyDatabase(
                        data / "database" / row["db_id"] / f"{row['db_id']}.sqlite", timeout_s=10.0)
                case = {"id": row["id"], "question": row["question"], "golden": golden_spec(row)}
                yield name, row, judge_case(case, {"id": row["id"], "final_query": row["pred_sql"]}, db=db, config=cfg)
    finally:
        for db in dbs.values():
            db.close()


def judge_rows(data: Path, files=FILES):
    """Yield one record per Spider row (see the module docstring), in file then row order."""
    from goldeval.answers import JUDGE_VERSION

    for name, row, res in judged_rows(data, files):
        oc = res.outcome
        v = oc.verdict
        ours = v.verdict if v else "unscored"
        if v and v.needs_human and ours != "needs_human":
            ours = "needs_human"
        set_equal = None
        if not row["gold_rows_truncated"] and not row["pred_rows_truncated"] and row["pred_error"] is None:
            g = [_key(r) for r in row["gold_rows"]]
            p = [_key(r) for r in row["pred_rows"]]
            set_equal = set(g) == set(p) and Counter(g) != Counter(p)
        yield {"file": name, "id": row["id"], "db_id": row["db_id"], "question": row["question"],
               "verdict": ours, "raw_verdict": v.verdict if v else None,
               "confidence": v.confidence if v else None, "gold_status": v.gold_status if v else None,
               "gold_note": v.gold_note if v else None, "why": v.why if v else oc.reason,
               "mismatch": v.mismatch if v else None, "set_equal": set_equal,
               "judge_version": JUDGE_VERSION}


def _counts(recs, field):
    return Counter(r[field] for r in recs)


def diff(before: list[dict], after: list[dict], *, markdown: bool = False) -> str:
    """A report of the counts of two dumps and each row whose verdict or gold_status changed."""
    out = []
    b = {(r["file"], r["id"]): r for r in before}
    a = {(r["file"], r["id"]): r for r in after}
    if set(a) != set(b):
        out.append(f"rows differ: {len(set(b) - set(a))} only before, {len(set(a) - set(b))} only after")
    for field in ("verdict", "gold_status"):
        cb, ca = _counts(before, field), _counts(after, field)
        keys = sorted(set(cb) | set(ca), key=str)
        out.append(f"{field}: " + ", ".join(f"{k} {cb.get(k, 0)} -> {ca.get(k, 0)}" for k in keys))
    changed = [(k, b[k], a[k]) for k in b if k in a
               and (b[k]["verdict"], b[k]["gold_status"]) != (a[k]["verdict"], a[k]["gold_status"])]
    out.append(f"changed: {len(changed)}")
    for (f, i), rb, ra in changed:
        short = f.replace("spider_", "").replace("_cases.jsonl", "")
        if markdown:
            out.append(f"| {i} | {short} | {rb['verdict']} ({rb['gold_status']}) | {ra['verdict']} ({ra['gold_status']}) "
                       f"| {(ra['why'] or '').replace('|', '/')} |")
        else:
            out.append(f"- {i} [{short}] {rb['verdict']}/{rb['gold_status']} -> {ra['verdict']}/{ra['gold_status']}: {ra['question']}")
            out.append(f"    before: {rb['why']}")
            out.append(f"    after:  {ra['why']}" + (f"  [gold_note: {ra['gold_note']}]" if ra.get("gold_note") else ""))
    bad = [r for r in after if r["verdict"] == "no_match" and r.get("set_equal")
           and "question fixes" not in (r["why"] or "")]
    out.append(f"no_match rows equal to their golden as a set, why not saying the question fixes the multiplicity: {len(bad)}")
    for r in bad:
        out.append(f"  ! {r['id']} [{r['file']}] {r['why']}")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--data", type=Path, default=DEFAULT_DATA)
    d.add_argument("--out", type=Path, required=True)
    c = sub.add_parser("diff")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    c.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    if args.cmd == "dump":
        if not (args.data / FILES[0]).is_file():
            print(f"{args.data}: no Spider files there. Pass --data with the folder of the Spider files.", file=sys.stderr)
            return 2
        recs = list(judge_rows(args.data))
        tmp = args.out.with_name(args.out.name + ".tmp")
        tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding="utf-8")
        tmp.replace(args.out)
        print(f"{len(recs)} rows -> {args.out}", file=sys.stderr)
        print("verdict: " + ", ".join(f"{k} {n}" for k, n in sorted(_counts(recs, 'verdict').items(), key=str)))
        print("gold_status: " + ", ".join(f"{k} {n}" for k, n in sorted(_counts(recs, 'gold_status').items(), key=str)))
        return 0
    load = lambda p: [json.loads(x) for x in p.read_text(encoding="utf-8").splitlines() if x.strip()]  # noqa: E731
    print(diff(load(args.before), load(args.after), markdown=args.markdown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
