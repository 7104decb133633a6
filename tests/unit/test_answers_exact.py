"""answers.exact and the exact-equality path of the table rule (``table._exact_match``): taken where the prediction
is the golden exactly (columns named alike in order, rows equal cell for cell by type), not taken elsewhere, and
the same verdict record as the general path every time (the general path is the one with the exact path switched
off). Expected values are read off the tables by hand; the verdict texts are the general path's own."""

from __future__ import annotations

import json
import math
import random
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

import goldeval.answers.table as table_rule
from goldeval.answers import ReadOnlyDatabase, judge_answer
from goldeval.answers.case import judge_case
from goldeval.answers.config import AnswerConfig
from goldeval.answers.exact import EXACT_MAX_CELLS, exact_rows, named_in_order

from conftest import SHARED


def _judged(monkeypatch: pytest.MonkeyPatch, run, *, exact: bool) -> tuple[dict, int]:
    """``run()``'s verdict record (a Verdict or CaseOutcome as a plain dict) with the exact path on or off, and how
    many times the exact path answered."""
    real = table_rule._exact_match
    taken = []

    def spy(*a, **k):
        out = real(*a, **k) if exact else None
        taken.append(out is not None)
        return out

    with monkeypatch.context() as m:
        m.setattr(table_rule, "_exact_match", spy)
        got = run()
    return json.loads(json.dumps(got.to_dict(), default=repr)), sum(taken)


def _both(monkeypatch: pytest.MonkeyPatch, run) -> tuple[dict, int]:
    """The record with the exact path, checked equal to the general path's; and whether the exact path answered."""
    fast, taken = _judged(monkeypatch, run, exact=True)
    general, _ = _judged(monkeypatch, run, exact=False)
    assert fast == general
    return fast, taken


def _answer(g_names, g_rows, p_names, p_rows, *, question="Which ones?", **golden):
    gold = {"kind": "value", "columns": g_names, "rows": g_rows, **golden}
    return lambda: judge_answer(question, gold, {"columns": p_names, "rows": p_rows})


# --- answers.exact, both ways ---------------------------------------------------------------------------------

def test_named_in_order_both_ways() -> None:
    assert named_in_order(["count(*)", "Name"], ["COUNT(*)", "name"])           # case differs only: score 1.0
    assert not named_in_order(["Name", "Age"], ["Age", "Name"])                 # namesakes at other positions
    assert not named_in_order(["Name"], ["Name", "Age"])                        # an extra column: not in order
    assert not named_in_order(["count(*)"], ["NumberOfSingers"])               # another name
    assert not named_in_order(["name", "name"], ["name", "name"])               # two namesakes each
    assert not named_in_order(["pass_rate"], ["pass_rate"])                        # a rate name (may be read scaled)
    assert not named_in_order(["share"], ["share"], rate_columns=["share"])     # a declared rate
    assert not named_in_order([], [])


def test_exact_rows_both_ways() -> None:
    assert exact_rows([[1, "a"], [2, "b"]], [[1, "a"], [2, "b"]], 2, ordered=True)
    assert exact_rows([[1, "a"], [2, "b"]], [(2, "b"), (1, "a")], 2, ordered=False)   # a multiset, any order
    assert not exact_rows([[1, "a"], [2, "b"]], [[2, "b"], [1, "a"]], 2, ordered=True)  # the asked order differs
    assert not exact_rows([[1], [1]], [[1], [2]], 1, ordered=False)        # duplicates count
    assert not exact_rows([[1], [1], [2]], [[1], [2], [2]], 1, ordered=False)
    assert not exact_rows([[3]], [[3.0]], 1, ordered=False)                # an integer is not a float here
    assert not exact_rows([[1, 2.0], [2, 1.0]], [[2, 1], [1, 2]], 2, ordered=False)  # nor in another order
    assert not exact_rows([[True]], [[1]], 1, ordered=False)               # a bool is not an int
    assert not exact_rows([["1"]], [[1]], 1, ordered=False)                # text is not a number here
    assert not exact_rows([[None]], [[None]], 1, ordered=False)            # NULL: the general code decides
    nan = float("nan")
    assert not exact_rows([[nan]], [[nan]], 1, ordered=False)              # the same NaN object is no proof
    assert not exact_rows([[float("inf")]], [[float("inf")]], 1, ordered=False)
    assert not exact_rows([], [], 1, ordered=False)                        # an empty golden: the doubts decide
    assert not exact_rows([[1]], [[1], [1]], 1, ordered=False)
    assert not exact_rows([[1, 2]], [[1]], 2, ordered=False)               # a row of another width
    big = [[i] for i in range(EXACT_MAX_CELLS + 1)]
    assert not exact_rows(big, big, 1, ordered=False)                      # past the bound: vectorised code


