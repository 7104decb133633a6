"""Unit tests of goldeval.gates: parsing with line numbers, evaluation, undefined/absent metrics, wording."""

from __future__ import annotations

import hashlib

import pytest

from goldeval.errors import InputError
from goldeval.gates import METRICS, evaluate_gates, load_gates, parse_gates
from goldeval.labels import score_label_rows
from goldeval.io import Row
from goldeval.runs.corrected import add_corrected_pass_rate, corrected_pass_rate


def labels_results(tp, fp, fn, tn, positive="y"):
    gold = [positive] * (tp + fn) + ["n"] * (fp + tn)
    pred = [positive] * tp + ["n"] * fn + [positive] * fp + ["n"] * tn
    rows = [Row(i + 1, {"id": str(i), "gold": g, "pred": p}) for i, (g, p) in enumerate(zip(gold, pred))]
    return score_label_rows(rows, positive=positive, require_positive=False)


# ---- parsing


def test_typo_names_line_suggestion_and_known_names():
    text = 'agreed_by = "Head of underwriting"\n\n[gates]\nmissed_per_100 = { max = 2 }\nprecison = { min = 0.80 }\n'
    with pytest.raises(InputError) as info:
        parse_gates(text, source="dod.toml")
    msg = str(info.value)
    assert msg.startswith("dod.toml:5: gate 'precison' is not a metric goldeval computes. Did you mean 'precision'?")
    assert "Known metrics: accuracy," in msg and "whole_note_f1_mean" in msg and "pass_rate" in msg


def test_bound_not_a_number_names_the_line():
    with pytest.raises(InputError, match=r"^dod\.toml:3: gate 'precision': min must be a number .* got \"high\""):  # TOML's spelling
        parse_gates('[gates]\nrecall = { min = 0.9 }\nprecision = { min = "high" }\n', source="dod.toml")
    with pytest.raises(InputError, match=r"^dod\.toml:2: gate 'precision': min must be a finite number, got true"):
        parse_gates("[gates]\nprecision = { min = true }\n", source="dod.toml")


def test_bound_in_sub_table_names_its_own_line():
    text = "[gates.precision]\nnote = 'signed'\nmin = 'x'\n"
    with pytest.raises(InputError, match=r"^dod\.toml:3: gate 'precision': min must be a number"):
        parse_gates(text, source="dod.toml")


def test_percent_for_fraction_is_refused_with_a_hint():
    with pytest.raises(InputError, match=r"dod\.toml:2: gate 'precision': min = 80 is outside .*\[0, 1\].*Did you mean 0\.8\?"):
        parse_gates("[gates]\nprecision = { min = 80 }\n", source="dod.toml")


def test_other_refusals():
    with pytest.raises(InputError, match=r"dod\.toml:1: unknown key 'postive' .*Did you mean 'positive'\?"):
        parse_gates('postive = "y"\n[gates]\nrecall = { min = 0.9 }\n', source="dod.toml")
    with pytest.raises(InputError, match=r"has no gates"):
        parse_gates('agreed_by = "x"\n', source="dod.toml")
    with pytest.raises(InputError, match=r"dod\.toml:2: gate 'precision' must be a table of bounds.*precision = \{ min = 0\.8 \}"):
        parse_gates("[gates]\nprecision = 0.8\n", source="dod.toml")
    with pytest.raises(InputError, match=r"dod\.toml:2: gate 'recall' has no bound"):
        parse_gates("[gates]\nrecall = { note = 'x' }\n", source="dod.toml")
    with pytest.raises(InputError, match=r"gate 'recall': unknown key 'minimum'"):
        parse_gates("[gates]\nrecall = { minimum = 0.9 }\n", source="dod.toml")
    with pytest.raises(InputError, match=r"dod\.toml: not valid TOML: .*line 2"):
        parse_gates("[gates]\nrecall = { min = }\n", source="dod.toml")


def test_file_hash_and_metadata(tmp_path):
    f = tmp_path / "dod.toml"
    data = b'agreed_by = "Head of underwriting"\nagreed_on = 2026-11-02\npositive = "escalate"\n[gates]\nprecision = { min = 0.80 }\n'
    f.write_bytes(data)
    dod = load_gates(f)
    assert dod.sha256 == hashlib.sha256(data).hexdigest()
    assert (dod.agreed_by, dod.agreed_on, dod.positive) == ("Head of underwriting", "2026-11-02", "escalate")
    assert dod.gates[0].bounds[0].text == "0.80" and dod.gates[0].line == 5
    with pytest.raises(InputError, match=r"--gates .*nope\.toml: no such file"):
        load_gates(tmp_path / "nope.toml")


def test_odd_direction_is_a_warning_not_an_error():
    dod = parse_gates("[gates]\nprecision = { max = 0.99 }\n", source="d.toml")
    assert dod.warnings == ("d.toml:2: gate 'precision' has a max bound, but precision is better when higher; check it is meant.",)



