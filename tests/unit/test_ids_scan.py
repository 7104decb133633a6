"""The first pass over a JSONL file (goldeval.io.ids.scan_jsonl_ids) and the batched per_example writer
(goldeval.io.resultsfile.ResultsFile.examples): the fast block paths give what the line-by-line definitions give.

Expected values come from plain definitions written here: every line read by ``json.loads`` on its own (the
repeated ids are those seen on two or more lines), and the bytes of :meth:`ResultsFile.example` called once per
entry.
"""

from __future__ import annotations

import json
import random

import pytest

import goldeval.io.ids as ids
from goldeval.labels.reader import _strict_or_none, label_id
from goldeval.io.resultsfile import ResultsFile


def _reference(lines: list[bytes]) -> tuple[int, int, set[int]]:
    """(lines, non-blank lines, hashes of the ids on two or more rows) by the documented rule, one line at a time:
    an ASCII line that starts '{"id":"' (or '{"id": "') and names "id" once gives the text up to the next quote
    when it holds no backslash (unparsed: the scoring pass reports a broken line); any other line is read by
    json.loads."""
    seen: dict[str, int] = {}
    n_rows = 0
    for k, raw in enumerate(lines):
        if k == 0 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if not raw.strip():
            continue
        n_rows += 1
        rid = None
        for prefix in (b'{"id":"', b'{"id": "'):
            if raw.isascii() and raw.startswith(prefix) and raw.count(b'"id"') == 1:
                text = raw[len(prefix):].split(b'"', 1)
                if len(text) == 2 and b"\\" not in text[0]:
                    rid = label_id(text[0].decode())
        if rid is None:
            try:
                data = json.loads(raw)
            except ValueError:
                continue
            if isinstance(data, dict):
                rid = label_id(data.get("id"))
        if rid is not None:
            seen[rid] = seen.get(rid, 0) + 1
    return len(lines), n_rows, {hash(r) for r, c in seen.items() if c > 1}


def _line(rnd: random.Random, k: int) -> bytes:
    kind = rnd.random()
    rid = f"r{rnd.randrange(40)}"  # ids repeat often: every block has repeats across blocks
    if kind < 0.55:
        return json.dumps({"id": rid, "gold": "a", "pred": "b"}, separators=(",", ":")).encode() + b"\n"
    if kind < 0.65:
        return json.dumps({"id": rid, "gold": "a"}).encode() + b"\n"  # '{"id": "' with a space
    if kind < 0.70:
        return b"\n"  # blank
    if kind < 0.75:
        return json.dumps({"id": rid + '"q', "gold": "x"}).encode() + b"\n"  # an escape in the id: full parse
    if kind < 0.80:
        return json.dumps({"id": rid + "é", "gold": "x"}, ensure_ascii=False).encode() + b"\n"  # not ASCII
    if kind < 0.84:
        return json.dumps({"gold": "x", "id": rid}).encode() + b"\n"  # the id not first
    if kind < 0.87:
        return json.dumps({"id": rid, "note": '"id"'}).encode() + b"\n"  # the field's name twice on the line
    if kind < 0.90:
        return json.dumps({"id": k, "gold": "x"}).encode() + b"\n"  # an integer id: its decimal string
    if kind < 0.93:
        return b'{"id":"' + rid.encode() + b'", broken\n'  # not JSON: no id
    if kind < 0.96:
        return json.dumps({"id": "", "gold": "x"}).encode() + b"\n"  # an empty id: none
    return json.dumps([rid]).encode() + b"\n"  # not an object


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("block", [7, 64, 1 << 17])
@pytest.mark.parametrize("way", ["python", "c", "c-buckets-only"])
def test_scan_blocks_equal_the_line_by_line_definition(tmp_path, monkeypatch, seed, block, way):
    # python: every C kernel off (the definition); c: the prefix rule in C (ids_as_text) and the buckets in C;
    # c-buckets-only: the Python blocks, the buckets in C
    rnd = random.Random(seed)
    lines = [_line(rnd, k) for k in range(rnd.randrange(1, 400))]
    if seed % 3 == 0:
        lines[0] = b"\xef\xbb\xbf" + lines[0]  # a byte-order mark on line 1
    if seed % 2 == 0:
        lines[-1] = lines[-1].rstrip(b"\n")  # no newline at the end
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"".join(lines))
    monkeypatch.setattr(ids, "SCAN_BLOCK", block)  # blocks of a few bytes: cut at every line, and mixed blocks
    monkeypatch.setattr(ids, "BUCKET_ROWS", 50)  # many flushes
    monkeypatch.setattr(ids, "BUCKET_SET", 16)  # several bucket files
    monkeypatch.setattr(ids, "SPILL_ROWS", 100)  # spilled to the files after two flushes
    if way == "python":
        for name in ("_fast_scan_ids", "_fast_partition", "_fast_repeated_of"):
            monkeypatch.setattr(ids, name, None)
    else:
        assert ids._fast_scan_ids is not None  # (the extension is built by pip install -e .)
    got = ids.scan_jsonl_ids(path, "id", label_id, slow_decode=_strict_or_none, ids_as_text=way == "c")
    n_lines, n_rows, repeated = _reference(lines)
    assert got == (n_lines, n_rows, repeated)


