"""compare_runs: flips, stable vs flickering near_match, F1 movers; McNemar and the paired bootstrap checked
against statsmodels / scipy and against values worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

from goldeval.errors import InputError
from goldeval.runs.compare import BUCKETS, CompareCases, bucket, compare_runs, compare_view, mcnemar_exact, paired_bootstrap
from goldeval.verdict import pass_rate


def v(verdict, why="", **kw):
    return {"status": "scored", "verdict": verdict, "confidence": 8, "needs_human": False, "why": why, "gold_status": "verified", **kw}


# Hand-built pair of runs; the comment says which bucket each case moves between.
RUN_A = {
    "c1": v("match", "a1"),        # pass -> fail
    "c2": v("match", "a2"),        # pass -> fail
    "c3": v("no_match", "a3"),     # fail -> pass
    "c4": v("match"),              # pass -> pass
    "c5": v("no_match"),           # fail -> fail
    "c6": v("near_match"),         # near -> near: stable
    "c7": v("near_match"),         # near -> pass: flickering
    "c8": v("match"),              # pass -> needs_human: left the decided set
    "c9": v("match"),              # removed in B
    "c11": v("match", gold_status="verified_wrong"),   # verified_wrong in both: excluded
    "c12": {"id": "c12", "status": "unscored", "reason": "query failed"},  # unscored -> pass
}
RUN_B = {
    "c1": v("no_match", "b1"),
    "c2": v("no_match", "b2"),
    "c3": v("match", "b3"),
    "c4": v("match"),
    "c5": v("no_match"),
    "c6": v("near_match"),
    "c7": v("match"),
    "c8": v("match", confidence=4, needs_human=True),
    "c10": v("match"),             # added in B
    "c11": v("match", gold_status="verified_wrong"),
    "c12": v("match"),
}


def test_flips_stayed_near_match_added_removed():
    cmp = compare_runs(RUN_A, RUN_B, seed=1)
    assert cmp["added"] == ["c10"] and cmp["removed"] == ["c9"]
    assert (cmp["n_a"], cmp["n_b"], cmp["n_common"]) == (11, 11, 10)
    ver = cmp["verdicts"]
    assert [f["id"] for f in ver["flips"]["pass_to_fail"]] == ["c1", "c2"]
    assert [f["id"] for f in ver["flips"]["fail_to_pass"]] == ["c3"]
    # both whys side by side
    assert ver["flips"]["pass_to_fail"][0]["a"]["why"] == "a1" and ver["flips"]["pass_to_fail"][0]["b"]["why"] == "b1"
    assert ver["stayed"] == {"pass": ["c4"], "fail": ["c5"]}
    assert ver["near_match"]["stable"] == ["c6"]
    assert [(f["id"], f["a"]["verdict"], f["b"]["verdict"]) for f in ver["near_match"]["flickering"]] == [("c7", "near_match", "match")]
    assert ver["left_decided"] == [
        {"id": "c7", "a": "near_match", "b": "pass"},
        {"id": "c8", "a": "pass", "b": "needs_human"},
        {"id": "c12", "a": "unscored", "b": "pass"},
    ]
    assert ver["transitions"]["pass->fail"] == 2 and ver["transitions"]["verified_wrong->verified_wrong"] == 1
    assert cmp["regressions"] == ["c1", "c2"]
    assert cmp["scores"] is None  # verdicts only


def test_pass_rates_use_the_shared_accounting():
    ver = compare_runs(RUN_A, RUN_B)["verdicts"]
    # A: match c1 c2 c4 c8 c9 = 5, no_match c3 c5 = 2 -> 5/7; near c6 c7; verified_wrong c11; unscored c12
    a = ver["pass_rate"]["a"]
    assert (a["match"], a["no_match"], a["near_match"], a["verified_wrong"], a["unscored"], a["needs_human"]) == (5, 2, 2, 1, 1, 0)
    assert a["rate"] == pytest.approx(5 / 7)
    # B: match c3 c4 c7 c10 c12 = 5, no_match c1 c2 c5 = 3 -> 5/8; needs_human c8
    b = ver["pass_rate"]["b"]
    assert (b["match"], b["no_match"], b["needs_human"]) == (5, 3, 1)
    assert b["rate"] == pytest.approx(5 / 8)
    assert a == pass_rate(RUN_A.values()).to_dict()


def test_bucket_agrees_with_pass_rate_on_every_record():
    records = list(RUN_A.values()) + list(RUN_B.values())
    counts = {name: sum(1 for r in records if bucket(r) == name) for name in BUCKETS}
    pr = pass_rate(records)
    assert counts == {"pass": pr.match, "fail": pr.no_match, "near_match": pr.near_match,
                      "needs_human": pr.needs_human, "unscored": pr.unscored, "verified_wrong": pr.verified_wrong}


def test_mcnemar_on_the_hand_built_runs():
    # b = 2 (pass->fail), c = 1 (fail->pass): exact two-sided p = min(1, 2 * P(X <= 1)), X ~ Bin(3, 1/2)
    # = min(1, 2 * (1 + 3) / 8) = 1.0
    m = compare_runs(RUN_A, RUN_B)["verdicts"]["mcnemar"]
    assert (m["b"], m["c"], m["n_discordant"]) == (2, 1, 3)
    assert m["p_value"] == pytest.approx(1.0)
    assert m["p_value"] == pytest.approx(mcnemar([[1, 2], [1, 1]], exact=True).pvalue)


@pytest.mark.parametrize("b, c", [(8, 1), (1, 8), (14, 0), (5, 5), (30, 12), (0, 3), (1, 0)])
def test_mcnemar_matches_statsmodels(b, c):
    ours = mcnemar_exact(b, c)["p_value"]
    theirs = mcnemar(np.array([[10, b], [c, 7]]), exact=True).pvalue
    assert ours == pytest.approx(theirs, rel=1e-12)


def test_mcnemar_by_hand():
    # 8 vs 1: P(X <= 1), X ~ Bin(9, 1/2) = (1 + 9) / 512; two-sided doubles it: 20 / 512 = 0.0390625
    assert mcnemar_exact(8, 1)["p_value"] == pytest.approx(20 / 512)
    # 14 vs 0 (the SQL example's two arms): 2 / 2**14
    assert mcnemar_exact(14, 0)["p_value"] == pytest.approx(2 / 2**14)


def test_no_discordant_pairs_is_stated_not_divided_by_zero():
    m = mcnemar_exact(0, 0)
    assert m["p_value"] is None and m["n_discordant"] == 0 and m["note"].startswith("no discordant pairs")
    same = compare_runs({"a": v("match"), "b": v("no_match")}, {"a": v("match"), "b": v("no_match")})
    assert same["verdicts"]["mcnemar"]["note"].startswith("no discordant pairs")
    assert same["verdicts"]["bootstrap"]["ci"] == [0.0, 0.0]  # identical outcomes: the difference is exactly 0


def test_mcnemar_rejects_negative_counts():
    with pytest.raises(InputError, match="counts must be ≥ 0"):
        mcnemar_exact(-1, 2)


def _scipy_paired_ci(a, b, *, n_resamples, confidence, seed):
    res = stats.bootstrap(
        (np.asarray(a, float), np.asarray(b, float)),
        lambda x, y, axis=-1: np.mean(y, axis=axis) - np.mean(x, axis=axis),
        paired=True, vectorized=True, n_resamples=n_resamples, confidence_level=confidence,
        method="percentile", random_state=np.random.default_rng(seed),
    )
    return res.confidence_interval.low, res.confidence_interval.high


def test_bootstrap_f1_interval_agrees_with_scipy():
    rng = np.random.default_rng(7)
    a = rng.uniform(0.2, 0.6, 300)
    b = np.clip(a + rng.normal(0.02, 0.05, 300), 0, 1)
    ours = paired_bootstrap(a, b, n_resamples=20_000, confidence=0.95, seed=3)
    lo, hi = _scipy_paired_ci(a, b, n_resamples=20_000, confidence=0.95, seed=11)
    assert ours["diff"] == pytest.approx(float(np.mean(b - a)))
    # independent draws: the endpoints agree to Monte-Carlo error (sd of the mean diff here is ~0.003)
    assert ours["ci"][0] == pytest.approx(lo, abs=1e-3)
    assert ours["ci"][1] == pytest.approx(hi, abs=1e-3)


def test_bootstrap_of_many_valued_differences_agrees_with_scipy_at_5000_pairs():
    # 5,000 pairs with continuous F1 differences: the resamples come from goldeval.resample's stream (not
    # default_rng(seed).integers), so the endpoints agree with scipy.stats.bootstrap (paired, percentile) to Monte
    # Carlo error only. sd of the mean difference: 0.05 / sqrt(5,000) = 7.1e-4; each endpoint's Monte Carlo error
    # at 10,000 resamples is ~2% of that; 1.5e-4 is ~10 of those errors.
    rng = np.random.default_rng(17)
    a = rng.uniform(0.3, 0.9, 5_000)
    b = np.clip(a + rng.normal(0.01, 0.05, 5_000), 0, 1)
    ours = paired_bootstrap(a, b, n_resamples=10_000, confidence=0.95, seed=0)
    lo, hi = _scipy_paired_ci(a, b, n_resamples=10_000, confidence=0.95, seed=1)
    assert ours["ci"][0] == pytest.approx(lo, abs=1.5e-4)
    assert ours["ci"][1] == pytest.approx(hi, abs=1.5e-4)
    assert ours == paired_bootstrap(a, b, n_resamples=10_000, confidence=0.95, seed=0)  # the same seeded result
    assert ours["ci"] != paired_bootstrap(a, b, n_resamples=10_000, confidence=0.95, seed=1)["ci"]


def test_bootstrap_pass_rate_interval_agrees_with_scipy():
    # pass indicators take three difference values (-1, 0, 1): the multinomial shortcut must give the same
    # distribution as resampling cases
    rng = np.random.default_rng(5)
    a = (rng.random(400) < 0.70).astype(float)
    b = np.where(rng.random(400) < 0.15, 1 - a, a)
    ours = paired_bootstrap(a, b, n_resamples=20_000, seed=2)
    lo, hi = _scipy_paired_ci(a, b, n_resamples=20_000, confidence=0.95, seed=9)
    assert ours["ci"][0] == pytest.approx(lo, abs=0.006)
    assert ours["ci"][1] == pytest.approx(hi, abs=0.006)


def test_bootstrap_by_hand_and_reproducible():
    # every pair moves by exactly +0.1: every resample's mean difference is 0.1
    out = paired_bootstrap([0.1, 0.5, 0.3], [0.2, 0.6, 0.4], seed=0)
    assert out["diff"] == pytest.approx(0.1) and out["ci"] == pytest.approx([0.1, 0.1])
    a, b = np.linspace(0, 1, 50), np.linspace(0, 1, 50) ** 2
    assert paired_bootstrap(a, b, seed=4) == paired_bootstrap(a, b, seed=4)
    assert paired_bootstrap(a, b, seed=4)["ci"] != paired_bootstrap(a, b, seed=5)["ci"]


def test_bootstrap_without_pairs_and_bad_arguments():
    out = paired_bootstrap([], [])
    assert out["ci"] is None and out["diff"] is None and "no pair" in out["note"]
    with pytest.raises(InputError, match="same length"):
        paired_bootstrap([1, 2], [1])
    with pytest.raises(InputError, match="confidence"):
        paired_bootstrap([1], [1], confidence=1.0)
    with pytest.raises(InputError, match="n_resamples"):
        paired_bootstrap([1], [1], n_resamples=10)


def f1(x):
    return {"status": "scored", "whole_note": {"precision": x, "recall": x, "f1": x}}


def test_f1_deltas_and_biggest_movers():
    a = {"c1": f1(0.5), "c2": f1(0.2), "c3": f1(0.9), "c4": {"id": "c4", "status": "unscored", "error": "x"}}
    b = {"c1": f1(0.7), "c2": f1(0.2), "c3": f1(0.4), "c4": f1(0.3)}
    s = compare_runs(a, b, top=1)["scores"]
    # deltas by hand: +0.2, 0, -0.5 -> mean -0.1; one up, one down, one unchanged; c4 scored in B only
    assert [d["id"] for d in s["deltas"]] == ["c1", "c2", "c3"]
    assert [d["delta"] for d in s["deltas"]] == pytest.approx([0.2, 0.0, -0.5])
    assert s["mean_delta"] == pytest.approx(-0.1)
    assert (s["mean_a"], s["mean_b"]) == (pytest.approx(1.6 / 3), pytest.approx(1.3 / 3))
    assert (s["improved"], s["worsened"], s["unchanged"]) == (1, 1, 1)
    assert [m["id"] for m in s["biggest_movers"]] == ["c3"]
    assert s["scored_in_one_only"] == ["c4"]
    assert s["bootstrap"]["diff"] == pytest.approx(-0.1)
    assert compare_runs(a, b)["verdicts"] is None  # F1 only


def test_label_outcomes_compare_as_pass_and_fail():
    a = {"x": {"status": "scored", "gold": "escalate", "pred": "escalate", "outcome": "tp"},
         "y": {"status": "scored", "gold": "approve", "pred": "approve", "outcome": "tn"}}
    b = {"x": {"status": "scored", "gold": "escalate", "pred": None, "outcome": "fn"},
         "y": {"status": "scored", "gold": "approve", "pred": "approve", "outcome": "tn"}}
    cmp = compare_runs(a, b)
    assert cmp["regressions"] == ["x"] and cmp["verdicts"]["stayed"]["pass"] == ["y"]


def test_run_metadata_differences_and_scorer_warning():
    ra = {"id": "A", "arm": "one", "scorer_name": "token_f1", "tokenizer": "openscribe", "config": {"t": 1}}
    rb = {"id": "B", "arm": "two", "scorer_name": "labels", "tokenizer": "openscribe", "config": {"t": 1}}
    cmp = compare_runs({}, {}, run_a=ra, run_b=rb)
    assert cmp["differs"] == {"arm": ["one", "two"], "scorer_name": ["token_f1", "labels"]}
    assert "different scorers" in cmp["warnings"][0]
    assert compare_runs({"a": f1(1)}, {"b": f1(1)})["warnings"] == ["the runs share no case id: nothing can be compared case by case"]


def test_a_verdict_run_and_a_score_run_are_refused_not_compared():
    # break-fix finding: a judge run compared with a score run reported the F1 cases as "unscored 57" in a pass
    # rate and exited 0; there is no case-by-case comparison between a verdict and an F1.
    ra = {"id": "A", "scorer_name": "token_f1"}
    rb = {"id": "B", "scorer_name": "answer_judge"}
    with pytest.raises(InputError, match=r"run A \(A, token_f1\) holds per-case scores \(F1\) and run B \(B, answer_judge\) holds verdicts"):
        compare_runs({"x": f1(0.5)}, {"x": v("match")}, run_a=ra, run_b=rb)
    # a wholly unscored run has no kind: compared (every case left the decided set), not refused
    cmp = compare_runs({"x": {"status": "unscored", "reason": "bad row"}}, {"x": v("match")})
    assert cmp["verdicts"]["left_decided"] == [{"id": "x", "a": "unscored", "b": "pass"}]


def test_a_label_run_and_a_judge_run_are_refused_not_compared():
    # A fresh-user run: `report --results a.json --compare labels.json` (a judge run and a labels run) compared
    # them, with a "pass rate B: 95.0% (190/200 decided)" made of the labels run's right/wrong labels. Refused both
    # ways round; two label runs and two judge runs compare as before.
    lab = {"x": {"status": "scored", "gold": "y", "pred": "y", "outcome": "tp"}}
    ra = {"id": "A", "scorer_name": "answer_judge"}
    rb = {"id": "B", "scorer_name": "labels"}
    with pytest.raises(InputError, match=r"run A \(A, answer_judge\) holds verdicts \(match, no_match, \.\.\.\) and run B "
                                         r"\(B, labels\) holds label outcomes \(tp, fp, fn, tn\): a label and a data-answer verdict"):
        compare_runs({"x": v("match")}, lab, run_a=ra, run_b=rb)
    with pytest.raises(InputError, match="a label and a data-answer verdict cannot be compared"):
        compare_runs(lab, {"x": v("match")})
    assert compare_runs(lab, lab)["labels"] is not None and compare_runs({"x": v("match")}, {"x": v("no_match")})["regressions"] == ["x"]


def test_an_unfinished_run_is_compared_with_a_warning():
    # break-fix: an interrupted run was compared as if complete (its missing cases listed only as "removed")
    ra = {"id": "A", "scorer_name": "answer_judge", "status": "finished"}
    rb = {"id": "B", "scorer_name": "answer_judge", "status": "interrupted"}
    cmp = compare_runs({"x": v("match"), "y": v("match")}, {"x": v("match")}, run_a=ra, run_b=rb)
    assert cmp["warnings"] == ["run B (B) did not finish (interrupted): only the 1 case(s) it recorded are compared; "
                               "resume it first for a full comparison"]
    assert cmp["removed"] == ["y"]


def test_bootstrap_memory_is_bounded_and_resamples_capped():
    # break-fix: --resamples 20,000,000 took 570 MB (all multinomial draws at once) and 10x that would exhaust memory.
    # A seeded run in blocks gives the same interval as the default single block when it fits in one (10,000 x 3
    # cells). By hand: b - a = -1, 0, 0, +1, 0, 0, so the mean difference is 0.
    a, b = [1, 0, 1, 0, 1, 1], [0, 0, 1, 1, 1, 1]
    small = paired_bootstrap(a, b, n_resamples=10_000, seed=3)
    assert small["diff"] == 0.0 and small == paired_bootstrap(a, b, n_resamples=10_000, seed=3)
    big = paired_bootstrap(a, b, n_resamples=1_000_000, seed=3)  # 2 blocks of 666,666 rows x 3 values
    assert big["ci"][0] <= 0.0 <= big["ci"][1]
    with pytest.raises(InputError, match="n_resamples must be ≤ 1,000,000, got 1,000,001"):
        paired_bootstrap(a, b, n_resamples=1_000_001)


def test_the_measured_differently_note_spells_values_as_json():
    # the same fresh-user page read "check_canonical: True → none" (Python's True); the JSON says true
    import io

    from rich.console import Console

    from goldeval.report.runs import render_compare

    ra = {"id": "A", "scorer_name": "answer_judge", "config": {"check_canonical": True, "max_rows": 10}}
    rb = {"id": "B", "scorer_name": "answer_judge", "config": {"check_canonical": False, "max_rows": 10}}
    buf = io.StringIO()
    render_compare(compare_runs({"x": v("match")}, {"x": v("match")}, run_a=ra, run_b=rb), Console(file=buf, width=200))
    assert "check_canonical: true → false" in buf.getvalue()


def test_golden_changed_lists_the_cases_whose_deciding_golden_differs():
    # Cases with alternative goldens (golden_used); a record without it was judged against its one golden, the
    # primary. g1: the same match, decided by another golden; g2: pass -> fail, the deciding golden moved back to the
    # primary; g3: the same golden; g4: no golden_used in A (no alternatives then), the primary in B: unchanged;
    # g5: unscored in A: no deciding golden to compare.
    a = {"g1": v("match", golden_used="primary"), "g2": v("match", golden_used="alternatives[1]"),
         "g3": v("match", golden_used="alternatives[0]"), "g4": v("no_match"),
         "g5": {"id": "g5", "status": "unscored", "reason": "query failed"}}
    b = {"g1": v("match", golden_used="alternatives[0]"), "g2": v("no_match", golden_used="primary"),
         "g3": v("match", golden_used="alternatives[0]"), "g4": v("no_match", golden_used="primary"),
         "g5": v("match", golden_used="alternatives[0]")}
    ver = compare_runs(a, b)["verdicts"]
    assert ver["golden_changed"] == [{"id": "g1", "a": "primary", "b": "alternatives[0]"},
                                     {"id": "g2", "a": "alternatives[1]", "b": "primary"}]
    flip = ver["flips"]["pass_to_fail"][0]
    assert (flip["id"], flip["a"]["golden_used"], flip["b"]["golden_used"]) == ("g2", "alternatives[1]", "primary")
    # Runs without alternatives: nothing changed, and a flip's sides carry no golden_used.
    assert compare_runs(RUN_A, RUN_B)["verdicts"]["golden_changed"] == []
    assert "golden_used" not in compare_runs(RUN_A, RUN_B)["verdicts"]["flips"]["pass_to_fail"][0]["a"]
    # compare's text output: one line naming each such case and both goldens; none when no golden changed.
    import io

    from rich.console import Console

    from goldeval.report.runs import render_compare

    buf = io.StringIO()
    render_compare(compare_runs(a, b), Console(file=buf, width=200))
    assert "deciding golden changed: 2 (g1 primary → alternatives[0], g2 alternatives[1] → primary)" in buf.getvalue()
    buf = io.StringIO()
    render_compare(compare_runs(RUN_A, RUN_B), Console(file=buf, width=200))
    assert "deciding golden changed" not in buf.getvalue()


def test_a_runs_age_is_measured_from_its_recorded_time_and_said_in_its_largest_unit():
    from datetime import UTC, datetime

    from goldeval.report.runs import age_words
    from goldeval.runs.compare import run_age_seconds

    now = datetime(2026, 12, 4, 10, 0, tzinfo=UTC)
    # 2026-12-01 09:30 → 2026-12-04 10:00 is 3 days and 30 minutes: 3 × 86400 + 1800 = 261000 s
    assert run_age_seconds("2026-12-01T09:30:00+00:00", now=now) == 261_000.0
    assert age_words(261_000.0) == "3 days ago"
    assert run_age_seconds("2026-12-04T09:59:00.5+00:00", now=now) == 59.5 and age_words(59.5) == "just now"
    assert age_words(3600) == "1 hour ago" and age_words(7199) == "1 hour ago" and age_words(120) == "2 minutes ago"
    assert age_words(-3600) == "in the future (clock skew?)"  # another machine's clock ahead of this one's
    assert run_age_seconds(None) is None and run_age_seconds("yesterday") is None


def test_compare_view_keeps_what_a_comparison_reads():
    rec = {"id": "c1", "line": 4, "status": "scored", "whole_note": {"precision": 0.5, "recall": 1.0, "f1": 2 / 3},
           "tokens": {"prediction": 4, "reference": 2, "overlap": 2}}
    assert compare_view(rec) == {"status": "scored", "f1": 2 / 3}
    judged = v("no_match", "wrong year", golden_used="alternatives[0]", raw="judge text " * 50, column_pairing={"x": "y"})
    assert compare_view(judged) == {k: judged[k] for k in ("status", "verdict", "confidence", "needs_human", "why",
                                                           "gold_status", "golden_used")}
    label = {"status": "scored", "gold": "escalate", "pred": None, "outcome": "fn", "line": 9}
    assert compare_view(label) == {"status": "scored", "gold": "escalate", "pred": None, "outcome": "fn"}


@pytest.mark.parametrize("runs", ["verdicts", "scores", "labels"])
def test_compare_cases_give_the_same_comparison_as_the_records(runs):
    if runs == "verdicts":
        a, b = RUN_A, RUN_B
    elif runs == "scores":
        a = {"c1": f1(0.5), "c2": f1(0.2), "c3": f1(0.9), "c4": {"id": "c4", "status": "unscored", "error": "x"},
             "c5": {"status": "scored", "f1": 0.25}, "c6": {"f1": 0.5}}  # no status: scored, as every reader takes it
        b = {"c1": f1(0.7), "c2": f1(0.2), "c3": f1(0.4), "c4": f1(0.3), "c5": {"status": "scored", "score": 1},
             "c6": {"status": "unscored", "reason": "bad row"}}
    else:
        a = {"x": {"status": "scored", "gold": "escalate", "pred": "escalate", "outcome": "tp"},
             "y": {"status": "scored", "gold": "approve", "pred": "approve", "outcome": "tn"}}
        b = {"x": {"status": "scored", "gold": "escalate", "pred": None, "outcome": "fn"},
             "y": {"status": "scored", "gold": "approve", "pred": "approve", "outcome": "tn"}}
    want = compare_runs(a, b, seed=2, top=3)
    ca, cb = CompareCases(a.items()), CompareCases(b.items())
    assert list(ca) == list(a) and len(cb) == len(b)
    assert compare_runs(ca, cb, seed=2, top=3) == want
    if runs == "scores":  # kept as the bare score, given back as its view
        assert ca._rows["c1"] == 0.5 and ca["c1"] == {"status": "scored", "f1": 0.5}
        assert ca["c4"] == {"status": "unscored"} and ca["c6"] == {"f1": 0.5}
