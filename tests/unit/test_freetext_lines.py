"""Token F1's compiled reader-scorer of plain JSONL rows (``_fast.f1_lines``, :meth:`TokenF1.line_kernel`) against the
Python path it stands in for (``decode_line`` + ``score_row``, the definition), byte for byte.

Expected values come from the Python path itself (the definition), and for the published figures from Open-Scribe's
ACI-Bench / PriMock57 means (tests/unit/test_freetext.py). A line the kernel is not sure of must be left to Python
(the kernel stops there), so each tricky row is checked both ways: scored by the kernel with the Python bytes, or
left to Python, as this file says for each row.
"""

from __future__ import annotations

import json
import os
import random
import re

import orjson
import pytest
from click.testing import CliRunner

from conftest import EXAMPLES
from goldeval.cli import main
from goldeval.freetext.scorer import FreeTextConfig, TokenF1, score_row
from goldeval.freetext.tokens import OPENSCRIBE
from goldeval.io.reading import Row, decode_line
from goldeval.scoring.sums import ExactSum

_fast = pytest.importorskip("goldeval._fast")

ACI = EXAMPLES / "openscribe_acibench_predictions.jsonl"
PRIMOCK = EXAMPLES / "openscribe_primock57_predictions.jsonl"

#: (line bytes, True when the kernel scores it itself, False when it must leave it to Python)
TRICKY: list[tuple[bytes, bool]] = [
    (b'{"id": "a", "prediction": "The BP 138/86 was well-controlled, Hb. 7.1", "reference": "bp 138/86 WELL-controlled hb 7.1"}\n', True),
    (b'{"id":"crlf","prediction":"a b c","reference":"a b"}\r\n', True),
    (b'  \t{"reference":"x y","id":"order","prediction":"y x x"}  \n', True),  # fields in another order, white space
    (b'{"id": "esc", "prediction": "a\\nb\\tc\\"d\\\\e\\/f\\u0041\\u0000g", "reference": "A B C D E F G"}\n', True),
    (b'{"id": "a\\"q\\\\\\u0001", "prediction": "x", "reference": "x"}\n', True),  # an id with escapes orjson writes again
    (b'{"id": 5, "prediction": "x", "reference": "x y"}\n', True),  # a number as id: its text
    (b'{"id": -12, "prediction": "x", "reference": "x y"}\n', True),
    (b'{"id": 0, "prediction": "x", "reference": "x y"}\n', True),
    (b'{"id": "both", "prediction": "", "reference": ""}\n', True),  # both empty: 1.0 by convention
    (b'{"id": "punct", "prediction": "...", "reference": "-- !!"}\n', True),  # no tokens on either side: 1.0
    (b'{"id": "one", "prediction": "", "reference": "a"}\n', True),  # one empty: 0.0
    (b'{"id": "none", "prediction": "a", "reference": "b"}\n', True),  # no overlap: 0.0
    (b'{"id": "other", "prediction": "a", "reference": "a", "meta": {"k": [1, 2.5e-3, true, false, null, "\\u00e9"]}, "n": -0.0}\n', True),
    (b'{"id": "dupother", "x": 1, "x": 2, "prediction": "a", "reference": "a"}\n', True),
    (b'{"id": "nan", "prediction": "a", "reference": "a", "s": NaN}\n', False),  # NaN literal: lenient Python reading
    (b'{"id": "big", "prediction": "a", "reference": "a", "s": 1e400}\n', True),  # a valid number the row does not use
    (b'{"id": "dup", "prediction": "a", "prediction": "b", "reference": "b"}\n', False),  # a field twice
    (b'{"id": "x", "id": "y", "prediction": "a", "reference": "b"}\n', False),
    (b'{"id": null, "prediction": "a", "reference": "a"}\n', False),
    (b'{"id": "  ", "prediction": "a", "reference": "a"}\n', False),  # blank id: refused by Python
    (b'{"id": "", "prediction": "a", "reference": "a"}\n', False),
    (b'{"id": -0, "prediction": "a", "reference": "a"}\n', False),  # -0 is the id "0"
    (b'{"id": 1234567890123456789012, "prediction": "a", "reference": "a"}\n', False),  # past 64 bits
    (b'{"id": 1.5, "prediction": "a", "reference": "a"}\n', False),
    (b'{"id": true, "prediction": "a", "reference": "a"}\n', False),
    (b'{"id": "a,b", "prediction": "a", "reference": "a"}\n', False),  # a comma: recorded as a row, not in a block
    (b'{"id": "nullish", "prediction": "a", "reference": "a"}\n', False),  # "null" in the record's JSON: likewise
    (b'{"id": "n", "prediction": null, "reference": "a"}\n', False),
    (b'{"id": "n", "prediction": "a", "reference": null, "error": "timeout"}\n', False),
    (b'{"id": "n", "prediction": 5, "reference": "a"}\n', False),
    (b'{"id": "n", "reference": "a"}\n', False),  # missing field
    (b'{"id": "s", "prediction": {"plan": "a"}, "reference": {"plan": "a b"}}\n', False),  # sections
    (b'{"id": "u", "prediction": "caf\xc3\xa9 au lait", "reference": "cafe au lait"}\n', False),  # non-ASCII
    (b'{"id": "u", "prediction": "caf\\u00e9", "reference": "cafe"}\n', False),
    (b'{"id": "u", "prediction": "\\u212a", "reference": "k"}\n', False),  # KELVIN SIGN lowers to k
    (b'{"id": "u", "prediction": "\\ud83d\\ude00 a", "reference": "a"}\n', False),  # a surrogate pair
    (b'{"id": "u", "prediction": "\\ud800 a", "reference": "a"}\n', False),  # a lone surrogate
    (b'{"id": "\\u00e9", "prediction": "a", "reference": "a"}\n', False),
    (b'{"id": "j", "prediction": "a", "reference": "a",}\n', False),  # invalid JSON
    (b'{"id": "j", "prediction": "a", "reference": "a"} x\n', False),
    (b'{"id": "j", "prediction": "a\tb", "reference": "a"}\n', False),  # a raw control character in a string
    (b'{"id": "j", "prediction": "a", "reference": "a"\n', False),
    (b'["id", "prediction"]\n', False),
    (b'{}\n', False),
    (b'\xef\xbb\xbf{"id": "bom", "prediction": "a", "reference": "a"}\n', False),  # a BOM past line 1 is not JSON
    (b'{"id": "deep", "prediction": "a", "reference": "a", "d": ' + b"[" * 70 + b"]" * 70 + b"}\n", False),
    (b'{"id": "deepok", "prediction": "a", "reference": "a", "d": ' + b"[" * 10 + b"]" * 10 + b"}\n", True),
]


