"""Readers for the row files goldeval scores: JSONL, CSV and Parquet, streamed, with per-line errors.

A malformed row never stops a batch: it comes out as a :class:`RowError` with its line number and a message,
and the scorer counts it as a failure. A file that cannot be read at all (missing, not UTF-8, empty) raises
:class:`~goldeval.errors.InputError`.

Row numbers: a JSONL row is numbered by its 1-based line, a CSV row by its line with the header as line 1, and a
Parquet row by its 1-based row index in the file (so a JSONL file without blank lines, converted to Parquet, keeps
its numbers). Messages read ``file:N: ...`` in every format.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from goldeval.errors import InputError, given, shorten

__all__ = ["Row", "RowError", "check_input_file", "read_rows", "read_jsonl", "read_csv", "read_parquet", "is_parquet",
           "file_sha256", "remember_sha256", "check_ids"]

#: File name endings read as Parquet.
PARQUET_SUFFIXES = (".parquet", ".pq")
#: Rows decoded at a time from a Parquet file (memory stays flat whatever the file's size).
_PARQUET_BATCH = 4096

#: 20 digits in a row: an integer literal that may be past 64 bits, which orjson reads as a float.
_LONG_DIGITS = re.compile(r"\d{20}")


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _int_or_digits(literal: str) -> int | str:
    value = int(literal)
    return value if -(2**63) <= value < 2**64 else literal


def loads_exact(text: str) -> Any:
    """Parse one JSON document as :func:`orjson.loads` does, but never round an integer past 64 bits.

    orjson (3.8) reads an integer literal outside the 64-bit range (below -2**63 or from 2**64 on, e.g.
    ``18446744073709551617``) as a float, so two different account numbers become one value, and it cannot
    write such an integer back. A text that holds 20 digits in a row (the only way to write one) is re-read
    with the standard library, and each such integer becomes the string of its digits (``"18446744073709551617"``):
    every digit kept, and writable to results and the store. The answer judge reads numeric text as the integer
    it spells (identifiers are exact), so a golden and an answer still meet exactly when, and only when, their
    digits are equal. NaN and Infinity literals stay refused, as orjson refuses them. Every other text is
    orjson's reading, unchanged.

    Raises:
        orjson.JSONDecodeError (a ValueError): the text is not JSON.
    """
    data = orjson.loads(text)
    if _LONG_DIGITS.search(text) is not None:
        try:
            return json.loads(text, parse_int=_int_or_digits, parse_constant=_refuse_constant)
        except (ValueError, RecursionError):  # e.g. an integer of more than 4,300 digits: orjson's float stands
            return data
    return data
    return data


@dataclass(frozen=True, slots=True)
class Row:
    """One parsed row: its 1-based ``line`` in the file and the decoded JSON object ``data``."""

    line: int
    data: dict[str, Any]


@dataclass(frozen=True, slots=True)
class RowError:
    """A row that could not be used: 1-based ``line``, the row's ``id`` when one could be read, and ``error``."""

    line: int
    id: str | None
    error: str


def check_input_file(path: str | os.PathLike[str]) -> Path:
    """*path* as a Path, after checking it names a non-empty file.

    Raises:
        InputError: the file is missing, a folder, or empty (each with what to do).
    """
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: no such file. Check the path (relative paths start from {Path.cwd()}).")
    if p.is_dir():
        raise InputError(f"{p}: is a folder, expected a JSONL, CSV or Parquet file.")
    if p.stat().st_size == 0:
        raise InputError(f"{p}: the file is empty, expected one JSON object per line.")
    return p


def read_jsonl(path: str | os.PathLike[str]) -> Iterator[Row | RowError]:
    """Stream a JSONL file as :class:`Row` / :class:`RowError` items, one per non-blank line.

    Args:
        path: A UTF-8 file with one JSON object per line. Blank lines are skipped (not counted as rows).

    Yields:
        ``Row(line, data)`` for each JSON object; ``RowError(line, id, error)`` for a line that is not JSON,
        not an object, or not UTF-8 (the message gives the byte and its column).

    Raises:
        InputError: the file is missing, a folder, empty, or holds no row at all.
    """
    p = check_input_file(path)
    seen_any = False
    with p.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:  # this row fails alone, as a line that is not JSON does
                seen_any = True
                yield RowError(lineno, None, f"{p.name}:{lineno}: the line is not UTF-8 (byte {raw[exc.start]:#04x} at "
                               f"column {exc.start + 1}). Re-encode the file as UTF-8, e.g. `iconv -f latin1 -t utf-8`.")
                continue
            if lineno == 1 and text.startswith("\ufeff"):
                text = text[1:]
            if not text.strip():
                continue
            seen_any = True
            try:
                data = loads_exact(text)
            except orjson.JSONDecodeError as exc:
                yield RowError(lineno, None, f"{p.name}:{lineno}: not valid JSON ({exc}). Fix the line: one JSON object per line.")
                continue
            if not isinstance(data, dict):
                yield RowError(lineno, None, f"{p.name}:{lineno}: expected a JSON object, got {shorten(data)}.")
                continue
            yield Row(lineno, data)
    if not seen_any:
        raise InputError(f"{p}: holds no rows (only blank lines), expected one JSON object per line.")


