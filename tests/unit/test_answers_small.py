"""The plain-Python small-table paths (goldeval.answers.small) give what the general code gives.

``compare_rows`` against ``rows._compare_rows_full`` and ``pair_columns`` against ``pairing.pair_columns_full``
(the definitions), on random small tables (ints, floats needing tolerance, text with case/space differences,
NULLs, swapped columns, duplicate rows, extra columns, ordered goldens) and hand-made ones.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from goldeval.answers.pairing import pair_columns, pair_columns_full
from goldeval.answers.rows import _compare_rows_full, compare_rows
from goldeval.answers.shapes import table_columns
from goldeval.answers.small import small_pair_by_names, small_pair_columns, small_rows_equal

NAMES = ["name", "Name", "age", "count(*)", "avg(age)", "T1.name", "n_rate", "city", "year", "month", "id"]


def _cell(rng: random.Random, kind: str) -> object:
    if rng.random() < 0.1:
        return None
    if kind == "int":
        return rng.randint(-3, 5)
    if kind == "float":
        return rng.choice([0.5, 1.25, 2.0, 1 / 3, 58.744924, -0.0, 0.0, 100.0])
    return rng.choice(["Joe", "joe", " Joe", "Ann", "ANN", "Bo", "", "1", "02134"])


def _perturb(rng: random.Random, v: object) -> object:
    r = rng.random()
    if r < 0.6:
        return v
    if isinstance(v, float) and r < 0.75:
        return v * (1 + rng.choice([1e-9, 1e-3])) if v else v
    if isinstance(v, int) and r < 0.75:
        return rng.choice([v, float(v), str(v)])
    if isinstance(v, str) and r < 0.75:
        return rng.choice([v.upper(), v.strip(), v + " "])
    if r < 0.8:
        return None
    return v


def _tables(rng: random.Random) -> tuple[list[str], list[list[object]], list[str], list[list[object]]]:
    k = rng.randint(1, 3)
    n = rng.randint(1, 6)
    kinds = [rng.choice(["int", "float", "text"]) for _ in range(k)]
    g_names = rng.sample(NAMES, k)
    g_rows = [[_cell(rng, kd) for kd in kinds] for _ in range(n)]
    if rng.random() < 0.3 and n > 1:
        g_rows[1] = list(g_rows[0])  # duplicate rows
    p_rows = [[_perturb(rng, v) for v in r] for r in g_rows]
    if rng.random() < 0.5:
        rng.shuffle(p_rows)
    p_names = [rng.choice([c, c.upper(), c]) for c in g_names] if rng.random() < 0.8 else rng.sample(NAMES, k)
    if rng.random() < 0.3:  # an extra column
        p_names = p_names + [rng.choice(NAMES)]
        p_rows = [r + [_cell(rng, "int")] for r in p_rows]
    if rng.random() < 0.3:  # swapped columns
        order = list(range(len(p_names)))
        rng.shuffle(order)
        p_names = [p_names[j] for j in order]
        p_rows = [[r[j] for j in order] for r in p_rows]
    if rng.random() < 0.15:
        p_rows = p_rows + [list(p_rows[0])]
    if rng.random() < 0.1:
        p_rows = p_rows[1:]
    return g_names, g_rows, p_names, p_rows


@pytest.mark.parametrize("seed", range(40))
def test_small_paths_equal_the_definitions(seed: int) -> None:
    rng = random.Random(seed)
    used_pair = used_rows = 0
    for _ in range(50):
        g_names, g_rows, p_names, p_rows = _tables(rng)
        rate = [g_names[0]] if rng.random() < 0.1 else []
        gc, pc = table_columns(g_names, g_rows), table_columns(p_names, p_rows)
        full = pair_columns_full(table_columns(g_names, g_rows), table_columns(p_names, p_rows), rate_columns=rate)
        assert pair_columns(gc, pc, rate_columns=rate) == full
        used_pair += small_pair_by_names(gc, pc, rate_columns=rate, rel_tol=1e-6) is not None
        for ordered in (False, True):
            got = compare_rows(gc, pc, full, ordered=ordered)
            want = _compare_rows_full(table_columns(g_names, g_rows), table_columns(p_names, p_rows), full, ordered=ordered)
            assert got == want, (g_names, g_rows, p_names, p_rows, ordered)
            used_rows += small_rows_equal(gc, pc, full.index, full.scale, ordered=ordered) is not None
    assert used_pair and used_rows  # the fast paths were exercised, not only the fallbacks


HAND = [
    # (golden names, golden rows, prediction names, prediction rows)
    (["count(*)"], [[6]], ["count(*)"], [[6]]),
    (["count(*)"], [[6]], ["count(*)"], [[6.0]]),
    (["name", "age"], [["Joe", 30], ["Ann", 25], ["Bo", 41]], ["Name", "Age"], [["Ann", 25], ["Joe", 30], ["Bo", 41]]),
    (["name", "age"], [["Joe", 30], ["Joe", 30]], ["name", "age"], [["Joe", 30], ["Joe", 30]]),
    (["name", "age"], [["Joe", 30], ["Joe", 30]], ["name", "age"], [["Joe", 30], ["Ann", 30]]),
    (["avg(age)"], [[30.5]], ["avg(age)"], [[30.5000000001]]),
    (["x"], [[None]], ["x"], [[None]]),
    (["x"], [[float("inf")]], ["x"], [[float("inf")]]),
    (["x"], [[-0.0]], ["x"], [[0.0]]),
    (["a", "b"], [[1, 2], [2, 1]], ["b", "a"], [[2, 1], [1, 2]]),
    (["a", "b"], [[1, 2]], ["c", "d"], [[1, 2]]),
    (["n_rate"], [[0.5]], ["n_rate"], [[50]]),
    (["name"], [["Joe"]], ["name", "name"], [["Joe", "Joe"]]),
]


@pytest.mark.parametrize("case", HAND, ids=[str(i) for i in range(len(HAND))])
def test_small_paths_hand_made(case: tuple) -> None:
    g_names, g_rows, p_names, p_rows = case
    gc, pc = table_columns(g_names, g_rows), table_columns(p_names, p_rows)
    full = pair_columns_full(table_columns(g_names, g_rows), table_columns(p_names, p_rows))
    assert pair_columns(gc, pc) == full
    for ordered in (False, True):
        assert compare_rows(gc, pc, full, ordered=ordered) == _compare_rows_full(
            table_columns(g_names, g_rows), table_columns(p_names, p_rows), full, ordered=ordered)


def test_small_rows_equal_hand_checked() -> None:
    # Worked by hand: the same two rows in another order are equal as a multiset, not in the asked order.
    gc, pc = table_columns(["a"], [[1], [2]]), table_columns(["a"], [[2], [1]])
    assert small_rows_equal(gc, pc, {0: 0}, {}, ordered=False) == "unordered"
    assert small_rows_equal(gc, pc, {0: 0}, {}, ordered=True) is None
    # An infinity proves nothing (inf never meets inf within tolerance): left to the general code.
    gi, pi = table_columns(["a"], [[float("inf")]]), table_columns(["a"], [[float("inf")]])
    assert small_rows_equal(gi, pi, {0: 0}, {}, ordered=False) is None


@pytest.mark.parametrize("seed", range(10))
def test_check_golden_small_columns_as_numpy(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # gold.check_golden takes a small column's extremes in plain Python; _SMALL = 0 forces the NumPy lines.
    import goldeval.answers.gold as gold

    rng = random.Random(seed)
    names = ["count(*)", "n_rate", "share", "percent", "total", "n_a", "n_b", "name", "age", "rate"]
    for _ in range(60):
        k, n = rng.randint(1, 3), rng.randint(1, 5)
        cn = rng.sample(names, k)
        rows = [[rng.choice([None, -1, 0, -0.0, 0.5, 2, 150, 3.5, float("inf"), "Total", "x"]) for _ in range(k)] for _ in range(n)]
        rate = [cn[0]] if rng.random() < 0.2 else []
        got = gold.check_golden(table_columns(cn, rows), rate_columns=rate)
        monkeypatch.setattr(gold, "_SMALL", 0)
        want = gold.check_golden(table_columns(cn, rows), rate_columns=rate)
        monkeypatch.setattr(gold, "_SMALL", 64)
        assert got == want, (cn, rows)


def test_remembered_name_helpers_equal_the_definitions() -> None:
    # pairing.roles_of / rate_name / name_score are lru-cached pure functions of the names: the same answers as
    # the uncached definitions (values.role_tags, is_rate_name), asked twice (the second answer from the cache).
    from goldeval.answers.pairing import name_score, rate_name, roles_of
    from goldeval.answers.values import is_rate_name, name_tokens, role_tags, roles_conflict

    names = NAMES + ["n_admissions", "admission_count", "pct_share", "count_of_share_holders", "max(x)", "", " Name "]
    for _ in range(2):
        for a in names:
            assert roles_of(a) == role_tags(name_tokens(a)) and isinstance(roles_of(a), frozenset)
            assert rate_name(a) == is_rate_name(a)
            for b in names:
                assert roles_conflict(roles_of(a), roles_of(b)) == roles_conflict(
                    role_tags(name_tokens(a)), role_tags(name_tokens(b)))
                assert name_score(a, b) == name_score.__wrapped__(a, b)


PAIR_NAMES = NAMES + ["count(T1.id)", "max(age)", "pct", "total", "x", "student_id"]
pair_cell = st.one_of(st.none(), st.integers(-2, 4), st.sampled_from([0.5, 1 / 3, 2.0, 50.0, 100.0, -0.0]),
                      st.sampled_from(["Joe", "joe ", "Ann", "1", "2", ""]))


@st.composite
def _pair_tables(draw: st.DrawFn) -> tuple[list[str], list[list[object]], list[str], list[list[object]], list[str]]:
    kg, kp = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    ng = draw(st.integers(0, 5))
    np_ = draw(st.sampled_from([ng, ng, max(ng - 1, 0), ng + 1]))
    g_names = draw(st.lists(st.sampled_from(PAIR_NAMES), min_size=kg, max_size=kg))
    p_names = draw(st.lists(st.sampled_from(PAIR_NAMES + g_names * 3), min_size=kp, max_size=kp))
    g_rows = [draw(st.lists(pair_cell, min_size=kg, max_size=kg)) for _ in range(ng)]
    # Prediction cells: the golden's own cells (in some column and row order) most of the time, else random.
    p_rows = []
    for r in range(np_):
        row = []
        for _ in range(kp):
            if g_rows and draw(st.booleans()):
                row.append(g_rows[draw(st.integers(0, ng - 1))][draw(st.integers(0, kg - 1))] if draw(st.booleans())
                           else g_rows[min(r, ng - 1)][draw(st.integers(0, kg - 1))])
            else:
                row.append(draw(pair_cell))
        p_rows.append(row)
    rate = draw(st.sampled_from([[], [], [g_names[0]]]))
    return g_names, g_rows, p_names, p_rows, rate


@settings(max_examples=1500, deadline=None)
@given(_pair_tables())
def test_small_pair_columns_is_pair_columns_full(case) -> None:
    # The plain-Python pairing of a few columns (small.small_pair_columns) gives the Pairing of the NumPy score
    # matrix and linear_sum_assignment wherever it answers (ties, the names-decide case and more columns: None).
    g_names, g_rows, p_names, p_rows, rate = case
    got = small_pair_columns(table_columns(g_names, g_rows), table_columns(p_names, p_rows), rate_columns=rate, rel_tol=1e-6)
    full = pair_columns_full(table_columns(g_names, g_rows), table_columns(p_names, p_rows), rate_columns=rate)
    if got is not None:
        assert got == full
        assert got.to_dict() == full.to_dict() and list(got.basis) == list(full.basis)  # the same order, too
    assert pair_columns(table_columns(g_names, g_rows), table_columns(p_names, p_rows), rate_columns=rate) == full


@pytest.mark.parametrize("seed", range(20))
def test_small_pair_columns_answers_most_small_tables(seed: int) -> None:
    # The random tables of the test above it, by seed: the plain-Python pairing answers (and equals the
    # definition) on many of them, with each basis the general code gives among its answers.
    rng = random.Random(seed)
    used = 0
    for _ in range(50):
        g_names, g_rows, p_names, p_rows = _tables(rng)
        gc, pc = table_columns(g_names, g_rows), table_columns(p_names, p_rows)
        got = small_pair_columns(gc, pc, rate_columns=[], rel_tol=1e-6)
        full = pair_columns_full(table_columns(g_names, g_rows), table_columns(p_names, p_rows))
        if got is not None:
            used += 1
            assert got == full and got.to_dict() == full.to_dict()
    assert used


PAIR_HAND = [
    # (golden names, rows, prediction names, rows, a basis the pairing gives, or None: left to the general code)
    (["a", "b"], [[1, 5], [2, 6]], ["c", "d"], [[5, 1], [6, 2]], "values"),  # names neutral, columns swapped
    (["age", "id"], [[30, 1], [40, 2]], ["age", "id"], [[1, 30], [2, 40]], "name"),  # names against values
    (["a"], [[1], [2]], ["c"], [[1], [3]], "values (partial)"),
    (["x", "y"], [["Joe", 30]], ["p", "q"], [["Ann", 30]], "values"),  # x unpaired: its one candidate no evidence
    # Ties: two prediction columns hold the golden's values alike, or a golden column is repeated (both copies fit
    # one prediction column as well): linear_sum_assignment's own choice, so the plain path answers None.
    (["a"], [[1], [2]], ["c", "d"], [[1, 1], [2, 2]], None),
    (["id", "name", "id"], [[1, "a", 1], [2, "b", 2]], ["id", "name"], [[1, "a"], [2, "b"]], None),
]


@pytest.mark.parametrize("case", PAIR_HAND, ids=[str(i) for i in range(len(PAIR_HAND))])
def test_small_pair_columns_hand_made(case: tuple) -> None:
    g_names, g_rows, p_names, p_rows, basis = case
    got = small_pair_columns(table_columns(g_names, g_rows), table_columns(p_names, p_rows), rate_columns=[], rel_tol=1e-6)
    full = pair_columns_full(table_columns(g_names, g_rows), table_columns(p_names, p_rows))
    assert pair_columns(table_columns(g_names, g_rows), table_columns(p_names, p_rows)) == full
    if basis is None:
        assert got is None
    else:
        assert got is not None and got == full and got.to_dict() == full.to_dict()
        assert basis in got.basis.values()