def _python(line: int, raw: bytes, cfg: FreeTextConfig | None = None) -> dict:
    cfg = cfg or FreeTextConfig()
    item = decode_line(raw, line, "f.jsonl", lenient=True)
    assert type(item) is Row, item
    return score_row(item.data, line, cfg, OPENSCRIBE, "f.jsonl")


def _kernel():
    kernel = TokenF1().line_kernel({"id_field": "id", "prediction_field": "prediction", "reference_field": "reference",
                                    "tokenizer": "openscribe"})
    assert kernel is not None
    return kernel


@pytest.mark.parametrize("raw,plain", TRICKY)
def test_each_tricky_line_is_scored_as_python_scores_it_or_left_to_python(raw, plain):
    kernel = _kernel()
    pos, line, n, body, records, ids, sums = kernel(raw, 0, 7, 3)
    assert (pos, line, n) == ((len(raw), 8, 1) if plain else (0, 7, 0))
    if not plain:
        assert body == records == ids == b"" and sums == ([], [], [])
        return
    rec = _python(7, raw)
    assert rec["status"] == "scored" and "unreadable" not in rec
    data = orjson.dumps(rec)
    assert records == data
    assert body == b"{" + data[len(b'{"status":"scored",'):] + b"\n"
    assert body == orjson.dumps({k: v for k, v in rec.items() if k != "status"}) + b"\n"
    assert ids == orjson.dumps(rec["id"])
    for name, ratios in zip(("f1", "precision", "recall"), sums):
        by_kernel, by_python = ExactSum(), ExactSum()
        by_kernel.add_ratios(1, ratios)
        by_python.add_float(rec["whole_note"][name])
        assert by_kernel == by_python and by_kernel.mean() == rec["whole_note"][name]


def test_a_stretch_stops_at_the_first_line_left_to_python_and_resumes_after_it():
    # The tricky lines in one block, with blank lines (ASCII white space only, \v and \f too: bytes.isspace) between
    # them and a last line without its newline: the kernel skips and counts the blank ones, stops at each line it
    # leaves (its start and number), and resumes after it.
    kernel = _kernel()
    blanks = [b"\n", b"  \t\r\n", b"\x0b\x0c\n"]
    parts, numbers = [], []
    for i, (raw, _) in enumerate(TRICKY):
        parts.append(raw)
        numbers.append(len(parts))
        parts.append(blanks[i % 3])
    block = b"".join(parts)[:-1] + b"\n" + TRICKY[0][0].rstrip(b"\n")  # (the last line without a newline)
    pos, line, seen, where = 0, 1, [], []
    while pos < len(block):
        pos, line, n, body, records, _, _ = kernel(block, pos, line, 3)
        assert body.count(b"\n") == n and (records.count(b"\n") + 1 if n else 0) == n
        seen += [True] * n
        if pos < len(block):
            seen.append(False)
            where.append(line)
            end = block.find(b"\n", pos) + 1 or len(block)
            assert block[pos:end] == dict(zip(numbers, (r for r, _ in TRICKY)))[line]  # the line left, by number
            pos, line = end, line + 1
    assert seen == [plain for _, plain in TRICKY] + [True]
    assert where == [numbers[i] for i, (_, plain) in enumerate(TRICKY) if not plain]
    assert line == len(parts) + 2  # (past the last line: the parts, then the one without a newline)


