"""Coded case blocks (goldeval.runs.blocks, Recorder.record_coded) against the one-row-a-case records of
Recorder.record (the definition), and the input copy made while a file is read (goldeval.runs.texts.InputCopy)
against compressed_parts (the definition).

Expected values: the rows a second store holds after Recorder.record of the same records, and the parts
compressed_parts makes of the same bytes; nothing here is a hand-typed result except where said."""

from __future__ import annotations

import hashlib
import os
import random
from array import array

import orjson
import pytest
import zstandard

from goldeval.errors import InputError, StoreError
from goldeval.runs import texts
from goldeval.runs.blocks import FORMAT_CODED, FORMAT_CODED_STATUS_FIRST, block_rows, encode_coded
from goldeval.runs.migrations import MIGRATIONS
from goldeval.runs.recorder import Recorder
from goldeval.runs.store import RunMeta, RunStore
from goldeval.runs.texts import InputCopy, compressed_parts, keep_inputs


def meta(key: str = "k1") -> RunMeta:
    return RunMeta(run_key=key, scorer_name="labels", scorer_version="1", dataset_hash="d" * 64)


def _label_record(cid: str, line: int, gold: str, pred: str | None, positive: str = "yes") -> dict:
    outcome = ("tp" if pred == positive else "fn") if gold == positive else ("fp" if pred == positive else "tn")
    return {"id": cid, "status": "scored", "line": line, "gold": gold, "pred": pred, "outcome": outcome}


def _tail(rec: dict) -> bytes:
    """What the record holds after its line number (as goldeval.labels.reader builds it)."""
    return (b',"gold":' + orjson.dumps(rec["gold"]) + b',"pred":' + orjson.dumps(rec["pred"]) + b',"outcome":"'
            + rec["outcome"].encode() + b'"}')


class _Coder:
    """Feeds records to Recorder.record_coded as goldeval labels does: runs of consecutive lines, one tails dict."""

    def __init__(self, rec: Recorder) -> None:
        self.rec, self.tails = rec, {}

    def send(self, records: list[dict]) -> None:
        """One call a run of consecutive lines (a call's cases are on consecutive lines, as a C stretch's)."""
        cut = next((i for i in range(1, len(records)) if records[i]["line"] != records[i - 1]["line"] + 1), None)
        if cut is not None:
            self.send(records[:cut])
            self.send(records[cut:])
            return
        codes, used = array("I"), set()
        for r in records:
            code = self.tails.setdefault(_tail(r), len(self.tails))
            codes.append(code)
            used.add(code)
        ids = b",".join(orjson.dumps(r["id"]) for r in records)
        self.rec.record_coded(ids, len(records), records[0]["line"], codes.tobytes(), used, self.tails)


def _tricky_records(n: int, seed: int) -> list[dict]:
    """Ids and labels with quotes, backslashes, commas, control characters, non-ASCII (é, 漢, an emoji, U+2028),
    nulls, and more distinct (gold, pred) pairs than one byte could code (30 labels: up to 900 tails)."""
    rng = random.Random(seed)
    odd = ['q"', "b\\s", "c,d", "t\tab", "nl\n", "é", "漢字", "🙂", "\u2028", "\x7f", "", " sp "]
    labels = ["yes", "no"] + [f"l{i}{rng.choice(odd)}" for i in range(28)]
    out, line = [], 1
    for i in range(n):
        cid = f"r{i}" if i % 5 else f"{rng.choice(odd)}{i}{rng.choice(odd)}"
        pred = None if i % 17 == 3 else rng.choice(labels)
        out.append(_label_record(cid, line, rng.choice(labels), pred))
        line += 1 if i % 23 else rng.randint(2, 4)  # gaps: blank lines, failed rows
    return out


@pytest.mark.parametrize("background", [False, "thread"])
def test_coded_blocks_read_back_as_the_rows_record_stores(tmp_path, monkeypatch, background):
    """Tricky records in coded blocks (several blocks: 300 cases a block here), interleaved with cases recorded one
    by one (an unscored one among them) and a block of JSON records, read back exactly as a store fed only by
    Recorder.record: the rows (id, seq, status, verdict, score, reason, raw, record JSON, byte for byte), the
    records, the case map, the next seq, the finished run's per_example rebuilt from them."""
    import goldeval.runs.recorder as rec_mod

    monkeypatch.setattr(rec_mod, "CODED_BLOCK_CASES", 300)
    recs = _tricky_records(2000, seed=31)
    unscored = {"id": "u1", "status": "unscored", "line": 99999, "reason": "gold is null"}
    with RunStore(tmp_path / "coded.db") as coded, RunStore(tmp_path / "rows.db") as rows:
        run_c, run_r = coded.create_run(meta()), rows.create_run(meta())
        with Recorder(coded, run_c, background=background) as rec:
            coder = _Coder(rec)
            for start in range(0, 1000, 97):  # stretches of up to 97 records, as the C reader hands them over
                coder.send(recs[start:min(start + 97, 1000)])
            rec.record(unscored)
            rec.record(recs[1000])
            body = b"\n".join(orjson.dumps(r) for r in recs[1001:1100])
            rec.record_lines(body, 99, b",".join(orjson.dumps(r["id"]) for r in recs[1001:1100]))
            for r in recs[1100:]:  # one at a time, as the Python path's rows
                coder.send([r])
            assert rec.n_recorded == 2001
        with Recorder(rows, run_r, background=False) as rec:
            for r in recs[:1000] + [unscored] + recs[1000:]:
                rec.record(r)
        formats = dict(coded.db.execute("SELECT format, sum(n) FROM case_blocks GROUP BY format").fetchall())
        assert formats == {1: 99, 2: 1900} and len(coder.tails) > 256
        assert list(coded.stored_cases(run_c)) == list(rows.stored_cases(run_r))
        assert list(coded.iter_cases(run_c)) == recs[:1000] + [unscored] + recs[1000:]
        assert coded.case_map(run_c) == rows.case_map(run_r)
        assert coded.next_seq(run_c) == rows.next_seq(run_r) == 2001


