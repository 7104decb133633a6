"""Texts kept with the run (issue 29 item 6): a report made after its input files were deleted shows every text,
read from the copies the store kept; ``--no-texts`` keeps nothing (the page then says the texts are not shown);
``report --redact`` still strips them; an input changed since the run is shown as it was scored.

The expected texts are the input files' own rows (Open-Scribe's published PriMock57 predictions, the clinic SQL
example of examples/sql), read here before the files are deleted.
"""

from __future__ import annotations

import gzip
import io
import json
import shutil
import sqlite3
import tarfile
from pathlib import Path

import pytest
import zstandard
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


def test_review_export_after_the_inputs_were_deleted_has_question_golden_and_answer(tmp_path):
    # arm A of the clinic example leaves q11 and q13 to a person (examples/sql/README.md: needs_human 2)
    cases, attempts = tmp_path / "cases.jsonl", tmp_path / "arm_a.jsonl"
    shutil.copy(SQL / "cases.jsonl", cases)
    shutil.copy(SQL / "arm_a.jsonl", attempts)
    want_c, want_a = rows(cases), rows(attempts)
    store = tmp_path / "g.db"
    run("judge", cases, attempts, "--db", SQL / "clinic.sqlite", "--store", store, "-q")
    cases.unlink()
    attempts.unlink()
    out = tmp_path / "review.jsonl"
    run("review", "export", "latest", "--store", store, "--out", out, "-q")
    got = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert sorted(r["id"] for r in got) == ["q11", "q13"]
    for r in got:
        assert (r["question"], r["golden"], r["rubric"]) == (want_c[r["id"]]["question"], want_c[r["id"]]["golden"], want_c[r["id"]].get("rubric"))
        assert r["answer"] == want_a[r["id"]]  # the attempt row, as the deleted file held it
        assert "copy kept in the run store" in r["source_note"]
    # with --no-texts nothing was kept: the same export says the files are gone and has no question
    shutil.copy(SQL / "cases.jsonl", cases)
    shutil.copy(SQL / "arm_a.jsonl", attempts)
    store2 = tmp_path / "g2.db"
    run("judge", cases, attempts, "--db", SQL / "clinic.sqlite", "--store", store2, "--no-texts", "-q")
    cases.unlink()
    run("review", "export", "latest", "--store", store2, "--out", out, "-q")
    got = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert all(r["question"] is None and "is gone" in r["source_note"] for r in got)


def test_a_bundle_carries_the_kept_texts_to_another_store(tmp_path):
    preds = tmp_path / "preds.jsonl"
    shutil.copy(PRIMOCK, preds)
    want = rows(preds)
    ci, laptop = tmp_path / "ci.db", tmp_path / "laptop.db"
    run("score", preds, "--store", ci, "-q")
    preds.unlink()
    bundle = tmp_path / "run.tar.gz"
    run("runs", "export", "latest", "--store", ci, "--bundle", bundle)
    run("runs", "import", bundle, "--store", laptop)
    run("runs", "import", bundle, "--store", laptop)  # idempotent: the kept input is replaced, not doubled
    assert kept_rows(laptop) == kept_rows(ci)
    with open_store(laptop) as st:
        model = report_model_from_store(st, "latest")
    assert {c["id"]: (c["prediction"], c["reference"]) for c in model["cases"]} == {
        i: (r["prediction"], r["reference"]) for i, r in want.items()}


@pytest.mark.parametrize("edit", ["frame", "sha256"])
def test_a_bundle_whose_kept_input_was_edited_is_refused(tmp_path, edit):
    preds = tmp_path / "preds.jsonl"
    preds.write_text('{"id": "a", "prediction": "x y", "reference": "x"}\n', encoding="utf-8")
    store = tmp_path / "g.db"
    run("score", preds, "--store", store, "-q")
    bundle = tmp_path / "run.tar.gz"
    run("runs", "export", "latest", "--store", store, "--bundle", bundle)
    members = {}
    with tarfile.open(bundle, "r:gz") as tar:
        for m in tar.getmembers():
            members[m.name] = tar.extractfile(m).read()
    if edit == "frame":  # another text in the member: its frame is not the one listed
        members["inputs/predictions.zst"] = zstandard.ZstdCompressor().compress(b'{"id": "a", "prediction": "EDITED", "reference": "x"}\n')
        message = "inputs/predictions.zst does not decompress"
    else:  # the member intact, bundle.json's record of it edited
        head = json.loads(members["bundle.json"])
        head["inputs"]["predictions"]["content_sha256"] = "0" * 64
        members["bundle.json"] = json.dumps(head).encode()
        message = "inputs/predictions.zst does not match the size and sha256 in bundle.json"
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    bundle.write_bytes(gzip.compress(raw.getvalue()))
    out = run("runs", "import", bundle, "--store", tmp_path / "other.db", code=2)
    assert message in out and "nothing was imported" in out
    assert not (tmp_path / "other.db").exists() or kept_rows(tmp_path / "other.db") == []
