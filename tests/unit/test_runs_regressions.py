"""Judge regressions: reading the file, replay with a judge callable, appending without duplicates."""

from __future__ import annotations

import json

import pytest

from goldeval.errors import InputError
from goldeval.runs.regressions import append_regressions, read_regressions, replay
from goldeval.verdict import CaseOutcome, Verdict


def write(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


@pytest.fixture()
def cases(tmp_path):
    return write(tmp_path / "cases.jsonl", [
        {"id": "q1", "question": "How many?", "golden": {"kind": "value", "columns": ["n"], "rows": [[3]]}},
        {"id": "q2", "question": "Which?", "golden": {"kind": "value", "columns": ["x"], "rows": [["a"]]}},
    ])


def fake_judge(case, answer):
    """A stand-in judge: match when the answer's rows equal the golden's, else no_match."""
    same = answer.get("rows") == case["golden"]["rows"]
    return Verdict("match" if same else "no_match", 9, False, "rows equal" if same else "rows differ")


def test_read_regressions_reports_bad_lines(tmp_path):
    path = write(tmp_path / "r.jsonl", [
        {"id": "q1", "answer": {"rows": [[3]]}, "verdict": "match"},
        {"id": "q2", "answer": {"rows": [[3]]}, "verdict": "needs_human"},
        {"answer": {}, "verdict": "match"},
        {"id": "q3", "answer": "rows", "verdict": "no_match"},
        "not json",
    ])
    entries, failures = read_regressions(path)
    assert [(e["id"], e["line"]) for e in entries] == [("q1", 1)]
    assert [f["line"] for f in failures] == [2, 3, 4, 5]
    assert "field 'verdict' must be one of match, near_match, no_match, got 'needs_human'" in failures[0]["error"]
    assert "field 'id' must be a non-empty string" in failures[1]["error"]
    assert "field 'answer' must be an object" in failures[2]["error"]


def test_replay_lists_the_verdicts_that_changed(tmp_path, cases):
    reg = write(tmp_path / "r.jsonl", [
        {"id": "q1", "answer": {"rows": [[3]]}, "verdict": "match", "reviewer": "ana", "judge_version": "0.9"},
        {"id": "q2", "answer": {"rows": [["a"]]}, "verdict": "no_match", "reviewer": "bo", "judge_version": "0.9"},
        {"id": "q9", "answer": {"rows": []}, "verdict": "match"},
    ])
    out = replay(reg, cases, fake_judge, judge_version="1.0")
    assert (out["n"], out["n_replayed"], out["n_same"], out["n_changed"], out["n_failed"]) == (3, 2, 1, 1, 1)
    assert out["same"] == ["q1"]
    assert out["changed"] == [{
        "id": "q2", "line": 2, "settled": "no_match", "now": "match", "why_now": "rows equal",
        "reviewer": "bo", "reviewed_at": None, "settled_under": "0.9",
    }]
    assert "case 'q9' is not in cases.jsonl" in out["failures"][0]["error"]


def test_replay_reads_case_outcomes_and_dicts(tmp_path, cases):
    reg = write(tmp_path / "r.jsonl", [{"id": "q1", "answer": {}, "verdict": "match"}, {"id": "q2", "answer": {}, "verdict": "match"}])
    judges = {
        "q1": CaseOutcome("q1", "unscored", reason="query failed"),
        "q2": {"verdict": "match", "why": "dict form"},
    }
    out = replay(reg, cases, lambda case, answer: judges[case["id"]])
    assert out["same"] == ["q2"]
    # an unscored outcome is a settled verdict that was not replayed (a failure), not a change of the judge's mind:
    # a wrong --cases file made every case "changed" to unscored, exit 1 (issue 10 item 11, newcomer F8)
    assert out["changed"] == [] and out["n_failed"] == 1
    assert "case 'q1' could not be judged now (query failed); not replayed" in out["failures"][0]["error"]


def test_a_judge_refusal_is_a_failure_not_a_crash(tmp_path, cases):
    reg = write(tmp_path / "r.jsonl", [{"id": "q1", "answer": {}, "verdict": "match"}])

    def refuse(case, answer):
        raise InputError("golden malformed")

    out = replay(reg, cases, refuse)
    assert out["n_failed"] == 1 and "the judge refused the case: golden malformed" in out["failures"][0]["error"]


def test_replay_of_a_missing_file_is_an_input_error(tmp_path, cases):
    with pytest.raises(InputError, match="no such file"):
        replay(tmp_path / "none.jsonl", cases, fake_judge)


def test_append_regressions_skips_what_is_already_there(tmp_path):
    path = tmp_path / "sub" / "judge-regressions.jsonl"
    e1 = {"id": "q1", "answer": {"rows": [[3]]}, "verdict": "match", "reviewer": "ana", "reviewed_at": "t1"}
    assert append_regressions(path, [e1]) == 1
    # the same case, answer and verdict again (another time stamp): not appended; another verdict: appended
    assert append_regressions(path, [{**e1, "reviewed_at": "t2"}, {**e1, "verdict": "no_match"}]) == 1
    assert [json.loads(x)["verdict"] for x in path.read_text().splitlines()] == ["match", "no_match"]


def test_append_regressions_skips_repeats_among_the_new_entries(tmp_path):
    # two identical entries (same id, answer, verdict) in one call: one line, not two (break-fix finding)
    path = tmp_path / "judge-regressions.jsonl"
    e1 = {"id": "q1", "answer": {"rows": [[3]]}, "verdict": "match", "reviewer": "ana", "reviewed_at": "t1"}
    assert append_regressions(path, [e1, {**e1, "reviewed_at": "t2"}]) == 1
    assert len(path.read_text().splitlines()) == 1


def test_an_unwritable_regression_file_is_an_input_error_and_a_retry_completes_it(tmp_path):
    # break-fix: an unwritable --regressions (here: its folder is a file) failed as "internal error: ..." after the
    # verdicts were recorded; expected: a message saying so, and importing again appends what was missed.
    from goldeval.runs.recorder import start_run
    from goldeval.runs.regressions import import_review
    from goldeval.runs.store import RunMeta, RunStore

    with RunStore(tmp_path / "g.db") as st:
        rec = start_run(st, RunMeta(run_key="k", scorer_name="answer_judge", scorer_version="1", dataset_hash="d"), background=False)
        rec.record({"id": "q1", "status": "scored", "verdict": "needs_human"})
        rec.finish({"aggregate": {"n": 1}})
        rec.close()
        filled = tmp_path / "review.jsonl"
        filled.write_text(json.dumps({"run_id": rec.run_id, "id": "q1", "answer": {"text": "3"}, "verdict": "match", "reviewer": "ana"}) + "\n")
        (tmp_path / "blocker").write_text("a file where a folder should be")
        with pytest.raises(InputError, match="cannot append to the regression file.*the 1 verdict\\(s\\) were recorded in the store"):
            import_review(st, filled, regressions_path=tmp_path / "blocker" / "r.jsonl")
        again = import_review(st, filled, regressions_path=tmp_path / "r.jsonl")
        assert (again["n_imported"], again["n_already"], again["n_appended"]) == (0, 1, 1)
        assert len(st.reviews(rec.run_id)) == 1


def test_replay_reports_progress_one_entry_at_a_time(tmp_path, cases):
    reg = write(tmp_path / "r.jsonl", [
        {"id": "q1", "answer": {"rows": [[3]]}, "verdict": "match"},
        {"id": "q9", "answer": {"rows": []}, "verdict": "match"},  # no such case: a failure, still one done
        {"id": "q2", "answer": {"rows": [["a"]]}, "verdict": "match"},
        "not json",  # not an entry at all: not counted in the total
    ])
    seen: list[tuple[str, int, int]] = []  # (event, value, entries judged when it came)
    judged = []

    def judge(case, answer):
        judged.append(case["id"])
        return fake_judge(case, answer)

    out = replay(reg, cases, judge, on_total=lambda n: seen.append(("total", n, len(judged))),
                 progress=lambda k: seen.append(("done", k, len(judged))))
    # three usable entries; each counted once it is finished (q9 fails without reaching the judge)
    assert seen == [("total", 3, 0), ("done", 1, 1), ("done", 1, 1), ("done", 1, 2)]
    assert (out["n_replayed"], out["n_failed"]) == (2, 2)


def test_replay_without_progress_callbacks_is_unchanged(tmp_path, cases):
    reg = write(tmp_path / "r.jsonl", [{"id": "q1", "answer": {"rows": [[3]]}, "verdict": "match"}])
    assert replay(reg, cases, fake_judge)["same"] == ["q1"]
