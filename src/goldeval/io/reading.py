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
from typing import Any, BinaryIO

import orjson

from goldeval.errors import InputError, given, shorten
from goldeval.io.decoding import compression_of, encoding_of, utf16_hint

__all__ = ["Row", "RowError", "BigInt", "JSONLineError", "decode_json", "decode_line", "jsonl_lines", "check_input_file", "read_rows", "read_jsonl", "read_csv",
           "read_parquet", "is_parquet", "delimiter_of", "is_delimited",
           "file_sha256", "remember_sha256", "check_unchanged", "check_ids", "count_rows", "usable_id", "line_blocks"]

#: File name endings read as Parquet.
PARQUET_SUFFIXES = (".parquet", ".pq")
#: A first line that opens a JSON array of rows: "[", "[{", "[]" (a pretty-printed or one-line array).
_OPENS_ARRAY = re.compile(rb"\s*\[\s*(\{|\]|$)")
#: File name endings read as delimited text, and their delimiter.
DELIMITERS = {".csv": ",", ".tsv": "\t", ".tab": "\t"}
#: Rows decoded at a time from a Parquet file (memory stays flat whatever the file's size).
_PARQUET_BATCH = 4096


class JSONLineError(ValueError):
    """A line (one JSON document) that cannot be read: ``reason`` is the plain message, without the ``file:line:``
    prefix that the reader adds."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


#: A float from orjson at or past this magnitude may be an integer literal outside 64 bits that orjson rounded.
FLOAT_INT_LIMIT = 2.0**63
#: Digits (sign left out) up to which an integer literal is converted to int; a longer one is its digits (it is past
#: 64 bits whatever it is, and int() of one past 4,300 digits is refused by Python).
_INT_DIGITS = 20


class BigInt(str):
    """An integer literal outside 64 bits, kept as its digits (``BigInt("18446744073709551617")``).

    A ``str``, so that results and the run store write it (orjson writes no such integer) and so that an id or a
    label reads it as its decimal string, as it reads an integer; the answer judge reads numeric text as the integer
    it spells. A field that must hold text (a free-text prediction or reference, a section) refuses it as the number
    it is. Its ``repr`` is the digits, as the literal was written.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return str.__str__(self)


class _Refused(ValueError):
    """Raised inside the standard library's parser for a literal goldeval refuses; carries the reason."""


def _int_or_digits(literal: str) -> int | BigInt:
    if len(literal) - literal.startswith("-") > _INT_DIGITS:
        return BigInt(literal)
    value = int(literal)
    return value if -(2**63) <= value < 2**64 else BigInt(literal)


def _nonfinite(nonfinite: bool):
    def constant(name: str) -> float:
        if not nonfinite:
            raise _Refused(f"{name} is not JSON (JSON has no NaN or Infinity; Python's json.dump writes them). Write "
                           "null for a missing value, or the number")
        return float(name.replace("Infinity", "inf"))

    def number(literal: str) -> float:
        value = float(literal)
        if value in (float("inf"), float("-inf")):
            if not nonfinite:
                raise _Refused(f"the number {literal[:40]} is past the largest float (about 1.8e308). Write it as a "
                               "string if it is an identifier")
        return value

    return constant, number


def has_big_float(value: Any) -> bool:
    """Whether *value* (decoded JSON) holds a float of magnitude ≥ 2**63 anywhere: what orjson makes of an integer
    literal outside 64 bits (it is then read again exactly, see :func:`decode_json`)."""
    stack = [value]
    pop, extend = stack.pop, stack.extend
    while stack:
        v = pop()
        t = type(v)
        if t is float:
            if not -FLOAT_INT_LIMIT < v < FLOAT_INT_LIMIT:
                return True
        elif t is dict:
            extend(v.values())
        elif t is list:
            extend(v)
    return False