# --- the table rule: taken, not taken, the same record -------------------------------------------------------

def test_taken_unordered_rows_in_another_order(monkeypatch: pytest.MonkeyPatch) -> None:
    got, taken = _both(monkeypatch, _answer(["Name", "count(*)"], [["France", 4], ["Netherlands", 1]],
                                            ["name", "COUNT(*)"], [["Netherlands", 1], ["France", 4]]))
    assert taken == 1
    assert (got["verdict"], got["confidence"], got["needs_human"]) == ("match", 10, False)
    assert got["why"] == "Every golden row (2) is located under the pairing Name→name, count(*)→COUNT(*)."
    assert got["details"]["pairing"]["basis"] == {"Name": "name+values", "count(*)": "name+values"}
    assert got["details"]["rows"] == {"order": None, "top_n": None}
    assert got["located"] == {"golden_rows": 2, "found": 2, "missing": [], "extra": 0}


def test_taken_ordered_rows_in_the_same_order(monkeypatch: pytest.MonkeyPatch) -> None:
    got, taken = _both(monkeypatch, _answer(["Name", "Age"], [["Joe", 52], ["Ann", 43]], ["Name", "Age"],
                                            [["Joe", 52], ["Ann", 43]], ordered=True))
    assert taken == 1
    assert got["verdict"] == "match" and got["details"]["rows"]["order"] == "same"


def test_not_taken_ordered_rows_in_another_order(monkeypatch: pytest.MonkeyPatch) -> None:
    # Ages 52, 43 asked in that order, answered 43, 52: not the order asked for (the general path's no_match).
    got, taken = _both(monkeypatch, _answer(["Name", "Age"], [["Joe", 52], ["Ann", 43]], ["Name", "Age"],
                                            [["Ann", 43], ["Joe", 52]], ordered=True,
                                            canonical_query="SELECT Name, Age FROM t ORDER BY Age DESC"))
    assert taken == 0
    assert got["verdict"] == "no_match" and got["details"]["rows"]["order"] == "different"


def test_not_taken_integer_against_float(monkeypatch: pytest.MonkeyPatch) -> None:
    # 3 and 3.0 are the same number (DESIGN "Tolerance"): the general path's match, not the exact path's.
    got, taken = _both(monkeypatch, _answer(["count(*)"], [[3]], ["count(*)"], [[3.0]], question="How many?"))
    assert taken == 0
    assert got["verdict"] == "match"


@pytest.mark.parametrize("g_names, g_rows, p_names, p_rows", [
    (["Name"], [["Joe"], [None]], ["Name"], [["Joe"], [None]]),                 # a NULL
    (["pass_rate"], [[0.5]], ["pass_rate"], [[0.5]]),                          # a rate column
    (["Name"], [["Joe"]], ["Name", "Age"], [["Joe", 3]]),                      # an extra column
    (["Name", "Age"], [["Joe", 3]], ["Age", "Name"], [[3, "Joe"]]),             # columns in another order
    (["count(*)"], [[6]], ["NumberOfSingers"], [[6]]),                         # named otherwise
    (["Name"], [["Joe"], ["Ann"]], ["Name"], [["Joe"], ["Joe"]]),                # another multiset
])
def test_not_taken_elsewhere(monkeypatch: pytest.MonkeyPatch, g_names, g_rows, p_names, p_rows) -> None:
    _, taken = _both(monkeypatch, _answer(g_names, g_rows, p_names, p_rows))
    assert taken == 0


