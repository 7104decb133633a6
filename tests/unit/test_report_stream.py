"""A report streamed from the store (``report_model_from_store(stream=True)``, what ``goldeval report RUN`` does) is the
page built from every record held at once: the same bytes, the same embedded cases, the same seeded sample and the
same worst cases, for free text (texts read a chunk at a time), labels and data answers."""

from __future__ import annotations

import io
import json
import random
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from goldeval.cli import main
from goldeval.report.build import report_model_from_store
from goldeval.report.html import render_html, write_html
from goldeval.report.model import CaseTally, EmbeddedCases, ReportOptions, _select, _streamed_rows, _case_row
from goldeval.report.sources import LineFile
from goldeval.runs.store import RunStore

REPO = Path(__file__).resolve().parents[2]
PRIMOCK = REPO / "examples" / "data" / "openscribe_primock57_predictions.jsonl"
LABELS = REPO / "examples" / "labels" / "pilot_claims.jsonl"
SQL = REPO / "examples" / "sql"


def _run(*args, code: int = 0) -> None:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == code, (args, result.output)


def _page(model) -> bytes:
    buf = io.BytesIO()
    write_html(model, buf)
    return buf.getvalue()


def _both(store: Path, options: ReportOptions):
    with RunStore(store) as st:
        held = report_model_from_store(st, "latest", options=options)
        streamed = report_model_from_store(st, "latest", options=options, stream=True)
        return held, streamed, _page(held), _page(streamed)


@pytest.mark.parametrize("max_cases, min_f1", [(1000, None), (10, None), (10, 0.3), (1, None), (1, 0.99)])
def test_a_streamed_free_text_page_is_the_page_of_every_record(tmp_path, max_cases, min_f1):
    store = tmp_path / "g.db"
    _run("score", PRIMOCK, "--store", store, "-q")
    held, streamed, page_held, page_streamed = _both(store, ReportOptions(max_cases=max_cases, min_f1=min_f1))
    assert isinstance(streamed["cases"], EmbeddedCases) and isinstance(held["cases"], list)
    assert page_streamed == page_held
    assert list(streamed["cases"]) == held["cases"]  # iterating it gives the same cases again (texts included)
    assert render_html(streamed).encode("utf-8") == page_held
    assert len(streamed["cases"]) == len(held["cases"])
    # PriMock57 has 57 scored notes: above max_cases the page samples and says so, below it embeds every case
    if max_cases >= 57:
        assert streamed["sample"] is None and len(streamed["cases"]) == 57
    else:
        assert streamed["sample"]["n_total"] == 57 and len(streamed["cases"]) == streamed["sample"]["n_embedded"]
        assert "This run has 57 cases" in streamed["sample"]["note"]
    assert all(c["prediction"] and c["reference"] for c in streamed["cases"])  # the texts, read chunk by chunk


def test_the_streamed_page_keeps_the_lowest_f1_case(tmp_path):
    store = tmp_path / "g.db"
    _run("score", PRIMOCK, "--store", store, "-q")
    with RunStore(store) as st:
        f1 = {c["id"]: c["whole_note"]["f1"] for c in st.cases("latest")}
        model = report_model_from_store(st, "latest", options=ReportOptions(max_cases=4), stream=True)
    lowest = min(f1, key=lambda cid: (f1[cid], cid))
    ids = [c["id"] for c in model["cases"]]
    # room 4, nothing failing: the 2 lowest F1 (4 // 2) and a sample of 2 of the other 55
    assert len(ids) == 4 and lowest in ids and model["sample"]["n_worst"] == 2 and model["sample"]["n_sampled"] == 2
    assert model["sample"]["n_passing"] == 57


def test_a_streamed_labels_page_is_the_page_of_every_record(tmp_path):
    store = tmp_path / "g.db"
    _run("labels", LABELS, "--positive", "escalate", "--store", store, "-q")
    for max_cases in (1000, 30, 5):  # 10 of the 200 fail: kept above the room of 5
        held, streamed, page_held, page_streamed = _both(store, ReportOptions(max_cases=max_cases))
        assert page_streamed == page_held, max_cases
    assert streamed["sample"]["n_kept"] == 10 and len(streamed["cases"]) == 10


def test_a_streamed_data_answer_page_is_the_page_of_every_record(tmp_path):
    for name in ("cases.jsonl", "arm_b.jsonl", "clinic.sqlite"):
        shutil.copy(SQL / name, tmp_path / name)
    store = tmp_path / "g.db"
    _run("judge", tmp_path / "cases.jsonl", tmp_path / "arm_b.jsonl", "--db", tmp_path / "clinic.sqlite", "--store", store,
         "-q")
    for max_cases in (1000, 3):
        held, streamed, page_held, page_streamed = _both(store, ReportOptions(max_cases=max_cases))
        assert page_streamed == page_held, max_cases
    data = json.loads(page_streamed.split(b'id="goldeval-data">')[1].split(b"</script>")[0])
    assert data["cases"][0]["question"]  # the texts read back from the inputs


