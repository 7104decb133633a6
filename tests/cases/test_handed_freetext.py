"""The handed free-text cases (../shared/cases: seed_token_f1_sample.jsonl and public_cases.jsonl; scorers token_f1,
token_f1_batch, section_f1), each by its case_id.

Expected values are the cases' own (worked out by hand in each case's ``reasoning``).
"""

from __future__ import annotations

import pytest

from conftest import handed_params, load_handed_cases
from goldeval.pipeline import files as freetext
from goldeval.freetext.overlap import section_f1, token_f1


def _tol(expected: dict) -> float:
    return expected.get("tolerance", 1e-6)


@pytest.mark.parametrize("case", handed_params("token_f1"))
def test_token_f1_case(case):
    inp, exp = case["input"], case["expected"]
    tokenizer = inp.get("tokenizer", "openscribe")
    if exp.get("unscored"):
        # Through the batch scorer: the row is a counted failure with a reason, not a silent 1.0.
        res = freetext.score_rows([{"id": case["case_id"], "prediction": inp["prediction"], "reference": inp["reference"]}], tokenizer=tokenizer)
        assert res["aggregate"]["n_failed"] == 1 and res["aggregate"]["n"] == 0
        assert exp["reason_mentions"] in res["failures"][0]["error"]
        assert "unicode" in res["failures"][0]["error"]  # names the alternative rule
        return
    got = token_f1(inp["prediction"], inp["reference"], tokenizer=tokenizer)
    for key in ("precision", "recall", "f1"):
        if key in exp:
            assert getattr(got, key) == pytest.approx(exp[key], abs=_tol(exp)), key


@pytest.mark.parametrize("case", handed_params("token_f1_batch"))
def test_token_f1_batch_case(case):
    by_id = {c["case_id"]: c for c in load_handed_cases("token_f1")}
    rows = [
        {"id": cid, "prediction": by_id[cid]["input"]["prediction"], "reference": by_id[cid]["input"]["reference"]}
        for cid in case["input"]["rows_from_case_ids"]
    ]
    agg = freetext.score_rows(rows)["aggregate"]
    exp = case["expected"]
    for key, value in exp.items():
        if key == "tolerance":
            continue
        assert agg[key] == pytest.approx(value, abs=_tol(exp)), key


@pytest.mark.parametrize("case", handed_params("section_f1"))
def test_section_f1_case(case):
    inp, exp = case["input"], case["expected"]
    got = section_f1(inp["prediction"], inp["reference"])
    for name, f1 in exp["per_section"].items():
        assert got.per_section[name].f1 == pytest.approx(f1, abs=_tol(exp)), name
    assert got.whole_text.f1 == pytest.approx(exp["whole_text"], abs=_tol(exp))


def test_every_handed_free_text_case_is_loaded():
    # The hook's promise: no handed case of these scorers is skipped silently.
    n = len(load_handed_cases("token_f1", "token_f1_batch", "section_f1"))
    assert n == 12
