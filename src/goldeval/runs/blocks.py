"""The formats of a run store's case blocks (``case_blocks``: many ``scored`` cases a row), written and read back.

A block stands for ``n`` consecutive cases from ``seq0``, each the ``cases`` row :meth:`goldeval.runs.recorder.Recorder.record`
would store for the same record. Its ``format`` (column added by migration m007; the blocks written before it are
format 1) says how its ``data`` is laid out; its ``ids`` is the same in every format: one zstd frame of the cases'
ids as JSON (orjson's spelling), comma-separated, in order (what a finished run's ids digest is checked against).

* :data:`FORMAT_JSON_LINES` (1): ``data`` is one zstd frame of the records' JSON, one a line
  (:meth:`goldeval.runs.recorder.Recorder.record_lines`).
* :data:`FORMAT_CODED` (2): the records all have the shape ``{"id": <id>, "status": "scored", "line": <line>`` and a
  *tail*: the rest of the object, members and closing brace, from a small table (``goldeval labels``: the gold label,
  the prediction and the outcome, a few dozen distinct tails for a million cases). ``data`` is one zstd frame of a
  JSON header line ``{"lines": [[first line, count], ...], "tails": {"<code>": "<tail>", ...}}`` and then one
  little-endian uint32 a case: its tail's code (:meth:`goldeval.runs.recorder.Recorder.record_coded`). A case's
  record is rebuilt as ``'{"id":' + <its id's JSON> + ',"status":"scored","line":' + <line> + <tail>``: the bytes
  :meth:`~goldeval.runs.recorder.Recorder.record` stores for the same dict. Per case that is ~4 bytes to compress
  (and ~1 stored) where the JSON is ~70: the writer's cost is the ids.
* :data:`FORMAT_CODED_STATUS_FIRST` (3): as format 2 for records of the shape ``{"status": "scored", "id": <id>,
  "line": <line>`` and a tail (what :meth:`~goldeval.runs.recorder.Recorder.record` stores for ``record(case,
  status="scored")``: ``goldeval score``'s token-F1 cases, whose tails, ``,"whole_note":{...},"tokens":{...}}``, are
  a few hundred for a million short rows). A record is rebuilt as ``'{"status":"scored","id":' + <its id's JSON> +
  ',"line":' + <line> + <tail>``. :meth:`~goldeval.runs.recorder.Recorder.record_lines` writes a block of this
  format when every record of the block has that shape, its id is a JSON string without an escape and its line
  is written as ``str(int)`` writes it (``goldeval._fast.code_records``; else, or without the C build, format 1).

Source: issue 31 item 1 (the store on costs little on every path); ``benchmarks/README.md`` has the measurements.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import orjson
import zstandard

from goldeval.errors import StoreError
from goldeval.runs.columns import case_columns, case_status

__all__ = ["FORMAT_JSON_LINES", "FORMAT_CODED", "FORMAT_CODED_STATUS_FIRST", "CODED_KEYS", "ZSTD_BLOCK_LEVEL", "block_records", "compress_block", "encode_coded",
           "check_tail", "block_rows"]

#: ``case_blocks.format`` of a block of JSON lines (every block written before migration m007).
FORMAT_JSON_LINES = 1
#: ``case_blocks.format`` of a coded block (ids, line numbers and tail codes).
FORMAT_CODED = 2
#: ``case_blocks.format`` of a coded block whose records start with ``"status"`` (then ``"id"``, ``"line"``).
FORMAT_CODED_STATUS_FIRST = 3
#: The members a coded record holds before its tail (a tail may not name them again).
CODED_KEYS = frozenset({"id", "status", "line"})

#: How a block's frames are compressed (level 1: the block is written beside the scorer, and a higher level saves
#: little on ids and codes).
ZSTD_BLOCK_LEVEL = 1

_PREFIX = ',"status":"scored","line":'
#: How each coded format spells a record before its id's JSON, and between the id and the line number.
_CODED_SPELLING = {FORMAT_CODED: ('{"id":', _PREFIX), FORMAT_CODED_STATUS_FIRST: ('{"status":"scored","id":', ',"line":')}


def compress_block(records: bytes, ids: bytes) -> tuple[bytes, bytes]:
    """A format-1 block's records and ids (see :meth:`goldeval.runs.store.RunStore.write_case_block`) as the store
    keeps them: each one zstd frame (a compressor per call: one is not thread-safe).

    Example:
        >>> data, ids = compress_block(b'{"id":"a","status":"scored"}', b'"a"')
        >>> zstandard.ZstdDecompressor().decompress(ids)
        b'"a"'
    """
    cctx = zstandard.ZstdCompressor(level=ZSTD_BLOCK_LEVEL)
    return cctx.compress(records), cctx.compress(ids)


def check_tail(tail: bytes) -> dict[str, Any]:
    """The members a coded record's *tail* adds (``b',"gold":"a","pred":null,"outcome":"tn"}'`` → ``{"gold": "a",
    "pred": None, "outcome": "tn"}``).

    Raises:
        StoreError: *tail* does not start with a comma and close the object, is not JSON, or names ``id``,
            ``status`` or ``line`` again (the rebuilt record would hold a member twice).

    Example:
        >>> check_tail(b',"gold":"a","pred":null,"outcome":"tn"}')
        {'gold': 'a', 'pred': None, 'outcome': 'tn'}
    """
    if not (tail.startswith(b',"') and tail.endswith(b"}")) or b"\n" in tail:
        raise StoreError(f"run store: a coded block's tail must be ',\"name\":value...}}' on one line, got {tail[:80]!r}.")
    try:
        obj = orjson.loads(b'{"_":0' + tail)
    except orjson.JSONDecodeError as exc:
        raise StoreError(f"run store: a coded block's tail {tail[:80]!r} is not JSON ({exc}).") from None
    if type(obj) is not dict:
        raise StoreError(f"run store: a coded block's tail {tail[:80]!r} does not close the record's object.")
    del obj["_"]
    twice = CODED_KEYS & obj.keys()
    if twice:
        raise StoreError(f"run store: a coded block's tail {tail[:80]!r} names {', '.join(sorted(twice))} again.")
    return obj


def encode_coded(lines: list[list[int]], codes: bytes, tails: Mapping[int, bytes],
                 cache: dict[int, bytes] | None = None) -> bytes:
    """A coded block's ``data`` before compression: the header line and the codes (*codes* in native byte order,
    one uint32 a case; stored little-endian).

    Args:
        lines: ``[first line, count]`` runs, in order; the counts add up to the block's cases.
        codes: One uint32 a case (``array("I")`` bytes).
        tails: code → tail bytes, for every code *codes* holds (more are allowed).
        cache: code → that tail's member of the header's ``"tails"`` object (``"<code>":"<tail>"`` as JSON),
            filled here: a caller writing many blocks with the same table passes one dict, and each tail is
            encoded once (the same bytes).

    Example:
        >>> data = encode_coded([[3, 1]], array("I", [0]).tobytes(), {0: b',"x":1}'})
        >>> data.split(b"\\n", 1)[0]
        b'{"lines":[[3,1]],"tails":{"0":",\\\\"x\\\\":1}"}}'
        >>> encode_coded([[3, 1]], array("I", [0]).tobytes(), {0: b',"x":1}'}, {}) == data
        True
    """
    if sys.byteorder != "little":  # pragma: no cover - (every platform goldeval is tested on is little-endian)
        swapped = array("I", codes)
        swapped.byteswap()
        codes = swapped.tobytes()
    if cache is None:
        header = orjson.dumps({"lines": lines, "tails": {str(c): t.decode("utf-8") for c, t in tails.items()}})
        return header + b"\n" + codes
    members = []
    for c, t in tails.items():
        member = cache.get(c)
        if member is None:  # (what orjson.dumps writes for the member in the dict above)
            member = cache[c] = orjson.dumps({str(c): t.decode("utf-8")})[1:-1]
        members.append(member)
    return b'{"lines":' + orjson.dumps(lines) + b',"tails":{' + b",".join(members) + b"}}\n" + codes


def block_rows(blocks: Iterable[tuple[Any, ...]], status: str | None) -> Iterator[tuple[Any, ...]]:
    """The ``cases`` rows ``(case_id, seq, status, verdict, score, reason, raw, data)`` that *blocks* stand for, in
    order; only those of *status* when given (a block holds ``scored`` cases only).

    Args:
        blocks: ``(seq0, n, data, ids, format)`` of each block, by ``seq0`` (``ids`` is read for format 2 only).

    Raises:
        StoreError: a block is not what its row says (count, format, a record that is not a scored case): the
            store is damaged.
    """
    dctx = zstandard.ZstdDecompressor()
    loads = orjson.loads
    tails: dict[str, tuple[Any, ...]] = {}  # a tail's text → its columns, checked once for every block read here
    for seq0, n, blob, id_blob, fmt in blocks:
        if fmt in _CODED_SPELLING:
            if status is None or status == "scored":
                yield from _coded_rows(dctx, seq0, n, bytes(blob), bytes(id_blob), fmt, tails)
            continue
        if fmt != FORMAT_JSON_LINES:
            raise StoreError(f"run store: the block from seq {seq0} has format {fmt!r}, which this goldeval does not "
                             "know (written by a newer goldeval?). Upgrade goldeval.")
        for seq, data in enumerate(_json_lines(dctx, seq0, n, blob), seq0):
            case = loads(data)
            columns = case_columns(case)
            if columns[0] != "scored":
                raise _not_scored(seq, columns[0])
            if status is None or columns[0] == status:
                yield (case["id"], seq, *columns, data)


def block_records(blocks: Iterable[tuple[int, int, bytes]], status: str | None) -> Iterator[tuple[str, int, dict[str, Any]]]:
    """``(case id, seq, record)`` of each case that blocks of JSON lines (format 1) stand for, in order, each record
    decoded once and checked as :func:`block_rows` checks it; only those of *status* when given. For a reader that
    wants the records, not the ``cases`` rows: the row's columns are not built.

    Args:
        blocks: ``(seq0, n, data)`` of each block, by ``seq0``; every one of format 1.

    Raises:
        StoreError: a block does not hold *n* records, or holds a case that is not ``scored``: the store is damaged.
    """
    dctx = zstandard.ZstdDecompressor()
    loads = orjson.loads
    for seq0, n, blob in blocks:
        for seq, data in enumerate(_json_lines(dctx, seq0, n, blob), seq0):
            case = loads(data)
            got = case_status(case)
            if got != "scored":
                raise _not_scored(seq, got)
            if status is None or got == status:
                yield case["id"], seq, case


def _json_lines(dctx: Any, seq0: int, n: int, blob: Any) -> list[str]:
    """The *n* records (JSON texts) of one format-1 block."""
    records: list[str] = dctx.decompress(bytes(blob)).decode().split("\n")
    if len(records) != n:
        raise StoreError(f"run store: a block of {n} cases from seq {seq0} holds {len(records)} records; the store "
                         "is damaged.")
    return records


def _not_scored(seq: int, got: Any) -> StoreError:
    return StoreError(f"run store: the case of seq {seq} in a block has status {got!r}, and a block holds scored cases "
                      "only; the store is damaged.")


def _coded_rows(dctx: Any, seq0: int, n: int, blob: bytes, id_blob: bytes, fmt: int = FORMAT_CODED,
                checked: dict[str, tuple[Any, ...]] | None = None) -> Iterator[tuple[Any, ...]]:
    """The rows of one coded block (see the module's notes); *checked*: tails already checked (text → columns)."""
    head, prefix = _CODED_SPELLING[fmt]
    checked = {} if checked is None else checked

    def damaged(why: str) -> StoreError:
        return StoreError(f"run store: the coded block of {n} cases from seq {seq0} {why}; the store is damaged.")

    try:
        raw = dctx.decompress(blob)
        ids = orjson.loads(b"[" + dctx.decompress(id_blob) + b"]")
        cut = raw.index(b"\n")
        header = orjson.loads(raw[:cut])
        lines, tail_texts = header["lines"], header["tails"]
    except (zstandard.ZstdError, orjson.JSONDecodeError, ValueError, KeyError, TypeError) as exc:
        raise damaged(f"cannot be read ({exc})") from None
    codes = array("I")
    codes.frombytes(raw[cut + 1:])
    if sys.byteorder != "little":  # pragma: no cover
        codes.byteswap()
    if len(codes) != n or len(ids) != n or sum(c for _, c in lines) != n:
        raise damaged(f"holds {len(codes)} codes, {len(ids)} ids and {sum(c for _, c in lines)} line numbers")
    tails: dict[int, tuple[str, tuple[Any, ...]]] = {}
    for code, text in tail_texts.items():
        columns = checked.get(text)
        if columns is None:
            obj = check_tail(text.encode("utf-8"))
            columns = checked[text] = case_columns({"status": "scored", **obj})
        tails[int(code)] = (text, columns)
    dumps = orjson.dumps
    i = 0
    for first, count in lines:
        for line in range(first, first + count):
            cid = ids[i]
            got = tails.get(codes[i])
            if got is None or cid.__class__ is not str:
                raise damaged(f"has a case (seq {seq0 + i}) with " + ("an id that is not text" if got else
                                                                      f"the code {codes[i]}, which it does not define"))
            yield (cid, seq0 + i, *got[1], head + dumps(cid).decode() + prefix + str(line) + got[0])
            i += 1
