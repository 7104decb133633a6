"""The run-store commands on real stored runs: two tokenizers on Open-Scribe's PriMock57 predictions (score), two
arms of the shipped SQL example (judge); runs list/show/export/delete, compare, review export/import, replay."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from statsmodels.stats.contingency_tables import mcnemar

from goldeval.cli import main

REPO = Path(__file__).resolve().parents[2]
PRIMOCK = REPO / "examples" / "data" / "openscribe_primock57_predictions.jsonl"
SQL = REPO / "examples" / "sql"
#: Open-Scribe's published PriMock57 whole-note macro F1 (57/57 scored), see DESIGN.md "Real data".
PUBLISHED_PRIMOCK57_F1 = 0.27861937781204515


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == code, (args, result.output)
    return result.stdout


def run_ids(store: Path) -> list[str]:
    """Run ids, oldest first."""
    return [r["id"] for r in reversed(json.loads(run("runs", "list", "--store", store, "--json", "--limit", "0")))]


@pytest.fixture(scope="module")
def tokenizer_runs(tmp_path_factory):
    """PriMock57 scored with --tokenizer openscribe, then unicode, into one store: (store, [id_a, id_b], [json_a, json_b])."""
    d = tmp_path_factory.mktemp("tok")
    store = d / "g.db"
    outs = []
    for tok in ("openscribe", "unicode"):
        out = d / f"{tok}.json"
        run("score", PRIMOCK, "--tokenizer", tok, "--store", store, "--arm", tok, "--out", out, "-q")
        outs.append(json.loads(out.read_text()))
    return store, run_ids(store), outs


@pytest.fixture(scope="module")
def arm_runs(tmp_path_factory):
    """The SQL example's two arms judged with the example database: (store, [id_a, id_b], [json_a, json_b])."""
    d = tmp_path_factory.mktemp("arms")
    store = d / "g.db"
    outs = []
    for arm in ("arm_a", "arm_b"):
        out = d / f"{arm}.json"
        run("judge", SQL / "cases.jsonl", SQL / f"{arm}.jsonl", "--db", SQL / "clinic.sqlite", "--store", store,
            "--arm", arm, "--out", out, "-q")
        outs.append(json.loads(out.read_text()))
    return store, run_ids(store), outs


# --- runs list / show / export / delete -----------------------------------------------------------------------------


def test_runs_list(tokenizer_runs):
    store, ids, outs = tokenizer_runs
    rows = json.loads(run("runs", "list", "--store", store, "--json"))
    assert [r["id"] for r in rows] == ids[::-1]  # newest first
    newest = rows[0]
    assert (newest["arm"], newest["scorer_name"], newest["tokenizer"], newest["status"]) == ("unicode", "token_f1", "unicode", "finished")
    assert newest["n"] == 57 and newest["headline_name"] == "whole_note_f1_mean"
    assert newest["headline_value"] == outs[1]["aggregate"]["whole_note_f1_mean"]
    assert rows[1]["headline_value"] == PUBLISHED_PRIMOCK57_F1
    table = run("runs", "list", "--store", store)
    assert ids[0] in table and ids[1] in table and "openscribe" in table and "0.279" in table
    assert [r["arm"] for r in json.loads(run("runs", "list", "--store", store, "--json", "--arm", "openscribe"))] == ["openscribe"]


def test_runs_show_rerenders_the_scoring_summary(tmp_path):
    store = tmp_path / "g.db"
    printed = run("score", PRIMOCK, "--store", store)  # the summary the command printed
    shown = run("runs", "show", "latest", "--store", store)
    table = printed[printed.index("token F1"):]
    assert table in shown
    assert "dataset sha256" in shown and "openscribe" in shown


def test_runs_show_json_is_the_stored_results(tokenizer_runs):
    store, ids, outs = tokenizer_runs
    stored = json.loads(run("runs", "show", ids[0], "--store", store, "--out", "-"))
    assert stored == outs[0]


def test_runs_export_formats(tokenizer_runs):
    store, ids, outs = tokenizer_runs
    lines = run("runs", "export", ids[0], "--store", store, "--format", "jsonl").splitlines()
    records = [json.loads(x) for x in lines]
    assert [r["id"] for r in records] == [e["id"] for e in outs[0]["per_example"]]
    assert all(r["status"] == "scored" for r in records)
    assert [r["whole_note"] for r in records] == [e["whole_note"] for e in outs[0]["per_example"]]

    rows = list(csv.DictReader(io.StringIO(run("runs", "export", ids[0], "--store", store, "--format", "csv"))))
    assert len(rows) == 57 and float(rows[0]["whole_note.f1"]) == outs[0]["per_example"][0]["whole_note"]["f1"]

    doc = json.loads(run("runs", "export", ids[0], "--store", store, "--format", "json"))
    assert doc["run"]["id"] == ids[0] and doc["results"] == outs[0] and len(doc["cases"]) == 57 and doc["reviews"] == []


