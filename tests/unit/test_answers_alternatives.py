"""Alternative goldens (``golden.alternatives``): a case with more than one right answer is judged against its
primary golden and each alternative; the best verdict decides (match > near_match > needs_human > no_match; a tie
goes to the primary, then to the lowest index) and ``golden_used`` names the golden that decided.

The database built here, worked by hand: singers (id, name, country, age) 1 Joe France 52, 2 Tim United States 32,
3 Rose France 40, 4 Ann Netherlands 25; songs (title, singer, seconds) You 1 200, Sun 1 400, Dangerous 2 180,
Rain 3 240. So: older than 40 (age > 40) is {Joe}; 40 or older (age >= 40) is {Joe, Rose}; over 30 is {Joe, Tim,
Rose}; the singers' countries are France, United States, France, Netherlands (3 distinct); Joe's songs last
200 + 400 = 600 s = 10 min; the median age of 25, 32, 40, 52 is (32 + 40) / 2 = 36, its low and high medians 32
and 40 (Python's statistics.median_low / median_high), the three readings a "median age" golden may take.

Source: goldeval issue 26, item 5.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from goldeval.answers import AnswerConfig, iter_judged, judge_case, outcome_from_dict
from goldeval.pipeline.files import judge_answer_file, judge_file
from goldeval.answers.sql import ReadOnlyDatabase
from goldeval.verdict import Verdict

OVER_40 = "Which singers are over 40?"
STRICT = "SELECT name FROM singer WHERE age > 40"  # {Joe}
INCLUSIVE = "SELECT name FROM singer WHERE age >= 40"  # {Joe, Rose}: "over 40" read as "40 and over"
COUNTRIES = "Which countries are the singers from?"


def _make_db(path: Path) -> Path:
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, country TEXT, age INTEGER);
        INSERT INTO singer VALUES (1, 'Joe', 'France', 52), (2, 'Tim', 'United States', 32), (3, 'Rose', 'France', 40),
                                  (4, 'Ann', 'Netherlands', 25);
        CREATE TABLE song (title TEXT, singer_id INTEGER REFERENCES singer(singer_id), seconds INTEGER);
        INSERT INTO song VALUES ('You', 1, 200), ('Sun', 1, 400), ('Dangerous', 2, 180), ('Rain', 3, 240);
    """)
    con.commit()
    con.close()
    return path


@pytest.fixture
def db_path(tmp_path):
    return _make_db(tmp_path / "singers.sqlite")


@pytest.fixture
def db(db_path):
    d = ReadOnlyDatabase(db_path)
    yield d
    d.close()


def _judge(db, question, golden, final_query, **kw):
    case = {"id": "c", "question": question, "golden": golden}
    return judge_case(case, {"id": "c", "final_query": final_query}, db=db, config=AnswerConfig(), **kw)


def _jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


# --- which golden decides ---------------------------------------------------------------------------------------

def test_primary_fails_and_the_first_alternative_matches(db):
    golden = {"canonical_query": STRICT, "alternatives": [{"canonical_query": INCLUSIVE}]}
    out = _judge(db, OVER_40, golden, INCLUSIVE).outcome
    v = out.verdict
    # {Joe, Rose} against the primary {Joe}: an extra row, no_match; against the alternative {Joe, Rose}: match.
    assert (v.verdict, v.gold_status, out.golden_used) == ("match", "verified", "alternatives[0]")
    assert v.why.startswith("Against golden.alternatives[0] (the primary golden: no_match): Every golden row (2) is located")
    assert [(g["golden"], g["verdict"]) for g in out.golden_verdicts] == [("primary", "no_match"), ("alternatives[0]", "match")]
    assert "plus 1 extra row(s)" in out.golden_verdicts[0]["why"]
    d = out.to_dict()
    assert d["golden_used"] == "alternatives[0]" and d["golden_verdicts"] == out.golden_verdicts


def test_an_answer_of_the_primary_golden_is_decided_by_the_primary(db):
    golden = {"canonical_query": STRICT, "alternatives": [{"canonical_query": INCLUSIVE}]}
    out = _judge(db, OVER_40, golden, STRICT).outcome
    # {Joe}: the primary's match; the alternative misses Rose (no_match). The why is the primary's own.
    assert (out.verdict.verdict, out.golden_used) == ("match", "primary")
    assert out.verdict.why == "Every golden row (1) is located under the pairing name→name."
    assert [g["verdict"] for g in out.golden_verdicts] == ["match", "no_match"]


