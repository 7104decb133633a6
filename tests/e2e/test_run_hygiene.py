"""Issue 10 items 5 and 7: bad input leaves no junk "(interrupted)" run to resume, and a Ctrl-C after the run was
finished (before --out is written) says the run is finished and how to export it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from goldeval.cli import main

REPO = Path(__file__).resolve().parents[2]


def _runs(store: Path) -> list[tuple[str, str]]:
    if not store.exists():
        return []
    con = sqlite3.connect(store)
    try:
        return list(con.execute("SELECT id, status FROM runs"))
    except sqlite3.OperationalError:
        return []
    finally:
        con.close()


def _run(args, env=None):
    return CliRunner(env=env).invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.mark.parametrize("content", [b"", b"\n\n", b'{"id": "a", "prediction": "caf\xe9", "reference": "x"}\n'], ids=["empty", "blank", "latin1"])
def test_an_unusable_score_input_records_no_run(tmp_path: Path, content: bytes) -> None:
    p = tmp_path / "p.jsonl"
    p.write_bytes(content)
    r = _run(["score", p, "--store", tmp_path / "s.db"])
    assert r.exit_code == 2, r.output
    assert _runs(tmp_path / "s.db") == []


def test_labels_with_a_missing_or_wrong_positive_records_no_run(tmp_path: Path) -> None:
    p = tmp_path / "l.jsonl"
    p.write_text('{"id": "1", "gold": "yes", "pred": "no"}\n{"id": "2", "gold": "no", "pred": "no"}\n')
    r = _run(["labels", p, "--store", tmp_path / "s.db"])
    assert r.exit_code == 2, r.output
    r = _run(["labels", p, "--positive", "escalate", "--store", tmp_path / "s.db"])
    assert r.exit_code == 2, r.output
    assert _runs(tmp_path / "s.db") == []


def test_judge_llm_without_an_api_key_fails_before_recording(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    sql = REPO / "examples" / "sql"
    r = _run(["judge", sql / "cases.jsonl", sql / "arm_a.jsonl", "--db", sql / "clinic.sqlite", "--llm", "gpt-4o-mini",
              "--store", tmp_path / "s.db"])
    assert r.exit_code == 3, r.output
    assert "OPENAI_API_KEY" in r.output
    assert _runs(tmp_path / "s.db") == []


def test_ctrl_c_after_the_run_finished_says_how_to_export_it(tmp_path: Path, monkeypatch) -> None:
    # the Ctrl-C lands while the results file is being completed, after the store marked the run finished
    from goldeval.io.resultsfile import ResultsFile

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(ResultsFile, "close", interrupted)
    store = tmp_path / "s.db"
    r = _run(["score", REPO / "examples" / "data" / "openscribe_primock57_predictions.jsonl", "--store", store, "-q",
              "--out", tmp_path / "r.json"])
    assert r.exit_code == 130, r.output
    [(run_id, status)] = _runs(store)
    assert status == "finished"
    assert f"goldeval runs show {run_id}" in r.output and "--out" in r.output, r.output
    assert "resumes when the same command is run again" not in r.output
    # and the command it names writes the results
    r = _run(["runs", "show", run_id, "--store", store, "--out", tmp_path / "r.json"])
    assert r.exit_code == 0
    assert json.loads((tmp_path / "r.json").read_text())["aggregate"]["n"] == 57