def test_top_n_golden_not_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    _, taken = _both(monkeypatch, _answer(["Name", "Age"], [["Joe", 52]], ["Name", "Age"], [["Joe", 52]],
                                          top_n={"n": 1, "by": "Age", "direction": "desc"}))
    assert taken == 0


# --- with a database: the golden doubts still run on a match --------------------------------------------------

@pytest.fixture
def dirty(tmp_path: Path):
    # 'Asia' stored three ways (as in test_answers_fragile): a golden on continent = 'Asia' is data-fragile.
    path = tmp_path / "d.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE country (id INTEGER, name TEXT, continent TEXT)")
    con.executemany("INSERT INTO country VALUES (?, ?, ?)", [
        (1, "Afghanistan", "Asia"), (2, "China", "Asia "), (3, "Japan", "asia"), (4, "France", "Europe")])
    con.commit()
    con.close()
    d = ReadOnlyDatabase(path)
    yield d
    d.close()


def _case(db, canonical: str, final_query: str, question: str = "Which countries are in Asia?"):
    case = {"id": "q", "question": question, "golden": {"kind": "value", "canonical_query": canonical}}
    return lambda: judge_case(case, {"id": "q", "final_query": final_query}, db=db, config=AnswerConfig()).outcome


def test_fragile_golden_reproduced_is_not_a_plain_pass(monkeypatch: pytest.MonkeyPatch, dirty) -> None:
    # The prediction is the golden's own query: one row (Afghanistan), equal cell for cell, so the table rule's
    # exact path answers; the data doubt still runs (a dirty compared column) and finds 3 rows once 'Asia' is
    # trimmed and case-folded: the golden is doubted, as on the general path.
    q = "SELECT name FROM country WHERE continent = 'Asia'"
    got, taken = _both(monkeypatch, _case(dirty, q, q))
    assert taken >= 1
    assert got["gold_status"] == "suspect" and "trimmed" in got["gold_note"]


def test_literal_that_misses_the_data_not_taken(monkeypatch: pytest.MonkeyPatch, dirty) -> None:
    # 'ASIA' meets no stored value (SQLite's = is case-sensitive): an empty golden, never taken by the exact path
    # (no row to prove), and the literal doubt names it, as on the general path.
    q = "SELECT name FROM country WHERE continent = 'ASIA'"
    got, taken = _both(monkeypatch, _case(dirty, q, q))
    assert taken == 0
    assert got["gold_status"] in ("suspect", "verified_wrong") and "ASIA" in got["gold_note"]


def test_clean_match_taken_and_verified(monkeypatch: pytest.MonkeyPatch, dirty) -> None:
    q = "SELECT name FROM country WHERE continent = 'Europe'"
    got, taken = _both(monkeypatch, _case(dirty, q, "SELECT Name FROM country WHERE continent = 'Europe'",
                                          question="Which countries are in Europe?"))
    assert taken == 1
    assert (got["verdict"], got["confidence"], got["gold_status"]) == ("match", 10, "verified")


# --- random tables and the real Spider rows: the same record either way ---------------------------------------

_NAMES = ["name", "Name", "age", "count(*)", "avg(age)", "T1.name", "n_rate", "city", "year", "id"]


def _cell(rng: random.Random, kind: str) -> object:
    if rng.random() < 0.05:
        return None
    if kind == "int":
        return rng.randint(-3, 5)
    if kind == "float":
        return rng.choice([0.5, 1.25, 2.0, 1 / 3, -0.0, 0.0, 100.0])
    return rng.choice(["Joe", "joe", " Joe", "Ann", "", "1", "02134"])


