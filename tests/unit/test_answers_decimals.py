"""Decimals from a database compare exactly, or within the golden's display precision (goldeval issue 11, item 5).

Every expected value is worked out by hand below from the rule in ``goldeval.answers.numbers``:
``|p - g| <= max(r * max(|g|, |p|), h)``, ``h`` half a unit of the golden's last shown decimal (0 for an integer or
a golden its canonical query computed without rounding), ``r`` = 1e-6 between floats, 1e-12 between a Decimal and
a float, 2**-50 between a Decimal and a Decimal / integer / numeric text. Before this rule a Decimal was read as a
float and got 1e-6 relative: 1e-6 * 1,234,567.80 = 1.23, so a wrong 1,234,567.00 matched with confidence 10.

The PostgreSQL ``numeric`` half of these checks is tests/postgres/test_pg_decimals.py.
"""

from __future__ import annotations

import sqlite3
from decimal import Decimal

import numpy as np
import pytest

from goldeval.answers.judge import judge_answer, judge_case
from goldeval.answers.numbers import DECIMAL_RESOLUTION, FLOAT_NOISE, REL_TOL, numbers_close, pair_rel_tol, tolerances
from goldeval.answers.sql import ReadOnlyDatabase
from goldeval.answers.values import make_column

D = Decimal


def close(g, p, *, exact=False):
    """The rule for one golden cell against one predicted cell, through the columns the judge builds."""
    gc, pc = make_column("g", [g]), make_column("p", [p])
    if exact:
        gc.exact()
    return bool(numbers_close(gc.num, pc.num, tolerances(gc), rel_tol=pair_rel_tol(gc, pc))[0])


def test_the_relative_tolerance_follows_what_the_columns_hold():
    c = make_column
    assert pair_rel_tol(c("g", [1.5]), c("p", [1.5])) == REL_TOL == 1e-6            # float vs float: unchanged
    assert pair_rel_tol(c("g", ["1.5"]), c("p", [2])) == REL_TOL                   # text and ints: unchanged
    assert pair_rel_tol(c("g", [D("1.5")]), c("p", [D("1.5")])) == DECIMAL_RESOLUTION == 2.0**-50
    assert pair_rel_tol(c("g", [D("1.5")]), c("p", [2])) == DECIMAL_RESOLUTION    # Decimal vs int
    assert pair_rel_tol(c("g", [D("1.5")]), c("p", ["1.5"])) == DECIMAL_RESOLUTION  # Decimal vs numeric text
    assert pair_rel_tol(c("g", [1.5]), c("p", [D("1.5")])) == FLOAT_NOISE == 1e-12  # either side a float
    assert pair_rel_tol(c("g", [D("1.5"), None]), c("p", [np.float64(1.5)])) == FLOAT_NOISE
    assert pair_rel_tol(c("g", [D("1.5")]), c("p", [1.5]), rel_tol=1e-15) == 1e-15  # never more than asked
    assert tolerances(c("g", [D("1234567.80")]))[0] == pytest.approx(0.005)        # the scale is shown precision


