"""SQLite SQL translated for PostgreSQL (``--sql-dialect sqlite``): the SQLite meanings sqlglot does not carry over.

Each expected text was worked out by hand from the rule in ``goldeval.answers.transpile`` and checked to mean, on
PostgreSQL, what the input means on SQLite (SQLite documentation: "Datatypes In SQLite" — a comparison is 0/1;
"The LIKE operator" — ASCII case-insensitive; "SELECT" — a double-quoted name that matches no column is a string).
"""

from __future__ import annotations

import pytest

from goldeval.answers.sql import QueryError
from goldeval.answers.transpile import to_postgres

SCHEMA = {"admissions": ["admission_id", "source", "cost", "admitted_on"], "Country": ["Name", "Continent"]}


@pytest.mark.parametrize("sqlite, postgres", [
    # a comparison inside SUM / AVG / arithmetic is an integer in SQLite
    ("SELECT SUM(source = 'emergency') FROM admissions",
     """SELECT SUM(CAST((source = 'emergency') AS INT)) AS "SUM(source = 'emergency')" FROM admissions"""),
    ("SELECT AVG(cost > 100) AS Share FROM admissions ORDER BY share",
     'SELECT AVG(CAST((cost > 100) AS INT)) AS "Share" FROM admissions ORDER BY "Share" NULLS FIRST'),
    # ROUND(x, n) of a double: PostgreSQL has only round(numeric, int)
    ("SELECT ROUND(SUM(cost), 2) AS total FROM admissions",
     "SELECT ROUND(CAST(SUM(cost) AS DECIMAL), 2) AS total FROM admissions"),
    # LIKE ignores ASCII case in SQLite
    ("SELECT admission_id FROM admissions WHERE source LIKE 'EMER%'",
     "SELECT admission_id FROM admissions WHERE source ILIKE 'EMER%'"),
    # names ignore case in SQLite: the catalog's spelling is used (quoted where it has capitals)
    ("SELECT name FROM country WHERE continent = 'Asia'",
     """SELECT "Name" FROM "Country" WHERE "Continent" = 'Asia'"""),
    # a double-quoted name that is no column and no alias is a string in SQLite
    ('SELECT Name FROM Country WHERE Continent = "Asia"',
     """SELECT "Name" FROM "Country" WHERE "Continent" = 'Asia'"""),
    ('SELECT count(*) AS "n" FROM Country ORDER BY "n"',
     'SELECT COUNT(*) AS "n" FROM "Country" ORDER BY "n" NULLS FIRST'),
    # a sub-query in FROM without a name
    ("SELECT count(*) AS n FROM (SELECT source FROM admissions GROUP BY source)",
     "SELECT COUNT(*) AS n FROM (SELECT source FROM admissions GROUP BY source) AS _subquery1"),
    # strftime (sqlglot's own translation) and SQLite's NULL ordering made explicit
    ("SELECT CAST(strftime('%m', admitted_on) AS INTEGER) AS m FROM admissions ORDER BY m",
     "SELECT CAST(TO_CHAR(CAST(admitted_on AS TIMESTAMP), 'MM') AS INT) AS m FROM admissions ORDER BY m NULLS FIRST"),
])
def test_sqlite_meanings_are_kept(sqlite, postgres):
    assert to_postgres(sqlite, read="sqlite", schema=SCHEMA) == postgres


def test_a_second_statement_is_translated_and_left_for_the_guard_to_refuse():
    assert to_postgres("SELECT 1; DROP TABLE admissions", schema=SCHEMA) == 'SELECT 1 AS "1"; DROP TABLE admissions'


def test_what_sqlglot_cannot_read_is_a_query_error():
    with pytest.raises(QueryError, match="cannot translate the query from sqlite to PostgreSQL"):
        to_postgres("SELECT FROM WHERE (", schema=SCHEMA)
