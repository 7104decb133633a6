"""goldeval.runs.corrected: the judge's pass/fail error counts read from a calibration, the calibration loaded from
a ``review stats`` JSON, a regressions file or a run, the corrected pass rate put into results and comparisons.

The figures are those of the hand-worked example in ``tests/unit/test_intervals.py``
(``test_rogan_gladen_hand_worked_example``): a run at 80 match / 100 decided, a judge that passed 36 of 40 human
passes and failed 15 of 20 human fails: corrected 11/13 = 0.846154, interval 0.660877 to 1 (clipped from 1.048034).
"""

from __future__ import annotations

import json

import pytest

from goldeval.errors import InputError
from goldeval.runs.corrected import (
    add_corrected_pass_rate,
    add_corrected_to_comparison,
    corrected_pass_rate,
    judge_error_counts,
    load_calibration,
)
from goldeval.runs.store import RunStore

#: judge label (rows) → settled human verdict (columns), as review stats writes it
MATRIX = {
    "match": {"match": 36, "near_match": 2, "no_match": 5},
    "near_match": {"match": 1, "near_match": 3, "no_match": 0},
    "no_match": {"match": 4, "near_match": 0, "no_match": 15},
    "needs_human": {"match": 2, "near_match": 0, "no_match": 1},
}
CALIBRATION = {"scorer": {"name": "judge_calibration", "version": "1"}, "by_decided_by": {"all": {"matrix": MATRIX}},
               "aggregate": {"n_failed": 1, "n_unsettled": 2}, "runs": ["R1"]}


def test_error_counts_count_only_pairs_both_sides_decided():
    # human passes the judge decided: 36 + 4 = 40; human fails: 5 + 15 = 20; the other 9 pairs (near_match on a
    # side, or the judge abstaining) are excluded
    assert judge_error_counts(CALIBRATION) == {"tp": 36, "n_pos": 40, "tn": 15, "n_neg": 20, "n_excluded": 9, "n_pairs": 69}
    with pytest.raises(InputError, match="no confusion matrix"):
        judge_error_counts({"aggregate": {}})
    with pytest.raises(InputError, match=r"matrix\['match'\]\['match'\] must be a count, got -1"):
        judge_error_counts({"by_decided_by": {"all": {"matrix": {"match": {"match": -1}}}}})


def test_corrected_pass_rate_of_a_judge_run_and_into_its_results():
    results = {"aggregate": {"pass_rate": 0.8, "match": 80, "no_match": 20, "undefined": {}}}
    c = corrected_pass_rate(results["aggregate"], {**CALIBRATION, "source": "stats.json"})
    assert c["estimate"] == pytest.approx(11 / 13) and c["low"] == pytest.approx(0.660877, abs=1e-6) and c["high"] == 1.0
    assert c["calibration"] == {"source": "stats.json", "runs": ["R1"], "judge_versions": [], "n_pairs": 69,
                                "n_excluded": 9, "n_failed": 1, "n_unsettled": 2}
    add_corrected_pass_rate(results, c)
    agg = results["aggregate"]
    assert (agg["pass_rate_corrected"], agg["pass_rate_corrected_high"]) == (c["estimate"], 1.0) and agg["undefined"] == {}
    assert results["corrected_pass_rate"]["clipped"] is True
    # the llm_judge's results nest the counts under "counts"
    nested = corrected_pass_rate({"pass_rate": 0.8, "counts": {"match": 80, "no_match": 20}}, CALIBRATION)
    assert nested["estimate"] == c["estimate"]
    with pytest.raises(InputError, match="no match / no_match counts"):
        corrected_pass_rate({"whole_note_f1_mean": 0.3}, CALIBRATION)


def test_an_undefined_correction_is_null_and_listed_so_no_gate_passes_on_it():
    small = {"by_decided_by": {"all": {"matrix": {"match": {"match": 9, "no_match": 1}, "no_match": {"match": 0, "no_match": 9}}}}}
    results = {"aggregate": {"pass_rate": 0.8, "match": 80, "no_match": 20, "undefined": {}}}
    add_corrected_pass_rate(results, corrected_pass_rate(results["aggregate"], small))
    agg = results["aggregate"]
    assert agg["pass_rate_corrected"] is None and agg["pass_rate_corrected_low"] is None
    assert set(agg["undefined"]) == {"pass_rate_corrected", "pass_rate_corrected_low", "pass_rate_corrected_high"}
    assert "9 human-pass and 10 human-fail" in agg["undefined"]["pass_rate_corrected"]


