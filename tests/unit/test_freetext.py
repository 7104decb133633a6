"""Batch free-text scoring: the published Open-Scribe figures, bad input, and the parallel path.

Published figures: Open-Scribe ``eval/results/primock57.json`` and ``acibench.json`` (commit 3d5b333, see
examples/data/LICENSE-NOTES.md): PriMock57 macro whole-note F1 0.27861937781204515 / P 0.26603090932235796 /
R 0.3154757930748772 over 57 rows; ACI-Bench test1 0.4465338141844892 / 0.7094691126347685 / 0.3376314920821577 over
35 scored rows with 5 failed. Each row's ``expected_whole_note`` is upstream's per-row value.
"""

from __future__ import annotations

import json
import random
import re

import pytest

from conftest import EXAMPLES
from goldeval import InputError
from goldeval.pipeline.files import score_file, score_rows

PRIMOCK = EXAMPLES / "openscribe_primock57_predictions.jsonl"
ACI = EXAMPLES / "openscribe_acibench_predictions.jsonl"


@pytest.mark.parametrize(
    ("path", "n", "n_failed", "f1", "p", "r"),
    [
        (PRIMOCK, 57, 0, 0.27861937781204515, 0.26603090932235796, 0.3154757930748772),
        (ACI, 35, 5, 0.4465338141844892, 0.7094691126347685, 0.3376314920821577),
    ],
)
def test_published_open_scribe_figures(path, n, n_failed, f1, p, r):
    agg = score_file(path)["aggregate"]
    assert (agg["n"], agg["n_failed"]) == (n, n_failed)
    assert agg["whole_note_f1_mean"] == pytest.approx(f1, abs=1e-12)
    assert agg["whole_note_precision_mean"] == pytest.approx(p, abs=1e-12)
    assert agg["whole_note_recall_mean"] == pytest.approx(r, abs=1e-12)
    assert agg["tokenizer"] == "openscribe"


@pytest.mark.parametrize("path", [PRIMOCK, ACI])
def test_every_row_equals_its_published_value(path):
    expected = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row.get("expected_whole_note"):
            expected[row["id"]] = row["expected_whole_note"]
    got = {r["id"]: r["whole_note"] for r in score_file(path)["per_example"]}
    assert got.keys() == expected.keys()
    for rid, want in expected.items():
        for k in ("precision", "recall", "f1"):
            assert got[rid][k] == pytest.approx(want[k], abs=1e-12), (rid, k)


def test_failed_rows_are_listed_with_line_and_reason():
    failures = score_file(ACI)["failures"]
    assert [f["id"] for f in failures] == ["D2N123", "D2N124", "D2N125", "D2N126", "D2N127"]
    assert failures[0]["line"] == 36
    assert "field 'prediction' is null" in failures[0]["error"] and "429" in failures[0]["error"]


def test_bad_rows_are_counted_and_the_rest_still_scores(tmp_path):
    f = tmp_path / "p.jsonl"
    f.write_text(
        "\n".join(
            [
                '{"id": "a", "prediction": "x y", "reference": "x"}',  # P 1/2 R 1 F1 2/3
                "{not json",
                '{"prediction": "x", "reference": "x"}',  # no id
                '{"id": "b", "prediction": null, "reference": "x"}',
                '{"id": "c", "prediction": "x", "reference": 42}',
                '{"id": "a", "prediction": "x", "reference": "x"}',  # duplicate id
                "[1, 2]",
                '{"id": "d", "prediction": "x"}',  # reference missing
                "",
                '{"id": 7, "prediction": "x", "reference": "x"}',  # F1 1.0, integer id
            ]
        ),
        encoding="utf-8",
    )
    res = score_file(f)
    agg = res["aggregate"]
    assert (agg["n"], agg["n_failed"], agg["n_rows"]) == (2, 7, 9)
    assert agg["whole_note_f1_mean"] == pytest.approx((2 / 3 + 1.0) / 2)
    errors = {x["line"]: x["error"] for x in res["failures"]}
    assert "p.jsonl:2: not valid JSON" in errors[2]
    assert "field 'id' must be a non-empty string (or an integer), it is missing" in errors[3]
    assert "field 'prediction' is null" in errors[4]
    assert "field 'reference' must be a string or an object of sections, got 42. Fix the row or pass --reference-field" in errors[5]
    assert "id 'a' repeats line 1" in errors[6]
    assert "expected a JSON object, got [1, 2]" in errors[7]
    assert "field 'reference' is missing" in errors[8]
    assert [r["id"] for r in res["per_example"]] == ["a", "7"]


