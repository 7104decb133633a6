"""The bounds every judged query runs under, the rows it returns (:class:`QueryResult`) and the errors it raises: the default time, row and size limits,
:func:`fetch_bounded` (rows fetched block by block, counted in rows and in bytes of Python objects, stopped past
either limit) and :func:`result_bytes` (what the size limit counts).

Shared by the three engines: :mod:`goldeval.answers.sql` (SQLite, DuckDB), :mod:`goldeval.answers.duckdb_worker`
(the DuckDB worker process, which must not import the engines' module) and :mod:`goldeval.answers.postgres`.
:mod:`goldeval.answers.sql` re-exports every name here, where callers have always found them.

Source: ``DESIGN.md`` "Re-executing queries safely" (every query is bounded in time, rows and bytes), goldeval.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from goldeval.errors import GoldevalError, InputError

__all__ = ["QueryResult", "QueryError", "DatabaseLostError", "fetch_bounded", "result_bytes", "size_limit_message",
           "check_max_result_bytes", "DEFAULT_TIMEOUT_S", "DEFAULT_MAX_ROWS", "DEFAULT_MAX_RESULT_BYTES",
           "DUCKDB_MEMORY_LIMIT"]

DEFAULT_TIMEOUT_S = 5.0
DEFAULT_MAX_ROWS = 1_000_000
#: Most bytes a query's result may hold as Python objects (:func:`result_bytes`), by default: 256 MB. Judging a
#: result took about twice its estimate at the peak (1,000,000 rows of an int, a text and a float: 183 MB
#: estimated, 464 MB peak RSS with the interpreter's 85 MB), and a case may hold the golden's result beside the
#: answer's: 256 MB keeps a case near 1 GB, which a 2-core, 4 GB CI machine survives beside DuckDB's own
#: :data:`DUCKDB_MEMORY_LIMIT`. The shipped examples' largest result (Spider, 0.66 MB) is 1/390 of it.
DEFAULT_MAX_RESULT_BYTES = 256_000_000
#: DuckDB's ``memory_limit`` on a judged query's connection (sorts, hash tables, aggregates; spilling to disk off).
DUCKDB_MEMORY_LIMIT = "1GB"


@dataclass(slots=True)
class QueryResult:
    """Rows a query returned.

    Attributes:
        columns: ``(k,)`` column names as the database reports them (duplicates kept).
        rows: ``(n, k)`` row tuples of Python values (NULL is ``None``).
        elapsed_s: Wall-clock seconds the query took.
    """

    columns: list[str]
    rows: list[tuple[Any, ...]]
    elapsed_s: float = 0.0
    engine: str = "sqlite"
    notes: list[str] = field(default_factory=list)


class QueryError(GoldevalError):
    """A query could not be run read-only within the limits; the message is the database's, with context."""


class DatabaseLostError(GoldevalError):
    """The database went away while a run used it: the server stopped or the connection to it was lost and cannot be
    made again, or the file became unreadable or stayed locked by another connection.

    Not a property of the case whose query was running, so it is not that case's unscored reason: it stops the run,
    which stays in the store as interrupted with every case judged so far, and the same command resumes it once the
    database is back. Not a :class:`QueryError` (which makes one case unscored) nor an
    :class:`~goldeval.errors.InputError` (which removes a new run, since the same command would fail again).
    """


#: Most rows fetched from a cursor at a time (see :func:`fetch_bounded`).
_FETCH_BLOCK = 10_000
#: The part of the size limit one block of rows is sized to (1/16: a result stops within 1/16 over its limit).
_BLOCK_SHARE = 16
#: Python objects that hold other objects (PostgreSQL arrays and json, DuckDB lists, structs and maps).
_NESTED = (list, tuple, dict, set, frozenset)


def result_bytes(rows: Sequence[Sequence[Any]], *, nested: bool = True) -> int:
    """Estimated memory of *rows* as Python objects, bytes: what the size limit (:func:`fetch_bounded`) counts.

    Every row and every value counts its ``sys.getsizeof``, containers with everything they hold, and each row
    8 bytes for its slot in the list of rows. On CPython 3.11 (64-bit) a row of ``k`` values is ``40 + 8k``
    bytes, a text of ``n`` ASCII characters ``49 + n`` (``73 + n`` to ``76 + 4n`` beyond ASCII), a blob
    ``33 + n``, an int 28, a float 24, a ``Decimal`` 104, a ``None`` 16: a result costs several times its raw
    bytes in small values (1,000,000 rows of an int, a 10-character text and a float: 183 MB).

    Args:
        rows: ``(n, k)`` row tuples (or lists) as a cursor returns them.
        nested: Values may be containers (PostgreSQL, DuckDB); ``False`` (SQLite, whose values never are) skips
            looking for them.

    Returns:
        The estimate, bytes (0 for no rows). Shared objects (``None``, small ints) are counted at each use: an
        upper bound of what the rows keep alive.

    Examples:
        >>> result_bytes([(1, "abc")])  # row 56 + slot 8 + int 28 + text 52
        144

    Source: CPython's ``sys.getsizeof`` (object header, ``PyASCIIObject``/``PyTupleObject`` layouts); goldeval.
    """
    if not rows:
        return 0
    size = sys.getsizeof
    cells = chain.from_iterable(rows)
    first = rows[0]
    if type(first) is tuple:  # a cursor's rows: tuples of one width, whose size depends on the width alone
        total = len(rows) * (size(first) + 8) + sum(map(size, cells))
    else:
        total = sum(map(size, rows)) + 8 * len(rows) + sum(map(size, cells))
    if nested and not _NESTED_TYPES.isdisjoint(map(type, chain.from_iterable(rows))):
        total += sum(_inner_bytes(v) for v in chain.from_iterable(rows) if isinstance(v, _NESTED))
    return total


