"""The shipped regression file: 33 hand-settled verdicts on real Spider answers (examples/spider/regressions/,
built by examples/spider/make_regressions.py; each entry's note gives the reviewer's reason).

``goldeval replay`` of it must report no flip with the current judge: a change to the rules that flips one of them
is a change to look at (and to settle again) before it is adopted. And a deliberate change to one rule must be
reported as exactly the flips it causes, worked out by hand from the file: making every question "fix the
multiplicity" turns the five entries settled ``near_match`` for a join fan-out or a DISTINCT on one side only
(dev-0037, dev-0065, dev-0535, dev-0752, dev-0784) and the two over-asking goldens that also repeat a row
(dev-0066, DIN-SQL and zero-shot) into ``no_match``, and nothing else — dev-0761 is near_match for an over-asking
golden alone (as dev-0755, dev-0760 and dev-0820 are), DAIL-SQL's dev-0066 is no_match for an empty answer, and
zero-shot dev-0787 is already no_match because its question fixes the multiplicity. Reading no superlative as a
criterion turns exactly dev-0760 and dev-0820 back into ``no_match`` (judge 1.4.0's verdicts), and reading no
relabelled column back through the database turns exactly dev-0575 back into ``no_match`` (judge 1.5.0's).

The reviewed answers where the reviewer disagrees with the judge (judge-disagreements.jsonl, listed in
examples/spider/README.md) are replayed the same way, one by one, as strict expected failures: each names its case
id and the reviewer's verdict, so a fix shows (an unexpected pass fails the run: move the entry to the regression
file) and a regression cannot hide among them.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from conftest import REPO
from goldeval.answers import JUDGE_VERSION
from goldeval.cli import main
from goldeval.runs.judges import answer_judge
from goldeval.runs.regressions import read_regressions, replay

HERE = REPO / "examples" / "spider" / "regressions"
FILE, CASES, DBS = HERE / "judge-regressions.jsonl", HERE / "cases.jsonl", HERE / "databases"
DISAGREEMENTS = HERE / "judge-disagreements.jsonl"
#: (case id, prediction file, the reviewer's verdict, the judge's when reviewed, why they differ)
REVIEWER_DISAGREES = [
    ("spider-dev-0526", "dinsql-gpt4", "match", "no_match", "the golden's <= 2 for 'less than 2'"),
]
MULTIPLICITY = ["spider-dev-0037", "spider-dev-0065", "spider-dev-0535", "spider-dev-0752", "spider-dev-0784"]
OVER_ASKING_AND_REPEATED = ["spider-dev-0066", "spider-dev-0066"]  # DIN-SQL's and zero-shot's answers
OVER_ASKING = ["spider-dev-0755", "spider-dev-0760", "spider-dev-0761", "spider-dev-0820"]
CRITERION = ["spider-dev-0760", "spider-dev-0820"]  # a column the question names only as its superlative criterion


def test_the_shipped_file_is_real_and_reviewed():
    entries, failures = read_regressions(FILE)
    assert failures == [] and len(entries) == 33
    assert {e["verdict"] for e in entries} == {"match", "near_match", "no_match"}
    assert all(e["note"] and e["reviewer"] and e["answer"].get("final_query") for e in entries)
    # the multiplicity entries are the ones this file's docstring names
    assert sorted(e["id"] for e in entries if e["verdict"] == "near_match" and e["id"] not in OVER_ASKING) == sorted(
        MULTIPLICITY + OVER_ASKING_AND_REPEATED)


def test_replay_reports_no_flip_with_the_current_judge(tmp_path):
    out = tmp_path / "replay.json"
    r = CliRunner().invoke(main, ["replay", str(FILE), "--cases", str(CASES), "--db-dir", str(DBS), "--out", str(out)])
    assert r.exit_code == 0, r.output
    res = json.loads(out.read_text())
    assert res["judge_version"] == JUDGE_VERSION
    assert (res["n_replayed"], res["n_same"], res["n_changed"], res["n_failed"]) == (33, 33, 0, 0), res["changed"] or res["failures"]
    assert "33 unchanged, 0 changed, 0 not replayed" in " ".join(r.output.split())


def test_a_deliberate_rule_change_is_reported_as_its_flips(monkeypatch, tmp_path):
    import goldeval.answers.table as table

    monkeypatch.setattr(table, "question_fixes_multiplicity", lambda question: "every")  # the deliberate change
    judge, version = answer_judge(db_dir=str(DBS))
    res = replay(FILE, CASES, judge, judge_version=version)
    assert res["n_failed"] == 0
    assert sorted(c["id"] for c in res["changed"]) == sorted(MULTIPLICITY + OVER_ASKING_AND_REPEATED)
    assert {(c["settled"], c["now"]) for c in res["changed"]} == {("near_match", "no_match")}
    settled_under = {e["line"]: e["judge_version"] for e in read_regressions(FILE)[0]}
    assert all(c["settled_under"] == settled_under[c["line"]] for c in res["changed"])
    assert all("the question fixes the multiplicity" in c["why_now"] for c in res["changed"] if c["id"] in MULTIPLICITY)
    # and the command says so, exit 1
    r = CliRunner().invoke(main, ["replay", str(FILE), "--cases", str(CASES), "--db-dir", str(DBS),
                                  "--out", str(tmp_path / "r.json")])
    assert r.exit_code == 1, r.output
    assert "26 unchanged, 7 changed" in " ".join(r.output.split())
    assert "spider-dev-0752: settled near_match" in r.output


def test_reading_no_superlative_as_a_criterion_flips_exactly_the_criterion_entries(monkeypatch):
    import goldeval.answers.doubt as doubt

    monkeypatch.setattr(doubt, "criterion_phrases", lambda question: [])  # judge 1.4.0's reading of the question
    judge, version = answer_judge(db_dir=str(DBS))
    res = replay(FILE, CASES, judge, judge_version=version)
    assert res["n_failed"] == 0
    assert sorted(c["id"] for c in res["changed"]) == CRITERION
    assert {(c["settled"], c["now"]) for c in res["changed"]} == {("near_match", "no_match")}
    assert all("has no counterpart" in c["why_now"] for c in res["changed"])


def test_reading_no_relabel_flips_exactly_the_relabel_entry(monkeypatch):
    import goldeval.answers.case as case_mod

    monkeypatch.setattr(case_mod, "relabel_verdict", lambda *a, **k: None)  # judge 1.5.0: no relabel is read back
    judge, version = answer_judge(db_dir=str(DBS))
    res = replay(FILE, CASES, judge, judge_version=version)
    assert res["n_failed"] == 0
    assert [(c["id"], c["settled"], c["now"]) for c in res["changed"]] == [("spider-dev-0575", "match", "no_match")]


def test_reading_no_normalised_golden_flips_exactly_the_fragile_literal_entries(monkeypatch):
    """dev-0554 and dev-0786 (settled match by hand): their goldens' literals miss the data's case; without judging
    against the trimmed and case-folded re-run of the golden (judge 1.5.0) exactly these two flip back."""
    import goldeval.answers.case as case_mod

    monkeypatch.setattr(case_mod, "judge_normalised", lambda v, *a, **k: v)
    judge, version = answer_judge(db_dir=str(DBS))
    res = replay(FILE, CASES, judge, judge_version=version)
    assert res["n_failed"] == 0
    assert sorted((c["id"], c["settled"]) for c in res["changed"]) == [("spider-dev-0554", "match"), ("spider-dev-0786", "match")]


def test_review_stats_calibrates_the_judge_on_the_shipped_file(tmp_path):
    # The 33 settled verdicts, each against the judge_verdict recorded when the file was built: 15 match, 11
    # near_match, 7 no_match (counted from make_regressions.REVIEWS), all agreeing. dev-0787 (DIN-SQL match,
    # zero-shot no_match) and dev-0066 (two near_match, DAIL-SQL no_match) are different answers, not reviewers
    # who disagree: none is unsettled.
    out = tmp_path / "stats.json"
    r = CliRunner().invoke(main, ["review", "stats", "--regressions", str(FILE), "--out", str(out)])
    assert r.exit_code == 0, r.output
    res = json.loads(out.read_text())
    agg = res["aggregate"]
    assert (agg["n_scored"], agg["n_unsettled"], agg["n_failed"]) == (33, 0, 0)
    assert agg["judge_agreement"] == 1.0 and agg["judge_kappa"] == 1.0
    m = res["by_decided_by"]["unknown"]["matrix"]  # judge label -> human verdict -> count
    assert {k: v[k] for k, v in m.items()} == {"match": 15, "near_match": 11, "no_match": 7}
    assert sum(sum(v.values()) for v in m.values()) == 33  # nothing off the diagonal


def test_a_case_naming_a_database_without_db_dir_is_not_replayed(tmp_path):
    r = CliRunner().invoke(main, ["replay", str(FILE), "--cases", str(CASES), "--out", str(tmp_path / "r.json")])
    assert r.exit_code == 2, r.output  # none could be replayed
    assert "no --db-dir was given" in " ".join(r.output.split())


@pytest.mark.parametrize("out", ["cases", "db"])
def test_replay_never_writes_onto_its_inputs(tmp_path, out):
    import shutil

    dbs, cases = tmp_path / "dbs", tmp_path / "cases.jsonl"  # copies: a broken guard must not touch the repository
    shutil.copytree(DBS, dbs)
    shutil.copyfile(CASES, cases)
    target = cases if out == "cases" else dbs / "pets_1" / "pets_1.sqlite"
    before = target.read_bytes()
    r = CliRunner().invoke(main, ["replay", str(FILE), "--cases", str(cases), "--db-dir", str(dbs), "--out", str(target)])
    assert r.exit_code == 2, r.output
    assert target.read_bytes() == before


def test_the_disagreement_file_holds_the_reviewed_disagreements():
    entries, failures = read_regressions(DISAGREEMENTS)
    assert failures == []
    got = [(e["id"], e["source"].split(" (")[1].rstrip(")"), e["verdict"], e["judge_verdict"]) for e in entries]
    assert got == [(cid, src, settled, judged) for cid, src, settled, judged, _ in REVIEWER_DISAGREES]
    assert all(e["note"] and e["reviewer"] and e["answer"].get("final_query") for e in entries)
    cases = {json.loads(line)["id"] for line in CASES.read_text(encoding="utf-8").splitlines() if line.strip()}
    assert {cid for cid, *_ in REVIEWER_DISAGREES} <= cases


@pytest.mark.parametrize("line", [
    pytest.param(i, id=f"{cid}-{src}-reviewer-{settled}",
                 marks=pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"{cid} ({src}): the reviewer settled {settled}, the judge "
                                                             f"said {judged} ({why})"))
    for i, (cid, src, settled, judged, why) in enumerate(REVIEWER_DISAGREES)])
def test_a_reviewed_disagreement_replays_as_the_reviewer_settled_it(line, tmp_path):
    one = tmp_path / "one.jsonl"  # the entry alone, replayed through the same machinery as the regression file
    one.write_text(DISAGREEMENTS.read_text(encoding="utf-8").splitlines()[line] + "\n", encoding="utf-8")
    judge, version = answer_judge(db_dir=str(DBS))
    res = replay(one, CASES, judge, judge_version=version)
    assert res["n_failed"] == 0, res["failures"]
    assert (res["n_same"], res["n_changed"]) == (1, 0), res["changed"]


def test_replay_runs_the_queries_under_its_max_result_mb(tmp_path):
    """--max-result-mb reaches replay's judge: 0.001 MB (1,000 bytes) is under several Spider results, whose cases
    cannot be judged now (not replayed, with the size reason); the default refuses none
    (test_replay_reports_no_flip_with_the_current_judge)."""
    out = tmp_path / "replay.json"
    r = CliRunner().invoke(main, ["replay", str(FILE), "--cases", str(CASES), "--db-dir", str(DBS), "--out", str(out),
                                  "--max-result-mb", "0.001"])
    assert r.exit_code == 1, r.output
    res = json.loads(out.read_text())
    assert res["n_failed"] > 0 and res["n_same"] < 30
    assert all("is over 0.001 MB (the size limit)" in f["error"] for f in res["failures"]), res["failures"]