def test_scores_are_written_as_orjson_writes_them_down_to_tiny_values():
    # Precision, recall and F1 of counts chosen to give every notation orjson uses for a float in [0, 1]: decimal
    # ("0.6"), decimal with leading zeros from 1e-5 on ("0.000024987..."), and d.ddde-N below (an overlap of 1
    # token in 400,001: 2.4999...e-6), on very long lines; plus 400 random counts. Expected: the Python path's bytes.
    rnd = random.Random(31)
    counts = [(400_001, 1, 1), (1, 400_001, 1), (40_000, 3, 3), (99_999, 2, 1), (5, 3, 3), (7, 7, 7)]
    counts += [(a, b, rnd.randint(1, min(a, b))) for a, b in ((rnd.randint(1, 3000), rnd.randint(1, 3000)) for _ in range(400))]
    lines = []
    for k, (n_pred, n_ref, ov) in enumerate(counts, start=1):
        pred = "y " * ov + "p " * (n_pred - ov)
        ref = "Y " * ov + "r " * (n_ref - ov)
        lines.append((k, orjson.dumps({"id": f"c{k}", "prediction": pred, "reference": ref}) + b"\n"))
    block = b"".join(raw for _, raw in lines)
    pos, _, n, body, records, _, _ = _kernel()(block, 0, 1, 3)
    assert pos == len(block) and n == len(lines)
    want = [orjson.dumps(_python(k, raw)) for k, raw in lines]
    assert records.split(b"\n") == want
    assert b"e-6" in records and b"0.0000" in records  # both notations occur


def _mixed_file(tmp_path):
    """1,300 rows over three 500-line chunks: the ACI-Bench and PriMock57 rows under new ids (the published means
    as anchors), the tricky rows of this file among them (the BOM only on line 1), blank lines, a CRLF line."""
    aci = ACI.read_bytes().splitlines()
    primock = PRIMOCK.read_bytes().splitlines()
    rows: list[bytes] = []
    for k in range(13):
        for i, r in enumerate(aci + primock):
            row = json.loads(r)
            row["id"] = f"c{k}-{i}" if (k + i) % 7 else 1_000_000 + k * 1000 + i
            rows.append(json.dumps(row, ensure_ascii=bool(i % 2)).encode() + (b"\r\n" if i == 9 else b"\n"))
    for j, (raw, _) in enumerate(TRICKY):  # each tricky row once, under its own id where it has one
        if raw.startswith(b'{"id": -0,'):  # (the id "0" again: a repeated id, which turns the kernel off)
            continue
        text = raw.replace(b'"id": "', b'"id": "t%d-' % j, 1).replace(b'"id":"', b'"id":"t%d-' % j, 1)
        rows.insert(37 * j + 3, text)
    rows.insert(499, b"   \n")
    rows.insert(700, b"\n")
    return rows


@pytest.mark.parametrize("store", [False, True])
def test_cli_score_is_the_same_to_the_byte_with_and_without_the_kernel(tmp_path, monkeypatch, store):
    """`goldeval score --out` (JSON and JSONL) and, with the store on, every stored case row and block, read back:
    the same with the kernel at 1 and 2 workers as on the Python path (line_kernel off: what runs without the C
    build) at 1 worker. No id repeats (a repeat turns folding, and so the kernel, off); at 1 worker the kernel is
    seen to score most rows."""
    from goldeval.runs.store import RunStore

    rows = _mixed_file(tmp_path)
    body = b"\xef\xbb\xbf" + b"".join(rows)
    src = tmp_path / "mixed.jsonl"
    src.write_bytes(body)
    outs: dict[str, tuple[bytes, bytes, list | None]] = {}
    for arm in ("python", "kernel1", "kernel2"):
        with monkeypatch.context() as m:
            if arm == "python":
                m.setattr(TokenF1, "line_kernel", lambda self, config: None)
            if arm == "kernel1":
                real = TokenF1.line_kernel
                by_kernel: list[int] = []

                def counting(self, config, real=real, by_kernel=by_kernel):
                    kernel = real(self, config)

                    def count(block, pos, line, emit):
                        got = kernel(block, pos, line, emit)
                        by_kernel.append(got[2])
                        return got

                    return count

                m.setattr(TokenF1, "line_kernel", counting)
            workers = "2" if arm == "kernel2" else "1"
            got = []
            for fmt in ("json", "jsonl"):
                out = tmp_path / f"{arm}.{fmt}"
                db = tmp_path / f"{arm}-{fmt}.db"
                args = ["score", str(src), "--workers", workers, "--out", str(out), "--out-format", fmt, "-q"]
                args += ["--store", str(db)] if store else ["--no-store"]
                res = CliRunner().invoke(main, args)
                assert res.exit_code == 0, res.output
                got.append(out.read_bytes())
            cases = None
            if store:
                with RunStore(str(tmp_path / f"{arm}-jsonl.db")) as st:
                    (run,) = st.list_runs()
                    cases = list(st.stored_cases(run["id"]))
                    assert run["n_recorded"] == len(cases)
                    if arm == "kernel2":
                        assert st.db.execute("SELECT count(*) FROM case_blocks").fetchone()[0] >= 1
            outs[arm] = (got[0], got[1], cases)
            if arm == "kernel1":
                assert sum(by_kernel) > 2 * 900  # (two runs, --out json and jsonl; 1 in 4 rows has non-ASCII text)
    vary = re.compile(rb'"elapsed_sec": ?[0-9.e-]+|"workers": ?[12]|"run": ?\{[^{}]*\}')
    ref = outs["python"]
    for arm in ("kernel1", "kernel2"):
        assert vary.sub(b"", outs[arm][0]) == vary.sub(b"", ref[0])
        assert vary.sub(b"", outs[arm][1]) == vary.sub(b"", ref[1])
        if store:
            assert outs[arm][2] == ref[2] and len(ref[2]) > 1250  # (rows without a usable id are not recorded)
    doc = json.loads(ref[0])
    lines = {e["line"] for e in doc["per_example"]} | {f["line"] for f in doc["failures"]}
    assert len(lines) == doc["aggregate"]["n_rows"] == len(rows) - 2  # every row once, blank lines not rows
    assert any("is not JSON" in f["error"] or "JSON" in f["error"] for f in doc["failures"])
    assert doc["aggregate"]["n_with_unreadable_text"] >= 0 and doc["aggregate"]["n_failed"] > 13 * 5


