"""PostgreSQL ``numeric`` is exact: compared exactly, or within the golden's display precision (goldeval issue 11,
item 5). The rule and the SQLite / DuckDB halves are in tests/unit/test_answers_decimals.py; every expectation
below is worked out by hand from ``goldeval.answers.numbers`` (``h`` half a unit of the golden's last shown decimal,
``r`` 1e-12 against a float, 2**-50 against an exact number; a canonical golden computed without ROUND has h = 0).
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from goldeval.answers.judge import judge_case
from goldeval.answers.postgres import PostgresDatabase

DB = "decimals"
SCRIPT = """
CREATE TABLE t (name text, price numeric(12, 2), n int, code numeric(20, 0));
INSERT INTO t VALUES ('a', 1234567.80, 1, 9007199254740993), ('b', 10.05, 2, 7), ('c', 0.10, 4, 8);
"""


@pytest.fixture(scope="module")
def db(pg):
    pg.create_database(DB, SCRIPT)
    with PostgresDatabase(pg.url(DB, role="ro")) as d:
        yield d


def test_numeric_arrives_exact(db):
    price, avg, code = db.execute("SELECT price, (SELECT avg(n) FROM t), code FROM t WHERE name = 'a'").rows[0]
    assert price == Decimal("1234567.80") and type(price) is Decimal
    assert avg == Decimal("2.3333333333333333")  # PostgreSQL's numeric avg of 1, 2, 4: 16 decimals
    assert code == 9007199254740993 and type(code) is int  # whole: an int, exact at any size


@pytest.mark.parametrize("golden, final, expected, why", [
    ({"canonical_query": "SELECT price FROM t WHERE name = 'a'"}, "SELECT price - 0.80 AS price FROM t WHERE name = 'a'",
     "no_match", "numeric 1234567.00 vs 1234567.80: 0.80 off (1e-6 relative, 1.23 wide, accepted it)"),
    ({"canonical_query": "SELECT price FROM t WHERE name = 'a'"}, "SELECT price::float8 AS price FROM t WHERE name = 'a'",
     "match", "the double nearest 1234567.80: 0 apart"),
    ({"canonical_query": "SELECT price FROM t WHERE name = 'a'"},
     "SELECT price::float8 - 0.8 AS price FROM t WHERE name = 'a'", "no_match", "a double 0.8 off: > 1e-12 * 1.2e6"),
    ({"canonical_query": "SELECT avg(n) AS mean FROM t"}, "SELECT avg(n::float8) AS mean FROM t", "match",
     "numeric 2.3333333333333333 vs double 2.3333333333333335: 1.7e-16 <= 1e-12 * 2.33"),
    ({"canonical_query": "SELECT avg(n) AS mean FROM t"}, "SELECT sum(n)::numeric(30, 20) / count(*) AS mean FROM t",
     "match", "the same quotient at scale 20: 3.3e-17 apart, one float64"),
    ({"canonical_query": "SELECT round(avg(n), 2) AS mean FROM t"}, "SELECT avg(n) AS mean FROM t", "match",
     "a ROUNDed golden (numeric 2.33, 2 decimals): 0.0033 <= h = 0.005"),
    ({"canonical_query": "SELECT avg(n) AS mean FROM t"}, "SELECT round(avg(n), 2) AS mean FROM t", "no_match",
     "the answer rounded what the golden computed exactly: 0.0033 off, h = 0"),
    ({"columns": ["price"], "rows": [[1234567.8]]}, "SELECT price - 0.80 AS price FROM t WHERE name = 'a'", "no_match",
     "a golden typed in JSON to 1 decimal: 0.80 > h = 0.05"),
    ({"columns": ["price"], "rows": [["1234567.80"]]}, "SELECT price FROM t WHERE name = 'a'", "match",
     "numeric text of the same number"),
    ({"canonical_query": "SELECT sum(price) AS total FROM t"}, "SELECT sum(price) + 0.01 AS total FROM t", "no_match",
     "1234577.96 vs 1234577.95: a cent, exactly"),
])
def test_numeric_verdicts(db, golden, final, expected, why):
    case = {"id": "n", "question": "What is it?", "golden": {"kind": "value", **golden}}
    res = judge_case(case, {"id": "n", "final_query": final}, db=db)
    v = res.outcome.verdict
    assert v is not None, res.outcome.reason
    assert v.verdict == expected, f"{why}: {v.why}"
