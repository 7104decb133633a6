"""The speed paths of issue 15 give what the plain definitions give (no timing here).

Each check compares a fast path with the straightforward computation it replaces: ``argsort_ids`` with NumPy's
stable argsort, ``hash_groups`` with ``np.unique(axis=0)``, ``stack_pairs`` with a dictionary of stacks (its
docstring's rule), ``Verdict.to_dict`` with ``dataclasses.asdict``, the pass rate over outcomes with the pass rate
over their dicts, and the rounded-key pairing of rows with the bucketed matching.
"""

from __future__ import annotations

from collections import Counter, defaultdict, namedtuple
from dataclasses import asdict

import numpy as np
import pytest

from goldeval.answers import judge_answer
from goldeval.answers.matching import argsort_ids, hash_groups, stack_pairs, stack_rows
from goldeval.verdict import CaseOutcome, Verdict, pass_rate


@pytest.mark.parametrize("seed", range(5))
def test_argsort_ids_is_the_stable_argsort(seed):
    rng = np.random.default_rng(seed)
    for n, top in ((0, 1), (1, 1), (7, 3), (1000, 5), (5000, 10**6)):
        ids = rng.integers(0, top, n)
        assert np.array_equal(argsort_ids(ids, top), np.argsort(ids, kind="stable"))
    # too wide to pack: the plain argsort
    ids = rng.integers(0, 2**40, 300)
    assert np.array_equal(argsort_ids(ids, 2**40), np.argsort(ids, kind="stable"))


def _partition(ids):
    return sorted(sorted(np.flatnonzero(ids == g).tolist()) for g in np.unique(ids))


@pytest.mark.parametrize("seed", range(5))
def test_hash_groups_groups_equal_rows(seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, (400, 4)).astype(np.int64)
    b = rng.integers(-2, 2, (300, 4)).astype(np.int64)
    keys = np.concatenate([a, b])
    _, ref = np.unique(keys, axis=0, return_inverse=True)
    assert _partition(hash_groups(keys)) == _partition(ref.reshape(-1))
    assert _partition(hash_groups(stack_rows(a, b))) == _partition(ref.reshape(-1))  # column-by-column layout


def test_stack_pairs_follows_the_stack_rule():
    rng = np.random.default_rng(3)
    g = rng.integers(0, 4, (500, 2)).astype(np.int64)
    p = rng.integers(0, 4, (450, 2)).astype(np.int64)
    stacks = defaultdict(list)
    for j, row in enumerate(map(tuple, p.tolist())):
        stacks[row].append(j)
    ref = {}
    for i, row in enumerate(map(tuple, g.tolist())):
        if stacks[row]:
            ref[i] = stacks[row].pop()  # the first golden row takes the last prediction row, and so on
    a, b = stack_pairs(g, p)
    assert a.tolist() == sorted(ref) and b.tolist() == [ref[i] for i in sorted(ref)]


def test_verdict_to_dict_equals_asdict_and_is_a_copy():
    NT = namedtuple("NT", "a b")
    v = Verdict("near_match", 7, False, "why", {"a": "b", "c": None}, located={"golden_rows": 2, "missing": [{"x": 1.5}]},
                details={"x": [1, (2, 3), {"y": Counter(a=1)}], "nt": NT(1, [2]), "n": np.int64(3), "s": {"k": 1}})
    d = v.to_dict()
    assert d == asdict(v) and list(d) == list(asdict(v))
    d["details"]["x"].append(9)
    d["located"]["missing"][0]["x"] = 0
    assert v.details["x"] == [1, (2, 3), {"y": Counter(a=1)}] and v.located["missing"] == [{"x": 1.5}]


def test_pass_rate_over_outcomes_equals_pass_rate_over_their_dicts():
    outs = [CaseOutcome("a", "scored", Verdict("match", 9, False, "w")),
            CaseOutcome("b", "scored", Verdict("no_match", 8, False, "w")),
            CaseOutcome("c", "scored", Verdict("match", 5, True, "w")),
            CaseOutcome("d", "scored", Verdict("near_match", 7, False, "w")),
            CaseOutcome("e", "scored", Verdict("match", 9, False, "w", gold_status="verified_wrong")),
            CaseOutcome("f", "unscored", reason="query failed")]
    assert pass_rate(outs) == pass_rate([o.to_dict() for o in outs])
    assert pass_rate(outs).rate == 0.5  # 1 match, 1 no_match decided; the other four counted beside


def test_the_class_of_one_record_is_the_count_pass_rate_gives_it():
    # The judge scorer counts each record by pass_rate_class (one call) instead of pass_rate([record]).to_dict():
    # the class must be the one count that pass_rate of that record alone sets, for every kind of record.
    from goldeval.answers.scorer import _verdict_class
    from goldeval.verdict import pass_rate_class

    outs = [CaseOutcome("a", "scored", Verdict("match", 9, False, "w")),
            CaseOutcome("b", "scored", Verdict("no_match", 8, False, "w")),
            CaseOutcome("c", "scored", Verdict("match", 5, True, "w")),
            CaseOutcome("d", "scored", Verdict("near_match", 7, False, "w")),
            CaseOutcome("e", "scored", Verdict("no_match", 9, False, "w", gold_status="verified_wrong")),
            CaseOutcome("g", "scored", Verdict("needs_human", None, True, "w")),
            CaseOutcome("f", "unscored", reason="query failed")]
    recs = [o.to_dict() for o in outs] + [{"status": "scored", "verdict": "odd"}, {"status": "scored"}, {}]
    keys = ("match", "no_match", "near_match", "needs_human", "unscored", "verified_wrong")
    for r in recs + outs:
        pr = pass_rate([r]).to_dict()
        assert [k for k in keys if pr[k]] == [pass_rate_class(r)]
    for r in recs:
        assert _verdict_class(r) == pass_rate_class(r)


def test_rounded_keys_pair_tied_rows_that_the_sorted_order_misaligns():
    # Worked by hand: the golden 1.25 shows two decimals, so 1.246 and 1.254 both meet it (half-unit 0.005); the
    # rows tied at 1.25 differ in the second column, and sorting the prediction by its unrounded first column puts
    # them in the other order. Every row is there within tolerance: match.
    golden = {"kind": "value", "columns": ["a", "b"], "rows": [[1.25, 3], [1.25, 7], [2.5, 1]]}
    pred = {"columns": ["a", "b"], "rows": [[1.246, 7], [1.254, 3], [2.5, 1]]}
    v = judge_answer("q", golden, pred)
    assert v.verdict == "match" and v.located["found"] == 3
    off = {"columns": ["a", "b"], "rows": [[1.244, 7], [1.254, 3], [2.5, 1]]}  # 1.244 is 0.006 from 1.25: outside
    assert judge_answer("q", golden, off).verdict == "no_match"


_fast = pytest.importorskip("goldeval._fast")