def test_a_bound_written_inside_a_note_never_stands_for_the_bound():
    # the note holds "min = 0.75" after a comma; the gate's bound is min = 0.80 (the TOML value). The limit shown,
    # and the allowance computed from it, must be 0.80's: 39 caught at precision 0.80 allow floor(39 * 0.2 / 0.8) = 9
    # false positives (0.75 would allow 13, and the summary read "Precision 0.780 fails 0.75")
    dod = parse_gates('[gates]\nprecision = { note = "signed 2026-11-02, min = 0.75, raised in Q3", min = 0.80 }\n')
    assert dod.gates[0].bounds[0].text == "0.8" and dod.gates[0].bounds[0].value == 0.8
    r = evaluate_gates(labels_results(39, 11, 1, 10), dod)
    assert r.summary == ("FAIL: Precision 0.780 fails 0.8; with the 39 'y' cases caught, precision 0.8 allows at most 9 "
                         "false positives.")
    # a multi-line string that holds a gate line: the bound shown is the gate's own (2, on line 6), not the string's 5
    dod = parse_gates('title = """Escalations\n[gates]\nmissed_per_100 = { max = 5 }\n"""\n[gates]\nmissed_per_100 = { max = 2 }\n')
    assert (dod.gates[0].bounds[0].text, dod.gates[0].bounds[0].value, dod.gates[0].line) == ("2", 2.0, 6)
    # the healthy case: the text as written is kept (0.80, not 0.8; 1_000 read as 1000)
    dod = parse_gates('[gates]\nprecision = { min = 0.80, note = "min = 0.75 before" }\nn_scored = { min = 1_000 }\n')
    assert [g.bounds[0].text for g in dod.gates] == ["0.80", "1000"]


# ---- evaluation


def test_bound_is_inclusive_and_rates_unrounded():
    # 4 tp, 1 fp: precision 4/5 = 0.8 passes min = 0.80; 2 misses of 99: 2.0202 per 100 fails max = 2.
    # The decision stays PASS; the line warns that 4 of 5 cannot show 0.80 beyond this set: Wilson's low end,
    # (p + z²/2n − z·sqrt(p(1−p)/n + z²/4n²)) / (1 + z²/n) with p = 0.8, n = 5, z = 1.96, is 0.3755.
    r = evaluate_gates(labels_results(4, 1, 0, 5), parse_gates("[gates]\nprecision = { min = 0.80 }\n"))
    assert r.passed and r.summary == "PASS: Precision 0.800 passes 0.80. Warning: precision 0.800 passes on the point but not on its 95% Wilson score interval, whose low end is 0.376."
    assert r.results[0].interval_warning and (r.results[0].ci_low, r.results[0].interval_method) == (pytest.approx(0.37553, abs=5e-5), "wilson")
    r = evaluate_gates(labels_results(97, 0, 2, 1), parse_gates("[gates]\nmissed_per_100 = { max = 2 }\n"))
    assert not r.passed and r.results[0].observed == 200 / 99
    assert r.summary == (
        "FAIL: 2 'y' cases missed (2.02 per 100) against the agreed 2 per 100; on these 99 gold 'y' cases the limit "
        "allows 1 miss."
    )


def test_one_gold_positive_is_spoken_of_in_the_singular():
    # 1 tp, 0 fp, 0 fn (a fresh-clone user's small file read "on these 1 gold escalations", "with the 1 escalations
    # caught"): 2 per 100 of 1 gold positive allows 0.02 misses, so at most 0; precision 0.8 with 1 caught allows
    # floor(1 * 0.2 / 0.8) = 0 false positives
    r = evaluate_gates(labels_results(1, 0, 0, 3), parse_gates("[gates]\nmissed_per_100 = { max = 2 }\nprecision = { min = 0.8 }\n"))
    texts = [g.allowed_on_this_set for g in r.results]
    assert texts == ["2 per 100 on this 1 gold 'y' case allows 0.02 misses, so passing needs at most 0 misses",
                     "with the 1 'y' case caught, precision 0.8 allows at most 0 false positives"]


def test_undefined_metric_fails_and_says_why():
    res = labels_results(0, 0, 3, 5)
    r = evaluate_gates(res, parse_gates("[gates]\nprecision = { min = 0.80 }\n"))
    g = r.results[0]
    assert not g.passed and g.observed is None
    assert g.reason == "precision undefined: nothing was predicted positive"
    assert r.summary == (
        "FAIL: Precision undefined (nothing was predicted positive) fails 0.80; nothing was caught, so precision can "
        "reach 0.8 only once at least one 'y' case is caught."
    )


def test_a_max_gate_on_an_undefined_rate_fails_too():
    res = labels_results(0, 0, 0, 5)  # no gold positives: missed_per_100 is 0/0
    r = evaluate_gates(res, parse_gates("[gates]\nmissed_per_100 = { max = 2 }\nmissed = { max = 0 }\n"))
    # The count of misses is 0, but with no gold positive nothing could have been missed: 0 is no evidence that
    # the model catches positives, so that gate fails too (break-fix: it used to pass, exit 0, on no evidence).
    assert [g.status for g in r.results] == ["fail", "fail"]
    assert r.results[1].reason == "missed has no evidence: there are no gold 'y' cases on this set"
    assert r.summary == (
        "FAIL: missed_per_100 undefined (there are no gold positives) fails the agreed 2 per 100; there are no gold 'y' "
        "cases on this set, so no miss rate can be measured. Missed has no evidence (there are no gold 'y' cases on "
        "this set) and fails 0."
    )


