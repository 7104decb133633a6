"""``goldeval replay --llm``: settled verdicts the rules cannot decide are re-judged by the LLM judge (loopback
server), through the cache."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from fake_openai_server import FakeOpenAI, Reply

from goldeval.cli import main

pytest.importorskip("openai")

CASES = [
    {"id": "c1", "question": "Explain why March admissions rose.", "golden": {"kind": "criteria"},
     "rubric": ["REQUIRED: names the flu outbreak"]},
    {"id": "c2", "question": "Admissions per ward in March?",
     "golden": {"kind": "value", "columns": ["ward", "n"], "rows": [["Cardiology", 12], ["Oncology", 7]]}},
]
REGRESSIONS = [
    # settled match by a person; the LLM judge (scripted below) now says no_match -> a change
    {"id": "c1", "answer": {"id": "c1", "text": "Admissions rose because of the flu outbreak."}, "verdict": "match",
     "reviewer": "ana", "judge_version": "0.9"},
    # decided by rule (every golden row is there): never sent to the LLM
    {"id": "c2", "answer": {"id": "c2", "columns": ["ward", "n"], "rows": [["Oncology", 7], ["Cardiology", 12]]},
     "verdict": "match", "reviewer": "bo"},
]


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def test_replay_with_the_llm_judge(tmp_path, monkeypatch):
    monkeypatch.setenv("GOLDEVAL_HOME", str(tmp_path / "home"))  # the judge cache lives there
    cases = write(tmp_path / "cases.jsonl", CASES)
    reg = write(tmp_path / "judge-regressions.jsonl", REGRESSIONS)
    no_match = Reply(content='{"verdict": "no_match", "confidence": 8, "why": "The flu outbreak is not named as the cause."}')
    with FakeOpenAI(default=lambda req: no_match) as srv:
        args = ["replay", reg, "--cases", cases, "--llm", "judge-model", "--base-url", srv.base_url]
        res = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "r.json")], catch_exceptions=False)
        assert res.exit_code == 1, res.output
        assert srv.calls == 1  # only the case the rules could not decide
        out = json.loads((tmp_path / "r.json").read_text())
        assert out["same"] == ["c2"]
        assert [(c["id"], c["settled"], c["now"]) for c in out["changed"]] == [("c1", "match", "no_match")]
        assert "LLM judge" in out["judge_version"] and "judge-model" in out["judge_version"]
        again = CliRunner().invoke(main, args, catch_exceptions=False)
        assert again.exit_code == 1 and srv.calls == 1  # replaying an unchanged judge costs no call (cache)
    # a replay judges each settled case once, one at a time, and reports no cost: those options are not offered
    for option in ("--dry-run", "--repeat", "--llm-send", "--max-concurrency", "--price-in", "--price-out"):
        bad = CliRunner().invoke(main, [*args, option, *([] if option == "--dry-run" else ["1"])])
        assert bad.exit_code == 2 and f"No such option '{option}'" in bad.output, (option, bad.output)
    assert "--dry-run" not in CliRunner().invoke(main, ["replay", "--help"]).output
