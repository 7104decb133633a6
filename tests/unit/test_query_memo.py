"""Query results remembered per open SQLite database (goldeval.answers.query_memo, issue 15).

A text that ran before on the same read-only database gives the rows it gave, without running again; a text that
may give other rows the next time (random(), the clock, the connection's state) runs each time; a failure is never
remembered; the memory is bounded. What SQLite really ran is read from its trace callback (every statement the
connection executes). Verdicts with the memory are those of a database that runs every query. No timing here
(benchmarks/bench_judge_cli.py times it).
"""

from __future__ import annotations

import sqlite3

import pytest

from goldeval.answers import AnswerConfig, ReadOnlyDatabase, judge_case
from goldeval.answers import query_memo
from goldeval.answers.query_memo import execute_remembered
from goldeval.answers.sql import QueryError


def _file(tmp_path):
    path = tmp_path / "m.sqlite"
    if not path.exists():
        con = sqlite3.connect(path)
        con.execute("CREATE TABLE singer (name TEXT, age INTEGER, born TEXT)")
        con.executemany("INSERT INTO singer VALUES (?, ?, ?)", [("Joe", 52, "1970-01-02"), ("Rose", 41, "1981-05-06"),
                                                                ("Tribal King", 25, "1997-09-10")])
        con.commit()
        con.close()
    return path


def _traced(db):
    ran: list[str] = []
    db._conn.set_trace_callback(ran.append)
    return ran


def test_a_repeat_is_not_run_again_and_gets_lists_of_its_own(tmp_path):
    with ReadOnlyDatabase(_file(tmp_path)) as db:
        ran = _traced(db)
        first = execute_remembered(db, "SELECT name, age FROM singer ORDER BY age")
        second = execute_remembered(db, "SELECT name, age FROM singer ORDER BY age")
        assert len([s for s in ran if "FROM singer" in s]) == 1
        assert second.columns == first.columns == ["name", "age"]
        assert second.rows == first.rows == [("Tribal King", 25), ("Rose", 41), ("Joe", 52)]
        # a caller may change its lists: the next repeat still gets the query's rows
        second.rows.clear()
        second.columns.append("x")
        first.rows.pop()
        third = execute_remembered(db, "SELECT name, age FROM singer ORDER BY age")
        assert third.rows == [("Tribal King", 25), ("Rose", 41), ("Joe", 52)] and third.columns == ["name", "age"]
        assert third.notes and "remembered" in third.notes[0]


def test_another_text_runs(tmp_path):
    # Only the very same text is a repeat: another spacing or case of a keyword is another query text.
    with ReadOnlyDatabase(_file(tmp_path)) as db:
        ran = _traced(db)
        execute_remembered(db, "SELECT count(*) FROM singer")
        execute_remembered(db, "SELECT count(*)  FROM singer")
        execute_remembered(db, "select count(*) FROM singer")
        assert len([s for s in ran if "singer" in s.lower()]) == 3


@pytest.mark.parametrize("sql", [
    "SELECT random()",
    "SELECT hex(randomblob(4))",
    "SELECT date('now')",
    "SELECT name FROM singer WHERE born < Current_Date",
    "SELECT CURRENT_TIMESTAMP",
    "SELECT strftime('%s')",
    "SELECT julianday()",
    "SELECT changes()",
    "SELECT total_changes()",
    "SELECT last_insert_rowid()",
    "SELECT sqlite_version()",
    "SELECT unixepoch()",
    "SELECT time()",
])
def test_a_text_that_may_give_other_rows_runs_each_time(tmp_path, sql):
    with ReadOnlyDatabase(_file(tmp_path)) as db:
        ran = _traced(db)
        execute_remembered(db, sql)
        execute_remembered(db, sql)
        assert ran.count(sql) == 2


def test_random_values_really_differ(tmp_path):
    with ReadOnlyDatabase(_file(tmp_path)) as db:
        values = {execute_remembered(db, "SELECT random()").rows[0][0] for _ in range(5)}
        assert len(values) > 1  # 5 draws of a 64-bit random number: equal only by a 2^-64 chance


def test_a_failure_is_not_remembered(tmp_path):
    with ReadOnlyDatabase(_file(tmp_path)) as db:
        for _ in range(2):
            with pytest.raises(QueryError):
                execute_remembered(db, "SELECT nope FROM singer")
        assert "SELECT nope FROM singer" not in query_memo._MEMO.get(db, {})


def test_a_subclass_or_another_engine_runs_every_query(tmp_path):
    class Counting(ReadOnlyDatabase):
        pass

    with Counting(_file(tmp_path)) as db:
        ran = _traced(db)
        execute_remembered(db, "SELECT name FROM singer")
        execute_remembered(db, "SELECT name FROM singer")
        assert ran.count("SELECT name FROM singer") == 2

    class Other:
        engine = "sqlite"
        n = 0

        def execute(self, sql):
            self.n += 1
            return "result"

    other = Other()
    assert execute_remembered(other, "SELECT 1") == "result" and execute_remembered(other, "SELECT 1") == "result"
    assert other.n == 2