def test_a_redacted_streamed_page_is_the_redacted_page(tmp_path):
    store = tmp_path / "g.db"
    _run("score", PRIMOCK, "--store", store, "-q")
    held, streamed, page_held, page_streamed = _both(store, ReportOptions(max_cases=10, redact=True))
    assert page_streamed == page_held
    assert all("prediction" not in c for c in streamed["cases"])


def _records(f1s, buckets=None):
    """Free-text per-case records with these F1s (``None``: unscored)."""
    out = []
    for i, f1 in enumerate(f1s):
        if f1 is None:
            out.append({"id": f"c{i:05d}", "status": "failed", "reason": f"line {i + 1}: bad row", "line": i + 1})
        else:
            out.append({"id": f"c{i:05d}", "status": "scored", "line": i + 1,
                        "whole_note": {"f1": f1, "precision": f1, "recall": f1}})
    return out


@pytest.mark.parametrize("seed", [0, 7])
@pytest.mark.parametrize("max_cases, min_f1", [(10, None), (10, 0.5), (3, None), (1, None), (2_000, 0.2), (20_000, None)])
def test_the_one_pass_choice_is_select_of_every_row(seed, max_cases, min_f1):
    # 12,000 cases: F1 on a grid of 101 values (many ties, broken by id), every 97th unscored; the pool of the lowest
    # F1s is cut back many times at max_cases 10 (cap 5, cut at 4,106 candidates)
    rng = random.Random(seed)
    f1s = [None if i % 97 == 5 else rng.randrange(101) / 100 for i in range(12_000)]
    records = _records(f1s)
    opts = ReportOptions(max_cases=max_cases, min_f1=min_f1, seed=seed)
    rows = [_case_row(c, "freetext", opts) for c in records]
    want_rows, want_sample = _select(rows, opts, set())
    tally = CaseTally("freetext", set())
    got_rows, got_sample = _streamed_rows(lambda: iter(records), "freetext", opts, tally)
    assert [r["id"] for r in got_rows] == [r["id"] for r in want_rows]
    assert got_rows == want_rows and got_sample == want_sample
    assert tally.f1s == [f for f in f1s if f is not None] and tally.n_unscored == f1s.count(None)


def test_the_lowest_f1_ties_are_broken_by_id():
    # worked by hand: F1 0.9, 0.1, 0.5, 0.1, 0.7, all passing; room 2 → the 1 (2 // 2) lowest is c00001 (0.1, and its
    # id sorts before c00003's), and 1 of the 4 others is sampled
    records = _records([0.9, 0.1, 0.5, 0.1, 0.7])
    opts = ReportOptions(max_cases=2)
    rows, sample = _streamed_rows(lambda: iter(records), "freetext", opts, CaseTally("freetext", set()))
    assert "c00001" in [r["id"] for r in rows] and "c00003" not in [r["id"] for r in rows[:1]]
    assert sample["n_worst"] == 1 and sample["n_sampled"] == 1 and len(rows) == 2
    assert "(up to 0.1000)" in sample["note"]
    # and the other way: a run that fits is embedded whole, with no sample note
    rows, sample = _streamed_rows(lambda: iter(records), "freetext", ReportOptions(max_cases=5), CaseTally("freetext", set()))
    assert sample is None and [r["id"] for r in rows] == [f"c{i:05d}" for i in range(5)]


def test_a_run_that_changes_between_the_two_passes_is_refused():
    calls = []

    def records():
        calls.append(1)
        return iter(_records([0.5] * (5 if len(calls) == 1 else 4)))

    with pytest.raises(Exception, match="changed while the report was read"):
        _streamed_rows(records, "freetext", ReportOptions(max_cases=2), CaseTally("freetext", set()))


def test_line_file_reads_lines_in_any_order(tmp_path):
    p = tmp_path / "f.jsonl"
    p.write_bytes(b"one\ntwo\r\n\nfour")  # an empty line, a CRLF line, a last line without its newline
    lf = LineFile(str(p))
    try:
        assert lf.line(4) == b"four" and lf.line(2) == b"two\r\n" and lf.line(3) == b"\n" and lf.line(1) == b"one\n"
        assert lf.line(5) is None and lf.line(0) is None and lf.line(4) == b"four"
    finally:
        lf.close()
    lf = LineFile(str(p))
    try:
        with open(p, "rb") as fh:  # the lines a file's iteration gives, by number
            assert list(fh) == [lf.line(i) for i in range(1, 5)]
    finally:
        lf.close()