def test_cli_score_with_the_kernel_keeps_the_published_means(tmp_path):
    # Open-Scribe's published macro F1 of ACI-Bench (0.4465338141844892) and PriMock57 (0.27861937781204515), read
    # through the kernel (their rows are plain, apart from the failed ones and a few non-ASCII texts left to Python),
    # at 1 and 2 workers, the result file streamed (keep_cases off: the kernel's path).
    for path, mean in ((ACI, 0.4465338141844892), (PRIMOCK, 0.27861937781204515)):
        for workers in ("1", "2"):
            out = tmp_path / f"{path.stem}-{workers}.json"
            res = CliRunner().invoke(main, ["score", str(path), "--workers", workers, "--out", str(out), "--no-store", "-q"])
            assert res.exit_code == 0, res.output
            assert json.loads(out.read_text())["aggregate"]["whole_note_f1_mean"] == mean


def test_the_kernel_is_used_where_it_applies_and_not_elsewhere():
    cfg = {"id_field": "id", "prediction_field": "prediction", "reference_field": "reference", "tokenizer": "openscribe"}
    assert TokenF1().line_kernel(cfg) is not None
    assert TokenF1().line_kernel({**cfg, "tokenizer": "unicode"}) is None

    class Other(TokenF1):
        def score_batch(self, rows, config):  # a subclass scoring its own way is never short-cut
            return super().score_batch(rows, config)

    assert Other().line_kernel(cfg) is None


def test_kernel_reads_the_fields_the_config_names():
    kernel = TokenF1().line_kernel({"id_field": "key", "prediction_field": "out", "reference_field": "gold",
                                    "tokenizer": "openscribe"})
    raw = b'{"key": "k1", "out": "a b", "gold": "a", "id": 3, "prediction": 5}\n'
    pos, _, n, _, records, ids, _ = kernel(raw, 0, 1, 2)
    assert (pos, n, ids) == (len(raw), 1, b'"k1"')
    cfg = FreeTextConfig("out", "gold", "key")
    assert records == orjson.dumps(_python(1, raw, cfg))
    assert kernel(b'{"id": "k1", "prediction": "a", "reference": "a"}\n', 0, 1, 2)[:3] == (0, 1, 0)  # fields missing


def test_add_ratios_equals_adding_each_float():
    # ExactSum.add_ratios with the numerators of each value summed by denominator holds the same exact sum as
    # add_float of each value (statistics.mean's definition); the empty call changes nothing.
    values = [0.5, 0.25, 0.75, 1.0, 0.0, 1 / 3, 2 / 3, 0.1]
    a, b = ExactSum(), ExactSum()
    for x in values:
        a.add_float(x)
    by_d: dict[int, int] = {}
    for x in values:
        num, den = x.as_integer_ratio()
        by_d[den] = by_d.get(den, 0) + num
    b.add_ratios(len(values), by_d.items())
    assert a == b and a.mean() == b.mean()
    c = ExactSum()
    c.add_ratios(0, [])
    assert c.count == 0 and c.mean() is None and c == ExactSum()
    assert b != a.__class__([0.5])  # (fires: a different sum is not equal)


def test_random_texts_tokenize_as_the_regular_expression_does():
    # The kernel finds tokens 64 bytes at a time by bit masks and copies 16 plain bytes at a time: 3,000 random texts
    # over an alphabet of letters (both cases), digits, the four joiners, separators and escapes, of every length
    # from 0 to 300 bytes (across the 16- and 64-byte blocks), each as prediction and reference. Expected: the Python
    # path (the openscribe regular expression and collections.Counter), record for record.
    rnd = random.Random(2031)
    alphabet = ["a", "b", "Z", "0", "9", "x", ".", "'", "/", "-", " ", ",", "\\n", "\\t", '\\"', "\\\\", "\\u0041", "\\u002e", "_"]
    lines = []
    for k in range(1, 3001):
        texts = []
        for _ in range(2):
            size = rnd.randint(0, 300) if k % 10 else rnd.choice([15, 16, 17, 63, 64, 65, 127, 128, 129])
            pieces, n = [], 0
            while n < size:
                p = rnd.choice(alphabet) if rnd.random() < 0.5 else rnd.choice(alphabet[:6]) * rnd.randint(1, 9)
                pieces.append(p)
                n += len(p)
            texts.append("".join(pieces))
        lines.append((k, b'{"id":"r%d","prediction":"%s","reference":"%s"}\n' % (k, texts[0].encode(), texts[1].encode())))
    block = b"".join(raw for _, raw in lines)
    pos, _, n, _, records, _, _ = _kernel()(block, 0, 1, 2)
    assert pos == len(block) and n == len(lines)
    assert records.split(b"\n") == [orjson.dumps(_python(k, raw)) for k, raw in lines]


