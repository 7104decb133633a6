"""PostgreSQL values meet the same typed comparisons as SQLite values (goldeval issue 13, "Values").

One row of every type the issue names is written by hand below; the golden rows are what a person would write in
a case file (JSON), and each expectation says why it follows from the judge's rules (DESIGN.md, "Tolerance").
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from goldeval.answers.judge import judge_answer
from goldeval.answers.postgres import PostgresDatabase

DB = "typed"
SCRIPT = """
CREATE TABLE v (
  big numeric(40, 0), price numeric(10, 2), ratio numeric, day date, at timestamp, at_tz timestamptz, ok bool,
  tags text[], nums int[], doc jsonb, raw json, span interval, n int, s text
);
INSERT INTO v VALUES
  (123456789012345678901234567890, 12.50, 0.333333333333, '2024-03-01', '2024-03-01 10:30:00', '2024-03-01 12:30:00+02',
   true, '{alpha,beta}', '{1,2,3}', '{"b": 1, "a": [true, null]}', '[1, 2.5]', '1 day 02:00:00', 0, ''),
  (NULL, NULL, NULL, NULL, NULL, NULL, false, '{}', NULL, 'null', NULL, NULL, NULL, NULL);
"""


@pytest.fixture(scope="module")
def db(pg):
    pg.create_database(DB, SCRIPT)
    with PostgresDatabase(pg.url(DB, role="ro")) as d:
        yield d


def first(db, sql):
    return db.execute(sql).rows[0]


def test_values_arrive_as_the_judge_reads_sqlite_values(db):
    row = first(db, "SELECT big, price, ratio, day, at, at_tz, ok, tags, nums, doc, raw, span FROM v WHERE ok")
    big, price, ratio, day, at, at_tz, ok, tags, nums, doc, raw, span = row
    assert big == 123456789012345678901234567890 and type(big) is int   # exact, not a float
    # a fraction is exact too (issue 11, item 5: decimals from a database compare exactly); it was a float, as
    # SQLite's REAL, which let 1e-6 relative accept a wrong cent on 1,234,567.80
    assert price == Decimal("12.50") and type(price) is Decimal
    assert ratio == Decimal("0.333333333333") and type(ratio) is Decimal
    assert day == dt.date(2024, 3, 1) and at == dt.datetime(2024, 3, 1, 10, 30)
    assert at_tz == dt.datetime(2024, 3, 1, 10, 30, tzinfo=dt.UTC)  # 12:30+02 is 10:30 UTC
    assert ok is True and tags == ["alpha", "beta"] and nums == [1, 2, 3]
    assert doc == {"a": [True, None], "b": 1} and raw == [1, 2.5]
    assert span == "1 day 02:00:00"  # PostgreSQL's own text for an interval


def verdict(db, sql, columns, rows, question="What are the values?"):
    res = db.execute(sql)
    v = judge_answer(question, {"kind": "value", "columns": columns, "rows": rows},
                     {"columns": res.columns, "rows": res.rows}, dialect="postgres")
    return v.verdict


@pytest.mark.parametrize("sql, columns, rows, expected, why", [
    ("SELECT price FROM v WHERE ok", ["price"], [[12.5]], "match", "numeric 12.50 is the number 12.5"),
    ("SELECT price FROM v WHERE ok", ["price"], [["12.50"]], "match", "a string that spells the number"),
    ("SELECT price FROM v WHERE ok", ["price"], [[12.6]], "no_match", "0.1 off: outside 1e-6 and the golden's 0.05"),
    ("SELECT ratio FROM v WHERE ok", ["ratio"], [[0.3333]], "match", "the golden's 4 decimals: half a unit is 5e-5"),
    ("SELECT day FROM v WHERE ok", ["day"], [["2024-03-01"]], "match", "a date meets its ISO text"),
    ("SELECT at FROM v WHERE ok", ["at"], [["2024-03-01 10:30:00"]], "match", "timestamp without time zone"),
    ("SELECT at_tz FROM v WHERE ok", ["at_tz"], [["2024-03-01 10:30:00"]], "match", "timestamptz in UTC"),
    ("SELECT at_tz FROM v WHERE ok", ["at_tz"], [["2024-03-01T12:30:00+02:00"]], "match", "the same instant, another offset"),
    ("SELECT at_tz FROM v WHERE ok", ["at_tz"], [["2024-03-01 12:30:00"]], "no_match", "12:30 UTC is another instant"),
    ("SELECT ok FROM v ORDER BY ok DESC", ["ok"], [[1], [0]], "match", "bool meets 1/0, as SQLite stores it"),
    ("SELECT nums FROM v WHERE ok", ["nums"], [[[1, 2, 3]]], "match", "an int[] meets a JSON list"),
    ("SELECT nums FROM v WHERE ok", ["nums"], [[[1, 2]]], "no_match", "a shorter list"),
    ("SELECT tags FROM v WHERE ok", ["tags"], [[["Alpha", "beta"]]], "match", "text elements compare as text does (case folded)"),
    ("SELECT doc FROM v WHERE ok", ["doc"], [[{"b": 1, "a": [True, None]}]], "match", "jsonb meets the object in any key order"),
    ("SELECT raw FROM v WHERE ok", ["raw"], [[[1, 2.5]]], "match", "json array"),
    ("SELECT big FROM v WHERE ok", ["big"], [[123456789012345678901234567890]], "match", "an exact 30-digit integer"),
    ("SELECT n FROM v WHERE ok", ["n"], [[None]], "no_match", "0 is not NULL"),
    ("SELECT s FROM v WHERE ok", ["s"], [[None]], "no_match", "'' is not NULL"),
    ("SELECT n FROM v WHERE NOT ok", ["n"], [[0]], "no_match", "NULL is not 0"),
    ("SELECT s FROM v WHERE ok", ["s"], [[0]], "no_match", "'' is not 0"),
    ("SELECT count(*) FROM v", ["n"], [[2]], "match", "count(*) is a bigint"),
    ("SELECT sum(price) FROM v", ["total"], [[12.5]], "match", "sum over numeric skips NULL"),
])
def test_postgres_values_meet_the_typed_comparisons(db, sql, columns, rows, expected, why):
    assert verdict(db, sql, columns, rows) == expected, why