def test_runs_export_csv_keeps_a_row_whose_id_holds_a_carriage_return(tmp_path):
    """An id holding CR, ESC and RLO (hostile input a new user tried) comes back from the CSV export as one field of
    one row, read by csv.reader as the docs say to (newline=''); with LF line ends the CR went unquoted and split
    the row in two."""
    ids = ["d\x1b[31mRED\r\u202eX", "plain"]
    src = tmp_path / "ctl.jsonl"
    src.write_text("".join(json.dumps({"id": i, "prediction": "x", "reference": "x"}) + "\n" for i in ids))
    store, out = tmp_path / "g.db", tmp_path / "cases.csv"
    run("score", src, "--store", store, "-q")
    run("runs", "export", "latest", "--store", store, "--format", "csv", "--out", out)
    with open(out, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [r["id"] for r in rows] == ids and [r["whole_note.f1"] for r in rows] == ["1.0", "1.0"]


def test_runs_delete(tmp_path):
    store = tmp_path / "g.db"
    run("score", PRIMOCK, "--store", store, "-q")
    run("score", PRIMOCK, "--store", store, "-q", "--tokenizer", "unicode")
    first, second = run_ids(store)
    run("runs", "delete", first, "--store", store, "--yes")
    assert run_ids(store) == [second]
    result = CliRunner().invoke(main, ["runs", "show", first, "--store", str(store)])
    # a run id that names nothing is a bad argument (exit 2), not a broken store (exit 3)
    assert result.exit_code == 2 and f"no run '{first}'" in result.output


def test_runs_list_with_a_filter_that_matches_nothing_says_so(tokenizer_runs):
    # break-fix: `runs list --arm nope` said "no run recorded in this store yet" of a store holding runs
    store, _, _ = tokenizer_runs
    out = run("runs", "list", "--store", store, "--arm", "nope")
    assert "no run matches --arm nope (drop the filter to see every run)" in out and "no run recorded" not in out


def test_brackets_in_arm_names_print_as_written(tmp_path):
    # break-fix: an arm named "a[/]b" made `runs list`, `runs show` and `compare` crash (rich read it as markup:
    # "internal error: MarkupError"), so one odd name made the whole store unlistable.
    store = tmp_path / "g.db"
    run("score", PRIMOCK, "--store", store, "-q", "--arm", "a[/]b")
    run("score", PRIMOCK, "--store", store, "-q", "--arm", "[red]x", "--tokenizer", "unicode")
    assert "a[/]b" in run("runs", "list", "--store", store)
    assert "a[/]b" in run("runs", "show", "latest~1", "--store", store)
    result = CliRunner().invoke(main, ["compare", "latest~1", "latest", "--store", str(store)])
    assert result.exit_code == 0 and "(a[/]b)" in result.output and "([red]x)" in " ".join(result.output.split())


def test_reading_commands_never_create_a_store(tmp_path):
    missing = tmp_path / "none.db"
    result = CliRunner().invoke(main, ["runs", "list", "--store", str(missing)])
    assert result.exit_code == 0 and "no run store at" in result.output and "no run recorded" in result.stdout
    for args in (["runs", "show", "latest"], ["compare", "a", "b"], ["review", "export", "a"], ["runs", "export", "a"]):
        result = CliRunner().invoke(main, [*args, "--store", str(missing)])
        # the user's missing file: exit 2 (issue 10 item 11 / newcomer F10; it was 3, "store error")
        assert result.exit_code == 2 and "no such file, so no run was recorded there" in result.output
    assert not missing.exists()


def test_unknown_run_and_bad_format_exit_codes(tokenizer_runs):
    store, ids, _ = tokenizer_runs
    assert CliRunner().invoke(main, ["runs", "export", ids[0], "--store", str(store), "--format", "xml"]).exit_code == 2
    for args in (["compare", ids[0], "nope"], ["runs", "show", ""], ["runs", "export", "latest~9"], ["runs", "delete", "2", "-y"]):
        assert CliRunner().invoke(main, [*args, "--store", str(store)]).exit_code == 2, args


# --- recording ------------------------------------------------------------------------------------------------------


def test_no_store_records_nothing(tmp_path):
    store = tmp_path / "g.db"
    run("score", PRIMOCK, "--no-store", "--store", store, "-q")
    assert not store.exists()
    result = CliRunner().invoke(main, ["score", str(PRIMOCK), "--no-store", "--resume", "x", "-q"])
    assert result.exit_code == 2 and "exclude each other" in result.output


def test_default_store_is_under_goldeval_home(tmp_path, monkeypatch):
    monkeypatch.setenv("GOLDEVAL_HOME", str(tmp_path / "home"))
    run("score", PRIMOCK, "-q")
    assert (tmp_path / "home" / "goldeval.db").exists()
    assert len(json.loads(run("runs", "list", "--json"))) == 1


def test_two_runs_of_the_same_inputs_store_identical_results(tmp_path):
    store = tmp_path / "g.db"
    run("score", PRIMOCK, "--store", store, "-q")
    run("score", PRIMOCK, "--store", store, "-q")  # the first finished: a new run, not a resume
    a, b = run_ids(store)
    assert a != b
    ea = json.loads(run("runs", "export", a, "--store", store, "--format", "json"))
    eb = json.loads(run("runs", "export", b, "--store", store, "--format", "json"))
    assert ea["cases"] == eb["cases"]
    for doc in (ea, eb):
        doc["results"]["aggregate"].pop("elapsed_sec")
        assert doc["results"].pop("run")["id"] == doc["run"]["id"]  # each names its own run (issue 12)
        for key in ("id", "created_at", "updated_at", "finished_at", "pid"):
            doc["run"].pop(key)
    assert ea["results"] == eb["results"]
    assert ea["run"] == eb["run"]  # same key, versions, hashes, configuration, counts, headline


def test_two_judge_runs_of_the_same_inputs_store_identical_verdicts(arm_runs, tmp_path):
    store, ids, outs = arm_runs
    again = tmp_path / "again.db"
    run("judge", SQL / "cases.jsonl", SQL / "arm_a.jsonl", "--db", SQL / "clinic.sqlite", "--store", again, "--arm", "arm_a", "-q")
    first = json.loads(run("runs", "export", ids[0], "--store", store, "--format", "json"))
    second = json.loads(run("runs", "export", "latest", "--store", again, "--format", "json"))
    assert first["cases"] == second["cases"]
    for doc in (first, second):
        doc["results"].pop("elapsed_sec", None)
        assert doc["results"].pop("run")["id"] == doc["run"]["id"]  # each names its own run and store (issue 12)
        for key in ("id", "created_at", "updated_at", "finished_at", "pid"):
            doc["run"].pop(key)
    assert first["results"] == second["results"] and first["run"] == second["run"]


def test_resume_of_a_run_with_other_options_is_refused(tokenizer_runs):
    store, ids, _ = tokenizer_runs
    result = CliRunner().invoke(main, ["score", str(PRIMOCK), "--store", str(store), "--resume", ids[0], "--tokenizer", "unicode", "-q"])
    assert result.exit_code == 2
    assert "configuration (tokenizer)" in result.output and "arm 'openscribe' vs None" in result.output


# --- compare --------------------------------------------------------------------------------------------------------


def test_compare_two_tokenizers(tokenizer_runs):
    store, ids, outs = tokenizer_runs
    cmp = json.loads(run("compare", *ids, "--store", store, "--out", "-", "-q"))  # (--fail-on-regression is refused on F1 runs: see below)
    s = cmp["scores"]
    assert s["n_pairs"] == 57 and cmp["added"] == [] and cmp["removed"] == []
    assert s["mean_a"] == pytest.approx(PUBLISHED_PRIMOCK57_F1, abs=1e-15)
    assert s["mean_b"] == pytest.approx(outs[1]["aggregate"]["whole_note_f1_mean"], abs=1e-15)
    # Only two notes move: both hold U+2105 '℅' (care of), which NFKC turns into the token 'c/o' under the unicode
    # rule while the ASCII openscribe rule reads nothing there; the curly quotes of day2_consultation09 and
    # day5_consultation09 stand next to words either way and change no token.
    moved = {m["id"] for m in s["biggest_movers"]}
    assert moved == {"day4_consultation01", "day4_consultation05"}
    by_id_a = {e["id"]: e["whole_note"]["f1"] for e in outs[0]["per_example"]}
    by_id_b = {e["id"]: e["whole_note"]["f1"] for e in outs[1]["per_example"]}
    for d in s["deltas"]:
        assert d["delta"] == pytest.approx(by_id_b[d["id"]] - by_id_a[d["id"]], abs=1e-15)
    assert cmp["verdicts"] is None and cmp["regressions"] == []
    assert cmp["differs"]["tokenizer"] == ["openscribe", "unicode"]
    text = run("compare", *ids, "--store", store)
    assert "biggest movers" in text and "day4_consultation05" in text


def test_compare_two_arms_of_the_sql_example(arm_runs):
    store, ids, outs = arm_runs
    cmp = json.loads(run("compare", *ids, "--store", store, "--out", "-", "-q"))
    # the flips worked out from the two judge outputs directly
    va = {e["id"]: e for e in outs[0]["per_example"]}
    vb = {e["id"]: e for e in outs[1]["per_example"]}

    def outcome(e):
        if e["status"] != "scored" or e.get("gold_status") == "verified_wrong" or e.get("needs_human") or e["verdict"] == "needs_human":
            return None
        return {"match": "pass", "no_match": "fail"}.get(e["verdict"])

    p2f = [i for i in va if outcome(va[i]) == "pass" and outcome(vb[i]) == "fail"]
    f2p = [i for i in va if outcome(va[i]) == "fail" and outcome(vb[i]) == "pass"]
    assert p2f, "arm_b is the weaker arm of the example: some case must regress"
    assert [f["id"] for f in cmp["verdicts"]["flips"]["pass_to_fail"]] == p2f
    assert [f["id"] for f in cmp["verdicts"]["flips"]["fail_to_pass"]] == f2p
    assert cmp["regressions"] == p2f
    stable = [i for i in va if va[i].get("verdict") == "near_match" and vb[i].get("verdict") == "near_match"]
    assert cmp["verdicts"]["near_match"]["stable"] == stable
    assert cmp["verdicts"]["pass_rate"]["a"]["rate"] == outs[0]["aggregate"]["pass_rate"]
    assert cmp["verdicts"]["pass_rate"]["b"]["rate"] == outs[1]["aggregate"]["pass_rate"]
    m = cmp["verdicts"]["mcnemar"]
    assert m["p_value"] == pytest.approx(mcnemar([[0, len(p2f)], [len(f2p), 0]], exact=True).pvalue)
    # --fail-on-regression: exit 1 when any pass became a fail, and the flips are on screen with both whys
    result = CliRunner().invoke(main, ["compare", *ids, "--store", str(store), "--fail-on-regression"])
    assert result.exit_code == 1
    assert "pass → fail (regressions)" in result.stdout and p2f[0] in result.stdout
    assert "McNemar exact" in result.stdout


def test_judge_runs_record_judge_version_rubric_and_dataset_hashes(arm_runs):
    import hashlib

    store, ids, outs = arm_runs
    runs = {r["id"]: r for r in json.loads(run("runs", "list", "--store", store, "--json"))}
    a, b = runs[ids[0]], runs[ids[1]]
    assert a["judge_version"] == outs[0]["scorer"]["version"] and a["scorer_name"] == outs[0]["scorer"]["name"]
    # rubric hash: sha256 of every case's rubric / must_not_use entries by id, as sorted-key compact JSON
    rubric = {}
    for line in (SQL / "cases.jsonl").read_text().splitlines():
        if line.strip():
            c = json.loads(line)
            entry = {k: c[k] for k in ("rubric", "must_not_use") if c.get(k)}
            if entry:
                rubric[c["id"]] = entry
    expected = hashlib.sha256(json.dumps(rubric, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()
    assert a["rubric_hash"] == b["rubric_hash"] == expected
    assert a["inputs"]["cases"]["sha256"] == hashlib.sha256((SQL / "cases.jsonl").read_bytes()).hexdigest()
    assert a["inputs"]["attempts"]["sha256"] == hashlib.sha256((SQL / "arm_a.jsonl").read_bytes()).hexdigest()
    assert a["dataset_hash"] != b["dataset_hash"]  # other predictions
    assert (a["arm"], b["arm"]) == ("arm_a", "arm_b")


def test_compare_is_reproducible_with_a_seed(arm_runs):
    store, ids, _ = arm_runs
    one = run("compare", *ids, "--store", store, "--out", "-", "-q", "--seed", "3")
    two = run("compare", *ids, "--store", store, "--out", "-", "-q", "--seed", "3")
    assert one == two


def _verdict_store(path: Path, runs: dict[str, dict[str, str]]) -> dict[str, str]:
    """A store holding one finished verdict run per entry (name → {case id: verdict}); returns name → run id."""
    from goldeval.runs.store import RunMeta, RunStore

    ids = {}
    with RunStore(path) as st:
        for name, verdicts in runs.items():
            run_id = st.create_run(RunMeta(run_key=name, scorer_name="answer_judge", scorer_version="1", dataset_hash="d"))
            st.write_cases(run_id, [(cid, i, "scored", vd, None, None, None, json.dumps({"id": cid, "status": "scored", "verdict": vd}))
                                    for i, (cid, vd) in enumerate(verdicts.items())])
            st.finish_run(run_id, {"aggregate": {"n": len(verdicts)}})
            ids[name] = run_id
    return ids


def test_fail_on_regression_never_passes_on_no_evidence(tmp_path, tokenizer_runs):
    # break-fix finding: --fail-on-regression exited 0 when no case was decided in both runs (disjoint ids, or
    # every case needs_human in one run) — a gate passing on no evidence — and on F1 runs, where nothing can regress.
    store = tmp_path / "g.db"
    ids = _verdict_store(store, {"a": {"c1": "match", "c2": "no_match"}, "disjoint": {"c3": "match"},
                                 "undecided": {"c1": "needs_human", "c2": "near_match"}, "same": {"c1": "match", "c2": "no_match"},
                                 "worse": {"c1": "no_match", "c2": "no_match"}})
    def code(b: str) -> int:
        return CliRunner().invoke(main, ["compare", ids["a"], ids[b], "--store", str(store), "--fail-on-regression", "-q"]).exit_code
    # by hand: c1 match→match, c2 no_match→no_match: 2 pairs decided in both, no pass→fail → 0
    assert code("same") == 0
    # c1 match→no_match: one pass→fail → 1
    assert code("worse") == 1
    # no common case / no case decided in both → 1, with the reason on stderr
    assert code("disjoint") == 1 and code("undecided") == 1
    result = CliRunner().invoke(main, ["compare", ids["a"], ids["undecided"], "--store", str(store), "--fail-on-regression", "-q"])
    assert "no case was decided (match or no_match) in both runs (2 case id(s) in common)" in result.output
    # F1 runs hold no verdicts: the flag is a usage error (2), not a silent pass
    tok_store, tok_ids, _ = tokenizer_runs
    result = CliRunner().invoke(main, ["compare", *tok_ids, "--store", str(tok_store), "--fail-on-regression"])
    assert result.exit_code == 2 and "hold no verdicts (token_f1 scores)" in result.output


def test_fail_on_regression_never_passes_on_a_run_that_did_not_finish(tmp_path):
    # B recorded c1 (a pass, as in A) and was then interrupted (Ctrl-C, a killed CI job, a run still 'running' on
    # another machine of a shared store): c2, a pass in A, was never judged in B. Exit 1 with the reason, not 0;
    # the same B once resumed and finished with c2 still a pass exits 0.
    from goldeval.runs.store import RunStore

    store = tmp_path / "g.db"
    ids = _verdict_store(store, {"a": {"c1": "match", "c2": "match"}, "b": {"c1": "match"}})
    with RunStore(store) as st:
        st.set_status(ids["b"], "interrupted")
    result = CliRunner().invoke(main, ["compare", ids["a"], ids["b"], "--store", str(store), "--fail-on-regression", "-q"])
    assert result.exit_code == 1, result.output
    assert f"run B ({ids['b']}) did not finish (interrupted), so the cases it did not record may hold a regression" in result.output
    with RunStore(store) as st:
        st.write_cases(ids["b"], [("c2", 1, "scored", "match", None, None, None, json.dumps({"id": "c2", "status": "scored", "verdict": "match"}))])
        st.finish_run(ids["b"], {"aggregate": {"n": 2}})
    result = CliRunner().invoke(main, ["compare", ids["a"], ids["b"], "--store", str(store), "--fail-on-regression", "-q"])
    assert result.exit_code == 0, result.output


def test_compare_of_a_verdict_run_with_a_score_run_is_refused(tmp_path):
    store = tmp_path / "g.db"
    run("score", PRIMOCK, "--store", store, "-q")
    run("judge", SQL / "cases.jsonl", SQL / "arm_a.jsonl", "--db", SQL / "clinic.sqlite", "--store", store, "-q")
    result = CliRunner().invoke(main, ["compare", "latest~1", "latest", "--store", str(store)])
    assert result.exit_code == 2 and "a verdict and a score cannot be compared case by case" in result.output


# --- review export / import, replay -----------------------------------------------------------------------------------


def test_review_export_import_and_replay(arm_runs, tmp_path):
    store, ids, outs = arm_runs
    needs = [e["id"] for e in outs[0]["per_example"] if e.get("needs_human") or e.get("verdict") == "needs_human"]
    assert needs, "the SQL example's arm_a has cases no rule can settle"
    exported = [json.loads(x) for x in run("review", "export", ids[0], "--store", store).splitlines()]
    assert [r["id"] for r in exported] == needs
    attempts = {json.loads(x)["id"]: json.loads(x) for x in (SQL / "arm_a.jsonl").read_text().splitlines() if x.strip()}
    cases = {json.loads(x)["id"]: json.loads(x) for x in (SQL / "cases.jsonl").read_text().splitlines() if x.strip()}
    for r in exported:
        assert r["answer"] == attempts[r["id"]] and r["question"] == cases[r["id"]]["question"]
        assert r["verdict"] is None and r["judge_version"] == outs[0]["scorer"]["version"]

    # a person settles the first case; the others are left for later
    exported[0].update(verdict="no_match", reviewer="ana", note="wrong population")
    filled = tmp_path / "review.jsonl"
    filled.write_text("".join(json.dumps(r) + "\n" for r in exported))
    regressions = tmp_path / "judge-regressions.jsonl"
    result = CliRunner().invoke(main, ["review", "import", str(filled), "--store", str(store), "--regressions", str(regressions)])
    assert result.exit_code == 0, result.output
    assert f"1 verdict(s) recorded, 0 already recorded, {len(needs) - 1} left for later; 1 appended" in result.output
    doc = json.loads(run("runs", "export", ids[0], "--store", store, "--format", "json"))
    assert [(r["case_id"], r["verdict"], r["reviewer"], r["note"]) for r in doc["reviews"]] == [(needs[0], "no_match", "ana", "wrong population")]
    entry = json.loads(regressions.read_text())
    assert entry["id"] == needs[0] and entry["answer"] == attempts[needs[0]] and entry["verdict"] == "no_match"
    assert entry["judge_version"] == outs[0]["scorer"]["version"] and entry["run_id"] == ids[0]

    # importing the same file again records nothing new
    again = CliRunner().invoke(main, ["review", "import", str(filled), "--store", str(store), "--regressions", str(regressions)])
    assert "0 verdict(s) recorded, 1 already recorded" in again.output and "0 appended" in again.output
    assert len(regressions.read_text().splitlines()) == 1

    # replay: the current judge still cannot settle that case, so it now differs from the human verdict -> exit 1;
    # a settled verdict the judge agrees with (arm_a's first decided case, as the run judged it) stays unchanged
    agreed = next(e for e in outs[0]["per_example"] if e.get("verdict") in ("match", "no_match") and not e.get("needs_human"))
    with regressions.open("a") as fh:
        fh.write(json.dumps({"id": agreed["id"], "answer": attempts[agreed["id"]], "verdict": agreed["verdict"], "reviewer": "bo"}) + "\n")
    result = CliRunner().invoke(main, ["replay", str(regressions), "--cases", str(SQL / "cases.jsonl"), "--db", str(SQL / "clinic.sqlite"), "--out", str(tmp_path / "replay.json")])
    assert result.exit_code == 1, result.output
    rep = json.loads((tmp_path / "replay.json").read_text())
    assert rep["same"] == [agreed["id"]]
    assert [(c["id"], c["settled"]) for c in rep["changed"]] == [(needs[0], "no_match")]
    assert rep["changed"][0]["now"] == outs[0]["per_example"][[e["id"] for e in outs[0]["per_example"]].index(needs[0])]["verdict"]
    assert needs[0] in result.output and "settled no_match (by ana" in result.output


def test_review_import_refuses_a_bad_file_whole(arm_runs, tmp_path):
    store, ids, _ = arm_runs
    rows = [json.loads(x) for x in run("review", "export", ids[0], "--store", store).splitlines()]
    rows[0].update(verdict="maybe", reviewer="ana")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = CliRunner().invoke(main, ["review", "import", str(bad), "--store", str(store), "--regressions", str(tmp_path / "r.jsonl")])
    assert result.exit_code == 2
    assert "bad.jsonl:1: verdict must be one of match, near_match, no_match, got 'maybe'" in result.output
    assert "nothing was imported" in result.output and not (tmp_path / "r.jsonl").exists()


def test_review_import_refuses_a_case_given_twice_in_one_file(arm_runs, tmp_path):
    # Found by the break-fix pass: the same filled row twice recorded it once but appended it twice to the
    # regression file (and two different verdicts for one case were both taken). Expected: refused at line 2.
    store, ids, _ = arm_runs
    rows = [json.loads(x) for x in run("review", "export", ids[0], "--store", store).splitlines()]
    rows[0].update(verdict="no_match", reviewer="ana")
    reviews_before = json.loads(run("runs", "export", ids[0], "--store", store, "--format", "json"))["reviews"]
    twice = tmp_path / "twice.jsonl"
    twice.write_text(json.dumps(rows[0]) + "\n" + json.dumps({**rows[0], "verdict": "match"}) + "\n")
    regressions = tmp_path / "r.jsonl"
    result = CliRunner().invoke(main, ["review", "import", str(twice), "--store", str(store), "--regressions", str(regressions)])
    assert result.exit_code == 2
    assert f"twice.jsonl:2: case {rows[0]['id']!r} of run {ids[0]} is already given on line 1" in result.output
    assert not regressions.exists()
    assert json.loads(run("runs", "export", ids[0], "--store", store, "--format", "json"))["reviews"] == reviews_before


def test_replay_with_every_verdict_unchanged_exits_0(arm_runs, tmp_path):
    _, _, outs = arm_runs
    attempts = {json.loads(x)["id"]: json.loads(x) for x in (SQL / "arm_a.jsonl").read_text().splitlines() if x.strip()}
    decided = [e for e in outs[0]["per_example"] if e.get("verdict") in ("match", "no_match") and not e.get("needs_human")][:3]
    reg = tmp_path / "r.jsonl"
    reg.write_text("".join(json.dumps({"id": e["id"], "answer": attempts[e["id"]], "verdict": e["verdict"]}) + "\n" for e in decided))
    result = CliRunner().invoke(main, ["replay", str(reg), "--cases", str(SQL / "cases.jsonl"), "--db", str(SQL / "clinic.sqlite")])
    assert result.exit_code == 0, result.output
    assert f"{len(decided)} unchanged, 0 changed" in result.output


def test_replay_never_passes_on_verdicts_it_could_not_replay(arm_runs, tmp_path):
    # break-fix finding: a regression file whose every entry named a case missing from --cases replayed nothing
    # and exited 0 (the gate passed on no evidence); one unreplayable entry among good ones was also a pass.
    _, _, outs = arm_runs
    attempts = {json.loads(x)["id"]: json.loads(x) for x in (SQL / "arm_a.jsonl").read_text().splitlines() if x.strip()}
    good = next(e for e in outs[0]["per_example"] if e.get("verdict") == "match" and not e.get("needs_human"))
    stray = {"id": "not-a-case", "answer": {"text": "1"}, "verdict": "match", "reviewer": "ana"}
    args = ["--cases", str(SQL / "cases.jsonl"), "--db", str(SQL / "clinic.sqlite")]
    only_stray = tmp_path / "stray.jsonl"
    only_stray.write_text(json.dumps(stray) + "\n")
    result = CliRunner().invoke(main, ["replay", str(only_stray), *args])
    assert result.exit_code == 2 and "none of its 1 settled verdict(s) could be replayed" in result.output
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(json.dumps({"id": good["id"], "answer": attempts[good["id"]], "verdict": "match"}) + "\n" + json.dumps(stray) + "\n")
    result = CliRunner().invoke(main, ["replay", str(mixed), *args])
    # by hand: 1 replayed and unchanged, 0 changed, 1 not replayed → the gate fails (1), saying why
    assert "1 unchanged, 0 changed, 1 not replayed" in " ".join(result.output.split())
    assert result.exit_code == 1 and "1 settled verdict(s) were not replayed" in result.output


def test_replay_runs_queries_with_the_limits_the_judging_used(arm_runs, tmp_path):
    # replay had no --timeout / --max-rows / --sql-dialect / --no-canonical: it ran every query with the defaults,
    # so a settled case judged under other limits came back changed though the judge had not changed. Now it takes
    # judge's options. The case: a settled match of arm_a whose final_query returns >= 2 rows on clinic.sqlite
    # (counted here with sqlite3); under --max-rows 1 its query is cut, so the case is no longer that match.
    import sqlite3

    _, _, outs = arm_runs
    attempts = {json.loads(x)["id"]: json.loads(x) for x in (SQL / "arm_a.jsonl").read_text().splitlines() if x.strip()}
    with sqlite3.connect(f"file:{SQL / 'clinic.sqlite'}?mode=ro", uri=True) as db:
        def n_rows(query: str) -> int:
            return len(db.execute(query).fetchall())

        settled = next(e for e in outs[0]["per_example"] if e.get("verdict") == "match" and not e.get("needs_human")
                       and attempts[e["id"]].get("final_query") and n_rows(attempts[e["id"]]["final_query"]) >= 2)
    reg = tmp_path / "r.jsonl"
    reg.write_text(json.dumps({"id": settled["id"], "answer": attempts[settled["id"]], "verdict": "match"}) + "\n")
    args = ["replay", str(reg), "--cases", str(SQL / "cases.jsonl"), "--db", str(SQL / "clinic.sqlite")]
    same = CliRunner().invoke(main, [*args, "--timeout", "30", "--max-rows", "1000"])
    assert same.exit_code == 0 and "1 unchanged, 0 changed" in same.output, same.output
    cut = CliRunner().invoke(main, [*args, "--max-rows", "1"])
    # its only entry cannot be judged under that limit: nothing replayed is never a pass (exit 2, saying why)
    assert cut.exit_code == 2, cut.output
    assert "none of its 1 settled verdict(s) could be replayed" in cut.output and "the row limit" in cut.output
    bad = CliRunner().invoke(main, [*args, "--timeout", "0"])
    assert bad.exit_code == 2  # the same bounds as judge's --timeout (0 < x <= 86400)


def test_sql_dialect_that_would_translate_nothing_is_refused(tmp_path):
    # A fresh-user run: `judge ... --db-dir examples/spider/regressions/databases --sql-dialect sqlite` and the same
    # `replay` exited 0 (30 unchanged) with no translation done (every --db-dir database is a file, whose queries run
    # as written), and `--sql-dialect nonsense` was accepted too; with a --db file judge already refused it. Now:
    # exit 2 before any query, naming why; a misspelt dialect is a usage error listing sqlglot's.
    spider = SQL.parent / "spider" / "regressions"
    reg = tmp_path / "r.jsonl"
    reg.write_text((spider / "judge-regressions.jsonl").read_text().splitlines()[0] + "\n")
    replay = ["replay", str(reg), "--cases", str(spider / "cases.jsonl"), "--db-dir", str(spider / "databases")]
    r = CliRunner().invoke(main, [*replay, "--sql-dialect", "sqlite"])
    assert r.exit_code == 2, r.output
    assert "--sql-dialect sqlite: translating queries applies to a PostgreSQL --db; the --db-dir databases" in r.output
    assert CliRunner().invoke(main, replay).exit_code == 0  # the same replay without it: 1 unchanged
    judge = ["judge", str(SQL / "cases.jsonl"), str(SQL / "arm_a.jsonl"), "--no-store", "-q"]
    r = CliRunner().invoke(main, [*judge, "--sql-dialect", "mysql"])
    assert r.exit_code == 2 and "no --db is given, so no query is run" in r.output, r.output
    r = CliRunner().invoke(main, [*judge, "--db", str(SQL / "clinic.sqlite"), "--sql-dialect", "sqllite"])
    assert r.exit_code == 2 and "'sqllite' is not a SQL dialect sqlglot knows; one of: " in r.output, r.output
    assert "sqlite" in r.output.split("one of: ")[1]


def test_exports_and_comparisons_never_overwrite_a_runs_inputs(tmp_path):
    # A fresh-user run: `review export latest --out examples/sql/cases.jsonl` replaced the 22 cases with the 2 review
    # rows, and `runs export latest --out examples/sql/arm_a.jsonl` the attempts with the run's cases, exit 0 (the
    # report already refused its run's inputs). Every command that writes what a stored run holds refuses them now,
    # exit 2, the file byte-equal.
    import shutil

    for name in ("cases.jsonl", "arm_a.jsonl", "clinic.sqlite"):
        shutil.copy(SQL / name, tmp_path / name)
    cases, attempts, db, store = tmp_path / "cases.jsonl", tmp_path / "arm_a.jsonl", tmp_path / "clinic.sqlite", tmp_path / "s.db"
    r = CliRunner().invoke(main, ["judge", str(cases), str(attempts), "--db", str(db), "--store", str(store), "-q"])
    assert r.exit_code == 0, r.output
    before = {p: p.read_bytes() for p in (cases, attempts, db)}
    for args, target in ((["review", "export", "latest"], cases), (["runs", "export", "latest"], attempts),
                         (["runs", "show", "latest", "-q"], db), (["compare", "latest", "latest", "-q"], attempts),
                         (["review", "stats", "latest", "-q"], cases)):
        r = CliRunner().invoke(main, [*args, "--store", str(store), "--out", str(target)])
        assert r.exit_code == 2, (args, r.output)
        assert f"--out {target}: is the run's " in r.output and "input; writing the results there would overwrite it" in r.output
    assert {p: p.read_bytes() for p in before} == before
    # another path is written as before
    r = CliRunner().invoke(main, ["review", "export", "latest", "--store", str(store), "--out", str(tmp_path / "review.jsonl")])
    assert r.exit_code == 0 and len((tmp_path / "review.jsonl").read_text().splitlines()) == 2  # q11, q13 (README)


def test_runs_show_spells_the_configuration_as_the_results_json_does(tmp_path):
    # A fresh-user run: `runs show` of a labels run printed "config second_gold_field  None" and
    # "config require_positive  True" - Python's words; the results JSON says null and true.
    f = tmp_path / "l.jsonl"
    f.write_text('{"id": "a", "gold": "y", "pred": "y"}\n{"id": "b", "gold": "n", "pred": "y"}\n')
    store = tmp_path / "s.db"
    assert CliRunner().invoke(main, ["labels", str(f), "--positive", "y", "--store", str(store), "-q"]).exit_code == 0
    r = CliRunner().invoke(main, ["runs", "show", "latest", "--store", str(store)], env={"COLUMNS": "120"})
    assert r.exit_code == 0, r.output
    rows = {cells[0]: cells[1] for line in r.output.splitlines()
            if len(cells := [c.strip() for c in line.strip("│ ").split("│")]) == 2}
    assert rows["config second_gold_field"] == "—" and rows["config require_positive"] == "true", rows
    assert "None" not in r.output and "True" not in r.output


_NO_PYARROW = '''
import sys

class _NoPyarrow:
    """pyarrow not installed, as far as this process can tell."""

    def find_spec(self, name, path=None, target=None):
        if name == "pyarrow" or name.startswith("pyarrow."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, _NoPyarrow())
'''


@pytest.mark.parametrize("args,extra", [(["runs", "import", "cases.parquet"], "goldeval[parquet]"),
                                        (["score", "p.jsonl", "--engine", "spark", "--no-store"], "goldeval[spark]"),
                                        (["score", "p.parquet", "--no-store"], "goldeval[parquet]")],
                         ids=["runs-import", "spark-engine", "score-parquet"])
def test_without_pyarrow_the_command_names_the_extra_to_install(tmp_path, args, extra):
    """Issue 25 item 5: `runs import` without pyarrow was an internal error (ModuleNotFoundError, exit 3)."""
    import os
    import subprocess
    import sys

    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(_NO_PYARROW)
    for name in ("cases.parquet", "p.parquet"):
        (tmp_path / name).write_bytes(b"PAR1 not really")
    (tmp_path / "p.jsonl").write_text('{"id": "a", "prediction": "x", "reference": "x"}\n')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(blocker), *filter(None, [os.environ.get("PYTHONPATH")])]),
           "GOLDEVAL_HOME": str(tmp_path / "home")}
    r = subprocess.run([sys.executable, "-c", "from goldeval.cli import main; main()", *args], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    assert f"pip install '{extra}'" in r.stderr and "pyarrow" in r.stderr and "Traceback" not in r.stderr
