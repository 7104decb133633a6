"""Invariants of the labels scorer (hypothesis): order, relabelling of negatives, count identities, bounds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from goldeval.labels import per_label_table, score_labels

LABELS = st.sampled_from(["pos", "neg", "other", "maybe"])


@st.composite
def paired(draw):
    n = draw(st.integers(min_value=0, max_value=60))
    gold = draw(st.lists(LABELS, min_size=n, max_size=n))
    pred = draw(st.lists(st.one_of(LABELS, st.none()), min_size=n, max_size=n))
    return gold, pred


FIELDS = ("tp", "fp", "fn", "tn", "precision", "recall", "f1", "missed", "missed_per_100", "accuracy", "undefined")


def _key(s):
    return tuple(getattr(s, f) for f in FIELDS)


@settings(max_examples=200, deadline=None)
@given(paired(), st.randoms(use_true_random=False))
def test_permuting_cases_changes_nothing(pair, rnd):
    gold, pred = pair
    order = list(range(len(gold)))
    rnd.shuffle(order)
    a = score_labels(gold, pred, positive="pos", require_positive=False)
    b = score_labels([gold[i] for i in order], [pred[i] for i in order], positive="pos", require_positive=False)
    assert _key(a) == _key(b)
    assert per_label_table(gold, pred) == per_label_table([gold[i] for i in order], [pred[i] for i in order])


@settings(max_examples=200, deadline=None)
@given(paired(), st.dictionaries(st.sampled_from(["neg", "other", "maybe"]), st.sampled_from(["neg", "x", "y", "zz"])))
def test_relabelling_non_positive_labels_changes_nothing_for_the_positive(pair, mapping):
    gold, pred = pair
    gold2 = [mapping.get(g, g) for g in gold]
    pred2 = [mapping.get(p, p) if p is not None else None for p in pred]
    a = score_labels(gold, pred, positive="pos", require_positive=False)
    b = score_labels(gold2, pred2, positive="pos", require_positive=False)
    assert _key(a) == _key(b)


@settings(max_examples=200, deadline=None)
@given(paired())
def test_count_identities_and_bounds(pair):
    gold, pred = pair
    s = score_labels(gold, pred, positive="pos", require_positive=False)
    assert s.tp + s.fn == s.gold_positives == gold.count("pos")
    assert s.tp + s.fp == s.predicted_positives == pred.count("pos")
    assert s.tp + s.fp + s.fn + s.tn == s.n == len(gold)
    assert s.missed == s.fn
    for v in (s.precision, s.recall, s.f1, s.accuracy):
        assert 0.0 <= v <= 1.0
    assert 0.0 <= s.missed_per_100 <= 100.0
    # an empty denominator always scores 0.0 and is always marked
    assert ("precision" in s.undefined) == (s.predicted_positives == 0)
    assert ("recall" in s.undefined) == ("missed_per_100" in s.undefined) == (s.gold_positives == 0)
    for m in s.undefined:
        assert getattr(s, m) == 0.0


@settings(max_examples=40, deadline=None)
@given(paired())
def test_binary_values_equal_sklearn(pair):
    from sklearn.metrics import precision_recall_fscore_support

    gold, pred = pair
    if not gold:
        return
    s = score_labels(gold, pred, positive="pos", require_positive=False)
    p, r, f, _ = precision_recall_fscore_support(
        gold, ["<none>" if x is None else x for x in pred], labels=["pos"], average=None, zero_division=0.0
    )
    assert (s.precision, s.recall) == (p[0], r[0])  # the same divisions: equal to the bit
    assert abs(s.f1 - f[0]) < 1e-12  # f1 by 2tp/(2tp+fp+fn); sklearn versions differ in how they get there


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 50), st.integers(0, 50), st.integers(0, 50), st.integers(0, 50))
def test_a_gate_at_exactly_the_observed_value_passes_both_ways(tp, fp, fn, tn):
    """Bounds are inclusive and compared unrounded: min = v and max = v both pass when v is observed."""
    from goldeval.gates import evaluate_gates, parse_gates
    from goldeval.io import Row
    from goldeval.labels import score_label_rows

    gold = ["pos"] * (tp + fn) + ["neg"] * (fp + tn)
    pred = ["pos"] * tp + ["neg"] * fn + ["pos"] * fp + ["neg"] * tn
    rows = [Row(i + 1, {"id": str(i), "gold": g, "pred": p}) for i, (g, p) in enumerate(zip(gold, pred))]
    res = score_label_rows(rows, positive="pos", require_positive=False)
    agg = res["aggregate"]
    for metric in ("precision", "recall", "missed_per_100", "f1"):
        v = agg[metric]
        report = evaluate_gates(res, parse_gates(f"[gates]\n{metric} = {{ min = {v!r}, max = {v!r} }}\n"))
        defined = metric not in agg["undefined"]
        assert report.passed is defined  # an undefined value never passes, whatever the bound


# ---- gates never pass on no evidence (break-fix), and kappa is exact


@settings(max_examples=150, deadline=None)
@given(paired(), st.sampled_from(["precision", "recall", "f1", "missed", "missed_per_100", "fn", "accuracy", "kappa"]),
       st.sampled_from(["min", "max"]), st.floats(min_value=0, max_value=1))
def test_a_gate_on_a_metric_without_evidence_never_passes(pair, metric, op, bound):
    from goldeval.gates import evaluate_gates, parse_gates
    from goldeval.io import Row
    from goldeval.labels import score_label_rows

    gold, pred = pair
    rows = [Row(i + 1, {"id": str(i), "gold": g, "pred": p}) for i, (g, p) in enumerate(zip(gold, pred))]
    res = score_label_rows(rows, positive="pos", require_positive=False)
    agg = res["aggregate"]
    no_evidence = (
        agg["n_scored"] == 0
        or metric in agg["undefined"]
        or (metric in ("recall", "missed", "missed_per_100", "fn") and agg["gold_positives"] == 0)
        or (metric == "precision" and agg["predicted_positives"] == 0)
    )
    if metric in ("missed", "fn"):
        bound = round(bound * 10)
    elif metric == "missed_per_100":
        bound *= 100
    g = evaluate_gates(res, parse_gates(f"[gates]\n{metric} = {{ {op} = {bound!r} }}\n")).results[0]
    if no_evidence:
        assert not g.passed and g.reason
    else:
        assert g.passed == (agg[metric] >= bound if op == "min" else agg[metric] <= bound)


@settings(max_examples=150, deadline=None)
@given(paired())
def test_kappa_is_the_correctly_rounded_exact_value(pair):
    from collections import Counter
    from fractions import Fraction

    from goldeval.labels.agreement import cohen_kappa

    gold, pred = pair
    kappa, why = cohen_kappa(gold, pred)
    if why:
        return
    n = len(gold)
    rows, cols = Counter(gold), Counter(pred)
    chance = sum(r * cols[k] for k, r in rows.items())
    agreed = sum(1 for g, p in zip(gold, pred) if g == p)
    assert kappa == float(Fraction(n * agreed - chance, n * n - chance))


@settings(max_examples=300, deadline=None)
@given(n_labels=st.integers(1, 3), data=st.data(), positive=st.sampled_from(["pos", "neg", "nope"]))
def test_counting_strings_equals_counting_pairs(n_labels, data, positive):
    # score_labels counts lists of strings with list.count and the agreements (issue 15); the definition is the
    # pair counts: every field must be the same, errors included (a positive label never seen is refused).
    from goldeval.labels import pair_counts, score_from_pairs

    labels = ["pos", "neg", "other"][:n_labels]
    n = data.draw(st.integers(0, 40))
    gold = data.draw(st.lists(st.sampled_from(labels), min_size=n, max_size=n))
    pred = data.draw(st.lists(st.one_of(st.sampled_from(labels), st.none()), min_size=n, max_size=n))
    for require in (True, False):
        try:
            want = score_from_pairs(pair_counts(gold, pred), positive=positive, require_positive=require)
        except Exception as exc:  # noqa: BLE001 - the same error is expected
            want = (type(exc), str(exc))
        try:
            got = score_labels(gold, pred, positive=positive, require_positive=require)
        except Exception as exc:  # noqa: BLE001
            got = (type(exc), str(exc))
        assert got == want