def test_unreadable_row_is_unscored_not_perfect(tmp_path):
    f = tmp_path / "p.jsonl"
    f.write_text('{"id": "zh", "prediction": "头痛", "reference": "头痛"}\n{"id": "en", "prediction": "a", "reference": "b"}\n', encoding="utf-8")
    res = score_file(f)
    assert res["aggregate"]["n"] == 1 and res["aggregate"]["whole_note_f1_mean"] == 0.0
    assert "tokenizer" in res["failures"][0]["error"] and "--tokenizer unicode" in res["failures"][0]["error"]
    res_u = score_file(f, tokenizer="unicode")
    assert res_u["aggregate"]["n"] == 2 and res_u["aggregate"]["tokenizer"] == "unicode"


def test_all_rows_failed_marks_means_undefined(tmp_path):
    f = tmp_path / "p.jsonl"
    f.write_text('{"id": "a", "prediction": null, "reference": "x"}\n', encoding="utf-8")
    agg = score_file(f)["aggregate"]
    assert agg["n"] == 0 and agg["whole_note_f1_mean"] is None  # null, as upstream run_eval.py writes it
    assert agg["undefined"]["whole_note_f1_mean"] == "no row could be scored"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "the file is empty"),
        (b"\n\n", "holds no rows"),
        (b'{"id": "a", "prediction": "caf\xe9", "reference": "x"}\n', r"p.jsonl:1: the file is not UTF-8 \(byte 0xe9"),
    ],
)
def test_unusable_files_raise_input_error(tmp_path, content, message):
    f = tmp_path / "p.jsonl"
    f.write_bytes(content)
    with pytest.raises(InputError, match=message):
        score_file(f)


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        score_file(tmp_path / "nope.jsonl")


def test_sections_on_real_aci_bench_gold(tmp_path):
    # Gold sections against themselves: every section with text scores 1.0; empty ones are counted, not averaged.
    path = EXAMPLES / "acibench_clinicalnlp_taskB_test1.jsonl"
    res = score_file(path, prediction_field="reference_sections", reference_field="reference_sections")
    agg = res["aggregate"]
    assert agg["n"] == 40 and agg["section_f1_mean"] == 1.0 and agg["whole_note_f1_mean"] == 1.0
    assert agg["sections"]["objective_results"]["n"] + agg["sections"]["objective_results"]["n_empty_both"] == 40
    # The pooled sections equal the flat note (upstream: joining the four sections gives `reference` exactly).
    flat = score_file(path, prediction_field="reference_sections", reference_field="reference")
    assert flat["aggregate"]["whole_note_f1_mean"] == 1.0


def test_parallel_equals_sequential(tmp_path):
    rows = [json.loads(line) for line in PRIMOCK.read_text(encoding="utf-8").splitlines()]
    f = tmp_path / "big.jsonl"
    with f.open("w", encoding="utf-8") as fh:
        for k in range(20):  # 1,140 rows: several chunks per worker
            for r in rows:
                fh.write(json.dumps({"id": f"{r['id']}-{k}", "prediction": r["prediction"], "reference": r["reference"]}) + "\n")
    one = score_file(f, workers=1)
    two = score_file(f, workers=2)
    assert one["per_example"] == two["per_example"]
    assert one["aggregate"]["whole_note_f1_mean"] == two["aggregate"]["whole_note_f1_mean"] == pytest.approx(0.27861937781204515, abs=1e-12)