def test_bounded_by_entries_and_cells(tmp_path, monkeypatch):
    monkeypatch.setattr(query_memo, "_ENTRIES", 2)
    with ReadOnlyDatabase(_file(tmp_path)) as db:
        ran = _traced(db)
        for q in ("SELECT 1", "SELECT 2", "SELECT 3", "SELECT 1"):  # SELECT 1 was the least recently used: out
            execute_remembered(db, q)
        assert ran.count("SELECT 1") == 2 and len(query_memo._MEMO[db]) == 2
    monkeypatch.setattr(query_memo, "_CELLS", 8)
    monkeypatch.setattr(query_memo, "_RESULT_CELLS", 2)  # at most 2 cells a result
    with ReadOnlyDatabase(_file(tmp_path)) as db:
        ran = _traced(db)
        for _ in range(2):
            execute_remembered(db, "SELECT name, age FROM singer")  # 6 cells: too many to keep
            execute_remembered(db, "SELECT name FROM singer LIMIT 2")  # 2 cells: kept
        assert ran.count("SELECT name, age FROM singer") == 2 and ran.count("SELECT name FROM singer LIMIT 2") == 1
        assert query_memo._MEMO[db].cells == 2


def test_bounded_by_bytes(tmp_path, monkeypatch):
    # Few cells of long text are few cells and many bytes: the bytes held are bounded too, not only the cells.
    small = query_memo._size([("x0000000",)])
    assert small < query_memo._size([("a longer text than that one",)])
    monkeypatch.setattr(query_memo, "_BYTES", 4 * small)  # a result of at most `small` bytes kept; 4 of them in all
    with ReadOnlyDatabase(_file(tmp_path)) as db:
        ran = _traced(db)
        for _ in range(2):
            execute_remembered(db, "SELECT 'a longer text than that one'")  # more than a quarter of _BYTES: not kept
            execute_remembered(db, "SELECT 'x0000000'")  # kept
        assert ran.count("SELECT 'a longer text than that one'") == 2 and ran.count("SELECT 'x0000000'") == 1
        for k in range(1, 7):
            execute_remembered(db, f"SELECT 'x{k:07d}'")  # as large each: the least recently used go
        memo = query_memo._MEMO[db]
        assert len(memo) == 4 and memo.bytes == 4 * small == sum(v[3] for v in memo.values())
        assert list(memo) == [f"SELECT 'x{k:07d}'" for k in range(3, 7)]


def test_the_size_counts_what_the_cells_hold():
    # text as UTF-8 and blobs as their bytes, plus a few bytes a cell: a long cell is its length and more
    assert query_memo._size([("é" * 1000,)]) >= 2000 and query_memo._size([(b"\x00" * 1000, None, 1, 2.5)]) >= 1000
    assert query_memo._size([(object(),)]) == query_memo._BYTES  # (no sqlite3 cell is of such a type)


def test_verdicts_equal_those_of_a_database_that_runs_every_query(tmp_path):
    # Two cases whose answers are one text, and an answer that is its golden's canonical query word for word.
    cases = [
        ({"id": "a", "question": "How many singers do we have?", "golden": {"kind": "value", "canonical_query": "SELECT count(*) FROM singer"}},
         {"id": "a", "final_query": "SELECT count(*) FROM singer"}),
        ({"id": "b", "question": "What is the total number of singers?", "golden": {"kind": "value", "canonical_query": "SELECT count(*) FROM singer"}},
         {"id": "b", "final_query": "SELECT count(*) FROM singer"}),
        ({"id": "c", "question": "Names of singers older than 40?", "golden": {"kind": "value", "canonical_query": "SELECT name FROM singer WHERE age > 40"}},
         {"id": "c", "final_query": "SELECT name, age FROM singer WHERE age > 40"}),
        ({"id": "d", "question": "Which singers are over 40?", "golden": {"kind": "value", "canonical_query": "SELECT name FROM singer WHERE age > 40"}},
         {"id": "d", "final_query": "SELECT name, age FROM singer WHERE age > 40"}),
    ]

    class Fresh(ReadOnlyDatabase):  # a subclass: every query runs (see above)
        pass

    cfg = AnswerConfig()
    with ReadOnlyDatabase(_file(tmp_path)) as db, Fresh(_file(tmp_path)) as fresh:
        ran = _traced(db)
        got = [(r.outcome.to_dict(), r.materials) for r in (judge_case(c, a, db=db, config=cfg) for c, a in cases)]
        want = [(r.outcome.to_dict(), r.materials) for r in (judge_case(c, a, db=fresh, config=cfg) for c, a in cases)]
        assert [o["verdict"] for o, _ in got] == ["match", "match", "match", "match"]
        assert got == want
        assert ran.count("SELECT count(*) FROM singer") == 1  # the golden's run served both answers
        assert ran.count("SELECT name, age FROM singer WHERE age > 40") == 1


def test_the_judge_command_settles_start_up_before_the_first_case(tmp_path):
    # goldeval judge, once start-up is over: the database's SQL dialect is loaded (the golden checks parse in it)
    # and start-up's objects are frozen out of the cyclic collector's passes (gc.freeze); see cli/judge.py.
    import gc
    import sys

    from goldeval.cli.judge import _settle_start_up

    try:
        with ReadOnlyDatabase(_file(tmp_path)) as db:
            _settle_start_up(db, AnswerConfig())
        assert "sqlglot.dialects.sqlite" in sys.modules and "sqlglot.parsers.sqlite" in sys.modules
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