def _contained_numpy(ps, lo, hi, weight, rel_tol):
    # The NumPy definition in goldeval.answers.pairing._numeric_containment.
    if not (lo.size and ps.size):
        return 0
    idx = np.searchsorted(ps, lo, side="left")
    cand = ps[np.minimum(idx, ps.size - 1)]
    with np.errstate(invalid="ignore"):
        ok = (idx < ps.size) & (cand <= hi + rel_tol * np.abs(cand))
    return int(ok.sum()) if weight is None else int(weight[ok].sum())


@pytest.mark.parametrize("seed", range(8))
def test_sorted_contained_is_the_searchsorted_definition(seed):
    rng = np.random.default_rng(seed)
    for n, m in ((0, 5), (5, 0), (1, 1), (50, 7), (2000, 3000), (3000, 40)):
        # Values on a coarse grid (many exact ties and neighbours within tolerance), infinities and -0.0 among them.
        ps = np.sort(np.concatenate([rng.integers(-20, 20, m) / 4.0, [np.inf, -np.inf, -0.0][: m % 4]]))
        x = rng.integers(-22, 22, n) / 4.0
        if n > 3:
            x[:3] = [np.inf, -np.inf, 0.0]
        half = rng.choice([0.0, 0.05, 0.125, 0.3], n)
        rel = float(rng.choice([0.0, 1e-6, 0.01]))
        with np.errstate(invalid="ignore"):
            lim = np.maximum(rel * np.abs(x) * (1 + 1e-9), half)
            lo, hi = x - lim, x + lim  # NaN where x is infinite and lim too: never found
        if seed % 2:
            order = np.argsort(x, kind="stable")  # sorted needles (as the pairing passes them), or scattered
            lo, hi = lo[order], hi[order]
        w = rng.integers(1, 5, n)
        for weight in (None, w):
            assert _fast.sorted_contained(ps, lo, hi, weight, rel) == _contained_numpy(ps, lo, hi, weight, rel)


def _common_numpy(a, b):
    # The NumPy definition in goldeval.answers.pairing.multiset_share.
    ua, ca = np.unique(a, return_counts=True)
    ub, cb = np.unique(b, return_counts=True)
    if not ub.size:
        return 0
    ib = np.minimum(np.searchsorted(ub, ua), ub.size - 1)
    common = ub[ib] == ua
    return int(np.minimum(ca[common], cb[ib[common]]).sum())


@pytest.mark.parametrize("seed", range(8))
def test_common_min_count_is_the_unique_counts_definition(seed):
    rng = np.random.default_rng(seed)
    for n, m in ((0, 0), (0, 4), (4, 0), (1, 1), (300, 200), (5000, 5000)):
        a = np.sort(np.concatenate([rng.integers(-5, 5, n).astype(float), [np.inf, -0.0, -np.inf][: n % 4]]))
        b = np.sort(np.concatenate([rng.integers(-4, 6, m).astype(float), [0.0, np.inf][: m % 3]]))
        assert _fast.common_min_count(a, b) == _common_numpy(a, b)
        assert _fast.common_min_count(b, a) == _common_numpy(b, a)


def test_fast_kernels_refuse_other_buffers():
    with pytest.raises(TypeError, match="float64"):
        _fast.sorted_contained(np.arange(3), np.zeros(3), np.zeros(3), None, 0.0)  # int64 where float64 is needed
    with pytest.raises(TypeError, match="int64"):
        _fast.sorted_contained(np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3), 0.0)
    with pytest.raises(ValueError, match="same length"):
        _fast.sorted_contained(np.zeros(3), np.zeros(3), np.zeros(2), None, 0.0)
    with pytest.raises(TypeError, match="float64"):
        _fast.common_min_count(np.zeros((2, 2)), np.zeros(2))


@pytest.mark.parametrize("seed", range(4))
def test_pairing_is_the_same_without_the_c_kernels(seed, monkeypatch):
    from goldeval.answers import pairing as pairing_mod
    from goldeval.answers.values import make_column

    rng = np.random.default_rng(seed)
    n = 700  # past the 256-row sample: the sampled estimate and the full containment both run
    cols = {"a_rate": rng.integers(0, 100, n) / 100.0, "b": rng.integers(0, 10, n).astype(float),
            "c": np.round(rng.uniform(0, 50, n), 2), "d": rng.integers(0, 10, n).astype(float)}
    golden = [make_column(k, v.tolist()) for k, v in cols.items()]
    # The prediction: the rate as a percentage, b and d swapped in place, c unrounded, one NULL.
    pred_vals = {"a_rate": cols["a_rate"] * 100, "x": cols["d"], "y": cols["b"], "c": cols["c"] + rng.uniform(-0.004, 0.004, n)}
    pred = [make_column(k, [None if i == 3 else v for i, v in enumerate(vals.tolist())]) for k, vals in pred_vals.items()]
    fast = pairing_mod.pair_columns(golden, pred).to_dict()
    shares = [(pairing_mod.value_agreement(g, p, rate=True), pairing_mod.multiset_share(g, p)) for g in golden for p in pred]
    from goldeval.answers import column_agreement as agreement_mod  # where the kernels are called (split from pairing)

    monkeypatch.setattr(agreement_mod, "_fast_sorted_contained", None)
    monkeypatch.setattr(agreement_mod, "_fast_common_min_count", None)
    golden = [make_column(g.name, g.raw) for g in golden]  # fresh columns: nothing cached by the C path
    pred = [make_column(p.name, p.raw) for p in pred]
    assert pairing_mod.pair_columns(golden, pred).to_dict() == fast
    assert [(pairing_mod.value_agreement(g, p, rate=True), pairing_mod.multiset_share(g, p)) for g in golden for p in pred] == shares


@pytest.mark.parametrize("cells", [
    [1, 2.5, None, -3, 0.0, -0.0, float("nan"), float("inf"), 2**53 - 1, -(2**53 - 1), 1e300],
    [None, None], [7], [1.5, float("nan")], [2**53, 1], [-(2**60), 2.0], [2**70], [True, 1], [1, "2"],
    [np.float64(1.5), 2], [1, None, 3.25] * 50,
])
def test_make_column_is_the_same_without_the_c_typing(cells, monkeypatch):
    from goldeval.answers import values as values_mod

    def fields(c):
        return (c.kind, c.n, c.null.tolist(), None if c.num is None else c.num.tobytes(), c.text.tolist(), c.binary,
                c.decimal, c.percent, c.n_numberlike, list(c.raw), c.decimals.tolist())

    col = values_mod.make_column("x", cells)
    assert col._types in (None, set(map(type, cells)))  # the type set the C typing hands to the decimals
    fast = fields(col)
    monkeypatch.setattr(values_mod, "_fast_fill_numbers", None)
    assert fields(values_mod.make_column("x", cells)) == fast