def _only_failed_rows(n_bad):
    from goldeval.labels import score_label_rows

    rows = [Row(i + 1, {"id": str(i), "gold": None, "pred": "y"}) for i in range(n_bad)]
    return score_label_rows(rows, positive="y", require_positive=False)


@pytest.mark.parametrize("gate", ["missed = { max = 0 }", "fp = { max = 0 }", "fn = { max = 3 }", "tn = { min = 0 }",
                                  "missed_per_100 = { max = 100 }", "accuracy = { min = 0 }", "n_failed = { max = 5 }"])
def test_nothing_scored_passes_no_gate(gate):
    # Break-fix: a file whose every row failed (here 2 rows with a null gold label) scored nothing; count gates such
    # as `missed = { max = 0 }` used to PASS (exit 0) on it. By hand: n_scored = 0, so every gate has no evidence.
    res = _only_failed_rows(2)
    assert res["aggregate"]["n_scored"] == 0 and res["aggregate"]["n_failed"] == 2
    r = evaluate_gates(res, parse_gates(f"[gates]\n{gate}\n"))
    assert not r.passed
    assert r.results[0].reason.endswith("has no evidence: nothing was scored on this set")


@pytest.mark.parametrize("gate", ["whole_note_f1_mean = { max = 0.5 }", "n_failed = { max = 0 }"])
def test_nothing_scored_passes_no_gate_when_only_n_counts_the_scored_rows(gate):
    # upstream run_eval.py's aggregate keys (DESIGN.md "Token F1": `n` counts scored rows) have no n_scored: a file
    # of it with n = 0 (and a mean of 0.0 over no row) passed both gates, exit 0, on no evidence
    res = {"scorer": {"name": "token_f1"}, "aggregate": {"n": 0, "n_failed": 0, "whole_note_f1_mean": 0.0}}
    r = evaluate_gates(res, parse_gates(f"[gates]\n{gate}\n"))
    assert not r.passed and r.results[0].reason.endswith("has no evidence: nothing was scored on this set")
    # healthy: the same file with 3 rows scored passes (0.0 <= 0.5; 0 failed)
    res["aggregate"]["n"] = 3
    assert evaluate_gates(res, parse_gates(f"[gates]\n{gate}\n")).passed


def test_what_a_gate_allows_on_a_set_of_one_is_said_in_the_singular():
    # a slice of one case is common with --slice-by; the allowances read "a mean over the 1 scored examples; 1 failed
    # rows are left out", "on these 1 decided cases the limit needs at least 1 matches", "at most 1 rows that could
    # not be scored". The numbers by hand: ceil(0.6 * 1) = 1 match; floor(1.5) = 1 row
    def line(agg, gate):
        return evaluate_gates({"aggregate": agg}, parse_gates(f"[gates]\n{gate}\n")).results[0].allowed_on_this_set

    assert line({"whole_note_f1_mean": 0.5, "n": 1, "n_scored": 1, "n_failed": 1}, "whole_note_f1_mean = { min = 0.6 }") == (
        "a mean over the 1 scored example; 1 failed row is left out of the mean")
    assert line({"pass_rate": 0.0, "match": 0, "no_match": 1, "n_scored": 1}, "pass_rate = { min = 0.6 }") == (
        "on this 1 decided case the limit needs at least 1 match (at most 0 no_match)")
    assert line({"share_healthy": 0.0, "n_cases": 1, "n_healthy": 0}, "share_healthy = { min = 0.6 }") == (
        "on this 1 case the limit needs at least 1 healthy golden (at most 0 doubted or broken)")
    assert line({"n_failed": 2, "n_scored": 1}, "n_failed = { max = 1.5 }") == "the limit allows at most 1 row that could not be scored"
    # more than one keeps the plural: ceil(0.6 * 5) = 3 matches
    assert line({"pass_rate": 0.4, "match": 2, "no_match": 3, "n_scored": 5}, "pass_rate = { min = 0.6 }") == (
        "on these 5 decided cases the limit needs at least 3 matches (at most 2 no_match)")


def test_a_limit_another_metric_sets_is_shown_so_that_it_never_seems_to_contradict_the_decision():
    # kappa 0.4004 against annotator_kappa 0.40045 fails (by hand: 0.4004 < 0.40045); both rounded to 3 decimals the
    # line read "Kappa 0.400 fails annotator_kappa 0.400". They are rounded alike, to the digits that keep the order
    def decide(kappa, line):
        agg = {"kappa": kappa, "annotator_kappa": line, "n_scored": 20}
        return evaluate_gates({"aggregate": agg}, parse_gates('[gates]\nkappa = { min = "annotator_kappa" }\n'))

    r = decide(0.4004, 0.40045)
    assert r.summary == "FAIL: Kappa 0.40040 fails annotator_kappa 0.40045." and r.results[0].observed_text == "0.40040"
    # equal values pass (inclusive) and may show equal; a clear margin keeps 3 decimals
    assert decide(0.40045, 0.40045).summary == "PASS: Kappa 0.40045 passes annotator_kappa 0.40045."
    assert decide(0.5, 0.4).summary == "PASS: Kappa 0.500 passes annotator_kappa 0.400."


