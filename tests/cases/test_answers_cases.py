"""The handed answer_judge cases (../shared/cases) and our own hand-checked ones (answers_hand.jsonl).

Each case states its expected verdict and the reasoning that gave it; the handed ones come from the seed and from
public bug reports of other evaluators (see each case's ``source``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldeval.answers import judge_answer
from conftest import handed_params

HAND = Path(__file__).with_name("answers_hand.jsonl")


def _hand_params():
    rows = [json.loads(line) for line in HAND.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [pytest.param(c, id=c["case_id"]) for c in rows]


def _judge(case: dict):
    i = case["input"]
    return judge_answer(
        i["question"], i["golden"], i["prediction"],
        must_not_use=i.get("must_not_use", []), final_query=i.get("final_query"), rubric=i.get("rubric", []),
    )


def _check(case: dict) -> None:
    v = _judge(case)
    exp = case["expected"]
    assert v.verdict == exp["verdict"], f"{case['case_id']}: {v.verdict} ({v.why}); expected {exp['verdict']}: {case['reasoning']}"
    for key in ("needs_human", "gold_status", "decided_by"):
        if key in exp:
            assert getattr(v, key) == exp[key], f"{case['case_id']}: {key} = {getattr(v, key)!r}, expected {exp[key]!r}"
    for g, p in exp.get("column_pairing", {}).items():
        assert v.column_pairing.get(g) == p, f"{case['case_id']}: {g} paired with {v.column_pairing.get(g)!r}, expected {p!r}"
    if "mismatch_contains" in exp:
        assert exp["mismatch_contains"] in (v.mismatch or "")
    # Every verdict says why, and a needs_human verdict carries its breakdown for the LLM judge.
    assert v.why
    if v.verdict == "needs_human":
        assert v.details.get("undecided_because")


@pytest.mark.parametrize("case", handed_params("answer_judge"))
def test_handed_answer_judge(case):
    _check(case)


@pytest.mark.parametrize("case", _hand_params())
def test_hand_checked_answer_judge(case):
    _check(case)


def test_handed_cases_are_all_loaded():
    # 13 answer_judge cases are handed in ../shared/cases (public_cases.jsonl and seed_answer_judge.jsonl).
    assert len(handed_params("answer_judge")) >= 13