def test_a_store_of_the_previous_schema_keeps_reading_its_json_blocks(tmp_path):
    """A block of JSON records written before m007 (no format column) reads back as before once the store is
    migrated, and beside a coded block of the same run."""
    path = tmp_path / "old.db"
    recs = [_label_record(f"c{i}", i + 1, "yes", "no") for i in range(6)]
    with RunStore(path, _migrate_upto=len(MIGRATIONS) - 1) as old:
        assert "format" not in {r[1] for r in old.db.execute("PRAGMA table_info(case_blocks)")}
        run_id = old.create_run(meta())
        old.write_case_block(run_id, 0, 3, b"\n".join(orjson.dumps(r) for r in recs[:3]),
                             b",".join(orjson.dumps(r["id"]) for r in recs[:3]))
        assert list(old.iter_cases(run_id)) == recs[:3]
    with RunStore(path) as new:
        rec = Recorder(new, run_id, background=False)
        rec._seq = 3
        _Coder(rec).send(recs[3:])
        rec.close()
        assert new.db.execute("SELECT format FROM case_blocks ORDER BY seq0").fetchall() == [(1,), (2,)]
        assert list(new.iter_cases(run_id)) == recs


@pytest.fixture()
def rec(tmp_path):
    with RunStore(tmp_path / "g.db") as st:
        r = Recorder(st, st.create_run(meta()), background=False)
        yield r
        r.close()


def test_record_coded_refuses_codes_and_tails_it_cannot_store(rec):
    ok = b',"gold":"a","pred":null,"outcome":"tn"}'
    one = array("I", [0]).tobytes()
    with pytest.raises(InputError, match="1 cases and 8 bytes of codes"):
        rec.record_coded(b'"a"', 1, 1, one * 2, [0], {ok: 0})
    with pytest.raises(InputError, match="names id again"):
        rec.record_coded(b'"a"', 1, 1, one, [0], {b',"id":"b"}': 0})
    with pytest.raises(InputError, match="must be"):
        rec.record_coded(b'"a"', 1, 1, one, [0], {b'"gold":"a"}': 0})
    with pytest.raises(InputError, match="not JSON"):
        rec.record_coded(b'"a"', 1, 1, one, [0], {b',"gold":a}': 0})
    with pytest.raises(InputError, match="has code 3; the next code is 0"):
        rec.record_coded(b'"a"', 1, 1, one, [0], {ok: 3})
    with pytest.raises(InputError, match="is not one of the 1 tails"):
        rec.record_coded(b'"a"', 1, 1, array("I", [1]).tobytes(), [1], {ok: 0})
    assert rec.n_recorded == 0
    rec.record_coded(b'"a"', 1, 1, one, [0], {ok: 0})  # (silent on a healthy call)
    assert rec.n_recorded == 1


def _raw_block(store: RunStore, run_id: str, n: int, ids: bytes, lines, codes, tails) -> None:
    cctx = zstandard.ZstdCompressor()
    data = encode_coded(lines, array("I", codes).tobytes(), tails)
    store.write_coded_block(run_id, 0, n, cctx.compress(data), cctx.compress(ids))


@pytest.mark.parametrize("ids, lines, codes, tails, why", [
    (b'"a","b"', [[1, 3]], [0, 0, 0], {0: b',"x":1}'}, "holds 3 codes, 2 ids and 3 line numbers"),
    (b'"a","b","c"', [[1, 2]], [0, 0, 0], {0: b',"x":1}'}, "holds 3 codes, 3 ids and 2 line numbers"),
    (b'"a","b","c"', [[1, 3]], [0, 1, 0], {0: b',"x":1}'}, "the code 1, which it does not define"),
    (b'"a",2,"c"', [[1, 3]], [0, 0, 0], {0: b',"x":1}'}, "an id that is not text"),
    (b'"a","b","c"', [[1, 3]], [0, 0, 0], {0: b',"line":1}'}, "names line again"),
])
def test_a_coded_block_that_is_not_what_its_row_says_is_reported_damaged(tmp_path, ids, lines, codes, tails, why):
    with RunStore(tmp_path / "g.db") as st:
        run_id = st.create_run(meta())
        _raw_block(st, run_id, 3, ids, lines, codes, tails)
        with pytest.raises(StoreError, match=why):
            list(st.iter_cases(run_id))


def test_a_coded_block_reads_as_the_records_it_stands_for():
    """By hand: two cases on lines 7 and 9 (a gap), one tail each."""
    cctx = zstandard.ZstdCompressor()
    data = encode_coded([[7, 1], [9, 1]], array("I", [1, 0]).tobytes(), {0: b',"k":null}', 1: b',"k":"\xc3\xa9"}'})
    rows = list(block_rows([(5, 2, cctx.compress(data), cctx.compress(b'"a","b\\"c"'), FORMAT_CODED)], None))
    assert rows == [("a", 5, "scored", None, None, None, None, '{"id":"a","status":"scored","line":7,"k":"é"}'),
                    ('b"c', 6, "scored", None, None, None, None, '{"id":"b\\"c","status":"scored","line":9,"k":null}')]
    assert list(block_rows([(5, 2, cctx.compress(data), cctx.compress(b'"a","b"'), FORMAT_CODED)], "unscored")) == []
    with pytest.raises(StoreError, match="format 9, which this goldeval does not know"):
        list(block_rows([(0, 1, b"", b"", 9)], None))