def test_load_calibration_from_a_stats_file_a_regressions_file_and_a_run(tmp_path):
    stats = tmp_path / "stats.json"
    stats.write_text(json.dumps(CALIBRATION))
    assert load_calibration(str(stats))["source"] == str(stats)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"scorer": {"name": "token_f1"}, "aggregate": {}}))
    with pytest.raises(InputError, match="a results file of scorer 'token_f1', not 'judge_calibration'"):
        load_calibration(str(other))
    # a regressions file: each settled verdict beside the judge_verdict it carries
    reg = tmp_path / "reg.jsonl"
    lines = [{"id": f"p{i}", "verdict": "match", "judge_verdict": "match" if i < 9 else "no_match", "answer": {"rows": [[i]]}}
             for i in range(12)]
    lines += [{"id": f"f{i}", "verdict": "no_match", "judge_verdict": "no_match" if i < 10 else "match", "answer": {"rows": [[i]]}}
              for i in range(11)]
    reg.write_text("".join(json.dumps(x) + "\n" for x in lines))
    got = judge_error_counts(load_calibration(str(reg)))
    assert (got["tp"], got["n_pos"], got["tn"], got["n_neg"]) == (9, 12, 10, 11)
    # a run reference needs a store
    with pytest.raises(InputError, match="no such file, and no run store"):
        load_calibration("latest")
    with RunStore(str(tmp_path / "empty.db")) as st, pytest.raises(InputError):
        load_calibration("no-such-run", st)


def test_a_comparison_gets_both_corrections_and_a_note_when_the_judges_differ():
    cmp = {"verdicts": {"pass_rate": {"a": {"match": 80, "no_match": 20}, "b": {"match": 20, "no_match": 80}}},
           "labels": None, "runs": {"a": {"judge_version": "7"}, "b": {"judge_version": "8"}}}
    add_corrected_to_comparison(cmp, CALIBRATION)
    c = cmp["corrected_pass_rate"]
    assert c["a"]["estimate"] == pytest.approx(11 / 13)
    assert c["b"]["estimate"] == 0.0 and c["b"]["clipped"]  # (0.2 + 0.75 − 1) / 0.65 < 0
    assert "different judge versions (7 and 8)" in c["note"]
    cmp["runs"]["b"]["judge_version"] = "7"
    assert add_corrected_to_comparison(cmp, CALIBRATION)["corrected_pass_rate"]["note"] is None
    with pytest.raises(InputError, match="no data-answer verdicts"):
        add_corrected_to_comparison({"verdicts": None, "labels": None}, CALIBRATION)


def test_a_calibration_of_another_judge_version_is_warned_about_never_silently_used():
    cal = {**CALIBRATION, "judge_versions": ["1.5.0"]}
    c = corrected_pass_rate({"match": 80, "no_match": 20}, cal, judge_version="1.6.0")
    assert c["warnings"] == ["the calibration measured judge version(s) 1.5.0, and this run was judged by 1.6.0: the "
                             "correction assumes their errors are the same"]
    assert c["estimate"] == pytest.approx(11 / 13)  # a warning beside the number, never another number
    assert corrected_pass_rate({"match": 80, "no_match": 20}, cal, judge_version="1.5.0")["warnings"] == []
    assert corrected_pass_rate({"match": 80, "no_match": 20}, CALIBRATION, judge_version="1.6.0")["warnings"] == []


def test_a_regressions_file_names_the_judge_versions_it_settled_under(tmp_path):
    reg = tmp_path / "reg.jsonl"
    reg.write_text("".join(json.dumps({"id": f"p{i}", "verdict": "match", "judge_verdict": "match", "answer": {},
                                       "judge_version": "answers-1" if i else "answers-2"}) + "\n" for i in range(3)))
    assert load_calibration(str(reg))["judge_versions"] == ["answers-1", "answers-2"]
