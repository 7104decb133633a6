"""Unit tests of goldeval.labels.agreement (Cohen's kappa cross-checked with statsmodels)."""

from __future__ import annotations

import pytest

from goldeval.labels.agreement import agreement, cohen_kappa
from goldeval.errors import InputError


def test_kappa_matches_statsmodels_on_a_three_label_table():
    a = ["x"] * 10 + ["y"] * 8 + ["z"] * 7 + ["x", "y", "z", "x", "z"]
    b = ["x"] * 8 + ["y"] * 2 + ["y"] * 7 + ["z"] + ["z"] * 5 + ["x"] * 2 + ["z", "x", "y", "x", "z"]
    from statsmodels.stats.inter_rater import cohens_kappa

    labels = ["x", "y", "z"]
    table = [[sum(1 for p, q in zip(a, b) if p == i and q == j) for j in labels] for i in labels]
    k, why = cohen_kappa(a, b)
    assert why is None
    assert k == pytest.approx(cohens_kappa(table).kappa, abs=1e-12)


def test_disagreements_in_order_with_ids():
    agr = agreement(["y", "n", "y"], ["y", "y", None], ids=["c1", "c2", "c3"])
    assert agr.disagreements == [{"id": "c2", "a": "n", "b": "y"}, {"id": "c3", "a": "y", "b": None}]
    assert agr.agreement == pytest.approx(1 / 3)


def test_kappa_undefined_when_chance_agreement_is_one():
    agr = agreement(["y", "y"], ["y", "y"])
    assert agr.kappa == 0.0 and "chance agreement is 1" in agr.undefined["kappa"]
    assert agr.agreement == 1.0


def test_empty_and_length_mismatch():
    e = agreement([], [])
    assert (e.n, e.agreement, e.kappa) == (0, 0.0, 0.0) and set(e.undefined) == {"agreement", "kappa"}
    with pytest.raises(InputError, match=r"first list has 2 labels but the second has 1"):
        agreement(["a", "b"], ["a"])


def test_perfect_disagreement_is_negative():
    # by hand: p_o = 0, p_e = 0.5*0.5 + 0.5*0.5 = 0.5, kappa = (0 - 0.5)/(1 - 0.5) = -1
    k, _ = cohen_kappa(["a", "b"], ["b", "a"])
    assert k == pytest.approx(-1.0)


def test_kappa_is_correctly_rounded_so_an_inclusive_bound_holds():
    # Break-fix: counts (yy, yn, ny, nn) = (1, 0, 1, 1). By hand: n = 3, p_o = 2/3, rows y 1 n 2, cols y 2 n 1,
    # p_e = (1*2 + 2*1)/9 = 4/9, kappa = (2/3 - 4/9)/(5/9) = 2/5 exactly. sklearn's float arithmetic gives
    # 0.3999999999999999, which failed `kappa = { min = 0.4 }`; we return the correctly rounded 0.4.
    from goldeval.gates import evaluate_gates, parse_gates
    from goldeval.io import Row
    from goldeval.labels import score_label_rows

    kappa, why = cohen_kappa(["y", "n", "n"], ["y", "y", "n"])
    assert why is None and kappa == 0.4
    rows = [Row(i + 1, {"id": str(i), "gold": g, "pred": p}) for i, (g, p) in enumerate([("y", "y"), ("n", "y"), ("n", "n")])]
    res = score_label_rows(rows, positive="y")
    assert res["aggregate"]["kappa"] == 0.4
    assert evaluate_gates(res, parse_gates("[gates]\nkappa = { min = 0.4 }\n")).passed


def test_kappa_equals_the_exact_fraction_over_many_small_tables():
    # every 2x2 table with cells 0..4: our kappa is float(Fraction) of the textbook formula, and sklearn agrees to 1e-12
    import itertools
    from fractions import Fraction

    from sklearn.metrics import cohen_kappa_score

    for a, b, c, d in itertools.product(range(5), repeat=4):
        n = a + b + c + d
        gold = ["y"] * (a + b) + ["n"] * (c + d)
        pred = ["y"] * a + ["n"] * b + ["y"] * c + ["n"] * d
        if n == 0 or len(set(gold) | set(pred)) == 1:
            continue
        po, pe = Fraction(a + d, n), Fraction((a + b) * (a + c) + (c + d) * (b + d), n * n)
        kappa, _ = cohen_kappa(gold, pred)
        assert kappa == float((po - pe) / (1 - pe))
        assert abs(kappa - cohen_kappa_score(gold, pred)) < 1e-12