def decode_json(raw: bytes | str, *, nonfinite: bool = False, surrogates: bool = False,
                fields: tuple[str, ...] | None = None) -> Any:
    """Read one JSON document strictly and exactly: the one decoding path of goldeval's readers.

    orjson reads it when it can (fast). Where orjson's reading is not exact or refuses what the standard library
    can read, the standard library reads it again with goldeval's rules:

    * an integer literal outside 64 bits (below -2**63 or from 2**64 on; orjson makes a float of it, so
      ``18446744073709551617`` and ``18446744073709551616`` were the same value) becomes the string of its
      digits (a :class:`BigInt`, which a field that must hold text refuses): every digit kept, writable to results and the store, read by the answer judge as the integer it
      spells and by ids and labels as their text — as an integer id or label is read as its decimal string;
    * ``NaN``, ``Infinity``, ``-Infinity`` and a number past the largest float (``1e400``) are refused, with a
      reason that names the literal, unless *nonfinite* is true (then they are read as floats, for a reader whose
      scorer refuses them where it needs a number or a text, e.g. free text: a NaN text is not a string);
    * a lone surrogate escape (``"\\ud800"``, which orjson refuses) is refused with a reason (no UTF-8 output
      could hold it), unless *surrogates* is true (then it is read, for a scorer that says which field holds it);
    * nesting past the parser's depth is refused with a reason.

    Args:
        raw: The document as bytes (UTF-8) or text.
        nonfinite: Read NaN / Infinity / overflowing numbers as floats instead of refusing them.
        surrogates: Read lone surrogate escapes instead of refusing them.
        fields: Where orjson's reading is checked for a rounded integer: ``None`` (everywhere in the value) or the
            top-level fields a scorer reads as given (e.g. the id): a reader on the hot path that refuses any
            other non-text value in the fields it scores checks only those, and reads a row again with
            ``fields=None`` when it fails (so that its message quotes the digits as written).

    Returns:
        The decoded value (dict, list, str, int, float, bool or None).

    Raises:
        JSONLineError: the bytes are not UTF-8, or the text is not JSON by the rules above (``reason`` says why,
            with the column where the parser stopped).
    """
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return _decode_slow(raw, nonfinite, surrogates, exc)
    if fields is not None and type(data) is dict:
        for name in fields:
            v = data.get(name)
            if type(v) is float and not -FLOAT_INT_LIMIT < v < FLOAT_INT_LIMIT:
                return _decode_slow(raw, nonfinite, surrogates, None)
        return data
    if has_big_float(data):
        return _decode_slow(raw, nonfinite, surrogates, None)
    return data


def loads_exact(text: str | bytes) -> Any:
    """:func:`decode_json` with its defaults (kept for callers of the earlier name).

    Raises:
        JSONLineError (a ValueError): the text is not JSON, or holds NaN / Infinity.
    """
    return decode_json(text)


def not_utf8_advice(raw: bytes) -> str:
    """What to do about a line that is not UTF-8, fitted to its bytes: compressed bytes are decompressed (never
    re-encoded), UTF-16/32 text is converted from that encoding, anything else is re-encoded from its legacy one."""
    compression = compression_of(raw)
    if compression:
        return (f"The bytes are {compression}-compressed: give the compressed file to the goldeval command as it is "
                "(it reads gzip, bzip2, xz and zstd), or decompress it first")
    if raw.startswith(b"PAR1"):
        return "The file is Parquet: name it .parquet (or .pq) and it is read as Parquet"
    if raw.startswith(b"SQLite format 3\x00"):
        return "The file is a SQLite database, not rows: give it as --db (or --store), and the rows file here"
    hint = utf16_hint(raw)
    if hint:
        return hint[0].upper() + hint[1:]
    return "Re-encode the file as UTF-8, e.g. `iconv -f latin1 -t utf-8` if it was written in Latin-1"


def _lone_surrogate(value: Any) -> str | None:
    """The first string (or key) of *value* that holds a lone surrogate, shortened, else ``None``."""
    stack = [value]
    while stack:
        v = stack.pop()
        if type(v) is dict:
            stack.extend(v.keys())
            stack.extend(v.values())
        elif type(v) is list:
            stack.extend(v)
        elif type(v) is str:
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return shorten(v)
    return None


def _gap_before(text: str, pos: int) -> str:
    """The white space that ends at *pos* in *text* (what the JSON decoder skipped after a document)."""
    head = text[:pos]
    return head[len(head.rstrip()):]


