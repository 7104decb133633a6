"""Benchmark: the LLM judge's concurrency against a loopback endpoint with a fixed latency per call.

    python benchmarks/bench_llm_judge.py [--cases 200] [--latency 0.2] [--max-concurrency 16]

Anchors measured in the same run:
  * sequential: 10 cases at --max-concurrency 1, scaled to the full count (what one call really costs here:
    the server's latency plus the client's own overhead);
  * ideal: cases × latency / concurrency (perfect overlap, zero overhead).
Prints the concurrent run's wall time, its ratio to the ideal (target ≥ 0.80, i.e. under 5 s for the default
200 × 0.2 s / 16 = 2.5 s ideal), the speed-up over the sequential anchor, and a cached re-run (zero calls).
The openai client is imported before timing (a one-off ~0.5 s at first use, reported separately).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))  # the loopback fake endpoint lives with the tests
sys.path.insert(0, str(HERE.parent / "src"))

from fake_openai_server import FakeOpenAI  # noqa: E402

from goldeval.llm import JudgeCache, JudgeConfig, judge_cases  # noqa: E402


def cases(n: int) -> list[dict]:
    golden = {"kind": "value", "columns": ["ward", "n_admissions"], "rows": [["Cardiology", 12], ["Oncology", 7]]}
    undecided = {"verdict": "needs_human", "confidence": None, "needs_human": True, "why": "ambiguous grain"}
    return [
        {"id": f"b{i}", "question": "Admissions per ward in March?", "golden": golden, "rule": undecided,
         "columns": ["ward", "n"], "rows": [["Cardiology", 12], ["Oncology", i]], "text": f"answer {i}"}
        for i in range(n)
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--max-concurrency", type=int, default=16)
    args = ap.parse_args()

    t = time.perf_counter()
    import openai  # noqa: F401

    import_s = time.perf_counter() - t
    with FakeOpenAI(latency=args.latency) as srv:
        def cfg(conc: int) -> JudgeConfig:
            return JudgeConfig(model="bench-judge", base_url=srv.base_url, max_concurrency=conc, timeout=30)

        judge_cases(cases(2), config=cfg(2))  # warm the connection path
        n_seq = 10
        t = time.perf_counter()
        judge_cases(cases(n_seq), config=cfg(1))
        seq_per_call = (time.perf_counter() - t) / n_seq
        sequential = seq_per_call * args.cases

        with tempfile.TemporaryDirectory() as tmp:
            cache = JudgeCache(Path(tmp) / "cache.db")
            calls0 = srv.calls
            t = time.perf_counter()
            res = judge_cases(cases(args.cases), config=cfg(args.max_concurrency), cache=cache)
            elapsed = time.perf_counter() - t
            calls = srv.calls - calls0
            t = time.perf_counter()
            judge_cases(cases(args.cases), config=cfg(args.max_concurrency), cache=cache)
            cached_s = time.perf_counter() - t
            cached_calls = srv.calls - calls0 - calls

    ideal = args.cases * args.latency / args.max_concurrency
    agg = res["aggregate"]
    print(f"openai import (one-off, untimed below): {import_s:.2f} s")
    print(f"sequential anchor: {seq_per_call * 1000:.1f} ms per call -> {sequential:.1f} s for {args.cases} cases")
    print(f"ideal ({args.cases} x {args.latency * 1000:.0f} ms / {args.max_concurrency}): {ideal:.2f} s")
    print(f"concurrent run: {elapsed:.2f} s, {calls} HTTP calls, max in flight {srv.max_in_flight}, "
          f"p50 {agg['latency_p50_s'] * 1000:.0f} ms, p95 {agg['latency_p95_s'] * 1000:.0f} ms")
    print(f"ratio to ideal (ideal / elapsed): {ideal / elapsed:.2f}  (target >= 0.80)")
    print(f"speed-up over sequential anchor: {sequential / elapsed:.1f}x  (ideal {args.max_concurrency}x)")
    print(f"cached re-run: {cached_s:.2f} s, {cached_calls} HTTP calls")
    print("PASS" if elapsed < 5.0 and ideal / elapsed >= 0.8 and cached_calls == 0 else "FAIL")


if __name__ == "__main__":
    main()