_NESTED_TYPES = frozenset(_NESTED)


def _inner_bytes(value: Any) -> int:
    """What a container holds (its own ``getsizeof`` excluded), recursively."""
    size = sys.getsizeof
    items = chain.from_iterable(value.items()) if isinstance(value, dict) else value
    total = 0
    for item in items:
        total += size(item)
        if isinstance(item, _NESTED):
            total += _inner_bytes(item)
    return total


def size_limit_message(max_result_bytes: int, counted: int, n_rows: int) -> str:
    """The reason a case is unscored when its query's result is over the size limit (shared by every engine)."""
    return (f"the query's result is over {max_result_bytes / 1e6:,.6g} MB (the size limit): {_mb(counted)} MB "
            f"of Python objects in the first {n_rows:,} row{'' if n_rows == 1 else 's'}, and it was stopped there. "
            "Narrow the query (fewer rows or columns, shorter values) or raise --max-result-mb.")


def _mb(n_bytes: int) -> str:
    """Megabytes (10^6 bytes) as the messages print them: one decimal from 1 MB, three significant digits below."""
    return f"{n_bytes / 1e6:,.1f}" if n_bytes >= 1_000_000 else f"{n_bytes / 1e6:.3g}"


def check_max_result_bytes(max_result_bytes: Any) -> None:
    """Refuse a size limit that is not a positive whole number of bytes.

    Raises:
        InputError: *max_result_bytes* is not an int ≥ 1.
    """
    if isinstance(max_result_bytes, bool) or not isinstance(max_result_bytes, int) or max_result_bytes < 1:
        raise InputError(f"--max-result-mb (max_result_bytes) must be a positive number of bytes, got "
                         f"{max_result_bytes!r}. Pass a positive size, e.g. --max-result-mb 256.")


def fetch_bounded(cur: Any, width: int, *, max_rows: int, max_result_bytes: int, value_bytes: int | None = None,
                  between_blocks: Callable[[], None] | None = None) -> list[tuple[Any, ...]]:
    """Every row of an executed cursor, fetched in blocks and counted (:func:`result_bytes`) as they come, so that
    a result over a limit stops after about the limit and the database is not asked for the rest.

    Blocks: the first holds as many rows as fit in the limit at the largest size a row can have (*value_bytes*
    per value; one row when values are unbounded); each later one as many as fit in 1/16 of the limit at the
    largest mean row size of the blocks so far (at most 10,000, at most one past *max_rows*). A result of alike
    rows thus stops within 1/16 over the limit; rows that grow suddenly can pass it by one block. A block shorter
    than asked for ends the fetch (the drivers return one only at the end of the rows); when *value_bytes* bounds
    it within what is left of the limit it is not counted (a small SQLite result, the common case, is not counted
    at all).

    Args:
        cur: A DB-API cursor with ``fetchmany`` (sqlite3, DuckDB, a psycopg server-side cursor).
        width: ``k``, the result's columns.
        max_rows: Most rows (> 0).
        max_result_bytes: Most bytes of Python objects (> 0).
        value_bytes: The most bytes one value can hold (SQLite's length limit), or ``None`` when unbounded.
        between_blocks: Called after each block but the last (PostgreSQL renews its time limit there).

    Returns:
        ``(n, k)`` row tuples, ``n <= max_rows``.

    Raises:
        QueryError: more than *max_rows* rows, or more than *max_result_bytes* bytes (:func:`size_limit_message`).

    Source: ``DESIGN.md`` "Re-executing queries safely" (every query bounded in time, rows and bytes), goldeval.
    """
    rows: list[tuple[Any, ...]] = []
    counted = 0
    largest = 0  # largest mean bytes of a row in a block so far
    if value_bytes is not None:
        worst_row = 40 + 8 * width + 8 + width * (value_bytes + 49)
        n = max_result_bytes // worst_row
    else:
        worst_row = 0
        n = 1
    while True:
        n = max(1, min(n, _FETCH_BLOCK, max_rows + 1 - len(rows)))
        batch = cur.fetchmany(n)
        if not batch:
            break
        rows.extend(batch)
        if len(rows) > max_rows:
            raise QueryError(f"the query returned more than {max_rows} rows (the row limit). Narrow the query or raise --max-rows.")
        if len(batch) < n and worst_row and counted + len(batch) * worst_row <= max_result_bytes:
            break  # the last block, within the limit at the largest values it could hold
        size = result_bytes(batch, nested=value_bytes is None)
        counted += size
        if counted > max_result_bytes:
            raise QueryError(size_limit_message(max_result_bytes, counted, len(rows)))
        if len(batch) < n:
            break
        if between_blocks is not None:
            between_blocks()
        largest = max(largest, -(-size // len(batch)))
        n = max_result_bytes // _BLOCK_SHARE // largest
    return rows