def test_an_answer_no_golden_matches_is_the_primary_verdict_and_says_how_many_were_tried(db):
    golden = {"canonical_query": STRICT, "alternatives": [{"canonical_query": INCLUSIVE}]}
    wrong = "SELECT name FROM singer WHERE age > 30"  # {Joe, Tim, Rose}: 2 extra rows for the primary, 1 for the alternative
    out = _judge(db, OVER_40, golden, wrong).outcome
    alone = _judge(db, OVER_40, {"canonical_query": STRICT}, wrong).outcome.verdict  # the primary golden by itself
    v = out.verdict
    assert (v.verdict, v.confidence, v.gold_status, out.golden_used) == (alone.verdict, alone.confidence, alone.gold_status, "primary")
    assert alone.verdict == "no_match"
    assert v.why == (f"{alone.why} Judged against the primary golden: 1 alternative golden tried, none better "
                     "(alternatives[0] no_match).")
    assert v.column_pairing == alone.column_pairing and v.located == alone.located


def test_scalar_value_alternatives_median_readings(db):
    # The median age: 36 (mean of the middle two), or the low / high median 32 / 40 (module docstring).
    golden = {"columns": ["median_age"], "value": 36,
              "alternatives": [{"columns": ["median_age"], "value": 32}, {"columns": ["median_age"], "value": 40}]}
    q = "What is the median age of the singers?"
    high = _judge(db, q, golden, "SELECT age AS median_age FROM singer WHERE name = 'Rose'").outcome  # 40
    assert (high.verdict.verdict, high.golden_used) == ("match", "alternatives[1]")
    assert [g["verdict"] for g in high.golden_verdicts] == ["no_match", "no_match", "match"]
    mean = _judge(db, q, golden, "SELECT (32 + 40) / 2 AS median_age").outcome  # 36
    assert (mean.verdict.verdict, mean.golden_used) == ("match", "primary")
    off = _judge(db, q, golden, "SELECT avg(age) AS median_age FROM singer").outcome  # the mean age, 37.25
    assert (off.verdict.verdict, off.golden_used) == ("no_match", "primary")
    assert off.verdict.why.endswith("Judged against the primary golden: 2 alternative goldens tried, none better "
                                    "(alternatives[0] no_match, alternatives[1] no_match).")


def test_a_scalar_alternative_beside_a_primary_from_its_canonical_query(db):
    # Joe's songs: 600 s (the primary, from its canonical query) or 10 min (the alternative, a value).
    golden = {"canonical_query": "SELECT sum(seconds) FROM song WHERE singer_id = 1",
              "alternatives": [{"columns": ["minutes"], "value": 10}]}
    q = "How long are Joe's songs in total?"
    out = _judge(db, q, golden, "SELECT sum(seconds) / 60.0 AS minutes FROM song WHERE singer_id = 1").outcome
    assert (out.verdict.verdict, out.golden_used) == ("match", "alternatives[0]")
    out = _judge(db, q, golden, "SELECT sum(seconds) FROM song WHERE singer_id = 1").outcome
    assert (out.verdict.verdict, out.golden_used) == ("match", "primary")


def test_a_better_verdict_wins_over_a_lower_index(db):
    # The distinct countries (France, United States, Netherlands) against: the primary, the countries of singers
    # over 40 (France, France: 2 extra rows, no_match); alternative 0, every singer's country (the same rows with
    # France once instead of twice: near_match); alternative 1, the distinct countries (match).
    distinct = "SELECT DISTINCT country FROM singer"
    near_only = {"canonical_query": "SELECT country FROM singer WHERE age > 40",
                 "alternatives": [{"canonical_query": "SELECT country FROM singer"}]}
    out = _judge(db, COUNTRIES, near_only, distinct).outcome
    assert (out.verdict.verdict, out.golden_used) == ("near_match", "alternatives[0]")
    both = {**near_only, "alternatives": [*near_only["alternatives"], {"canonical_query": distinct}]}
    out = _judge(db, COUNTRIES, both, distinct).outcome
    assert (out.verdict.verdict, out.golden_used) == ("match", "alternatives[1]")
    assert [g["verdict"] for g in out.golden_verdicts] == ["no_match", "near_match", "match"]


