"""The compare page's verdict and A-against-B charts (:mod:`goldeval.report.comparison`), and the decision
``--fail-on-regression`` takes (:func:`goldeval.runs.compare.regression_decision`), each rule both ways.

Every expected value is worked out by hand from the few cases written in each test."""

from __future__ import annotations

import pytest

from goldeval.report import charts
from goldeval.report.comparison import NOT_IN_A, NOT_IN_B, compare_charts, comparison_verdict, flow_counts
from goldeval.runs.compare import compare_runs, regression_decision


def verdicts(**cases: str) -> dict[str, dict[str, str]]:
    return {cid: {"verdict": v} for cid, v in cases.items()}


def test_regression_decision_fails_on_a_pass_that_became_a_fail():
    d = regression_decision(compare_runs(verdicts(q1="match", q2="match"), verdicts(q1="no_match", q2="match")))
    assert d == {"applies": True, "failed": True, "n_regressions": 1, "n_decided_in_both": 2,
                 "reason": "1 case(s) went from pass to fail: q1"}


def test_regression_decision_passes_when_only_fixes_happened():
    # q1 fail → pass, q2 stayed a pass: 2 decided in both, no regression
    d = regression_decision(compare_runs(verdicts(q1="no_match", q2="match"), verdicts(q1="match", q2="match")))
    assert d["failed"] is False and d["reason"] == "no case went from pass to fail (2 case(s) decided in both runs)"


def test_regression_decision_never_passes_on_no_evidence():
    # q1 is near_match in A, q2 needs_human in B: nothing decided in both runs, so nothing shows there was no regression
    d = regression_decision(compare_runs(verdicts(q1="near_match", q2="match"), verdicts(q1="match", q2="needs_human")))
    assert d["failed"] is True and d["n_decided_in_both"] == 0
    assert d["reason"] == ("no case was decided (match or no_match) in both runs (2 case id(s) in common), so nothing "
                           "shows that no pass became a fail")


def test_regression_decision_never_passes_on_a_run_that_did_not_finish():
    # B was interrupted after q1 (a pass in both): q2 and q3, passes in A, were never judged in B, so no evidence
    # shows they did not become fails; the same comparison with B finished passes (1 case decided in both)
    a = verdicts(q1="match", q2="match", q3="match")
    run_a = {"id": "A", "scorer_name": "answer_judge", "status": "finished"}
    for status, failed in (("interrupted", True), ("running", True), ("failed", True), ("finished", False)):
        run_b = {"id": "B", "scorer_name": "answer_judge", "status": status}
        d = regression_decision(compare_runs(a, verdicts(q1="match"), run_a=run_a, run_b=run_b))
        assert d["failed"] is failed and d["n_regressions"] == 0 and d["n_decided_in_both"] == 1, status
    assert d["reason"] == "no case went from pass to fail (1 case(s) decided in both runs)"
    d = regression_decision(compare_runs(a, a, run_a={**run_a, "status": "interrupted"}, run_b=run_a))
    assert d["failed"] is True and d["reason"] == (
        "run A (A) did not finish (interrupted), so the cases it did not record may hold a regression that this "
        "comparison cannot see; resume it (the same scoring command) and compare again")
    # a regression found among the recorded cases is still named as such
    d = regression_decision(compare_runs(a, verdicts(q1="no_match"), run_a=run_a, run_b={**run_a, "id": "B", "status": "interrupted"}))
    assert d["failed"] is True and d["reason"] == "1 case(s) went from pass to fail: q1"


def test_regression_decision_does_not_apply_to_f1_runs():
    cmp = compare_runs({"a": {"whole_note": {"f1": 0.5}}}, {"a": {"whole_note": {"f1": 0.25}}})
    d = regression_decision(cmp)
    assert d["applies"] is False and d["failed"] is None and "per-case scores (F1)" in d["reason"]


def test_regression_decision_speaks_of_labels_for_label_runs():
    # c1: gold escalate, predicted escalate (tp) in A, approve (fn) in B: a right label became wrong
    a = {"c1": {"outcome": "tp", "gold": "escalate", "pred": "escalate"}, "c2": {"outcome": "tn", "gold": "approve", "pred": "approve"}}
    b = {"c1": {"outcome": "fn", "gold": "escalate", "pred": "approve"}, "c2": {"outcome": "tn", "gold": "approve", "pred": "approve"}}
    d = regression_decision(compare_runs(a, b))
    assert d["reason"] == "1 case(s) went from a right label to a wrong one: c1"