@pytest.mark.parametrize("workers", [1, 2])
def test_entries_one_at_a_time_are_the_same_with_the_kernel(tmp_path, monkeypatch, workers):
    # local.run's on_example_json sink takes one entry's JSON a call (not a chunk's body): a kernel's stretch is cut
    # into its entries. Expected: the Python path's entries (line_kernel off), in order, and the same aggregate.
    from goldeval.engines.local import run

    rows = _mixed_file(tmp_path)
    src = tmp_path / "rows.jsonl"
    src.write_bytes(b"".join(rows))
    scorer = TokenF1()
    config = scorer.configure(source="rows.jsonl")
    got = {}
    for arm in ("python", "kernel"):
        with monkeypatch.context() as m:
            if arm == "python":
                m.setattr(TokenF1, "line_kernel", lambda self, config: None)
            entries: list[bytes] = []
            res = run(scorer, src, config, workers=1 if arm == "python" else workers, on_example_json=entries.append,
                      keep_cases=False)
            res["aggregate"].pop("elapsed_sec")
            got[arm] = (entries, res["aggregate"], res["failures"], res["per_example"])
    assert got["kernel"] == got["python"]
    assert len(got["python"][0]) == got["python"][1]["n"] > 1000


def test_byte_ranges_cover_the_file_line_by_line(tmp_path):
    # The chunks a pool's workers read (engines/local.py _range_chunks): cut at every 500th line. (The line kernel's
    # chunks are cut in the first pass instead: _Spans, tested below.) They cover the file in order, byte for byte, each starting on a line whose number it carries, with the lines
    # of its bytes counted; a last line without a newline counts. Rows of 20 to 2,000 bytes, 9 MB.
    from goldeval.engines import local

    rnd = random.Random(5)
    lines = [b'{"id":"r%d","t":"%s"}\n' % (i, b"x" * rnd.choice([20, 60, 200, 2000])) for i in range(12_000)]
    lines[-1] = lines[-1].rstrip(b"\n")
    data = b"".join(lines)
    f = tmp_path / "r.jsonl"
    f.write_bytes(data)
    spans = list(local._range_chunks(f))
    assert b"".join(data[s.offset:s.offset + s.length] for s in spans) == data
    line = 1
    for s in spans:
        piece = data[s.offset:s.offset + s.length]
        assert s.first_line == line and s.n_lines == piece.count(b"\n") + (0 if piece.endswith(b"\n") else 1)
        assert s.offset == 0 or data[s.offset - 1:s.offset] == b"\n"
        line += s.n_lines
    assert line - 1 == len(lines)
    sizes = [s.n_lines for s in spans]
    assert max(sizes) <= 500 and len(spans) >= len(lines) // 6000


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: every automatic choice is one process")
def test_automatic_workers_are_one_thread_where_the_line_kernel_reads_short_rows(tmp_path):
    """`goldeval score` without --workers on a file past PARALLEL_MIN_ROWS of short rows (~150 bytes): one thread
    where the compiled line kernel scores the plain rows (openscribe), measured faster than two (benchmarks/README.md,
    "Issue 31 item 2, two workers"); every core where it does not (the unicode rule: no kernel); an explicit
    --workers 2 is obeyed. The numbers are the same in all three (the worker count is an implementation choice, never
    a result). Long rows: the next test."""
    from goldeval.engines.local import PARALLEL_MIN_ROWS

    fast = pytest.importorskip("goldeval._fast", reason="no C build: no line kernel, every file goes to a pool")
    if not hasattr(fast, "f1_lines"):
        pytest.skip("this C build has no line kernel")

    f = tmp_path / "rows.jsonl"
    rng = random.Random(3)
    words = ["bp", "138/86", "chest", "pain", "no", "fever", "well-controlled", "7.1"]
    with open(f, "w") as fh:
        for i in range(PARALLEL_MIN_ROWS + 500):
            fh.write(json.dumps({"id": f"r{i}", "prediction": " ".join(rng.choices(words, k=6)),
                                 "reference": " ".join(rng.choices(words, k=6))}) + "\n")

    def run(*extra: str) -> dict:
        out = tmp_path / f"out{len(list(tmp_path.iterdir()))}.json"
        r = CliRunner().invoke(main, ["score", str(f), "--no-store", "-q", "--out", str(out), *extra])
        assert r.exit_code == 0, r.output
        return orjson.loads(out.read_bytes())

    auto, forced, unicode_auto = run(), run("--workers", "2"), run("--tokenizer", "unicode")
    assert auto["input"]["workers"] == 1
    assert forced["input"]["workers"] == 2
    assert unicode_auto["input"]["workers"] == os.cpu_count()
    assert auto["per_example"] == forced["per_example"]
    assert {k: v for k, v in auto["aggregate"].items() if k != "elapsed_sec"} == \
        {k: v for k, v in forced["aggregate"].items() if k != "elapsed_sec"}


# ---------------------------------------------------------------------------------------------------------------
# issue 31 item 2: the first pass's chunks, the kernel in threads, the sha256 beside them