def test_fill_numbers_writes_the_float_array_numpy_makes():
    cells = [3, None, -2.75, 0, 2**53 - 1, float("-inf")]
    out = np.empty(len(cells))
    assert _fast.fill_numbers(cells, out) == 1 | 4 | 8  # float, int and None cells; no int from 2**53 on
    assert out.tobytes() == np.array(cells, dtype=float).tobytes()
    assert _fast.fill_numbers(tuple(cells[:2] + [2**53]), np.empty(3)) == 2 | 4 | 8
    assert _fast.fill_numbers([0.5, 1.5], np.empty(2)) == 1
    assert _fast.fill_numbers([1, True], np.empty(2)) == -1  # a bool is not a plain number here
    with pytest.raises(TypeError, match="as long as cells"):
        _fast.fill_numbers([1, 2], np.empty(3))


@pytest.mark.parametrize("seed", range(6))
def test_pairing_by_names_is_the_full_assignment(seed, monkeypatch):
    # When every golden column has one prediction column of its name holding all its values, the pairing computes
    # only those value agreements; the full k x k computation must give the same pairing, in every field.
    from goldeval.answers import pairing as pairing_mod
    from goldeval.answers.values import make_column

    rng = np.random.default_rng(seed)
    n = 600
    g = {"n_visits": rng.integers(0, 10, n), "ward": rng.choice(["a", "b", "c"], n), "share_rate": rng.integers(0, 100, n) / 100,
         "score": np.round(rng.uniform(0, 5, n), 2), "other": rng.integers(0, 10, n)}
    p = {"ward": g["ward"], "other": g["n_visits"] if seed % 2 else g["other"],  # labels swapped (same domain), or not
         "n_visits": g["other"] if seed % 2 else g["n_visits"], "share_rate": g["share_rate"] * 100,
         "score": g["score"] + rng.uniform(-0.004, 0.004, n), "extra": rng.integers(0, 10, n)}
    if seed >= 4:
        p["score"] = rng.uniform(0, 5, n)  # the named column holds other values: the full computation runs
    order = rng.permutation(list(p))
    golden = [make_column(k, v.tolist()) for k, v in g.items()]
    pred = [make_column(k, p[k].tolist()) for k in order]
    fast = pairing_mod.pair_columns(golden, pred)
    monkeypatch.setattr(pairing_mod, "_named_partners", lambda names, conflict: None)
    golden = [make_column(c.name, c.raw) for c in golden]
    pred = [make_column(c.name, c.raw) for c in pred]
    full = pairing_mod.pair_columns(golden, pred)
    assert fast.to_dict() == full.to_dict() and fast.alternatives == full.alternatives


@pytest.mark.parametrize("seed", range(40))
def test_pairing_by_names_returns_the_assignment_on_small_tables(seed, monkeypatch):
    # Spider-sized answers (1-20 rows, 1-4 columns, names as SQL prints them): when the names decide the pairing,
    # pair_columns returns those pairs without the score matrix and linear_sum_assignment; the full computation
    # (the names shortcut disabled) must give the same Pairing, every field and the order of its dicts.
    from goldeval.answers import pairing as pairing_mod
    from goldeval.answers.values import make_column

    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(1, 21))
    pool = {"count(*)": rng.integers(0, 5, n).tolist(), "Name": rng.choice(["Joe", "Ann", "Li"], n).tolist(),
            "T1.age": rng.integers(20, 60, n).tolist(), "avg(weight)": np.round(rng.uniform(1, 9, n), 2).tolist(),
            "rate": (rng.integers(0, 100, n) / 100).tolist(), "id": rng.integers(1, 4, n).tolist()}
    k = int(rng.integers(1, 5))
    names = [str(x) for x in rng.choice(list(pool), k, replace=False)]
    golden = [make_column(c, pool[c]) for c in names]
    spelled = {"count(*)": "COUNT(*)", "Name": "name", "T1.age": "age", "avg(weight)": "avg(weight)", "rate": "rate", "id": "id"}
    pred_cols = [(spelled[c], list(pool[c])) for c in names]
    if seed % 3 == 0:
        pred_cols.append(("extra", rng.integers(0, 5, n).tolist()))
    if seed % 5 == 1:
        pred_cols[0] = (pred_cols[0][0], [None] * n)  # the named column holds other values: the full path runs
    if seed % 7 == 2:
        pred_cols = [(c, v[::-1]) for c, v in pred_cols]  # same multisets, other row order
    order = rng.permutation(len(pred_cols))
    pred = [make_column(pred_cols[i][0], pred_cols[i][1]) for i in order]
    fast = pairing_mod.pair_columns(golden, pred)
    monkeypatch.setattr(pairing_mod, "_named_partners", lambda names, conflict: None)
    full = pairing_mod.pair_columns([make_column(c.name, c.raw) for c in golden], [make_column(c.name, c.raw) for c in pred])
    assert fast.to_dict() == full.to_dict() and fast.alternatives == full.alternatives
    assert list(fast.basis.items()) == list(full.basis.items()) and list(fast.index.items()) == list(full.index.items())
    assert list(fast.scale.items()) == list(full.scale.items()) and list(fast.agreement.items()) == list(full.agreement.items())


@pytest.mark.parametrize("seed", range(30))
def test_small_int_columns_agree_as_the_full_computation_says(seed, monkeypatch):
    # value_agreement answers (1.0, 1.0) at once for two small columns of the same Python ints; with that
    # shortcut off, the NumPy computation must give the same (share, scale) on every pair, equal multisets or not,
    # read as a rate or not (a rate also tries x100 and /100).
    from goldeval.answers import column_agreement as agreement_mod
    from goldeval.answers import pairing as pairing_mod
    from goldeval.answers.values import make_column

    rng = np.random.default_rng(300 + seed)
    n = int(rng.integers(1, 70))
    g = rng.integers(-3, 6, n).tolist()
    kinds = [list(g), list(rng.permutation(g).tolist()), rng.integers(-3, 6, n).tolist(), g[:-1] + [g[-1] + 1],
             [float(x) for x in g], g[:-1] + [None], [x * 100 for x in g], [True] * n, g + [1]]
    taken = 0
    for vals in kinds:
        for rate in (False, True):
            gc, pc = make_column("n", g), make_column("n", vals)
            fast = pairing_mod.value_agreement(gc, pc, rate=rate)
            taken += pairing_mod.same_small_ints(gc, pc)
            with monkeypatch.context() as m:
                m.setattr(agreement_mod, "same_small_ints", lambda a, b: False)  # value_agreement's module
                full = pairing_mod.value_agreement(make_column("n", g), make_column("n", vals), rate=rate)
            assert fast == full, (vals, rate)
    assert taken >= (4 if n <= 64 else 0)  # the shortcut is taken for the equal multisets on small columns


def test_the_tolerances_of_an_int_column_are_the_half_units_of_its_decimals():
    # numbers._tolerances answers zeros for a column of Python ints (and NULLs) without reading decimals: the same
    # array, bit for bit, as half_units(decimals), and only where the typing saw ints alone.
    from goldeval.answers.numbers import _tolerances, half_units
    from goldeval.answers.values import make_column

    rng = np.random.default_rng(5)
    for cells in ([6], [1, None, 3], rng.integers(-10**6, 10**6, 50).tolist(), [None, None, 2], [2.0, 3], [True, 2], [1.5, None]):
        c = make_column("x", cells)
        if c.num is None:
            continue
        got, ref = _tolerances(c), half_units(c.decimals)
        assert got.dtype == ref.dtype and got.shape == ref.shape and got.tobytes() == ref.tobytes(), cells


