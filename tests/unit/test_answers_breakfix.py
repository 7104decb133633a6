"""Break-fix tests for the data-answer judge: inputs that crashed the run, became a verdict, or were dropped in
silence. Every expected value is worked out by hand in the comment beside it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldeval.answers import judge_file
from goldeval.answers.judge import judge_answer
from goldeval.errors import InputError


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _golden(**extra: object) -> dict:
    return {"kind": "value", "columns": ["ward", "n"], "rows": [["a", 5], ["b", 4]], **extra}


# --- malformed golden options: unscored with the fix, never a crash, never a verdict -------------------------

@pytest.mark.parametrize("extra, message", [
    ({"top_n": "bad"}, r"'top_n' must be an object"),                         # crashed the run (AttributeError, exit 3)
    ({"top_n": {"n": 2, "by": "count"}}, r"top_n 'by' must name one of the golden columns \['ward', 'n'\], got 'count'"),
    ({"top_n": {"n": 2, "by": "n", "direction": "down"}}, r"'direction' must be 'desc' or 'asc'"),
    ({"top_n": {"n": 0, "by": "n"}}, r"top_n 'n' must be a positive integer"),
    ({"ordered": "no"}, r"'ordered' must be true or false"),                   # "no" is truthy: it was read as ordered
    ({"rate_columns": "n"}, r"'rate_columns' must be a list of column names"),
    ({"rate_columns": ["rate"]}, r"rate_columns \['rate'\] are not golden columns"),
    ({"gold_status": "bogus"}, r"'gold_status' must be one of"),
])
def test_malformed_golden_option_is_an_input_error(extra, message):
    pred = {"columns": ["ward", "n"], "rows": [["a", 5], ["b", 4]]}
    with pytest.raises(InputError, match=message):
        judge_answer("q", _golden(**extra), pred)


def test_top_n_by_unknown_column_was_a_no_match():
    # Before: top_n.by = "count" (not a golden column) made the exact golden answer a no_match ("not among the paired
    # golden columns"). A typo in the case must not fail the answer: it is the case that is broken.
    with pytest.raises(InputError, match="Name the column the top-N is ranked by"):
        judge_answer("q", _golden(top_n={"n": 2, "by": "count", "direction": "desc"}),
                     {"columns": ["ward", "n"], "rows": [["a", 5], ["b", 4]]})


def test_dict_rows_with_missing_or_unknown_keys_are_refused():
    # {"m": 1} under columns ["n"] used to read as n = NULL (r.get("n")), and an extra key was dropped in silence.
    g = {"kind": "value", "columns": ["n"], "rows": [[1]]}
    with pytest.raises(InputError, match=r"row 1 has keys \['m'\], expected exactly the columns \['n'\] \(missing \['n'\]\) \(not a column: \['m'\]\)"):
        judge_answer("q", g, {"columns": ["n"], "rows": [{"m": 1}]})
    with pytest.raises(InputError, match=r"not a column: \['extra'\]"):
        judge_answer("q", {"kind": "value", "columns": ["n"], "rows": [{"n": 1, "extra": 5}]}, {"rows": [[1]]})
    # Objects with exactly the columns are fine, in any key order.
    v = judge_answer("q", {"kind": "value", "columns": ["a", "b"], "rows": [[1, "x"]]},
                     {"columns": ["a", "b"], "rows": [{"b": "x", "a": 1}]})
    assert v.verdict == "match"


def test_batch_malformed_rows_are_unscored_and_the_run_finishes(tmp_path: Path):
    # One row per defect; before the fix the first (top_n "bad") stopped the whole run with exit 3.
    cases = _jsonl(tmp_path / "c.jsonl", [
        {"id": "bad_top", "question": "q", "golden": _golden(top_n="bad")},
        {"id": "mnu_str", "question": "q", "golden": _golden(), "must_not_use": "ssn"},  # was read as 's', 's', 'n'
        {"id": "rubric_str", "question": "q", "golden": _golden(), "rubric": "REQUIRED: x"},
        {"id": "ok", "question": "q", "golden": _golden()},
    ])
    rows = {"columns": ["ward", "n"], "rows": [["a", 5], ["b", 4]]}
    attempts = _jsonl(tmp_path / "a.jsonl", [{"id": i, **rows} for i in ("bad_top", "mnu_str", "rubric_str", "ok")])
    out = judge_file(cases, attempts)
    by_id = {c["id"]: c for c in out["per_example"]}
    assert [by_id[i]["status"] for i in ("bad_top", "mnu_str", "rubric_str", "ok")] == ["unscored"] * 3 + ["scored"]
    assert "'must_not_use' must be a list" in by_id["mnu_str"]["reason"] and "c.jsonl:2" in by_id["mnu_str"]["reason"]
    assert "'rubric' must be a list" in by_id["rubric_str"]["reason"]
    # 1 match, 0 no_match: pass rate 1/1; the three broken cases are counted as unscored beside it.
    assert (out["aggregate"]["match"], out["aggregate"]["unscored"], out["aggregate"]["pass_rate"]) == (1, 3, 1.0)