def test_evidence_is_read_from_the_counts_when_undefined_is_not_listed():
    # A results file that forgot `undefined` (hand-made, or an older writer): precision 0.0 with nothing predicted
    # positive must still not pass a max gate, nor recall 0.0 with no gold positives.
    res = labels_results(0, 0, 0, 5)
    res["aggregate"]["undefined"] = {}
    dod = parse_gates("[gates]\nprecision = { max = 0.5 }\nrecall = { max = 0.5 }\nf1 = { max = 0.5 }\n")
    r = evaluate_gates(res, dod)
    assert [g.reason for g in r.results] == [
        "precision has no evidence: nothing was predicted positive",
        "recall has no evidence: there are no gold 'y' cases on this set",
        "f1 has no evidence: there are no positives in gold or predictions",
    ]
    res["aggregate"]["undefined"] = ["precision"]
    with pytest.raises(InputError, match=r"aggregate\.undefined must be an object"):
        evaluate_gates(res, dod)


def test_pass_rate_and_no_match_need_a_decided_case():
    # every case needs_human: no_match = 0 is no evidence of correctness
    res = {"scorer": {"name": "answer_judge"}, "aggregate": {"n": 3, "n_scored": 3, "n_failed": 0, "pass_rate": 0.0,
           "match": 0, "no_match": 0, "decided": 0, "needs_human": 3, "undefined": {}}}
    r = evaluate_gates(res, parse_gates("[gates]\nno_match = { max = 0 }\n"))
    assert not r.passed and r.results[0].reason == "no_match has no evidence: no case was decided (match or no_match) on this set"


def test_summary_says_what_was_left_out_and_coverage_can_be_gated():
    # 3 scored rows (tp 1, tn 2) and 1 row with a null gold label: the forwarded line must not hide that row.
    rows = [Row(1, {"id": "a", "gold": "y", "pred": "y"}), Row(2, {"id": "b", "gold": "n", "pred": "n"}),
            Row(3, {"id": "c", "gold": "n", "pred": "n"}), Row(4, {"id": "d", "gold": None, "pred": "n"})]
    res = score_label_rows(rows, positive="y")
    r = evaluate_gates(res, parse_gates("[gates]\nrecall = { min = 1 }\n"))
    # Wilson's low end of 1/1 is 1 / (1 + 1.96²) = 0.2065: a warning beside the PASS, not another decision
    assert r.passed and r.summary == (
        "PASS: Recall 1.000 passes 1. Warning: recall 1.000 passes on the point but not on its 95% Wilson score interval, whose low end is 0.207. Not counted: 1 of 4 "
        "rows could not be scored (listed under failures)."
    )
    r = evaluate_gates(res, parse_gates("[gates]\nn_failed = { max = 0 }\nn_scored = { min = 4 }\n"))
    assert [g.status for g in r.results] == ["fail", "fail"] and r.results[0].allowed == 0
    # the coverage metrics belong to every scorer: no "never produces it" error on a free-text file
    assert evaluate_gates(FREE_TEXT, parse_gates("[gates]\nn_failed = { max = 0 }\n")).passed


def test_abbreviated_metric_names_are_not_capitalized():
    r = evaluate_gates(labels_results(3, 1, 0, 3), parse_gates("[gates]\nfp = { max = 1 }\nf1 = { min = 0.5 }\n"))
    # by hand: f1 = 2*3 / (2*3 + 1 + 0) = 6/7 = 0.857. Its bootstrap interval over the 7 cases reaches 0: a
    # resample without any of the 3 true positives scores F1 0; that has probability (4/7)^7 = 2.0%, and seed 0
    # draws 53 of the 2,000 resamples so (2.65%, more than the 2.5% tail).
    assert r.summary == "PASS: fp 1 passes 1. f1 0.857 passes 0.5. Warning: f1 0.857 passes on the point but not on its 95% bootstrap percentile interval, whose low end is 0.000."


def test_allowance_wording():
    res = labels_results(36, 6, 4, 154, positive="escalate")
    dod = parse_gates("[gates]\nrecall = { min = 0.95 }\nfp = { max = 5 }\naccuracy = { min = 0.9 }\n")
    by = {g.metric: g for g in evaluate_gates(res, dod).results}
    # by hand: recall 0.95 on 40 allows floor(40*0.05) = 2 misses; accuracy 0.9 on 200 allows 20 wrong
    assert by["recall"].allowed == 2 and by["recall"].allowed_on_this_set.startswith("recall 0.95 on these 40 gold")
    assert by["fp"].status == "fail" and by["fp"].allowed == 5
    assert by["accuracy"].allowed == 20 and by["accuracy"].status == "pass"


def test_agreement_line_gate():
    rows = [
        Row(1, {"id": "1", "gold": "y", "pred": "y", "b": "y"}),
        Row(2, {"id": "2", "gold": "y", "pred": "n", "b": "n"}),
        Row(3, {"id": "3", "gold": "n", "pred": "n", "b": "n"}),
        Row(4, {"id": "4", "gold": "n", "pred": "y", "b": "n"}),
    ]
    res = score_label_rows(rows, positive="y", second_gold_field="b")
    # by hand: model vs gold: p_o = 1/2, p_e = 1/2 -> kappa 0; annotators: p_o = 3/4, p_e = (1/2)(1/4)+(1/2)(3/4) = 1/2 -> 0.5
    assert res["aggregate"]["kappa"] == pytest.approx(0.0) and res["aggregate"]["annotator_kappa"] == pytest.approx(0.5)
    r = evaluate_gates(res, parse_gates('[gates]\nkappa = { min = "annotator_kappa" }\n'))
    g = r.results[0]
    assert not g.passed and g.limit == pytest.approx(0.5) and g.limit_metric == "annotator_kappa"
    assert r.summary == "FAIL: Kappa 0.000 fails annotator_kappa 0.500."