# -- the input copy -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("streamed", [False, True, "thread"])
@pytest.mark.parametrize("size", [0, 1, 999, 1000, 1001, 2999, 3000, 7777])
def test_the_input_copy_is_the_parts_compressed_parts_makes(tmp_path, monkeypatch, size, streamed):
    """Fed in chunks of random sizes (smaller and larger than a part, 1,000 bytes here), the copy holds the parts of
    compressed_parts of the file and the file's sha256: without a size the same (size, zstd frame) parts byte for
    byte; told the file's size (streamed: each part compressed as it is fed), the same part sizes, each frame
    decompressing to the same bytes as compressed_parts' frame and saying its size in its header (what
    ZstdDecompressor.decompress, used by every reader of a kept input, needs)."""
    monkeypatch.setattr(texts, "PART_BYTES", 1000)
    if streamed == "thread":  # (a thread reading the file 333 bytes at a time, for any file of 300 bytes or more)
        monkeypatch.setattr(InputCopy, "THREAD_BYTES", 300)
        monkeypatch.setattr(InputCopy, "READ_BYTES", 333)
    rng = random.Random(size)
    data = bytes(rng.randrange(256) if i % 3 else 65 for i in range(size))
    path = tmp_path / "in.jsonl"
    path.write_bytes(data)
    want = list(compressed_parts(str(path)))
    assert [n for n, _ in want] == [min(1000, size - at) for at in range(0, size, 1000)]  # (the parts, by hand)
    dctx = zstandard.ZstdDecompressor()
    for trial in range(5):
        copy, pos = InputCopy(size if streamed else None, path if streamed == "thread" else None), 0
        assert (copy._thread is not None) == (streamed == "thread" and size >= 300)
        buf = bytearray()
        while pos < size:
            k = rng.choice([1, 7, 999, 1000, 1001, 2500]) if trial else size
            buf[:] = data[pos:pos + k]
            copy.update(memoryview(buf) if trial % 2 else data[pos:pos + k])  # (a reused buffer: copied when kept)
            pos += k
        buf[:] = b"x" * len(buf)
        copy.close()
        assert copy.ready()
        got = list(copy.parts())
        if streamed:
            assert [n for n, _ in got] == [n for n, _ in want]
            assert [dctx.decompress(f) for _, f in got] == [dctx.decompress(f) for _, f in want]
            assert [zstandard.frame_content_size(f) for _, f in got] == [n for n, _ in want]
            assert b"".join(dctx.decompress(f) for _, f in got) == data
        else:
            assert got == want
        assert copy.hexdigest() == hashlib.sha256(data).hexdigest()
        copy.discard()
        with pytest.raises(ValueError, match="not complete"):
            list(copy.parts())


@pytest.mark.parametrize("thread", [False, True])
@pytest.mark.parametrize("fed", [0, 2499, 2501, 5000])
def test_a_copy_told_a_size_and_fed_other_than_that_is_discarded(tmp_path, monkeypatch, fed, thread):
    """A copy told the file holds 2,500 bytes (parts of 1,000) and fed fewer or more (the file changed while it was
    read) is discarded when closed: parts() refuses, so keep_inputs reads the file instead. Fed exactly 2,500 it is
    kept (the healthy case). With and without the thread that compresses the file itself."""
    monkeypatch.setattr(texts, "PART_BYTES", 1000)
    monkeypatch.setattr(InputCopy, "THREAD_BYTES", 300)
    data = bytes(range(256)) * 20
    path = tmp_path / "in.jsonl"
    path.write_bytes(data[:2500])
    for n, kept in ((fed, False), (2500, True)):
        copy = InputCopy(2500, path if thread else None)
        for at in range(0, n, 700):
            copy.update(data[at:min(n, at + 700)])
        copy.close()
        assert copy.closed and copy.discarded is not kept and copy.ready() is kept
        if kept:
            assert [size for size, _ in copy.parts()] == [1000, 1000, 500]
        else:
            with pytest.raises(ValueError, match="not complete"):
                list(copy.parts())
    with pytest.raises(ValueError, match="size must be"):
        InputCopy(-1)
    half = InputCopy(2500, path)  # discarded half-way (an interrupted first pass): the thread ends, nothing is kept
    half.update(data[:1200])
    half.discard()
    assert half.ready() is False and half._thread is None


@pytest.mark.parametrize("change", ["same size", "longer", "shorter"])
def test_a_file_changed_before_the_thread_read_it_is_not_kept_from_the_copy(tmp_path, monkeypatch, change):
    """The compressing thread reads the file itself: when the file changes after the copy was made (before or while
    the thread reads it; here the thread is held after its first read until the file is rewritten), the copy is not
    ready (its identity, or its size, is not the one the first pass read) and keep_inputs keeps nothing of the new
    bytes: the file no longer hashes to the recorded sha256 (a note says so). The unchanged file (the healthy case,
    test_the_input_copy_is_the_parts_compressed_parts_makes) is kept."""
    import threading

    monkeypatch.setattr(texts, "PART_BYTES", 1000)
    monkeypatch.setattr(InputCopy, "THREAD_BYTES", 300)
    monkeypatch.setattr(InputCopy, "READ_BYTES", 400)
    first = b'{"id":"a","gold":"x","pred":"y"}\n' * 100
    path = tmp_path / "l.jsonl"
    path.write_bytes(first)
    go, held = threading.Event(), threading.Event()
    stream = InputCopy._stream

    def slow(self, data):
        held.set()
        go.wait(10)
        stream(self, data)

    monkeypatch.setattr(InputCopy, "_stream", slow)
    copy = InputCopy(len(first), path)
    copy.update(first)  # (the first pass: the bytes it hashed)
    copy.close()
    assert held.wait(10)
    new = {"same size": first.replace(b'"x"', b'"z"'), "longer": first + b"{}\n", "shorter": first[:-40]}[change]
    path.write_bytes(new)
    os.utime(path, ns=(1, 1))  # (a modification time of its own, whatever the clock's resolution)
    go.set()
    assert copy.ready() is False
    with RunStore(tmp_path / "g.db") as st:
        run_id = st.create_run(meta())
        notes = keep_inputs(st, run_id, {"labels": str(path)}, {"labels": {"path": str(path), "sha256": copy.hexdigest()}},
                            {"labels": copy})
        assert len(notes) == 1 and "changed while it was scored" in notes[0]
        assert st.kept_inputs(run_id) == {}