@pytest.mark.parametrize("g, p, exact, expected, why", [
    (D("1234567.80"), D("1234567.00"), False, False, "0.80 off; h = 0.005 (2 decimals); r*|g| = 2.7e-10"),
    (D("1234567.80"), D("1234567.81"), False, False, "a cent off: 0.01 > h = 0.005"),
    (D("1234567.80"), D("1234567.8"), False, True, "the same number at another scale"),
    (D("12.00"), 12, False, True, "NUMERIC 12.00 is the integer 12"),
    (D("2.33"), D("2.3333333333333333"), False, True, "a ROUNDed golden (2 decimals): 0.0033 <= h = 0.005"),
    (D("2.33"), D("2.3433333333333333"), False, False, "0.0133 > h = 0.005"),
    (D("2.3333333333333333"), 2.3333333333333335, True, True,
     "PostgreSQL avg vs SQLite's double: 1.7e-16 <= 1e-12 * 2.33 (the float's own rounding)"),
    (D("2.3333333333333333"), D("2.33333333333333333333"), True, True,
     "one quotient at scale 16 and at scale 20: the same float64 (3.3e-17 apart, under 2**-50 * 2.33 = 2.1e-15)"),
    (D("2.3333333333333333"), 2.333333, True, False,
     "3.3e-7 off > 1e-12 * 2.33 = 2.3e-12 (1e-6 relative, 2.3e-6 wide, accepted it)"),
    (1234567.8, D("1234567.00"), False, False, "a JSON golden written to 1 decimal: 0.80 > h = 0.05"),
    (0.30000000000000004, D("0.3"), True, True, "SQLite's 0.1 + 0.2 against NUMERIC 0.3: 4e-17 <= 3e-13"),
    (D("9007199254740993"), 9007199254740992, False, False, "an integral NUMERIC past 2**53: its digits, exactly"),
    (D("9007199254740993"), 9007199254740993, False, True, "the same identifier"),
    (D("9007199254740993"), "9007199254740993", False, True, "the same identifier as text"),
])
def test_decimal_cells_by_hand(g, p, exact, expected, why):
    gc, pc = make_column("g", [g]), make_column("p", [p])
    if gc.kind == "text" or pc.kind == "text":  # identifiers from 2**53 on compare as their digits
        assert (gc.text[0] == pc.text[0]) is expected, why
    else:
        assert close(g, p, exact=exact) is expected, why


def test_floats_keep_their_rule():
    """Between two floats nothing changed: 1e-6 relative is the rule for binary floating point (DESIGN.md,
    "Tolerance"), so a REAL 1,234,567.0 still meets a REAL 1,234,567.8 (0.8 <= 1.23). SQLite keeps no exact type
    (a NUMERIC(12,2) column holds a REAL): only a Decimal — from DuckDB, PostgreSQL or a Python caller — is exact."""
    assert close(1234567.8, 1234567.0) is True
    assert close(0.1 + 0.2, 0.3, exact=True) is True


def table(golden_rows, pred_rows, question="What is the total price?", col="total"):
    return judge_answer(question, {"kind": "value", "columns": [col], "rows": golden_rows},
                        {"columns": [col], "rows": pred_rows})


def test_verdicts_on_decimal_rows():
    v = table([[D("1234567.80")]], [[D("1234567.00")]])
    assert v.verdict == "no_match" and v.confidence >= 7
    assert "'total' is 1234567, golden 1234567.8" in v.why and "×1 the golden" not in v.why  # no ratio of ~1
    assert table([[D("1234567.80")]], [[D("1234567.8")]]).verdict == "match"
    # a multiset of decimals: the same values twice each, one cent off in one row
    g = [[D("10.05")], [D("10.05")], [D("0.10")]]
    assert table(g, [[D("0.10")], [D("10.05")], [D("10.05")]]).verdict == "match"
    assert table(g, [[D("0.10")], [D("10.05")], [D("10.06")]]).verdict == "no_match"


def test_prose_against_a_decimal_golden():
    """A number stated in text is exact digits: against a Decimal golden only the display precision applies."""
    golden = {"kind": "value", "columns": ["total"], "rows": [[D("1234567.80")]]}
    q = "What is the total price?"
    assert judge_answer(q, golden, {"text": "The total is 1,234,567.80."}).verdict == "match"
    assert judge_answer(q, golden, {"text": "The total is 1,234,567.00."}).verdict == "no_match"


# --- SQLite: a Decimal golden (a Python caller's) against SQLite's REAL ------------------------------------------

@pytest.fixture(scope="module")
def sqlite_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("dec") / "shop.sqlite"
    con = sqlite3.connect(path)
    con.executescript("CREATE TABLE t (name TEXT, price NUMERIC(12, 2));"
                      "INSERT INTO t VALUES ('a', 1234567.80), ('b', 10.05), ('c', 0.10);")
    con.commit()
    con.close()
    with ReadOnlyDatabase(path) as db:
        yield db