def test_agreement_line_without_annotator_data_fails_clearly():
    res = labels_results(3, 0, 0, 3)
    g = evaluate_gates(res, parse_gates('[gates]\nkappa = { min = "annotator_kappa" }\n')).results[0]
    assert not g.passed and g.reason.startswith("the limit annotator_kappa is absent from this results file")


def test_metric_of_another_scorer_is_a_usage_error():
    with pytest.raises(InputError, match=r"dod\.toml:2: gate on 'whole_note_f1_mean' \(free_text metric\), but this results file comes from scorer 'labels'"):
        evaluate_gates(labels_results(1, 0, 0, 1), parse_gates("[gates]\nwhole_note_f1_mean = { min = 0.2 }\n", source="dod.toml"))


FREE_TEXT = {
    "scorer": {"name": "token_f1", "version": "1"},
    "aggregate": {"n": 57, "n_scored": 57, "n_failed": 0, "whole_note_f1_mean": 0.27861937781204515,
                  "whole_note_precision_mean": 0.3, "whole_note_recall_mean": 0.3, "undefined": {}},
}


def test_free_text_results_and_absent_section_metric():
    dod = parse_gates("[gates]\nwhole_note_f1_mean = { min = 0.25 }\nsection_f1_mean = { min = 0.2 }\n")
    r = evaluate_gates(FREE_TEXT, dod)
    assert [g.status for g in r.results] == ["pass", "fail"]
    assert r.results[1].reason == "section_f1_mean is absent from this results file (the scorer did not produce it for this run)"
    assert r.results[0].allowed_on_this_set == "a mean over the 57 scored examples"


def test_pass_rate_from_an_unlisted_scorer_is_found_by_its_keys():
    res = {"scorer": {"name": "some_judge"}, "aggregate": {"pass_rate": 0.8, "match": 8, "no_match": 2, "decided": 10, "undefined": {}}}
    g = evaluate_gates(res, parse_gates("[gates]\npass_rate = { min = 0.8 }\n")).results[0]
    # by hand: 0.8 of 10 decided needs ceil(8) = 8 matches
    assert g.passed and g.allowed == 8
    with pytest.raises(InputError, match="never produces it"):
        evaluate_gates(res, parse_gates("[gates]\nprecision = { min = 0.8 }\n"))


def test_positive_mismatch_and_not_a_results_file():
    with pytest.raises(InputError, match=r"positive = 'fraud', but the run scored the positive label 'y'"):
        evaluate_gates(labels_results(1, 0, 0, 1), parse_gates('positive = "fraud"\n[gates]\nrecall = { min = 0.5 }\n'))
    with pytest.raises(InputError, match="not a goldeval results file"):
        evaluate_gates({"rows": []}, parse_gates("[gates]\nrecall = { min = 0.5 }\n"))


def test_registry_covers_every_aggregate_number_of_the_labels_scorer():
    agg = labels_results(2, 1, 1, 2)["aggregate"]
    bookkeeping = {"n", "n_scored", "n_failed", "null_predictions", "undefined"}
    assert {k for k, v in agg.items() if k not in bookkeeping} <= set(METRICS)
    for name in ("whole_note_f1_mean", "whole_note_precision_mean", "whole_note_recall_mean", "section_f1_mean", "pass_rate"):
        assert name in METRICS


def test_llm_judge_results_with_nested_counts_cost_and_undefined_agreement():
    res = {
        "scorer": {"name": "llm_judge", "version": "1"},
        "aggregate": {
            "n": 12, "n_scored": 12, "n_failed": 0, "pass_rate": 0.7,
            "counts": {"match": 7, "no_match": 3, "decided": 10, "near_match": 1, "needs_human": 1, "unscored": 0},
            "cost_usd": 0.42, "agreement_rate": 0.0,
            "undefined": {"agreement_rate": "no case had both a decided rule verdict and a decided LLM verdict"},
        },
    }
    dod = parse_gates(
        "[gates]\npass_rate = { min = 0.75 }\nneeds_human = { max = 2 }\ncost_usd = { max = 1.00 }\n"
        "agreement_rate = { min = 0.9 }\n"
    )
    by = {g.metric: g for g in evaluate_gates(res, dod).results}
    # by hand: 0.75 of 10 decided needs ceil(7.5) = 8 matches; 7 seen -> fail
    assert by["pass_rate"].status == "fail" and by["pass_rate"].allowed == 8
    assert by["needs_human"].status == "pass" and by["needs_human"].observed == 1
    assert by["cost_usd"].status == "pass"
    assert by["agreement_rate"].reason == "agreement_rate undefined: no case had both a decided rule verdict and a decided LLM verdict"