def _lines(path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


@pytest.mark.parametrize("repeat_an_id", [False, True])
def test_parallel_workers_read_their_own_ranges_as_one_process_reads_the_file(tmp_path, repeat_an_id):
    # A pool's worker reads and decodes its own byte range of the file (engines/local.py, Span). Everything a line
    # reader must get right is placed on and around the 500-line boundaries the ranges are cut at: a byte-order mark
    # on line 1, blank lines (counted as lines, never as rows), a CRLF line (\r is not a line end), a line that is
    # not JSON, and a last line without its newline. With a repeated id the records are folded in this process
    # (the other path of local.run). Expected values: the published ACI-Bench figures (module docstring) for its 40
    # rows copied once, and every per-example entry and failure (with its line number) equal to one process's.
    aci, primock = _lines(ACI), _lines(PRIMOCK)
    body: list[bytes] = [b"\xef\xbb\xbf" + aci[0]] + aci[1:]
    for k in range(20):  # 1,140 more rows: two ranges of 500 lines and a shorter one
        body += [json.dumps({**json.loads(line), "id": f"p{k}-{i}"}).encode() + b"\n" for i, line in enumerate(primock)]
    body.insert(498, b"\n")
    body.insert(500, b"   \r\n")
    body.insert(501, b"{not json\n")
    crlf = json.loads(primock[3])
    body.insert(999, json.dumps({**crlf, "id": "crlf"}).encode() + b"\r\n")
    if repeat_an_id:
        body.insert(1000, json.dumps({**crlf, "id": "crlf"}).encode() + b"\n")
    body[-1] = body[-1].rstrip(b"\n")
    f = tmp_path / "mixed.jsonl"
    f.write_bytes(b"".join(body))
    one, two = score_file(f, workers=1), score_file(f, workers=2)
    assert two["input"]["workers"] == 2
    assert one["per_example"] == two["per_example"] and one["failures"] == two["failures"]
    assert one["aggregate"] == {**two["aggregate"], "elapsed_sec": one["aggregate"]["elapsed_sec"]}
    lines = [e["line"] for e in two["per_example"]] + [e["line"] for e in two["failures"]]
    n_rows = 40 + 20 * 57 + 2 + repeat_an_id  # the ACI rows, the PriMock copies, the CRLF row, the line not JSON, the repeat
    assert sorted(lines) == [n for n in range(1, len(body) + 1) if n not in (499, 501)] and len(lines) == n_rows
    assert [f["line"] for f in two["failures"] if "not json" in f["error"] or "JSON" in f["error"]][:1] == [502]
    aci_only = score_file(ACI, workers=1)["per_example"]
    assert two["per_example"][:35] == aci_only  # the BOM line reads as the plain file's first row
    agg = two["aggregate"]
    assert agg["n_failed"] == 5 + 1 + repeat_an_id and agg["n"] == 35 + 20 * 57 + 1


def test_score_rows_matches_score_file():
    rows = [json.loads(line) for line in PRIMOCK.read_text(encoding="utf-8").splitlines()]
    assert score_rows(rows)["aggregate"]["whole_note_f1_mean"] == score_file(PRIMOCK)["aggregate"]["whole_note_f1_mean"]


def _one_row_file(tmp_path, row: str):
    f = tmp_path / "p.jsonl"
    f.write_text(row + "\n", encoding="utf-8")
    return f


def test_mixed_flat_and_sectioned_rows_keep_the_unreadable_rule(tmp_path):
    # Found by a newcomer's try: a Chinese-only sectioned prediction against the same flat text scored a silent 1.0.
    for row in (
        '{"id": "m", "prediction": {"plan": "患者血压正常"}, "reference": "患者血压正常"}',
        '{"id": "m", "prediction": "患者血压正常", "reference": {"plan": "患者血压正常"}}',
    ):
        res = score_file(_one_row_file(tmp_path, row))
        assert res["aggregate"]["n"] == 0 and "--tokenizer unicode" in res["failures"][0]["error"]


def test_mixed_rows_refuse_bad_section_values(tmp_path):
    res = score_file(_one_row_file(tmp_path, '{"id": "m", "prediction": {"plan": 5, "a": "hello"}, "reference": "hello world"}'))
    assert res["aggregate"]["n_failed"] == 1
    assert "prediction.plan: a section must be a string" in res["failures"][0]["error"]


def test_nan_and_infinity_literals_do_not_fail_the_row(tmp_path):
    # Python's json.dump writes NaN/Infinity by default; such a row is read, not failed.
    res = score_file(_one_row_file(tmp_path, '{"id": "x", "prediction": "a b", "reference": "a", "score": NaN, "t": Infinity}'))
    assert res["aggregate"]["n"] == 1 and res["per_example"][0]["whole_note"]["recall"] == 1.0


def test_whitespace_id_is_refused(tmp_path):
    res = score_file(_one_row_file(tmp_path, '{"id": "  ", "prediction": "a", "reference": "a"}'))
    assert res["aggregate"]["n_failed"] == 1 and "field 'id' must be a non-empty string" in res["failures"][0]["error"]


@pytest.mark.parametrize("workers", [1, 2])
def test_blank_ids_are_refused_and_a_repeated_id_found_by_the_compiled_id_pass(tmp_path, workers):
    # The repeated-id pass reads token F1's ids in C (TokenF1.ids_as_text): two blank ids must still be refused as
    # blank (never as repeats of each other), and a real repeat must still be found, with the line it repeats.
    rows = ['{"id": "  ", "prediction": "a", "reference": "a"}', '{"id": "x", "prediction": "a b", "reference": "a"}',
            '{"id": "  ", "prediction": "a", "reference": "a"}', '{"id": "x", "prediction": "a", "reference": "a"}',
            '{"id": "y", "prediction": "a", "reference": "a b"}']
    f = tmp_path / "p.jsonl"
    f.write_text("\n".join(rows) * 1 + "\n", encoding="utf-8")
    res = score_file(f, workers=workers)
    errors = {e["line"]: e["error"] for e in res["failures"]}
    assert sorted(errors) == [1, 3, 4]
    assert "field 'id' must be a non-empty string" in errors[1] and "field 'id' must be a non-empty string" in errors[3]
    assert "line 2" in errors[4] and "x" in errors[4]
    # the two scored rows: "a b" vs "a" (P 1/2, R 1, F1 2/3) and "a" vs "a b" (P 1, R 1/2, F1 2/3)
    assert [(e["id"], e["whole_note"]["f1"]) for e in res["per_example"]] == [("x", pytest.approx(2 / 3)), ("y", pytest.approx(2 / 3))]


def test_partly_unreadable_text_is_scored_and_flagged(tmp_path):
    # "BP 120/80" vs "血压 120/80 正常": the rule reads [bp, 120/80] vs [120/80]: P 1/2, R 1, F1 2/3 —
    # the Chinese words are not read, so the row is flagged and counted.
    res = score_file(_one_row_file(tmp_path, '{"id": "x", "prediction": "BP 120/80", "reference": "血压 120/80 正常"}'))
    assert res["per_example"][0]["whole_note"]["f1"] == pytest.approx(2 / 3)
    assert res["per_example"][0]["unreadable"] == {"side": "reference", "char": "血"}
    assert res["aggregate"]["n_with_unreadable_text"] == 1


@pytest.mark.parametrize("workers", [0, -1, 1.5, True])
def test_bad_workers_is_refused(workers):
    with pytest.raises(InputError, match="workers: expected a whole number >= 1"):
        score_file(PRIMOCK, workers=workers)


def test_scoring_in_this_process_keeps_ctrl_c(tmp_path):
    # A one-worker run must not change this process's SIGINT handling (only pool workers ignore it).
    import signal

    before = signal.getsignal(signal.SIGINT)
    score_file(PRIMOCK, workers=1)
    assert signal.getsignal(signal.SIGINT) is before


class _PlainRecorder:
    """A recorder written to the documented protocol (``previous()``, ``record(case)``, ``finish(results)``), as a
    user of score_file(recorder=...) writes one: its record takes no ``status``."""

    def __init__(self):
        self.records, self.finished = [], None

    def previous(self):
        return {}

    def record(self, case):
        self.records.append(case)

    def finish(self, results):
        self.finished = results


def test_a_recorder_whose_record_takes_only_the_case_still_works(tmp_path):
    # break-fix: the scorer began calling record(case, status="scored"), which a recorder written to the documented
    # protocol (record(case)) refuses with TypeError. Expected (by hand): PriMock57's 57 rows recorded, each as
    # {"status": "scored", **its per_example entry}, and finish called with the results.
    rec = _PlainRecorder()
    res = score_file(PRIMOCK, recorder=rec)
    assert rec.records == [{"status": "scored", **e} for e in res["per_example"]] and len(rec.records) == 57
    assert rec.finished is res


def _split_word_definition(text: str):
    """split_word as it was defined up to commit 6578c0b (every ``\\w+`` word of the text, in order): the reference
    the faster split_word (only the words around non-ASCII characters) is held to."""
    if text.isascii():
        return None
    for m in re.finditer(r"\w+", text):
        w = m.group()
        if not w.isascii() and any(c.isascii() and c.isalnum() for c in w) and any(not c.isascii() and c.isalnum() for c in w):
            return w
    return None


def test_split_word_finds_the_first_word_the_definition_finds():
    from goldeval.freetext.tokens import split_word

    # a word character of `re` (\w) is exactly one with isalnum() or "_", at every code point: the rule split_word
    # grows a word by
    assert [cp for cp in range(0x110000) if (re.fullmatch(r"\w", chr(cp)) is not None) != (chr(cp).isalnum() or chr(cp) == "_")] == []
    # by hand: "Café" is split (caf), a word wholly in another script is not, the first split word is returned
    assert split_word("the Café and résumé") == "Café"
    assert split_word("東京 ° 5µg") == "5µg"
    assert split_word("東京 ° µ ±5") is None and split_word("plain ascii") is None
    # random texts of ASCII letters, digits, joiners, "_" and non-ASCII letters, digits, marks, signs: the same
    rnd = random.Random(1)
    alphabet = [*"ab1_ .-'/", "é", "°", "µ", "東", "٣", "Ⅻ", "\u0301", "ß", "\u212a", "İ", "²", "½", "\u200d", "𝔘", "a\u0300"]
    for _ in range(50_000):
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randrange(0, 14)))
        assert split_word(text) == _split_word_definition(text), text