def test_scan_hasher_sees_every_byte(tmp_path, monkeypatch):
    import hashlib

    data = b"".join(json.dumps({"id": f"c{k}"}).encode() + b"\n" for k in range(500)) + b'{"id":"last"}'
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + data)
    monkeypatch.setattr(ids, "SCAN_BLOCK", 100)
    h = hashlib.sha256()
    assert ids.scan_jsonl_ids(path, "id", label_id, hasher=h)[:2] == (501, 501)
    assert h.hexdigest() == hashlib.sha256(b"\xef\xbb\xbf" + data).hexdigest()


def test_c_scan_ids_reads_the_prefix_rule():
    import array

    from goldeval import _fast

    block = (b'{"id":"r0","x":1}\n{"id": "ab"}\n\n{"x":1}\n{"id":"\xc3\xa9"}\n{"id":""}\n{"id":"a\\"}\n'
             b'{"id":"q","y":"id."}\n{"id":"s","n":{"id":1}}\nlast')
    n, found, slow = _fast.scan_ids(block, b'"id"')
    # by hand: lines 0, 1 and 7 (the text "id." is not the quoted name: named once) take the rule; 2 is blank, 3 has
    # no id first, 4 is not ASCII, 5 is empty, 6 holds a backslash, 8 names "id" twice, 9 is the last piece
    assert n == 10 and array.array("q", found).tolist() == [hash("r0"), hash("ab"), hash("q")]
    lines = block.split(b"\n")
    assert [i for i, _, _ in slow] == [2, 3, 4, 5, 6, 8, 9]
    assert [block[s:e] for _, s, e in slow] == [lines[i] + (b"\n" if i < 9 else b"") for i in (2, 3, 4, 5, 6, 8, 9)]
    assert _fast.repeated_of(array.array("q", [3, -1, 3, 3, 7, -1, 0])) == [3, -1]  # (by their second occurrence)
    data, sizes = _fast.partition_hashes(array.array("q", [5, -3, 5, 7, -3, 9]), 3)
    assert sizes == [3, 1, 2] and array.array("q", data).tolist() == [-3, -3, 9, 7, 5, 5]  # Python's -3 % 3 == 0


@pytest.mark.parametrize("c", [True, False])
def test_buckets_find_repeats_across_many_files(monkeypatch, c):
    if not c:
        monkeypatch.setattr(ids, "_fast_partition", None)
        monkeypatch.setattr(ids, "_fast_repeated_of", None)
    # 40,000 hashes over 3 bucket files, in blocks of 1,000: the repeats are exactly those added twice
    monkeypatch.setattr(ids, "BUCKET_ROWS", 1000)
    monkeypatch.setattr(ids, "SPILL_ROWS", 5000)  # the first 5,000 kept in memory, then every block to the files
    rnd = random.Random(5)
    values = [rnd.getrandbits(63) - (1 << 62) for _ in range(40_000)]
    twice = set(values[::97])
    b = ids.HashBuckets(3 * ids.BUCKET_SET)
    assert b.n == 3
    for v in values + sorted(twice):
        b.add(v)
    assert b.tmpdir is not None and sum(f is not None for f in b.files) == 3  # spilled: all three files
    assert b.repeated() == twice
    assert b.tmpdir is None