def test_keep_inputs_keeps_the_copy_made_while_read_and_only_one_of_the_recorded_bytes(tmp_path):
    """keep_inputs stores a complete copy whose sha256 is the recorded one without reading the file (here changed
    since: its new bytes are not kept), and reads the file as before when the copy is of other bytes or
    incomplete (here: the changed file does not hash to the recorded sha256: not kept, with a note)."""
    path = tmp_path / "labels.jsonl"
    first = b'{"id":"a","gold":"x","pred":"y"}\n' * 50
    path.write_bytes(first)
    sha = hashlib.sha256(first).hexdigest()
    copy = InputCopy()
    copy.update(first)
    copy.close()
    path.write_bytes(first + b'{"id":"b","gold":"x","pred":"y"}\n')  # changed after it was read
    with RunStore(tmp_path / "g.db") as st:
        inputs = {"labels": {"path": str(path), "sha256": sha}}
        run_a, run_b, run_c = (st.create_run(meta(k)) for k in ("a", "b", "c"))
        assert keep_inputs(st, run_a, {"labels": str(path)}, inputs, {"labels": copy}) == []
        assert list(st.kept_input_parts(run_a, "labels")) == [frame for _, frame in copy.parts()]
        assert zstandard.ZstdDecompressor().decompress(next(st.kept_input_parts(run_a, "labels"))) == first
        other = InputCopy()
        other.update(b"other bytes")
        other.close()
        for run_id, copies in ((run_b, {"labels": other}), (run_c, None)):
            notes = keep_inputs(st, run_id, {"labels": str(path)}, inputs, copies)
            assert len(notes) == 1 and "changed while it was scored" in notes[0]
            assert st.kept_inputs(run_id) == {}