@pytest.mark.parametrize("hash_here", [True, False])
def test_first_pass_chunks_cover_the_file_line_by_line(tmp_path, monkeypatch, hash_here):
    # engines/local.py _Spans: the chunks the kernel scores are cut from the first pass's blocks (no other read looks
    # for line ends). They cover the file in order, byte for byte (a BOM on line 1, CRLF, blank lines, non-ASCII and
    # invalid rows, a last line without a newline), each starting on the line whose number it carries, its lines
    # counted as bytes.count(b"\n") counts them; closed at _KERNEL_ROWS lines or _CHUNK_BYTES bytes (both made small
    # here). The sha256 is the file's (hashlib over the bytes, BOM included) or None when taken elsewhere.
    import hashlib
    from pathlib import Path

    import goldeval.io.ids as ids
    from goldeval.engines import local

    monkeypatch.setattr(ids, "SCAN_BLOCK", 700)
    monkeypatch.setattr(local, "_KERNEL_ROWS", 40)
    monkeypatch.setattr(local, "_CHUNK_BYTES", 9000)
    rows = _mixed_file(tmp_path)
    data = b"\xef\xbb\xbf" + b"".join(rows)
    data = data.rstrip(b"\n")  # (the last row's newline dropped)
    f = tmp_path / "m.jsonl"
    f.write_bytes(data)
    sc = TokenF1()
    total, sha, repeated, spans = local._first_pass(Path(f), sc, "id", "m.jsonl", True, hash_here=hash_here)
    assert total == data.count(b"\n") + 1 and repeated == set()
    assert sha == (hashlib.sha256(data).hexdigest() if hash_here else None)
    assert b"".join(data[s.offset:s.offset + s.length] for s in spans) == data
    line = 1
    for s in spans:
        piece = data[s.offset:s.offset + s.length]
        assert s.first_line == line and s.n_lines == piece.count(b"\n") + (0 if piece.endswith(b"\n") else 1)
        assert s.offset == 0 or data[s.offset - 1:s.offset] == b"\n"
        line += s.n_lines
    assert line - 1 == total
    # each chunk closes once past a limit: under 40 lines and 9,000 bytes before its last block (~700 bytes + a line)
    assert all(s.n_lines < 40 + 40 and s.length < 9000 + 700 + 20_000 for s in spans) and len(spans) > 20
    # what a chunk reads is the span's bytes and first line, the BOM dropped on line 1 only
    blocks = list(local._span_blocks(Path(f), spans))
    expected = [(data[s.offset:s.offset + s.length], s.first_line) for s in spans]
    expected[0] = (expected[0][0].removeprefix(b"\xef\xbb\xbf"), 1)
    assert blocks == expected and blocks[0][0].startswith(rows[0][:5])


def test_the_file_hash_thread_gives_the_sha256_or_the_reading_error(tmp_path):
    import hashlib

    from goldeval.engines.local import _FileHash

    f = tmp_path / "x.bin"
    f.write_bytes(bytes(range(256)) * 9000)  # 2.3 MB: several reads of 1 MiB
    h = _FileHash(f)
    h.start()
    assert h.result() == hashlib.sha256(f.read_bytes()).hexdigest()
    gone = _FileHash(tmp_path / "missing.jsonl")
    gone.start()
    with pytest.raises(FileNotFoundError):
        gone.result()
    stopped = _FileHash(f)  # stopped (the first pass failed): it ends, and gives no digest
    stopped.stop()
    stopped.start()
    stopped.join()
    with pytest.raises(RuntimeError, match="stopped"):
        stopped.result()


def test_a_file_that_is_not_utf8_fails_as_before_at_two_workers(tmp_path):
    # the first pass's error (no line of the file is UTF-8), with the sha256 thread started beside it: the same
    # message at 1 and 2 workers, naming line 1, and the hash thread ended
    import threading

    f = tmp_path / "latin1.jsonl"
    f.write_bytes(b'{"id": "a", "prediction": "caf\xe9", "reference": "x"}\n' * 3000)
    outs = []
    for workers in ("1", "2"):
        r = CliRunner().invoke(main, ["score", str(f), "--workers", workers, "--no-store", "-q"])
        assert r.exit_code != 0
        outs.append(r.output)
    assert outs[0] == outs[1] and "not UTF-8" in outs[0] and ":1:" in outs[0]
    for t in threading.enumerate():
        if t.name == "goldeval-sha256":
            t.join(10)
            assert not t.is_alive()


def test_the_kernel_gives_the_same_bytes_from_many_threads_at_once():
    # f1_lines reads, decodes and counts without the GIL and writes with it (the shortest-digits cache is shared):
    # 4 threads scoring 12 blocks each, all at once, give exactly what one thread gives for each block.
    from concurrent.futures import ThreadPoolExecutor

    rnd = random.Random(31)
    words = ["bp", "138/86", "chest", "pain", "no", "fever", "well-controlled", "7.1", "pt's", "a.b.c"]
    blocks = []
    for b in range(48):
        rows = [orjson.dumps({"id": f"b{b}-{k}", "prediction": " ".join(rnd.choices(words, k=rnd.randrange(0, 400))),
                              "reference": " ".join(rnd.choices(words, k=rnd.randrange(1, 300)))}) + b"\n"
                for k in range(60)]
        rows.insert(30, b'{"id": "left", "prediction": "caf\xc3\xa9", "reference": "x"}\n')  # left to Python
        blocks.append(b"".join(rows))
    kernel = _kernel()

    def all_of(block: bytes) -> list[tuple]:
        out, pos, line = [], 0, 1
        while pos < len(block):
            got = kernel(block, pos, line, 3)
            out.append(got)
            pos, line = got[0], got[1]
            if pos < len(block):  # skip the line left to Python
                pos, line = block.index(b"\n", pos) + 1, line + 1
        return out

    alone = [all_of(b) for b in blocks]
    assert all(len(a) == 2 and a[0][2] == 30 and a[1][2] == 30 for a in alone)
    with ThreadPoolExecutor(4) as pool:
        for _ in range(3):
            assert list(pool.map(all_of, blocks)) == alone


