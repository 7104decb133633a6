"""Benchmark on real answers: how much of Spider dev (GPT-4 predictions) reaches the LLM judge, and what it costs.

    python benchmarks/bench_llm_judge_spider.py [--data ../shared/data/spider] [--file spider_dinsql-gpt4_cases.jsonl]
                                                [--latency 0.2] [--max-concurrency 16] [--price-in 0.15 --price-out 0.6]

Each row's predicted SQL is re-executed read-only and judged by rule (``goldeval.answers.judge.judge_case``, the
golden built as in ``examples/spider/judge_spider.py``); the cases the rules leave undecided are sent to the LLM
judge — here the loopback fake endpoint with a fixed latency, answering ``match`` — so the figures are the routing
(how many calls), the prompts' real sizes, the wall time at the chosen concurrency against its ideal, and the cost
those prompts would have at the given prices (tokens estimated as characters / 4, the usual rule of thumb for
English and SQL; the fake server's own token counts are not used).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE.parent / "examples" / "spider"))

from fake_openai_server import FakeOpenAI  # noqa: E402

from goldeval.llm import SYSTEM_PROMPT, JudgeConfig, judge_cases  # noqa: E402
from goldeval.llm.wiring import from_answer_materials  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=HERE.parents[1] / "shared" / "data" / "spider")
    ap.add_argument("--file", default="spider_dinsql-gpt4_cases.jsonl")
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--max-concurrency", type=int, default=16)
    ap.add_argument("--price-in", type=float, default=0.15, help="USD per million prompt tokens (default: gpt-4o-mini list price)")
    ap.add_argument("--price-out", type=float, default=0.6, help="USD per million completion tokens")
    args = ap.parse_args()
    path = args.data / args.file
    if not path.is_file():
        print(f"{path}: not found. Pass --data with the folder of the Spider files.", file=sys.stderr)
        return 2
    from judge_spider import golden_spec

    from goldeval.answers.judge import AnswerConfig, judge_case
    from goldeval.answers.sql import ReadOnlyDatabase

    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    t = time.perf_counter()
    dbs: dict[str, ReadOnlyDatabase] = {}
    materials = []
    for row in rows:
        db = dbs.get(row["db_id"])
        if db is None:
            db = dbs[row["db_id"]] = ReadOnlyDatabase(args.data / "database" / row["db_id"] / f"{row['db_id']}.sqlite", timeout_s=10.0)
        case = {"id": row["id"], "question": row["question"], "golden": golden_spec(row)}
        res = judge_case(case, {"id": row["id"], "final_query": row["pred_sql"]}, db=db, config=AnswerConfig(timeout_s=10.0))
        v = res.outcome.verdict
        if v is not None and v.needs_human:
            materials.append(from_answer_materials(res.materials, answer_model=row.get("model")))
    for db in dbs.values():
        db.close()
    rule_s = time.perf_counter() - t

    import openai  # noqa: F401  (one-off import outside the timed run)

    with FakeOpenAI(latency=args.latency) as srv:
        cfg = JudgeConfig(model="bench-judge", base_url=srv.base_url, max_concurrency=args.max_concurrency, timeout=30)
        t = time.perf_counter()
        res = judge_cases(materials, config=cfg)
        llm_s = time.perf_counter() - t
        calls = srv.calls
        prompts = srv.user_prompts()

    n = len(materials)
    sizes = [len(SYSTEM_PROMPT) + len(p) for p in prompts]
    tok_in = [s / 4 for s in sizes]
    out_tokens = 80  # a verdict object with a one-sentence why
    cost = sum(ti * args.price_in + out_tokens * args.price_out for ti in tok_in) / 1e6
    ideal = -(-n // args.max_concurrency) * args.latency if n else 0.0
    print(f"{args.file}: {len(rows)} cases; rule judge {rule_s:.2f} s")
    print(f"sent to the LLM judge (rules undecided): {n} ({n / len(rows):.1%}); HTTP calls {calls}")
    if n:
        print(f"prompt size (system + user): mean {statistics.fmean(sizes):,.0f} chars, max {max(sizes):,} chars "
              f"(~{statistics.fmean(tok_in):,.0f} / {max(tok_in):,.0f} tokens)")
        print(f"estimated cost at ${args.price_in}/M in, ${args.price_out}/M out, {out_tokens} tokens out per call: ${cost:.4f}")
        print(f"LLM stage wall: {llm_s:.2f} s at concurrency {args.max_concurrency}, {args.latency * 1000:.0f} ms per call; "
              f"ideal {ideal:.2f} s; ratio {ideal / llm_s:.2f}")
        print(f"verdicts: {res['aggregate']['counts']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