def test_a_labels_run_keeps_the_copy_it_made_in_its_first_pass(tmp_path, monkeypatch):
    """goldeval labels with texts kept: the kept parts are the parts of compressed_parts of the input (the same
    sizes and bytes once decompressed; the frames are streamed, so not the same bytes), and the file is not read
    again after the scoring (compressed_parts is not called)."""
    from click.testing import CliRunner

    from goldeval.cli import main

    path = tmp_path / "l.jsonl"
    rows = [orjson.dumps({"id": f"r{i}", "gold": "yes" if i % 3 else "no", "pred": "yes" if i % 4 else "no"})
            for i in range(3000)]
    path.write_bytes(b"\n".join(rows) + b"\n")
    want = list(compressed_parts(str(path)))
    calls = []
    monkeypatch.setattr(texts, "compressed_parts", lambda *a, **k: calls.append(a) or iter(()))
    db = tmp_path / "g.db"
    r = CliRunner().invoke(main, ["labels", str(path), "--positive", "yes", "--store", str(db), "-q"])
    assert r.exit_code == 0, r.output
    with RunStore(db) as st:
        (run,) = st.list_runs()
        dctx = zstandard.ZstdDecompressor()
        assert [dctx.decompress(p) for p in st.kept_input_parts(run["id"], "labels")] == [dctx.decompress(f) for _, f in want]
        assert st.kept_inputs(run["id"])["labels"]["size"] == os.path.getsize(path)
    assert calls == []


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_score_run_keeps_the_copy_it_made_in_its_first_pass(tmp_path, monkeypatch, workers):
    """goldeval score with texts kept (the local engine's first pass, which hashes the file, feeds the copy): the
    kept input decompresses to the file's bytes, in compressed_parts' part sizes, and the file is not read again
    after the scoring (compressed_parts is not called); --no-texts keeps nothing. Rows with non-ASCII text, escapes
    and a blank line between them, parts of 4 KiB so the copy spans several."""
    from click.testing import CliRunner

    from goldeval.cli import main

    monkeypatch.setattr(texts, "PART_BYTES", 4096)
    path = tmp_path / "p.jsonl"
    rows = [orjson.dumps({"id": f"r{i}", "prediction": f"the caf\u00e9 \"{i}\" was open", "reference": "the café was open"})
            for i in range(300)]
    data = b"\n".join(rows[:150]) + b"\n\n" + b"\n".join(rows[150:]) + b"\n"
    path.write_bytes(data)
    want = list(compressed_parts(str(path)))
    assert len(want) == -(-len(data) // 4096) > 2
    calls = []
    monkeypatch.setattr(texts, "compressed_parts", lambda *a, **k: calls.append(a) or iter(()))
    db = tmp_path / "g.db"
    for extra in ([], ["--no-texts"]):
        r = CliRunner().invoke(main, ["score", str(path), "--store", str(db), "-q", "--workers", workers,
                                      "--out", str(tmp_path / "o.json"), *extra])
        assert r.exit_code == 0, r.output
    with RunStore(db) as st:
        kept_run, bare_run = sorted(st.list_runs(), key=lambda run: run["created_at"])
        dctx = zstandard.ZstdDecompressor()
        parts = [dctx.decompress(p) for p in st.kept_input_parts(kept_run["id"], "predictions")]
        assert parts == [dctx.decompress(f) for _, f in want] and b"".join(parts) == data
        assert st.kept_inputs(kept_run["id"])["predictions"]["size"] == len(data)
        assert st.kept_inputs(bare_run["id"]) == {}
    assert calls == []


def test_a_run_of_json_blocks_is_read_by_the_block_decoder_and_a_run_with_coded_blocks_is_not(tmp_path):
    """In one store (m007: case_blocks has its format column), a run whose blocks are all JSON lines (what `score`
    records) takes the one-decode path of its records, and a run holding a coded block (what `labels` records) the
    row path; both read back exactly the records written. (The one-decode path was first chosen by the table's
    columns being m006's, so with m007 no run took it: the same records, slower.)"""
    recs = _tricky_records(400, seed=7)
    with RunStore(tmp_path / "g.db") as st:
        run_json, run_coded = st.create_run(meta("j")), st.create_run(meta("c"))
        with Recorder(st, run_json, background=False) as rec:
            for start in range(0, 400, 100):
                part = recs[start:start + 100]
                rec.record_lines(b"\n".join(orjson.dumps(r) for r in part), len(part),
                                 b",".join(orjson.dumps(r["id"]) for r in part))
        with Recorder(st, run_coded, background=False) as rec:
            _Coder(rec).send(recs[:200])
            rec.record_lines(b"\n".join(orjson.dumps(r) for r in recs[200:]), 200,
                             b",".join(orjson.dumps(r["id"]) for r in recs[200:]))
        formats = dict(st.db.execute("SELECT run_id, group_concat(DISTINCT format) FROM case_blocks GROUP BY run_id"))
        assert formats == {run_json: "1", run_coded: "2,1"} or formats == {run_json: "1", run_coded: "1,2"}
        assert st._json_line_blocks(run_json) is True
        assert st._json_line_blocks(run_coded) is False
        assert list(st.iter_cases(run_json)) == recs == list(st.iter_cases(run_coded))
        assert st.case_map(run_json) == st.case_map(run_coded) == {r["id"]: r for r in recs}


# -- record_lines' blocks coded (format 3: goldeval score's records) -------------------------------------------------


def _f1_record(cid: str, line: int, p: int, r: int, o: int) -> dict:
    """A record as goldeval score stores a token-F1 case ({"status", "id", "line", "whole_note", "tokens"}): the
    scores of o shared tokens among p predicted and r reference ones, as freetext.scorer.score_row computes them."""
    prec, rec = (o / p if p else 0.0), (o / r if r else 0.0)
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return {"status": "scored", "id": cid, "line": line, "whole_note": {"precision": prec, "recall": rec, "f1": f1},
            "tokens": {"prediction": p, "reference": r, "overlap": o}}


def _f1_records(n: int, seed: int) -> list[dict]:
    """Score records with odd ids (every 301st: a quote, a backslash or a tab, written with an escape: not coded;
    else every 7th: non-ASCII, U+2028, DEL, a comma, 'null': coded), gaps between line numbers, and tails from a few
    dozen token counts."""
    rng = random.Random(seed)
    escaped = ['q"', "b\\s", "t\tab"]
    odd = ["é", "漢字", "🙂", "\u2028", "c,d", "null", " sp ", "\x7f"]
    out, line = [], 1
    for i in range(n):
        cid = f"r{i}" if i % 7 else f"{rng.choice(escaped if i % 301 == 0 else odd)}{i}"
        p, r = rng.randint(1, 6), rng.randint(1, 6)
        out.append(_f1_record(cid, line, p, r, rng.randint(0, min(p, r))))
        line += 1 if i % 19 else rng.randint(2, 40)
    return out


def _send_lines(rec: Recorder, records: list[dict], size: int) -> None:
    for start in range(0, len(records), size):
        part = records[start:start + size]
        rec.record_lines(b"\n".join(orjson.dumps(r) for r in part), len(part), b",".join(orjson.dumps(r["id"]) for r in part))


@pytest.mark.parametrize("coder", [True, False])
@pytest.mark.parametrize("background", [False, "thread"])
def test_score_records_in_coded_blocks_read_back_as_the_rows_record_stores(tmp_path, monkeypatch, coder, background):
    """goldeval score's records through record_lines, in blocks of ~50 records (BLOCK_BYTES 8 KiB here): with the C
    coder, a block whose every id is without an escape is coded (format 3) and the others stay JSON lines (format 1);
    without it (the pure-Python path) every block is JSON lines. Either way the run reads back exactly as a store
    fed only by Recorder.record: the rows byte for byte, the records, the case map, the next seq."""
    import goldeval.runs.recorder as rec_mod

    if coder and rec_mod._fast_tail_table is None:
        pytest.skip("goldeval._fast is not built")
    if not coder:
        monkeypatch.setattr(rec_mod, "_fast_tail_table", None)
    monkeypatch.setattr(rec_mod, "BLOCK_BYTES", 8192)
    recs = _f1_records(3000, seed=5)
    assert 5 < sum(any(c in r["id"] for c in '"\\\t') for r in recs) < 15  # (both kinds of block below)
    with RunStore(tmp_path / "lines.db") as st, RunStore(tmp_path / "rows.db") as rows:
        run_l, run_r = st.create_run(meta()), rows.create_run(meta())
        with Recorder(st, run_l, background=background) as rec:
            _send_lines(rec, recs, 37)
        with Recorder(rows, run_r, background=False) as rec:
            for r in recs:
                rec.record(r)
        formats = dict(st.db.execute("SELECT format, sum(n) FROM case_blocks GROUP BY format").fetchall())
        if coder:
            assert set(formats) == {1, 3} and formats[3] > 1000
        else:
            assert formats == {1: 3000}
        assert list(st.stored_cases(run_l)) == list(rows.stored_cases(run_r))
        assert list(st.iter_cases(run_l)) == recs
        assert st.case_map(run_l) == rows.case_map(run_r)
        assert st.next_seq(run_l) == rows.next_seq(run_r) == 3000
        assert st._scored_ids_json(run_l) == rows._scored_ids_json(run_r)


def test_record_lines_codes_only_records_of_the_shape_it_rebuilds(tmp_path, monkeypatch):
    """A block is coded only when every record is {"status":"scored","id":<string>,"line":<str(int)>, ... and its
    ids are the records' own: a labels record (id first), a line written 1.0, an id written with an escape (orjson
    would not), an id given that is not the record's, each keeps its block as JSON lines; the healthy block beside them is coded. Every
    record reads back as written."""
    import goldeval.runs.recorder as rec_mod

    if rec_mod._fast_tail_table is None:
        pytest.skip("goldeval._fast is not built")
    good = [orjson.dumps(_f1_record(f"g{i}", i + 1, 3, 4, 2)) for i in range(3)]
    odd = [
        orjson.dumps(_label_record("a", 1, "yes", "no")),
        good[0].replace(b'"line":1', b'"line":1.0'),
        good[0].replace(b'"id":"g0"', b'"id":"\\u00e9"'),  # (orjson would write the é itself)
    ]
    with RunStore(tmp_path / "g.db") as st:
        run_id = st.create_run(meta())
        written = []
        with Recorder(st, run_id, background=False) as rec:
            for bad in odd:
                body = b"\n".join([good[1], bad])
                rec.record_lines(body, 2, b'"g1",' + (b'"a"' if b'"id":"a"' in bad else b'"g0"' if b'"g0"' in bad else b'"\\u00e9"'))
                rec.flush()
                written += [good[1], bad]
            rec.record_lines(b"\n".join(good), 3, b'"g0","g1","x2"')  # the third id is not the record's
            rec.flush()
            rec.record_lines(b"\n".join(good), 3, b'"g0","g1","g2"')
            rec.flush()
        formats = [f for (f,) in st.db.execute("SELECT format FROM case_blocks ORDER BY seq0")]
        assert formats == [1, 1, 1, 1, 3]
        assert [row[7] for row in st.stored_cases(run_id)][-3:] == [g.decode() for g in good]
        assert [row[7] for row in st.stored_cases(run_id)][:6] == [w.decode() for w in written]


def test_record_lines_stops_coding_when_tails_pass_the_cap(tmp_path, monkeypatch):
    """Records whose tails are nearly all different (here: LINE_TAILS_CAP = 40, 60 distinct tails) stop being coded
    once the table is full, for the rest of the run; what was coded and what was not read back as written."""
    import goldeval.runs.recorder as rec_mod

    if rec_mod._fast_tail_table is None:
        pytest.skip("goldeval._fast is not built")
    monkeypatch.setattr(rec_mod, "LINE_TAILS_CAP", 40)
    recs = [_f1_record(f"r{i}", i + 1, 100 + i % 60, 200, 50) for i in range(400)]
    with RunStore(tmp_path / "g.db") as st:
        run_id = st.create_run(meta())
        with Recorder(st, run_id, background=False) as rec:
            for start in range(0, 400, 20):
                part = recs[start:start + 20]
                rec.record_lines(b"\n".join(orjson.dumps(r) for r in part), 20, b",".join(orjson.dumps(r["id"]) for r in part))
                rec.flush()
            assert rec._line_table is None and len(rec._line_tails) == 40
        formats = [f for (f,) in st.db.execute("SELECT format FROM case_blocks ORDER BY seq0")]
        assert formats[:2] == [3, 3] and set(formats[2:]) == {1}
        assert list(st.iter_cases(run_id)) == recs


def test_a_damaged_status_first_block_is_refused(tmp_path):
    """A format-3 block whose codes name a tail it does not define, or whose ids are fewer than its cases, is
    reported damaged; the healthy one reads as its records (built by hand: the spelling of the module's notes)."""
    cctx = zstandard.ZstdCompressor()
    data = encode_coded([[5, 2]], array("I", [0, 0]).tobytes(), {0: b',"k":1}'})
    rows = list(block_rows([(0, 2, cctx.compress(data), cctx.compress(b'"a","b"'), FORMAT_CODED_STATUS_FIRST)], None))
    assert [r[7] for r in rows] == ['{"status":"scored","id":"a","line":5,"k":1}', '{"status":"scored","id":"b","line":6,"k":1}']
    bad = encode_coded([[5, 2]], array("I", [0, 1]).tobytes(), {0: b',"k":1}'})
    with pytest.raises(StoreError, match="the code 1, which it does not define"):
        list(block_rows([(0, 2, cctx.compress(bad), cctx.compress(b'"a","b"'), FORMAT_CODED_STATUS_FIRST)], None))
    with pytest.raises(StoreError, match="holds 2 codes, 1 ids"):
        list(block_rows([(0, 2, cctx.compress(data), cctx.compress(b'"a"'), FORMAT_CODED_STATUS_FIRST)], None))
    with RunStore(tmp_path / "g.db") as st, pytest.raises(StoreError, match="format 2 or 3"):
        st.write_coded_block(st.create_run(meta()), 0, 2, cctx.compress(data), cctx.compress(b'"a","b"'), 1)


def test_coded_cases_of_both_formats_keep_their_order(tmp_path):
    """record_coded's cases (format 2, label records) and record_lines' coded ones (format 3, score records) pending
    in turn, with a JSON-lines block and a case recorded one by one between them: each kind is stored before the
    next kind is gathered, so the run reads back in the order recorded, as a store fed only by Recorder.record."""
    labels = [_label_record(f"l{i}", i + 1, "yes" if i % 3 else "no", "yes") for i in range(50)]
    scores = [_f1_record(f"s{i}", 100 + i, 3, 4, i % 4) for i in range(50)]
    odd = {"status": "scored", "id": 'q"1', "line": 400, "k": 1}  # (an escaped id: a block of JSON lines)
    order = labels[:20] + scores[:30] + labels[20:] + [odd] + scores[30:]
    with RunStore(tmp_path / "g.db") as st, RunStore(tmp_path / "rows.db") as rows:
        run_id, run_r = st.create_run(meta()), rows.create_run(meta())
        with Recorder(st, run_id, background=False) as rec:
            coder = _Coder(rec)
            coder.send(labels[:20])
            _send_lines(rec, scores[:30], 10)
            coder.send(labels[20:])
            _send_lines(rec, [odd], 1)
            rec.record(scores[30])
            _send_lines(rec, scores[31:], 7)
        with Recorder(rows, run_r, background=False) as rec:
            for r in order:
                rec.record(r)
        formats = [f for (f,) in st.db.execute("SELECT format FROM case_blocks ORDER BY seq0")]
        assert formats == [2, 3, 2, 1, 3]
        assert list(st.iter_cases(run_id)) == order
        assert list(st.stored_cases(run_id)) == list(rows.stored_cases(run_r))


def test_records_with_tails_of_their_own_stay_json_lines_from_the_first_call(tmp_path):
    """Long notes' records: nearly every one has its own token counts, so its own tail. The first call that brings
    new tails for more than a quarter of its records (past 64; here 300 of 300) is not coded, nor is anything after
    it: the run's blocks are all JSON lines, so its readers keep the one-decode path of such runs. Short rows' first
    call (a few dozen tails for 300 records, the healthy case) is coded."""
    varied = [_f1_record(f"v{i}", i + 1, 100 + i, 250, 90) for i in range(900)]
    few = [_f1_record(f"f{i}", i + 1, 3 + i % 5, 4, 2) for i in range(300)]
    with RunStore(tmp_path / "g.db") as st:
        run_v, run_f = st.create_run(meta("v")), st.create_run(meta("f"))
        with Recorder(st, run_v, background=False) as rec:
            _send_lines(rec, varied, 300)
            assert rec._line_table is None and rec._line_tails == []
        with Recorder(st, run_f, background=False) as rec:
            _send_lines(rec, few, 300)
            assert rec._line_table is not None and len(rec._line_tails) == 5
        formats = dict(st.db.execute("SELECT run_id, group_concat(DISTINCT format) FROM case_blocks GROUP BY run_id"))
        assert formats == {run_v: "1", run_f: "3"}
        assert st._json_line_blocks(run_v) is True
        assert list(st.iter_cases(run_v)) == varied and list(st.iter_cases(run_f)) == few


def test_code_records_reads_only_what_it_can_rebuild():
    """goldeval._fast.code_records directly: a line number is taken as str(int) writes it, up to 18 digits (0, 1,
    999999999999999999; not 01, 19 or 23 digits, 1.0, -1); an id must be the record's and without an escape or a
    control character; the records must be n; codes index the tails in the order met, lines come as runs."""
    fast = pytest.importorskip("goldeval._fast")
    head = b'{"status":"scored","id":"a","line":'
    for line, ok in ((b"0", True), (b"1", True), (b"999999999999999999", True), (b"01", False),
                     (b"1000000000000000000", False), (b"9" * 23, False), (b"1.0", False), (b"-1", False)):
        got = fast.code_records(head + line + b',"x":1}', b'"a"', 1, fast.tail_table(), [], 100)
        assert (got is not None) == ok, line
        if ok:
            assert got[1] == [[int(line), 1]]
    recs = b"\n".join([head + b'3,"x":1}', head.replace(b'"a"', b'"b"') + b'4,"x":2}', head.replace(b'"a"', b'"c"') + b'9,"x":1}'])
    table, known = fast.tail_table(), []
    codes, lines, used = fast.code_records(recs, b'"a","b","c"', 3, table, known, 100)
    assert array("I", codes).tolist() == [0, 1, 0] and lines == [[3, 2], [9, 1]] and used == [0, 1]
    assert known == [b',"x":1}', b',"x":2}']
    for ids, n in ((b'"a","b"', 3), (b'"a","b","d"', 3), (b'"a","b","c","d"', 3), (b'"a","b","c"', 2), (b'"a","b","c"', 4)):
        assert fast.code_records(recs, ids, n, table, known, 100) is None, (ids, n)
    for bad_id in (b'"a\\u0041"', b'"a\\"b"', b'"a\tb"'):
        rec = head.replace(b'"a"', bad_id) + b'1,"x":1}'
        assert fast.code_records(rec, bad_id, 1, table, known, 100) is None, bad_id
    assert fast.code_records(head + b'1,"x":3}', b'"a"', 1, table, known, 2) is None  # (a third tail past cap 2)
    assert fast.code_records(b"", b"", 0, table, known, 100) == (b"", [], [])


@pytest.mark.parametrize("change", ["same size", "appended", "touched"])
def test_a_labels_file_changed_while_it_is_scored_is_refused_not_kept_as_read(tmp_path, monkeypatch, change):
    """goldeval labels hashes the file and makes the kept copy in its first pass, then reads the rows again: a file
    rewritten with the same size in between gave the new rows' counts under the old bytes' sha256 and copy, an
    appended one extra rows. Refused now (exit 2, no finished run); a file only touched is scored as usual."""
    from click.testing import CliRunner

    from goldeval.cli import main
    from goldeval.labels import reader

    path = tmp_path / "l.jsonl"
    rows = [orjson.dumps({"id": f"r{i}", "gold": "yes" if i % 3 else "no", "pred": "yes" if i % 4 else "no"})
            for i in range(300)]
    data = b"\n".join(rows) + b"\n"
    path.write_bytes(data)
    real = reader.JsonlLabelRows._rows

    def rows_then_change(self):
        for i, item in enumerate(real(self)):
            yield item
            if i == 0:
                if change == "same size":
                    path.write_bytes(data.replace(b'"pred":"no"', b'"pred":"ye"'))
                elif change == "appended":
                    with open(path, "ab") as fh:
                        fh.write(b'{"id":"x","gold":"yes","pred":"yes"}\n')
                os.utime(path, ns=(1, 1))

    monkeypatch.setattr(reader.JsonlLabelRows, "_rows", rows_then_change)
    db = tmp_path / "g.db"
    r = CliRunner().invoke(main, ["labels", str(path), "--positive", "yes", "--store", str(db), "-q"])
    with RunStore(db) as st:
        finished = [run for run in st.list_runs() if run.get("status") == "finished"]
    if change == "touched":
        assert r.exit_code == 0, r.output
        assert len(finished) == 1
    else:
        assert r.exit_code == 2, r.output
        assert "changed while it was scored" in r.output and finished == []


def test_record_coded_checks_a_code_the_pending_block_does_not_hold_yet(tmp_path):
    """record_coded skips the range check of codes the pending label block (format 2) already holds (checked when
    first given); a code it does not hold is still checked, after a block was sent too, and a code of a pending
    block of the other coded format (format 3, record_lines' own table of tails) does not count as checked: each
    refused call queues nothing."""
    ok, ok2 = b',"gold":"a","pred":null,"outcome":"tn"}', b',"gold":"b","pred":"b","outcome":"tp"}'
    codes = lambda *c: array("I", c).tobytes()  # noqa: E731
    with RunStore(tmp_path / "g.db") as st:
        rec = Recorder(st, st.create_run(meta()), background=False)
        tails = {ok: 0, ok2: 1}
        rec.record_coded(b'"a","b"', 2, 1, codes(0, 1), [0, 1], tails)
        rec.record_coded(b'"c"', 1, 3, codes(1), [1], tails)  # (held: silent)
        with pytest.raises(InputError, match=r"a code of \[1, 2\] is not one of the 2 tails"):
            rec.record_coded(b'"d","e"', 2, 4, codes(1, 2), [1, 2], tails)
        assert rec.n_recorded == 3
        rec._send_coded()  # a new block: its first codes are checked again
        with pytest.raises(InputError, match=r"a code of \[7\] is not one of the 2 tails"):
            rec.record_coded(b'"d"', 1, 4, codes(7), [7], tails)
        rec.record_coded(b'"d"', 1, 4, codes(0), [0], tails)
        # a pending block of score records (format 3), coded with 3 tails of their own
        scores = [_f1_record(f"s{i}", 10 + i, 3, 4, i % 3) for i in range(6)]
        _send_lines(rec, scores, 6)
        assert rec._coded_fmt == FORMAT_CODED_STATUS_FIRST and max(rec._coded_used) == 2 >= len(tails)
        with pytest.raises(InputError, match=r"a code of \[2\] is not one of the 2 tails"):
            rec.record_coded(b'"x"', 1, 20, codes(2), [2], tails)
        assert rec.n_recorded == 10
        rec.close()
        assert [r["id"] for r in st.iter_cases(rec.run_id)] == ["a", "b", "c", "d"] + [r["id"] for r in scores]


def _ids_digest(ids: list[str]) -> str:
    """sha256 of the ids' JSON array as orjson writes it (what a streamed per_example carries as ids_sha256)."""
    return hashlib.sha256(orjson.dumps(ids)).hexdigest()


@pytest.mark.parametrize("background", [False, "thread"])
def test_the_ids_of_the_blocks_written_are_the_ids_the_store_reads_back(tmp_path, background):
    """Recorder.blocks_ids_digest (hashed as the blocks are written) against the ids read back from the store by
    RunStore._cases_match_digest, for coded label blocks, coded score blocks and JSON-lines blocks (tricky ids:
    quotes, backslashes, non-ASCII, U+2028), with an unscored case recorded one by one among them ("statuses":
    "scored"), and worked out by hand from the ids in recording order."""
    import goldeval.runs.recorder as rec_mod

    recs = _tricky_records(700, seed=7)
    scores = [_f1_record(f"s{i}", 2000 + i, 3, 4, i % 4) for i in range(40)]
    odd = {"status": "scored", "id": 'q"1', "line": 3000, "k": 1}
    with RunStore(tmp_path / "g.db") as st:
        run_id = st.create_run(meta())
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(rec_mod, "CODED_BLOCK_CASES", 150)
            rec = Recorder(st, run_id, background=background)
            coder = _Coder(rec)
            for start in range(0, 600, 61):
                coder.send(recs[start:min(start + 61, 600)])
            assert rec.blocks_ids_digest()["statuses"] == "all"
            rec.record({"id": "u1", "status": "unscored", "line": 5000, "reason": "gold is null"})
            _send_lines(rec, scores, 9)
            _send_lines(rec, [odd], 1)
            coder.send(recs[600:])
            rec.flush()
            got = rec.blocks_ids_digest()
            rec.close()
        want = [r["id"] for r in recs[:600]] + [r["id"] for r in scores] + [odd["id"]] + [r["id"] for r in recs[600:]]
        assert got == {"n": 741, "ids_sha256": _ids_digest(want), "statuses": "scored"}
        assert st._cases_match_digest(run_id, {"n": got["n"], "ids_sha256": got["ids_sha256"]})


def test_a_recorder_vouches_only_for_a_run_whose_cases_it_wrote_in_blocks(tmp_path):
    """No digest from a recorder of a run that had cases before it, nor once a scored case was recorded one by one
    (record, record_serialized): the store then reads the cases back."""
    recs = [_label_record(f"c{i}", i + 1, "yes", "no") for i in range(6)]
    with RunStore(tmp_path / "g.db") as st:
        run_id = st.create_run(meta())
        rec = Recorder(st, run_id, background=False)
        _Coder(rec).send(recs[:3])
        assert rec.blocks_ids_digest() is not None
        rec.record(recs[3])
        assert rec.blocks_ids_digest() is None
        rec.close()
        again = Recorder(st, run_id, resumed=True, background=False)
        _Coder(again).send(recs[4:])
        assert again.blocks_ids_digest() is None
        again.close()
        other = Recorder(st, st.create_run(meta("k2")), background=False)
        other.record_serialized([("z", "scored", None, None, None, None)], b'{"id":"z","status":"scored"}')
        assert other.blocks_ids_digest() is None
        other.close()


def _streamed(ids: list[str], status: str | None = "scored") -> dict:
    out = {"$streamed": True, "n": len(ids), "ids_sha256": _ids_digest(ids), "drop_keys": ["status"]}
    if status != "scored":
        out["status"] = status
    return out


def test_finish_checks_a_streamed_per_example_against_the_recorders_digest_without_reading_back(tmp_path, monkeypatch):
    """A labels-like run recorded in blocks finishes without reading its cases back (the recorder's digest is
    compared); a per_example that does not match it (ids swapped, one case fewer) still gets the note that the
    cases differ, as the read-back check gives; a check the digest does not cover (every case's, with an unscored
    one recorded one by one) reads the cases back."""
    recs = [_label_record(f"c{i}", i + 1, "yes", "no") for i in range(6)]
    ids = [r["id"] for r in recs]
    read_back = []
    original = RunStore._cases_match_digest

    def spy(self, run_id, streamed):
        read_back.append(run_id)
        return original(self, run_id, streamed)

    monkeypatch.setattr(RunStore, "_cases_match_digest", spy)
    with RunStore(tmp_path / "g.db") as st:
        for key, per_example, note in (("ok", _streamed(ids), False), ("swapped", _streamed([ids[1], ids[0], *ids[2:]]), True),
                                       ("short", _streamed(ids[:5]), True)):
            run_id = st.create_run(meta(key))
            rec = Recorder(st, run_id, background=False)
            rec.per_example_in_cases = True
            _Coder(rec).send(recs)
            rec.finish({"aggregate": {"n": 6}, "per_example": per_example})
            rec.close()
            stored = orjson.loads(st.db.execute("SELECT results FROM runs WHERE id = ?", (run_id,)).fetchone()[0])
            assert ("note" in stored["per_example"]) is note, key
            assert [e["id"] for e in st.get_run(run_id)["results"]["per_example"]] == ids
        assert read_back == []
        # every case's ids (status None) with an unscored case recorded one by one: not covered, read back
        run_id = st.create_run(meta("all"))
        rec = Recorder(st, run_id, background=False)
        rec.per_example_in_cases = True
        _Coder(rec).send(recs)
        rec.record({"id": "u1", "status": "unscored", "line": 50, "reason": "r"})
        rec.finish({"aggregate": {"n": 7}, "per_example": _streamed(ids + ["u1"], status=None)})
        rec.close()
        assert read_back == [run_id]
        stored = orjson.loads(st.db.execute("SELECT results FROM runs WHERE id = ?", (run_id,)).fetchone()[0])
        assert "note" not in stored["per_example"]
