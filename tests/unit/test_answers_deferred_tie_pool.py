"""The hidden tie pool, worked out only when the table rule asks for it (issue 31 item 5): a prediction that matches
the golden row for row runs no pool query, one that needs the pool gets the verdict the eagerly worked-out pool
(``hidden_tie_pool``, the definition) gives, and a pool is worked out once per database. Every SQL statement SQLite
runs is seen through the connection's trace callback. The small database is made here; every expected value is read
off its rows. No timing here.
"""

from __future__ import annotations

import sqlite3

import pytest

from goldeval.answers import AnswerConfig, ReadOnlyDatabase, judge_answer, judge_case
from goldeval.answers.canonical import DeferredTiePool, deferred_tie_pool, hidden_tie_pool, resolved_tie_pool

# Populations: Bouvet and Heard tie at 0 (the boundary of LIMIT 1), Nauru and Tuvalu at 10 (the third place of a
# LIMIT 3 after Bouvet and Heard), then France. Inserted in this order, so SQLite's scan gives Bouvet before Heard.
COUNTRIES = [("Bouvet", 0), ("Heard", 0), ("Nauru", 10), ("Tuvalu", 10), ("France", 67), ("Tonga", 100)]
LOWEST = "SELECT name FROM country ORDER BY population LIMIT 1"
LOWEST3 = "SELECT name FROM country ORDER BY population LIMIT 3"


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "c.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE country (name TEXT, population INTEGER)")
    con.executemany("INSERT INTO country VALUES (?, ?)", COUNTRIES)
    con.commit()
    con.close()
    d = ReadOnlyDatabase(path)
    yield d
    d.close()


def _pool_queries(ran):
    """The statements that are a tie pool's query (the order keys added as ``__goldeval_k…`` columns)."""
    return [s for s in ran if "__goldeval_k" in s]


def _judged(db, canonical, final_query, question="Which country has the fewest people?"):
    ran: list[str] = []
    db._conn.set_trace_callback(ran.append)  # the open sqlite3 connection: every statement passes here
    try:
        case = {"id": "c", "question": question, "golden": {"kind": "value", "canonical_query": canonical}}
        v = judge_case(case, {"id": "c", "final_query": final_query}, db=db, config=AnswerConfig()).outcome.verdict
    finally:
        db._conn.set_trace_callback(None)
    return v, ran


def test_a_match_runs_no_pool_query(db):
    # The golden (LIMIT 1 over a tie) is Bouvet; the answer breaks the tie by name and also gives Bouvet: a match,
    # decided without the pool (before issue 31 item 5 its query ran while the golden was prepared).
    v, ran = _judged(db, LOWEST, "SELECT name FROM country ORDER BY population, name LIMIT 1")
    assert v.verdict == "match" and v.confidence == 10
    assert _pool_queries(ran) == [] and "tie_pool" not in v.details


def test_another_tie_break_still_asks_the_pool_and_is_a_match(db):
    # Heard ties with Bouvet at population 0: another valid tie-break (match, confidence 8), found by the pool's
    # query, run once, when the table rule asks for it.
    v, ran = _judged(db, LOWEST, "SELECT name FROM country ORDER BY population, name DESC LIMIT 1")
    assert v.verdict == "match" and v.confidence == 8
    assert v.details["tie_pool"] == {"above": 0, "ties": 2, "order_key": "population"}
    assert len(_pool_queries(ran)) == 1
    # The same case again on the same database: the golden and its pool are remembered, no query runs for them.
    v2, ran2 = _judged(db, LOWEST, "SELECT name FROM country ORDER BY population, name DESC LIMIT 1")
    assert v2.to_dict() == v.to_dict() and _pool_queries(ran2) == []