def test_ties_go_to_the_primary_then_to_the_lowest_index(db):
    distinct = "SELECT DISTINCT country FROM singer"
    typed = {"columns": ["country"], "rows": [["France"], ["United States"], ["Netherlands"]]}  # the same rows, typed in
    out = _judge(db, COUNTRIES, {"canonical_query": distinct, "alternatives": [typed]}, distinct).outcome
    assert ([g["verdict"] for g in out.golden_verdicts], out.golden_used) == (["match", "match"], "primary")
    wrong_primary = {"canonical_query": "SELECT country FROM singer WHERE age > 40",
                     "alternatives": [typed, {"canonical_query": distinct}]}
    out = _judge(db, COUNTRIES, wrong_primary, distinct).outcome
    assert ([g["verdict"] for g in out.golden_verdicts], out.golden_used) == (["no_match", "match", "match"], "alternatives[0]")


def test_needs_human_from_a_doubted_alternative_ranks_above_a_confident_no_match(db):
    # The primary, typed in, holds Joe only: all 4 singers are 3 extra rows (no_match). The alternative's literal
    # 'france' misses the data's 'France' (0 rows as typed, 2 folded): its golden is doubted, so the rule's no_match
    # against it is not final (needs_human), and that outranks the primary's confident no_match.
    golden = {"columns": ["name"], "rows": [["Joe"]],
              "alternatives": [{"canonical_query": "SELECT name FROM singer WHERE country = 'france'"}]}
    out = _judge(db, "Which singers are from France?", golden, "SELECT name FROM singer").outcome
    assert [g["verdict"] for g in out.golden_verdicts] == ["no_match", "needs_human"]
    assert (out.verdict.verdict, out.golden_used, out.verdict.gold_status) == ("needs_human", "alternatives[0]", "verified_wrong")
    assert "'france' holds 0 rows of singer.country" in out.verdict.gold_note


# --- each alternative is checked against the data as the primary is ------------------------------------------------

def test_an_alternative_whose_canonical_query_gives_other_rows_is_suspect(db):
    # Typed-in rows {Joe, Rose} with the strict query, which gives {Joe}: that alternative's golden is suspect.
    wrong = {"columns": ["name"], "rows": [["Joe"], ["Rose"]], "canonical_query": STRICT}
    out = _judge(db, OVER_40, {"canonical_query": STRICT, "alternatives": [wrong]}, INCLUSIVE).outcome
    assert (out.verdict.verdict, out.golden_used) == ("match", "alternatives[0]")
    assert out.verdict.gold_status == "suspect"  # the status of the golden that decided
    assert out.verdict.gold_note.startswith("the canonical query, re-executed, gives other rows")
    assert [g["gold_status"] for g in out.golden_verdicts] == ["verified", "suspect"]
    # The same rows with the query that gives them: verified.
    right = {**wrong, "canonical_query": INCLUSIVE}
    out = _judge(db, OVER_40, {"canonical_query": STRICT, "alternatives": [right]}, INCLUSIVE).outcome
    assert (out.verdict.verdict, out.verdict.gold_status, out.verdict.gold_note) == ("match", "verified", None)


def test_an_alternatives_data_fragile_literal_is_read_as_the_primarys_is(db):
    # 'france' misses 'France': the answer equals the folded result {Joe, Rose}, so the alternative decides with its
    # golden verified_wrong (counted beside the pass rate), exactly as the same golden does when it is the primary.
    fragile = {"canonical_query": "SELECT name FROM singer WHERE country = 'france'"}
    answer = "SELECT name FROM singer WHERE country = 'France'"
    out = _judge(db, "Which singers are from France?", {"columns": ["name"], "rows": [["Joe"]], "alternatives": [fragile]},
                 answer).outcome
    alone = _judge(db, "Which singers are from France?", fragile, answer).outcome.verdict
    assert (alone.verdict, alone.gold_status) == ("match", "verified_wrong")
    assert (out.verdict.verdict, out.verdict.gold_status, out.golden_used) == ("match", "verified_wrong", "alternatives[0]")
    assert out.verdict.gold_note == alone.gold_note


def test_an_alternative_whose_canonical_query_fails_leaves_the_case_unscored(db):
    golden = {"canonical_query": STRICT, "alternatives": [{"canonical_query": "SELECT name FROM singers"}]}
    out = _judge(db, OVER_40, golden, STRICT).outcome
    assert out.status == "unscored" and out.verdict is None
    assert out.reason.startswith("case 'c' golden.alternatives[0]: the golden's canonical_query failed:")
    assert "no such table: singers" in out.reason


# --- malformed alternatives -------------------------------------------------------------------------------------