def test_dotted_keys_get_their_line():
    dod = parse_gates("agreed_by = 'x'\n[gates]\nrecall.min = 0.9\nprecision.min = 0.8\n", source="d.toml")
    assert [(g.metric, g.line, g.bounds[0].text) for g in dod.gates] == [("recall", 3, "0.9"), ("precision", 4, "0.8")]
    with pytest.raises(InputError, match=r"^d\.toml:3: gate 'precison'"):
        parse_gates("[gates]\nrecall.min = 0.9\nprecison.min = 0.8\n", source="d.toml")


def test_gates_that_can_never_fail_or_never_pass_are_refused():
    # break-fix: `kappa = { min = "kappa" }` always passed; `min = 0.9, max = 0.8` always failed; both were accepted
    with pytest.raises(InputError, match=r"^d\.toml:2: gate 'kappa': min = 'kappa' compares the metric with itself"):
        parse_gates('[gates]\nkappa = { min = "kappa" }\n', source="d.toml")
    with pytest.raises(InputError, match=r"^d\.toml:2: gate 'recall': min = 0\.9 is above max = 0\.8, so no value can pass"):
        parse_gates("[gates]\nrecall = { min = 0.9, max = 0.8 }\n", source="d.toml")
    assert parse_gates("[gates]\nrecall = { min = 0.8, max = 0.8 }\n").gates[0].bounds[1].value == 0.8  # inclusive: 0.8 passes


def test_metric_reference_typo_gets_a_suggestion():
    with pytest.raises(InputError, match=r"got \"annotator_kapa\"\. Did you mean 'annotator_kappa'\?"):
        parse_gates('[gates]\nkappa = { min = "annotator_kapa" }\n')


def test_agreed_on_must_be_a_date_and_gates_a_table():
    with pytest.raises(InputError, match=r"^d\.toml:1: agreed_on must be a date .*got \"last Tuesday\""):
        parse_gates('agreed_on = "last Tuesday"\n[gates]\nrecall = { min = 0.9 }\n', source="d.toml")
    assert parse_gates('agreed_on = "2026-11-02"\n[gates]\nrecall = { min = 0.9 }\n').agreed_on == "2026-11-02"
    with pytest.raises(InputError, match=r"\[\[gates\]\] \(an array of tables\) is not the format"):
        parse_gates("[[gates]]\nrecall = { min = 0.9 }\n", source="d.toml")


def test_unusable_input_rows_of_the_answer_judge_are_named_and_allowance_grammar():
    res = {"scorer": {"name": "answer_judge"}, "aggregate": {"n": 4, "n_scored": 4, "n_failed": 0, "n_row_failures": 2,
           "pass_rate": 1.0, "match": 4, "no_match": 0, "decided": 4, "undefined": {}}}
    r = evaluate_gates(res, parse_gates("[gates]\npass_rate = { min = 0.75 }\n"))
    # Wilson's low end of 4/4 is 4 / (4 + 1.96²) = 0.5101, below 0.75: the PASS carries a warning
    assert r.summary == ("PASS: pass_rate 1.000 passes 0.75. Warning: pass_rate 1.000 passes on the point but not on its 95% Wilson score interval, whose low end is 0.510. "
                         "2 input rows were unusable (listed under failures).")
    # 2.5 per 100 on 40 gold positives allows exactly 1 miss (by hand: 2.5 * 40 / 100 = 1)
    g = evaluate_gates(labels_results(39, 0, 1, 5), parse_gates("[gates]\nmissed_per_100 = { max = 2.5 }\n")).results[0]
    assert g.passed and g.allowed == 1
    assert g.allowed_on_this_set == "2.5 per 100 on these 40 gold 'y' cases allows 1 miss, so passing needs at most 1 miss"


def test_model_raw_agreement_is_gateable_against_the_annotators():
    # Three labels; the positive is "y". By hand: rows (gold, pred, second annotator):
    #   1 (y, y, y)  2 (a, b, a)  3 (b, b, b)  4 (a, a, b)
    # accuracy one-vs-rest for "y" counts row 2 (a predicted b) as right: (1 + 3) / 4 = 1.0;
    # agreement over all labels: rows 1, 3, 4 agree = 3/4; annotators agree on rows 1, 2, 3 = 3/4.
    rows = [Row(1, {"id": "1", "gold": "y", "pred": "y", "b": "y"}), Row(2, {"id": "2", "gold": "a", "pred": "b", "b": "a"}),
            Row(3, {"id": "3", "gold": "b", "pred": "b", "b": "b"}), Row(4, {"id": "4", "gold": "a", "pred": "a", "b": "b"})]
    res = score_label_rows(rows, positive="y", second_gold_field="b")
    agg = res["aggregate"]
    assert (agg["accuracy"], agg["agreement"], agg["annotator_agreement"]) == (1.0, 0.75, 0.75)
    r = evaluate_gates(res, parse_gates('[gates]\nagreement = { min = "annotator_agreement" }\n'))
    # Wilson's low end of 3/4 (p = 0.75, n = 4, z = 1.96) is 0.3006: below the annotators' 0.750, so a warning
    assert r.passed and r.summary == ("PASS: Agreement 0.750 passes annotator_agreement 0.750. "
                                      "Warning: agreement 0.750 passes on the point but not on its 95% Wilson score interval, whose low end is 0.301.")


