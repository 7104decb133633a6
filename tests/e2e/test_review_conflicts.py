"""Issue 10 item 8: conflicting human verdicts for the same run and case (match, then no_match, then near_match
from different reviewers) are reported, never appended silently. --on-conflict fail (default): nothing imported,
every conflict listed. --on-conflict latest: the latest verdict settles the case, and the regressions file holds
only the settled one. ``goldeval.runs.regressions.settled_verdicts`` returns the settled verdicts and the
unsettled conflicts (for `review stats`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from goldeval.cli import main
from goldeval.runs.regressions import settled_verdicts
from goldeval.runs.store import RunStore

SQL = Path(__file__).resolve().parents[2] / "examples" / "sql"


@pytest.fixture()
def exported(tmp_path: Path) -> tuple[Path, list[dict]]:
    store = tmp_path / "s.db"
    r = CliRunner().invoke(main, ["judge", str(SQL / "cases.jsonl"), str(SQL / "arm_a.jsonl"), "--db", str(SQL / "clinic.sqlite"),
                                  "--store", str(store), "-q"])
    assert r.exit_code == 0, r.output
    out = tmp_path / "review.jsonl"
    r = CliRunner().invoke(main, ["review", "export", "latest", "--store", str(store), "--out", str(out)])
    assert r.exit_code == 0, r.output
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == 2  # q11 and q13 need a human (README)
    return store, rows


def _import(tmp: Path, store: Path, row: dict, verdict: str, reviewer: str, *extra: str):
    f = tmp / f"review-{reviewer}.jsonl"
    f.write_text(json.dumps({**row, "verdict": verdict, "reviewer": reviewer}) + "\n")
    return CliRunner().invoke(main, ["review", "import", str(f), "--store", str(store), "--regressions", str(tmp / "reg.jsonl"), *extra])


def test_conflicting_verdicts_fail_by_default_and_nothing_is_imported(tmp_path: Path, exported) -> None:
    store, rows = exported
    assert _import(tmp_path, store, rows[0], "match", "ana").exit_code == 0
    reg_before = (tmp_path / "reg.jsonl").read_bytes()
    r = _import(tmp_path, store, rows[0], "no_match", "bo")
    assert r.exit_code == 2, r.output
    assert "conflict" in r.output and rows[0]["id"] in r.output and "match" in r.output and "ana" in r.output
    assert "--on-conflict latest" in r.output
    assert (tmp_path / "reg.jsonl").read_bytes() == reg_before
    with RunStore.open_existing(store) as st:
        assert [x["verdict"] for x in st.reviews(rows[0]["run_id"])] == ["match"]


def test_latest_settles_and_the_regressions_file_holds_only_it(tmp_path: Path, exported) -> None:
    store, rows = exported
    assert _import(tmp_path, store, rows[0], "match", "ana").exit_code == 0
    assert _import(tmp_path, store, rows[0], "no_match", "bo", "--on-conflict", "latest").exit_code == 0
    r = _import(tmp_path, store, rows[0], "near_match", "cy", "--on-conflict", "latest")
    assert r.exit_code == 0, r.output
    assert "settled" in r.output
    entries = [json.loads(x) for x in (tmp_path / "reg.jsonl").read_text().splitlines()]
    assert [(e["id"], e["verdict"], e["reviewer"]) for e in entries] == [(rows[0]["id"], "near_match", "cy")]
    with RunStore.open_existing(store) as st:
        got = settled_verdicts(st)
        # every review is kept for the audit; the latest one settles the case
        assert [x["verdict"] for x in st.reviews(rows[0]["run_id"])] == ["match", "no_match", "near_match"]
    assert [(s["case_id"], s["verdict"], s["reviewers"], s["settled_by"]) for s in got["settled"]] == [(rows[0]["id"], "near_match", ["cy"], "latest")]
    assert got["conflicts"] == []


def test_settled_verdicts_reports_a_conflict_left_in_the_store(tmp_path: Path, exported) -> None:
    # reviews recorded before conflicts were refused (or written by another tool) stay unsettled until settled
    store, rows = exported
    with RunStore(store) as st:
        st.add_review(rows[1]["run_id"], rows[1]["id"], verdict="match", reviewer="ana", reviewed_at="2026-01-01T00:00:00Z")
        st.add_review(rows[1]["run_id"], rows[1]["id"], verdict="no_match", reviewer="bo", reviewed_at="2026-01-02T00:00:00Z")
        got = settled_verdicts(st)
    assert got["settled"] == []
    [c] = got["conflicts"]
    assert (c["run_id"], c["case_id"]) == (rows[1]["run_id"], rows[1]["id"])
    assert [(v["verdict"], v["reviewer"]) for v in c["verdicts"]] == [("match", "ana"), ("no_match", "bo")]


def test_a_regressions_path_that_is_another_file_is_refused_and_left_unchanged(tmp_path: Path, exported) -> None:
    # A fresh-user run: `review import review.jsonl --regressions examples/sql/cases.jsonl` (the cases file typed for
    # the regression file) appended a verdict row to the 22 cases, exit 0, and recorded the verdict in the store.
    # Refused now, exit 2, before anything is recorded: the file is byte-equal and the store holds no review.
    store, rows = exported
    cases = tmp_path / "cases.jsonl"
    cases.write_bytes((SQL / "cases.jsonl").read_bytes())
    before = cases.read_bytes()
    f = tmp_path / "review-ana.jsonl"
    f.write_text(json.dumps({**rows[0], "verdict": "match", "reviewer": "ana"}) + "\n")
    r = CliRunner().invoke(main, ["review", "import", str(f), "--store", str(store), "--regressions", str(cases)])
    assert r.exit_code == 2, r.output
    assert f"--regressions {cases}: none of its 22 line(s) is a judge-regression entry (the first: cases.jsonl:1: " \
           "field 'verdict' must be one of match, near_match, no_match, got None." in r.output
    assert cases.read_bytes() == before
    with RunStore.open_existing(store) as st:
        assert st.reviews(rows[0]["run_id"]) == []
    # a new path, an empty file and a regression file are appended to as before
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    for reg in (empty, tmp_path / "new.jsonl"):
        r = CliRunner().invoke(main, ["review", "import", str(f), "--store", str(store), "--regressions", str(reg)])
        assert r.exit_code == 0, r.output
        assert [json.loads(x)["id"] for x in reg.read_text().splitlines()] == [rows[0]["id"]]


def test_review_of_a_score_or_labels_run_is_refused(tmp_path: Path) -> None:
    # A fresh-user run: `review export RUN --all` of a `score` run wrote its notes as "answers" (question and golden
    # null); a "match" filled in was imported, appended to the judge-regression file, and `review stats` counted it
    # as "left to a person by the judge". A person settles data-answer verdicts only: refused, exit 2, nothing written.
    store = tmp_path / "s.db"
    text = tmp_path / "t.jsonl"
    text.write_text('{"id": "n1", "prediction": "a b", "reference": "a c"}\n')
    labels = tmp_path / "l.jsonl"
    labels.write_text('{"id": "c1", "gold": "y", "pred": "n"}\n')
    assert CliRunner().invoke(main, ["score", str(text), "--store", str(store), "-q"]).exit_code == 0
    assert CliRunner().invoke(main, ["labels", str(labels), "--positive", "y", "--store", str(store), "-q"]).exit_code == 0
    for ref, what in (("latest~1", "(token_f1) holds per-case F1 scores"), ("latest", "(labels) holds label outcomes")):
        out = tmp_path / "review.jsonl"
        r = CliRunner().invoke(main, ["review", "export", ref, "--all", "--store", str(store), "--out", str(out)])
        assert r.exit_code == 2 and what in r.output and "not data-answer verdicts" in r.output, r.output
        assert not out.exists()
    with RunStore.open_existing(store) as st:
        score_run = st.resolve("latest~1")
    f = tmp_path / "forged.jsonl"
    f.write_text(json.dumps({"run_id": score_run, "id": "n1", "verdict": "match", "reviewer": "ana", "answer": {"id": "n1"}}) + "\n")
    reg = tmp_path / "reg.jsonl"
    r = CliRunner().invoke(main, ["review", "import", str(f), "--store", str(store), "--regressions", str(reg)])
    assert r.exit_code == 2 and "forged.jsonl:1: review: run " in r.output and "holds per-case F1 scores" in r.output, r.output
    assert not reg.exists()
    with RunStore.open_existing(store) as st:
        assert st.reviews(score_run) == []


def test_a_reviewer_can_settle_back_to_the_verdict_they_gave_first(tmp_path: Path, exported) -> None:
    # ana: match; bo: no_match, settled with --on-conflict latest; ana again: match, --on-conflict latest. The import
    # said the case was settled and the regression file kept ana's match, but the store recorded nothing ("already":
    # ana had given match before) and still settled the case no_match: the file and the store disagreed.
    store, rows = exported
    assert _import(tmp_path, store, rows[0], "match", "ana").exit_code == 0
    assert _import(tmp_path, store, rows[0], "no_match", "bo", "--on-conflict", "latest").exit_code == 0
    r = _import(tmp_path, store, rows[0], "match", "ana", "--on-conflict", "latest")
    assert r.exit_code == 0, r.output
    entries = [json.loads(x) for x in (tmp_path / "reg.jsonl").read_text().splitlines()]
    assert [(e["id"], e["verdict"], e["reviewer"]) for e in entries] == [(rows[0]["id"], "match", "ana")]
    with RunStore.open_existing(store) as st:
        assert [x["verdict"] for x in st.reviews(rows[0]["run_id"])] == ["match", "no_match", "match"]
        got = settled_verdicts(st, regressions_path=tmp_path / "reg.jsonl")
    assert [(s["case_id"], s["verdict"], s["settled_by"]) for s in got["settled"]] == [(rows[0]["id"], "match", "latest")]
    # importing the same file again records nothing new and keeps the case settled
    r = _import(tmp_path, store, rows[0], "match", "ana", "--on-conflict", "latest")
    assert r.exit_code == 0, r.output
    with RunStore.open_existing(store) as st:
        assert len(st.reviews(rows[0]["run_id"])) == 3
        assert [s["verdict"] for s in settled_verdicts(st)["settled"]] == ["match"]