@pytest.mark.parametrize("sql, expected, why", [
    ("SELECT price AS total FROM t WHERE name = 'a'", "match", "REAL 1234567.8 vs NUMERIC 1234567.80: 0 apart"),
    ("SELECT price - 0.8 AS total FROM t WHERE name = 'a'", "no_match",
     "REAL 1234567.0 (or ...999): 0.8 off > max(h = 0.005, 1e-12 * 1.2e6 = 1.2e-6); 1e-6 relative accepted it"),
    ("SELECT price + 0.004 AS total FROM t WHERE name = 'a'", "match", "0.004 <= h = 0.005"),
])
def test_sqlite_real_against_a_decimal_golden(sqlite_db, sql, expected, why):
    res = sqlite_db.execute(sql)
    assert type(res.rows[0][0]) is float  # SQLite's NUMERIC affinity stores a fraction as REAL
    v = table([[D("1234567.80")]], [list(r) for r in res.rows])
    assert v.verdict == expected, why


# --- DuckDB: DECIMAL columns ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def duck_db(tmp_path_factory):
    duckdb = pytest.importorskip("duckdb", reason="duckdb is not installed (pip install -e '.[test]' installs it)")
    path = tmp_path_factory.mktemp("dec") / "shop.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE t (name TEXT, price DECIMAL(12, 2), q DECIMAL(18, 3), code DECIMAL(20, 0))")
    con.execute("INSERT INTO t VALUES ('a', 1234567.80, 2.333, 9007199254740993), ('b', 10.05, 1.500, 7), "
                "('c', 0.10, 3.500, 8)")
    con.close()
    with ReadOnlyDatabase(path) as db:
        yield db


@pytest.mark.parametrize("canonical, final, expected, why", [
    ("SELECT price FROM t WHERE name = 'a'", "SELECT price - 0.80 AS price FROM t WHERE name = 'a'", "no_match",
     "DECIMAL 1234567.00 vs 1234567.80: 0.80 off, h = 0 (a computed golden), r = 2**-50 (1e-6 accepted it)"),
    ("SELECT price FROM t WHERE name = 'a'", "SELECT price FROM t WHERE name = 'a'", "match", "the same DECIMAL"),
    ("SELECT price FROM t WHERE name = 'a'", "SELECT CAST(price AS DOUBLE) AS price FROM t WHERE name = 'a'", "match",
     "DOUBLE 1234567.8 is the DECIMAL's nearest double: 0 apart"),
    ("SELECT price FROM t WHERE name = 'a'", "SELECT CAST(price AS DOUBLE) - 0.8 AS price FROM t WHERE name = 'a'",
     "no_match", "DOUBLE 1234567.0: 0.8 > 1e-12 * 1.2e6"),
    ("SELECT SUM(price) AS total FROM t", "SELECT SUM(price) + 0.01 AS total FROM t", "no_match",
     "1234577.96 vs 1234577.95: a cent, exactly"),
    ("SELECT ROUND(q, 2) AS q FROM t WHERE name = 'a'", "SELECT q FROM t WHERE name = 'a'", "match",
     "a ROUNDed golden DECIMAL 2.33 keeps its 2 decimals: 2.333 is 0.003 <= 0.005 off"),
    ("SELECT ROUND(q, 2) AS q FROM t WHERE name = 'a'", "SELECT q + 0.01 AS q FROM t WHERE name = 'a'", "no_match",
     "2.343 is 0.013 > 0.005 off"),
    ("SELECT code FROM t WHERE name = 'a'", "SELECT code - 1 AS code FROM t WHERE name = 'a'", "no_match",
     "DECIMAL(20,0) 9007199254740992 vs ...993: an identifier past 2**53 compares as its digits"),
])
def test_duckdb_decimal_columns(duck_db, canonical, final, expected, why):
    case = {"id": "d", "question": "What is it?", "golden": {"kind": "value", "canonical_query": canonical}}
    res = judge_case(case, {"id": "d", "final_query": final}, db=duck_db)
    v = res.outcome.verdict
    assert v is not None, res.outcome.reason
    assert v.verdict == expected, f"{why}: {v.why}"
    assert all(isinstance(c, str) or not isinstance(c, Decimal) for r in res.materials["golden"]["rows"] for c in r)
