"""The report model's key of a data-answer case (rubric clauses with their part in the verdict, must_not_use,
coverage) and its filter chips per scorer. The data is hand-written cases judged without a database: q1 a criteria
golden, q2 a value golden with a PREFERRED and an ACCEPT clause that the answer misses (so the rules hold their
no_match open for the LLM judge, ``answer.py``), q3 a must_not_use veto, q4 coverage "derivable", q5 none of these.
"""

from __future__ import annotations

import json
import shutil

from goldeval.answers import AnswerConfig
from goldeval.pipeline.files import judge_file
from goldeval.report.model import ReportOptions, build_model, case_filters
from goldeval.report.sources import load_sources

CASES = [
    {"id": "q1", "question": "Describe how admissions changed.", "golden": {"kind": "criteria"},
     "rubric": ["REQUIRED: names the busiest month", "WRONG: reports a steady decline"]},
    {"id": "q2", "question": "How many emergency admissions in Q1?", "golden": {"columns": ["n"], "rows": [[347]]},
     "rubric": ["PREFERRED: counts by admission date", "ACCEPT: counts by discharge date, if the answer says so"]},
    {"id": "q3", "question": "How many patients over 65?", "golden": {"columns": ["n"], "rows": [[446]]},
     "must_not_use": ["patients.ssn", "Do not identify patients by name."]},
    {"id": "q4", "question": "What share of customers ordered twice?", "golden": {"columns": ["share"], "rows": [[0.31]]},
     "coverage": "derivable"},
    {"id": "q5", "question": "How many wards?", "golden": {"columns": ["n"], "rows": [[6]]}},
]
ATTEMPTS = [
    {"id": "q1", "text": "Admissions declined steadily."},
    {"id": "q2", "columns": ["n"], "rows": [[301]], "text": "Counted by discharge date: 301."},
    {"id": "q3", "final_query": "SELECT COUNT(DISTINCT ssn) AS n FROM patients WHERE age > 65", "columns": ["n"], "rows": [[446]]},
    {"id": "q4", "columns": ["share"], "rows": [[0.31]]},
    {"id": "q5", "columns": ["n"], "rows": [[6]]},
]


def _judged(tmp_path):
    cases, attempts = tmp_path / "cases.jsonl", tmp_path / "attempts.jsonl"
    cases.write_text("".join(json.dumps(c) + "\n" for c in CASES), encoding="utf-8")
    attempts.write_text("".join(json.dumps(a) + "\n" for a in ATTEMPTS), encoding="utf-8")
    return judge_file(cases, attempts, config=AnswerConfig())


def _by_id(model):
    return {c["id"]: c for c in model["cases"]}


def test_each_case_carries_its_key_and_a_case_without_one_none(tmp_path):
    results = _judged(tmp_path)
    cases = _by_id(build_model(results, sources=load_sources(results, None)))
    q1, q2, q3, q4, q5 = (cases[f"q{i}"] for i in range(1, 6))
    # a criteria golden: its clauses, none singled out (the rules judge none of them)
    assert q1["golden_kind"] == "criteria"
    assert [(c["marker"], c["text"], c["fixes"], c["role"]) for c in q1["key"]["rubric"]] == [
        ("REQUIRED", "names the busiest month", "no_match", None), ("WRONG", "reports a steady decline", "no_match", None)]
    # 301 against 347: a no_match the rules hold open, naming ACCEPT/PREFERRED (answer.py) → both clauses marked
    assert q2["verdict"] == "needs_human" and q2["decided_by"] == "rule"
    assert [(c["marker"], c["role"]) for c in q2["key"]["rubric"]] == [("PREFERRED", "held_open"), ("ACCEPT", "held_open")]
    # the veto: the field entry with the use the parsed query showed; the prose entry for the LLM judge
    assert q3["decided_by"] == "must_not_use"
    (field, prose) = q3["key"]["must_not_use"]
    assert (field["entry"], field["kind"]) == ("patients.ssn", "field") and field["used"]
    assert prose == {"entry": "Do not identify patients by name.", "kind": "prose", "used": None}
    assert q4["key"] == {"coverage": {"value": "derivable", "meaning": q4["key"]["coverage"]["meaning"]}}
    assert "build the concept from parts" in q4["key"]["coverage"]["meaning"]
    assert "key" not in q5
    # the raw fields the key was made of are not embedded twice
    assert not {"rubric", "must_not_use", "coverage", "_recorded"} & {k for c in cases.values() for k in c}


def test_the_recorded_clauses_stand_in_when_the_case_file_is_gone(tmp_path):
    results = _judged(tmp_path)
    moved = tmp_path / "moved"
    moved.mkdir()
    shutil.move(tmp_path / "cases.jsonl", moved / "cases.jsonl")
    model = build_model(results, sources=load_sources(results, None))
    q2 = _by_id(model)["q2"]
    assert [(c["marker"], c["text"], c["role"]) for c in q2["key"]["rubric"]] == [
        ("PREFERRED", "counts by admission date", "held_open"), ("ACCEPT", "counts by discharge date, if the answer says so", "held_open")]
    assert q2["key"]["rubric_from"] == "judged record"
    # the criteria golden is still known as one (the record says why the rules held it open)
    assert _by_id(model)["q1"]["golden_kind"] == "criteria"
    assert any("cases" in n for n in model["notes"])


def test_redacted_no_key(tmp_path):
    results = _judged(tmp_path)
    model = build_model(results, sources=None, options=ReportOptions(redact=True))
    assert not any("key" in c or "_recorded" in c for c in model["cases"])


def test_filter_chips_are_the_outcomes_each_scorer_can_produce():
    def keys(*a, **kw):
        return [k for k, _ in case_filters(*a, **kw)]

    assert keys("answers") == ["all", "fail", "pass", "near_match", "needs_human", "unscored", "verified_wrong"]
    assert keys("answers", compare=True)[-1] == "changed"
    assert keys("labels") == ["all", "fail", "pass", "unscored"]
    assert keys("freetext") == ["all", "scored", "unscored"]
    assert keys("freetext", min_f1=0.3) == ["all", "fail", "pass", "unscored"]
    assert keys("generic") == keys("answers")
    assert dict(case_filters("labels"))["fail"] == "failures"


def test_the_model_names_its_chips(tmp_path):
    results = _judged(tmp_path)
    assert build_model(results)["filters"] == case_filters("answers")