def _decode_slow(raw: bytes | str, nonfinite: bool, surrogates: bool, first: Exception | None) -> Any:
    if isinstance(raw, (bytes, bytearray, memoryview)):
        raw = bytes(raw)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JSONLineError(f"the line is not UTF-8 (byte {raw[exc.start]:#04x} at column {exc.start + 1}). "
                                f"{not_utf8_advice(raw)}.") from None
    else:
        text = raw
    constant, number = _nonfinite(nonfinite)
    try:
        data = json.loads(text, parse_int=_int_or_digits, parse_float=number, parse_constant=constant)
    except _Refused as exc:
        raise JSONLineError(f"{exc}.") from None
    except RecursionError:
        raise JSONLineError("the JSON is nested too deep to read (over 1,000 levels of arrays or objects). Flatten "
                            "the row.") from None
    except ValueError as exc:
        if isinstance(exc, json.JSONDecodeError) and exc.msg == "Extra data" and "\r" in _gap_before(text, exc.pos):
            # One document, a bare carriage return, another: the lines end in \r alone (old Mac line endings), so
            # the whole file reads as one line. Say so, as the CSV reader does.
            raise JSONLineError(f"not valid JSON ({first or exc}): a carriage return (\\r) not followed by a line "
                                "feed ends the object before it, so the file looks like it has old Mac line endings; "
                                "convert them to \\n (e.g. `tr '\\r' '\\n'`).") from None
        hint = utf16_hint(text.encode("utf-8", "surrogatepass")) if "\x00" in text else None
        if hint:  # NUL bytes are UTF-8, so UTF-16/32 without a byte order mark fails here, not as "not UTF-8"
            raise JSONLineError(f"not valid JSON: {hint}.") from None
        stripped = text.lstrip("\ufeff \t")
        if stripped[:1] not in ("{", "[", '"') and ("\t" in stripped or "," in stripped):
            sep = "tabs" if "\t" in stripped else "commas"
            ending = ".tsv" if sep == "tabs" else ".csv"
            raise JSONLineError(f"not valid JSON ({first or exc}): the line holds cells separated by {sep}, so the file "
                                f"looks like {ending[1:].upper()}; name it {ending} and it is read as {ending[1:].upper()} "
                                "(a header row, then one row per case).") from None
        raise JSONLineError(f"not valid JSON ({first or exc}). Fix the line: one JSON object per line.") from None
    if not surrogates:
        bad = _lone_surrogate(data)
        if bad is not None:
            raise JSONLineError(f"the text {bad} holds a lone surrogate escape (\\ud800-\\udfff without its pair), which "
                                "has no UTF-8 form. Fix the escape.")
    return data


@dataclass(slots=True)  # not frozen: a frozen dataclass's __init__ costs 3x (one is made per row of every file)
class Row:
    """One parsed row: its 1-based ``line`` in the file and the decoded JSON object ``data`` (do not change them)."""

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
    try:
        with p.open("rb") as fh:
            head = fh.read(16)
    except OSError:
        return p  # its reader says why
    compression, encoding = compression_of(head), encoding_of(head)
    if compression or encoding:
        # the goldeval commands decode such a file first (goldeval.io.streams.decoded); a Python caller got here
        what = f"{compression}-compressed" if compression else f"{str(encoding).upper()} text (its byte order mark says so)"
        raise InputError(f"{p}: is {what}; this reader reads plain UTF-8. The goldeval commands read it as it is; in "
                         "Python, decode it first with goldeval.io.streams.decoded(path) and read the path it returns.")
    return p


def jsonl_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, bytes]]:
    """The non-blank lines of a JSONL file as ``(1-based line number, bytes)``, a UTF-8 byte order mark on line 1
    removed. The file is not checked here (see :func:`check_input_file`)."""
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if raw.strip():
                yield lineno, raw


