"""The join of a case file with an attempt file by id, in memory that does not grow with the cases.

:func:`goldeval.answers.batch.joined_rows` streams the case file and looks each case's attempt up here. What stays
in memory for a JSONL attempt file is about 25 bytes an attempt (its id's 64-bit hash, its byte offset and line, a
"used" flag, its place in the hash order): the attempt itself is read again from its line when its case comes.
Repeated ids in either file are found as :func:`goldeval.io.reading.check_ids` finds them, but only the ids whose hash a
first pass saw twice are remembered (:func:`repeated_id_hashes`, the bounded first pass of
:mod:`goldeval.io.ids`). CSV and Parquet attempt files are kept in memory, by id, as before.

Hashes are compared only within one process (Python randomises ``hash`` of a string per process); a hash shared by
two different ids is told apart by reading the candidates' lines.
"""

from __future__ import annotations

import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from goldeval.errors import InputError
from goldeval.io.ids import scan_jsonl_ids
from goldeval.io.reading import (
    Row,
    RowError,
    check_ids,
    check_input_file,
    decode_line,
    is_delimited,
    is_parquet,
    read_rows,
    usable_id,
)

__all__ = ["AttemptIndex", "repeated_id_hashes"]


def _jsonl(path: Path) -> bool:
    return not (is_delimited(path) or is_parquet(path))


def repeated_id_hashes(path: str | Path) -> set[int] | None:
    """The hashes of the ids that may occur on more than one row of a JSONL file (a superset: every repeated id's
    hash is in it), for :func:`goldeval.io.reading.check_ids`'s ``repeated``; ``None`` for CSV and Parquet (their ids are
    then all kept).

    One read of the file (:func:`goldeval.io.ids.scan_jsonl_ids`) with the id rule of :func:`goldeval.io.reading.usable_id`;
    a line orjson refuses is read by :func:`goldeval.io.reading.decode_line`. Memory: a few MiB whatever the rows.
    """

    p = Path(path)
    if not _jsonl(p):
        return None

    def slow(line: int, raw: bytes) -> dict[str, Any] | None:
        item = decode_line(raw, line, p.name, id_field="id")
        return item.data if type(item) is Row else None

    return scan_jsonl_ids(p, "id", usable_id, slow_decode=slow)[2]


