"""Free-text runs in the store: per_example is stored once (as cases) and rebuilt exactly on read."""

from __future__ import annotations

import json
import sqlite3

import pytest

from click.testing import CliRunner

from conftest import EXAMPLES
from goldeval.cli import main
from goldeval.runs.store import RunStore


def test_per_example_is_stored_once_and_rebuilt_exactly(tmp_path):
    store = tmp_path / "g.db"
    out = tmp_path / "r.json"
    src = str(EXAMPLES / "openscribe_acibench_predictions.jsonl")  # 35 scored, 5 failed (null predictions)
    res = CliRunner().invoke(main, ["score", src, "--store", str(store), "--out", str(out), "-q"])
    assert res.exit_code == 0, res.output
    written = json.loads(out.read_text())
    # the run row holds a reference, not a second copy of the 35 entries
    raw = sqlite3.connect(store).execute("SELECT results FROM runs").fetchone()[0]
    assert json.loads(raw)["per_example"]["$cases"] is True
    # reading the run gives back exactly what the command wrote (entries, order, failures apart)
    with RunStore(store) as st:
        results = st.get_run("latest")["results"]
    assert results["per_example"] == written["per_example"]
    assert results["failures"] == written["failures"] and len(results["failures"]) == 5
    assert results["aggregate"]["whole_note_f1_mean"] == written["aggregate"]["whole_note_f1_mean"]


def test_a_case_whose_row_another_record_replaced_is_not_lost_on_read(tmp_path):
    # break-fix finding: a duplicate-id error is recorded under a made-up id "<id>#line<n>"; when a real row already
    # has that id, the error record replaces the scored case's row, and `runs show` rebuilt per_example without it
    # (2 entries written, 1 shown). By hand: line 1 'a#line3' scored, line 2 'a' scored, line 3 'a' repeats line 2
    # → per_example ['a#line3', 'a'], failures [line 3].
    src = tmp_path / "coll.jsonl"
    src.write_text(
        '{"id": "a#line3", "prediction": "x y", "reference": "x y"}\n'
        '{"id": "a", "prediction": "x", "reference": "x"}\n'
        '{"id": "a", "prediction": "z", "reference": "x"}\n'
    )
    store, out = tmp_path / "g.db", tmp_path / "r.json"
    res = CliRunner().invoke(main, ["score", str(src), "--store", str(store), "--out", str(out), "-q"])
    assert res.exit_code == 0, res.output
    written = json.loads(out.read_text())
    assert [e["id"] for e in written["per_example"]] == ["a#line3", "a"] and [f["line"] for f in written["failures"]] == [3]
    with RunStore(store) as st:
        assert st.get_run("latest")["results"]["per_example"] == written["per_example"]


def test_compare_says_when_runs_were_measured_differently(tmp_path):
    # PriMock57 under the two tokenizers: the same predictions, measured two ways. compare must say so beside the
    # numbers (found by a newcomer: the difference was only under "differs" in the JSON).
    store = tmp_path / "g.db"
    src = str(EXAMPLES / "openscribe_primock57_predictions.jsonl")
    for tok in ("openscribe", "unicode"):
        assert CliRunner().invoke(main, ["score", src, "--tokenizer", tok, "--store", str(store), "-q"]).exit_code == 0
    res = CliRunner().invoke(main, ["compare", "latest~1", "latest", "--store", str(store)])
    assert res.exit_code == 0, res.output
    assert "measured differently (tokenizer: openscribe → unicode)" in " ".join(res.output.split())


def _gated(command, tmp_path):
    if command == "score":
        dod = tmp_path / "dod.toml"
        dod.write_text('agreed_by = "Clinical lead"\nagreed_on = 2026-11-02\n[gates]\nwhole_note_f1_mean = { min = 0.25 }\n')
        return ["score", str(EXAMPLES / "openscribe_primock57_predictions.jsonl"), "--gates", str(dod)]
    return ["labels", str(EXAMPLES.parent / "labels" / "pilot_claims.jsonl"), "--gates", str(EXAMPLES.parent / "labels" / "dod.toml")]


@pytest.mark.parametrize("command", ["score", "labels"])
def test_a_run_killed_before_its_gates_is_left_resumable_never_finished_without_them(tmp_path, monkeypatch, command):
    # The run used to be finished by the scorer, then finished again with the gate report: a kill in between left a
    # finished run with no decision. Now it is finished once, with the gates; killed before, it stays interrupted.
    import goldeval.gates.evaluate  # the run pipeline imports evaluate_gates from here when it applies the gates

    store = tmp_path / "g.db"
    args = [*_gated(command, tmp_path), "--store", str(store)]

    def killed(*a, **k):
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(goldeval.gates.evaluate, "evaluate_gates", killed)
        res = CliRunner().invoke(main, args)
    assert res.exit_code == 130, res.output
    with RunStore(store) as st:
        run = st.get_run("latest")
        assert run["status"] == "interrupted" and run["n_recorded"] > 0
    res = CliRunner().invoke(main, args)
    assert res.exit_code in (0, 1), res.output
    with RunStore(store) as st:
        runs = st.list_runs()
        assert len(runs) == 1  # the interrupted run was resumed (every case reused), not a second run started
        run = st.get_run(runs[0]["id"])
        assert run["status"] == "finished" and run["results"]["gates"]["passed"] in (True, False)
        assert run["gates_passed"] is run["results"]["gates"]["passed"]


@pytest.mark.parametrize(("workers", "store"), [("1", True), ("2", True), ("1", False)])
def test_a_row_whose_id_or_section_name_is_not_unicode_fails_alone(tmp_path, workers, store):
    # break-fix: free-text rows are read with the standard library when orjson refuses them, so a lone surrogate
    # escape ("\ud800") is read, as documented; but in an id or a section name it reaches the results and the store,
    # and no JSON encoder can write it: the workers' serialization for the store crashed ("internal error:
    # TypeError", was a store error before), and with --no-store --out the results could not be written. Expected
    # (by hand): the id row and the section-name row fail alone, with their line; the row with the surrogate only in
    # its text is scored ("x \ud800 y" vs "x y": tokens [x, y] on both sides, F1 1.0); exit 0; the results JSON
    # and the store hold the scored row only.
    src = tmp_path / "sur.jsonl"
    src.write_text(
        '{"id": "a\\ud800", "prediction": "a b", "reference": "a"}\n'
        '{"id": "b", "prediction": {"\\ud801": "a"}, "reference": {"\\ud801": "a"}}\n'
        '{"id": "c", "prediction": "x \\ud800 y", "reference": "x y"}\n'
    )
    out, db = tmp_path / "r.json", tmp_path / "g.db"
    res = CliRunner().invoke(main, ["score", str(src), "--workers", workers, "--out", str(out), "-q",
                                    *(["--store", str(db)] if store else ["--no-store"])])
    assert res.exit_code == 0, res.output
    written = json.loads(out.read_text())
    assert [e["id"] for e in written["per_example"]] == ["c"] and written["per_example"][0]["whole_note"]["f1"] == 1.0
    assert [(f["line"], f["id"]) for f in written["failures"]] == [(1, None), (2, "b")]
    assert "field 'id' must be Unicode text" in written["failures"][0]["error"]
    assert "section name" in written["failures"][1]["error"] and "Unicode text" in written["failures"][1]["error"]
    if store:
        with RunStore(db) as st:
            run = st.get_run("latest")
            assert run["status"] == "finished" and run["results"]["per_example"] == written["per_example"]
            assert [(c["id"], c["status"]) for c in st.cases("latest")] == [("b", "unscored"), ("c", "scored")]