@pytest.mark.parametrize("alternatives,message", [
    ("Joe", "golden.alternatives: must be a list of goldens"),
    ([{"columns": ["name"], "rows": [["Joe"]]}, 7], "golden.alternatives[1]: must be an object"),
    ([{"columns": ["name"], "rows": "Joe"}], "golden.alternatives[0].rows: must be a list of rows"),
    ([{"columns": "name", "rows": [["Joe"]]}], "golden.alternatives[0].columns: must be a list of column names"),
    ([{"columns": ["name"]}], "golden.alternatives[0]: an alternative golden needs 'rows' (with 'columns'), a 'value' or a 'canonical_query'"),
    ([{"kind": "unanswerable"}], "golden.alternatives[0].kind: an alternative golden is a 'value' golden"),
    ([{"value": 3, "alternatives": [{"value": 4}]}], "golden.alternatives[0].alternatives: an alternative golden holds no alternatives"),
    ([{"canonical_query": 42}], "golden.alternatives[0].canonical_query: must be the SQL text"),
    ([{"columns": ["name", "age"], "rows": [["Joe", 52], ["Rose"]]}], "golden.alternatives[0]: row 2 has 1 cells, expected 2 cells"),
    ([{"columns": ["name"], "rows": [["Joe"]], "order_by": ["age"]}], "golden.alternatives[0]: order_by column must name one of the golden columns ['name']"),
    ([{"columns": ["a", "b"], "value": 3}], "golden.alternatives[0]: a scalar 'value' takes one column name"),
])
def test_a_malformed_alternative_is_unscored_with_its_field_path(db, alternatives, message):
    golden = {"canonical_query": STRICT, "alternatives": alternatives}
    out = _judge(db, OVER_40, golden, STRICT).outcome
    assert out.status == "unscored" and out.verdict is None
    assert out.reason.startswith(f"case 'c' {message}"), out.reason


def test_alternatives_on_a_golden_that_is_not_a_value_golden_are_refused(db):
    golden = {"kind": "criteria", "alternatives": [{"value": 3}]}
    out = _judge(db, OVER_40, golden, STRICT).outcome
    assert out.status == "unscored"
    assert out.reason.startswith("case 'c' golden.alternatives: alternatives are other right answers of a 'value' golden, "
                                 "and this golden's kind is 'criteria'.")


def test_a_malformed_alternative_in_a_case_file_names_its_line_and_the_other_cases_are_scored(tmp_path, db_path):
    cases = _jsonl(tmp_path / "cases.jsonl", [
        {"id": "ok", "question": OVER_40, "golden": {"canonical_query": STRICT, "alternatives": [{"canonical_query": INCLUSIVE}]}},
        {"id": "bad", "question": OVER_40, "golden": {"canonical_query": STRICT,
                                                       "alternatives": [{"canonical_query": INCLUSIVE}, {"columns": ["name"], "rows": {"Joe": 1}}]}},
        {"id": "plain", "question": OVER_40, "golden": {"canonical_query": STRICT}},
    ])
    attempts = _jsonl(tmp_path / "attempts.jsonl", [{"id": i, "final_query": INCLUSIVE} for i in ("ok", "bad", "plain")])
    res = judge_file(cases, attempts, config=AnswerConfig(db=str(db_path)))
    by_id = {c["id"]: c for c in res["per_example"]}
    assert by_id["bad"]["status"] == "unscored"
    assert by_id["bad"]["reason"].startswith("cases.jsonl:2 (id 'bad') golden.alternatives[1].rows: must be a list of rows")
    assert (by_id["ok"]["verdict"], by_id["ok"]["golden_used"]) == ("match", "alternatives[0]")
    assert by_id["plain"]["verdict"] == "no_match" and "golden_used" not in by_id["plain"]
    agg = res["aggregate"]
    assert (agg["match"], agg["no_match"], agg["unscored"], agg["n"], agg["n_failed"]) == (1, 1, 1, 3, 1)


# --- a case without alternatives is judged as before ---------------------------------------------------------------

def test_a_case_without_alternatives_gives_the_record_it_gave_before(db):
    golden = {"canonical_query": STRICT}
    plain = _judge(db, OVER_40, golden, INCLUSIVE)
    # The record holds the id, the status and the verdict's fields, nothing more (no golden_used, no golden_verdicts).
    assert list(plain.outcome.to_dict()) == ["id", "status", *Verdict.__dataclass_fields__]
    # An empty or null alternatives list is no alternative: the same bytes, record and materials.
    for empty in ([], None):
        same = _judge(db, OVER_40, {**golden, "alternatives": empty}, INCLUSIVE)
        assert json.dumps(same.outcome.to_dict()) == json.dumps(plain.outcome.to_dict())
        # (keys sorted: a golden the memory of prepared goldens gives back lists rows_from before rows, one built
        # afresh after them, with or without alternatives)
        assert json.dumps(same.materials, default=str, sort_keys=True) == json.dumps(plain.materials, default=str, sort_keys=True)