class AttemptIndex:
    """The attempts of one file, found by id; each one found is marked used.

    A JSONL file is indexed by byte offset (sorted 64-bit id hashes, offsets, lines: about 25 bytes an attempt);
    :meth:`find` reads the attempt again from its line. CSV and Parquet rows are kept in memory by id.

    Args:
        path: The attempt file.
        failures: A list to which every row that cannot be used is appended, as the file is read:
            ``{"line", "id", "error", "file"}`` (not JSON, not an object, no usable id, an id that repeats an
            earlier row's: :func:`goldeval.io.reading.check_ids`'s messages).

    Raises:
        InputError: the file is missing, empty, or holds only blank lines.
    """

    def __init__(self, path: str | Path, failures: list[dict[str, Any]]) -> None:
        p = Path(path)
        self.name, self.path = p.name, p
        self._fh: Any = None
        self._rows: dict[str, tuple[int, Any]] | None = None
        self._used_ids: set[str] = set()
        if not _jsonl(p):
            self._rows = {}
            for item in check_ids(read_rows(p), file_name=p.name):
                if isinstance(item, RowError):
                    failures.append({"line": item.line, "id": item.id, "error": item.error, "file": p.name})
                else:
                    assert isinstance(item, Row)
                    self._rows[str(item.data["id"])] = (item.line, item.data)
            return

        import numpy as np  # start-up: numpy / scipy load only when this runs

        check_input_file(p)
        repeated = repeated_id_hashes(p)
        hashes, offsets, lines = array.array("q"), array.array("q"), array.array("i")
        state = {"offset": 0}

        def rows() -> Iterator[Row | RowError]:
            seen_any = False
            with p.open("rb") as fh:
                for lineno, raw in enumerate(fh, start=1):
                    start = state["offset"]
                    state["offset"] = start + len(raw)
                    if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                        raw, start = raw[3:], start + 3
                    if not raw.strip():
                        continue
                    seen_any = True
                    state["start"] = start
                    yield decode_line(raw, lineno, p.name, id_field="id")
            if not seen_any:

                raise InputError(f"{p}: holds no rows (only blank lines), expected one JSON object per line.")

        for item in check_ids(rows(), file_name=p.name, repeated=repeated):
            if isinstance(item, RowError):
                failures.append({"line": item.line, "id": item.id, "error": item.error, "file": p.name})
                continue
            hashes.append(hash(str(item.data["id"])))
            offsets.append(state["start"])  # (check_ids passes each row on before the next line is read)
            lines.append(item.line)
        h = np.frombuffer(hashes, dtype=np.int64) if hashes else np.zeros(0, dtype=np.int64)
        self._order = np.argsort(h, kind="stable").astype(np.int32 if len(h) < 2**31 else np.int64)
        self._hashes = h[self._order]
        del h, hashes
        self._offsets = np.frombuffer(offsets, dtype=np.int64) if offsets else np.zeros(0, dtype=np.int64)
        self._lines = lines
        self._used = np.zeros(len(self._offsets), dtype=bool)

    def _read(self, pos: int) -> dict[str, Any]:
        if self._fh is None:
            self._fh = self.path.open("rb")
        self._fh.seek(int(self._offsets[pos]))
        item = decode_line(self._fh.readline(), self._lines[pos], self.name)  # read and checked once already
        if isinstance(item, RowError):  # the file changed since it was read
            raise InputError(f"{item.error} The file changed while it was judged; run again on a file left as it is.")
        return item.data

    def find(self, rid: str) -> tuple[int, dict[str, Any]] | None:
        """``(line, attempt)`` of the attempt with id *rid* (marked used), or ``None``."""
        if self._rows is not None:
            got = self._rows.get(rid)
            if got is not None:
                self._used_ids.add(rid)
            return got
        h = hash(rid)
        i = int(self._hashes.searchsorted(h))
        while i < len(self._hashes) and self._hashes[i] == h:
            pos = int(self._order[i])
            data = self._read(pos)
            if str(data["id"]) == rid:
                self._used[pos] = True
                return self._lines[pos], data
            i += 1  # another id with the same hash
        return None

    def unused(self) -> Iterator[tuple[int, str]]:
        """``(line, id)`` of every attempt :meth:`find` never returned, in file order."""
        if self._rows is not None:
            for aid, (line, _) in self._rows.items():
                if aid not in self._used_ids:
                    yield line, aid
            return
        import numpy as np  # start-up: numpy / scipy load only when this runs

        for pos in np.flatnonzero(~self._used):
            yield self._lines[int(pos)], str(self._read(int(pos))["id"])

    def close(self) -> None:
        """Close the file the attempts are read from (reopened by the next :meth:`find`)."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def read_keyed_rows(path: str | Path, label: str, failures: list[dict[str, Any]]) -> tuple[dict[str, tuple[int, dict[str, Any]]], list[str]]:
    """Rows of a case or attempt file by id: ``({id: (line, row)}, ids in file order)``; a row that cannot be used
    is appended to *failures* as ``{"line", "id", "error", "file": label}``."""
    p = Path(path)
    out: dict[str, tuple[int, dict[str, Any]]] = {}
    order: list[str] = []
    for item in check_ids(read_rows(p, id_field="id"), file_name=p.name):
        if isinstance(item, RowError):
            failures.append({"line": item.line, "id": item.id, "error": item.error, "file": label})
            continue
        assert isinstance(item, Row)
        rid = str(item.data["id"])
        out[rid] = (item.line, item.data)
        order.append(rid)
    return out, order
