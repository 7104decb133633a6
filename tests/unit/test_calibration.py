"""Settling human verdicts (goldeval.runs.calibration.settle_reviews): agreement settles, a conflict stays
unsettled unless the latest review settled it, the same review from the store and the regression file counts once."""

from __future__ import annotations

import pytest

from goldeval.errors import InputError
from goldeval.runs.reviews import settle_reviews


def r(cid, verdict, reviewer, run="R1", **kw):
    return {"run_id": run, "case_id": cid, "verdict": verdict, "reviewer": reviewer, **kw}


def test_agreeing_reviewers_settle_and_duplicates_count_once():
    settled, conflicts = settle_reviews([r("q1", "match", "ana"), r("q1", "match", "bo"), r("q1", "match", "ana", note="again")])
    assert conflicts == []
    s = settled[("R1", "q1")]
    assert (s["verdict"], s["reviewers"], s["n_reviews"], s["settled_by"]) == ("match", ["ana", "bo"], 2, "agreement")


def test_a_conflict_is_unsettled_until_the_latest_review_settles_it():
    reviews = [r("q1", "match", "ana"), r("q1", "no_match", "bo", note="misses a row")]
    settled, conflicts = settle_reviews(reviews)
    assert settled == {} and conflicts == [{"run_id": "R1", "case_id": "q1", "verdicts": [
        {"verdict": "match", "reviewer": "ana", "reviewed_at": None, "note": None},
        {"verdict": "no_match", "reviewer": "bo", "reviewed_at": None, "note": "misses a row"}]}]
    # review import --on-conflict latest: the latest review settles the case.
    settled, conflicts = settle_reviews([*reviews, r("q1", "near_match", "cy", settles=True)])
    assert conflicts == [] and settled[("R1", "q1")]["verdict"] == "near_match"
    assert settled[("R1", "q1")]["settled_by"] == "latest" and settled[("R1", "q1")]["reviewers"] == ["cy"]
    # A settling review that is not the latest does not settle a later disagreement.
    _, conflicts = settle_reviews([*reviews, r("q1", "near_match", "cy", settles=True), r("q1", "match", "di")])
    assert [c["case_id"] for c in conflicts] == ["q1"]


def test_the_same_case_in_two_runs_is_two_cases():
    settled, conflicts = settle_reviews([r("q1", "match", "ana", run="R1"), r("q1", "no_match", "ana", run="R2")])
    assert conflicts == [] and {k: v["verdict"] for k, v in settled.items()} == {("R1", "q1"): "match", ("R2", "q1"): "no_match"}


def test_a_review_without_a_settled_verdict_is_refused():
    with pytest.raises(InputError, match="expected a case id and a verdict in match, near_match, no_match"):
        settle_reviews([r("q1", "needs_human", "ana")])


def test_a_reviewer_who_settles_on_the_verdict_they_gave_before_is_the_latest_review():
    # ana said match, bo said no_match and settled it (review import --on-conflict latest), then ana settled it back
    # to match with --on-conflict latest. Her second review repeats (reviewer, verdict) of her first, and was dropped
    # as a copy, so bo's no_match stayed the settled verdict. A repeat that settles is a new review, the latest.
    reviews = [r("q1", "match", "ana"), r("q1", "no_match", "bo", settles=True), r("q1", "match", "ana", settles=True)]
    settled, conflicts = settle_reviews(reviews)
    s = settled[("R1", "q1")]
    assert conflicts == [] and (s["verdict"], s["settled_by"], s["reviewers"]) == ("match", "latest", ["ana"])
    # the same settling review seen twice (store and regression file) is still one review
    settled, _ = settle_reviews([*reviews, r("q1", "match", "ana", settles=True)])
    assert settled[("R1", "q1")]["verdict"] == "match" and settled[("R1", "q1")]["n_reviews"] == 2
    # a copy that does not settle (the regression file's entry of ana's first review) changes nothing
    settled, _ = settle_reviews([r("q1", "match", "ana"), r("q1", "no_match", "bo", settles=True), r("q1", "match", "ana")])
    assert settled[("R1", "q1")]["verdict"] == "no_match"