# --- every path: the batch, the Python API, a resumed run, replay ------------------------------------------------------

def test_the_batch_and_the_python_api_name_the_golden_that_decided(tmp_path, db_path):
    cases = _jsonl(tmp_path / "cases.jsonl", [
        {"id": "q1", "question": OVER_40, "golden": {"canonical_query": STRICT, "alternatives": [{"canonical_query": INCLUSIVE}]}},
        {"id": "q2", "question": OVER_40, "golden": {"canonical_query": STRICT, "alternatives": [{"canonical_query": INCLUSIVE}]}},
    ])
    attempts = _jsonl(tmp_path / "attempts.jsonl", [{"id": "q1", "final_query": INCLUSIVE}, {"id": "q2", "final_query": STRICT}])
    want = {"q1": ("match", "alternatives[0]"), "q2": ("match", "primary")}
    for res in (judge_file(cases, attempts, config=AnswerConfig(db=str(db_path))),
                judge_answer_file(cases, attempts, config=AnswerConfig(db=str(db_path)))):
        assert {c["id"]: (c["verdict"], c["golden_used"]) for c in res["per_example"]} == want
    got = {r.outcome.id: (r.outcome.verdict.verdict, r.outcome.golden_used)
           for r in iter_judged(cases, attempts, config=AnswerConfig(db=str(db_path)))}
    assert got == want


def test_a_recorded_outcome_keeps_the_golden_that_decided(tmp_path, db_path, db):
    out = _judge(db, OVER_40, {"canonical_query": STRICT, "alternatives": [{"canonical_query": INCLUSIVE}]}, INCLUSIVE).outcome
    again = outcome_from_dict(json.loads(json.dumps(out.to_dict())))  # as a resumed run reads it back from the store
    assert again.to_dict() == out.to_dict() and again.golden_used == "alternatives[0]"


def test_the_run_store_records_and_resumes_the_golden_that_decided(tmp_path, db_path):
    from goldeval.runs.recorder import start_run
    from goldeval.runs.store import RunMeta, RunStore

    cases = _jsonl(tmp_path / "cases.jsonl", [
        {"id": "q1", "question": OVER_40, "golden": {"canonical_query": STRICT, "alternatives": [{"canonical_query": INCLUSIVE}]}}])
    attempts = _jsonl(tmp_path / "attempts.jsonl", [{"id": "q1", "final_query": INCLUSIVE}])
    store = RunStore(tmp_path / "runs.db")
    try:
        meta = RunMeta(run_key="k", scorer_name="answer_judge", scorer_version="1", dataset_hash="d")
        rec = start_run(store, meta, background=False)
        judge_file(cases, attempts, config=AnswerConfig(db=str(db_path)), recorder=rec)
        stored = store.case_map(rec.run_id)["q1"]
        assert (stored["verdict"], stored["golden_used"]) == ("match", "alternatives[0]")
        assert [g["golden"] for g in stored["golden_verdicts"]] == ["primary", "alternatives[0]"]
    finally:
        store.close()


def test_replay_of_a_settled_verdict_on_an_alternative(tmp_path, db_path):
    from goldeval.runs.judges import answer_judge
    from goldeval.runs.regressions import replay

    cases = _jsonl(tmp_path / "cases.jsonl", [
        {"id": "q1", "question": OVER_40, "golden": {"canonical_query": STRICT, "alternatives": [{"canonical_query": INCLUSIVE}]}}])
    settled = _jsonl(tmp_path / "regressions.jsonl", [
        {"id": "q1", "verdict": "match", "answer": {"id": "q1", "final_query": INCLUSIVE}, "reviewer": "ann",
         "note": "40 and over is a fair reading of 'over 40'"}])
    judge, version = answer_judge(db=str(db_path))
    res = replay(settled, cases, judge, judge_version=version)
    assert (res["n_same"], res["n_changed"], res["n_failed"]) == (1, 0, 0)
    # Without the alternative the same settled answer would flip: the replay reads the alternatives.
    _jsonl(cases, [{"id": "q1", "question": OVER_40, "golden": {"canonical_query": STRICT}}])
    res = replay(settled, cases, judge, judge_version=version)
    assert res["n_changed"] == 1 and res["changed"][0]["now"] == "no_match"