def read_csv(path: str | os.PathLike[str]) -> Iterator[Row | RowError]:
    """Stream a CSV file with a header row as :class:`Row` items (values are strings; empty cells are ``None``).

    A row is numbered by its first line, the header being line 1 (a quoted field that holds a newline makes one
    row, reported at the line it starts on). The file is read strictly (Python's ``csv`` with ``strict=True``): a
    quote that is opened and never closed, or closed with other characters after it, makes that row a
    :class:`RowError` naming the line where the quote opened, and reading goes on from the next line — it never
    swallows the rows after it into one field. A line that is not UTF-8, or a row with more cells than the header,
    fails alone too; a row with fewer cells has ``None`` for the missing ones (as ``csv.DictReader``).

    Raises:
        InputError: missing or empty file, or a file without a header.
    """
    p = check_input_file(path)
    with p.open("rb") as fh:
        records = _csv_records(fh, p.name)
        header: list[str] | None = None
        for line, cells, error in records:
            if header is None:
                if error is not None or not cells:
                    raise InputError(f"{p}: no usable header row on line 1 ({error or 'empty'}); expected column names.")
                header = cells
                continue
            if error is not None:
                rid = cells[header.index("id")] if cells and "id" in header and header.index("id") < len(cells) else None
                yield RowError(line, rid, error)
                continue
            if not cells:  # a blank line, as csv.DictReader skips it
                continue
            if len(cells) > len(header):
                yield RowError(line, cells[header.index("id")] if "id" in header else None, f"{p.name}:{line}: more cells than header columns.")
                continue
            values = cells + [None] * (len(header) - len(cells))
            yield Row(line, {k: (v if v != "" else None) for k, v in zip(header, values, strict=True)})
    if header is None:
        raise InputError(f"{p}: no header row; expected column names on line 1.")


def _csv_records(fh: Any, name: str) -> Iterator[tuple[int, list[str], str | None]]:
    """``(first line, cells, error)`` per CSV record of the binary file *fh*; ``error`` is ``None`` or the message
    of a record that could not be read (bad quoting, not UTF-8), whose reading restarts on the line after its first
    one. The csv module reads one line at a time and never ahead, so a reader per record sees only that record."""
    pushback: list[tuple[int, bytes]] = []
    source = enumerate(fh, start=1)

    def next_line() -> tuple[int, bytes] | None:
        if pushback:
            return pushback.pop()
        return next(source, None)

    while True:
        first = next_line()
        if first is None:
            return
        consumed = [first]
        start, raw = first
        if start == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
            consumed[0] = (start, raw)
        bad: list[str] = []

        def lines() -> Iterator[str]:
            yield _csv_text(consumed[0][1], consumed[0][0], bad)
            while True:
                item = next_line()
                if item is None:
                    return
                consumed.append(item)
                yield _csv_text(item[1], item[0], bad)

        reader = csv.reader(lines(), strict=True)
        try:
            cells = next(reader, None)
        except csv.Error as exc:
            pushback.extend(reversed(consumed[1:]))  # read again from the line after the one the row started on
            head = consumed[0][1].decode("utf-8", "replace")
            cells = next(csv.reader([head.split('"', 1)[0]]), [])  # the cells before the quote (for the id)
            yield start, cells, (
                f"{name}:{start}: a quoted field opened on this line is not closed properly ({exc}); the row is "
                'skipped and reading goes on from the next line. Close the quote, or double a quote inside a '
                'quoted field ("").')
            continue
        if cells is None:
            return
        if bad:
            yield start, cells, bad[0]
            continue
        yield start, cells, None


def _csv_text(raw: bytes, line: int, bad: list[str]) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad.append(f"line {line}: the line is not UTF-8 (byte {raw[exc.start]:#04x} at column {exc.start + 1}). "
                   "Re-encode the file as UTF-8.")
        return raw.decode("utf-8", "replace")


def is_parquet(path: str | os.PathLike[str]) -> bool:
    """Whether *path* is read as Parquet (its name ends in ``.parquet`` or ``.pq``)."""
    return str(path).lower().endswith(PARQUET_SUFFIXES)