def decode_line(raw: bytes, line: int, name: str, *, lenient: bool = False, id_field: str | None = None) -> Row | RowError:
    """One JSONL line as a :class:`Row`, or a :class:`RowError` with its message: :func:`decode_json` for every
    reader and engine (the local readers, the local engine's workers, the Spark executors), so a line fails, or
    not, with the same words wherever it is read.

    Args:
        raw: The line's bytes (a trailing newline is allowed; a byte order mark must be removed already).
        line: Its 1-based line number, for the message.
        name: The file's name, for the message (``name:line: ...``).
        id_field: When given, a line refused by the rules below that is an object under the lenient reading keeps
            that field as the error's id (:func:`_refused_id`): the judge's join then tells its case why its
            attempt was refused. Default ``None``: no id.
        lenient: Also read ``NaN`` / ``Infinity`` literals (Python's ``json.dump`` writes them) and lone surrogate
            escapes (``"\\ud800"``), as floats and text: the free-text scorer reads so (its texts are strings, a
            stray float field must not fail the row, and it refuses a surrogate in the id or a section name with
            its field). Default: refused, as :func:`decode_json` refuses them. Either way an integer past 64 bits
            keeps its digits (:class:`BigInt`).

    Returns:
        ``Row(line, data)`` for a JSON object; ``RowError(line, None, "name:line: reason")`` for a line that is not
        UTF-8 (the byte and its column), not JSON, nested too deep to read, refused by the rules above, or not an
        object.
    """
    try:
        data = decode_json(raw, nonfinite=lenient, surrogates=lenient)
    except JSONLineError as exc:  # this row fails alone
        rid = None if lenient or id_field is None else _refused_id(raw, id_field)
        return RowError(line, rid, f"{name}:{line}: {exc.reason}")
    if not isinstance(data, dict):
        return RowError(line, None, f"{name}:{line}: expected a JSON object, got {shorten(data)}.")
    return Row(line, data)


def _refused_id(raw: bytes, id_field: str) -> str | None:
    """The id of a line that is JSON only under the lenient reading (a ``NaN`` cell, a lone surrogate in a text),
    so that its case can say its attempt was refused and why, rather than that it has none; ``None`` when the
    line is not an object even so, or its *id_field* is not usable (:func:`usable_id`; a surrogate in the id itself
    stays refused)."""
    try:
        data = decode_json(raw, nonfinite=True, surrogates=True)
    except JSONLineError:
        return None
    rid = usable_id(data.get(id_field)) if isinstance(data, dict) else None
    return rid if rid is not None and not any("\ud800" <= c <= "\udfff" for c in rid) else None


def read_jsonl(path: str | os.PathLike[str], *, lenient: bool = False, id_field: str | None = None) -> Iterator[Row | RowError]:
    """Stream a JSONL file as :class:`Row` / :class:`RowError` items, one per non-blank line (:func:`decode_line`).

    Args:
        path: A UTF-8 file with one JSON object per line. Blank lines are skipped (not counted as rows).
        lenient: See :func:`decode_line` (NaN literals and lone surrogates read, not failed).

    Yields:
        ``Row(line, data)`` for each JSON object; ``RowError(line, id, error)`` for a line that is not JSON,
        not an object, or not UTF-8 (the message gives the byte and its column).

    Raises:
        InputError: the file is missing, a folder, empty, or holds no row at all.
    """
    p = check_input_file(path)
    seen_any = False
    for lineno, raw in jsonl_lines(p):
        if not seen_any and _OPENS_ARRAY.match(raw):
            raise InputError(f"{p}: line {lineno} opens a JSON array, and this reader reads one JSON object per line "
                             "(JSONL). The goldeval commands read a file that is one JSON array as rows; in Python, "
                             "decode it with goldeval.io.streams.decoded(path), or convert it: `jq -c '.[]' FILE > rows.jsonl`.")
        seen_any = True
        yield decode_line(raw, lineno, p.name, lenient=lenient, id_field=id_field)
    if not seen_any:
        raise InputError(f"{p}: holds no rows (only blank lines), expected one JSON object per line.")


def delimiter_of(path: str | os.PathLike[str]) -> str | None:
    """The cell delimiter of a delimited text file by its name: ``","`` for ``.csv``, a tab for ``.tsv`` and
    ``.tab``; ``None`` for any other name."""
    low = str(path).lower()
    for ending, delimiter in DELIMITERS.items():
        if low.endswith(ending):
            return delimiter
    return None


