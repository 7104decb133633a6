"""The probes of issue 26's golden doubts (a literal that misses the data, a data-fragile golden, a direction that
runs against the question) cost nothing on a match: they run only when golden and prediction disagree (or when
both found nothing), and a disagreeing case still gets every doubt. Every SQL statement SQLite runs is seen through
``sqlite3.Connection.set_trace_callback``. The small database is made here; every count is read off its rows.
"""

from __future__ import annotations

import sqlite3

import pytest

from goldeval.answers import AnswerConfig, ReadOnlyDatabase, judge_case


@pytest.fixture
def db(tmp_path):
    # 'Asia' stored twice as written and once lower-case with a trailing space; singers aged 19, 25 and 41.
    path = tmp_path / "w.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE country (name TEXT, continent TEXT)")
    con.executemany("INSERT INTO country VALUES (?, ?)", [
        ("Afghanistan", "Asia"), ("China", "Asia"), ("Japan", "asia "), ("France", "Europe")])
    con.execute("CREATE TABLE singer (name TEXT, age INTEGER)")
    con.executemany("INSERT INTO singer VALUES (?, ?)", [("Ann", 19), ("Bo", 25), ("Cy", 41)])
    con.commit()
    con.close()
    d = ReadOnlyDatabase(path)
    yield d
    d.close()


def _judged(db, question, canonical, final_query):
    """The verdict of one case, and every statement SQLite ran for it (the connection's trace callback: it sees the
    golden's query, the answer's, and any probe, whichever code path sends it)."""
    ran: list[str] = []
    db._conn.set_trace_callback(ran.append)  # the open sqlite3 connection: the one place every statement passes
    try:
        case = {"id": "c", "question": question, "golden": {"kind": "value", "canonical_query": canonical}}
        v = judge_case(case, {"id": "c", "final_query": final_query}, db=db, config=AnswerConfig()).outcome.verdict
    finally:
        db._conn.set_trace_callback(None)
    return v, ran


# The golden compares continent = 'Asia' (Afghanistan, China); folded it keeps Japan ('asia ') too: a fragile golden.
ASIA = "SELECT name FROM country WHERE continent = 'Asia'"
# "youngest" asks for the least age; the golden takes MAX: a direction against the question.
YOUNGEST = ("How old is the youngest singer?", "SELECT max(age) FROM singer")


@pytest.mark.parametrize("question, canonical, final_query", [
    ("Which countries are in Asia?", ASIA, "SELECT c.name FROM country AS c WHERE c.continent = 'Asia'"),
    (*YOUNGEST, "SELECT max(s.age) FROM singer AS s"),
])
def test_a_matching_case_runs_no_probe(db, question, canonical, final_query):
    v, ran = _judged(db, question, canonical, final_query)
    assert v.verdict == "match" and v.gold_status == "verified"
    # Only the golden's canonical query and the answer's query ran: no literal count, no column read for the gate,
    # no re-run of the folded query, no reversed query.
    assert ran == [canonical, final_query]


def test_a_disagreeing_case_with_a_bad_literal_still_gets_its_doubt(db):
    # 'asia' holds 0 rows as typed (the golden is empty), 3 trimmed and case-folded (Afghanistan, China, Japan); the
    # answer's 'Asia' gives Afghanistan and China: no_match by rule, so the probes run. Folded, the golden gives
    # three countries, not the answer's two: the golden is verified_wrong (its literal empties it) and a no_match
    # against it is not final.
    canonical = "SELECT name FROM country WHERE continent = 'asia'"
    v, ran = _judged(db, "Which countries are in Asia?", canonical, ASIA)
    assert v.verdict == "needs_human" and v.details["rule_verdict"]["verdict"] == "no_match"
    assert v.gold_status == "verified_wrong"
    assert "'asia' holds 0 rows of country.continent, 3 trimmed and case-folded" in v.gold_note
    assert len(ran) > 2  # the probes ran besides the two queries
    # The same golden again, with another disagreeing answer: the doubts are remembered for this database.
    v2, ran2 = _judged(db, "Asian countries?", canonical, "SELECT name FROM country WHERE continent = 'Europe'")
    assert v2.gold_status == "verified_wrong" and v2.gold_note == v.gold_note
    assert ran2 == ["SELECT name FROM country WHERE continent = 'Europe'"]


def test_a_disagreeing_case_whose_answer_is_the_folded_reading_matches_it(db):
    # The answer trims and folds: Afghanistan, China, Japan, the folded golden's rows (ASIA gives two).
    v, _ = _judged(db, "Which countries are in Asia?", ASIA,
                   "SELECT name FROM country WHERE lower(trim(continent)) = 'asia'")
    assert v.verdict == "match" and v.gold_status == "verified_wrong"
    assert v.details["rule_verdict"]["verdict"] == "no_match"


def test_a_disagreeing_case_with_a_healthy_golden_is_not_doubted(db):
    # 'Europe' is stored once, as written (France); the answer's 'Asia' disagrees. The probes run and find nothing:
    # a confident no_match against a verified golden.
    v, ran = _judged(db, "Which countries are in Europe?", "SELECT name FROM country WHERE continent = 'Europe'", ASIA)
    assert v.verdict == "no_match" and v.gold_status == "verified" and not v.needs_human
    assert len(ran) > 2


def test_a_disagreeing_answer_that_took_the_question_direction_doubts_the_golden(db):
    # MAX(age) = 41 for "youngest"; the answer takes MIN (19): the golden is suspect, the verdict needs_human, and the
    # reversed canonical query ran.
    v, ran = _judged(db, *YOUNGEST, "SELECT min(age) FROM singer")
    assert v.verdict == "needs_human" and v.gold_status == "suspect" and "direction" in v.details
    assert len(ran) > 2