def _long_or_short_file(tmp_path, n: int, long: bool, repeat: int | None = None):
    rng = random.Random(7)
    words = ["bp", "138/86", "chest", "pain", "no", "fever", "well-controlled", "7.1"]
    k = 200 if long else 6
    f = tmp_path / f"rows_{'long' if long else 'short'}_{n}.jsonl"
    with open(f, "w") as fh:
        for i in range(n):
            rid = f"r{repeat if repeat is not None and i == n - 1 else i}"
            fh.write(json.dumps({"id": rid, "prediction": " ".join(rng.choices(words, k=k)),
                                 "reference": " ".join(rng.choices(words, k=k))}) + "\n")
    return f


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: workers are capped at 1")
def test_two_workers_score_in_threads_the_same_bytes_as_one(tmp_path, monkeypatch):
    # --workers 2 where the kernel applies: the chunks are scored in threads of this process (no pool of processes
    # is started) and the results file is the same as at 1 worker and on the Python path, the sha256 included; small
    # chunks (40 lines) so that many are in flight. A repeated id turns folding and so the kernel off: then the
    # pool of processes scores it, as before, with the same numbers as one worker.
    import goldeval.io.ids as ids
    from goldeval.engines import local

    monkeypatch.setattr(ids, "SCAN_BLOCK", 4000)
    monkeypatch.setattr(local, "_KERNEL_ROWS", 40)
    rows = _mixed_file(tmp_path)
    f = tmp_path / "mixed.jsonl"
    f.write_bytes(b"\xef\xbb\xbf" + b"".join(rows))
    calls: dict[str, int] = {"threads": 0, "pool": 0}
    real_threads, real_pool = local._score_in_threads, local._score_in_pool

    def threads(*a, **k):
        calls["threads"] += 1
        return real_threads(*a, **k)

    def pool(*a, **k):
        calls["pool"] += 1
        return real_pool(*a, **k)

    monkeypatch.setattr(local, "_score_in_threads", threads)
    monkeypatch.setattr(local, "_score_in_pool", pool)

    def score(path, workers: str, python: bool = False) -> bytes:
        out = tmp_path / "out.json"
        with monkeypatch.context() as m:
            if python:
                m.setattr(TokenF1, "line_kernel", lambda self, config: None)
            r = CliRunner().invoke(main, ["score", str(path), "--workers", workers, "--no-store", "-q", "--out", str(out)])
        assert r.exit_code == 0, r.output
        return out.read_bytes()

    def same(out: bytes) -> bytes:
        return re.sub(rb'"elapsed_sec": ?[0-9.e-]+|"workers": ?[12]', b"", out)

    one, two, ref = score(f, "1"), score(f, "2"), score(f, "1", python=True)
    assert calls == {"threads": 1, "pool": 0}
    assert same(two) == same(one) == same(ref)
    assert json.loads(two)["aggregate"]["n_rows"] == len(rows) - 2 and json.loads(two)["input"]["workers"] == 2
    dup = _long_or_short_file(tmp_path, 3000, long=False, repeat=5)  # the last row repeats r5
    one, two = score(dup, "1"), score(dup, "2")
    assert calls == {"threads": 1, "pool": 1}
    assert same(one) == same(two) and b"repeats line 6" in two


def test_an_interrupt_in_the_threads_path_stops_them_with_the_taken_chunks_streamed(tmp_path, monkeypatch):
    # Ctrl-C (KeyboardInterrupt in the main thread, here raised by the progress callback after the 3rd chunk): it
    # goes up, every scoring thread has ended, and the entries streamed are exactly the first 3 chunks' (in order):
    # what a store would hold of the run, to be resumed.
    import threading

    import goldeval.io.ids as ids
    from goldeval.engines import local

    monkeypatch.setattr(ids, "SCAN_BLOCK", 2000)
    monkeypatch.setattr(local, "_KERNEL_ROWS", 50)
    monkeypatch.setattr(local.os, "cpu_count", lambda: 2)
    f = _long_or_short_file(tmp_path, 2000, long=False)
    sc = TokenF1()
    cfg = sc.configure(source="rows.jsonl")
    got: list[bytes] = []
    taken = [0, 0]  # rows, chunks

    def progress(n: int) -> None:
        taken[0] += n
        taken[1] += 1
        if taken[1] == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        local.run(sc, f, cfg, workers=2, keep_cases=False, progress=progress,
                  on_example_lines=lambda body, n: got.append(body))
    assert not [t for t in threading.enumerate() if t.name.startswith("goldeval-score")]
    entries = b"".join(got).splitlines()
    assert [json.loads(e)["line"] for e in entries] == list(range(1, taken[0] + 1)) and 150 <= taken[0] < 2000


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: every automatic choice is one process")
def test_automatic_workers_are_every_core_where_the_line_kernel_reads_long_rows(tmp_path, monkeypatch):
    # Rows of ~2,400 bytes (200 words a text), past PARALLEL_MIN_ROWS (made 300 here): every core, the kernel in
    # threads (benchmarks/README.md, "Issue 31 item 2, two workers": long notes score ~1.8x faster on two); the same
    # numbers as --workers 1.
    from goldeval.engines import local

    monkeypatch.setattr(local, "PARALLEL_MIN_ROWS", 300)
    f = _long_or_short_file(tmp_path, 400, long=True)
    assert f.stat().st_size > local.LONG_ROW_BYTES * 400

    def run(*extra: str) -> dict:
        out = tmp_path / f"out{len(list(tmp_path.iterdir()))}.json"
        r = CliRunner().invoke(main, ["score", str(f), "--no-store", "-q", "--out", str(out), *extra])
        assert r.exit_code == 0, r.output
        return orjson.loads(out.read_bytes())

    auto, one = run(), run("--workers", "1")
    assert auto["input"]["workers"] == os.cpu_count() and one["input"]["workers"] == 1
    assert auto["per_example"] == one["per_example"] and auto["input"]["sha256"] == one["input"]["sha256"]
    assert {k: v for k, v in auto["aggregate"].items() if k != "elapsed_sec"} == \
        {k: v for k, v in one["aggregate"].items() if k != "elapsed_sec"}