def is_delimited(path: str | os.PathLike[str]) -> bool:
    """Whether *path* is read as CSV or TSV (its name ends in ``.csv``, ``.tsv`` or ``.tab``)."""
    return delimiter_of(path) is not None


def read_csv(path: str | os.PathLike[str], *, delimiter: str | None = None) -> Iterator[Row | RowError]:
    """Stream a CSV (or TSV) file with a header row as :class:`Row` items (values are strings; empty cells are
    ``None``). The delimiter is *delimiter*, else the name's (:func:`delimiter_of`: a tab for ``.tsv`` and
    ``.tab``), else a comma.

    A row is numbered by its first line, the header being line 1 (a quoted field that holds a newline makes one
    row, reported at the line it starts on). The file is read strictly (Python's ``csv`` with ``strict=True``): a
    quote that is opened and never closed, or closed with other characters after it, makes that row a
    :class:`RowError` naming the line where the quote opened, and reading goes on from the next line — it never
    swallows the rows after it into one field. A line that is not UTF-8, or a row with more cells than the header,
    fails alone too; a row with fewer cells has ``None`` for the missing ones (as ``csv.DictReader``).

    Raises:
        InputError: missing or empty file, a file without a header, or a header that names a column twice
            (:func:`refuse_repeated_columns`).
    """
    p = check_input_file(path)
    with p.open("rb") as fh:
        records = _csv_records(fh, p.name, delimiter or delimiter_of(p) or ",")
        header: list[str] | None = None
        for line, cells, error in records:
            if header is None:
                if error is not None or not cells:
                    raise InputError(f"{p}: no usable header row on line 1 ({error or 'empty'}); expected column names.")
                refuse_repeated_columns(cells, f"{p.name}:1: the header")
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


def _csv_records(fh: Any, name: str, delimiter: str = ",") -> Iterator[tuple[int, list[str], str | None]]:
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

        def lines(consumed: list[tuple[int, bytes]], bad: list[str]) -> Iterator[str]:
            yield _csv_text(consumed[0][1], consumed[0][0], bad, name)
            while True:
                item = next_line()
                if item is None:
                    return
                consumed.append(item)
                yield _csv_text(item[1], item[0], bad, name)

        reader = csv.reader(lines(consumed, bad), strict=True, delimiter=delimiter)  # this record's lists, bound now (a closure reads the loop's latest)
        try:
            cells = next(reader, None)
        except csv.Error as exc:
            pushback.extend(reversed(consumed[1:]))  # read again from the line after the one the row started on
            head = consumed[0][1].decode("utf-8", "replace")
            # the cells before the quote or the carriage return (for the id); that part holds neither, so it reads
            cells = next(csv.reader([head.split('"', 1)[0].split("\r", 1)[0]], delimiter=delimiter), [])
            if "new-line character seen in unquoted field" in str(exc):  # a bare \r: the csv module refuses it
                yield start, cells, (
                    f"{name}:{start}: a carriage return (\\r) not followed by a line feed, outside quotes; the row is "
                    "skipped and reading goes on from the next line feed. Quote a field that holds one, or, if the "
                    "file ends its lines with \\r alone (old Mac line endings), convert them to \\n.")
            else:
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