@pytest.mark.parametrize("seed", range(12))
def test_random_tables_same_record(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    rng = random.Random(seed)
    taken_any = 0
    for _ in range(30):
        k, n = rng.randint(1, 3), rng.randint(1, 5)
        kinds = [rng.choice(["int", "float", "text"]) for _ in range(k)]
        g_names = rng.sample(_NAMES, k)
        g_rows = [[_cell(rng, kd) for kd in kinds] for _ in range(n)]
        p_rows = [list(r) for r in g_rows]
        if rng.random() < 0.5:
            rng.shuffle(p_rows)
        if rng.random() < 0.2:
            r, c = rng.randrange(n), rng.randrange(k)
            v = p_rows[r][c]
            p_rows[r][c] = float(v) if type(v) is int else v
        p_names = [rng.choice([c, c.upper()]) for c in g_names]
        _, taken = _both(monkeypatch, _answer(g_names, g_rows, p_names, p_rows, ordered=rng.random() < 0.3))
        taken_any += taken
    assert taken_any  # the exact path was exercised, not only the general one


SPIDER = SHARED / "data" / "spider"


@pytest.mark.skipif(not (SPIDER / "database").is_dir(), reason="../shared/data/spider is not there")
def test_spider_rows_same_record(monkeypatch: pytest.MonkeyPatch) -> None:
    # The first 120 DIN-SQL rows, each judged with its database (examples/spider's golden and final query).
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "spider"))
    from judge_spider import golden_spec

    rows = [json.loads(x) for x in (SPIDER / "spider_dinsql-gpt4_cases.jsonl").read_text(encoding="utf-8").splitlines()[:120]]
    dbs: dict[str, ReadOnlyDatabase] = {}
    taken_all = 0
    try:
        for r in rows:
            db = dbs.get(r["db_id"]) or dbs.setdefault(
                r["db_id"], ReadOnlyDatabase(SPIDER / "database" / r["db_id"] / f"{r['db_id']}.sqlite"))
            case = {"id": r["id"], "question": r["question"], "golden": golden_spec(r)}
            _, taken = _both(monkeypatch, lambda: judge_case(case, {"id": r["id"], "final_query": r["pred_sql"]}, db=db,
                                                            config=AnswerConfig()).outcome)
            taken_all += taken
    finally:
        for d in dbs.values():
            d.close()
    assert taken_all >= 50  # most of these rows are exact matches (by hand: the DIN-SQL file's exact-match rows)


# --- exact_rows against the row-by-row reading it replaced (issue 31 item 5, hC) --------------------------------

def _reference_exact_rows(golden_rows, pred_rows, width, *, ordered):
    """exact_rows as first written (h27, row by row and cell by cell in Python): the definition the list-at-once
    version must agree with on every input."""
    n = len(golden_rows)
    if n == 0 or len(pred_rows) != n or width < 1 or n * width > EXACT_MAX_CELLS:
        return False
    for rows in (golden_rows, pred_rows):
        for r in rows:
            if type(r) not in (list, tuple) or len(r) != width:
                return False
    exact_set = {int, str, float}

    def column_type(rows, j):
        t = type(rows[0][j])
        if t not in exact_set:
            return None
        for r in rows:
            x = r[j]
            if type(x) is not t or (t is float and not math.isfinite(x)):
                return None
        return t

    same_place = True
    for g, p in zip(golden_rows, pred_rows):
        types = tuple(map(type, g))
        if types != tuple(map(type, p)) or not exact_set.issuperset(types) or tuple(g) != tuple(p):
            same_place = False
            break
        if float in types and not all(math.isfinite(x) for x in g if type(x) is float):
            return False
    if same_place:
        return True
    if ordered:
        return False
    for j in range(width):
        t = column_type(golden_rows, j)
        if t is None or column_type(pred_rows, j) is not t:
            return False
    return dict.__eq__(Counter(map(tuple, golden_rows)), Counter(map(tuple, pred_rows)))


class _Odd(list):
    """A list subclass: not a row the exact path reads."""


