"""The batch judge: joining cases and attempts, re-execution, unscored cases, the results object, the recorder hook,
and the materials handed to the LLM judge."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from goldeval.answers import AnswerConfig, llm_materials
from goldeval.pipeline.files import judge_file
from goldeval.errors import InputError


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    p = tmp_path / "w.sqlite"
    con = sqlite3.connect(p)
    con.execute("CREATE TABLE wards (name TEXT, beds INTEGER)")
    con.executemany("INSERT INTO wards VALUES (?, ?)", [("Cardiology", 30), ("Oncology", 24), ("Surgery", 40)])
    con.commit()
    con.close()
    return p


CASES = [
    {"id": "beds", "question": "Beds per ward?", "golden": {"kind": "value", "columns": ["ward", "beds"],
                                                             "rows": [["Cardiology", 30], ["Oncology", 24], ["Surgery", 40]]}},
    {"id": "total", "question": "Total beds?", "golden": {"kind": "value", "columns": ["total_beds"],
                                                           "canonical_query": "SELECT SUM(beds) FROM wards"}},
    {"id": "fails", "question": "Beds in Oncology?", "golden": {"kind": "value", "columns": ["beds"], "rows": [[24]]}},
    {"id": "trend", "question": "Describe the beds.", "golden": {"kind": "criteria"}, "rubric": ["REQUIRED: names the largest ward"]},
    {"id": "noattempt", "question": "?", "golden": {"kind": "value", "columns": ["x"], "rows": [[1]]}},
]
ATTEMPTS = [
    # The reported rows are wrong; the query is right: with --db the executed rows are judged, never the reported ones.
    {"id": "beds", "final_query": "SELECT beds AS n_beds, name AS ward FROM wards", "columns": ["ward", "beds"], "rows": [["Cardiology", 1]]},
    {"id": "total", "final_query": "SELECT SUM(beds) AS total_beds FROM wards"},
    {"id": "fails", "final_query": "SELECT bedz FROM wards WHERE name = 'Oncology'"},
    {"id": "trend", "text": "Surgery is the largest ward."},
    {"id": "orphan", "text": "no case has this id"},
]


def test_batch_with_db(tmp_path: Path, db: Path) -> None:
    cases = _jsonl(tmp_path / "cases.jsonl", CASES)
    attempts = _jsonl(tmp_path / "attempts.jsonl", ATTEMPTS)
    res = judge_file(cases, attempts, config=AnswerConfig(db=str(db)), keep_materials=True)
    by_id = {c["id"]: c for c in res["per_example"]}
    assert [c["id"] for c in res["per_example"]] == ["beds", "total", "fails", "trend", "noattempt"]
    assert by_id["beds"]["verdict"] == "match" and by_id["beds"]["details"]["prediction_source"] == "executed"
    # The canonical query filled in the golden (30 + 24 + 40 = 94), and the attempt's SUM matches it.
    assert by_id["total"]["verdict"] == "match"
    assert by_id["fails"]["status"] == "unscored" and "no such column: bedz" in by_id["fails"]["reason"]
    assert by_id["fails"]["raw"] == ATTEMPTS[2]["final_query"]
    assert by_id["trend"]["verdict"] == "needs_human"
    assert by_id["noattempt"]["status"] == "unscored" and "no attempt" in by_id["noattempt"]["reason"]
    assert any("orphan" in f["error"] for f in res["failures"])
    agg = res["aggregate"]
    # match 2 (beds, total) / decided 2; needs_human 1; unscored 2 (fails, noattempt).
    assert (agg["pass_rate"], agg["match"], agg["no_match"], agg["needs_human"], agg["unscored"]) == (1.0, 2, 0, 1, 2)
    assert (agg["n"], agg["n_scored"], agg["n_failed"]) == (5, 3, 2)
    assert agg["undefined"] == {}
    assert res["scorer"]["name"] == "answer_judge" and res["inputs"]["db_sha256"]
    # Materials for the LLM judge: the undecided case, with everything a judge prompt needs.
    (m,) = res["llm_materials"]
    assert m["id"] == "trend" and m["rule"]["verdict"] == "needs_human"
    assert set(m) >= {"question", "golden", "prediction", "rubric", "must_not_use_prose", "text", "final_query", "breakdown"}


def test_without_db_reported_rows_are_judged(tmp_path: Path) -> None:
    cases = _jsonl(tmp_path / "cases.jsonl", CASES[:1])
    attempts = _jsonl(tmp_path / "attempts.jsonl", ATTEMPTS[:1])
    res = judge_file(cases, attempts)
    (case,) = res["per_example"]
    assert case["verdict"] == "no_match" and case["details"]["prediction_source"] == "reported"


def test_nothing_decided_is_undefined(tmp_path: Path) -> None:
    cases = _jsonl(tmp_path / "cases.jsonl", [CASES[3]])
    attempts = _jsonl(tmp_path / "attempts.jsonl", [ATTEMPTS[3]])
    agg = judge_file(cases, attempts)["aggregate"]
    assert agg["pass_rate"] == 0.0 and "pass_rate" in agg["undefined"]


def test_malformed_golden_is_unscored_with_the_fix(tmp_path: Path) -> None:
    cases = _jsonl(tmp_path / "cases.jsonl", [{"id": "a", "question": "?", "golden": {"kind": "value", "columns": ["x"], "rows": [[1, 2]]}}])
    attempts = _jsonl(tmp_path / "attempts.jsonl", [{"id": "a", "columns": ["x"], "rows": [[1]]}])
    (case,) = judge_file(cases, attempts)["per_example"]
    assert case["status"] == "unscored" and "row 1 has 2 cells, expected 1 cells" in case["reason"]


def test_missing_file_is_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        judge_file(tmp_path / "nope.jsonl", tmp_path / "nope2.jsonl")


class FakeRecorder:
    def __init__(self, previous: dict):
        self._previous = previous
        self.records: list[dict] = []
        self.finished: dict | None = None

    def previous(self) -> dict:
        return self._previous

    def record(self, case: dict) -> None:
        self.records.append(case)

    def finish(self, results: dict) -> None:
        self.finished = results


def test_recorder_reuses_previous_cases(tmp_path: Path, db: Path) -> None:
    cases = _jsonl(tmp_path / "cases.jsonl", CASES[:2])
    attempts = _jsonl(tmp_path / "attempts.jsonl", ATTEMPTS[:2])
    first = FakeRecorder({})
    full = judge_file(cases, attempts, config=AnswerConfig(db=str(db)), recorder=first)
    assert [r["id"] for r in first.records] == ["beds", "total"] and first.finished is full
    # Resume: "beds" is already recorded, so only "total" is judged again; the reused outcome is kept as recorded.
    again = FakeRecorder({"beds": first.records[0]})
    res = judge_file(cases, attempts, config=AnswerConfig(db=str(db)), recorder=again)
    assert [r["id"] for r in again.records] == ["total"]
    assert res["per_example"][0] == first.records[0]


def test_llm_materials_function(tmp_path: Path, db: Path) -> None:
    cases = _jsonl(tmp_path / "cases.jsonl", CASES)
    attempts = _jsonl(tmp_path / "attempts.jsonl", ATTEMPTS)
    mats = llm_materials(cases, attempts, config=AnswerConfig(db=str(db)))
    assert [m["id"] for m in mats] == ["trend"]
    everything = llm_materials(cases, attempts, config=AnswerConfig(db=str(db)), only_undecided=False)
    beds = next(m for m in everything if m["id"] == "beds")
    assert beds["prediction"]["source"] == "executed" and beds["prediction"]["row_count"] == 3


def test_divergent_clause_on_a_tie_break_goes_to_the_llm_judge():
    from goldeval.answers import judge_answer

    golden = {"kind": "value", "columns": ["site", "n"], "rows": [["A", 50], ["B", 40]], "top_n": {"n": 2, "by": "n", "direction": "desc"}}
    pred = {"columns": ["site", "n"], "rows": [["A", 50], ["C", 40]]}
    assert judge_answer("top 2 sites", golden, pred).verdict == "match"   # a valid tie-break
    v = judge_answer("top 2 sites", golden, pred, rubric=["DIVERGENT: picks Site C for second place"])
    assert v.verdict == "needs_human" and v.details["rule_verdict"]["verdict"] == "match"


def test_duckdb_file_is_judged(tmp_path: Path) -> None:
    duckdb = pytest.importorskip("duckdb")
    p = tmp_path / "w.duckdb"
    con = duckdb.connect(str(p))
    con.execute("CREATE TABLE wards AS SELECT * FROM (VALUES ('Cardiology', 30), ('Oncology', 24)) t(name, beds)")
    con.close()
    cases = _jsonl(tmp_path / "cases.jsonl", [
        {"id": "a", "question": "Beds?", "golden": {"kind": "value", "columns": ["ward", "beds"], "canonical_query": "SELECT name, beds FROM wards"},
         "must_not_use": ["wards.secret"]},
    ])
    attempts = _jsonl(tmp_path / "attempts.jsonl", [{"id": "a", "final_query": "SELECT beds, name AS ward FROM wards ORDER BY beds"}])
    (case,) = judge_file(cases, attempts, config=AnswerConfig(db=str(p)))["per_example"]
    assert case["verdict"] == "match" and case["details"]["prediction_source"] == "executed"