def _csv_text(raw: bytes, line: int, bad: list[str], name: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad.append(f"{name}:{line}: the line is not UTF-8 (byte {raw[exc.start]:#04x} at column {exc.start + 1}). "
                   f"{not_utf8_advice(raw)}.")
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
            Parquet, holds no rows, or names a column twice (:func:`refuse_repeated_columns`).
    """
    p = check_input_file(path)
    try:
        import pyarrow.parquet as pq  # optional heavy dependency: pyarrow (extras parquet, spark)
    except ImportError:
        raise InputError(f"{p}: reading Parquet needs pyarrow: pip install 'goldeval[parquet]' (or convert the file to JSONL).") from None
    try:
        pf = pq.ParquetFile(p)
    except Exception as exc:  # pyarrow raises ArrowInvalid / OSError subclasses for a file that is not Parquet
        raise InputError(f"{p}: not a Parquet file ({exc}). Pass a Parquet file, or JSONL / CSV by their extension.") from None
    if pf.metadata.num_rows == 0:
        raise InputError(f"{p}: holds no rows, expected one row per case.")
    refuse_repeated_columns(pf.schema_arrow.names, f"{p.name}: the schema")
    return _parquet_rows(pf)


def refuse_repeated_columns(names: list[str], where: str) -> None:
    """Refuse a table whose header names one column twice: a row read as a dict keeps only the last of the two
    values, so the other (the prediction a spreadsheet added beside an older one) would be dropped unseen and the
    row scored on whichever came last. Unnamed columns (``""``, a trailing comma) may repeat: no field is read by
    that name.

    Raises:
        InputError: a name other than ``""`` occurs twice (the message gives both 1-based column positions).
    """
    first: dict[str, int] = {}
    for i, name in enumerate(names, start=1):
        if name == "":
            continue
        if name in first:
            raise InputError(f"{where} names the column {name!r} twice (columns {first[name]} and {i}); each row would "
                             "keep only the last of the two values and drop the other unseen. Rename or remove one of them.")
        first[name] = i


def _parquet_rows(pf: Any) -> Iterator[Row | RowError]:
    maps = [f.name for f in pf.schema_arrow if _has_map(f.type)]
    index = 0
    for batch in pf.iter_batches(batch_size=_PARQUET_BATCH):
        for data in batch.to_pylist():
            index += 1
            for name in maps:
                data[name] = maps_as_dicts(data[name])
            yield Row(index, data)


def _has_map(t: Any) -> bool:
    import pyarrow as pa  # optional heavy dependency: pyarrow (extras parquet, spark)

    if pa.types.is_map(t):
        return True
    if pa.types.is_struct(t):
        return any(_has_map(t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _has_map(t.value_type)
    return False


def maps_as_dicts(v: Any) -> Any:
    """pyarrow gives a map value as a list of (key, value) tuples: a dict is what a JSON object reads as."""
    if isinstance(v, list) and v and all(isinstance(x, tuple) and len(x) == 2 for x in v):
        return {k: maps_as_dicts(x) for k, x in v}
    if isinstance(v, dict):
        return {k: maps_as_dicts(x) for k, x in v.items()}
    if isinstance(v, list):
        return [maps_as_dicts(x) for x in v]
    return v


def read_rows(path: str | os.PathLike[str], *, lenient: bool = False, id_field: str | None = None) -> Iterator[Row | RowError]:
    """Stream rows from ``.csv``, ``.tsv`` / ``.tab``, ``.parquet`` / ``.pq`` (by extension) or JSONL (anything
    else). See :func:`read_jsonl` (and its *lenient*, *id_field*), :func:`read_csv`, :func:`read_parquet`."""
    if is_delimited(path):
        return read_csv(path)
    if is_parquet(path):
        return read_parquet(path)
    return read_jsonl(path, lenient=lenient, id_field=id_field)


def count_rows(path: str | os.PathLike[str]) -> int:
    """How many rows :func:`read_rows` yields for *path* (rows and row errors alike): the non-blank lines of a
    JSONL file (counted without parsing them), the records of a CSV / TSV file, the rows of a Parquet file. For a
    progress display's total.

    Raises:
        InputError: as :func:`read_rows` (a CSV or Parquet file that cannot be read).

    Example:
        >>> import tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "c.jsonl")
        >>> with open(path, "w") as fh:
        ...     _ = fh.write(chr(10).join(['{"id": "a"}', '', '{"id": "b"}', '']))  # a blank line between
        >>> count_rows(path)
        2
    """
    if is_delimited(path) or is_parquet(path):
        return sum(1 for _ in read_rows(path))
    return sum(1 for _ in jsonl_lines(path))


def check_ids(items: Iterator[Row | RowError], *, id_field: str = "id", file_name: str = "",
              repeated: set[int] | None = None) -> Iterator[Row | RowError]:
    """Pass rows through, turning a row without a usable ``id`` or with a repeated ``id`` into a :class:`RowError`.

    An id must be a non-empty string or an integer (integers are read as their decimal string).

    Args:
        repeated: The hashes (:func:`hash`, this process) of every id that may occur more than once, e.g. from a
            first pass (:func:`usable_id` with :func:`goldeval.io.ids.scan_jsonl_ids`): only ids with one of those
            hashes are remembered, so memory does not grow with the rows. ``None`` (default): every id is kept.
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
        if repeated is not None and hash(rid) not in repeated:
            yield item  # an id that occurs once
            continue
        if rid in seen:
            yield RowError(item.line, rid, f"{prefix}{item.line}: id {rid!r} repeats line {seen[rid]}. Ids must be unique; remove or rename the duplicate.")
            continue
        seen[rid] = item.line
        yield item


