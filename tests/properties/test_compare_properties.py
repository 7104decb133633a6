"""Properties of comparing runs: a run against itself, swapping the runs, the shared pass-rate accounting."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from goldeval.runs.compare import BUCKETS, bucket, compare_runs
from goldeval.verdict import pass_rate

verdict_record = st.one_of(
    st.fixed_dictionaries({
        "status": st.just("scored"),
        "verdict": st.sampled_from(["match", "near_match", "no_match", "needs_human"]),
        "confidence": st.integers(1, 10),
        "needs_human": st.booleans(),
        "gold_status": st.sampled_from(["verified", "verified_benign", "suspect", "verified_wrong"]),
        "why": st.text(max_size=5),
    }),
    st.fixed_dictionaries({"status": st.just("unscored"), "reason": st.text(max_size=5)}),
)
f1_record = st.floats(0, 1).map(lambda x: {"status": "scored", "whole_note": {"precision": x, "recall": x, "f1": x}})


def runs_of(record):
    ids = st.lists(st.sampled_from([f"c{i}" for i in range(12)]), unique=True, max_size=12)
    return ids.flatmap(lambda keys: st.tuples(*[record for _ in keys]).map(lambda recs: dict(zip(keys, recs))))


@settings(max_examples=60, deadline=None)
@given(runs_of(verdict_record))
def test_a_run_against_itself_has_no_flip_and_nothing_to_test(run):
    cmp = compare_runs(run, run, n_resamples=200)
    assert cmp["added"] == [] and cmp["removed"] == [] and cmp["regressions"] == []
    if cmp["verdicts"] is not None:
        assert cmp["verdicts"]["flips"] == {"pass_to_fail": [], "fail_to_pass": []}
        assert cmp["verdicts"]["near_match"]["flickering"] == [] and cmp["verdicts"]["left_decided"] == []
        assert cmp["verdicts"]["mcnemar"]["p_value"] is None
        ci = cmp["verdicts"]["bootstrap"]["ci"]
        assert ci is None or ci == [0.0, 0.0]


@settings(max_examples=60, deadline=None)
@given(runs_of(verdict_record), runs_of(verdict_record))
def test_swapping_the_runs_swaps_the_flips(a, b):
    ab = compare_runs(a, b, n_resamples=200)
    ba = compare_runs(b, a, n_resamples=200)
    assert set(ab["added"]) == set(ba["removed"]) and set(ab["removed"]) == set(ba["added"])
    if ab["verdicts"] is None:
        assert ba["verdicts"] is None
        return
    fa, fb = ab["verdicts"]["flips"], ba["verdicts"]["flips"]
    assert {f["id"] for f in fa["pass_to_fail"]} == {f["id"] for f in fb["fail_to_pass"]}
    assert {f["id"] for f in fa["fail_to_pass"]} == {f["id"] for f in fb["pass_to_fail"]}
    assert set(ab["verdicts"]["near_match"]["stable"]) == set(ba["verdicts"]["near_match"]["stable"])
    assert ab["verdicts"]["mcnemar"]["p_value"] == ba["verdicts"]["mcnemar"]["p_value"]  # symmetric test
    d1, d2 = ab["verdicts"]["bootstrap"]["diff"], ba["verdicts"]["bootstrap"]["diff"]
    assert (d1 is None and d2 is None) or d1 == pytest.approx(-d2)


@settings(max_examples=80, deadline=None)
@given(st.lists(verdict_record, max_size=30))
def test_buckets_partition_the_cases_as_pass_rate_counts_them(records):
    pr = pass_rate(records)
    counts = {name: sum(1 for r in records if bucket(r) == name) for name in BUCKETS}
    assert sum(counts.values()) == pr.n == len(records)
    assert (counts["pass"], counts["fail"], counts["near_match"], counts["needs_human"], counts["unscored"],
            counts["verified_wrong"]) == (pr.match, pr.no_match, pr.near_match, pr.needs_human, pr.unscored, pr.verified_wrong)


@settings(max_examples=60, deadline=None)
@given(runs_of(f1_record), runs_of(f1_record))
def test_f1_deltas_are_b_minus_a_and_the_interval_lies_within_them(a, b):
    cmp = compare_runs(a, b, n_resamples=200, top=3)
    s = cmp["scores"]
    common = [i for i in a if i in b]
    if not common:
        assert s is None
        return
    assert [d["id"] for d in s["deltas"]] == common
    for d in s["deltas"]:
        assert d["delta"] == pytest.approx(b[d["id"]]["whole_note"]["f1"] - a[d["id"]]["whole_note"]["f1"])
    assert s["improved"] + s["worsened"] + s["unchanged"] == len(common)
    lo, hi = s["bootstrap"]["ci"]
    deltas = [d["delta"] for d in s["deltas"]]
    assert min(deltas) - 1e-12 <= lo <= hi <= max(deltas) + 1e-12  # resampled means stay within the deltas' range
    assert len(s["biggest_movers"]) <= 3
    assert all(abs(m["delta"]) >= abs(x["delta"]) for m in s["biggest_movers"] for x in s["deltas"] if x not in s["biggest_movers"])