def test_a_gates_file_saved_with_a_bom_and_crlf_is_read(tmp_path):
    # break-fix: Notepad's "UTF-8" starts with a BOM; it was refused as "not valid TOML ... line 1, column 1"
    f = tmp_path / "dod.toml"
    data = b'\xef\xbb\xbfpositive = "escalate"\r\n[gates]\r\nprecision = { min = 0.8 }\r\n'
    f.write_bytes(data)
    dod = load_gates(f)
    assert dod.positive == "escalate" and dod.gates[0].line == 3
    assert dod.sha256 == hashlib.sha256(data).hexdigest()  # the hash is of the bytes as signed


def test_blank_positive_is_refused_at_its_line():
    with pytest.raises(InputError, match=r"^d\.toml:2: positive is blank"):
        parse_gates('agreed_by = "x"\npositive = " "\n[gates]\nrecall = { min = 0.5 }\n', source="d.toml")


def test_a_value_that_is_no_number_is_spelled_as_the_json_file_spells_it():
    # A fresh-user run: a results.json edited to "missed_per_100": null failed its gate with "... is not a number in
    # this results file (got None)" - Python's word, not the file's. The gate still fails; the value reads null/false.
    dod = parse_gates("positive = \"y\"\n[gates]\nmissed_per_100 = { max = 2 }\n", source="dod.toml")
    for value, spelled in ((None, "null"), (False, "false"), ("0.95", '"0.95"')):
        results = labels_results(tp=9, fp=0, fn=1, tn=10)
        results["aggregate"]["missed_per_100"] = value
        decision = evaluate_gates(results, dod)
        assert not decision.passed
        assert f"missed_per_100 is not a number in this results file (got {spelled})" in decision.summary



def test_a_floor_on_a_rate_per_100_is_not_called_within():
    # 4 missed of 40 gold positives = 10.0 per 100 (by hand). Under max = 2 it is 'against the agreed 2 per 100';
    # under a min (legal, warned) the line read "10.0 per 100 within the agreed 1 per 100", as if it were at most 1
    r = labels_results(36, 6, 4, 154)
    assert evaluate_gates(r, parse_gates("[gates]\nmissed_per_100 = { min = 1 }\n")).summary == (
        "PASS: 4 'y' cases missed (10.0 per 100) at or above the agreed minimum of 1 per 100.")
    assert evaluate_gates(r, parse_gates("[gates]\nmissed_per_100 = { min = 20 }\n")).summary == (
        "FAIL: 4 'y' cases missed (10.0 per 100) below the agreed minimum of 20 per 100; 20 per 100 on these 40 gold "
        "'y' cases needs at least 8 misses.")
    # the ceiling keeps its words
    assert evaluate_gates(r, parse_gates("[gates]\nmissed_per_100 = { max = 12.5 }\n")).summary.startswith(
        "PASS: 4 'y' cases missed (10.0 per 100) within the agreed 12.5 per 100.")


@pytest.mark.parametrize(("metric", "value", "spelled", "gate"), [
    ("precision", float("inf"), "Infinity", "min = 0.8"),  # json.loads reads Infinity: it passed every min bound
    ("precision", 1.5, "1.5", "min = 0.8"),
    ("recall", -0.25, "-0.25", "max = 0.5"),
    ("missed", -1, "-1", "max = 0"),  # 'PASS: -1 'y' cases missed passes 0'
    ("missed_per_100", 250.0, "250.0", "min = 1"),
    ("kappa", -1.5, "-1.5", "max = 0.2"),
    ("missed", 2.5, "2.5", "max = 2"),  # a count that is no whole number: the line read "2 'y' cases missed fails 2"
])
def test_a_value_outside_the_metric_s_range_fails_on_either_side(metric, value, spelled, gate):
    # the ranges are the units' (METRICS: fraction [0, 1], count a whole number >= 0, per_100 [0, 100], kappa
    # [-1, 1]); a value outside it is no value of the metric, evidence of nothing, and fails as NaN does
    results = labels_results(tp=9, fp=0, fn=1, tn=10)
    results["aggregate"][metric] = value
    decision = evaluate_gates(results, parse_gates(f"[gates]\n{metric} = {{ {gate} }}\n"))
    assert not decision.passed and decision.results[0].observed is None
    assert decision.results[0].reason.startswith(f"{metric} is {spelled} in this results file, ")
    assert decision.results[0].reason.endswith(f"({METRICS[metric].description})")
    # the limit a gate reads from another metric is checked the same way
    results = labels_results(tp=9, fp=0, fn=1, tn=10)
    results["aggregate"]["annotator_kappa"] = float("-inf")
    decision = evaluate_gates(results, parse_gates('[gates]\nkappa = { min = "annotator_kappa" }\n'))
    assert not decision.passed and "the limit annotator_kappa is -Infinity in this results file" in decision.summary
    # healthy: the ends of the range are values of the metric (9 of 9 predicted positives: precision 1.0 passes)
    assert evaluate_gates(labels_results(tp=9, fp=0, fn=1, tn=10), parse_gates("[gates]\nprecision = { min = 1 }\n")).passed