def usable_id(raw: Any) -> str | None:
    """The id text :func:`check_ids` reads from an ``id`` value: a non-empty string, or an integer's decimal string;
    ``None`` for anything else (the row fails there)."""
    if isinstance(raw, bool) or not isinstance(raw, (str, int)) or raw == "":
        return None
    return str(raw)


#: (real path, device, inode, size, mtime_ns) → sha256, so one invocation hashes a large input once even when the
#: run store (run key) and the scorer (results["input"]) both ask.
_SHA256_MEMO: dict[tuple[str, int, int, int, int], str] = {}


def file_memo_key(path: str | os.PathLike[str]) -> tuple[str, int, int, int, int]:
    """What identifies a file's content for the sha256 memo: its real path, device, inode, size and mtime (ns)."""
    st = os.stat(path)
    return (os.path.realpath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def remember_sha256(path: str | os.PathLike[str], digest: str) -> None:
    """Tell :func:`file_sha256` the sha256 of the file *path* as it is now (e.g. taken while it was written), so
    that it is not read again for it."""
    _SHA256_MEMO[file_memo_key(path)] = digest


def file_sha256(path: str | os.PathLike[str]) -> str:
    """Hex sha256 of a file's bytes (the dataset hash recorded with a run).

    Remembered per process for an unchanged file (same path, inode, size and modification time in ns).
    """
    key = file_memo_key(path)
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


def check_unchanged(path: str | os.PathLike[str], identity: tuple[str, int, int, int, int], sha256: str | None,
                    name: str) -> None:
    """Refuse *path* if it is no longer the file that was hashed: a scorer that hashes a file in one read and scores
    it in another must score the bytes it hashed (and keeps with the run).

    Args:
        path: The file.
        identity: Its :func:`file_memo_key` taken before the read that hashed it.
        sha256: That read's hex sha256, or ``None`` when unknown (then any change of identity is refused).
        name: How messages name the file.

    A file whose identity is unchanged passes at once; one whose identity changed (e.g. only touched) passes when it
    still has that size and *sha256* (read once more to check).

    Raises:
        InputError: the file is gone, or its size or bytes are not those hashed ("changed while it was scored").

    Example:
        >>> check_unchanged("rows.jsonl", key_before, digest, "rows.jsonl")  # doctest: +SKIP
    """
    try:
        now = file_memo_key(path)
    except OSError as exc:
        raise InputError(f"{name}: the file changed while it was scored ({exc.strerror}). "
                         "Score a file that is not being written.") from exc
    if now == identity:
        return
    if sha256 is None or now[3] != identity[3] or file_sha256(path) != sha256:
        raise InputError(f"{name}: the file changed while it was scored (its size or bytes are not those read "
                         "first). Score a file that is not being written.")


def line_blocks(fh: BinaryIO, size: int) -> Iterator[bytes]:
    r"""The bytes of *fh* from where it stands to its end, in blocks of whole lines: each block is a ``read(size)``
    extended to the next line feed (the last block may end without one). Joined, the blocks are the file's bytes.

    Args:
        fh: A file opened in binary mode.
        size: Bytes a block holds before it is extended to a line's end (> 0).

    Returns:
        An iterator of non-empty ``bytes``, each ending with ``b"\n"`` except perhaps the last.

    Example:
        >>> import io
        >>> list(line_blocks(io.BytesIO(b"ab\ncd\nef"), 1))
        [b'ab\n', b'cd\n', b'ef']
    """
    read, readline = fh.read, fh.readline
    while True:
        block = read(size)
        if not block:
            return
        if not block.endswith(b"\n"):
            block += readline()  # whole lines only
        yield block
