"""answers.comparisons: every comparison of a column, wherever the query makes it, traced to the table that stores
the column (issue 26, item 1). Queries made up; the expected comparisons read off each query by hand."""

from __future__ import annotations

import pytest

from goldeval.answers.comparisons import query_comparisons
from goldeval.answers.doubt import parsed_query

SCHEMA = {"country": {"code", "name", "continent", "population"}, "city": {"name", "countrycode", "district"},
          "lang": {"countrycode", "language", "isofficial"}}


def _found(sql):
    tree = parsed_query(sql, "sqlite")
    assert tree is not None, sql
    return query_comparisons(tree, dialect="sqlite", schema=lambda: SCHEMA)


def _lit(sql):
    """(op, negated, positive, table.column, values) of each literal comparison."""
    return [(c.op, c.negated, c.positive, c.stored.label().lower() if c.stored else None, c.values) for c in _found(sql) if c.literals]


@pytest.mark.parametrize("sql, expected", [
    ("SELECT name FROM country WHERE continent = 'asia'", [("=", False, True, "country.continent", ("asia",))]),
    ("SELECT name FROM country WHERE 'asia' = continent", [("=", False, True, "country.continent", ("asia",))]),
    ("SELECT name FROM country WHERE continent <> 'asia'", [("=", True, False, "country.continent", ("asia",))]),
    ("SELECT name FROM country WHERE continent != 'asia'", [("=", True, False, "country.continent", ("asia",))]),
    ("SELECT name FROM country WHERE continent IN ('asia', 'Europe')", [("=", False, True, "country.continent", ("asia", "Europe"))]),
    ("SELECT name FROM country WHERE continent NOT IN ('asia')", [("=", True, False, "country.continent", ("asia",))]),
    ("SELECT name FROM country WHERE name LIKE 'a%'", [("like", False, True, "country.name", ("a%",))]),
    ("SELECT name FROM country WHERE name NOT LIKE 'a%'", [("like", True, False, "country.name", ("a%",))]),
    ("SELECT name FROM country WHERE name GLOB 'A*'", [("glob", False, True, "country.name", ("A*",))]),
    ("SELECT name FROM country WHERE name BETWEEN 'a' AND 'm'", [("between", False, True, "country.name", ("a", "m"))]),
    ("SELECT name FROM country WHERE population = -5", [("=", False, True, "country.population", (-5,))]),
    # SQLite reads a double-quoted word that names no column as a string (Spider's gold SQL).
    ('SELECT name FROM country WHERE continent = "asia"', [("=", False, True, "country.continent", ("asia",))]),
    # HAVING, a subquery, a CTE traced through its alias, each branch of a UNION, an EXCEPT's right side.
    ("SELECT continent FROM country GROUP BY continent HAVING continent = 'asia'", [("=", False, True, "country.continent", ("asia",))]),
    ("SELECT name FROM city WHERE countrycode IN (SELECT code FROM country WHERE continent = 'asia')",
     [("=", False, True, "country.continent", ("asia",))]),
    ("SELECT name FROM city WHERE countrycode NOT IN (SELECT code FROM country WHERE continent = 'asia')",
     [("=", False, False, "country.continent", ("asia",))]),
    ("WITH c AS (SELECT name AS n, continent AS k FROM country) SELECT n FROM c WHERE k = 'asia'",
     [("=", False, True, "country.continent", ("asia",))]),
    ("SELECT name FROM country WHERE continent = 'asia' UNION SELECT name FROM city WHERE district = 'kabol'",
     [("=", False, True, "country.continent", ("asia",)), ("=", False, True, "city.district", ("kabol",))]),
    ("SELECT name FROM country EXCEPT SELECT name FROM country WHERE continent = 'asia'",
     [("=", False, False, "country.continent", ("asia",))]),
    ("SELECT name FROM country WHERE continent = 'asia' INTERSECT SELECT name FROM city",
     [("=", False, False, "country.continent", ("asia",))]),
    # OR, and an outer join's ON: a literal there that matches nothing does not empty the result.
    ("SELECT name FROM country WHERE continent = 'asia' OR population > 5", [("=", False, False, "country.continent", ("asia",))]),
    ("SELECT T1.name FROM country AS T1 LEFT JOIN city AS T2 ON T1.code = T2.countrycode AND T2.district = 'x'",
     [("=", False, False, "city.district", ("x",))]),
    # An unqualified column among two tables is found by the schema; an alias by the FROM.
    ("SELECT T1.name FROM country AS T1 JOIN lang AS T2 ON T1.code = T2.countrycode WHERE language = 'dutch'",
     [("=", False, True, "lang.language", ("dutch",))]),
    # A correlated subquery's column belongs to the outer query's table.
    ("SELECT name FROM country AS T1 WHERE EXISTS (SELECT 1 FROM city AS T2 WHERE T2.countrycode = T1.code AND T1.continent = 'asia')",
     [("=", False, True, "country.continent", ("asia",))]),
    # Ranges and a column compared with an expression are not literal comparisons.
    ("SELECT name FROM country WHERE population > 5 AND lower(name) = 'x'", []),
])
def test_every_comparison_with_a_literal_is_found_and_traced(sql, expected):
    assert _lit(sql) == expected


def test_two_columns_compared_are_traced_to_their_tables():
    found = _found("SELECT T1.name FROM country AS T1 JOIN city AS T2 ON T1.code = T2.countrycode "
                   "WHERE T1.name IN (SELECT T3.countrycode FROM lang AS T3)")
    pairs = [(c.stored.label().lower(), c.other_stored.label().lower()) for c in found if c.other is not None]
    assert pairs == [("country.code", "city.countrycode"), ("country.name", "lang.countrycode")]


def test_a_double_quoted_column_name_is_a_column_not_a_string():
    found = _found('SELECT name FROM country WHERE "continent" = "name"')
    assert len(found) == 1 and not found[0].literals and found[0].other is not None


def test_without_a_schema_an_ambiguous_column_is_left_untraced():
    tree = parsed_query("SELECT T1.name FROM country AS T1 JOIN city AS T2 ON T1.code = T2.countrycode WHERE district = 'x'", "sqlite")
    found = [c for c in query_comparisons(tree, dialect="sqlite") if c.literals]
    assert len(found) == 1 and found[0].stored is None