def test_comparison_verdict_both_ways_with_mcnemar_and_the_difference():
    # q1 pass → fail, q3 fail → pass, q2 stays a pass: b = c = 1, McNemar exact p = P(|X − 1| ≥ 0), X ~ Bin(2, ½) = 1
    cmp = compare_runs(verdicts(q1="match", q2="match", q3="no_match"), verdicts(q1="no_match", q2="match", q3="match"))
    v = comparison_verdict(cmp)
    items = dict(v["items"])
    assert v["status"] == "REGRESSION" and v["decision"]["n_regressions"] == 1
    assert items["cases"] == "3 in both · 0 added in B · 0 removed from A"
    assert items["pass → fail"] == "1: q1" and items["fail → pass"] == "1: q3"
    assert items["McNemar exact"] == "1 pass→fail vs 1 fail→pass, two-sided p = 1"
    # pass rate 2/3 in both: the difference is 0 pt, with Newcombe's paired interval around it
    assert items["pass-rate difference B − A"].startswith("+0.0 pt [") and "Newcombe" in items["pass-rate difference B − A"]
    assert [r["side"] for r in v["runs"]] == ["A", "B"]


def test_comparison_verdict_no_regression_and_no_verdicts():
    fixed = comparison_verdict(compare_runs(verdicts(q1="no_match"), verdicts(q1="match")))
    assert fixed["status"] == "NO REGRESSION" and dict(fixed["items"])["fail → pass"] == "1: q1"
    f1 = comparison_verdict(compare_runs({"a": {"whole_note": {"f1": 0.5}}, "b": {"whole_note": {"f1": 0.5}}},
                                         {"a": {"whole_note": {"f1": 0.75}}, "b": {"whole_note": {"f1": 0.5}}}, n_resamples=200))
    items = dict(f1["items"])
    assert f1["status"] == "NO VERDICTS" and "pass → fail" not in items
    # A mean (0.5 + 0.5) / 2 = 0.5, B (0.75 + 0.5) / 2 = 0.625; one case up, one unchanged
    assert items["F1 over the cases scored in both"] == "A 0.5000 → B 0.6250 over 2 case(s) · 1 up, 0 down, 1 unchanged"
    assert items["mean F1 difference B − A"].startswith("+0.1250 [")


def test_flow_counts_pairs_each_case_and_names_cases_one_run_lacks():
    rows_a = {"q1": {"bucket": "pass"}, "q2": {"bucket": "fail"}, "q3": {"bucket": "near_match"}, "q4": {"bucket": "pass"}}
    rows_b = [{"id": "q1", "bucket": "fail"}, {"id": "q2", "bucket": "fail"}, {"id": "q3", "bucket": "unscored"},
              {"id": "q5", "bucket": "pass"}]
    assert flow_counts(rows_a, rows_b, "answers") == {("match", "no_match"): 1, ("no_match", "no_match"): 1,
                                                      ("near_match", "unscored"): 1, (NOT_IN_A, "match"): 1,
                                                      ("match", NOT_IN_B): 1}
    # labels: the outcomes, an unscored case as unscored whatever it holds
    lab_a = {"c1": {"bucket": "pass", "outcome": "tp"}, "c2": {"bucket": "unscored", "outcome": None}}
    lab_b = [{"id": "c1", "bucket": "fail", "outcome": "fn"}, {"id": "c2", "bucket": "pass", "outcome": "tn"}]
    assert flow_counts(lab_a, lab_b, "labels") == {("tp", "fn"): 1, ("unscored", "tn"): 1}


def _two_verdict_runs_charted(results_a: dict, results_b: dict) -> list[dict]:
    """compare_charts of run A (q1, q2 match: pass rate 1.0) against run B (q1 no_match, q2 match: 0.5), with the
    runs' results (their gates) given."""
    cmp = compare_runs(verdicts(q1="match", q2="match"), verdicts(q1="no_match", q2="match"), run_a={"id": "ra", "arm": "old"},
                       run_b={"id": "rb", "arm": "new"})
    rows_a = {"q1": {"id": "q1", "bucket": "pass"}, "q2": {"id": "q2", "bucket": "pass"}}
    rows_b = [{"id": "q1", "bucket": "fail"}, {"id": "q2", "bucket": "pass"}]
    head = {"headline": {"name": "pass rate", "key": "pass_rate", "value": 1.0, "ci": [0.342, 1.0]}}
    return compare_charts(cmp, "answers", rows_a=rows_a, rows_b=rows_b, summary_a=head,
                          summary_b={"headline": {**head["headline"], "value": 0.5, "ci": [0.095, 0.905]}},
                          results_a=results_a, results_b=results_b)


def test_compare_charts_for_verdict_runs_draw_flows_headlines_and_the_difference():
    out = _two_verdict_runs_charted({}, {})
    assert [c["id"] for c in out] == ["flows", "headlines", "difference"]
    flows = out[0]["svg"]
    assert "A old" in flows and "B new" in flows and "match 2" in flows and "no_match 1" in flows
    assert "1 of 2 case(s) moved" in flows
    assert "A old" in out[1]["svg"] and "0.500" in out[1]["svg"]
    # no F1 in these runs: no per-case F1 chart
    assert all(c["id"] != "paired-f1" for c in out)