_NAN = float("nan")
#: Hand-made pairs of (golden, prediction, width), each an edge the list-at-once reading must treat as the reference.
_EDGE_ROWS = [
    ([[1, "a"], [2, "b"]], [[1, "a"], [2, "b"]], 2),
    ([[1, "a"], [2, "b"]], [(2, "b"), (1, "a")], 2),
    ([[1], [1]], [[1], [2]], 1),
    ([[3]], [[3.0]], 1),
    ([[3.0]], [[3]], 1),
    ([[1, 2.0], [2, 1.0]], [[2, 1], [1, 2]], 2),
    ([[True]], [[1]], 1),
    ([[1]], [[True]], 1),
    ([["1"]], [[1]], 1),
    ([[None]], [[None]], 1),
    ([[_NAN]], [[_NAN]], 1),
    ([[1.0], [_NAN]], [[1.0], [_NAN]], 1),
    ([[1.0], [_NAN]], [[_NAN], [1.0]], 1),
    ([[2.0], [1.0]], [[1.0], [float("inf")]], 1),
    ([[float("inf")], [1.0]], [[1.0], [float("inf")]], 1),
    ([[1, "x"], [2, float("-inf")]], [[2, float("-inf")], [1, "x"]], 2),
    ([[-0.0]], [[0.0]], 1),
    ([["é"], ["Ω≈ç"], ["😀"]], [["😀"], ["é"], ["Ω≈ç"]], 1),
    ([["a\\0b"], ["a\x00b"]], [["a\x00b"], ["a\\0b"]], 1),
    ([["Joe"], ["joe"]], [["joe"], ["Joe "]], 1),
    ([(1, 2)], [[1, 2]], 2),
    ([_Odd([1])], [[1]], 1),
    ([[1]], [_Odd([1])], 1),
    ([[1, 2]], [[1]], 2),
    ([[1], [2]], [[1], [2, 3]], 1),
    ([[1]], [[1], [1]], 1),
    ([], [], 1),
    ([[1]], [[1]], 0),
    ([[b"x"]], [[b"x"]], 1),
    ([[1, 2]], [[1, [2]]], 2),
    ([[1, 2]], [[1, {"a": 2}]], 2),
    ([[1, "a"], [1, "a"], [2, "b"]], [[2, "b"], [1, "a"], [1, "a"]], 2),
    ([[1, "a"], [1, "a"], [2, "b"]], [[2, "b"], [2, "b"], [1, "a"]], 2),
    ([[2 ** 70]], [[2 ** 70]], 1),
    ([[2 ** 70]], [[float(2 ** 70)]], 1),
]


@pytest.mark.parametrize("ordered", [False, True])
def test_exact_rows_is_the_row_by_row_reading_on_edges(ordered: bool) -> None:
    for g, p, w in _EDGE_ROWS:
        assert exact_rows(g, p, w, ordered=ordered) is _reference_exact_rows(g, p, w, ordered=ordered), (g, p, w)
    # Not all False: the edges hold proofs both ways (hand-read: the first two unordered, the first ordered).
    assert exact_rows(*_EDGE_ROWS[0], ordered=ordered)
    assert exact_rows(*_EDGE_ROWS[1], ordered=False) and not exact_rows(*_EDGE_ROWS[1], ordered=True)
    assert not exact_rows(*_EDGE_ROWS[10], ordered=ordered)  # a NaN: no proof


@pytest.mark.parametrize("seed", range(8))
def test_exact_rows_is_the_row_by_row_reading_on_random_tables(seed: int) -> None:
    rng = random.Random(seed)
    pool = [0, 1, -1, 2 ** 63, 1.0, 0.5, -0.0, float("inf"), _NAN, "a", "A", " a", "", "ü", None, True, False, b"a"]
    outcomes = Counter()
    for _ in range(400):
        k, n = rng.randint(1, 3), rng.randint(1, 6)
        cols = [rng.sample(pool, 3) for _ in range(k)]
        g = [[rng.choice(cols[j]) for j in range(k)] for _ in range(n)]
        p = [list(r) for r in g]
        if rng.random() < 0.6:
            rng.shuffle(p)
        if rng.random() < 0.4:
            r, c = rng.randrange(n), rng.randrange(k)
            p[r][c] = rng.choice(pool)
        if rng.random() < 0.3:
            p = [tuple(r) for r in p]
        if rng.random() < 0.05:
            p = p[:-1]
        ordered = rng.random() < 0.4
        got = exact_rows(g, p, k, ordered=ordered)
        assert got is _reference_exact_rows(g, p, k, ordered=ordered), (g, p, k, ordered)
        outcomes[got] += 1
    assert outcomes[True] and outcomes[False]  # both answers reached