def read_parquet(path: str | os.PathLike[str]) -> Iterator[Row | RowError]:
    """Stream a Parquet file as :class:`Row` items, ``Row(index, data)`` with *index* the 1-based row index and
    *data* the row as Python values (pyarrow's ``to_pylist``: null → ``None``, a struct → dict, a list → list, a
    map → dict). Read in batches of 4,096 rows: memory does not grow with the file.

    Raises:
        InputError: pyarrow is not installed (``pip install 'goldeval[parquet]'``); the file is missing, empty, not
            Parquet, or holds no rows.
    """
    p = check_input_file(path)
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(f"{p}: reading Parquet needs pyarrow: pip install 'goldeval[parquet]' (or convert the file to JSONL).") from None
    try:
        pf = pq.ParquetFile(p)
    except Exception as exc:  # pyarrow raises ArrowInvalid / OSError subclasses for a file that is not Parquet
        raise InputError(f"{p}: not a Parquet file ({exc}). Pass a Parquet file, or JSONL / CSV by their extension.") from None
    if pf.metadata.num_rows == 0:
        raise InputError(f"{p}: holds no rows, expected one row per case.")
    return _parquet_rows(pf)


def _parquet_rows(pf: Any) -> Iterator[Row | RowError]:
    maps = [f.name for f in pf.schema_arrow if _has_map(f.type)]
    index = 0
    for batch in pf.iter_batches(batch_size=_PARQUET_BATCH):
        for data in batch.to_pylist():
            index += 1
            for name in maps:
                data[name] = _maps_as_dicts(data[name])
            yield Row(index, data)


def _has_map(t: Any) -> bool:
    import pyarrow as pa

    if pa.types.is_map(t):
        return True
    if pa.types.is_struct(t):
        return any(_has_map(t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _has_map(t.value_type)
    return False


def _maps_as_dicts(v: Any) -> Any:
    """pyarrow gives a map value as a list of (key, value) tuples: a dict is what a JSON object reads as."""
    if isinstance(v, list) and v and all(isinstance(x, tuple) and len(x) == 2 for x in v):
        return {k: _maps_as_dicts(x) for k, x in v}
    if isinstance(v, dict):
        return {k: _maps_as_dicts(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_maps_as_dicts(x) for x in v]
    return v


def read_rows(path: str | os.PathLike[str]) -> Iterator[Row | RowError]:
    """Stream rows from ``.csv``, ``.parquet`` / ``.pq`` (by extension) or JSONL (anything else). See
    :func:`read_jsonl`, :func:`read_csv`, :func:`read_parquet`."""
    if str(path).lower().endswith(".csv"):
        return read_csv(path)
    if is_parquet(path):
        return read_parquet(path)
    return read_jsonl(path)


def check_ids(items: Iterator[Row | RowError], *, id_field: str = "id", file_name: str = "") -> Iterator[Row | RowError]:
    """Pass rows through, turning a row without a usable ``id`` or with a repeated ``id`` into a :class:`RowError`.

    An id must be a non-empty string or an integer (integers are read as their decimal string).
    """
    seen: dict[str, int] = {}
    prefix = f"{file_name}:" if file_name else "line "
    for item in items:
        if isinstance(item, RowError):
            yield item
            continue
        raw = item.data.get(id_field)
        if isinstance(raw, bool) or not isinstance(raw, (str, int)) or raw == "":
            what = given(item.data, id_field)
            yield RowError(item.line, None, f"{prefix}{item.line}: field '{id_field}' must be a non-empty string, {what}. Give every row a stable id.")
            continue
        rid = str(raw)
        if rid in seen:
            yield RowError(item.line, rid, f"{prefix}{item.line}: id {rid!r} repeats line {seen[rid]}. Ids must be unique; remove or rename the duplicate.")
            continue
        seen[rid] = item.line
        yield item


#: (real path, device, inode, size, mtime_ns) → sha256, so one invocation hashes a large input once even when the
#: run store (run key) and the scorer (results["input"]) both ask.
_SHA256_MEMO: dict[tuple[str, int, int, int, int], str] = {}


def _memo_key(path: str | os.PathLike[str]) -> tuple[str, int, int, int, int]:
    st = os.stat(path)
    return (os.path.realpath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def remember_sha256(path: str | os.PathLike[str], digest: str) -> None:
    """Tell :func:`file_sha256` the sha256 of the file *path* as it is now (e.g. taken while it was written), so
    that it is not read again for it."""
    _SHA256_MEMO[_memo_key(path)] = digest


def file_sha256(path: str | os.PathLike[str]) -> str:
    """Hex sha256 of a file's bytes (the dataset hash recorded with a run).

    Remembered per process for an unchanged file (same path, inode, size and modification time in ns).
    """
    key = _memo_key(path)
    memo = _SHA256_MEMO.get(key)
    if memo is not None:
        return memo
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    digest = h.hexdigest()
    if len(_SHA256_MEMO) > 256:
        _SHA256_MEMO.clear()
    _SHA256_MEMO[key] = digest
    return digest