PREDICTIONS = [
    (LOWEST, ["Bouvet"]), (LOWEST, ["Heard"]), (LOWEST, ["Nauru"]), (LOWEST, []), (LOWEST, ["Bouvet", "Heard"]),
    (LOWEST3, ["Bouvet", "Heard", "Nauru"]), (LOWEST3, ["Heard", "Bouvet", "Tuvalu"]), (LOWEST3, ["Bouvet", "Nauru", "Tuvalu"]),
    (LOWEST3, ["Bouvet", "Heard", "Nauru", "Tuvalu"]), (LOWEST3, ["Bouvet", "Heard", "France"]),
]


@pytest.mark.parametrize("canonical,names", PREDICTIONS)
def test_the_deferred_pool_gives_the_verdict_of_the_pool_worked_out_first(db, canonical, names):
    # The definition: the golden carries hidden_tie_pool's pool, worked out before the judge runs. The deferred
    # pool in its place gives the same verdict dict (match, tie-break, all tied rows, a wrong row, no rows, extra
    # rows), and resolves to the same pool.
    rows = [list(r) for r in db.execute(canonical).rows]
    golden = {"kind": "value", "canonical_query": canonical, "columns": ["name"], "rows": rows}
    eager = dict(golden, tie_pool=hidden_tie_pool(db, canonical, golden))
    deferred = dict(golden, tie_pool=deferred_tie_pool(db, canonical, golden))
    assert isinstance(deferred["tie_pool"], DeferredTiePool)
    assert resolved_tie_pool(deferred["tie_pool"]) == eager["tie_pool"] is not None
    pred = {"columns": ["name"], "rows": [[n] for n in names]}
    q = "Which countries have the fewest people?"
    assert judge_answer(q, deferred, pred).to_dict() == judge_answer(q, eager, pred).to_dict()


def test_no_deferred_pool_where_the_definition_finds_none(db):
    # No ORDER BY / LIMIT, or no golden rows: hidden_tie_pool gives None, and no deferred pool is made. A LIMIT
    # with no tie beyond it (Tonga alone at the top) resolves to None, as the definition gives.
    plain = "SELECT name FROM country WHERE population > 50"
    assert deferred_tie_pool(db, plain, {"columns": ["name"], "rows": [["France"]]}) is None
    assert hidden_tie_pool(db, plain, {"columns": ["name"], "rows": [["France"]]}) is None
    assert deferred_tie_pool(db, LOWEST, {"columns": ["name"], "rows": []}) is None
    top = "SELECT name FROM country ORDER BY population DESC LIMIT 1"
    golden = {"columns": ["name"], "rows": [["Tonga"]]}
    pool = deferred_tie_pool(db, top, golden)
    assert pool is not None and pool.resolve() is None is hidden_tie_pool(db, top, golden)


def test_a_pool_is_worked_out_once_a_database_and_handed_out_as_new_lists(db):
    golden = {"columns": ["name"], "rows": [["Bouvet"]]}
    ran: list[str] = []
    db._conn.set_trace_callback(ran.append)
    try:
        first = deferred_tie_pool(db, LOWEST, golden).resolve()
        first["ties"][0][0] = "changed"  # a caller's own copy
        second = deferred_tie_pool(db, LOWEST, golden).resolve()
    finally:
        db._conn.set_trace_callback(None)
    assert second == {"n": 1, "above": [], "ties": [["Bouvet"], ["Heard"]], "order_key": ["population"]}
    assert len(_pool_queries(ran)) == 1


def test_a_pool_of_a_closed_and_dropped_database_is_none(tmp_path):
    path = tmp_path / "c.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE country (name TEXT, population INTEGER)")
    con.executemany("INSERT INTO country VALUES (?, ?)", COUNTRIES)
    con.commit()
    con.close()
    d = ReadOnlyDatabase(path)
    pool = deferred_tie_pool(d, LOWEST, {"columns": ["name"], "rows": [["Bouvet"]]})
    d.close()
    del d  # the pool holds the database by a weak reference: it does not keep it
    import gc

    gc.collect()
    assert pool is not None and pool.resolve() is None