@pytest.mark.parametrize("seed", range(20))
def test_text_cells_with_single_spaces_type_as_cell_by_cell(seed, monkeypatch):
    # make_column makes a column of plain text canonical in one pass, now also when cells hold single inner spaces
    # ("Joe Sharp", "New York": Spider's names) or non-ASCII letters ("Higuaín": NFC, case-folded); every cell must
    # type as the cell-by-cell path types it (a boolean, a number, a date, leading/trailing/double white space,
    # tabs, no-break spaces, non-ASCII digits and the like keep the per-cell path).
    from goldeval.answers import values as values_mod
    from goldeval.answers.values import make_column

    rng = np.random.default_rng(500 + seed)
    words = ["Joe", "Sharp", "new", "York", "no", "Yes", "true", "False", "France", "tokyo", "N/A", "x%", "12", "-3",
             ".5", "2020-01-02", "a\tb", "", " ", "fin", "TRUE", "nope", "y", "d\x1cx", "Ünï", "O'Neil",
             "São", "Higuaín", "Straße", "e\u0301", "\u0301x", "İstanbul", "٣x", "²nd", "\u00a0", "a\u2003b", "yeſ", "ǅ",
             "Ⅻ", "ﬁn", "\u212bngstrom"]
    seps = [" ", " ", " ", "  ", "", "\t"]
    cells = []
    for _ in range(int(rng.integers(1, 30))):
        k = int(rng.integers(1, 4))
        parts = [str(w) for w in rng.choice(words, k)]
        cell = parts[0] + "".join(str(rng.choice(seps)) + w for w in parts[1:])
        if rng.random() < 0.1:
            cell = " " + cell if rng.random() < 0.5 else cell + " "
        cells.append(cell)
    if seed % 2:  # a column every cell of which is plain with spaces: the one-pass path itself
        cells = [c for c in cells if not values_mod._NOT_PLAIN.search(c)] or ["Joe Sharp", "New York"]
    fast = make_column("c", cells)
    monkeypatch.setattr(values_mod, "_not_plain", lambda *args: True)  # never plain: the per-cell paths
    slow = make_column("c", cells)
    assert (fast.kind, fast.n, fast.percent, fast.n_numberlike) == (slow.kind, slow.n, slow.percent, slow.n_numberlike)
    assert fast.null.tolist() == slow.null.tolist() and fast.text.tolist() == slow.text.tolist()
    assert (fast.num is None) == (slow.num is None) and (fast.num is None or fast.num.tobytes() == slow.num.tobytes())


def test_columns_of_is_the_transpose_of_the_rows():
    rows = [[1, "a", None], (2.5, "b", True), [3, None, 0]]
    assert _fast.columns_of(rows, 3) == [list(c) for c in zip(*rows)]
    assert all(a is b for a, b in zip(_fast.columns_of(rows, 3)[1], [r[1] for r in rows]))  # the same cell objects
    assert _fast.columns_of([[1, 2], [3]], 2) is None  # a short row: the caller's general path says which row
    assert _fast.columns_of([[1, 2], {"a": 1, "b": 2}], 2) is None
    assert _fast.columns_of([], 2) is None


def test_judging_allocates_no_object_per_row():
    # 10,000 rows transposed by zip(*rows) made 10,000 iterators: dozens of garbage collections a judgement, and
    # their survivors triggered full collections of the caller's whole heap. Now none (an object count, not a time).
    import gc

    rng = np.random.default_rng(0)
    rows = rng.integers(0, 10, (10_000, 4)).tolist()
    golden = {"kind": "value", "columns": list("abcd"), "rows": rows}
    pred = {"columns": list("badc"), "rows": [[r[1], r[0], r[3], r[2]] for r in rows]}
    judge_answer("q", golden, pred)
    gc.collect()
    before = gc.get_stats()[0]["collections"]
    assert judge_answer("q", golden, pred).verdict == "match"
    assert gc.get_stats()[0]["collections"] - before <= 2


@pytest.mark.parametrize("seed", range(3))
def test_hash_groups_is_the_same_with_and_without_the_c_mix(seed, monkeypatch):
    from goldeval.answers import matching

    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 3, (700, 5)).astype(np.int64)
    b = np.concatenate([a[:300], rng.integers(-(2**62), 2**62, (200, 5))])  # shared rows, and wide values
    layouts = [np.concatenate([a, b]), stack_rows(a, b), np.concatenate([a, b])[:, ::-1], a[:, :1]]
    fast = [hash_groups(k) for k in layouts]
    monkeypatch.setattr(matching, "_fast_row_hashes", None)
    assert all(np.array_equal(f, hash_groups(k)) for f, k in zip(fast, layouts))  # the same ids, not just groups
    keys = layouts[0]
    rep = np.arange(keys.shape[0])
    assert _fast.rows_equal(keys, rep)
    rep[5] = 6
    assert _fast.rows_equal(keys, rep) == bool((keys[5] == keys[6]).all())