def test_long_rows_are_told_by_the_mean_bytes_a_line(tmp_path):
    # _long_rows: the file's bytes over its lines against LONG_ROW_BYTES (1,024): 10 lines of 1,024 bytes are long,
    # one byte less is not; an empty count is not
    from pathlib import Path

    from goldeval.engines.local import LONG_ROW_BYTES, _long_rows

    f = tmp_path / "x.jsonl"
    f.write_bytes((b"x" * (LONG_ROW_BYTES - 1) + b"\n") * 10)
    assert _long_rows(10, Path(f))
    f.write_bytes(f.read_bytes()[:-1])
    assert not _long_rows(10, Path(f))
    assert not _long_rows(0, Path(f)) and not _long_rows(10, None)


@pytest.mark.parametrize("how", ["threads", "threads, no store", "late hash", "one thread", "python", "pool"])
@pytest.mark.parametrize("change", ["same size", "appended", "touched"])
def test_a_file_changed_while_it_is_scored_is_refused_not_recorded_as_read(tmp_path, monkeypatch, how, change):
    # The first pass hashes the file (and makes the copy a run keeps); the scoring reads it again. A file rewritten
    # with the same size after the first pass gave cases of the new bytes recorded under the old bytes' sha256 and
    # kept copy (without a store, at 2 workers: under a sha256 its thread read from either); an appended one gave
    # extra rows on the Python and pool paths. Every path now refuses it (exit 2, no finished run); a file only
    # touched (same bytes, new time) once its sha256 is taken is scored as usual.
    from goldeval.engines import local
    from goldeval.runs.store import RunStore

    monkeypatch.setattr(local, "_KERNEL_ROWS", 40)
    monkeypatch.setattr(local, "_CHUNK_ROWS", 40)
    f = _long_or_short_file(tmp_path, 400, long=False)
    data = f.read_bytes()

    def rewrite() -> None:
        if change == "same size":
            f.write_bytes(data.replace(b"pain", b"paix"))
        elif change == "appended":
            with open(f, "ab") as fh:
                fh.write(data[: data.index(b"\n") + 1].replace(b'"r0"', b'"extra"'))
        os.utime(f, ns=(1, 1))

    def changing(real):
        def wrapped(*a, **k):
            for i, chunk in enumerate(real(*a, **k)):
                yield chunk
                if i == 0:
                    rewrite()
        return wrapped

    for name in ("_span_blocks", "_range_chunks", "_line_chunks"):
        monkeypatch.setattr(local, name, changing(getattr(local, name)))
    if how == "python":
        monkeypatch.setattr(TokenF1, "line_kernel", lambda self, config: None)
    if how == "threads, no store":  # (the sha256 thread done before the first pass: the same outcome every time)
        start = local._FileHash.start
        monkeypatch.setattr(local._FileHash, "start", lambda self: (start(self), self.join()))
    if how == "late hash":  # (the sha256 thread reads the file once it changed: its digest is not of what was scored)
        monkeypatch.setattr(local._FileHash, "start", lambda self: None)
        monkeypatch.setattr(local._FileHash, "result", lambda self: (self.run(), self.digest)[1])
    workers = "1" if how in ("one thread", "python") else "2"
    store = ["--no-store"] if how in ("threads, no store", "late hash") else ["--store", str(tmp_path / "g.db")]
    args = ["score", str(f), "--workers", workers, *store, "-q", "--out", str(tmp_path / "o.json")]
    r = CliRunner().invoke(main, args + (["--tokenizer", "unicode"] if how == "pool" else []))
    finished = []
    if how not in ("threads, no store", "late hash"):
        with RunStore(tmp_path / "g.db") as st:
            finished = [run for run in st.list_runs() if run.get("status") == "finished"]
    else:  # (the sha256 is taken by a thread beside the scoring: _FileHash)
        finished = [1] if r.exit_code == 0 else []
    if change == "touched" and how != "late hash":  # (a sha256 taken after a change cannot be trusted: refused)
        assert r.exit_code == 0, r.output
        assert len(finished) == 1
    else:
        assert r.exit_code == 2, r.output
        assert "changed while it was scored" in r.output
        assert finished == []