@pytest.mark.parametrize("c", [True, False])
def test_buckets_below_the_spill_size_open_no_file(monkeypatch, c):
    # A hint of many rows (512 buckets) but fewer hashes than SPILL_ROWS (100k long notes: the hint was ~8.7M rows
    # from the file's size): every block stays in memory, no file is opened, and the repeats are the same ones
    if not c:
        monkeypatch.setattr(ids, "_fast_partition", None)
        monkeypatch.setattr(ids, "_fast_repeated_of", None)
    monkeypatch.setattr(ids, "BUCKET_ROWS", 1000)
    monkeypatch.setattr(ids, "SPILL_ROWS", 12_000)
    rnd = random.Random(6)
    values = [rnd.getrandbits(63) - (1 << 62) for _ in range(11_000)]
    twice = set(values[5::89])
    b = ids.HashBuckets(10_000_000)
    assert b.n == 512
    for v in values + sorted(twice):  # 11,124 hashes: 11 flushed blocks and the rest flushed by repeated()
        b.add(v)
    assert b.tmpdir is None and b.files == [None] * 512
    assert b.repeated() == twice
    assert ids.HashBuckets(10_000_000).repeated() == set()  # nothing added


_TRICKY = ['},{"id":"x"}', 'a"b', "back\\slash", "é ü ∑", "\u2028", "", "line\nbreak", '{"', "}"]


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_examples_flat_writes_what_example_writes(tmp_path, fmt):
    rnd = random.Random(11)
    entries = [{"id": f"c{k}", "line": k + 1, "gold": rnd.choice(_TRICKY), "pred": rnd.choice([*_TRICKY, None]),
                "outcome": rnd.choice(["tp", "fp", "fn", "tn"]), "score": rnd.random(), "ok": k % 2 == 0}
               for k in range(300)]
    one, many, flat = (tmp_path / f"{name}.{fmt}" for name in ("one", "many", "flat"))
    with ResultsFile(str(one), fmt) as w:
        w.begin({"scorer": {"name": "t"}})
        for e in entries:
            w.example(e)
        w.close({"aggregate": {"n": 300}})
    for path, flat_ in ((many, False), (flat, True)):
        with ResultsFile(str(path), fmt) as w:
            w.begin({"scorer": {"name": "t"}})
            for k in range(0, 300, 64):
                w.examples(entries[k:k + 64], flat=flat_)
            w.examples([], flat=flat_)
            w.close({"aggregate": {"n": 300}})
    assert many.read_bytes() == one.read_bytes()
    assert flat.read_bytes() == one.read_bytes()
    if fmt == "json":
        assert [e["gold"] for e in json.loads(flat.read_bytes())["per_example"]] == [e["gold"] for e in entries]


def test_labels_read_integers_past_64_bits_in_the_fields_they_score(tmp_path):
    # The labels pass re-reads a line exactly only when a field it scores holds an integer orjson rounded
    # (labelfile._jsonl_items(fields=...)); a big integer elsewhere on the line is never read. By hand:
    # a: gold ...617, pred ...616 -> fn (orjson alone makes both 1.8446744073709552e19: the same label, a tp);
    # b: tp; c: tn. precision 1/1, recall 1/2.
    from goldeval.labels import score_label_file

    path = tmp_path / "big.jsonl"
    path.write_text('{"id":"a","gold":18446744073709551617,"pred":18446744073709551616}\n'
                    '{"id":"b","gold":18446744073709551617,"pred":18446744073709551617}\n'
                    '{"id":"c","gold":"x","pred":"x","meta":18446744073709551617}\n')
    res = score_label_file(path, positive="18446744073709551617")
    assert [(e["gold"], e["pred"], e["outcome"]) for e in res["per_example"]] == [
        ("18446744073709551617", "18446744073709551616", "fn"),
        ("18446744073709551617", "18446744073709551617", "tp"),
        ("x", "x", "tn"),
    ]
    assert (res["aggregate"]["precision"], res["aggregate"]["recall"]) == (1.0, 0.5)