@pytest.mark.parametrize("scan", [1, 2, 3, 7, 1 << 20])
def test_line_file_finds_lines_across_its_read_blocks_as_readline_does(tmp_path, monkeypatch, scan):
    """LineFile passes over lines a block at a time (SCAN_BYTES): with blocks of 1, 2, 3 and 7 bytes every line
    and newline falls across a block's edge somewhere. Expected: the lines iterating the file gives (the reference:
    readline), asked for forwards, backwards, past the end and again, on files with empty lines, CRLF, bytes that are
    no UTF-8, a line longer than a block, a last line with and without its newline, and an empty file."""
    monkeypatch.setattr(LineFile, "SCAN_BYTES", scan)
    files = [b"", b"\n", b"x", b"one\ntwo\r\n\nfour", b"a\n\n\nb\n", "é\u2028ü\n".encode() + b"\xff\xfe\n" + b"L" * 50 + b"\nz\n"]
    for i, body in enumerate(files):
        p = tmp_path / f"f{i}.jsonl"
        p.write_bytes(body)
        with open(p, "rb") as fh:
            want = list(fh)
        n = len(want)
        for order in (range(1, n + 3), range(n + 2, 0, -1), [n + 2, 1, n, 2, n + 1, 1]):
            lf = LineFile(str(p))
            try:
                for k in order:
                    assert lf.line(k) == (want[k - 1] if 1 <= k <= n else None), (body, scan, list(order), k)
            finally:
                lf.close()


def test_the_inputs_sha256_taken_ahead_still_sees_a_changed_input(tmp_path):
    """report_model_from_store(stream=True) hashes the free-text input in a thread while the cases are read
    (TextLoader.prefetch): a healthy input is used (no note, the texts shown); an input changed after the run, or
    changed after the thread hashed it, is said to have changed and its texts are not read from it (the sha256 memo
    is keyed by the file's size and mtime, so the change is hashed again). Expected: the notes of _usable, the same
    page as the one built from every record."""
    from goldeval.report.build import sources_loader

    pred = tmp_path / "pred.jsonl"
    shutil.copy(PRIMOCK, pred)
    store = tmp_path / "g.db"
    _run("score", pred, "--store", store, "-q")
    with RunStore(store) as st:
        rec = st.get_run("latest", with_cases=False)
        loader = sources_loader(rec["results"], rec)
        loader.prefetch()
        assert loader.notes() == []  # healthy: the hash taken ahead is the recorded one
        assert loader({"placeholder"}).notes == []
        loader.close()
        _, streamed, page_held, page_streamed = _both(store, ReportOptions())
        assert page_streamed == page_held and streamed["notes"] == []

        loader = sources_loader(rec["results"], rec)
        loader.prefetch()
        loader._hashing.join()  # the thread is done: the memo holds the unchanged file's sha256
        with open(pred, "ab") as fh:
            fh.write(b"\n")
        assert any("changed since the run (sha256 differs)" in n for n in loader.notes())
        loader.close()
        held, streamed, page_held, page_streamed = _both(store, ReportOptions())
        assert page_streamed == page_held
        assert any("changed since the run" in n for n in streamed["notes"]) and streamed["notes"] == held["notes"]
        # the texts shown are the copy kept with the run (the changed file's are not)
        assert any("shown from the copy kept in the run store" in n for n in streamed["notes"])


def test_the_free_text_row_is_case_rows_own():
    """_freetext_row (the streamed report's loop) gives _case_row's dict, key order included (the page's JSON
    keeps it), on every shape of free-text record: scored, unscored with a reason or an error, no whole note, an
    F1 of None, 0 and -0.0, at, above and below --min-f1, sections (one null), an int id, non-ASCII and escapes,
    redacted. Expected: _case_row, the definition."""
    from goldeval.report.model import _freetext_row

    wn = {"precision": 0.5, "recall": 1.0, "f1": 2 / 3}
    records = [
        {"status": "scored", "id": "p0", "line": 1, "whole_note": wn, "tokens": {"prediction": 3, "reference": 4, "overlap": 2}},
        {"status": "unscored", "id": "é\u2028\"", "line": 2, "reason": "empty prediction"},
        {"status": "unscored", "id": 7, "error": "boom", "whole_note": wn},
        {"id": "no-status", "whole_note": {"f1": 0.0}},
        {"status": "scored", "id": "neg0", "whole_note": {"f1": -0.0, "precision": 0.0}},
        {"status": "scored", "id": "nof1", "whole_note": {"precision": 0.5}},
        {"status": "scored", "id": "bare"},
        {"status": "scored", "id": "sec", "whole_note": {"f1": 0.3}, "sections": {"S": {"f1": 0.1}, "O": None}},
        {"status": "scored", "id": "secs-not-a-mapping", "whole_note": {"f1": 0.3}, "sections": ["S"]},
    ]
    for opts in (ReportOptions(), ReportOptions(min_f1=0.3), ReportOptions(min_f1=0.0), ReportOptions(min_f1=0.9, redact=True)):
        for rec in records:
            want = _case_row(rec, "freetext", opts)
            got = _freetext_row(rec, "freetext", opts)
            assert got == want and list(got) == list(want), (rec, opts.min_f1)
    # the buckets by hand: min_f1 0.3 → an F1 of 0.3 passes (not below), 2/3 passes, 0.0 fails, no F1 is unscored
    by_id = {str(r["id"]): _freetext_row(r, "freetext", ReportOptions(min_f1=0.3))["bucket"] for r in records}
    assert by_id == {"p0": "pass", "é\u2028\"": "unscored", "7": "unscored", "no-status": "fail", "neg0": "fail",
                     "nof1": "unscored", "bare": "unscored", "sec": "pass", "secs-not-a-mapping": "pass"}