def test_the_headlines_chart_draws_the_whole_runs_gate_and_never_a_slices():
    # both runs were gated by pass_rate >= 0.8 on the whole run and by pass_rate >= 0.5 on the slice "hard"; the
    # headline chart shows the whole runs' pass rates, so its dashed line is 0.8 (the first gate on the metric
    # was taken whatever it bounded: with the slice's line listed first, the whole runs were drawn against 0.5)
    whole = {"metric": "pass_rate", "op": "min", "limit": 0.8, "limit_text": "0.8", "passed": True}
    gates = {"gates": {"passed": True, "gates": [{**whole, "limit": 0.5, "limit_text": "0.5", "slice": "hard"}, whole]}}
    out = _two_verdict_runs_charted(gates, gates)
    svg = next(c["svg"] for c in out if c["id"] == "headlines")
    assert "gate min 0.8" in svg and "gate min 0.5" not in svg

def test_flows_refuses_an_unknown_category_and_a_negative_count():
    with pytest.raises(ValueError, match="'maybe' is not one of"):
        charts.flows({("match", "maybe"): 1}, ["match", "no_match"], title="t")
    with pytest.raises(ValueError, match="negative count -1"):
        charts.flows({("match", "no_match"): -1}, ["match", "no_match"], title="t")
    assert "no case in either run" in charts.flows({}, ["match"], title="t")


def test_paired_scatter_marks_the_movers_and_refuses_unpaired_values():
    svg = charts.paired_scatter([0.2, 0.9], [0.8, 0.1], marked=[(0.9, 0.1, "worse_case")], title="t", xlabel="A", ylabel="B")
    assert "worse_case" in svg
    with pytest.raises(ValueError, match="2 values of A for 1 of B"):
        charts.paired_scatter([0.1, 0.2], [0.3], title="t", xlabel="A", ylabel="B")


def test_the_compare_page_says_the_comparisons_warnings_and_who_was_decided_in_one_run_only():
    from goldeval.report.html import render_html
    from goldeval.report.model import build_model

    # q2 is decided in A only (near_match in B); the runs share q1, q2; q3 is A's alone (removed from A in B)
    res_a = {"scorer": {"name": "answer_judge"}, "per_example": [{"id": "q1", "verdict": "match", "confidence": 9},
                                                                 {"id": "q2", "verdict": "match", "confidence": 9},
                                                                 {"id": "q3", "verdict": "match", "confidence": 9}]}
    res_b = {"scorer": {"name": "answer_judge"}, "per_example": [{"id": "q1", "verdict": "match", "confidence": 9},
                                                                 {"id": "q2", "verdict": "near_match", "confidence": 9}]}
    cmp = compare_runs({c["id"]: c for c in res_a["per_example"]}, {c["id"]: c for c in res_b["per_example"]},
                       run_a={"id": "ra", "scorer_name": "answer_judge"}, run_b={"id": "rb", "scorer_name": "other"},
                       n_resamples=200)
    m = build_model(res_a, compare=cmp, results_b=res_b)
    assert m["compare"]["warnings"] == ["the runs were made by different scorers (answer_judge vs other); case-by-case "
                                        "comparison assumes the same kind of score"]
    assert any(ln.startswith("decided in one run only: 1 (e.g. q2 pass→near_match)") for ln in m["compare"]["stat_lines"])
    html = render_html(m)
    assert "warning: the runs were made by different scorers" in html
    assert dict(m["compare"]["verdict"]["items"])["cases"] == "2 in both · 0 added in B · 1 removed from A"
    assert m["compare"]["verdict"]["status"] == "NO REGRESSION"  # q1 stayed a pass: 1 decided in both, none fell
    # the flows count the case only A holds on its own band: q3 match → (not in B)
    assert "(not in B) 1" in next(c["svg"] for c in m["charts"] if c["id"] == "flows")


def test_a_compare_of_runs_without_verdicts_or_scores_says_there_is_no_chart():
    from goldeval.report.html import render_html
    from goldeval.report.model import build_model

    # a scorer goldeval does not know, whose records hold neither a verdict nor an F1: nothing to chart, and it says so
    res = {"scorer": {"name": "someone_elses"}, "per_example": [{"id": "x", "note": "n/a"}]}
    m = build_model(res, compare=compare_runs({"x": {"note": "n/a"}}, {"x": {"note": "n/a"}}), results_b=res)
    assert m["charts"] == []
    assert 'id="no-charts"' in render_html(m)
    full = build_model(res, compare=compare_runs(verdicts(x="match"), verdicts(x="match")), results_b=res)
    assert full["compare"]["verdict"]["status"] == "NO REGRESSION"