@pytest.mark.parametrize(("line", "shown"), [
    ("precision = { min = true }", "min must be a finite number, got true."),
    ("precision = { min = inf }", "min must be a finite number, got inf."),
    ("precision = { min = 0.8, note = false }", "note must be a string, got false."),
    ("precision = [1, 2]", "must be a table of bounds, got [1, 2]. Write e.g. precision = { min = 0.80 }."),
    ("precision = 0.9", "must be a table of bounds, got 0.9. Write e.g. precision = { min = 0.9 }."),
    ("precision = { min = 2026-11-02 }", "min must be a finite number, got 2026-11-02."),
])
def test_messages_quote_the_value_as_toml_writes_it(tmp_path, line, shown):
    # Found by h-newcomer: a definition of done is TOML, but its messages showed Python's spelling ("got True",
    # "got 'high'"), which is not what the user wrote and not valid TOML to copy back.
    p = tmp_path / "dod.toml"
    p.write_text("[gates]\n" + line + "\n")
    with pytest.raises(InputError) as err:
        load_gates(p)
    assert shown in str(err.value), str(err.value)


# ---- input no TOML reader should die on (issue 25 item 5)

@pytest.mark.parametrize("value", ["[" * 5000 + "]" * 5000, "{a=" * 5000 + "1" + "}" * 5000,
                                   "{ min = " + "[" * 5000 + "]" * 5000 + " }"], ids=["arrays", "tables", "in-a-bound"])
def test_a_gates_file_nested_5000_deep_is_refused(value):
    with pytest.raises(InputError, match=r"dod.toml: arrays or inline tables nested too deep to read"):
        parse_gates("[gates]\nprecision = " + value + "\n", source="dod.toml")


def test_a_gate_nested_some_hundreds_deep_gets_the_ordinary_message():
    # tomllib reads it; quoting it in the message recursed past Python's limit
    with pytest.raises(InputError, match=r"dod.toml:2: gate 'precision' must be a table of bounds, got \[\[\[.*…"):
        parse_gates("[gates]\nprecision = " + "[" * 350 + "]" * 350 + "\n", source="dod.toml")


def test_an_integer_of_5000_digits_in_a_gates_file_is_refused():
    with pytest.raises(InputError, match=r"dod.toml: an integer of more than 4,300 digits, too long to read"):
        parse_gates("[gates]\nprecision = { min = " + "1" * 5000 + " }\n", source="dod.toml")
    # an integer under the limit is a number, refused for its range as before
    with pytest.raises(InputError, match=r"outside the metric's range"):
        parse_gates("[gates]\nprecision = { min = " + "1" * 40 + " }\n", source="dod.toml")


# ---- the pass rate corrected for the judge's error (goldeval.runs.corrected)


def _corrected_results(matrix):
    res = {"scorer": {"name": "answer_judge"}, "aggregate": {"n": 100, "n_scored": 100, "n_failed": 0, "pass_rate": 0.8,
                                                              "match": 80, "no_match": 20, "decided": 100, "undefined": {}}}
    return add_corrected_pass_rate(res, corrected_pass_rate(res["aggregate"], {"by_decided_by": {"all": {"matrix": matrix}}}))


def test_gates_on_the_corrected_pass_rate_and_its_low_end():
    # the hand-worked example of test_intervals.py: 80/100, Se 36/40, Sp 15/20 → 11/13 = 0.846, interval 0.661 to 1
    res = _corrected_results({"match": {"match": 36, "no_match": 5}, "no_match": {"match": 4, "no_match": 15}})
    r = evaluate_gates(res, parse_gates("[gates]\npass_rate_corrected = { min = 0.8 }\npass_rate_corrected_low = { min = 0.6 }\n"))
    assert r.passed
    g = r.results[0]
    assert g.observed == pytest.approx(11 / 13) and (g.ci_low, g.ci_high) == (pytest.approx(0.660877, abs=1e-6), 1.0)
    assert g.interval_method == "lang_reiczigel" and "passes on the point but not on its" in g.interval_warning
    low = evaluate_gates(res, parse_gates("[gates]\npass_rate_corrected_low = { min = 0.7 }\n")).results[0]
    assert not low.passed and low.observed == pytest.approx(0.660877, abs=1e-6)


def test_a_gate_on_an_undefined_or_absent_corrected_pass_rate_fails():
    # 9 human fails: below the 10 of each class a correction needs
    res = _corrected_results({"match": {"match": 36, "no_match": 1}, "no_match": {"match": 4, "no_match": 8}})
    g = evaluate_gates(res, parse_gates("[gates]\npass_rate_corrected_low = { min = 0.0 }\n")).results[0]
    assert not g.passed and g.reason.startswith("pass_rate_corrected_low undefined: the calibration holds 40 human-pass and 9")
    # judged without --calibration: the gate fails, it never passes on no evidence
    plain = {"scorer": {"name": "answer_judge"}, "aggregate": {"n": 10, "n_scored": 10, "n_failed": 0, "pass_rate": 1.0,
                                                                "match": 10, "no_match": 0, "decided": 10, "undefined": {}}}
    g = evaluate_gates(plain, parse_gates("[gates]\npass_rate_corrected = { min = 0.5 }\n")).results[0]
    assert not g.passed and "pass_rate_corrected is absent from this results file" in g.reason
