"""goldeval.intervals and where its intervals are shown: the Wilson interval of a proportion (checked against
scipy and statsmodels), Newcombe's paired interval of a pass-rate difference (checked against a published table and
against the formula by hand), the gate's interval and its warning, compare's difference and the report headline."""

from __future__ import annotations

import math

import pytest
from scipy.stats import binomtest
from statsmodels.stats.proportion import proportion_confint

from goldeval.errors import InputError
from goldeval.gates.evaluate import evaluate_gates, interval_text, parse_gates
from goldeval.intervals import bootstrap_f1, newcombe_paired_difference, rogan_gladen, wilson_interval
from goldeval.report.model import build_model
from goldeval.runs.compare import compare_runs

Z = 1.959963984540054  # the 97.5% normal quantile


def wilson_by_hand(k: int, n: int) -> tuple[float, float]:
    """Wilson (1927): (p + z²/2n ± z·sqrt(p(1−p)/n + z²/4n²)) / (1 + z²/n)."""
    p = k / n
    centre = p + Z * Z / (2 * n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return (centre - half) / (1 + Z * Z / n), (centre + half) / (1 + Z * Z / n)


@pytest.mark.parametrize("k, n", [(21, 21), (0, 15), (19, 19), (36, 42), (1, 2), (0, 1), (500, 1000)])
def test_wilson_equals_scipy_statsmodels_and_the_formula(k, n):
    low, high = wilson_interval(k, n)
    sm_low, sm_high = proportion_confint(k, n, alpha=0.05, method="wilson")
    sp = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    hand = wilson_by_hand(k, n)
    assert low == pytest.approx(sm_low, abs=1e-12) == pytest.approx(float(sp.low), abs=1e-12)
    assert high == pytest.approx(sm_high, abs=1e-12) == pytest.approx(float(sp.high), abs=1e-12)
    assert (low, high) == pytest.approx(hand, abs=1e-12)


@pytest.mark.parametrize("confidence", [0.5, 0.8, 0.9, 0.95, 0.99, 0.999])
def test_wilson_equals_scipy_over_a_grid_within_1e_15(confidence):
    # goldeval evaluates Newcombe's eq. 3 itself (scipy.stats costs ~1.3 s to import on every summary); scipy's
    # binomtest stays the reference. Every k of n = 1..60, and larger n around the usual gate sizes.
    for n in [*range(1, 61), 99, 100, 343, 1000, 2086, 100_000]:
        for k in sorted({*range(0, min(n, 60) + 1), n // 3, n // 2, n - 1, n}):
            low, high = wilson_interval(k, n, confidence=confidence)
            sp = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
            assert abs(low - float(sp.low)) <= 1e-15 and abs(high - float(sp.high)) <= 1e-15, (k, n, confidence)
            assert (low == 0.0) == (k == 0) and (high == 1.0) == (k == n), (k, n)


def test_a_labels_summary_does_not_load_scipy(tmp_path):
    # The terminal table's Wilson intervals once imported scipy.stats: 1.3 s and ~75 MiB on every labels run (2.1 s
    # against 0.76 s with -q, at 1M rows). `python -X importtime` lists every module the real command imports.
    import subprocess
    import sys

    rows = tmp_path / "labels.jsonl"
    rows.write_text('{"id":"1","gold":"a","pred":"a"}\n{"id":"2","gold":"b","pred":"a"}\n{"id":"3","gold":"a","pred":"b"}\n')
    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "goldeval", "labels", str(rows), "--positive", "a",
                          "--no-store"], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert "0.061–0.792" in out.stdout  # accuracy 1/3, Wilson by hand: (2·1 + z²)/(2(3 + z²)) ∓ …
    imported = [ln.rsplit("|", 1)[-1].strip() for ln in out.stderr.splitlines() if ln.startswith("import time:")]
    assert "goldeval.labels.render" in imported
    assert not [m for m in imported if m.split(".")[0] == "scipy"], [m for m in imported if "scipy" in m][:5]


def test_wilson_is_not_degenerate_at_0_and_100_percent():
    # issue 29: "pass rate 1.0000 [1.0000, 1.0000]" for 21/21, "0.0000 [0.0000, 0.0000]" for 0/15
    low, high = wilson_interval(21, 21)
    assert round(low, 3) == 0.845 and high == 1.0  # by hand: 21 / (21 + 1.96²) = 0.8454
    low, high = wilson_interval(0, 15)
    assert low == 0.0 and high > 0 and round(high, 4) == 0.2039  # by hand: 1.96² / (15 + 1.96²) = 0.2039


def test_wilson_refuses_what_is_no_proportion_and_has_none_on_no_evidence():
    assert wilson_interval(0, 0) is None
    with pytest.raises(InputError, match=r"need 0 <= successes <= n, got successes=3, n=2"):
        wilson_interval(3, 2)
    with pytest.raises(InputError, match=r"whole numbers"):
        wilson_interval(1.5, 2)  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"confidence must be in \(0, 1\), got 95"):
        wilson_interval(1, 2, confidence=95)


def test_newcombe_paired_difference_at_minus_100_points_has_width():
    # 14 cases, every one pass in A and fail in B: a percentile bootstrap of the 0/1 outcomes gives [−1, −1].
    # By hand: p_A = 1, p_B = 0, φ = 0 (a margin is 0); u_B = 1.96² / (14 + 1.96²) = 0.21531, l_A = 1 − u_B;
    # high = −1 + sqrt(u_B² + (1 − l_A)²) = −1 + 0.21531·√2 = −0.69551; low = −1 − 0 = −1.
    r = newcombe_paired_difference(0, 14, 0, 0)
    assert r["diff"] == -1.0 and r["n_pairs"] == 14 and r["interval_method"] == "newcombe_paired"
    u_b = Z * Z / (14 + Z * Z)
    assert r["ci"] == pytest.approx([-1.0, -1.0 + u_b * math.sqrt(2)], abs=1e-12)
    assert r["ci"][1] - r["ci"][0] > 0.3


def test_newcombe_paired_difference_matches_the_published_table():
    # Fagerland, Lydersen & Laake (2017) §8.5, Cavo et al. (2012): table (59, 6, 16, 80), A − B = −0.0621
    # (95% CI −0.1186 to −0.0046), as R's contingencytables::Newcombe_square_and_add_CI_paired_2x2 prints. Ours is
    # B − A, so the mirror image.
    r = newcombe_paired_difference(59, 6, 16, 80)
    assert round(r["diff"], 4) == 0.0621
    assert [round(x, 4) for x in r["ci"]] == [0.0046, 0.1186]


def test_newcombe_paired_difference_without_pairs_says_so():
    r = newcombe_paired_difference(0, 0, 0, 0)
    assert r["diff"] is None and r["ci"] is None and "no case was decided" in r["note"]
    with pytest.raises(InputError, match=r"counts must be whole numbers ≥ 0, got \(1, -1, 0, 0\)"):
        newcombe_paired_difference(1, -1, 0, 0)


def test_bootstrap_f1_is_seeded_and_inside_0_1():
    a = bootstrap_f1({"tp": 36, "fp": 6, "fn": 4, "tn": 154}, seed=3)
    assert a == bootstrap_f1({"tp": 36, "fp": 6, "fn": 4, "tn": 154}, seed=3)
    assert 0 < a[0] < 72 / 82 < a[1] < 1  # the point F1 = 2·36 / (2·36 + 6 + 4) = 0.878 lies inside
    assert bootstrap_f1({}) is None


def _judge_results(match: int, no_match: int) -> dict:
    return {"scorer": {"name": "answer_judge"}, "aggregate": {
        "n": match + no_match, "n_scored": match + no_match, "n_failed": 0, "pass_rate": match / (match + no_match),
        "match": match, "no_match": no_match, "decided": match + no_match, "near_match": 0, "needs_human": 0,
        "unscored": 0, "verified_wrong": 0, "undefined": {}}, "per_example": [
        {"id": f"q{i}", "status": "scored", "verdict": "match" if i < match else "no_match"} for i in range(match + no_match)]}


def test_a_gate_shows_its_wilson_interval_and_warns_when_only_the_point_passes():
    dod = parse_gates("[gates]\npass_rate = { min = 0.95 }\n")
    r = evaluate_gates(_judge_results(21, 0), dod)
    g = r.results[0]
    assert r.passed and g.passed  # a warning, not another decision
    assert (round(g.ci_low, 3), g.ci_high, g.interval_method, g.interval_confidence) == (0.845, 1.0, "wilson", 0.95)
    assert interval_text(g.to_dict()) == "0.845–1.000 (95% Wilson)"
    assert r.summary.endswith("Warning: pass_rate 1.000 passes on the point but not on its 95% Wilson score interval, "
                              "whose low end is 0.845.")
    # silent where the interval clears the bound: 200/200 has its low end at 200 / (200 + 1.96²) = 0.9812 ≥ 0.95
    r = evaluate_gates(_judge_results(200, 0), dod)
    assert r.passed and r.results[0].interval_warning is None and "Warning" not in r.summary
    assert round(r.results[0].ci_low, 4) == 0.9812


def test_a_max_gate_on_missed_per_100_warns_on_the_high_end_in_its_unit():
    # 0 missed of 20 gold positives: 0 per 100 is within max 5; the Wilson high end of 0/20 is
    # 1.96² / (20 + 1.96²) = 0.1611, i.e. 16.1 per 100, above 5
    agg = {"n": 40, "n_scored": 40, "n_failed": 0, "tp": 20, "fp": 0, "fn": 0, "tn": 20, "missed": 0, "gold_positives": 20,
           "predicted_positives": 20, "missed_per_100": 0.0, "undefined": {}}
    r = evaluate_gates({"scorer": {"name": "labels"}, "aggregate": agg}, parse_gates("[gates]\nmissed_per_100 = { max = 5 }\n"))
    g = r.results[0]
    assert g.passed and g.ci_low == 0.0 and round(g.ci_high, 1) == 16.1
    assert interval_text(g.to_dict()) == "0.0–16.1 (95% Wilson)"
    assert "whose high end is 16.1" in g.interval_warning and r.summary.startswith("PASS: ")


def test_a_failing_gate_keeps_its_interval_and_no_warning():
    r = evaluate_gates(_judge_results(5, 15), parse_gates("[gates]\npass_rate = { min = 0.95 }\n"))
    g = r.results[0]
    assert not g.passed and g.interval_warning is None and g.ci_low is not None and "Warning" not in r.summary


def test_compare_gives_the_pass_rate_difference_newcombes_interval():
    a = {f"c{i}": {"status": "scored", "verdict": "match"} for i in range(14)}
    b = {f"c{i}": {"status": "scored", "verdict": "no_match"} for i in range(14)}
    cmp = compare_runs(a, b)
    d = cmp["verdicts"]["difference"]
    assert d["diff"] == -1.0 and d["interval_method"] == "newcombe_paired" and d["ci"][1] == pytest.approx(-0.69551, abs=1e-5)
    assert cmp["verdicts"]["bootstrap"]["ci"] == [-1.0, -1.0]  # the old key stays; it is the degenerate one
    from io import StringIO

    from rich.console import Console

    from goldeval.report.runs import render_compare

    buf = StringIO()
    render_compare(cmp, Console(file=buf, width=200, color_system=None))
    line = next(x for x in buf.getvalue().splitlines() if x.startswith("pass-rate difference"))
    assert line == ("pass-rate difference B − A: -100.0 pt, 95% Newcombe's paired score interval (Newcombe 1998, method 10) "
                    "[-100.0 pt, -69.6 pt] (14 pairs decided in both)")


def test_report_headline_of_a_pass_rate_is_wilson_and_says_so():
    model = build_model(_judge_results(21, 0))
    head = model["summary"]["headline"]
    assert head["interval_method"] == "wilson" and round(head["ci"][0], 3) == 0.845 and head["ci"][1] == 1.0
    assert "Wilson score interval" in head["interval_note"] and "Wilson 1927" in head["interval_note"]


# ---------------------------------------------------------------------------------------------------------------
# rogan_gladen: the pass rate corrected for the judge's measured sensitivity and specificity


def test_rogan_gladen_hand_worked_example():
    # The judge passed 80 of 100 decided cases (AP = 0.8). On the calibration it passed 36 of the 40 cases a person
    # passed (Se = 0.9) and failed 15 of the 20 a person failed (Sp = 0.75).
    # Rogan–Gladen: (0.8 + 0.75 − 1) / (0.9 + 0.75 − 1) = 0.55 / 0.65 = 11/13 = 0.846154.
    # Lang–Reiczigel interval, z = 1.959964, z² = 3.841459:
    #   AP' = (80 + z²/2) / (100 + z²) = 81.920729 / 103.841459 = 0.788902
    #   Se' = 37/42 = 0.880952, Sp' = 16/22 = 0.727273, J' = Se' + Sp' − 1 = 0.608225
    #   P'  = (0.788902 + 0.727273 − 1) / 0.608225 = 0.848657
    #   var(AP') = 0.788902·0.211098 / 103.841459 = 0.00160375
    #   var(Se') = 0.880952·0.119048 / 42 = 0.00249703;  var(Sp') = 0.727273·0.272727 / 22 = 0.00901578
    #   V = (0.00160375 + 0.848657²·0.00249703 + 0.151343²·0.00901578) / 0.608225² = 0.00975478, √V = 0.0987663
    #   d = 2z²(0.848657·0.00249703 − 0.151343·0.00901578) = 0.00579792
    #   CI = 0.848657 + 0.00579792 ± 1.959964·0.0987663 = 0.660877 to 1.048034, clipped to 1.
    r = rogan_gladen(80, 100, tp=36, n_pos=40, tn=15, n_neg=20)
    assert r["raw"] == 0.8 and r["sensitivity"] == 0.9 and r["specificity"] == 0.75
    assert r["estimate"] == pytest.approx(11 / 13, abs=1e-12)
    assert r["low"] == pytest.approx(0.660877, abs=1e-6)
    assert r["high_unclipped"] == pytest.approx(1.048034, abs=1e-6) and r["high"] == 1.0
    assert r["clipped"] is True and r["clipped_note"] == "clipped to [0, 1]: high 1.0480"
    assert r["interval_method"] == "lang_reiczigel" and r["undefined"] is None


@pytest.mark.parametrize("k, n, tp, n_pos, tn, n_neg, low, high", [
    (4060, 11284, 178, 179, 358, 359, 0.349, 0.372),  # example 1
    (51, 2971, 32, 33, 20, 20, 0.0, 0.053),  # example 2 (low end clipped at 0)
    (712, 11862, 8, 10, 12, 12, 0.0, 0.147),  # example 3 (AP given as 0.06 of 11862: 712 cases)
    (259, 509, 84, 127, 96, 109, 0.58, 0.87),  # example 4
    (51, 509, 23, 41, 187, 195, 0.037, 0.195),  # example 4, second test
])
def test_rogan_gladen_matches_lang_reiczigel_published_intervals(k, n, tp, n_pos, tn, n_neg, low, high):
    # Lang & Reiczigel, Prev Vet Med 113 (2014) 13–22, examples 1–4 (as quoted in R package asht's prevSeSp help)
    r = rogan_gladen(k, n, tp=tp, n_pos=n_pos, tn=tn, n_neg=n_neg)
    digits = len(str(low).split(".")[1]) if low else len(str(high).split(".")[1])
    assert round(r["low"], digits) == low and round(r["high"], digits) == high
    assert r["low"] <= r["estimate"] <= r["high"]


def test_rogan_gladen_clips_a_negative_estimate_and_says_so():
    # AP 0.2 below the judge's false-pass rate 1 − Sp = 0.25: (0.2 + 0.75 − 1) / 0.65 = −0.0769 → 0
    r = rogan_gladen(20, 100, tp=36, n_pos=40, tn=15, n_neg=20)
    assert r["estimate_unclipped"] == pytest.approx(-1 / 13) and r["estimate"] == 0.0 and r["low"] == 0.0
    assert r["clipped"] and r["clipped_note"].startswith("clipped to [0, 1]: estimate -0.0769, low -0.54")
    healthy = rogan_gladen(259, 509, tp=84, n_pos=127, tn=96, n_neg=109)
    assert healthy["clipped"] is False and healthy["clipped_note"] is None


def test_rogan_gladen_undefined_on_a_small_calibration_or_a_judge_no_better_than_chance():
    small = rogan_gladen(80, 100, tp=9, n_pos=9, tn=30, n_neg=30)
    assert small["estimate"] is None and small["low"] is None
    assert "9 human-pass and 30 human-fail" in small["undefined"] and "at least 10 of each" in small["undefined"]
    # Se 0.6, Sp 0.5: J = 0.1, and the low end of its Newcombe interval is below 0
    chance = rogan_gladen(20, 100, tp=6, n_pos=10, tn=5, n_neg=10)
    assert chance["estimate"] is None and chance["youden_j"] == pytest.approx(0.1)
    assert chance["youden_j_low"] < 0 and "no better than chance" in chance["undefined"]
    # the same rates on 10x the calibration: J's interval clears 0, so the correction is defined
    assert rogan_gladen(20, 100, tp=60, n_pos=100, tn=90, n_neg=100)["undefined"] is None
    assert rogan_gladen(0, 0, tp=36, n_pos=40, tn=15, n_neg=20)["undefined"] == "no case was decided (match or no_match) on this set"


def test_rogan_gladen_refuses_counts_that_are_no_proportions():
    with pytest.raises(InputError, match=r"0 <= tp <= n_pos.*tp=41, n_pos=40"):
        rogan_gladen(80, 100, tp=41, n_pos=40, tn=15, n_neg=20)
    with pytest.raises(InputError, match=r"confidence must be in \(0, 1\)"):
        rogan_gladen(80, 100, tp=36, n_pos=40, tn=15, n_neg=20, confidence=1.5)