@pytest.mark.parametrize("seed", range(4))
def test_exact_shares_are_value_agreement_and_multiset_share(seed):
    # The whole-number pairs computed at once from value counts equal the one-pair definitions, the sampled
    # estimate below 0.25 included (columns sharing few values), NULLs and a wide range (the np.unique codes).
    from goldeval.answers.pairing import exact_shares, multiset_share, value_agreement
    from goldeval.answers.values import make_column

    rng = np.random.default_rng(seed)
    n = 900
    span = 10 if seed % 2 == 0 else 150_000

    def col(name, lo, hi, nulls):
        v = rng.integers(lo, hi, n).tolist()
        for i in rng.choice(n, nulls, replace=False).tolist():
            v[i] = None
        return make_column(name, v)

    golden = [col("a", 0, span, 0), col("b", 0, span, 5), col("c", span // 2, span + 3, 0), col("d", -span, 0, 2)]
    pred = [col("x", 0, span, 5), col("y", 0, span, 0), col("z", -span, span, 0), col("w", span, span + span // 3 + 3, 1)]
    shuffled = [golden[0].raw[k] for k in rng.permutation(n).tolist()]
    pred.append(make_column("v", shuffled[:-40] + [None] * 10 + shuffled[-30:]))  # most of a's values, as often
    pairs = [(i, j) for i in range(len(golden)) for j in range(len(pred))]
    got = exact_shares(golden, pred, pairs, 1e-6)
    assert set(got) == set(pairs)
    for (i, j), (share, multi) in got.items():
        assert share == value_agreement(golden[i], pred[j])[0]
        if share >= 0.5:
            assert multi == multiset_share(golden[i], pred[j])
    assert any(s < 0.25 for s, _ in got.values()) and any(s >= 0.5 for s, _ in got.values())
    # Not eligible: decimals written in the golden, a Decimal, numbers past 0.4 / rel_tol.
    assert exact_shares([make_column("f", [1.5] * n)], pred, [(0, 0)], 1e-6) == {}
    assert exact_shares([make_column("g", [10**6] * n)], pred, [(0, 0)], 1e-6) == {}


@pytest.mark.parametrize("seed", range(6))
def test_all_close_is_numbers_close_all(seed):
    from goldeval.answers.numbers import numbers_close, rows_all_close

    rng = np.random.default_rng(seed)
    n, m = 400, 4
    g = np.round(rng.uniform(-50, 50, (n, m)), rng.integers(0, 3))
    special = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e300]
    for k in range(6):
        g[rng.integers(n), rng.integers(m)] = special[k]
    half = np.where(rng.random((n, m)) < 0.5, 0.005, 0.0)
    rel = rng.choice([0.0, 1e-6, 1e-12], m)
    for noise in (0.0, 0.004, 0.006, 1e-7):
        p = g + noise * rng.choice([-1, 1], (n, m)) if noise else g.copy()
        if seed % 2:
            p[rng.integers(n), rng.integers(m)] = np.nan  # a NULL against a number: never close
        for rows in (slice(None), slice(0, 1), np.flatnonzero(np.isfinite(g).all(axis=1))):
            want = bool(numbers_close(g[rows], p[rows], half[rows], rel_tol=rel).all())
            assert _fast.all_close(g[rows], p[rows], half[rows], rel) == want
            assert rows_all_close(g[rows], p[rows].T.copy().T, half[rows], rel) == want  # any layout
        assert _fast.all_close(g[:, 1:3], p[:, 1:3], half[:, 1:3], rel[1:3]) == bool(numbers_close(g[:, 1:3], p[:, 1:3], half[:, 1:3], rel_tol=rel[1:3]).all())


@pytest.mark.parametrize("seed", range(4))
def test_golden_sorted_without_argsort_is_the_stable_argsort(seed):
    # Float-only golden columns: the half-units of the sorted values recomputed from the values equal the ones the
    # stable argsort carries along (decimals are a function of a float's value).
    from goldeval.answers.numbers import tolerances
    from goldeval.answers.pairing import sorted_golden_numbers
    from goldeval.answers.values import make_column

    rng = np.random.default_rng(seed)
    x = rng.uniform(-100, 100, 3000)
    cells = [round(v, int(d)) for v, d in zip(x.tolist(), rng.integers(0, 5, x.size).tolist())]
    cells[:6] = [-0.0, 0.0, 1.0, None, float("nan"), float("-inf")]
    g = make_column("g", cells)
    half = tolerances(g)
    assert len({float(h) for h in half[~g.null]}) > 1  # several half-units: the argsort-free branch for floats
    gs, hs = sorted_golden_numbers(g, half)
    order = np.argsort(np.where(g.null, np.inf, g.num), kind="stable")
    k = g.n - int(g.null.sum())
    assert np.array_equal(gs, g.num[order][:k]) and hs.tobytes() == half[order][:k].tobytes()


# -- labels: the C reader of a JSONL label file (goldeval._fast.label_lines) against the Python loop ----------------

_LABEL_TEXTS = ["yes", "no", "maybe", "é", "∑x", 'a"b', "back\\slash", "tab\tin", "\u2028", "x" * 40]


def _label_line(rnd, k: int) -> bytes:
    """One line of a label file: mostly plain rows (what C scores), and every kind of row it must leave to Python."""
    import json

    rid = f"c{k}" if rnd.random() < 0.97 else f"c{rnd.randrange(30)}"  # some ids repeat
    g, p = rnd.choice(_LABEL_TEXTS[:3]), rnd.choice([*_LABEL_TEXTS[:3], None])
    kind = rnd.random()
    if kind < 0.70:
        return json.dumps({"id": rid, "gold": g, "pred": p}, separators=(",", ":")).encode() + b"\n"
    row: dict = {"id": rid, "gold": rnd.choice(_LABEL_TEXTS), "pred": rnd.choice([*_LABEL_TEXTS, None])}
    if kind < 0.76:  # rare labels: new pairs, escapes, non-ASCII (C writes them through orjson.dumps)
        return json.dumps(row, ensure_ascii=rnd.random() < 0.5).encode() + b"\n"
    if kind < 0.78:
        row["id"] = rid + rnd.choice(['"q', "é", "\\", "\n", "\u0001"])  # an id to escape
    elif kind < 0.80:
        row["id"] = k  # an integer id: its decimal string (Python)
    elif kind < 0.81:
        row["id"] = ""  # no usable id
    elif kind < 0.82:
        del row["pred"]  # a warning
    elif kind < 0.83:
        del row["gold"]  # a failure
    elif kind < 0.84:
        row["gold"] = rnd.choice([" yes", "no ", "", "  ", None, 3, True, [1]])
    elif kind < 0.85:
        row["pred"] = rnd.choice([" yes", "", "  ", 7, False, {"a": 1}])
    elif kind < 0.86:
        return b"\n" if rnd.random() < 0.5 else b"   \n"
    elif kind < 0.87:
        return b'{"id":"' + rid.encode() + b'", broken\n'
    elif kind < 0.88:
        return b"[1, 2]\n"
    elif kind < 0.89:
        return b'{"id":"' + rid.encode() + b'","gold":"yes","pred":"no","n":NaN}\n'
    elif kind < 0.90:
        return b'{"id":123456789012345678901234567890,"gold":"yes","pred":"no"}\n'  # past 64 bits: its digits
    elif kind < 0.91:
        row["extra"] = 2**70
    elif kind < 0.92:
        return b'{"gold":"yes","id":"' + rid.encode() + b'","pred":"yes","id":"dup' + str(k).encode() + b'"}\n'
    return json.dumps(row).encode() + (b"\r\n" if kind > 0.99 else b"\n")


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_label_lines_scores_what_the_python_loop_scores(tmp_path, monkeypatch, seed, fmt):
    import random

    from goldeval.labels import reader as labelfile
    from goldeval.io.resultsfile import ResultsFile

    rnd = random.Random(seed)
    path = tmp_path / "labels.jsonl"
    body = b"".join(_label_line(rnd, k) for k in range(6000))
    if seed % 2:
        body = b"\xef\xbb\xbf" + body  # a byte order mark on line 1
    if seed % 3 == 0:
        body = body.rstrip(b"\n")  # no newline at the end
    path.write_bytes(body)
    monkeypatch.setattr(labelfile, "READ_BLOCK", 1 << (6 + seed))  # blocks of 64 B .. 2 KiB: many stretches

    def run(lines: bool):
        out = tmp_path / f"r-{lines}-{labelfile._fast_label_lines is not None}.{fmt}"
        with ResultsFile(str(out), fmt) as w:
            w.begin({"positive": "yes"})
            opts = {"on_example_lines": w.example_lines} if lines else {"on_examples": lambda e: w.examples(e, flat=True)}
            res = labelfile.score_label_path(path, positive="yes", keep_per_example=False, **opts)
            w.close(res)
        return res, out.read_bytes()

    by_c = []
    kernel = labelfile._fast_label_lines

    def counting(*args):
        got = kernel(*args)
        by_c.append(got[2])
        return got

    monkeypatch.setattr(labelfile, "_fast_label_lines", counting)
    fast = run(True)
    assert sum(by_c) > 1000  # most plain rows were scored by C
    with_dicts = run(False)  # the dict entries (the --junit-cases path): no C at all
    monkeypatch.setattr(labelfile, "_fast_label_lines", None)
    plain_lines = run(True)
    assert fast == with_dicts == plain_lines
    res = fast[0]
    assert res["failures"] and res["warnings"] and res["aggregate"]["null_predictions"]  # the mix has every kind
    assert any("repeats line" in f["error"] for f in res["failures"])
    if fmt == "json":
        import json

        assert len(json.loads(fast[1])["per_example"]) == res["aggregate"]["n_scored"]


def test_label_lines_stops_at_the_first_row_it_does_not_score():
    import orjson

    from goldeval import _fast

    block = (b'{"id":"a","gold":"x","pred":"x"}\n{"id":"b","gold":"x","pred":null}\n'
             b'{"id":"c","gold":"y","pred":"x"}\n{"id":"d","gold":"x","pred":"x"}\n')
    counts = {("x", "x"): 5, ("x", None): 0}
    table = _fast.label_table()
    got = _fast.label_lines(block, 0, 10, orjson.loads, orjson.JSONDecodeError, "id", "gold", "pred", counts, set(),
                            "x", orjson.dumps, True, table)
    # by hand: rows a and b are counted (lines 11, 12); ("y", "x") is a new pair, so row c is left at its start
    assert got == (block.index(b'{"id":"c"'), 12, 2, 1,
                   b'{"id":"a","line":11,"gold":"x","pred":"x","outcome":"tp"}\n'
                   b'{"id":"b","line":12,"gold":"x","pred":null,"outcome":"fn"}\n')
    assert counts == {("x", "x"): 5, ("x", None): 0}  # held in the table until label_flush
    counts[("x", "x")] += 10  # (adding meanwhile is fine)
    _fast.label_flush(table, counts)
    assert counts == {("x", "x"): 16, ("x", None): 1}
    # a repeated id's hash stops it too
    assert _fast.label_lines(block, 0, 0, orjson.loads, orjson.JSONDecodeError, "id", "gold", "pred", counts, {hash("b")},
                             "x", orjson.dumps, False, table)[:5] == (block.index(b'{"id":"b"'), 1, 1, 0, b"")
    _fast.label_flush(table, counts)
    _fast.label_flush(table, counts)  # (nothing twice)
    assert counts == {("x", "x"): 17, ("x", None): 1}


def test_label_lines_writes_each_id_as_orjson_does_whatever_byte_it_holds_where():
    """emit & 4 writes each row's id as JSON, as is between quotes when it needs no escape (tested a word of eight
    bytes at a time): every byte JSON escapes (control characters, quote, backslash) and its neighbours that it does
    not (space, '!', '#', '[', ']', DEL, non-ASCII, U+2028) at every position of ids of 1 to 18 characters (one
    and two words, and a part word), against orjson.dumps of each id (the definition); the codes one a row."""
    from array import array

    import orjson

    from goldeval import _fast

    odd = [chr(c) for c in range(0x20)] + ['"', "\\", " ", "!", "#", "[", "]", "\x7f", "é", "漢", "\u2028", "a"]
    ids = [("r" * n)[:p] + c + ("0123456789abcdefgh" * 2)[p + 1:n] for n in range(1, 19) for p in range(n) for c in odd]
    assert len(set(ids)) == len(ids) and any(len(i) == 16 and '"' in i[-1] for i in ids)
    block = b"".join(orjson.dumps({"id": i, "gold": "x", "pred": "x"}) + b"\n" for i in ids)
    counts, tails = {("x", "x"): 0}, {}
    got = _fast.label_lines(block, 0, 0, orjson.loads, orjson.JSONDecodeError, "id", "gold", "pred", counts, set(),
                            "x", orjson.dumps, 4, _fast.label_table(), tails)
    assert got[:4] == (len(block), len(ids), len(ids), 0)
    assert got[6] == b"".join(orjson.dumps(i) + b"," for i in ids)
    assert array("I", got[5]).tolist() == [0] * len(ids) and tails == {b',"gold":"x","pred":"x","outcome":"tp"}': 0}


def test_label_lines_reads_one_field_for_two_roles_as_the_loop_does(tmp_path, monkeypatch):
    # --pred-column gold: both roles read the same field (every row a true positive or negative), C and Python alike
    from goldeval.labels import reader as labelfile

    path = tmp_path / "l.jsonl"
    path.write_text("".join(f'{{"id":"c{k}","gold":"{"yes" if k % 3 else "no"}","pred":"no"}}\n' for k in range(3000)))

    def run():
        return labelfile.score_label_path(path, positive="yes", pred_field="gold", keep_per_example=False,
                                          on_example_lines=lambda body, n: got.append(bytes(body)))

    got: list[bytes] = []
    fast, fast_lines = run(), got
    got = []
    monkeypatch.setattr(labelfile, "_fast_label_lines", None)
    assert run() == fast and b"".join(got) == b"".join(fast_lines)
    assert fast["aggregate"]["tp"] == 2000 and fast["aggregate"]["fp"] == 0  # by hand: k % 3 != 0 for 2,000 of 3,000


def _stack_rule(g, p):
    # The docstring rule of stack_pairs: a dictionary of stacks of prediction rows, each golden row popping one.
    stacks = defaultdict(list)
    for j, row in enumerate(map(tuple, p.tolist())):
        stacks[row].append(j)
    ref = {}
    for i, row in enumerate(map(tuple, g.tolist())):
        if stacks[row]:
            ref[i] = stacks[row].pop()
    return sorted(ref), [ref[i] for i in sorted(ref)]


def _key_layouts(rng):
    a = rng.integers(-2, 3, (600, 3)).astype(np.int64)
    b = np.concatenate([a[rng.permutation(600)[:250]], rng.integers(-2, 3, (150, 3)), rng.integers(-(2**62), 2**62, (100, 3))])
    yield a, b                                   # C order
    yield np.asfortranarray(a), b[:, ::-1].copy()[:, ::-1]  # column by column; reversed strides
    yield a[::2], b[1::3]                        # row strides
    yield a[:, :1], b[:, 2:]                     # one column
    yield a[:0], b                               # no golden rows
    yield a, b[:0]                               # no prediction rows
    yield a[:, :0], b[:, :0]                     # no columns: every row equal


@pytest.mark.parametrize("seed", range(3))
def test_pair_rows_is_stack_pairs_numpy_path(seed, monkeypatch):
    # The C hash table gives the pairs of the NumPy grouping (and of the stack rule), in any layout.
    from goldeval.answers import matching

    rng = np.random.default_rng(seed)
    cases = list(_key_layouts(rng))
    fast = [stack_pairs(g, p) for g, p in cases]
    monkeypatch.setattr(matching, "_fast_pair_rows", None)
    for (g, p), (a, b) in zip(cases, fast):
        a0, b0 = stack_pairs(g, p)
        assert a.tolist() == a0.tolist() and b.tolist() == b0.tolist()
        assert (a.tolist(), b.tolist()) == _stack_rule(g, p)
    out = np.empty(2, np.int64), np.empty(2, np.int64)
    with pytest.raises(ValueError):
        _fast.pair_rows(np.zeros((2, 2), np.int64), np.zeros((2, 3), np.int64), None, None, *out)
    with pytest.raises(TypeError):
        _fast.pair_rows(np.zeros((2, 2)), np.zeros((2, 2), np.int64), None, None, *out)
    with pytest.raises(ValueError):
        _fast.pair_rows(np.zeros((2, 0), np.int64), np.zeros((2, 0), np.int64), np.zeros((2, 1)), None, *out)
    with pytest.raises(ValueError):
        _fast.pair_rows(np.zeros((2, 0), np.int64), np.zeros((2, 0), np.int64), np.zeros((3, 1)), np.zeros((2, 1)), *out)


@pytest.mark.parametrize("seed", range(3))
def test_pair_rows_reads_float_cells_as_their_exact_keys(seed, monkeypatch):
    # Float cells handed beside the int keys pair as exact_keys reads them (NULL meets NULL and +inf, -0.0 meets
    # 0.0), in place; the NumPy path concatenates the exact keys, the definition.
    from goldeval.answers import matching
    from goldeval.answers.matching import exact_keys

    rng = np.random.default_rng(seed)
    vals = np.array([0.0, -0.0, 1.5, np.nan, np.inf, -np.inf, 2.0, 1e300])
    gn = rng.choice(vals, (500, 3))
    pn = np.concatenate([gn[rng.permutation(500)[:300]], rng.choice(vals, (200, 3))])
    gt = rng.integers(0, 2, (500, 1)).astype(np.int64)
    pt = np.concatenate([gt[:300], rng.integers(0, 2, (200, 1))]).astype(np.int64)
    cases = [(gt, pt, gn, pn), (gt[:, :0], pt[:, :0], gn, pn), (gt, pt, gn[:, ::2], pn[:, ::2]), (gt[::3], pt[::2], gn[::3], pn[::2])]
    fast = [stack_pairs(a, b, gnum=c, pnum=d) for a, b, c, d in cases]
    monkeypatch.setattr(matching, "_fast_pair_rows", None)
    for (a, b, c, d), (fa, fb) in zip(cases, fast):
        ra, rb = stack_pairs(a, b, gnum=c, pnum=d)
        assert fa.tolist() == ra.tolist() and fb.tolist() == rb.tolist()
        keys = np.concatenate([a, exact_keys(c)], axis=1), np.concatenate([b, exact_keys(d)], axis=1)
        assert (fa.tolist(), fb.tolist()) == _stack_rule(*keys)
    with pytest.raises(ValueError):
        stack_pairs(gt, pt, gnum=gn)


@pytest.mark.parametrize("seed", range(3))
def test_row_ids_is_the_partition_of_hash_groups(seed, monkeypatch):
    from goldeval.answers import matching
    from goldeval.answers.matching import stacked_groups

    rng = np.random.default_rng(seed)
    for g, p in _key_layouts(rng):
        ids = stacked_groups(g, p)
        ref = hash_groups(stack_rows(g, p))
        assert _partition(ids) == _partition(ref)
        # ids 0, 1, ... in the order of each group's first row
        firsts = [int(x) for x in dict.fromkeys(ids.tolist())]
        assert firsts == list(range(len(firsts)))
        monkeypatch.setattr(matching, "_fast_row_ids", None)
        assert np.array_equal(stacked_groups(g, p), ref)  # without the C table: the definition itself
        monkeypatch.undo()


@pytest.mark.parametrize("seed", range(3))
def test_row_signature_agreement_is_the_numpy_share(seed, monkeypatch):
    from goldeval.answers import table

    rng = np.random.default_rng(seed)
    g = rng.integers(0, 4, (900, 5)).astype(np.int64)
    p = rng.integers(0, 4, (700, 6)).astype(np.int64)[:, ::-1]  # any layout
    ga, pb = rng.integers(0, 900, 333), rng.integers(0, 700, 333)
    fast = table._agreement(g, p, ga, pb)
    monkeypatch.setattr(table, "_fast_agreement_counts", None)
    slow = table._agreement(g, p, ga, pb)
    assert fast.shape == (5, 6) and fast.tobytes() == slow.tobytes()  # the same floats, bit for bit
    want = np.array([[np.mean(g[ga, i] == p[pb, j]) for j in range(6)] for i in range(5)])
    assert np.array_equal(slow, want)
    with pytest.raises(ValueError):
        _fast.agreement_counts(g, p, np.array([900]), np.array([0]), np.empty((5, 6), np.int64))


def test_cell_codes_per_column_are_the_flat_codes():
    # Numeric codes made once per column (cached) equal the codes of all columns at once (the former definition).
    from goldeval.answers.matching import cell_codes
    from goldeval.answers.values import make_column

    rng = np.random.default_rng(4)
    cells = [rng.integers(-3, 3, 500).astype(float).tolist() for _ in range(4)]
    cells[0][:4] = [-0.0, 0.0, None, float("nan")]
    cells[1][:2] = [float("inf"), 2**52]
    cols = [make_column(f"c{i}", c) for i, c in enumerate(cells)]
    g, p = cell_codes(cols[:2], cols[2:])
    flat = np.concatenate([c.num for c in cols])
    codes = np.where(np.isnan(flat), np.nan, flat + 0.0).view(np.int64)
    assert np.array_equal(np.concatenate([g.T.reshape(-1), p.T.reshape(-1)]), codes)
    assert np.array_equal(cell_codes(cols[:2], cols[2:])[0], g)  # from the cache: the same


@pytest.mark.parametrize("seed", range(4))
def test_column_facts_from_the_columns_are_the_facts_of_the_cells(seed, monkeypatch):
    # The cheap proofs of rows._fast_equal and the exact-only test of the matching read per-column facts from the
    # Columns (once per column); computed from the encoded cells instead, every answer is the same.
    from goldeval.answers import matching, rows
    from goldeval.answers.pairing import Pairing
    from goldeval.answers.values import make_column

    rng = np.random.default_rng(seed)
    n = 400
    base = rng.integers(0, 5, (n, 4)).astype(float)
    variants = {"whole": base, "nulls": np.where(rng.random((n, 4)) < 0.05, np.nan, base),
                "fractions": base + 0.25, "huge": base * 2.0**63, "inf": np.where(rng.random((n, 4)) < 0.01, np.inf, base)}
    for gname, gv in variants.items():
        for pname, pv in variants.items():
            perm = rng.permutation(n)
            for scale in (1.0, 100.0):
                gcols = [make_column(f"g{j}", [None if x != x else x for x in gv[:, j].tolist()]) for j in range(4)]
                pcols = [make_column(f"p{j}", [None if x != x else x for x in pv[perm, j].tolist()]) for j in range(4)]
                pairing = Pairing([c.name for c in gcols], [c.name for c in pcols], {j: j for j in range(4)}, {}, {2: scale})
                e = rows._encode(gcols, pcols, pairing)
                bare = rows.EncodedRows(e.names, e.tg, e.tp, e.ng, e.np_, e.half, e.g_index, e.vocab, e.rel, e.dec)  # no sources
                assert rows._columns_differ(e) == rows._columns_differ(bare)
                assert rows._exact_columns(e) == rows._exact_columns(bare)
                exact = all(matching._exact_only(e.ng[:, c], e.half[:, c], e.np_[:, c]) for c in range(e.ng.shape[1]))
                assert rows._exact_columns(e) == exact  # the hint match_rows takes is what _greedy would find
                for c in range(e.ng.shape[1]):
                    for side in "gp":
                        assert rows._sorted_cells(e, c, side).tobytes() == np.sort(e.ng[:, c] if side == "g" else e.np_[:, c]).tobytes()
                got = rows.compare_rows(gcols, pcols, pairing)
                monkeypatch.setattr(rows, "_encode", lambda *a, _f=rows._encode: _strip(_f(*a)))
                assert rows.compare_rows(gcols, pcols, pairing) == got
                monkeypatch.undo()


def _strip(e):
    e.sources = []
    return e


def test_half_units_of_whole_numbers_are_zeros():
    from goldeval.answers.numbers import half_units

    d = np.zeros(7, dtype=np.int64)
    want = np.where(d.astype(float) > 0, 0.5 * np.power(10.0, -d.astype(float)), 0.0) * (1 + 1e-9)
    assert half_units(d).tobytes() == want.tobytes() and half_units(d).dtype == want.dtype
    assert half_units(np.array([0, 2, -1])).tolist() == [0.0, 0.005 * (1 + 1e-9), 0.0]


def test_number_facts_in_c_are_the_numpy_facts(monkeypatch):
    from goldeval.answers import rows

    rng = np.random.default_rng(9)
    columns = [rng.integers(-5, 5, 300).astype(float), rng.uniform(-5, 5, 300), np.array([]), np.array([np.nan, np.nan]),
               np.array([1.0, np.inf, 2.0]), np.array([-np.inf, 3.0]), np.array([2.0**62, 1.0]), np.array([-(2.0**62) + 1024, 7.0]),
               np.array([2.0**61] * 9), np.array([-0.0, 0.0, np.nan, 4.0]), np.array([1e300, -1e300])]
    fast = [rows._number_facts(v) for v in columns]
    monkeypatch.setattr(rows, "_fast_number_facts", None)
    assert fast == [rows._number_facts(v) for v in columns]
    assert rows._number_facts(np.array([2.0**61] * 9))[2] == (9 * 2**61 + 2**63) % 2**64 - 2**63  # int64 wrapping, as NumPy's sum


@pytest.mark.filterwarnings("ignore:invalid value encountered in subtract:RuntimeWarning")  # main's pairing on inf cells
@pytest.mark.parametrize("seed", range(4))
def test_aligned_row_signatures_are_a_complete_row_comparison(seed):
    # _row_signature_pairing says "aligned" only where compare_rows under its pairing, unordered, is complete; and
    # the judge's verdict is the same as with the row comparison computed (the shortcut spares only that).
    from goldeval.answers import table
    from goldeval.answers.rows import compare_rows
    from goldeval.answers.shapes import table_columns

    rng = np.random.default_rng(seed)
    n, k = 300, 5
    rows_g = rng.integers(0, 6, (n, k)).astype(float)
    kinds = {"ints": rows_g, "nulls": np.where(rng.random((n, k)) < 0.05, np.nan, rows_g),
             "inf": np.where(rng.random((n, k)) < 0.02, np.inf, rows_g), "fractions": rows_g + 0.5}
    seen = Counter()
    for kind, g in kinds.items():
        for swap in ((1, 3), (0, 4), None):
            p = g.copy()
            if swap:
                p[:, list(swap)] = p[:, list(swap[::-1])]
            if seed % 2:
                p[rng.integers(n), rng.integers(k)] += 1  # one cell off: not aligned
            perm = rng.permutation(n)
            names = [f"col{chr(97 + j)}" for j in range(k)]
            cells = lambda a: [[None if x != x else x for x in r] for r in a.tolist()]
            gcols, pcols = table_columns(names, cells(g)), table_columns(names, cells(p[perm]))
            from goldeval.answers.pairing import pair_columns
            pairing = pair_columns(gcols, pcols)
            swapped, aligned = table._row_signature_pairing(gcols, pcols, pairing)
            seen[aligned] += 1
            if aligned:
                assert swapped is not None and compare_rows(gcols, pcols, swapped).complete
            golden = {"kind": "value", "columns": names, "rows": cells(g)}
            pred = {"columns": names, "rows": cells(p[perm])}
            got = judge_answer("q", golden, pred).to_dict()
            real = table._row_signature_pairing
            try:
                table._row_signature_pairing = lambda *a: (real(*a)[0], False)
                assert judge_answer("q", golden, pred).to_dict() == got
            finally:
                table._row_signature_pairing = real
    assert seen[True] >= (4 if seed % 2 == 0 else 0) and seen[False]  # both kinds met (swaps of whole numbers align)


def test_float_decimals_in_c_are_the_numpy_roundings(monkeypatch):
    from goldeval.answers import values

    rng = np.random.default_rng(11)
    x = np.concatenate([rng.uniform(-1e3, 1e3, 5000), np.round(rng.uniform(-1e3, 1e3, 5000), 2),
                        rng.uniform(-1, 1, 5000) * 10.0 ** rng.integers(-20, 20, 5000),
                        [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e308, -1e308, 5e-324, 2.5, 0.1, 0.3, 58.745, 1e16 + 2]])
    x = np.concatenate([x] + [np.round(rng.uniform(-50, 50, 500), d) for d in range(17)])
    fast = values.float_decimals(x)
    monkeypatch.setattr(values, "_fast_float_decimals", None)
    with np.errstate(over="ignore"):  # NumPy's rounding of 1e308 overflows to inf (never equal): the same answer
        slow = values.float_decimals(x)
        monkeypatch.undo()
        assert values.float_decimals(x[::2]).tolist() == slow[::2].tolist()  # a strided array: the NumPy lines
    assert fast.dtype == slow.dtype == np.int64 and np.array_equal(fast, slow)


def test_half_units_from_a_table_of_the_decimals_are_the_formula():
    from goldeval.answers import numbers

    rng = np.random.default_rng(12)
    for d in (rng.integers(0, 17, 5000), rng.integers(0, 3, 100), np.array([0, 1, 399] * 30), rng.integers(-2, 5, 500)):
        assert numbers.half_units(d).tobytes() == numbers._half_units(d).tobytes()
