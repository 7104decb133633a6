"""Typed normalisation of answer cells and the numeric tolerance rule.

A column of cells (JSON values, or what SQLite / DuckDB returned) becomes a :class:`Column`: one kind for the
whole column, and arrays that the pairing and row comparison read without touching Python objects again.

Kinds:
    ``number``  ints, floats, decimals, and strings that spell a number (``"1"``, ``"1,234.5"``, ``"20%"``).
                ``1``, ``1.0`` and ``"1"`` are the same number.
    ``bool``    ``True``/``False`` (and the strings ``"true"``/``"false"``, ``"yes"``/``"no"``); compared as 1 / 0.
    ``date``    ISO dates and timestamps (``2024-03-01``, ``2024-03-01 00:00:00`` — a timestamp at midnight reads
                as its date). A timestamp with an offset (``…+02:00``, a PostgreSQL ``timestamptz``) is compared in
                UTC; one without an offset is read as UTC.
    ``text``    anything else: compared after Unicode NFC, trimming, collapsing inner white space and case folding.
                Arrays and JSON objects (lists and dicts) are compared as canonical JSON text (keys sorted, ``2.0``
                as ``2``).
    ``null``    a column whose every cell is NULL.

NULL (``None``, and a float NaN) is neither 0 nor ``""``: it only equals NULL.

Tolerance for a golden number ``g`` against a predicted ``p``: ``|p - g| <= max(r * max(|g|, |p|), h)``
(the relative part only when ``g`` or ``p`` is not a whole number: two whole numbers meet exactly, or within ``h``)
where ``h`` is half a unit in the last decimal the golden was written with (a golden written ``58.74`` has
``h = 0.005`` and accepts ``58.744924``); integers have ``h = 0`` (a count of 12 never accepts 12.4). ``r`` is
1e-6 for binary floats and far smaller where a ``Decimal`` (a database ``NUMERIC``) is compared: the rule lives in
:mod:`goldeval.answers.numbers`, re-exported here.

Source: ``DESIGN.md`` "Data answers" (tolerance, NULL, rate columns), goldeval.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import re
import unicodedata
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from operator import itemgetter
from typing import Any

import numpy as np

from goldeval.answers.column_names import (
    is_rate_name,
    name_tokens,
    role_tags,
    roles_conflict,
)
from goldeval.answers.numbers import REL_TOL, numbers_close, tolerances
from goldeval.errors import InputError, shorten

try:  # the optional C fast path (see _fast.c); the NumPy paths of make_column and float_decimals stay the definition
    from goldeval._fast import fill_numbers as _fast_fill_numbers
    from goldeval._fast import float_decimals as _fast_float_decimals
except ImportError:  # pragma: no cover - the extension is optional
    _fast_fill_numbers = _fast_float_decimals = None

__all__ = [
    "REL_TOL",
    "Column",
    "make_column",
    "number_texts",
    "canonical_text",
    "decimals_written",
    "tolerances",
    "numbers_close",
    "is_rate_name",
    "name_tokens",
    "role_tags",
    "roles_conflict",
]

_NUM_RE = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$")
_NUM_THOUSANDS_RE = re.compile(r"^[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$")
_WS_RE = re.compile(r"\s+")
# In "\0"-joined cells: white space other than one space inside a cell (a cell's leading or trailing space, two
# spaces, a tab…), or a cell that is empty or starts like a number / date / boolean. ("Joe Sharp" is plain: its
# canonical text is its lower case, as _str_cell gives it.)
_NOT_PLAIN = re.compile(r"[^\S ]| {2}|(?:^|\x00) | (?:\x00|$)|(?:^|\x00)(?:[\d+\-.]|\x00|$|(?:true|false|yes|no)(?:\x00|$))",
                        re.IGNORECASE)
# _NOT_PLAIN in scans that skip most characters (the one regex tries every alternative at every character:
# hundreds of instructions a character, and a pattern anchored at the cell boundaries still costs a match call a
# cell). On "\0" + joined + "\0" every cell, the first and the last included, is preceded and followed by "\0": an
# empty cell, or one starting or ending with a space, is a substring there. The cells' first characters are read
# once (a set) for a number's start, with _NOT_PLAIN's own character class and flags. A boolean cell is one whose
# canonical text (lower case when ASCII; else NFC and case-folded, as make_column makes it) is "true", "false",
# "yes" or "no": IGNORECASE matches a letter of those words exactly where its canonical text is that letter (the
# letter, its capital, and "ſ" for "s"; a test reads every code point). White space other than a space: nine
# control characters in ASCII text; elsewhere never printable (every such character is a control or separator
# character), so a printable text needs no white-space scan.
_NUMBER_START = re.compile(r"[\d+\-.]", re.IGNORECASE)
_WHITE_NOT_SPACE = re.compile(r"[^\S ]", re.IGNORECASE)


def _not_plain(joined: str, values: Sequence[str], folded: str) -> bool:
    """``_NOT_PLAIN.search(joined) is not None`` (the definition), for *joined* = ``"\\0".join(values)`` (no cell
    holding a ``"\\0"``) and *folded* its canonical text (``joined.lower()`` when ASCII, else NFC and case-folded),
    computed from cheaper scans (tested equal on random and hand-made columns, every white-space character and every
    character that folds to a letter of the booleans)."""
    if "  " in joined:
        return True
    wrapped = "\x00" + joined + "\x00"
    if "\x00\x00" in wrapped or "\x00 " in wrapped or " \x00" in wrapped:
        return True
    if _NUMBER_START.search("".join(set(map(itemgetter(0), values)))) is not None:  # no cell is empty (above)
        return True
    low = "\x00" + folded + "\x00"
    if "\x00true\x00" in low or "\x00false\x00" in low or "\x00yes\x00" in low or "\x00no\x00" in low:
        return True
    if joined.isascii():
        return ("\t" in joined or "\n" in joined or "\r" in joined or "\x0b" in joined or "\x0c" in joined
                or "\x1c" in joined or "\x1d" in joined or "\x1e" in joined or "\x1f" in joined)
    return not "".join(values).isprintable() and _WHITE_NOT_SPACE.search(joined) is not None


def canonical_text(value: str) -> str:
    """Text as it is compared: NFC, trimmed, inner white space collapsed to one space, case-folded."""
    if value.isascii():
        s = value.strip()
        if "  " in s or "\t" in s or "\n" in s or "\r" in s or "\x0b" in s or "\x0c" in s:
            s = _WS_RE.sub(" ", s)
        return s.lower()
    return _WS_RE.sub(" ", unicodedata.normalize("NFC", value).strip()).casefold()


def decimals_written(value: Any) -> int:
    """How many decimals *value* was written with: ``58.74`` → 2, ``830.0`` → 1, ``12`` → 0, ``"1.50"`` → 2.

    Floats are read from their shortest ``repr`` (what a JSON file or a database driver shows); a value with an
    exponent that leaves no fractional digit, or anything that is not a number, gives 0.
    """
    if isinstance(value, bool) or value is None:
        return 0
    if isinstance(value, int):
        return 0
    if isinstance(value, float):
        if not math.isfinite(value):
            return 0
        text = repr(value)
    elif isinstance(value, Decimal):
        text = str(value)
    else:
        text = str(value).strip().rstrip("%").replace(",", "")
    try:
        exp = Decimal(text).as_tuple().exponent
    except InvalidOperation:
        return 0
    return -exp if isinstance(exp, int) and exp < 0 else 0


def _parse_date(text: str) -> str | None:
    if not _DATE_RE.match(text):
        return None
    try:
        if len(text) == 10:
            return _dt.date.fromisoformat(text).isoformat()
        ts = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return _timestamp_text(ts)


def _timestamp_text(ts: _dt.datetime) -> str:
    """A timestamp as compared: one with an offset in UTC, without it (a time without an offset is read as UTC, as a
    database with ``TimeZone = UTC`` shows it); at midnight its date."""
    if ts.tzinfo is not None:
        ts = ts.astimezone(_dt.UTC).replace(tzinfo=None)
    if ts.time() == _dt.time(0, 0):
        return ts.date().isoformat()
    return ts.isoformat()


def _json_text(value: Any) -> str:
    """An array or JSON object as compared: canonical JSON (keys sorted, numbers as numbers, dates as ISO text), so a
    golden written ``[1, 2]`` meets a PostgreSQL ``int[]`` and ``{"b": 1, "a": 2}`` meets a ``jsonb`` in its own key
    order. Elements are compared exactly (no numeric tolerance inside an array)."""

    def conv(v: Any, depth: int) -> Any:
        if isinstance(v, (list, tuple, dict)) and depth >= _MAX_NESTING:
            raise InputError(f"a cell holds arrays or objects nested more than {_MAX_NESTING} levels deep "
                             f"({shorten(value)}); such a cell is not compared. Flatten it.")
        if isinstance(v, (list, tuple)):
            return [conv(x, depth + 1) for x in v]
        if isinstance(v, dict):
            return {str(k): conv(x, depth + 1) for k, x in v.items()}
        if isinstance(v, bool) or v is None or isinstance(v, str):
            return v
        if isinstance(v, int):
            # one past 64 bits as its digits, as the JSON reader keeps it (goldeval.io.reading.BigInt): a golden's
            # 18446744073709551617 then meets a database's; and json.dumps of an int past Python's int-string
            # limit (4,300 digits) raises
            return v if -(2**63) <= v < 2**64 else _int_digits(v)
        if isinstance(v, Decimal):
            if v.is_finite() and v == v.to_integral_value() and v.adjusted() < 131_072:
                return conv(int(v), depth)
            number = float(v)
            return _exact_number_text(v) if math.isinf(number) and v.is_finite() else number
        if isinstance(v, float):
            return int(v) if math.isfinite(v) and v == int(v) else v  # 2.0 and 2 are the same number
        if isinstance(v, _dt.datetime):
            return _timestamp_text(v)
        if isinstance(v, _dt.date):
            return v.isoformat()
        return str(v)

    return json.dumps(conv(value, 0), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


#: Arrays or objects nested deeper than this in one cell are refused (the case is unscored with the reason): the
#: canonical JSON of a cell is made by recursion, and a cell nested hundreds of levels deep (a JSON row may nest
#: 1,024) would exhaust Python's stack, an internal error for the whole run.
_MAX_NESTING = 100


def _int_digits(value: int) -> str:
    """The decimal digits of an int of any size (``str`` refuses one past Python's int-string limit, 4,300 digits
    by default, a guard against quadratic conversions; ``Decimal`` converts an int without it, in linear time)."""
    return str(value) if -_SMALL_INT < value < _SMALL_INT else str(Decimal(value))


_SMALL_INT = 10**1000


def _exact_number_text(value: Decimal) -> str:
    """A finite number as exact scientific text, its digits without trailing zeros: ``Decimal("15E+399")``,
    ``Decimal("1.50E+400")`` → ``"1.5e400"``. The canonical text of a number past the largest float (about
    1.8e308), which a float would turn into infinity (two different such numbers would then be equal); computed
    from the digits, not in a Decimal context (which rounds to 28 digits)."""
    sign, digits, exp = value.as_tuple()
    written = "".join(map(str, digits))
    kept = written.rstrip("0") or "0"
    point = "." + kept[1:] if len(kept) > 1 else ""
    return f"{'-' if sign else ''}{kept[0]}{point}e{int(exp) + len(written) - 1}"


def _number_or_exact(body: str, percent: bool, value: str) -> tuple[str, Any, bool]:
    """:func:`_cell` of a numeric text *body* (no thousands separators): a number, or, past the largest float, the
    text of its exact value (:func:`_exact_number_text`), never infinity."""
    number = float(body)
    if not math.isinf(number):
        return "number", number, percent
    try:
        return "text", _exact_number_text(Decimal(body)), False
    except (InvalidOperation, ValueError):  # an exponent past what Decimal holds: the text as written
        return "text", canonical_text(value), False


def _cell(value: Any) -> tuple[str, Any, bool]:
    """(kind, canonical value, written as a percentage) for one cell."""
    if value is None:
        return "null", None, False
    if isinstance(value, bool):
        return "bool", 1.0 if value else 0.0, False
    if isinstance(value, int):
        if -_EXACT_INT < value < _EXACT_INT:
            return "number", float(value), False
        return "text", _int_digits(value), False  # an identifier from 2**53 on: exact digits, never a rounded float
    if isinstance(value, float):
        return ("null", None, False) if math.isnan(value) else ("number", value, False)
    if isinstance(value, Decimal):
        if value.is_nan():
            return "null", None, False
        if value.is_finite() and abs(value) >= _EXACT_INT and value == value.to_integral_value():
            # a NUMERIC identifier from 2**53 on: exact digits, as an int's (up to PostgreSQL's 131,072 digits of
            # a numeric; past them the exact scientific text, not a million digits from Decimal("1E+999999"))
            if value.adjusted() < 131_072:
                return "text", format(value.to_integral_value(), "f"), False
            return "text", _exact_number_text(value), False
        number = float(value)
        if math.isinf(number) and value.is_finite():
            return "text", _exact_number_text(value), False  # past the largest float: never infinity
        return "number", number, False
    if isinstance(value, np.generic):
        return _cell(value.item())
    if isinstance(value, _dt.datetime):
        return "date", _timestamp_text(value), False
    if isinstance(value, _dt.date):
        return "date", value.isoformat(), False
    if isinstance(value, bytes):
        return "text", value.hex(), False
    if isinstance(value, (list, tuple, dict)):
        return "text", canonical_text(_json_text(value)), False
    if isinstance(value, str):
        text = value.strip()
        first = text[:1]
        if not (first.isdigit() or first in "+-.") and first not in "tTfFyYnN":
            return "text", canonical_text(value), False  # cannot be a number, a date or a boolean
        percent = text.endswith("%")
        body = text[:-1].strip() if percent else text
        if _NUM_RE.match(body):
            digits = body.lstrip("+-")
            if len(digits) > 1 and digits[0] == "0" and digits[1].isdigit():
                return "text", canonical_text(value), False  # '02134', '007': a code, compared as text
            if len(digits) > 15 and digits.isdigit() and (len(digits) > 16 or int(digits) >= _EXACT_INT):
                # an integer from 2**53 on spelled as text: exact digits (2**53 has 16; a longer one is never
                # converted, as int() refuses one past 4,300 digits)
                return "text", body.lstrip("+"), False
            return _number_or_exact(body, percent, value)
        if _NUM_THOUSANDS_RE.match(body):
            return _number_or_exact(body.replace(",", ""), percent, value)
        low = text.lower()
        if low in ("true", "false", "yes", "no"):
            return "bool", 1.0 if low in ("true", "yes") else 0.0, False
        date = _parse_date(text)
        if date is not None:
            return "date", date, False
        return "text", canonical_text(value), False
    return "text", canonical_text(str(value)), False


#: Integers below this magnitude are exact as float64 (and so is every neighbour); from it on they compare as
#: their digits (identifiers: 9007199254740993 and 9007199254740992 are one float).
_EXACT_INT = 2**53


def _str_cell(value: str) -> tuple[str, Any, bool]:
    """:func:`_cell` for a string, with the common case (text that cannot be a number, date or boolean) first."""
    text = value.strip()
    first = text[:1]
    if not first or first.isdigit() or first in "+-.tTfFyYnN":
        return _cell(value)
    if value.isascii() and not ("  " in text or "\t" in text or "\n" in text or "\r" in text):
        return "text", text.lower(), False
    return "text", canonical_text(value), False


def _number_text(x: float) -> str:
    """A number as text, for comparing it with a text column: ``12.0`` → ``"12"``, ``0.5`` → ``"0.5"``."""
    if math.isfinite(x) and x == int(x) and abs(x) < 1e16:
        return str(int(x))
    return repr(x)


class Column:
    """One column of an answer table, normalised.

    Attributes:
        name: The column name as given.
        kind: ``number`` | ``bool`` | ``date`` | ``text`` | ``null`` (see the module docstring).
        n: Number of cells.
        null: ``(n,)`` bool, True where the cell is NULL.
        num: ``(n,)`` float64 for ``number``/``bool`` columns (NaN where NULL), else ``None``.
        text: ``(n,)`` object array of canonical strings (``None`` where NULL) for every kind; numbers are spelled
            as ``"12"`` / ``"0.5"`` so a number column can meet a text column holding the same values. Computed on
            first use.
        decimals: ``(n,)`` int, the decimals each cell was written with (the golden's display precision). Computed
            on first use.
        percent: True when any cell was written with a ``%`` sign.
        raw: The cells as given (for reporting missing rows).
        decimal: True when a number cell is a ``Decimal`` (a database ``NUMERIC``/``DECIMAL``: an exact number).
        binary: True when a number cell is a binary float (``float``, a NumPy float).
            Both choose the relative tolerance of a column pair (:func:`goldeval.answers.numbers.pair_rel_tol`);
            integers, booleans and numeric text are neither.
    """

    __slots__ = ("name", "kind", "n", "null", "num", "percent", "raw", "_text", "_decimals", "n_numberlike", "_cache",
                 "decimal", "binary", "_types", "numberlike")

    def __init__(self, name: str, kind: str, n: int, null: np.ndarray, num: np.ndarray | None,
                 text: np.ndarray | None, raw: Sequence[Any], percent: bool = False) -> None:
        self.name = name
        self.kind = kind
        self.n = n
        self.null = null
        self.num = num
        self.percent = percent
        self.raw = raw
        self._text = text
        self._decimals: np.ndarray | None = None
        #: Cells of a text column that spell a number (0 means a number column can never meet this one).
        self.n_numberlike = 0
        self._cache: dict[str | tuple[Any, ...], Any] = {}  # (a tuple key: a value that depends on parameters)
        self.decimal = False
        self.binary = False
        #: The set of the cells' Python types, where the typing saw it (``None``: not known).
        self._types: set[type] | None = None
        #: A ``text`` column with cells that spell a number (:attr:`n_numberlike` > 0): ``(n,)`` float64, each such
        #: cell's number (its text is :func:`number_texts` of it), NaN for the other cells. ``None`` otherwise (or
        #: not noted): its cells are then read through :attr:`text` alone.
        self.numberlike: np.ndarray | None = None

    def __repr__(self) -> str:
        return f"Column({self.name!r}, kind={self.kind!r}, n={self.n})"

    @property
    def numeric(self) -> bool:
        """True when the column compares as numbers (``number`` or ``bool``)."""
        return self.num is not None

    @property
    def nums(self) -> np.ndarray:
        """:attr:`num` of a numeric column, typed as the array it is there: for code that has checked
        :attr:`numeric` (or the kind) first.

        Raises:
            TypeError: the column is not numeric (a caller that skipped the check).
        """
        num = self.num
        if num is None:
            raise TypeError(f"column {self.name!r} is {self.kind}, not numeric: check Column.numeric before reading nums.")
        return num

    @property
    def text(self) -> np.ndarray:
        if self._text is None:
            assert self.num is not None
            self._text = number_texts(self.num)
        return self._text

    @property
    def cell_types(self) -> set[type] | None:
        """The Python types of the cells, where the reader noted them (``None``: not noted)."""
        return self._types

    def cached(self, key: str, make: Any) -> Any:
        """A value derived from this column, computed once (multiset counts, sorted numbers, tolerances)."""
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    def exact(self) -> Column:
        """Drop the display-precision part of the tolerance (the cells were computed, not written: a database's
        ``AVG`` of 2.5 is exactly 2.5, not "2.5 to one decimal"); the relative tolerance still applies."""
        self._decimals = np.zeros(self.n, dtype=np.int64)
        self._cache.pop("tolerances", None)
        return self

    @property
    def decimals(self) -> np.ndarray:
        if self._decimals is None:
            self._decimals = _decimals_array(self.raw, self.num, self._types)
        return self._decimals


def float_decimals(x: np.ndarray) -> np.ndarray:
    """``(n,)`` int64: the decimals each binary float of *x* is written with (the fewest that round-trip the value,
    at least 1 for a finite float: ``1.0`` is written "1.0"; 16 where none up to 15 does; 0 for inf/NaN). A
    function of the value alone.

    The C extension decides each cell in one pass (the same roundings, stopping at the first that round-trips); the
    NumPy lines below are the definition and the fallback."""
    if _fast_float_decimals is not None and x.dtype == np.float64 and x.ndim == 1 and x.flags.c_contiguous:
        out = np.empty(x.shape, dtype=np.int64)
        _fast_float_decimals(x, out)
        return out
    dec = np.full(x.shape, 0, dtype=np.int64)
    done = ~np.isfinite(x) | (x == np.round(x, 0))
    for d in range(1, 16):
        if done.all():
            break
        hit = ~done & (np.round(x, d) == x)
        dec[hit] = d
        done |= hit
    dec[~done] = 16
    # 1.0 is written "1.0": one decimal (JSON and drivers print a float with at least one).
    return np.maximum(dec, np.where(np.isfinite(x), 1, 0))


def _decimals_array(raw: Sequence[Any], num: np.ndarray | None, types: set[type] | None = None) -> np.ndarray:
    """Decimals written per cell; floats are read vectorised (the fewest decimals that round-trip the value).
    *types*: ``set(map(type, raw))`` when already known."""
    n = len(raw)
    out = np.zeros(n, dtype=np.int64)
    if n == 0:
        return out
    present = set(map(type, raw)) if types is None else types
    if present == {float}:
        floats = np.ones(n, dtype=bool)
    elif float not in present:
        floats = np.zeros(n, dtype=bool)
    else:
        floats = np.fromiter((type(v) is float for v in raw), dtype=bool, count=n)
    if num is not None and floats.any():
        out[floats] = float_decimals(num[floats])
    others = ~floats
    if present <= {int, float, bool, type(None)}:
        return out  # ints, bools and NULLs carry no decimals
    if others.any():
        for i in np.flatnonzero(others).tolist():
            v = raw[i]
            if isinstance(v, (str, Decimal)):
                out[i] = decimals_written(v)
    return out


def _number_sources(values: Sequence[Any]) -> tuple[bool, bool]:
    """(a cell is a finite-or-infinite ``Decimal``, a cell is a binary float) among *values* (NULL/NaN aside)."""
    decimal = binary = False
    for v in values:
        if isinstance(v, Decimal):
            decimal = decimal or not v.is_nan()
        elif isinstance(v, (float, np.floating)) and not isinstance(v, bool):
            binary = binary or v == v
    return decimal, binary


#: The cell types fill_numbers' flags name (1 float, 4 int, 8 None), for each combination of those bits.
_TYPES_OF_FLAGS = {f: frozenset(t for bit, t in ((1, float), (4, int), (8, type(None))) if f & bit) for f in range(16)}


def number_texts(num: np.ndarray) -> np.ndarray:
    """``(n,)`` object array: :func:`_number_text` of each number of the ``(n,)`` float64 *num*, ``None`` for NaN (a
    NULL). The whole numbers below 1e16 (most cells of a SQL result) are spelled by NumPy's integer formatting in
    one pass, the same digits as ``str(int(x))``; the other numbers one ``repr`` each.

    Example:
        >>> number_texts(np.array([12.0, -0.0, 0.5, float("nan"), 1e16])).tolist()
        ['12', '0', '0.5', None, '1e+16']
    """
    num = np.asarray(num, dtype=np.float64)
    out = np.empty(num.shape[0], dtype=object)
    with np.errstate(invalid="ignore"):
        whole = np.isfinite(num) & (np.abs(num) < 1e16)
        whole &= num == np.trunc(num)
    idx = np.flatnonzero(whole)
    if idx.size:
        out[idx] = num[idx].astype(np.int64).astype(str).astype(object)
    rest = np.flatnonzero(~whole)
    if rest.size:
        out[rest] = [None if x != x else repr(x) for x in num[rest].tolist()]
    return out


def make_column(name: str, values: Sequence[Any]) -> Column:
    """Normalise one column of cells.

    Args:
        name: Column name.
        values: ``(n,)`` cells: None, bool, int, float, Decimal, str, date/datetime, bytes.

    Returns:
        A :class:`Column`. The kind is the one every non-NULL cell agrees on; ``number`` and ``bool`` cells
        together make a ``number`` column; any other mixture makes a ``text`` column in which numbers are spelled
        canonically (so ``1`` and ``"1"`` still meet).

    Notes:
        Identifiers are exact: an integer (int or integer text) of magnitude 2**53 or more is spelled as its digits
        (a ``text`` cell), never rounded to a float, so 9007199254740993 ≠ 9007199254740992; a numeric string with
        a leading zero (``'02134'``, ``'007'``) is a code and compares as text, never as 2134 or 7 (issue 11).
    """
    values = list(values)
    n = len(values)
    if n and _fast_fill_numbers is not None and type(values[0]) is not str:  # (a str first cell: fill_numbers gives -1)
        # Plain numbers and NULLs, typed in one C pass: the fast path below, without the type set and np.array.
        num = np.empty(n)
        flags = _fast_fill_numbers(values, num)
        if flags >= 0 and not flags & 2:  # (2: an int from 2**53 on, typed below as its digits)
            null = np.isnan(num)
            if flags & 9 and null.all():  # (ints alone, no float and no None: no cell is NULL)
                return Column(name, "null", n, null, None, np.array([None] * n, dtype=object), values)
            col = Column(name, "number", n, null, num, None, values)
            col.binary = bool(flags & 1)
            col._types = set(_TYPES_OF_FLAGS[flags & 13])  # set(map(type, values))
            return col
    types = set(map(type, values))
    # Fast path: plain numbers and NULLs (what SQL results mostly are).
    if n and types <= {int, float, type(None)}:
        try:
            num = np.array(values, dtype=float)
        except OverflowError:  # an int past the largest float: typed below, as its digits
            return _other_column(name, n, values, types)
        null = np.isnan(num)
        if null.all():
            return Column(name, "null", n, null, None, np.array([None] * n, dtype=object), values)
        big = np.abs(num) >= _EXACT_INT
        if not big.any() or not any(type(values[i]) is int and abs(values[i]) >= _EXACT_INT for i in np.flatnonzero(big).tolist()):
            col = Column(name, "number", n, null, num, None, values)
            col.binary = float in types
            return col
    if n and types == {str}:
        joined = "\x00".join(values)
        if joined.count("\x00") == n - 1:
            # No cell holds a "\0": the joined text is the cells. A column of strings seen before (a golden read
            # again by the next case, a prediction equal to its golden) is typed from the memo.
            seen = _STRING_COLUMNS.get(joined)
            if seen is not None:
                return _remembered(name, values, seen)
            col = _string_column(name, n, values, joined)
            if n <= _MEMO_CELLS // 8 and len(joined) <= _MEMO_CHARS // 8:
                _remember(joined, col)
            return col
    return _other_column(name, n, values, types)


#: Typed string columns by their "\0"-joined cells (no cell holding a "\0"): kind, null, num, text, percent,
#: n_numberlike, decimal, binary, _types, each array a private copy. At most _MEMO_CELLS cells and _MEMO_CHARS
#: characters of joined text (each held about twice: the key and the canonical texts), then emptied: long text cells
#: (notes, descriptions) would otherwise keep megabytes a column under a bound that counts only cells.
_STRING_COLUMNS: dict[str, tuple[Any, ...]] = {}
_MEMO_CELLS = 100_000
_MEMO_CHARS = 4_000_000
_memo_size = [0, 0]  # cells, characters


def _remember(joined: str, col: Column) -> None:
    if _memo_size[0] + col.n > _MEMO_CELLS or _memo_size[1] + len(joined) > _MEMO_CHARS:
        _STRING_COLUMNS.clear()
        _memo_size[0] = _memo_size[1] = 0
    _memo_size[0] += col.n
    _memo_size[1] += len(joined)
    _STRING_COLUMNS[joined] = (col.kind, col.null.copy(), None if col.num is None else col.num.copy(),
                               None if col._text is None else col._text.copy(), col.percent, col.n_numberlike,
                               col.decimal, col.binary, None if col._types is None else set(col._types),
                               None if col.numberlike is None else col.numberlike.copy())


def _remembered(name: str, values: list[Any], seen: tuple[Any, ...]) -> Column:
    """The Column :func:`_string_column` makes of *values*, from its memo entry (fresh copies of the arrays)."""
    kind, null, num, text, percent, numberlike, decimal, binary, types, numbers = seen
    col = Column(name, kind, len(values), null.copy(), None if num is None else num.copy(),
                 None if text is None else text.copy(), values, percent)
    col.n_numberlike = numberlike
    col.decimal = decimal
    col.binary = binary
    col._types = None if types is None else set(types)
    col.numberlike = None if numbers is None else numbers.copy()
    return col


def _string_column(name: str, n: int, values: list[Any], joined: str) -> Column:
    """make_column of *n* >= 1 cells, every one exactly a ``str`` and none holding a "\0" (*joined*: them joined
    by "\0")."""
    # Fastest path: strings without white space but single inner spaces, none of which can be a number, date,
    # boolean or "": made canonical all at once (one C-level pass over the joined text instead of one call per
    # cell): lower-cased when ASCII; else NFC and case-folded, as canonical_text does (NFC neither composes nor
    # splits across the "\0" separators nor makes white space, so the strip and collapse have nothing to do).
    canon = joined.lower() if joined.isascii() else unicodedata.normalize("NFC", joined).casefold()
    if not _not_plain(joined, values, canon):
        return Column(name, "text", n, np.zeros(n, dtype=bool), None, np.array(canon.split("\x00"), dtype=object), values)
    return _other_column(name, n, values, {str})


def _other_column(name: str, n: int, values: list[Any], types: set[type]) -> Column:
    """make_column's general typing of *values* (*n* cells whose types are *types*), after its fast paths."""
    # Fast path: every cell a string and none spells a number, a date or a boolean (the usual text column).
    if n and types == {str}:
        seen = {v: _str_cell(v) for v in set(values)}
        if all(r[0] == "text" for r in seen.values()):
            text = np.array([seen[v][1] for v in values], dtype=object)
            return Column(name, "text", n, np.zeros(n, dtype=bool), None, text, values)
    kinds: list[str] = []
    canon: list[Any] = []
    percent = False
    cache: dict[str, tuple[str, Any, bool]] = {}
    for v in values:
        if type(v) is str:
            r = cache.get(v)
            if r is None:
                r = cache[v] = _str_cell(v)
        else:
            try:
                r = _cell(v)
            except InputError as exc:
                raise InputError(f"column {name!r}: {exc}") from None
        kinds.append(r[0])
        canon.append(r[1])
        percent = percent or r[2]
    present = set(kinds) - {"null"}
    null = np.fromiter((k == "null" for k in kinds), dtype=bool, count=n)
    if not present:
        return Column(name, "null", n, null, None, np.array([None] * n, dtype=object), values)
    if present <= {"number", "bool"}:
        kind = "bool" if present == {"bool"} else "number"
        num = np.array([np.nan if c is None else c for c in canon], dtype=float)
        col = Column(name, kind, n, null, num, None, values, percent)
        col.decimal, col.binary = _number_sources(values)
        return col
    kind = "date" if present == {"date"} else "text"
    text = np.array(
        [None if c is None else (_number_text(c) if k in ("number", "bool") else c) for k, c in zip(kinds, canon)],
        dtype=object,
    )
    col = Column(name, kind, n, null, None, text, values, percent)
    col.n_numberlike = sum(1 for k in kinds if k in ("number", "bool"))
    if col.n_numberlike:
        col.numberlike = np.array([c if k in ("number", "bool") else np.nan for k, c in zip(kinds, canon)], dtype=float)
    return col
