"""Unit tests of goldeval.agreement (Cohen's kappa cross-checked with statsmodels)."""

from __future__ import annotations

import pytest

from goldeval.agreement import agreement, cohen_kappa
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
