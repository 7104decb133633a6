"""Texts kept with the run (issue 29 item 6): a report made after its input files were deleted shows every text,
read from the copies the store kept; ``--no-texts`` keeps nothing (the page then says the texts are not shown);
``report --redact`` still strips them; an input changed since the run is shown as it was scored.

The expected texts are the input files' own rows (Open-Scribe's published PriMock57 predictions, the clinic SQL
example of examples/sql), read here before the files are deleted.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from click.testing import CliRunner

from goldeval.cli import main
from goldeval.report.build import report_model_from_store
from goldeval.runs.backends import open_store

REPO = Path(__file__).resolve().parents[2]
PRIMOCK = REPO / "examples" / "data" / "openscribe_primock57_predictions.jsonl"
SQL = REPO / "examples" / "sql"


def run(*args, code: int = 0, input: str | None = None) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False, input=input)
    assert result.exit_code == code, (args, result.output)
    return result.output


def rows(path: Path) -> dict[str, dict]:
    return {str(r["id"]): r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines()) if r}


def page_data(html: str) -> dict:
    tag = '<script type="application/json" id="goldeval-data">'
    start = html.index(tag) + len(tag)
    return json.loads(html[start:html.index("</script>", start)])


def kept_rows(store: Path) -> list[tuple]:
    return list(sqlite3.connect(store).execute("SELECT role, part, name, size FROM run_inputs ORDER BY role, part"))


def test_a_report_made_after_the_free_text_input_was_deleted_shows_every_text(tmp_path):
    preds = tmp_path / "preds.jsonl"
    shutil.copy(PRIMOCK, preds)
    want = rows(preds)
    store = tmp_path / "g.db"
    run("score", preds, "--store", store, "-q")
    # the whole file is kept, as read: one part (172,719 bytes < 8 MiB), its size the file's
    assert kept_rows(store) == [("predictions", 0, "preds.jsonl", preds.stat().st_size)]
    preds.unlink()
    out = tmp_path / "r.html"
    run("report", "latest", "--store", store, "--out", out)
    data = page_data(out.read_text(encoding="utf-8"))
    assert len(data["cases"]) == 57
    for case in data["cases"]:  # every one of the 57 texts, both sides, exactly as in the deleted file
        assert (case["prediction"], case["reference"]) == (want[case["id"]]["prediction"], want[case["id"]]["reference"])
    assert any("shown from the copy kept in the run store" in n and "predictions input" in n for n in data["notes"])


def test_a_judge_report_after_its_cases_and_attempts_were_deleted_shows_question_golden_and_answer(tmp_path):
    cases, attempts = tmp_path / "cases.jsonl", tmp_path / "arm_a.jsonl"
    shutil.copy(SQL / "cases.jsonl", cases)
    shutil.copy(SQL / "arm_a.jsonl", attempts)
    want_c, want_a = rows(cases), rows(attempts)
    store = tmp_path / "g.db"
    run("judge", cases, attempts, "--db", SQL / "clinic.sqlite", "--store", store, "-q")
    assert [r[0] for r in kept_rows(store)] == ["attempts", "cases"]  # the database is not a text: not kept
    cases.unlink()
    attempts.unlink()
    with open_store(store) as st:
        model = report_model_from_store(st, "latest")
    assert {c["id"] for c in model["cases"]} == set(want_c)
    for c in model["cases"]:
        case, attempt = want_c[c["id"]], want_a.get(c["id"], {})
        assert c["question"] == case["question"]
        assert c["golden_kind"] == case["golden"]["kind"]
        assert c.get("canonical_query") == case["golden"].get("canonical_query")
        if "rows" in case["golden"]:
            assert c["golden"]["columns"] == case["golden"]["columns"] and c["golden"]["row_count"] == len(case["golden"]["rows"])
        assert c.get("final_query") == attempt.get("final_query")
        assert c.get("text") == attempt.get("text")
    assert sum("copy kept in the run store" in n for n in model["notes"]) == 2


def test_no_texts_keeps_nothing_and_the_report_says_the_texts_are_not_shown(tmp_path):
    preds = tmp_path / "preds.jsonl"
    shutil.copy(PRIMOCK, preds)
    store = tmp_path / "g.db"
    run("score", preds, "--store", store, "--no-texts", "-q")
    assert kept_rows(store) == []
    # while the input is there, the report reads it as before
    with open_store(store) as st:
        assert report_model_from_store(st, "latest")["cases"][0]["prediction"]
    preds.unlink()
    with open_store(store) as st:
        model = report_model_from_store(st, "latest")
    assert all(c.get("prediction") is None and c.get("reference") is None for c in model["cases"])
    assert any("its texts are not shown" in n for n in model["notes"])


def test_redact_still_strips_the_kept_texts(tmp_path):
    preds = tmp_path / "preds.jsonl"
    shutil.copy(PRIMOCK, preds)
    first = next(iter(rows(preds).values()))
    store = tmp_path / "g.db"
    run("score", preds, "--store", store, "-q")
    preds.unlink()
    out = tmp_path / "r.html"
    run("report", "latest", "--store", store, "--redact", "--out", out)
    html = out.read_text(encoding="utf-8")
    assert "day1_consultation01" in html
    for text in (first["prediction"], first["reference"]):
        for line in (x for x in text.splitlines() if len(x) > 30):
            assert json.dumps(line)[1:-1] not in html and line not in html


def test_an_input_changed_since_the_run_is_shown_as_it_was_scored(tmp_path):
    preds = tmp_path / "preds.jsonl"
    preds.write_text('{"id": "a", "prediction": "bp 120/80", "reference": "bp 120/80 stable"}\n', encoding="utf-8")
    store = tmp_path / "g.db"
    run("score", preds, "--store", store, "-q")
    preds.write_text('{"id": "a", "prediction": "edited later", "reference": "edited later"}\n', encoding="utf-8")
    with open_store(store) as st:
        model = report_model_from_store(st, "latest")
    assert (model["cases"][0]["prediction"], model["cases"][0]["reference"]) == ("bp 120/80", "bp 120/80 stable")
    assert any("changed since the run (sha256 differs): its texts are shown from the copy kept" in n for n in model["notes"])


def test_a_run_read_from_stdin_shows_its_texts(tmp_path):
    store = tmp_path / "g.db"
    line = '{"id": "s1", "prediction": "no chest pain", "reference": "denies chest pain"}\n'
    run("score", "-", "--store", store, "-q", input=line)
    with open_store(store) as st:
        model = report_model_from_store(st, "latest")
    assert (model["cases"][0]["prediction"], model["cases"][0]["reference"]) == ("no chest pain", "denies chest pain")
    assert any("stdin" in n and "copy kept in the run store" in n for n in model["notes"])


def test_deleting_a_run_deletes_its_kept_texts(tmp_path):
    preds = tmp_path / "preds.jsonl"
    shutil.copy(PRIMOCK, preds)
    store = tmp_path / "g.db"
    run("score", preds, "--store", store, "-q")
    assert len(kept_rows(store)) == 1
    run("runs", "delete", "latest", "--store", store, "--yes")
    assert kept_rows(store) == []
