"""review stats over a regression file that settles several answers to one case (issue 11 item 7): two answers
are two calibration items; two reviewers who disagree on the *same* answer are an unsettled conflict. Hand-made
entries in the format of ``goldeval.runs.regressions`` (the shipped Spider file settles DIN-SQL's match and
zero-shot's no_match for dev-0787 this way)."""

from __future__ import annotations

import json

from goldeval.runs.calibration import judge_calibration


def _entry(cid, query, model, verdict, judge, reviewer="ana"):
    return {"id": cid, "answer": {"id": cid, "final_query": query, "model": model}, "verdict": verdict,
            "judge_verdict": judge, "reviewer": reviewer, "note": f"{reviewer} on {model}"}


def _stats(tmp_path, entries):
    path = tmp_path / "judge-regressions.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    return judge_calibration(None, [], regressions=path)


def test_two_answers_to_one_case_are_two_calibration_items(tmp_path):
    res = _stats(tmp_path, [_entry("q1", "SELECT DISTINCT name FROM city", "din", "match", "match"),
                            _entry("q1", "SELECT name FROM city", "zero", "no_match", "no_match"),
                            _entry("q2", "SELECT 1", "din", "match", "no_match")])
    agg = res["aggregate"]
    # 3 settled, 3 counted, none unsettled; agreed 2 of 3 (q2: judge no_match, person match).
    assert (agg["n_scored"], agg["n_unsettled"]) == (3, 0)
    assert agg["judge_agreement"] == 2 / 3
    # kappa by hand: n = 3, agreed 2; judge m 1, n 2; human m 2, n 1; S = 1*2 + 2*1 = 4; (3*2 - 4) / (9 - 4) = 0.4.
    assert abs(agg["judge_kappa"] - 0.4) < 1e-12
    assert [d["id"] for d in res["disagreements"]] == ["q2"]


def test_two_reviewers_disagreeing_on_the_same_answer_stay_unsettled(tmp_path):
    res = _stats(tmp_path, [_entry("q1", "SELECT name FROM city", "zero", "match", "match", reviewer="ana"),
                            _entry("q1", "SELECT name FROM city", "zero", "no_match", "match", reviewer="bo")])
    assert res["aggregate"]["n_unsettled"] == 1 and res["aggregate"]["n_scored"] == 0
    assert res["unsettled"][0]["case_id"] == "q1"
